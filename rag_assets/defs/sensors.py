"""Sensors and schedules that keep each corpus in step with its source.

A sweep lists the source (size and mtime/ETag as a prefilter; the xxh3 hash decides), reports new
and changed documents as ``raw_documents`` observations, adds and deletes dynamic partitions, and
requests runs only for documents that need work: contiguous partition ranges of at most
``batch_size`` documents, so 1,000 changed documents are not 1,000 runs.

A sensor evaluation changes nothing but what Dagster records from its result: the bytes it
reads go into the stage store addressed by their hash, and what it saw of each document is a
snapshot addressed by its own hash, named by the cursor. A preview, or a tick that dies before
Dagster records it, leaves the next tick to see the same changes. A document whose ingest run
is queued or running is not requested again.
"""

import json
from dataclasses import dataclass, field

import dagster as dg
from dagster._core.execution.backfill import BulkActionStatus  # get_backfills' status (no public name)

from rag_assets.config.schema import Corpus
from rag_assets.core.hashing import settings_hash
from rag_assets.core.keys import doc_id_for, partition_key_for
from rag_assets.core.planning import (
    MassDeleteRefused,
    Plan,
    SnapshotSeen,
    StoreSeen,
    contiguous_batches,
    guard_deletes,
    guard_model,
    plan_sweep,
)
from rag_assets.core.sources import tenant_folders_only
from rag_assets.defs.names import (
    DATA_VERSION,
    PARTITION,
    RANGE_END,
    RANGE_START,
    STAGES,
    asset_key,
    ingest_job_name,
    maintenance_job_name,
    partitions_name,
    resource_keys,
)
from rag_assets.defs.observations import raw_observation
from rag_assets.defs.resources import CorpusResources
from rag_assets.defs.runs import IN_FLIGHT
from rag_assets.defs.storage import batched_writes
from rag_assets.defs.versions import chunking_profile, code_versions


@dataclass
class Sweep:
    """Everything one sweep decided, in Dagster terms."""

    plan: Plan
    observations: list[dg.AssetObservation] = field(default_factory=list)
    new_keys: list[str] = field(default_factory=list)
    deleted_keys: list[str] = field(default_factory=list)
    batches: list[tuple[str, str]] = field(default_factory=list)
    wanted: list[str] = field(default_factory=list)  # partition keys of the documents that need a run
    batch_versions: list[list] = field(default_factory=list)  # per batch: (partition key, content hash)
    busy: list[str] = field(default_factory=list)  # needing work, but a queued or running run has them
    seen: SnapshotSeen | None = None  # what it saw, for the store once Dagster has its observations

    def commit(self) -> None:
        """Move the stage store's raw pointers to what the sweep saw: call once Dagster has recorded
        its observations. A sweep that stops (the source fails mid-listing, a mass delete is
        refused) or is never recorded leaves them where they were, so the next sweep reports its
        changes again instead of taking them as seen."""
        if self.seen is not None:
            self.seen.commit()


