"""A corpus' LanceDB tables, what each one is for, and dropping the ones nothing reads or builds.

Roles: ``serving`` (the table queries use), ``configured`` (the table the corpus' current model and
profile build, while queries still use another), ``last_served`` (the table completed last, whose
model or profile is no longer declared: kept until the configured table is complete, as without it an
older table would look current), ``previous`` (complete once, for a model and
profile still declared: switching back to them re-embeds nothing) and ``unused`` (a model or profile no
longer declared, a table never completed, or a table an earlier version of rag_assets named
``<corpus>__<model>``). Manifests and the corpus' registry go with their tables. The embedding
caches (``embcache__<model>``, one per model in a LanceDB, shared by its corpora) are ``cache``
for a declared model and ``unused`` for one no longer declared. Each table is read through (one
column) to mark a ``damaged`` one, whose manifest opens and counts its rows while its data is lost.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from rag_assets.clients import own_table
from rag_assets.config import Corpus, Project
from rag_assets.core.embed_cache import CACHE_PREFIX, cache_name
from rag_assets.core.index import (MANIFEST_SUFFIX, active_entries, active_table, drop_table, open_tables,
                                   reads_through, table_name, table_prefix)
from rag_assets.query import serving, unserved

DROPPABLE = ("previous", "unused")


@dataclass(frozen=True)
class TableInfo:
    corpus: str | None
    table: str
    role: str
    model: str | None
    profile: str | None
    rows: int
    completed_at: str | None
    damaged: bool = False  # a data file lost or cut: queries on it fail until it is moved aside

    def to_dict(self) -> dict:
        return asdict(self)


def corpus_tables(project: Project, corpus: Corpus, db) -> list[TableInfo]:
    """Every chunks table of ``corpus`` in ``db`` with its role; serving first, then by name. A table
    is the corpus' when its name starts with ``<corpus>__`` and no other corpus' longer prefix."""
    prefix = table_prefix(corpus.name)
    longer = [table_prefix(c.name) for c in project.corpora if len(table_prefix(c.name)) > len(prefix)]
    opened = open_tables(db, prefix)
    names = {n for n in opened if not any(n.startswith(p) for p in longer)}
    declared = {table_name(corpus.name, m.name, p.name): (m.name, p.name)
                for m in project.embedding_models for p in project.chunking_profiles}
    support = {active_table(db, corpus.name)} | {
        n for n in names if n.endswith(MANIFEST_SUFFIX) and n[:-len(MANIFEST_SUFFIX)] in names and n not in declared}
    complete = {e["table"]: e for e in active_entries(db, corpus.name)}
    # While no table can answer queries (``unserved``), none serves: the configured one is being built.
    serving_name = None if unserved(project, corpus, db) else serving(project, corpus, db).index(db, corpus.name).name
    own_name = own_table(corpus).index(db, corpus.name).name
    last = next(iter(complete), None)
    out = []
    for name in sorted(names - support):
        entry = complete.get(name)
        if name == serving_name:
            role = "serving"
        elif name == own_name:
            role = "configured"
        elif name == last:
            role = "last_served"
        elif name in declared and entry:
            role = "previous"
        else:
            role = "unused"
        model, profile = declared.get(name, (entry["model"], entry["profile"]) if entry else (None, None))
        out.append(TableInfo(corpus.name, name, role, model, profile, opened[name].count_rows(),
                             entry["completed_at"].isoformat(timespec="seconds") if entry else None,
                             damaged=not reads_through(opened[name])))
    return sorted(out, key=lambda t: (t.role != "serving", t.role != "configured", t.role != "last_served", t.table))


def drop_tables(db, tables: list[TableInfo], roles: tuple[str, ...]) -> list[TableInfo]:
    """Drop those of a corpus' ``tables`` (as ``corpus_tables`` listed them) whose role is in
    ``roles`` (a subset of ``DROPPABLE``: the serving and the configured table are never dropped),
    with their manifests and registry entries. Returns the tables dropped."""
    if not set(roles) <= set(DROPPABLE):
        raise ValueError(f"only tables of roles {DROPPABLE} can be dropped, not {sorted(set(roles) - set(DROPPABLE))}")
    dropped = [t for t in tables if t.role in roles]
    for table in dropped:
        drop_table(db, table.corpus, table.table)
    return dropped


def undeclared_tables(project: Project, db) -> list[TableInfo]:
    """Chunks tables in ``db`` of corpora the project no longer declares (role ``undeclared``; the
    corpus named as its tables are, ``safe_name``): those whose name starts with the prefix of a
    corpus registry (``<corpus>__live_tables``) that no declared corpus owns, so another
    project's tables in a shared LanceDB are listed only where they follow this layout."""
    declared = [table_prefix(c.name) for c in project.corpora]
    suffix = active_table(db, "")[len(table_prefix("")):]  # what a registry's name ends with after the prefix
    opened = open_tables(db)
    # A corpus name holds no "__": a chunks table of a profile named like the registry is not one.
    prefixes = sorted({n[:-len(suffix)] for n in opened
                       if n.endswith("__" + suffix) and "__" not in n[:-len("__" + suffix)]} - set(declared))
    out = []
    for prefix in prefixes:
        entries = {e["table"]: e for e in active_entries(db, prefix[:-2])}
        for name in sorted(opened):
            if not name.startswith(prefix) or name.endswith(MANIFEST_SUFFIX) or name == prefix + suffix or any(
                    name.startswith(p) and len(p) > len(prefix) for p in [*declared, *prefixes]):
                continue
            entry = entries.get(name)
            out.append(TableInfo(prefix[:-2], name, "undeclared", entry["model"] if entry else None,
                                 entry["profile"] if entry else None, opened[name].count_rows(),
                                 entry["completed_at"].isoformat(timespec="seconds") if entry else None,
                                 damaged=not reads_through(opened[name])))
    return out


def drop_undeclared(db, tables: list[TableInfo], corpus: str) -> list[TableInfo]:
    """Drop the tables of undeclared ``corpus`` (as ``undeclared_tables`` listed them), their
    manifests and its registry; returns the tables dropped."""
    dropped = [t for t in tables if t.corpus == corpus]
    for table in dropped:
        drop_table(db, corpus, table.table)
    db.drop_table(active_table(db, corpus), ignore_missing=True)
    return dropped


def cache_tables(project: Project, db) -> list[TableInfo]:
    """The embedding caches in ``db``: ``cache`` for a model the project declares, ``unused`` for
    one it does not (no table that queries may use reads it)."""
    declared = {cache_name(m.name): m.name for m in project.embedding_models}
    return [TableInfo(None, name, "cache" if name in declared else "unused",
                      declared.get(name, name[len(CACHE_PREFIX):]), None, table.count_rows(), None,
                      damaged=not reads_through(table))
            for name, table in sorted(open_tables(db, CACHE_PREFIX).items())]


def drop_unused_caches(db, caches: list[TableInfo]) -> list[TableInfo]:
    """Drop those of ``caches`` (as ``cache_tables`` listed them) whose model the project no longer
    declares; returns them."""
    dropped = [t for t in caches if t.role == "unused"]
    for table in dropped:
        db.drop_table(table.table, ignore_missing=True)
    return dropped
