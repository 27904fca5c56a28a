"""Where the steps of a run execute: the project's ``executor`` block of rag_project.yml.

``in_process`` (the default) runs a run's steps one after another in the run's own process: an
ingest run is a chain of four stages, and a process per step would cost each stage a Python start
and the project's imports (about 2 s here) for no parallelism. ``multiprocess`` runs each step in
its own process on the run's machine, at most ``max_concurrent`` at once. ``celery`` sends each step
to Celery workers through a broker (dagster-celery); the workers rebuild the job from the same
config project with ``factory.project_job``, so they need the project's code, config and
environment variables.
"""

import dagster as dg

from rag_assets.config.schema import ExecutorConfig

RECONSTRUCTOR = ("rag_assets.defs.factory", "project_job")  # module and function that rebuild a job


def build_executor(config: ExecutorConfig) -> dg.ExecutorDefinition:
    """The executor every run of the project uses, whoever launched it (a sensor, the UI's
    Materialize, a backfill, `rag ingest`). Broker and backend URLs are read from the environment
    variables the config names, when a run starts (never stored in the definitions).
    ``multiprocess`` is Dagster's multi-or-in-process executor, so `rag ingest` can run a
    batch in its own process; jobs start from ``job_run_config``."""
    if config.kind == "in_process":
        return dg.in_process_executor
    if config.kind == "multiprocess":
        return dg.multi_or_in_process_executor
    try:
        from dagster_celery import celery_executor
    except ImportError as exc:
        raise ImportError("rag_project.yml: executor.kind: celery needs dagster-celery. "
                          "Fix: pip install -e '.[distributed]'") from exc
    return celery_executor.configured({"broker": {"env": config.broker_env}, "backend": {"env": config.backend_env}})


def job_run_config(config: ExecutorConfig) -> dict:
    """The run config a job starts with: for ``multiprocess``, steps in their own processes, at
    most ``max_concurrent``."""
    if config.kind == "multiprocess":
        return {"execution": {"config": {"multiprocess": {"max_concurrent": config.max_concurrent}}}}
    return {}


def cli_run_config(config: ExecutorConfig) -> dict:
    """The execution config of a run `rag ingest` executes itself: in its own process (celery:
    the job's, its steps sent to the workers)."""
    return {"execution": {"config": {"in_process": {}}}} if config.kind == "multiprocess" else {}


def reconstructable_job(project_dir: str, job_name: str):
    """A pointer to ``job_name`` that out-of-process executors (celery) rebuild with
    ``factory.project_job``. Dagster imports the reconstructor by its module's name, so this module
    names it rather than importing the factory that imports it."""
    return dg.build_reconstructable_job(RECONSTRUCTOR[0], RECONSTRUCTOR[1], (project_dir, job_name))
