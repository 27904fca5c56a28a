import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from rag_assets.config import load_project
from rag_assets.defs.factory import build_definitions
from tests.conftest import edit_yaml

REPO = Path(__file__).resolve().parents[2]
STAGES = ["raw_documents", "parsed_documents", "chunks", "embeddings", "lancedb_index"]


def test_five_stages_per_corpus_in_order_with_code_versions():
    project = load_project()
    defs = build_definitions(project)
    graph = defs.resolve_asset_graph()
    for corpus in project.corpora:
        keys = [dg.AssetKey([corpus.name, stage]) for stage in STAGES]
        for upstream, downstream in zip(keys, keys[1:]):
            # Every stage also reads the source, so an edited document is unsynced in all of them.
            assert graph.get(downstream).parent_keys == {upstream, keys[0]}
        for key in keys:
            node = graph.get(key)
            assert node.partitions_def == dg.DynamicPartitionsDefinition(name=f"{corpus.name}_documents")
            assert node.group_name == corpus.name
            # Raw bytes are reported with their content hash as data version; the stages after
            # them carry code versions built from parser, profile and model.
            assert (node.code_version is None) == (key == keys[0]), key
        # The source is observed (its versions come from observations), never materialised.
        assert graph.get(keys[0]).is_observable and not graph.get(keys[0]).is_materializable
        assert "lancedb" in graph.get(keys[-1]).kinds
        table = graph.get(dg.AssetKey([corpus.name, "lancedb_table"]))
        assert table.partitions_def is None and table.parent_keys == {keys[-1]}
        # A UI backfill runs +batch_size documents a run, as the sensor does (it was a run a document).
        for key in keys[1:]:
            assert graph.get(key).backfill_policy == dg.BackfillPolicy.multi_run(corpus.batch_size), key


def test_code_versions_follow_profile_and_model(tmp_path, monkeypatch):
    import shutil

    import yaml

    root = tmp_path / "cfg"
    shutil.copytree(REPO / "dbt_like_configs", root)
    before = build_definitions(load_project(root)).resolve_asset_graph()
    path = root / "profiles" / "chunking.yml"
    data = yaml.safe_load(path.read_text())
    data["chunking_profiles"][0]["max_tokens"] = 200
    path.write_text(yaml.safe_dump(data))
    after = build_definitions(load_project(root)).resolve_asset_graph()

    def version(graph, stage):
        return graph.get(dg.AssetKey(["sample", stage])).code_version

    # A profile change redoes chunks and every stage after them, and nothing before.
    for stage in ("chunks", "embeddings", "lancedb_index"):
        assert version(before, stage) != version(after, stage), stage
    # Which table serves is decided again by the table's maintenance only after a switch or a
    # rename (an edit in place keeps the table), so only those leave lancedb_table unsynced.
    assert version(before, "lancedb_table") == version(after, "lancedb_table")
    project_yml = root / "rag_project.yml"
    config = yaml.safe_load(project_yml.read_text())
    config["corpora"]["sample"]["+chunking_profile"] = "recursive"
    project_yml.write_text(yaml.safe_dump(config))
    switched = build_definitions(load_project(root)).resolve_asset_graph()
    assert version(switched, "lancedb_table") != version(after, "lancedb_table")
    config["corpora"]["sample"].pop("+chunking_profile")
    project_yml.write_text(yaml.safe_dump(config))
    for stage in ("raw_documents", "parsed_documents"):
        assert version(before, stage) == version(after, stage)

    # A query-time setting of a compared profile changes the eval's scores, not the index.
    data["chunking_profiles"][0]["max_tokens"] = 256
    recommended = next(p for p in data["chunking_profiles"] if p["name"] == "recommended")
    recommended["group_margin"] = 0.2
    path.write_text(yaml.safe_dump(data))
    query = build_definitions(load_project(root)).resolve_asset_graph()
    assert version(query, "retrieval_eval") != version(before, "retrieval_eval")
    for stage in ("chunks", "embeddings", "lancedb_index", "lancedb_table"):
        assert version(query, stage) == version(before, stage), stage

    # So does an index search setting: which documents come whole.
    indexes = root / "profiles" / "indexes.yml"
    data = yaml.safe_load(indexes.read_text())
    data["indexes"][0]["whole_document_tokens"] = 100
    indexes.write_text(yaml.safe_dump(data))
    search = build_definitions(load_project(root)).resolve_asset_graph()
    assert version(search, "retrieval_eval") != version(query, "retrieval_eval")
    for stage in ("chunks", "embeddings", "lancedb_index"):
        assert version(search, stage) == version(query, stage), stage