def sweep(corpus: Corpus, refs, read, store, partition_keys: list[str], seen=None, keep_bytes: bool = True,
          busy: set[str] = frozenset(), complete: dict[str, str] | None = None, allow_mass_delete: bool = False,
          materialized: set[str] | None = None) -> Sweep:
    """Compare a source listing (``refs``; ``read`` fetches a document) with the partitions, what
    was seen before (``seen``, default the store's raw pointers, moved by ``Sweep.commit``) and the
    documents whose rows are all in the index (``complete``); documents in ``busy`` (partition keys) need no new request.
    A listed document whose ``lancedb_index`` partition Dagster has not recorded as materialized
    (``materialized``: partition keys) is redone too, from the stage store's caches.
    Raises MassDeleteRefused where it would delete over ``+max_delete_fraction`` of the corpus, and
    ModelChangedInPlace where the corpus' embedding model changed settings under its name."""
    profile = chunking_profile(corpus)
    if corpus.source.tenant_from_path:
        refs = tenant_folders_only(refs)
    guard_model(store, corpus.embedding_model.name, corpus.embedding_model.stores_fingerprint(), record=keep_bytes)
    known = [doc_id_for(pk) for pk in partition_keys]
    pending = SnapshotSeen(fallback=StoreSeen(store)) if seen is None else None
    plan = plan_sweep(refs, read, store, known, profile.fingerprint(), corpus.embedding_model.name,
                      corpus.source.max_document_bytes, seen=pending if seen is None else seen, keep_bytes=keep_bytes,
                      complete=complete, limits=corpus.source.parse_limits,
                      index_version=code_versions(corpus)["lancedb_index"])
    guard_deletes(plan, corpus.max_delete_fraction, corpus.name, corpus.source_location, allow_mass_delete)
    result = Sweep(plan, seen=pending)
    result.observations = [raw_observation(corpus, raw) for raw in plan.snapshots] + \
                          [raw_observation(corpus, unreadable=u) for u in plan.unreadable]
    registered = set(partition_keys)
    result.new_keys = [partition_key_for(d) for d in plan.listed if partition_key_for(d) not in registered]
    # A partition registered under an older key format is replaced by the document's current key
    # (its rows stay: the document is live); a deleted document's partition goes under its own key.
    registered_as = {doc_id_for(pk): pk for pk in partition_keys}
    rekeyed = [pk for pk in partition_keys if partition_key_for(doc_id_for(pk)) != pk]
    deleted = [registered_as[d] for d in plan.deleted]
    result.deleted_keys = deleted + sorted(set(rekeyed) - set(deleted))
    gone = set(result.deleted_keys)
    order = [pk for pk in partition_keys if pk not in gone] + result.new_keys
    wanted = [partition_key_for(d) for d in plan.work]
    if materialized is not None:
        work = set(wanted)
        wanted += [pk for pk in map(partition_key_for, plan.listed) if pk not in materialized and pk not in work]
    result.wanted = wanted
    result.busy = [pk for pk in wanted if pk in busy]
    result.batches = contiguous_batches(order, [pk for pk in wanted if pk not in busy], corpus.batch_size)
    position = {pk: i for i, pk in enumerate(order)}
    result.batch_versions = [[(pk, plan.versions.get(doc_id_for(pk))) for pk in order[position[a]:position[b] + 1]]
                             for a, b in result.batches]
    return result


def observe_source(corpus: Corpus):
    """The observation function of the corpus' raw_documents (the UI's "Observe"): the sweep's
    new and changed documents as data versions by partition, new partitions added first. Deleted
    documents are left to the sensor and `rag ingest`, which prune the table too."""

    def observe(context) -> dg.DataVersionsByPartition:
        resources = CorpusResources(context.resources, corpus)
        source, store = resources.source, resources.store.get_store()
        partition_keys = list(context.instance.get_dynamic_partitions(partitions_name(corpus.name)))
        corpus_sweep = sweep(corpus, source.list_documents(), source.read, store, partition_keys)
        if corpus_sweep.new_keys:
            context.instance.add_dynamic_partitions(partitions_name(corpus.name), corpus_sweep.new_keys)
        corpus_sweep.commit()  # Dagster records the versions returned here
        return dg.DataVersionsByPartition({o.partition: o.tags[DATA_VERSION] for o in corpus_sweep.observations})

    return observe


def materialized(instance: dg.DagsterInstance, corpus: Corpus) -> set[str]:
    """Partition keys of the documents Dagster holds an ``lancedb_index`` materialisation for."""
    return instance.get_materialized_partitions(asset_key(corpus.name, "lancedb_index"))


