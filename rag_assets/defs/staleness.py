"""Dagster's own stale status (what the UI shows as fresh, unsynced or missing), for many
partitions at once.

Dagster's stale-status resolver (``CachingStaleStatusResolver``, the one the webserver uses)
answers one partition at a time, and for each it asks the event log for the partition's latest
materialization and, per input, for an event after the one it consumed: about three queries per
partition and stage (22,000 queries for 2,000 documents). Here the resolver runs unchanged
on ``LatestEvents``, an instance that answers those "latest event of one partition" queries from
each asset's latest event per partition, read in a few queries up front, and passes every other
query (an older event, anything else) to the instance: each answer is the one the event log
gives, less the events' metadata, which the resolver never reads; so the status is Dagster's.

Dagster has no public API for the resolver; its calls are kept to this module.
"""

from __future__ import annotations

import json

import dagster as dg
import sqlalchemy as db
from dagster._core.asset_graph_view.asset_graph_view import AssetGraphView, TemporalContext
from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleStatus
from dagster._core.events.log import EventLogEntry
from dagster._core.storage.event_log.base import EventLogCursor
from dagster._core.storage.event_log.schema import SqlEventLogStorageTable as EventLogTable
from dagster._core.storage.event_log.sql_event_log import SqlEventLogStorage
from dagster._time import get_current_datetime
from dagster._utils.caching_instance_queryer import CachingInstanceQueryer
from dagster_shared.serdes import unpack_value

KINDS = (dg.DagsterEventType.ASSET_MATERIALIZATION, dg.DagsterEventType.ASSET_OBSERVATION)
PAGE = 500  # storage ids per query (SQLite allows 999 bound parameters in older builds)


def stale_status(defs: dg.Definitions, instance: dg.DagsterInstance, key: dg.AssetKey,
                 partition_keys: list[str]) -> dict[str, list[str]]:
    """Dagster's own status of each partition of ``key`` (what the UI shows as fresh, unsynced
    or missing): ``{"fresh": [...], "stale": [...], "missing": [...]}``."""
    graph = defs.resolve_asset_graph()
    view = AssetGraphView(temporal_context=TemporalContext(effective_dt=get_current_datetime(), last_event_id=None),
                          instance=instance, asset_graph=graph)
    events = LatestEvents(instance, [key, *graph.get(key).parent_keys], partition_keys)
    # The resolver's partition reads need a DynamicPartitionsStore: the queryer it would build is one.
    queryer = CachingInstanceQueryer(events, graph, view)
    resolver = CachingStaleStatusResolver(instance=events, asset_graph=graph, loading_context=view,
                                          instance_queryer=queryer)
    out: dict[str, list[str]] = {"fresh": [], "stale": [], "missing": []}
    names = {StaleStatus.FRESH: "fresh", StaleStatus.STALE: "stale", StaleStatus.MISSING: "missing"}
    for partition_key in partition_keys:
        out[names[resolver.get_status(key, partition_key)]].append(partition_key)
    return out


