"""Embedding cache in LanceDB, keyed by (hash of the embedded text, model): a chunk whose
embedded text did not change is never sent to the model again."""

from __future__ import annotations

from typing import Callable, Sequence

import pyarrow as pa

from rag_assets.core.index import sql_ids
from rag_assets.core.keys import safe_name


CACHE_PREFIX = "embcache__"


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

    def embed_missing(self, texts: dict[str, str], cached: dict[str, Sequence[float]],
                      embed: Callable) -> dict[str, Sequence[float]]:
        """Embed the ``texts`` (key -> text) whose key ``cached`` lacks, in one ``embed`` call and in
        the order given, store them, and return their vectors by key (empty when none was missing)."""
        missing = [k for k in texts if k not in cached]
        if not missing:
            return {}
        new = dict(zip(missing, embed([texts[k] for k in missing])))
        self.put_many(new)
        return new

    def put_many(self, vectors: dict[str, Sequence[float]]) -> None:
        if not vectors:
            return
        data = pa.Table.from_pylist([{"key": k, "vector": list(v)} for k, v in vectors.items()], schema=self.schema)
        self._table().merge_insert("key").when_not_matched_insert_all().execute(data)