def in_flight(instance: dg.DagsterInstance, corpus: Corpus, order: list[str]) -> set[str]:
    """Partition keys that a queued or running run indexing the corpus' documents covers: its ingest
    job's, or one the UI or the automation conditions launched over its stages up to the index (a
    "Materialize" or a backfill runs the assets it selects as __ASSET_JOB: unseen, its documents
    were ingested twice). A run of earlier stages alone leaves its documents unindexed: not held.
    Held too: the documents that a backfill still being submitted will index, whose runs the daemon
    has not created yet (``_awaiting_backfill``)."""
    position = {pk: i for i, pk in enumerate(order)}
    index = asset_key(corpus.name, STAGES[-1])
    busy = _awaiting_backfill(instance, corpus, index)
    for run in instance.get_runs(dg.RunsFilter(statuses=IN_FLIGHT)):
        if run.job_name != ingest_job_name(corpus.name) and index not in (run.asset_selection or ()):
            continue
        tags = run.tags
        if PARTITION in tags:
            busy.add(tags[PARTITION])
        elif tags.get(RANGE_START) in position and tags.get(RANGE_END) in position:
            busy.update(order[position[tags[RANGE_START]]:position[tags[RANGE_END]] + 1])
    return busy


def _awaiting_backfill(instance: dg.DagsterInstance, corpus: Corpus, index: dg.AssetKey) -> set[str]:
    """Partition keys that a requested backfill will index and has no run for yet: an asset
    backfill's target partitions of the index not yet requested, or an ingest job backfill's
    partitions after the last one it submitted."""
    waiting: set[str] = set()
    for backfill in instance.get_backfills(status=BulkActionStatus.REQUESTED):
        if (data := backfill.asset_backfill_data) is not None:
            target = data.target_subset.partitions_subsets_by_asset_key.get(index)
            requested = data.requested_subset.partitions_subsets_by_asset_key.get(index)
            if target is not None:
                waiting.update(set(target.get_partition_keys()) - set(requested.get_partition_keys() if requested else ()))
        elif backfill.job_name == ingest_job_name(corpus.name) and backfill.partition_names:
            names = list(backfill.partition_names)
            last = backfill.last_submitted_partition_name
            waiting.update(names[names.index(last) + 1:] if last in names else names)
    return waiting


def run_request(corpus: Corpus, first: str, last: str, run_key: str | None = None) -> dg.RunRequest:
    """One run over the contiguous partition range ``first..last``."""
    if first == last:
        return dg.RunRequest(run_key=run_key, job_name=ingest_job_name(corpus.name), partition_key=first)
    return dg.RunRequest(run_key=run_key, job_name=ingest_job_name(corpus.name),
                         tags={RANGE_START: first, RANGE_END: last})


@dataclass
class SweepActions:
    """What Dagster is asked to do about a sweep."""

    partition_requests: list = field(default_factory=list)  # add new documents' partitions, delete deleted ones'
    observations: list[dg.AssetObservation] = field(default_factory=list)
    run_requests: list[dg.RunRequest] = field(default_factory=list)


def apply_sweep(corpus: Corpus, corpus_sweep: Sweep, tick: str, ingest_runs: bool) -> SweepActions:
    """The partitions, observations and runs a sweep asks for, decided once for the sensor, the
    schedule and `rag ingest`: a run per batch when ``ingest_runs`` (the sensor and schedule leave
    them to the automation conditions under +automation: declarative), and the maintenance job
    where documents were deleted. Run keys name what a run will produce (its documents' versions
    and the settings) and the state it was planned from (``tick``), so a tick evaluated again after
    a crash requests nothing twice."""
    settings = {"profile": chunking_profile(corpus).fingerprint(), "model": corpus.embedding_model.name}
    actions = SweepActions(observations=corpus_sweep.observations)
    if corpus_sweep.new_keys:
        actions.partition_requests.append(dg.AddDynamicPartitionsRequest(partitions_name(corpus.name),
                                                                         corpus_sweep.new_keys))
    if corpus_sweep.deleted_keys:
        actions.partition_requests.append(dg.DeleteDynamicPartitionsRequest(partitions_name(corpus.name),
                                                                            corpus_sweep.deleted_keys))
    if ingest_runs:
        for (first, last), versions in zip(corpus_sweep.batches, corpus_sweep.batch_versions):
            run_key = settings_hash({"range": [first, last], "versions": versions, **settings, "after": tick})
            actions.run_requests.append(run_request(corpus, first, last, run_key))
    if corpus_sweep.deleted_keys:
        actions.run_requests.append(dg.RunRequest(
            run_key=settings_hash({"prune": corpus_sweep.deleted_keys, "after": tick}),
            job_name=maintenance_job_name(corpus.name)))
    return actions


