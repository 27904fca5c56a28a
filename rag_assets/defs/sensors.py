"""Sensors and schedules that keep each corpus in step with its source.

A sweep lists the source (size and mtime/ETag as a prefilter; the xxh3 hash decides), reports the
bytes of new and changed documents as ``raw_documents`` materialisations, adds and deletes
dynamic partitions, and requests runs only for documents that need work: contiguous partition
ranges of at most ``batch_size`` documents, so 1,000 changed documents are not 1,000 runs.
"""

import json
from dataclasses import dataclass, field

import dagster as dg

from rag_assets.config.schema import Corpus
from rag_assets.core.hashing import settings_hash
from rag_assets.core.index import LanceIndex
from rag_assets.core.keys import doc_id_for, partition_key_for
from rag_assets.core.models import RawDocument
from rag_assets.core.pipeline import snapshot_raw
from rag_assets.core.planning import Plan, contiguous_batches, plan_sweep
from rag_assets.defs.factory import (
    asset_key,
    chunking_profile,
    ingest_job_name,
    maintenance_job_name,
    partitions_name,
    resource_keys,
)

RANGE_START = "dagster/asset_partition_range_start"
RANGE_END = "dagster/asset_partition_range_end"


@dataclass
class Sweep:
    """Everything one sweep decided, in Dagster terms."""

    plan: Plan
    raw_events: list[dg.AssetMaterialization] = field(default_factory=list)
    new_keys: list[str] = field(default_factory=list)
    deleted_keys: list[str] = field(default_factory=list)
    batches: list[tuple[str, str]] = field(default_factory=list)


def raw_event(corpus: Corpus, raw: RawDocument) -> dg.AssetMaterialization:
    """The runless materialisation that reports a document's bytes (data version = xxh3)."""
    return dg.AssetMaterialization(
        asset_key=asset_key(corpus.name, "raw_documents"),
        partition=partition_key_for(raw.doc_id),
        tags={"dagster/data_version": raw.content_hash},
        metadata={"uri": raw.uri, "bytes": raw.size, "content_hash": raw.content_hash,
                  "source_version": raw.source_version},
    )


def sweep(corpus: Corpus, refs, read, store, partition_keys: list[str]) -> Sweep:
    """Compare a source listing (``refs``; ``read`` fetches a document) with the partitions and
    the store; snapshot new and changed bytes."""
    profile = chunking_profile(corpus)
    known = [doc_id_for(pk) for pk in partition_keys]
    plan = plan_sweep(refs, read, store, known, profile.fingerprint(), corpus.embedding_model.name,
                      corpus.source.max_document_bytes)
    result = Sweep(plan)
    for raw in plan.snapshots:
        snapshot_raw(store, raw)
        result.raw_events.append(raw_event(corpus, raw))
    registered = set(partition_keys)
    result.new_keys = [partition_key_for(d) for d in plan.listed if partition_key_for(d) not in registered]
    result.deleted_keys = [partition_key_for(d) for d in plan.deleted]
    gone = set(result.deleted_keys)
    order = [pk for pk in partition_keys if pk not in gone] + result.new_keys
    result.batches = contiguous_batches(order, [partition_key_for(d) for d in plan.work], corpus.batch_size)
    return result


def run_request(corpus: Corpus, first: str, last: str, run_key: str | None = None) -> dg.RunRequest:
    """One run over the contiguous partition range ``first..last``."""
    if first == last:
        return dg.RunRequest(run_key=run_key, job_name=ingest_job_name(corpus.name), partition_key=first)
    return dg.RunRequest(run_key=run_key, job_name=ingest_job_name(corpus.name),
                         tags={RANGE_START: first, RANGE_END: last})


def _listing_fingerprint(corpus: Corpus, refs) -> str:
    return settings_hash({"docs": [(r.doc_id, r.size, r.source_version) for r in refs],
                          "profile": chunking_profile(corpus).fingerprint(), "model": corpus.embedding_model.name})


