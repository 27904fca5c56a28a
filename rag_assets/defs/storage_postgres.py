"""The Dagster instance on PostgreSQL (deploy/postgres/dagster.yaml; the `distributed` extra's
dagster-postgres): Dagster's PostgreSQL storages, each on pooled connections kept for the process.

Outside the webserver, dagster-postgres opens a new connection (NullPool) for every statement: a
process handshake on the server (about 5 ms on loopback, a TLS handshake more across a network),
so `rag ingest`, `rag status` and every run worker paid one per event read or written. Here each
storage keeps its connections open for the process (two at most: the event log opens a second
inside the first to store an asset event; more only while threads use it at once, closed after),
checked with a ping before use, so a connection the server or a network dropped is replaced, not
failed. A forked child never uses its parent's connections (its pools start empty). The webserver
swaps in its own pool with a statement timeout (``optimize_for_webserver``), as Dagster always does.
"""

from __future__ import annotations

import os
import weakref

from dagster_postgres.event_log import PostgresEventLogStorage
from dagster_postgres.run_storage import PostgresRunStorage
from dagster_postgres.schedule_storage import PostgresScheduleStorage
from dagster_postgres.utils import create_pg_engine, get_token_provider_from_config, pg_url_from_config

_ENGINES: weakref.WeakSet = weakref.WeakSet()


def _forget_in_child() -> None:
    for engine in list(_ENGINES):
        engine.dispose(close=False)  # the parent's connections stay the parent's


os.register_at_fork(after_in_child=_forget_in_child)


class _Pooled:
    """For a dagster-postgres storage: its connections pooled for the process (see module docstring)."""

    def __init__(self, postgres_url: str, should_autocreate_tables: bool = True, inst_data=None,
                 token_provider=None):
        super().__init__(postgres_url, should_autocreate_tables, inst_data, token_provider)
        self._engine = create_pg_engine(postgres_url, token_provider, isolation_level="AUTOCOMMIT",
                                        pool_size=2, max_overflow=-1, pool_pre_ping=True)
        _ENGINES.add(self._engine)

    @classmethod
    def from_config_value(cls, inst_data, config_value):
        return cls(postgres_url=pg_url_from_config(config_value),
                   should_autocreate_tables=config_value.get("should_autocreate_tables", True),
                   inst_data=inst_data, token_provider=get_token_provider_from_config(config_value))

    def dispose(self) -> None:
        super().dispose()
        self._engine.dispose()


class RagPostgresEventLogStorage(_Pooled, PostgresEventLogStorage):
    """dagster-postgres' event log on pooled connections."""


class RagPostgresRunStorage(_Pooled, PostgresRunStorage):
    """dagster-postgres' run storage on pooled connections."""


class RagPostgresScheduleStorage(_Pooled, PostgresScheduleStorage):
    """dagster-postgres' schedule storage on pooled connections."""