class LatestEvents:
    """``instance`` for a stale-status resolver: a query for the latest materialization or
    observation of one partition of one of ``keys`` (optionally after or before a storage id) is
    answered from the latest event of each partition, as the event log would answer it (less the
    event's metadata: see ``events_without_metadata``); any other query goes to ``instance``.
    Read when built: each key's latest storage id per partition (two queries a key); on the first
    query for a partition's latest event, the key's latest events of ``partition_keys`` (a query
    per ``PAGE``). Events written after that are not seen: use it for one reading, as the
    webserver uses a resolver for one request."""

    def __init__(self, instance: dg.DagsterInstance, keys: list[dg.AssetKey], partition_keys: list[str]):
        self._instance = instance
        self._partition_keys = set(partition_keys)
        self._ids = {(key, kind): instance.get_latest_storage_id_by_partition(key, kind) for key in keys
                     for kind in KINDS}
        self._records: dict[tuple[dg.AssetKey, dg.DagsterEventType], dict[str, dg.EventLogRecord]] = {}

    def __getattr__(self, name):
        return getattr(self._instance, name)

    def fetch_materializations(self, records_filter, limit, cursor=None, ascending=False) -> dg.EventRecordsResult:
        answer = self._latest(KINDS[0], records_filter, limit, cursor, ascending)
        return self._instance.fetch_materializations(records_filter, limit, cursor, ascending) if answer is None \
            else answer

    def fetch_observations(self, records_filter, limit, cursor=None, ascending=False) -> dg.EventRecordsResult:
        answer = self._latest(KINDS[1], records_filter, limit, cursor, ascending)
        return self._instance.fetch_observations(records_filter, limit, cursor, ascending) if answer is None \
            else answer

    def get_latest_data_version_record(self, *args, **kwargs):
        # Dagster's own method, so that its two fetches above are answered here.
        return dg.DagsterInstance.get_latest_data_version_record(self, *args, **kwargs)

    def _latest(self, kind, f, limit, cursor, ascending) -> dg.EventRecordsResult | None:
        """The event log's answer to "the newest event of ``kind`` of one partition, between the
        filter's storage ids", or None where only the event log knows it."""
        if not (isinstance(f, dg.AssetRecordsFilter) and (f.asset_key, kind) in self._ids and limit == 1
                and not cursor and not ascending and f.asset_partitions is not None and len(f.asset_partitions) == 1
                and f.after_timestamp is None and f.before_timestamp is None and f.storage_ids is None):
            return None
        latest = self._ids[(f.asset_key, kind)].get(f.asset_partitions[0])
        if latest is not None and f.before_storage_id is not None and latest >= f.before_storage_id:
            return None  # an older event: only the event log has it
        if latest is None or (f.after_storage_id is not None and latest <= f.after_storage_id):
            return dg.EventRecordsResult([], cursor=EventLogCursor.from_storage_id(-1).to_string(), has_more=False)
        bounded = f.after_storage_id is not None or f.before_storage_id is not None
        if bounded and (f.asset_key, kind) not in self._records:
            return None  # an input's newer event: rare, and one query costs less than the key's events
        record = self._record(f.asset_key, kind, f.asset_partitions[0])
        if record is None or record.storage_id != latest:
            return None
        return dg.EventRecordsResult([record], cursor=EventLogCursor.from_storage_id(latest).to_string(), has_more=True)

    def _record(self, key: dg.AssetKey, kind: dg.DagsterEventType, partition_key: str) -> dg.EventLogRecord | None:
        if (key, kind) not in self._records:
            ids = sorted(i for pk, i in self._ids[(key, kind)].items() if pk in self._partition_keys)
            self._records[(key, kind)] = {record.partition_key: record
                                          for record in events_without_metadata(self._instance, ids)}
        return self._records[(key, kind)].get(partition_key)


def events_without_metadata(instance: dg.DagsterInstance, storage_ids: list[int]) -> list[dg.EventLogRecord]:
    """The asset events stored under ``storage_ids``, deserialized by Dagster without their
    metadata: the resolver reads an event's tags, timestamp and storage id, never its metadata,
    which is most of its size and of the time to deserialize it (a chunks event: 16 of 18 kB)."""
    storage = instance.event_log_storage
    if not isinstance(storage, SqlEventLogStorage):  # every event log Dagster ships is one
        raise TypeError(f"rag status reads the event log's table, and {type(storage).__name__} has none: "
                        "configure Dagster's SQLite or PostgreSQL event log storage in dagster.yaml")
    out = []
    for start in range(0, len(storage_ids), PAGE):
        # The ids came from the event log's latest-per-partition query, which applied its wipe filter.
        query = db.select(EventLogTable.c.id, EventLogTable.c.event).where(
            EventLogTable.c.id.in_(storage_ids[start:start + PAGE]))
        with storage.index_connection() as conn:
            rows = conn.execute(query).fetchall()
        for storage_id, text in rows:
            data = json.loads(text)
            specific = (data.get("dagster_event") or {}).get("event_specific_data") or {}
            event = specific.get("materialization") or specific.get("asset_observation") or {}
            if "metadata_entries" in event:  # the stored name of an asset event's metadata
                event["metadata_entries"] = {}
            out.append(dg.EventLogRecord(storage_id=storage_id, event_log_entry=unpack_value(data, EventLogEntry)))
    return out
