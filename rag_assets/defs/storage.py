"""The project's Dagster event log and run storage: SQLite, one engine per process.

Dagster's default SQLite event log writes every event of a run to a database of its own and
every asset event a second time to an index database, opening a new SQLAlchemy engine (NullPool)
for each statement: about 18 ms per event on a small machine, and a document is about 9 events.
Dagster's consolidated SQLite event log keeps every event in one database (``event_log.db``,
WAL mode, shared by `rag`, `dagster dev` and the daemon like the default one); this subclass also
keeps its engine and pooled connections for the life of the process, so an event costs one
insert on an open connection. The run storage (``runs.db``, Dagster's default) gets the same
engine per process. WAL with ``synchronous=NORMAL`` makes a commit durable against a
crash of any process; only an OS crash or power loss can lose the last commits (SQLite's own
advice for WAL).

``batched_writes()`` makes every write of a block one transaction (one commit instead of one per
event). Dagster hands this storage the events it marks as a batch (the planned events of a new
run, the per-partition materialisations of one step) through ``store_event_batch`` when
``DAGSTER_EVENT_BATCH_SIZE`` is set, which this storage sets (unless the environment already
does) in every process that opens it: `rag`, the webserver, the daemon and the run workers they
start. ``partitions_snapshot()`` reads each dynamic partitions definition once for a block of
code: an asset reporting metadata for 50 document partitions otherwise makes Dagster re-read
every partition key (and check the range's ends) once per document.

Every storage here creates its database (and, on a new one, Dagster's indexes and migrations)
under an exclusive lock on ``base_dir``/.init.lock: Dagster checks and stamps a new SQLite
schema's migration revision under a thread lock only, so two processes opening a new home at once
(`dagster dev` and `rag ingest`, two run workers) both stamp it, and every later open fails with
"Version table 'alembic_version' has more than one head present" (dagster-io/dagster#27390).

``RagComputeLogManager`` keeps Dagster's local compute logs but does not mirror them to the
terminal (see the class).

Dagster has no public import path for instance storage classes (its documented dagster.yaml
names ``dagster._core.storage...``), hence the private imports, kept to this module.
"""

from __future__ import annotations

import fcntl
import os
import sys
import threading
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar

import dagster as dg
import sqlalchemy as db
from dagster._config import StringSource
from dagster._core.execution.compute_logs import redirect_to_file
from dagster._core.storage.compute_log_manager import CapturedLogContext, ComputeIOType
from dagster._core.storage.event_log import ConsolidatedSqliteEventLogStorage
from dagster._core.storage.local_compute_log_manager import IO_TYPE_EXTENSION, LocalComputeLogManager
from dagster._core.storage.runs import SqliteRunStorage
from dagster._core.storage.schedules import SqliteScheduleStorage
from dagster._core.storage.sqlite import SQLITE_BUSY_TIMEOUT_SECONDS
from dagster._utils import ensure_file, touch_file

# Events Dagster buffers per batch before handing them to store_event_batch: more than a run of
# 99 documents plans (4 stages x 99 partitions), so a batch is flushed only at its end.
EVENT_BATCH_SIZE = "1000"


