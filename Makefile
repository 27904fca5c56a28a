# Two entry points: `make run` (set up, ingest the sample corpus, answer a query) and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
RAG := $(VENV)/bin/rag
DAGSTER_HOME ?= $(CURDIR)/.dagster_home
export PYTHONUNBUFFERED := 1

.PHONY: run test install install-dev system-deps ui validate clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(PY)
	$(PY) -m pip install -q -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml $(VENV)/.installed
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

run: install
	$(RAG) ingest
	$(RAG) query "How many vacation days do employees get per year?" --k 3

system-deps:
	bash .ci/system_deps.sh

# Two pytest-xdist workers (CI's two cores): the slow tests mostly wait on subprocesses and servers.
TEST_WORKERS ?= 2
test: install-dev system-deps
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist worksteal

$(DAGSTER_HOME)/dagster.yaml: | $(VENV)/.installed
	DAGSTER_HOME=$(DAGSTER_HOME) $(PY) -c 'from rag_assets.instance import write_instance_config; write_instance_config("$(DAGSTER_HOME)")'

validate: install $(DAGSTER_HOME)/dagster.yaml
	DAGSTER_HOME=$(DAGSTER_HOME) $(VENV)/bin/dagster definitions validate -w workspace.yaml

ui: install $(DAGSTER_HOME)/dagster.yaml
	DAGSTER_HOME=$(DAGSTER_HOME) $(VENV)/bin/dagster dev -w workspace.yaml -h 127.0.0.1 -p 3000

clean:
	rm -rf .dagster_home .rag_data
