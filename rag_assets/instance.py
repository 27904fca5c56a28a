"""The Dagster instance config (``$DAGSTER_HOME/dagster.yaml``) every entry point writes for a new
home: `rag`, `make ui` / `make validate` and the tests. Kept free of module-level Dagster imports
so `rag` can write it before loading anything; ``prepare_instance`` imports Dagster only to
create a new home's databases.

The event log is Dagster's consolidated SQLite storage (``$DAGSTER_HOME/event_log.db``) and the
run storage Dagster's SQLite one (``runs.db``), both on one engine per process
(``rag_assets.defs.storage``); the compute logs stay where Dagster keeps them
(``storage/``) but are not mirrored to the terminal; schedules and the run queue keep Dagster's
defaults. A home that
already has a dagster.yaml is left as it is.
"""

from __future__ import annotations

import fcntl
import os
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
compute_logs:
  module: rag_assets.defs.storage
  class: RagComputeLogManager
  config:
    base_dir:
      env: DAGSTER_HOME
"""


INITIALIZED = ".rag_initialized"  # written once the home's databases exist


def prepare_instance(home: str | Path) -> Path:
    """``write_instance_config``, then, for a home whose databases were never created, create them
    once: under an exclusive lock (``home``/.init.lock), one process opens the instance while any
    other waits, so that two `rag` processes starting on a new home do not both create SQLite
    schemas (the second one fails on Dagster's migration stamp). ``home`` must be the process'
    ``DAGSTER_HOME`` (the config reads it). Returns the config's path."""
    config = write_instance_config(home)
    marker = Path(home) / INITIALIZED
    if marker.exists():
        return config
    fd = os.open(Path(home) / ".init.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # released with the file, also if this process dies
        if not marker.exists():
            import dagster as dg  # only for a home's first use: `rag query` never gets here

            with dg.DagsterInstance.from_config(str(home)):
                pass
            marker.touch()
    finally:
        os.close(fd)
    return config


def write_instance_config(home: str | Path) -> Path:
    """Create ``home`` and its dagster.yaml (unless it has one); returns the file's path."""
    home = Path(home)
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists():
        config.write_text(DAGSTER_YAML)
    return config