class RagEventLogStorage(ConsolidatedSqliteEventLogStorage):
    """Dagster's consolidated SQLite event log on one engine per process (see module docstring)."""

    def __init__(self, base_dir, inst_data=None):
        self._engine = None  # set by super().__init__ through _conn_string; see _process_engine
        self._tables: set[str] = set()
        self._columns: set[str] = set()
        self._batch: ContextVar[db.Connection | None] = ContextVar("rag_batched_writes", default=None)
        self._superseded: ContextVar[frozenset[int] | set[int]] = ContextVar("rag_superseded", default=frozenset())
        self._snapshot: ContextVar[dict[str, tuple[list[str], frozenset[str]]] | None] = ContextVar(
            "rag_partitions_snapshot", default=None)
        with schema_lock(base_dir):  # Dagster creates a missing database in __init__
            super().__init__(base_dir, inst_data)
        os.environ.setdefault("DAGSTER_EVENT_BATCH_SIZE", EVENT_BATCH_SIZE)

    def _process_engine(self):
        if self._engine is None:
            self._engine = ProcessEngine(self._conn_string)
        return self._engine.get()

    @contextmanager
    def _connect(self):
        conn = self._batch.get()
        if conn is not None:  # joins the block's transaction (see batched_writes)
            yield conn
            return
        with self._process_engine().connect() as conn, conn.begin():
            yield conn

    @contextmanager
    def batched_writes(self):
        """Within the block (and only in this thread or task), every read and write of this
        storage runs on one connection in one transaction, committed when the block ends and
        rolled back if it raises."""
        if self._batch.get() is not None:
            yield
            return
        with self._process_engine().connect() as conn, conn.begin():
            token = self._batch.set(conn)
            try:
                yield
            finally:
                self._batch.reset(token)

    def store_event_batch(self, events) -> None:
        # Each asset event also rewrites its asset's summary row (last materialisation, run and
        # timestamp). Within a batch, an event followed by one of the same type for the same asset
        # would have its row update overwritten column for column, so only the last of each is applied.
        last = {(e.dagster_event.asset_key, e.dagster_event_type): i for i, e in enumerate(events)
                if e.is_dagster_event and e.dagster_event.asset_key}
        superseded = {id(e) for i, e in enumerate(events) if e.is_dagster_event and e.dagster_event.asset_key
                      and last[(e.dagster_event.asset_key, e.dagster_event_type)] != i}
        token = self._superseded.set(superseded)
        try:
            with self.batched_writes():
                for event in events:
                    self.store_event(event)
        finally:
            self._superseded.reset(token)

    def _store_asset_event(self, conn, event, event_id: int) -> None:
        if id(event) not in self._superseded.get():
            super()._store_asset_event(conn, event, event_id)

    def has_table(self, table_name: str) -> bool:
        # Dagster asks before most asset writes, each time on a new engine; a table, once
        # migrated in, stays.
        if table_name not in self._tables:
            with self._process_engine().connect() as conn:
                if conn.dialect.has_table(conn, table_name):
                    self._tables.add(table_name)
        return table_name in self._tables

    def _has_asset_key_col_on_connection(self, conn, column_name: str) -> bool:
        # Dagster reflects the asset key table's columns on every asset event; a column, once
        # migrated in, stays.
        if column_name not in self._columns and super()._has_asset_key_col_on_connection(conn, column_name):
            self._columns.add(column_name)
        return column_name in self._columns

    @contextmanager
    def partitions_snapshot(self):
        """Within the block (and only in this thread or task), each dynamic partitions
        definition's keys are read once; this process' own additions and deletions still show."""
        token = self._snapshot.set({})
        try:
            yield
        finally:
            self._snapshot.reset(token)

    def _snapshot_keys(self, partitions_def_name: str) -> tuple[list[str], frozenset[str]] | None:
        snapshot = self._snapshot.get()
        if snapshot is None:
            return None
        if partitions_def_name not in snapshot:
            keys = list(super().get_dynamic_partitions(partitions_def_name))
            snapshot[partitions_def_name] = (keys, frozenset(keys))
        return snapshot[partitions_def_name]

    def get_dynamic_partitions(self, partitions_def_name: str):
        keys = self._snapshot_keys(partitions_def_name)
        return super().get_dynamic_partitions(partitions_def_name) if keys is None else keys[0]

    def has_dynamic_partition(self, partitions_def_name: str, partition_key: str) -> bool:
        keys = self._snapshot_keys(partitions_def_name)
        if keys is None:
            return super().has_dynamic_partition(partitions_def_name, partition_key)
        return partition_key in keys[1]

    def add_dynamic_partitions(self, partitions_def_name, partition_keys):
        self._forget(partitions_def_name)
        return super().add_dynamic_partitions(partitions_def_name, partition_keys)

    def delete_dynamic_partition(self, partitions_def_name, partition_key):
        self._forget(partitions_def_name)
        return super().delete_dynamic_partition(partitions_def_name, partition_key)

    def _forget(self, partitions_def_name: str) -> None:
        snapshot = self._snapshot.get()
        if snapshot is not None:
            snapshot.pop(partitions_def_name, None)

    def dispose(self):
        super().dispose()
        if self._engine is not None:
            self._engine.dispose()


class _CreatedUnderLock:
    """For a Dagster SQLite storage built by ``from_local(base_dir)``: its database is created
    under ``schema_lock`` (see module docstring), and its config builds this class, not Dagster's."""

    @classmethod
    def from_config_value(cls, inst_data, config_value):
        return cls.from_local(inst_data=inst_data, **config_value)

    @classmethod
    def from_local(cls, base_dir: str, inst_data=None):
        with schema_lock(base_dir):
            return super().from_local(base_dir, inst_data)