def test_the_index_version_follows_the_declared_uri_not_where_the_project_lies(tmp_path, monkeypatch):
    import shutil

    from rag_assets.defs.versions import code_versions

    monkeypatch.delenv("RAG_LANCEDB_URI", raising=False)
    for where in ("a", "b"):
        shutil.copytree(REPO / "dbt_like_configs", tmp_path / where / "cfg")
    a, b = (load_project(tmp_path / where / "cfg").corpus("sample") for where in ("a", "b"))
    assert a.index_uri != b.index_uri and code_versions(a) == code_versions(b)
    # Another declared location is another index: its rows are written there.
    monkeypatch.setenv("RAG_LANCEDB_URI", str(tmp_path / "elsewhere"))
    moved = code_versions(load_project(tmp_path / "a" / "cfg").corpus("sample"))
    assert [s for s in moved if moved[s] != code_versions(a)[s]] == ["lancedb_index", "lancedb_table"]


def test_int8_compute_redoes_the_vectors_only_and_float32_keeps_its_fingerprint(tmp_path):
    import shutil

    import yaml

    from rag_assets.core.hashing import settings_hash
    from rag_assets.defs.versions import model_fingerprint

    root = tmp_path / "cfg"
    shutil.copytree(REPO / "dbt_like_configs", root)
    project = load_project(root)
    m = project.corpus("sample").embedding_model
    assert m.compute == "float32"
    # Stores made before compute existed recorded this fingerprint: it must not move.
    assert model_fingerprint(project.corpus("sample")) == settings_hash(
        {"provider": m.provider, "model": m.model, "dimensions": m.dimensions, "prefix": m.passage_prefix})
    before = build_definitions(project).resolve_asset_graph()
    path = root / "rag_project.yml"
    data = yaml.safe_load(path.read_text())
    data["corpora"]["sample"]["+embedding_model"] = "all_minilm_l6_v2_int8"
    path.write_text(yaml.safe_dump(data))
    switched = load_project(root)
    assert model_fingerprint(switched.corpus("sample")) != model_fingerprint(project.corpus("sample"))
    after = build_definitions(switched).resolve_asset_graph()

    def version(graph, stage):
        return graph.get(dg.AssetKey(["sample", stage])).code_version

    for stage in ("embeddings", "lancedb_index"):
        assert version(before, stage) != version(after, stage), stage
    for stage in ("parsed_documents", "chunks"):  # same tokenizer and limit: the chunks stand
        assert version(before, stage) == version(after, stage), stage


