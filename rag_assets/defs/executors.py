"""Where the steps of a run execute: the project's ``executor`` block of rag_project.yml.

``multiprocess`` (the default) runs each step in its own process on the run's machine, at most
``max_concurrent`` at once. ``celery`` sends each step to Celery workers through a broker
(dagster-celery); the workers rebuild the job from the same config project with
``project_job``, so they need the project's code, config and environment variables.
"""

import dagster as dg

from rag_assets.config import load_project
from rag_assets.config.schema import ExecutorConfig


def build_executor(config: ExecutorConfig) -> dg.ExecutorDefinition:
    """The executor every job of the project uses. Broker and backend URLs are read from the
    environment variables the config names, when a run starts (never stored in the definitions).
    ``multiprocess`` is Dagster's multi-or-in-process executor, so `rag ingest` can run a
    batch in its own process; jobs start from ``job_run_config``."""
    if config.kind == "multiprocess":
        return dg.multi_or_in_process_executor
    try:
        from dagster_celery import celery_executor
    except ImportError as exc:
        raise ImportError("rag_project.yml: executor.kind: celery needs dagster-celery. "
                          "Fix: pip install -e '.[distributed]'") from exc
    return celery_executor.configured({"broker": {"env": config.broker_env}, "backend": {"env": config.backend_env}})


def job_run_config(config: ExecutorConfig) -> dict:
    """The run config a job starts with: steps in their own processes, at most ``max_concurrent``."""
    if config.kind == "multiprocess":
        return {"execution": {"config": {"multiprocess": {"max_concurrent": config.max_concurrent}}}}
    return {}


def project_job(project_dir: str, job_name: str) -> dg.JobDefinition:
    """``job_name`` of the config project at ``project_dir``, rebuilt in the process that runs a step
    (a reconstructable job for ``dg.build_reconstructable_job``). Nothing is cached, so a
    long-lived worker always runs the current config."""
    from rag_assets.defs.factory import build_definitions

    return build_definitions(load_project(project_dir)).resolve_job_def(job_name)


def reconstructable_job(project_dir: str, job_name: str):
    """A pointer to ``job_name`` that out-of-process executors (celery) rebuild with ``project_job``."""
    return dg.build_reconstructable_job(__name__, project_job.__name__, (project_dir, job_name))