class RagRunStorage(_CreatedUnderLock, SqliteRunStorage):
    """Dagster's SQLite run storage (``runs.db``) on one engine per process, not one per statement."""

    def __init__(self, conn_string: str, inst_data=None):
        self._engine = ProcessEngine(conn_string)
        super().__init__(conn_string, inst_data)

    @contextmanager
    def connect(self):
        with self._engine.get().connect() as conn, conn.begin():
            yield conn

    def dispose(self):
        super().dispose()
        self._engine.dispose()


class RagScheduleStorage(_CreatedUnderLock, SqliteScheduleStorage):
    """Dagster's SQLite schedule storage (``schedules.db``)."""


class RagComputeLogManager(LocalComputeLogManager):
    """Dagster's local compute logs (each step's stdout and stderr, in the files the UI reads under
    ``base_dir``/storage, where Dagster keeps them by default), captured without mirroring them to
    the process' own terminal: Dagster's mirror starts a ``tail`` and a Python watcher process per
    capture, and Ctrl-C in a terminal running `rag ingest` reached those and printed their
    tracebacks."""

    def __init__(self, base_dir: str, inst_data=None):
        super().__init__(os.path.join(base_dir, "storage"), inst_data=inst_data)

    @classmethod
    def config_type(cls):
        return {"base_dir": StringSource}

    @classmethod
    def from_config_value(cls, inst_data, config_value):
        return cls(inst_data=inst_data, **config_value)

    @contextmanager
    def capture_logs(self, log_key):
        out, err = (self.get_captured_local_path(log_key, IO_TYPE_EXTENSION[io]) for io in ComputeIOType)
        ensure_file(out)
        ensure_file(err)
        with redirect_to_file(sys.stdout, out), redirect_to_file(sys.stderr, err):
            yield CapturedLogContext(log_key)
        touch_file(self.complete_artifact_path(log_key))  # the UI's sign that the capture ended


class ProcessEngine:
    """One pooled SQLAlchemy engine for a SQLite database, per process (a forked child opens its
    own), with ``synchronous=NORMAL`` on each connection (see the module docstring)."""

    def __init__(self, conn_string: str):
        self._conn_string = conn_string
        self._engine = None
        self._pid = None
        self._lock = threading.Lock()

    def get(self) -> db.Engine:
        with self._lock:
            if self._engine is None or self._pid != os.getpid():
                engine = db.create_engine(self._conn_string, pool_size=5, max_overflow=-1,
                                          connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS})
                db.event.listen(engine, "connect", _pragmas)
                self._engine, self._pid = engine, os.getpid()
            return self._engine

    def dispose(self) -> None:
        with self._lock:
            if self._engine is not None and self._pid == os.getpid():
                self._engine.dispose()
            self._engine = None


def partitions_snapshot(instance: dg.DagsterInstance):
    """``RagEventLogStorage.partitions_snapshot`` where the instance's event log is ours (an
    instance configured otherwise reads partitions as Dagster always does)."""
    storage = instance.event_log_storage
    return storage.partitions_snapshot() if isinstance(storage, RagEventLogStorage) else nullcontext()


def current_dynamic_partitions(instance: dg.DagsterInstance, partitions_def_name: str) -> list[str]:
    """The partition keys as stored now, written by any process: a partitions snapshot in force
    is read anew."""
    storage = instance.event_log_storage
    if isinstance(storage, RagEventLogStorage):
        storage._forget(partitions_def_name)
    return list(instance.get_dynamic_partitions(partitions_def_name))


def batched_writes(instance: dg.DagsterInstance):
    """``RagEventLogStorage.batched_writes`` where the instance's event log is ours (otherwise
    each write commits on its own, as Dagster always does)."""
    storage = instance.event_log_storage
    return storage.batched_writes() if isinstance(storage, RagEventLogStorage) else nullcontext()


@contextmanager
def schema_lock(base_dir: str):
    """Hold an exclusive lock on ``base_dir``/.init.lock (created if missing) for the block; any
    other process or thread asking for it waits. Released with the file, also if the process dies."""
    os.makedirs(base_dir, exist_ok=True)
    fd = os.open(os.path.join(base_dir, ".init.lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()