def record(instance: dg.DagsterInstance, actions: SweepActions) -> None:
    """Record a sweep's partition changes and observations in ``instance`` as the daemon records a
    sensor's result (where no daemon does: `rag ingest`, `rag observe`), in one commit."""
    with batched_writes(instance):
        for request in actions.partition_requests:
            if isinstance(request, dg.AddDynamicPartitionsRequest):
                instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
        for event in actions.observations:
            instance.report_runless_asset_event(event)
        for request in actions.partition_requests:
            if isinstance(request, dg.DeleteDynamicPartitionsRequest):
                for key in request.partition_keys:
                    instance.delete_dynamic_partition(request.partitions_def_name, key)


def is_preview(context: dg.ScheduleEvaluationContext) -> bool:
    """Whether a schedule's evaluation is the UI's "Test schedule" (GraphQL scheduleDryRun), which
    must change nothing. Dagster 1.13 gives a daemon's tick the log key [repository, schedule, tick
    id] and a preview none, for which the context makes [repository, schedule, its time as
    %Y%m%d_%H%M%S]; an evaluation without a log key (a test's) is a tick."""
    key = context.log_key
    return bool(key) and not str(key[-1]).isdigit()


def swept(corpus_sweep: Sweep, preview: bool, runs: bool) -> str:
    """A scheduled sweep's skip reason: what it recorded (or, in a preview, would record)."""
    new, deleted = len(corpus_sweep.new_keys), len(corpus_sweep.deleted_keys)
    changed = max(len(corpus_sweep.observations) - new, 0)
    parts = [f"{n} {what}" for n, what in ((new, "new"), (changed, "changed"), (deleted, "deleted")) if n]
    listed = len(corpus_sweep.plan.listed)
    if not parts:
        return ("preview: " if preview else "") + f"no change in {listed} documents"
    told = f"{listed} documents: {', '.join(parts)} " + ("would be recorded (preview: nothing is)" if preview
                                                          else "recorded")
    if deleted:
        told += "; the deleted documents' rows wait for the table's maintenance run"
    if (new or changed) and not runs:
        told += "; their runs are left to Dagster's automation (+automation: declarative)"
    return told


