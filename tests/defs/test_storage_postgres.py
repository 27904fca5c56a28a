"""The shipped PostgreSQL instance (deploy/postgres/dagster.yaml, rag_assets/defs/storage_postgres.py)
on a real server: each storage keeps one connection for the process, replaces one the server
dropped, and a forked child never touches its parent's."""

import gc
import os
import shutil
import time

import dagster as dg
import psycopg2
import pytest
import sqlalchemy as db

from rag_assets.defs.storage_postgres import (RagPostgresEventLogStorage, RagPostgresRunStorage,
                                              RagPostgresScheduleStorage)
from tests.conftest import REPO, env
from tests.support.postgres import postgres_server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def pg_home(tmp_path_factory):
    """DAGSTER_HOME with the shipped Postgres dagster.yaml, and the server's variables."""
    home = tmp_path_factory.mktemp("pg_home")
    shutil.copy(REPO / "deploy" / "postgres" / "dagster.yaml", home / "dagster.yaml")
    with postgres_server("rag-storage-pg") as pg:
        yield {"DAGSTER_HOME": str(home), **pg}


def backend_pid(instance: dg.DagsterInstance) -> int:
    """The server process behind the event log's connection."""
    with instance.event_log_storage.index_connection() as conn:
        return conn.execute(db.text("SELECT pg_backend_pid()")).scalar_one()


def test_each_storage_connects_once_per_process_however_many_statements(pg_home, monkeypatch):
    connects = []
    real_connect = psycopg2.connect
    monkeypatch.setattr(psycopg2, "connect", lambda *a, **k: connects.append(1) or real_connect(*a, **k))
    with env(**pg_home), dg.DagsterInstance.get() as instance:
        assert isinstance(instance.event_log_storage, RagPostgresEventLogStorage)
        assert isinstance(instance.run_storage, RagPostgresRunStorage)
        assert isinstance(instance.schedule_storage, RagPostgresScheduleStorage)
        opened = len(connects)
        for n in range(20):
            instance.add_dynamic_partitions("docs", [f"doc{n}.md"])
            instance.report_runless_asset_event(dg.AssetObservation(
                asset_key="raw", partition=f"doc{n}.md", tags={"dagster/data_version": f"v{n}"}))
        record = instance.get_latest_data_version_record(dg.AssetKey("raw"), True, "doc19.md")
        assert record.event_log_entry.asset_observation.tags["dagster/data_version"] == "v19"
        assert len(instance.get_dynamic_partitions("docs")) == 20
        assert instance.get_runs() == [] and instance.all_instigator_state() == []
    # 60-odd statements on three storages, which dagster-postgres alone connects for one by one: a
    # connection or two each (the event log opens a second inside the first as it stores an asset event).
    assert len(connects) - opened <= 6, len(connects) - opened


def test_a_connection_the_server_dropped_is_replaced_not_failed(pg_home):
    with env(**pg_home), dg.DagsterInstance.get() as instance:
        before = backend_pid(instance)
        admin = psycopg2.connect(host=pg_home["DAGSTER_PG_HOST"], port=pg_home["DAGSTER_PG_PORT"],
                                 user="dagster", password=pg_home["DAGSTER_PG_PASSWORD"], dbname="postgres")
        admin.autocommit = True
        with admin, admin.cursor() as cur:
            cur.execute("SELECT pg_terminate_backend(%s)", (before,))
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                cur.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (before,))
                if cur.fetchone()[0] == 0:
                    break
                time.sleep(0.05)
        admin.close()
        instance.add_dynamic_partitions("dropped", ["a.md"])
        assert instance.get_dynamic_partitions("dropped") == ["a.md"]
        assert backend_pid(instance) != before


def test_a_forked_child_uses_connections_of_its_own_and_leaves_the_parents_open(pg_home):
    with env(**pg_home), dg.DagsterInstance.get() as instance:
        instance.add_dynamic_partitions("forked", ["a.md"])
        parent = backend_pid(instance)
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: query, drop everything it inherited, and end
            try:
                answer = f"{backend_pid(instance)} {instance.get_dynamic_partitions('forked')}"
                instance.dispose()
                gc.collect()
            except BaseException as error:  # noqa: BLE001 (reported to the parent)
                answer = repr(error)
            os.write(write, answer.encode())
            os._exit(0)
        os.close(write)
        with os.fdopen(read) as pipe:
            answer = pipe.read()
        os.waitpid(pid, 0)
        child_pid, keys = answer.split(" ", 1)
        assert child_pid.isdigit() and int(child_pid) != parent, answer
        assert keys == "['a.md']"
        assert backend_pid(instance) == parent  # the same open connection: the child closed nothing of it
