"""The project's event log storage: Dagster's consolidated SQLite log, shared across processes,
with partition keys read once inside a snapshot."""

import os
import subprocess
import sys

import dagster as dg
from dagster._core.storage.event_log import ConsolidatedSqliteEventLogStorage

from rag_assets.defs.storage import RagEventLogStorage, partitions_snapshot
from rag_assets.instance import write_instance_config
from tests.conftest import env


def test_instance_config_uses_one_event_log_shared_across_processes(tmp_path):
    home = tmp_path / "home"
    write_instance_config(home)
    with env(DAGSTER_HOME=str(home)), dg.DagsterInstance.get() as instance:
        assert isinstance(instance.event_log_storage, RagEventLogStorage)
        instance.add_dynamic_partitions("docs", ["a.md", "b.md"])
        instance.report_runless_asset_event(dg.AssetObservation(asset_key="raw", partition="a.md",
                                                                tags={"dagster/data_version": "v1"}))
        assert (home / "event_log.db").exists()
    # Another process (the webserver, the daemon) reading the same home sees both.
    code = ("import dagster as dg\n"
            "with dg.DagsterInstance.get() as i:\n"
            "    r = i.get_latest_data_version_record(dg.AssetKey('raw'), True, 'a.md')\n"
            "    print(i.get_dynamic_partitions('docs'), r.event_log_entry.asset_observation.tags['dagster/data_version'])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "DAGSTER_HOME": str(home)})
    assert out.stdout.split("\n")[0] == "['a.md', 'b.md'] v1"


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
