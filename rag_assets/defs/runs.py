"""Real Dagster runs, for the `rag` command line.

A run started by `rag ingest` is the run the UI or a sensor would create: it carries the code
location's origin (location ``rag_assets`` of workspace.yaml), so it appears in the job's Runs
tab and timeline and the UI can re-execute it. It then executes in this process (or, with the
celery executor, on the workers), which for a handful of documents beats a process per run.

Dagster has no public API for creating a run with a code-location origin outside a workspace.
The calls below are the ones `dagster job launch` makes (Dagster 1.13); they are kept to this
module (the stale status the UI shows is read in defs/staleness.py).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from contextlib import contextmanager, suppress
from functools import lru_cache
from pathlib import Path

import dagster as dg
from dagster._core.definitions.job_base import InMemoryJob
from dagster._core.execution.api import execute_run
from dagster._core.remote_origin import (
    ManagedGrpcPythonEnvCodeLocationOrigin,
    RemoteJobOrigin,
    RemoteRepositoryOrigin,
)
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin

from rag_assets.config.schema import Project
from rag_assets.defs.executors import cli_run_config, reconstructable_job
from rag_assets.defs.storage import partitions_snapshot

# workspace.yaml: `python_module: rag_assets.definitions`, `location_name: rag_assets`.
LOCATION = "rag_assets"
MODULE = "rag_assets.definitions"
REPOSITORY = "__repository__"
# Failures reach the user through `rag`'s own summary; the full logs are in the run (UI).
QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
LAUNCHED_BY = "rag/launched_by"  # runs `rag ingest` created and executes in its own process
PARENT_RUN = "dagster/parent_run_id"  # the tag of a re-execution
INTERRUPTED = {"KeyboardInterrupt", "DagsterExecutionInterruptedError"}
IN_FLIGHT = [dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING,
             dg.DagsterRunStatus.STARTED]


def remote_origin(job_name: str) -> RemoteJobOrigin:
    """The origin the webserver and daemon give this job when they load workspace.yaml."""
    target = LoadableTargetOrigin(executable_path=sys.executable, module_name=MODULE,
                                  working_directory=str(Path(__file__).resolve().parents[2]))
    location = ManagedGrpcPythonEnvCodeLocationOrigin(target, location_name=LOCATION)
    return RemoteJobOrigin(RemoteRepositoryOrigin(location, REPOSITORY), job_name)


def run_job(project: Project, defs: dg.Definitions, job_name: str, instance: dg.DagsterInstance,
            tags: dict[str, str] | None = None, launched_by: str = "rag ingest"):
    """Create a run of ``job_name`` with the code location's origin and execute it: in this
    process, or through the celery executor's workers. Returns Dagster's execution result;
    raises KeyboardInterrupt after the run when it was interrupted: a step stopped by Ctrl-C or
    SIGTERM (``_interrupted``), or the process got one of them during the run at all (Dagster drops
    an interrupt that comes between steps, and the run then simply succeeds)."""
    celery = project.executor.kind == "celery"
    run_config = {**QUIET, **cli_run_config(project.executor)}
    job = defs.resolve_job_def(job_name)
    # The run reads its partition keys many times (range checks, each partition's metadata): one
    # read serves them all; partitions this process adds or deletes still show.
    with partitions_snapshot(instance):
        run = instance.create_run_for_job(job, run_config=run_config,
                                          tags={**job.tags, **(tags or {}), LAUNCHED_BY: launched_by},
                                          remote_job_origin=remote_origin(job_name),
                                          job_code_origin=python_origin(project.project_dir, job_name))
        with _interrupts_seen() as seen:
            if celery:
                result = execute_run(reconstructable_job(project.project_dir, job_name), run, instance)
            else:
                result = execute_run(InMemoryJob(job), run, instance)
    if seen or _interrupted(result):
        raise KeyboardInterrupt
    return result


@contextmanager
def _interrupts_seen():
    """The SIGINT and SIGTERM signals this process receives while the block runs, as Python's
    signal wakeup file records them whatever handler Dagster has installed; then passed on to the
    wakeup file set before (`rag`'s, which tells SIGTERM from Ctrl-C). Records nothing off the
    main thread, where Python delivers no signal."""
    seen: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield seen
        return
    read, write = os.pipe()
    os.set_blocking(read, False)
    os.set_blocking(write, False)
    previous = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    try:
        yield seen
    finally:
        signal.set_wakeup_fd(previous, warn_on_full_buffer=False)
        try:
            received = os.read(read, 4096)
        except BlockingIOError:
            received = b""
        os.close(read)
        os.close(write)
        if received and previous != -1:
            with suppress(BlockingIOError):  # that file is full: it has the signal already
                os.write(previous, received)
        seen += [number for number in received if number in (signal.SIGINT, signal.SIGTERM)]


@lru_cache(maxsize=32)
def python_origin(project_dir: str, job_name: str):
    """Where a worker process finds ``job_name`` (the module, function and arguments that rebuild
    it): the same for every run of the job, and building it loads the whole project once."""
    return reconstructable_job(project_dir, job_name).get_python_origin()


def _interrupted(result) -> bool:
    """Whether a run ended because a step was interrupted (Ctrl-C or SIGTERM): Dagster turns the
    interrupt into the run's failure and returns."""
    for event in result.all_events:
        error = getattr(event.event_specific_data, "error", None)
        while error is not None:
            if error.cls_name in INTERRUPTED:
                return True
            error = error.cause
    return False


def fail_abandoned_runs(instance: dg.DagsterInstance, job_names: list[str]) -> int:
    """Mark failed the runs of ``job_names`` that a `rag ingest` process created and never finished
    (it was killed). Call only while holding the corpus' ingest lock, which proves that no
    `rag ingest` of it is alive; a run the daemon launched is left alone, and so is a re-execution
    from the UI (it copies its parent's tags, ours included). Returns how many."""
    runs = [run for name in job_names
            for run in instance.get_runs(dg.RunsFilter(job_name=name, statuses=IN_FLIGHT,
                                                       tags={LAUNCHED_BY: "rag ingest"}))
            if PARENT_RUN not in run.tags]
    for run in runs:
        instance.report_run_failed(run, message="the `rag ingest` process running it ended before it finished")
    return len(runs)