def build_corpus_automation(corpus: Corpus, jobs: list) -> tuple[list, list]:
    """The source sensor of a corpus, and its scheduled sweep when the source declares a cron.
    ``jobs`` are the corpus' ingest and maintenance jobs."""
    keys = resource_keys(corpus.name)

    @dg.sensor(
        name=f"{corpus.name}_source_sensor",
        description=f"Lists source {corpus.source.name!r} ({corpus.source.kind}), reports new and changed "
                    "documents as raw_documents observations and "
                    + ("requests runs for them" if corpus.automation == "sensor" else
                       "leaves their runs to Dagster's automation conditions (+automation: declarative)")
                    + "; removes deleted ones.",
        minimum_interval_seconds=corpus.source.sensor_interval_seconds,
        jobs=jobs,
        required_resource_keys={keys["source"], keys["store"], keys["lancedb"]},
        default_status=dg.DefaultSensorStatus.STOPPED,
    )
    def source_sensor(context: dg.SensorEvaluationContext):
        resources = CorpusResources(context.resources, corpus)
        source, store = resources.source, resources.store.get_store()
        previous = json.loads(context.cursor) if context.cursor else {}
        # None where it is gone (collected as garbage, or damaged): the sweep reads the raw records instead
        snapshot = store.load("listing", previous["seen"]) if previous.get("seen") else None
        seen = SnapshotSeen(snapshot, fallback=StoreSeen(store))
        refs = source.list_documents()
        partition_keys = list(context.instance.get_dynamic_partitions(partitions_name(corpus.name)))
        busy = in_flight(context.instance, corpus, partition_keys)
        index = resources.index()
        try:
            corpus_sweep = sweep(corpus, refs, source.read, store, partition_keys, seen=seen, busy=busy,
                                 complete=index.complete_documents(), materialized=materialized(context.instance,
                                                                                                corpus))
        except MassDeleteRefused as refused:
            return dg.SkipReason(str(refused))
        seen_key = settings_hash(seen.records)
        if not store.has("listing", seen_key):  # content-addressed: harmless in a preview
            store.put("listing", seen_key, seen.records)
        cursor = json.dumps({"documents": len(corpus_sweep.plan.listed), "seen": seen_key})
        # Rows of documents deleted without a prune (`rag observe` or the scheduled sweep removed their
        # partitions): the table's maintenance prunes them, once per set of such documents.
        orphans = sorted(set(index.indexed_documents()) - set(corpus_sweep.plan.listed))
        prune = [dg.RunRequest(run_key=settings_hash({"prune_rows_of": orphans}), job_name=maintenance_job_name(corpus.name))
                 ] if orphans and not corpus_sweep.deleted_keys else []
        if not (corpus_sweep.batches or corpus_sweep.deleted_keys or corpus_sweep.observations
                or corpus_sweep.new_keys or prune):
            busy_note = f"; {len(corpus_sweep.busy)} already queued or running" if corpus_sweep.busy else ""
            return dg.SensorResult(skip_reason=dg.SkipReason(
                f"no change in {len(corpus_sweep.plan.listed)} documents{busy_note}"), cursor=cursor)
        actions = apply_sweep(corpus, corpus_sweep, previous.get("seen", ""), corpus.automation == "sensor")
        return dg.SensorResult(run_requests=actions.run_requests + prune,
                               dynamic_partitions_requests=actions.partition_requests,
                               asset_events=actions.observations, cursor=cursor)

    schedules = []
    if corpus.source.schedule:
        @dg.schedule(
            name=f"{corpus.name}_scheduled_sweep",
            cron_schedule=corpus.source.schedule,
            job=jobs[0],
            description=f"Sweeps source {corpus.source.name!r} on a cron, for sources without events.",
            required_resource_keys={keys["source"], keys["store"]},
            default_status=dg.DefaultScheduleStatus.STOPPED,
        )
        def scheduled_sweep(context: dg.ScheduleEvaluationContext):
            # A schedule returns only runs of its job: it records the partitions and observations
            # itself, as the daemon records a sensor's. Deleted documents' rows are left to the
            # table's maintenance, which prunes rows without a partition. A preview records nothing.
            preview = is_preview(context)
            resources = CorpusResources(context.resources, corpus)
            source, store = resources.source, resources.store.get_store()
            partition_keys = list(context.instance.get_dynamic_partitions(partitions_name(corpus.name)))
            corpus_sweep = sweep(corpus, source.list_documents(), source.read, store, partition_keys,
                                 keep_bytes=not preview, busy=in_flight(context.instance, corpus, partition_keys))
            tick = context.scheduled_execution_time.isoformat() if context.scheduled_execution_time else ""
            actions = apply_sweep(corpus, corpus_sweep, tick, corpus.automation == "sensor")
            if not preview:
                record(context.instance, actions)
                corpus_sweep.commit()
            return [r for r in actions.run_requests if r.job_name == ingest_job_name(corpus.name)] or \
                dg.SkipReason(swept(corpus_sweep, preview, corpus.automation == "sensor"))

        schedules.append(scheduled_sweep)
    return [source_sensor], schedules