def test_jobs_use_the_configured_executor(tmp_path, monkeypatch):
    import shutil

    import yaml

    root = tmp_path / "cfg"
    shutil.copytree(REPO / "dbt_like_configs", root)
    # By default every run, whoever launches it, executes its steps in its own process.
    defs = build_definitions(load_project(root))
    assert defs.resolve_implicit_global_asset_job_def().executor_def is dg.in_process_executor
    assert all(job.executor_def is dg.in_process_executor for job in defs.resolve_all_job_defs())

    path = root / "rag_project.yml"
    data = yaml.safe_load(path.read_text())
    data["executor"]["max_concurrent"] = 3
    path.write_text(yaml.safe_dump(data))
    monkeypatch.setenv("RAG_EXECUTOR", "multiprocess")
    defs = build_definitions(load_project(root))
    ingest, maintain = defs.resolve_job_def("ingest_sample"), defs.resolve_job_def("maintain_sample")
    # multiprocess: runs start from the job's config, steps in processes, at most max_concurrent
    # at once (`rag ingest` overrides it to run a batch in its own process).
    for job, config in ((ingest, ingest.partitioned_config.get_run_config_for_partition_key("any")),
                        (maintain, maintain.run_config)):
        execution = dg.validate_run_config(job, config)["execution"]["multi_or_in_process_executor"]
        assert execution["multiprocess"]["max_concurrent"] == 3

    # Broker and backend URLs are read from their variables when a run's config resolves, so the
    # same definitions follow a changed variable (and never hold the URL).
    monkeypatch.setenv("RAG_EXECUTOR", "celery")
    monkeypatch.setenv("RAG_CELERY_BROKER", "redis://127.0.0.1:6399/0")
    monkeypatch.setenv("RAG_CELERY_BACKEND", "redis://127.0.0.1:6399/1")
    job = build_definitions(load_project(root)).resolve_job_def("ingest_sample")
    celery = dg.validate_run_config(job, {})["execution"]["celery"]
    assert (celery["broker"], celery["backend"]) == ("redis://127.0.0.1:6399/0", "redis://127.0.0.1:6399/1")
    monkeypatch.setenv("RAG_CELERY_BROKER", "redis://127.0.0.2:6379/0")
    assert dg.validate_run_config(job, {})["execution"]["celery"]["broker"] == "redis://127.0.0.2:6379/0"


@pytest.mark.slow
def test_dagster_definitions_validate(tmp_path):
    (tmp_path / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    out = subprocess.run(
        [str(Path(sys.executable).parent / "dagster"), "definitions", "validate", "-w", "workspace.yaml"],
        cwd=REPO, capture_output=True, text=True, timeout=300, env={**os.environ, "DAGSTER_HOME": str(tmp_path)},
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "Validation successful" in out.stderr + out.stdout


def test_a_launched_run_executes_its_steps_in_the_run_process(ingested_sample):
    """A run the daemon or the UI launches executes as a run worker executes it: the job rebuilt
    from its origin, under the project's executor. By default no step gets a process of its own
    (a process per step cost each stage ~2 s of Python start and imports)."""
    from rag_assets.defs.executors import reconstructable_job
    from tests.conftest import env

    values, _ = ingested_sample
    with env(**values), dg.DagsterInstance.get() as instance:
        result = dg.execute_job(reconstructable_job(values["RAG_PROJECT_DIR"], "test_sample"), instance)
    assert result.success
    steps = [event for event in result.all_events if event.is_step_success]
    assert len(steps) == len(load_project(Path(values["RAG_PROJECT_DIR"])).corpus("sample").data_tests) > 1
    assert {event.pid for event in result.all_events if event.step_key} == {os.getpid()}
    assert not any(event.event_type == dg.DagsterEventType.STEP_WORKER_STARTED for event in result.all_events)


def test_each_corpus_collects_its_stage_store_garbage_on_the_declared_schedule(tmp_path):
    import shutil

    root = tmp_path / "cfg"
    shutil.copytree(REPO / "dbt_like_configs", root)
    schedule = build_definitions(load_project(root)).resolve_schedule_def("sample_collect_garbage_schedule")
    assert (schedule.cron_schedule, schedule.job_name) == ("0 3 * * *", "collect_garbage_sample")
    assert schedule.default_status == dg.DefaultScheduleStatus.RUNNING
    edit_yaml(root / "rag_project.yml", lambda d: d["stage_store_gc"].update({"schedule": "", "older_than_days": 2}))
    defs = build_definitions(load_project(root))
    assert not [s for s in defs.schedules if s.job_name == "collect_garbage_sample"]
    assert "2 days ago" in defs.resolve_job_def("collect_garbage_sample").description  # `rag gc` remains