def build_corpus_automation(corpus: Corpus, jobs: list) -> tuple[list, list]:
    """The source sensor of a corpus, and its scheduled sweep when the source declares a cron.
    ``jobs`` are the corpus' ingest and maintenance jobs."""
    keys = resource_keys(corpus.name)

    def evaluate(context, instance) -> tuple[Sweep, str]:
        source = getattr(context.resources, keys["source"])
        store = getattr(context.resources, keys["store"]).get_store()
        refs = source.list_documents()
        fingerprint = _listing_fingerprint(corpus, refs)
        partition_keys = list(instance.get_dynamic_partitions(partitions_name(corpus.name)))
        return sweep(corpus, refs, source.read, store, partition_keys), fingerprint

    def requests(corpus_sweep: Sweep, tick: str) -> list[dg.RunRequest]:
        out = [run_request(corpus, first, last, f"{tick}:{first}..{last}") for first, last in corpus_sweep.batches]
        if corpus_sweep.deleted_keys:
            out.append(dg.RunRequest(run_key=f"{tick}:prune", job_name=maintenance_job_name(corpus.name)))
        return out

    @dg.sensor(
        name=f"{corpus.name}_source_sensor",
        description=f"Lists source {corpus.source.name!r} ({corpus.source.kind}) and requests runs for new and "
                    "changed documents; removes deleted ones.",
        minimum_interval_seconds=corpus.source.sensor_interval_seconds,
        jobs=jobs,
        required_resource_keys={keys["source"], keys["store"]},
        default_status=dg.DefaultSensorStatus.STOPPED,
    )
    def source_sensor(context: dg.SensorEvaluationContext):
        corpus_sweep, fingerprint = evaluate(context, context.instance)
        previous = json.loads(context.cursor) if context.cursor else {}
        if previous.get("fingerprint") == fingerprint and not corpus_sweep.batches and not corpus_sweep.deleted_keys:
            return dg.SkipReason(f"no change in {len(corpus_sweep.plan.listed)} documents")
        tick = settings_hash({"fingerprint": fingerprint, "previous": previous.get("fingerprint")})
        partition_requests = []
        if corpus_sweep.new_keys:
            partition_requests.append(dg.AddDynamicPartitionsRequest(partitions_name(corpus.name), corpus_sweep.new_keys))
        if corpus_sweep.deleted_keys:
            partition_requests.append(
                dg.DeleteDynamicPartitionsRequest(partitions_name(corpus.name), corpus_sweep.deleted_keys))
        return dg.SensorResult(
            run_requests=requests(corpus_sweep, tick),
            dynamic_partitions_requests=partition_requests,
            asset_events=corpus_sweep.raw_events,
            cursor=json.dumps({"fingerprint": fingerprint, "documents": len(corpus_sweep.plan.listed)}),
        )

    schedules = []
    if corpus.source.schedule:
        @dg.schedule(
            name=f"{corpus.name}_scheduled_sweep",
            cron_schedule=corpus.source.schedule,
            job=jobs[0],
            description=f"Sweeps source {corpus.source.name!r} on a cron, for sources without events.",
            required_resource_keys={keys["source"], keys["store"], keys["lancedb"]},
            default_status=dg.DefaultScheduleStatus.STOPPED,
        )
        def scheduled_sweep(context: dg.ScheduleEvaluationContext):
            corpus_sweep, fingerprint = evaluate(context, context.instance)
            instance = context.instance
            if corpus_sweep.new_keys:
                instance.add_dynamic_partitions(partitions_name(corpus.name), corpus_sweep.new_keys)
            for event in corpus_sweep.raw_events:
                instance.report_runless_asset_event(event)
            if corpus_sweep.deleted_keys:
                model = corpus.embedding_model
                index = LanceIndex(getattr(context.resources, keys["lancedb"]).get_connection(), corpus.name,
                                   model.name, model.dimensions)
                store = getattr(context.resources, keys["store"]).get_store()
                for key in corpus_sweep.deleted_keys:
                    index.delete_document(doc_id_for(key))
                    store.forget(doc_id_for(key))
                    instance.delete_dynamic_partition(partitions_name(corpus.name), key)
            tick = context.scheduled_execution_time.isoformat() if context.scheduled_execution_time else fingerprint
            return [r for r in requests(corpus_sweep, tick) if r.job_name == ingest_job_name(corpus.name)] or \
                dg.SkipReason(f"no change in {len(corpus_sweep.plan.listed)} documents")

        schedules.append(scheduled_sweep)
    return [source_sensor], schedules
