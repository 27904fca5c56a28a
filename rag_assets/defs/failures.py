"""Documents whose latest run of a stage failed as a whole (Dagster shows their partitions Failed):
a batch stopped by an embedding endpoint that is down, a store that cannot be reached. A failure
of one document is recorded in the stage store instead; these leave no record there."""

from __future__ import annotations

from typing import Iterable

import dagster as dg

from rag_assets.defs.names import STAGES, asset_key, partitions_name


def failure_message(events: Iterable[dg.DagsterEvent]) -> str:
    """The root cause of a failed run, as the user's code raised it, with the failing step."""
    for event in events:
        data = event.step_failure_data
        if data.user_failure_data is not None and data.user_failure_data.description:
            return f"{event.step_key}: {data.user_failure_data.description}"
        error = data.error
        while error is not None and error.cause is not None:
            error = error.cause
        if error is not None:
            return f"{event.step_key}: {error.message.strip().splitlines()[0][:500]}"
    return "run failed"


def failed_keys(instance: dg.DagsterInstance, corpus: str, stage: str, partition_keys: list[str]) -> list[str]:
    """Those of ``partition_keys`` that Dagster shows Failed for ``stage`` of ``corpus``."""
    partitions = dg.DynamicPartitionsDefinition(name=partitions_name(corpus))
    status = instance.get_status_by_partition(asset_key(corpus, stage), partition_keys, partitions) or {}
    return [pk for pk, s in status.items() if s == dg.AssetPartitionStatus.FAILED]


def failed_partitions(instance: dg.DagsterInstance, corpus: str, partition_keys: list[str],
                      by_stage: dict[str, list[str]] | None = None) -> dict[str, str]:
    """Partition key -> why, for those of ``partition_keys`` whose latest run of a stage of
    ``corpus`` failed without materialising it: the failed run's id and root cause. ``by_stage``:
    each stage's ``failed_keys``, where the caller read them already."""
    out: dict[str, str] = {}
    for stage in STAGES:
        key = asset_key(corpus, stage)
        failed = by_stage[stage] if by_stage is not None else failed_keys(instance, corpus, stage, partition_keys)
        failed = [pk for pk in failed if pk not in out]
        if not failed:
            continue
        storage = instance.event_log_storage
        attempts = storage.get_latest_asset_partition_materialization_attempts_without_materializations(key)
        causes: dict[str, str] = {}
        for pk in failed:
            run_id = attempts[pk][0] if pk in attempts else None
            if run_id not in causes:
                events = [e.dagster_event for e in instance.all_logs(run_id, of_type=dg.DagsterEventType.STEP_FAILURE)
                          if e.dagster_event] if run_id else []
                causes[run_id] = f"run {run_id} failed: {failure_message(events)}" if run_id else "its run failed"
            out[pk] = causes[run_id]
    return out
