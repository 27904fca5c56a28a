"""`rag status` reads Dagster's stale status in bulk (defs/staleness.py): partition by partition
and stage by stage, on a SQLite and on a PostgreSQL instance, it equals what Dagster's resolver
answers on its own (the webserver's way) on a corpus where documents were edited, added and
deleted, stages re-materialized out of band and the chunking profile changed; and every
event-log query it answers itself gets the event log's own answer (its events without their
metadata, which the resolver does not read)."""

import shutil
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.asset_graph_view.asset_graph_view import AssetGraphView, TemporalContext
from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleStatus
from dagster._time import get_current_datetime

from rag_assets.config import load_project
from rag_assets.core.keys import partition_key_for
from rag_assets.defs import staleness
from rag_assets.defs.factory import build_definitions
from rag_assets.ingest import STAGES, ingest_project, observe_project, status_project
from tests.conftest import REPO, edit_yaml, env, make_project
from tests.support.postgres import postgres_server

pytestmark = pytest.mark.slow
NAMES = {StaleStatus.FRESH: "fresh", StaleStatus.STALE: "stale", StaleStatus.MISSING: "missing"}
EDITED, ADDED, DELETED = "handbook/employee_handbook.md", "notes/parking.txt", "notes/office_wifi.txt"
SAME_VERSION, NEW_VERSION = "support/customer_faq.md", "engineering/release_notes.md"


def resolver_status(defs, instance, key: dg.AssetKey, partition_keys: list[str]) -> dict[str, list[str]]:
    """What Dagster's resolver answers alone, as the webserver builds it for one request."""
    view = AssetGraphView(temporal_context=TemporalContext(effective_dt=get_current_datetime(), last_event_id=None),
                          instance=instance, asset_graph=defs.resolve_asset_graph())
    resolver = CachingStaleStatusResolver(instance=instance, asset_graph=defs.resolve_asset_graph(),
                                          loading_context=view)
    out: dict[str, list[str]] = {"fresh": [], "stale": [], "missing": []}
    for partition_key in partition_keys:
        out[NAMES[resolver.get_status(key, partition_key)]].append(partition_key)
    return out


def without_metadata(result: dg.EventRecordsResult) -> dg.EventRecordsResult:
    """The event log's answer with each event's metadata left out, as LatestEvents reads events."""
    def strip(record: dg.EventLogRecord) -> dg.EventLogRecord:
        entry = record.event_log_entry
        data = entry.dagster_event.event_specific_data
        data = data._replace(materialization=data.materialization._replace(metadata={})) \
            if hasattr(data, "materialization") else \
            data._replace(asset_observation=data.asset_observation._replace(metadata={}))
        return record._replace(event_log_entry=entry._replace(
            dagster_event=entry.dagster_event._replace(event_specific_data=data)))

    return result._replace(records=[strip(r) for r in result.records])


class Checked(staleness.LatestEvents):
    """LatestEvents that asks the event log too, for each query it answers, and keeps count."""

    answered: list = []
    passed_on: list = []

    def _latest(self, kind, records_filter, limit, cursor, ascending):
        answer = super()._latest(kind, records_filter, limit, cursor, ascending)
        fetch = (self._instance.fetch_materializations if kind == dg.DagsterEventType.ASSET_MATERIALIZATION
                 else self._instance.fetch_observations)
        if answer is None:
            Checked.passed_on.append(records_filter)
        else:
            assert answer == without_metadata(fetch(records_filter, limit, cursor, ascending)), records_filter
            Checked.answered.append(records_filter)
        return answer


def latest_version(instance, key: dg.AssetKey, partition_key: str) -> str:
    record = instance.fetch_materializations(dg.AssetRecordsFilter(key, asset_partitions=[partition_key]), limit=1)
    return record.records[0].event_log_entry.tags["dagster/data_version"]


@pytest.fixture(params=["sqlite", "postgres"])
def instance_env(request, tmp_path):
    """A project on the SQLite instance `rag` writes, or on the shipped PostgreSQL one."""
    values = make_project(tmp_path / "p")
    if request.param == "sqlite":
        yield "RagEventLogStorage", values
        return
    with postgres_server("rag-staleness-pg") as pg:
        shutil.copy(REPO / "deploy" / "postgres" / "dagster.yaml", Path(values["DAGSTER_HOME"]) / "dagster.yaml")
        yield "RagPostgresEventLogStorage", {**values, **pg}


