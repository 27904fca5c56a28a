"""The Dagster instance config (``$DAGSTER_HOME/dagster.yaml``) every entry point writes for a new
home: `rag`, `make ui` / `make validate` and the tests. Kept free of module-level Dagster imports
so `rag` can write it before loading anything.

The event log is Dagster's consolidated SQLite storage (``$DAGSTER_HOME/event_log.db``), the
run and schedule storage Dagster's SQLite ones (``runs.db``, ``schedules.db``); the first two on
one engine per process, all three created under one lock, so processes starting on a new home
at once do not corrupt it (``rag_assets.defs.storage``); the compute logs stay where Dagster keeps
them (``storage/``) but are not mirrored to the terminal; the run queue keeps Dagster's defaults.
A home that already has a dagster.yaml is left as it is.
"""

from __future__ import annotations

from pathlib import Path

# Telemetry off; no new-user dialog (sign-up prompt) when the UI opens; the storage above.
DAGSTER_YAML = """telemetry:
  enabled: false
nux:
  enabled: false
event_log_storage:
  module: rag_assets.defs.storage
  class: RagEventLogStorage
  config:
    base_dir:
      env: DAGSTER_HOME
run_storage:
  module: rag_assets.defs.storage
  class: RagRunStorage
  config:
    base_dir:
      env: DAGSTER_HOME
schedule_storage:
  module: rag_assets.defs.storage
  class: RagScheduleStorage
  config:
    base_dir:
      env: DAGSTER_HOME
compute_logs:
  module: rag_assets.defs.storage
  class: RagComputeLogManager
  config:
    base_dir:
      env: DAGSTER_HOME
"""


def write_instance_config(home: str | Path) -> Path:
    """Create ``home`` and its dagster.yaml (unless it has one); returns the file's path."""
    home = Path(home)
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists():
        config.write_text(DAGSTER_YAML)
    return config
