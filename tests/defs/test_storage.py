"""The project's event log storage: Dagster's consolidated SQLite log, shared across processes,
with partition keys read once inside a snapshot."""

import os
import sqlite3
import subprocess
import sys

import dagster as dg
import pytest
from dagster._core.storage.event_log import ConsolidatedSqliteEventLogStorage, SqlEventLogStorage

from rag_assets.defs.storage import (RagEventLogStorage, RagRunStorage, RagScheduleStorage, batched_writes,
                                     partitions_snapshot)
from rag_assets.instance import write_instance_config
from tests.conftest import env


def test_instance_config_uses_one_event_log_and_run_storage_shared_across_processes(tmp_path):
    home = tmp_path / "home"
    write_instance_config(home)

    @dg.asset
    def table() -> None:
        pass

    with env(DAGSTER_HOME=str(home)), dg.DagsterInstance.get() as instance:
        assert isinstance(instance.event_log_storage, RagEventLogStorage)
        assert isinstance(instance.run_storage, RagRunStorage)
        instance.add_dynamic_partitions("docs", ["a.md", "b.md"])
        instance.report_runless_asset_event(dg.AssetObservation(asset_key="raw", partition="a.md",
                                                                tags={"dagster/data_version": "v1"}))
        run_id = dg.materialize([table], instance=instance).run_id
        assert (home / "event_log.db").exists() and (home / "runs.db").exists()
    # Another process (the webserver, the daemon) reading the same home sees all of it.
    code = ("import dagster as dg\n"
            "with dg.DagsterInstance.get() as i:\n"
            "    r = i.get_latest_data_version_record(dg.AssetKey('raw'), True, 'a.md')\n"
            "    print(i.get_dynamic_partitions('docs'), r.event_log_entry.asset_observation.tags['dagster/data_version'])\n"
            f"    print(i.get_run_by_id('{run_id}').status.value)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "DAGSTER_HOME": str(home)})
    assert out.stdout.split("\n")[:2] == ["['a.md', 'b.md'] v1", "SUCCESS"]


def test_partitions_snapshot_reads_keys_once_and_sees_own_changes(tmp_path, monkeypatch):
    home = tmp_path / "home"
    write_instance_config(home)
    with env(DAGSTER_HOME=str(home)), dg.DagsterInstance.get() as instance:
        instance.add_dynamic_partitions("docs", ["a.md", "b.md"])
        reads = []
        dagster_read = ConsolidatedSqliteEventLogStorage.get_dynamic_partitions

        def counting(self, name):
            reads.append(name)
            return dagster_read(self, name)

        # Dagster's own read, under ours: count how often the database is asked.
        monkeypatch.setattr(ConsolidatedSqliteEventLogStorage, "get_dynamic_partitions", counting)
        with partitions_snapshot(instance):
            for _ in range(5):
                assert instance.has_dynamic_partition("docs", "a.md")
                assert instance.get_dynamic_partitions("docs") == ["a.md", "b.md"]
            assert reads == ["docs"]
            instance.add_dynamic_partitions("docs", ["c.md"])
            assert instance.has_dynamic_partition("docs", "c.md")
            instance.delete_dynamic_partition("docs", "a.md")
            assert instance.get_dynamic_partitions("docs") == ["b.md", "c.md"]
        assert not instance.has_dynamic_partition("docs", "a.md")  # outside: read as Dagster does


def _observations(home) -> int:
    with sqlite3.connect(home / "event_log.db") as conn:  # another connection, as another process reads
        return conn.execute("SELECT COUNT(*) FROM event_logs WHERE dagster_event_type = 'ASSET_OBSERVATION'").fetchone()[0]


def test_batched_writes_commit_once_at_the_end_or_not_at_all(tmp_path, monkeypatch):
    home = tmp_path / "home"
    write_instance_config(home)
    monkeypatch.delenv("DAGSTER_EVENT_BATCH_SIZE", raising=False)
    with env(DAGSTER_HOME=str(home)), dg.DagsterInstance.get() as instance:
        # Opening the storage turns on Dagster's batched event writes for this process.
        assert int(os.environ["DAGSTER_EVENT_BATCH_SIZE"]) >= 200
        observe = lambda pk: instance.report_runless_asset_event(  # noqa: E731
            dg.AssetObservation(asset_key="raw", partition=pk, tags={"dagster/data_version": pk}))
        with batched_writes(instance):
            instance.add_dynamic_partitions("docs", ["a.md", "b.md"])
            observe("a.md")
            observe("b.md")
            assert _observations(home) == 0  # nothing committed yet
            assert instance.has_dynamic_partition("docs", "b.md")  # but this block reads its own writes
        assert _observations(home) == 2
        with pytest.raises(RuntimeError), batched_writes(instance):
            observe("c.md")
            raise RuntimeError("the batch fails")
        assert _observations(home) == 2
        record = instance.get_latest_data_version_record(dg.AssetKey("raw"), True, "b.md")
        assert record.event_log_entry.asset_observation.tags["dagster/data_version"] == "b.md"


def test_a_range_run_stores_each_partition_and_rewrites_the_asset_row_once_per_batch(tmp_path, monkeypatch):
    home = tmp_path / "home"
    write_instance_config(home)
    written = []
    dagster_write = SqlEventLogStorage._store_asset_event

    def counting(self, conn, event, event_id):
        written.append((event.dagster_event_type.value, event.dagster_event.partition))
        return dagster_write(self, conn, event, event_id)

    monkeypatch.setattr(SqlEventLogStorage, "_store_asset_event", counting)
    parts = dg.DynamicPartitionsDefinition(name="docs")

    @dg.asset(partitions_def=parts)
    def doc(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
        for pk in context.partition_keys:
            context.add_asset_metadata({"doc": pk}, partition_key=pk)
        return dg.MaterializeResult()

    with env(DAGSTER_HOME=str(home)), dg.DagsterInstance.get() as instance:
        instance.add_dynamic_partitions("docs", ["a", "b", "c"])
        result = dg.materialize([doc], instance=instance, tags={"dagster/asset_partition_range_start": "a",
                                                                 "dagster/asset_partition_range_end": "c"})
        assert result.success
        records = instance.fetch_materializations(doc.key, limit=10).records
        assert sorted(r.asset_materialization.metadata["doc"].value for r in records) == ["a", "b", "c"]
        assert sorted(r.partition_key for r in records) == ["a", "b", "c"]  # each partition its own event
        # The asset's summary row was written once per batch (planned events, materialisations),
        # from the batch's last event, as three writes in a row would have left it.
        last = max(records, key=lambda r: r.storage_id)
        assert [w for w in written if w[0] == "ASSET_MATERIALIZATION"] == [("ASSET_MATERIALIZATION", last.partition_key)]
        assert len([w for w in written if w[0] == "ASSET_MATERIALIZATION_PLANNED"]) == 1
        summary = instance.get_asset_records([doc.key])[0].asset_entry.last_materialization_record
        assert (summary.storage_id, summary.run_id) == (last.storage_id, result.run_id)


def test_processes_starting_on_a_new_home_create_its_databases_once(tmp_path):
    """Six processes open a new home at once (as `dagster dev`, its daemon and `rag ingest` may):
    each database is created and stamped once, and every process can use it."""
    home = tmp_path / "home"
    write_instance_config(home)
    code = ("import sys, dagster as dg\n"
            "with dg.DagsterInstance.get() as i:\n"
            "    i.add_dynamic_partitions('docs', [sys.argv[1]])\n"
            "    i.get_runs(limit=1)\n"
            "    i.all_instigator_state()\n")
    procs = [subprocess.Popen([sys.executable, "-c", code, f"doc{n}.md"], stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "DAGSTER_HOME": str(home)}) for n in range(6)]
    errors = [proc.communicate(timeout=120)[1] for proc in procs]
    assert [proc.returncode for proc in procs] == [0] * 6, errors
    # Stamped once (Dagster's consolidated event log leaves its stamp uncommitted: none there).
    for name, stamps in (("runs.db", 1), ("schedules.db", 1), ("event_log.db", 0)):
        with sqlite3.connect(home / name) as conn:
            assert len(conn.execute("SELECT version_num FROM alembic_version").fetchall()) == stamps, name
    with env(DAGSTER_HOME=str(home)), dg.DagsterInstance.get() as instance:
        assert isinstance(instance.schedule_storage, RagScheduleStorage)
        assert sorted(instance.get_dynamic_partitions("docs")) == [f"doc{n}.md" for n in range(6)]


def test_a_steps_output_reaches_the_ui_without_a_tail_process_per_capture(tmp_path):
    """The compute logs are the files the UI reads (Dagster's own manager reads them back), and
    capturing them starts no `tail` or watcher process (which a terminal's Ctrl-C reached)."""
    home = tmp_path / "home"
    write_instance_config(home)
    code = ("import subprocess, sys\nimport dagster as dg\n"
            "started = []\n"
            "popen = subprocess.Popen\n"
            "def spy(args, *a, **k):\n"
            "    started.append(args)\n"
            "    return popen(args, *a, **k)\n"
            "subprocess.Popen = spy\n"
            "@dg.op\n"
            "def talk():\n"
            "    print('to stdout', flush=True)\n"
            "    print('to stderr', file=sys.stderr, flush=True)\n"
            "@dg.job\n"
            "def job():\n"
            "    talk()\n"
            "with dg.DagsterInstance.get() as i:\n"
            "    print(job.execute_in_process(instance=i).run_id, len(started))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "DAGSTER_HOME": str(home)}, timeout=120)
    run_id, started = out.stdout.split()[-2:]
    assert started == "0" and "to stdout" not in out.stdout
    with env(DAGSTER_HOME=str(home)), dg.DagsterInstance.get() as instance:
        from dagster._core.storage.compute_log_manager import ComputeIOType

        manager = instance.compute_log_manager
        [key] = manager.get_log_keys_for_log_key_prefix([run_id, "compute_logs"], io_type=ComputeIOType.STDOUT)
        data = manager.get_log_data(key)
        assert b"to stdout" in data.stdout and b"to stderr" in data.stderr
        assert manager.is_capture_complete(key)
        assert str(home / "storage") in manager.get_captured_local_path(key, "out")