def test_bulk_status_equals_dagsters_resolver_partition_by_partition(instance_env, monkeypatch):
    storage, values = instance_env
    docs = Path(values["RAG_SAMPLE_DOCS"])
    monkeypatch.setattr(staleness, "LatestEvents", Checked)
    with env(**values):
        with dg.DagsterInstance.get() as instance:
            assert type(instance.event_log_storage).__name__ == storage
        assert ingest_project(load_project())["documents_failed"] == 0
        (docs / EDITED).write_text((docs / EDITED).read_text() + "\nThe canteen opens at 07:30.\n")
        (docs / ADDED).write_text("Parking permits are renewed every January at the front desk.\n")
        (docs / DELETED).unlink()
        assert observe_project(load_project())["corpora"]["sample"] == {
            "documents_seen": 12, "documents_observed": 2, "documents_new": 1, "documents_deleted": 1}
        with dg.DagsterInstance.get() as instance:
            # Out of band, as a run launched from the UI or another tool could: parsed text of one
            # document with the version it had (nothing downstream changes), chunks of another with
            # a new version and no provenance (its embeddings are unsynced).
            parsed, chunks = dg.AssetKey(["sample", "parsed_documents"]), dg.AssetKey(["sample", "chunks"])
            instance.report_runless_asset_event(dg.AssetMaterialization(
                parsed, partition=partition_key_for(SAME_VERSION),
                tags={"dagster/data_version": latest_version(instance, parsed, partition_key_for(SAME_VERSION))}))
            instance.report_runless_asset_event(dg.AssetMaterialization(
                chunks, partition=partition_key_for(NEW_VERSION), tags={"dagster/data_version": "out-of-band"}))
        touched = {partition_key_for(d) for d in (EDITED, ADDED, DELETED, SAME_VERSION, NEW_VERSION)}

        def compare(expected_stale: dict[str, set[str]]) -> None:
            Checked.answered, Checked.passed_on = [], []
            project = load_project()
            defs = build_definitions(project)
            with dg.DagsterInstance.get() as instance:
                live = list(instance.get_dynamic_partitions("sample_documents"))
                assert partition_key_for(ADDED) in live and partition_key_for(DELETED) not in live
                for stage in STAGES:
                    key = dg.AssetKey(["sample", stage])
                    # The deleted document's partition too: its events stay in the event log.
                    asked = [*live, partition_key_for(DELETED)]
                    bulk = staleness.stale_status(defs, instance, key, asked)
                    assert bulk == resolver_status(defs, instance, key, asked), stage
                    assert set(bulk["stale"]) == expected_stale[stage], stage
                    assert bulk["missing"] == [partition_key_for(ADDED)], stage
            stages = status_project(project)["corpora"]["sample"]["stages"]
            assert {s: set(v["stale_partitions"]) for s, v in stages.items()} == {
                s: expected_stale[s] - {partition_key_for(DELETED)} for s in STAGES}
            # Most answers come from the latest events read up front; the event log is asked only
            # about partitions with events after the ingest (an input's newer event, an older one).
            assert len(Checked.answered) > 4 * len(live)
            assert {f.asset_partitions[0] for f in Checked.passed_on} <= touched

        edited = {partition_key_for(EDITED)}
        compare({"parsed_documents": edited, "chunks": edited, "embeddings": edited | {partition_key_for(NEW_VERSION)},
                 "lancedb_index": edited})

        # Another chunking profile: every partition from the chunks on (their code version).
        edit_yaml(Path(values["RAG_PROJECT_DIR"]) / "rag_project.yml",
                  lambda d: d["defaults"].update({"+chunking_profile": "recursive"}))
        everything = {partition_key_for(p.relative_to(docs).as_posix()) for p in docs.rglob("*") if p.is_file()}
        everything = (everything - {partition_key_for(ADDED)}) | {partition_key_for(DELETED)}
        # A runless materialization without provenance has no code version to compare: fresh.
        compare({"parsed_documents": edited, "chunks": everything - {partition_key_for(NEW_VERSION)},
                 "embeddings": everything,
                 "lancedb_index": everything})
