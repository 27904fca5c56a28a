"""A table another process creates again under a writer (lance lands the later create as an
Overwrite) costs the writer a retry, not its rows."""

import lancedb

from rag_assets.core.index import LanceIndex, chunk_schema

from tests.core.test_index_restore import DIM, embedded


def test_an_upsert_that_meets_a_concurrent_create_is_retried_on_the_reopened_table(tmp_path, monkeypatch):
    index = LanceIndex(lancedb.connect(tmp_path / "db"), "sample", "m", DIM, "p")
    stale = index.table()  # this writer's handle, opened before the other create commits
    lancedb.connect(tmp_path / "db").create_table(index.name, schema=chunk_schema(DIM), mode="overwrite")
    opened = []
    reopen = LanceIndex.table

    def table(self):
        opened.append(self.name)
        return stale if len(opened) == 1 else reopen(self)

    monkeypatch.setattr(LanceIndex, "table", table)
    index.write_documents([embedded("a.md", 2), embedded("b.md", 1)], None, "run")
    assert len(opened) >= 2  # the upsert on the stale handle failed and was redone
    assert index.count_rows() == 3
    assert {d: e["chunks"] for d, e in index.indexed_documents().items()} == {"a.md": 2, "b.md": 1}


def test_search_indexes_include_a_btree_on_doc_id_built_once_and_reads_stay_exact(tmp_path):
    index = LanceIndex(lancedb.connect(tmp_path / "db"), "sample", "m", DIM, "p")
    assert index.ensure_search_indexes(ann_min_rows=10**9) == []  # nothing to index yet
    index.write_documents([embedded("a.md", 2), embedded("b.md", 3)], None, "run")
    assert index.ensure_search_indexes(ann_min_rows=10**9) == ["fts:text", "btree:doc_id"]
    kinds = {tuple(i.columns): i.index_type for i in index.table().list_indices()}
    assert kinds[("doc_id",)] == "BTree"
    assert index.ensure_search_indexes(ann_min_rows=10**9) == []
    # Rows written after the index (not yet in it) are still found by a doc_id filter.
    index.write_documents([embedded("c.md", 4)], None, "run")
    found = index.table().search().where("doc_id = 'c.md'").select(["chunk_index"]).limit(None).to_list()
    assert sorted(r["chunk_index"] for r in found) == [0, 1, 2, 3]


def test_a_pinned_index_reads_the_table_version_it_was_pinned_at(tmp_path):
    from rag_assets.core.retrieval import vector_search

    index = LanceIndex(lancedb.connect(tmp_path / "db"), "sample", "m", DIM, "p")
    index.write_documents([embedded("a.md", 2)], None, "run1")
    pinned = index.pinned()  # what one search reads through
    index.write_documents([embedded("b.md", 3)], None, "run2")  # an ingest landing meanwhile
    assert (index.count_rows(), pinned.count_rows()) == (5, 2)
    assert {h.doc_id for h in vector_search(pinned, [0.1] * DIM, k=10)} == {"a.md"}
    assert {h.doc_id for h in vector_search(index.pinned(), [0.1] * DIM, k=10)} == {"a.md", "b.md"}
