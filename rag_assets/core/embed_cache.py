"""Embedding cache in LanceDB, keyed by (hash of the embedded text, model): a chunk whose
embedded text did not change is never sent to the model again."""

from __future__ import annotations

from typing import Callable, Sequence

import pyarrow as pa

from rag_assets.core.index import sql_ids
from rag_assets.core.keys import safe_name


CACHE_PREFIX = "embcache__"
SLICE = 1024  # texts embedded, then stored, at a time


def cache_name(model_name: str) -> str:
    """The cache table of ``model_name``: one per model in a LanceDB, shared by its corpora."""
    return CACHE_PREFIX + safe_name(model_name)


class EmbeddingCache:
    """Vectors of one model, by embedded-text hash."""

    def __init__(self, db, model_name: str, dimensions: int):
        self.db = db
        self.name = cache_name(model_name)
        self.schema = pa.schema([pa.field("key", pa.string(), nullable=False),
                                 pa.field("vector", pa.list_(pa.float32(), dimensions))])

    def _table(self):
        return self.db.create_table(self.name, schema=self.schema, exist_ok=True)

    def get_many(self, keys: Sequence[str]) -> dict[str, list[float]]:
        """Cached vectors for the keys that have one."""
        found: dict[str, list[float]] = {}
        unique = sorted(set(keys))
        table = self._table()
        for i in range(0, len(unique), 500):
            batch = unique[i : i + 500]
            rows = table.search().where(f"key IN {sql_ids(batch)}").select(["key", "vector"]).limit(len(batch)).to_list()
            found.update({row["key"]: row["vector"] for row in rows})
        return found

    def embed_missing(self, texts: dict[str, str], cached: dict[str, Sequence[float]], embed: Callable,
                      into: dict[str, Sequence[float]] | None = None,
                      progress: Callable[[int, int], None] | None = None) -> dict[str, Sequence[float]]:
        """Embed the ``texts`` (key -> text) whose key neither ``cached`` nor ``into`` holds, in the
        order given, ``SLICE`` texts an ``embed`` call, each slice stored as soon as it is embedded
        (a run stopped or failed midway keeps what it embedded: a 30,000-chunk file lost 14 minutes
        of vectors to one interrupt); returns ``into`` (a new dict if None) with their vectors by key
        added, so after an exception it holds the slices done. ``progress(done, total)`` follows
        each slice of a call of more than one."""
        into = {} if into is None else into
        missing = [k for k in texts if k not in cached and k not in into]
        for start in range(0, len(missing), SLICE):
            keys = missing[start : start + SLICE]
            new = dict(zip(keys, embed([texts[k] for k in keys])))
            self.put_many(new)
            into.update(new)
            if progress and len(missing) > SLICE:
                progress(start + len(keys), len(missing))
        return into

    def put_many(self, vectors: dict[str, Sequence[float]]) -> None:
        if not vectors:
            return
        data = pa.Table.from_pylist([{"key": k, "vector": list(v)} for k, v in vectors.items()], schema=self.schema)
        self._table().merge_insert("key").when_not_matched_insert_all().execute(data)
