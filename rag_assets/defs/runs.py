"""Real Dagster runs and Dagster's own stale status, for the `rag` command line.

A run started by `rag ingest` is the run the UI or a sensor would create: it carries the code
location's origin (location ``rag_assets`` of workspace.yaml), so it appears in the job's Runs
tab and timeline and the UI can re-execute it. It then executes in this process (or, with the
celery executor, on the workers), which for a handful of documents beats a process per run.

Dagster has no public API for either: creating a run with a code-location origin outside a
workspace, and reading the stale status the UI shows. The calls below are the ones `dagster job
launch` and the webserver make (Dagster 1.13); they are kept to this module.
"""

from __future__ import annotations

import sys
from pathlib import Path

import dagster as dg
from dagster._core.asset_graph_view.asset_graph_view import AssetGraphView, TemporalContext
from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleStatus
from dagster._core.definitions.job_base import InMemoryJob
from dagster._core.execution.api import execute_run
from dagster._core.remote_origin import (
    ManagedGrpcPythonEnvCodeLocationOrigin,
    RemoteJobOrigin,
    RemoteRepositoryOrigin,
)
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin
from dagster._time import get_current_datetime

from rag_assets.config.schema import Project
from rag_assets.defs.executors import reconstructable_job

# workspace.yaml: `python_module: rag_assets.definitions`, `location_name: rag_assets`.
LOCATION = "rag_assets"
MODULE = "rag_assets.definitions"
REPOSITORY = "__repository__"
IN_PROCESS = {"execution": {"config": {"in_process": {}}}}
QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def remote_origin(job_name: str) -> RemoteJobOrigin:
    """The origin the webserver and daemon give this job when they load workspace.yaml."""
    target = LoadableTargetOrigin(executable_path=sys.executable, module_name=MODULE,
                                  working_directory=str(Path(__file__).resolve().parents[2]))
    location = ManagedGrpcPythonEnvCodeLocationOrigin(target, location_name=LOCATION)
    return RemoteJobOrigin(RemoteRepositoryOrigin(location, REPOSITORY), job_name)


def run_job(project: Project, defs: dg.Definitions, job_name: str, instance: dg.DagsterInstance,
            tags: dict[str, str] | None = None):
    """Create a run of ``job_name`` with the code location's origin and execute it: in this
    process, or through the celery executor's workers. Returns Dagster's execution result."""
    recon = reconstructable_job(project.project_dir, job_name)
    celery = project.executor.kind == "celery"
    run_config = QUIET if celery else {**QUIET, **IN_PROCESS}
    job = defs.resolve_job_def(job_name)
    run = instance.create_run_for_job(job, run_config=run_config, tags={**job.tags, **(tags or {})},
                                      remote_job_origin=remote_origin(job_name),
                                      job_code_origin=recon.get_python_origin())
    return execute_run(recon if celery else InMemoryJob(job), run, instance)


def stale_status(defs: dg.Definitions, instance: dg.DagsterInstance, key: dg.AssetKey,
                 partition_keys: list[str]) -> dict[str, list[str]]:
    """Dagster's own status of each partition of ``key`` (what the UI shows as fresh, unsynced
    or missing): ``{"fresh": [...], "stale": [...], "missing": [...]}``."""
    graph = defs.resolve_asset_graph()
    view = AssetGraphView(temporal_context=TemporalContext(effective_dt=get_current_datetime(), last_event_id=None),
                          instance=instance, asset_graph=graph)
    resolver = CachingStaleStatusResolver(instance=instance, asset_graph=graph, loading_context=view)
    out: dict[str, list[str]] = {"fresh": [], "stale": [], "missing": []}
    names = {StaleStatus.FRESH: "fresh", StaleStatus.STALE: "stale", StaleStatus.MISSING: "missing"}
    for partition_key in partition_keys:
        out[names[resolver.get_status(key, partition_key)]].append(partition_key)
    return out
