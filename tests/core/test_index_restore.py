"""`rag restore`: a table version restored brings deleted rows and their manifest entries back."""

import lancedb
import pytest

from rag_assets.core.index import LanceIndex
from rag_assets.core.models import Chunk, ChunkedDocument, EmbeddedDocument

DIM = 4


def embedded(doc_id: str, chunks: int, dimensions: int = DIM) -> EmbeddedDocument:
    """A document of ``chunks`` one-sentence chunks with made-up vectors."""
    parts = tuple(Chunk(doc_id=doc_id, chunk_index=i, start=i * 20, end=i * 20 + 12, text=f"sentence {i:03d}",
                        embed_text=f"sentence {i:03d}", tokens=3, strategy="fixed", profile_hash="ph")
                  for i in range(chunks))
    doc = ChunkedDocument(doc_id=doc_id, uri=f"file:///{doc_id}", title=doc_id, content_hash="h" + doc_id,
                          source_version="v1", content_type="text", profile="p", profile_hash="ph", chunks=parts)
    return EmbeddedDocument(doc, "m", tuple((0.1,) * (dimensions - 1) + (float(i),) for i in range(chunks)))


def test_restore_brings_deleted_rows_and_manifest_entries_back(tmp_path):
    index = LanceIndex(lancedb.connect(tmp_path / "db"), "sample", "m", DIM, "p")
    index.write_documents([embedded("a.md", 2), embedded("b.md", 3), embedded("c.md", 1)], None, "run1")
    before = index.version()
    assert index.count_rows() == 6
    for doc_id in ("a.md", "b.md", "c.md"):  # what a sweep over an empty folder did
        index.delete_document(doc_id)
    assert index.count_rows() == 0 and not index.indexed_documents()
    versions = index.versions()
    assert [v.rows for v in versions if v.version == before] == [6] and versions[-1].rows == 0
    restored = index.restore(before)
    assert restored.version > before and restored.rows == 6
    assert index.count_rows() == 6
    assert {d: e["chunks"] for d, e in index.indexed_documents().items()} == {"a.md": 2, "b.md": 3, "c.md": 1}
    index.write_documents([embedded("d.md", 1)], None, "run2")  # the restored table takes writes again
    assert index.count_rows() == 7


def test_restore_to_a_version_that_does_not_exist_names_the_range(tmp_path):
    index = LanceIndex(lancedb.connect(tmp_path / "db"), "sample", "m", DIM, "p")
    index.write_documents([embedded("a.md", 1)], None, "run1")
    with pytest.raises(ValueError, match=r"has no version 99; it has versions 1 to \d+"):
        index.restore(99)
    missing = LanceIndex(lancedb.connect(tmp_path / "db"), "other", "m", DIM, "p")
    with pytest.raises(ValueError, match="no table other__m__p .* nothing to restore"):
        missing.restore(1)


def test_a_rewrite_replaces_a_documents_rows_in_one_commit_and_leaves_the_rest(tmp_path):
    index = LanceIndex(lancedb.connect(tmp_path / "db"), "sample", "m", DIM, "p")
    index.write_documents([embedded("a.md", 3), embedded("b.md", 2)], None, "run1")
    before = index.version()
    result = index.write_documents([embedded("a.md", 1)], None, "run2")
    assert index.version() == before + 1 == result["a.md"].table_version  # readers never see a half state
    assert (result["a.md"].rows_written, result["a.md"].rows_deleted) == (1, 2)
    rows = index.table().search().select(["doc_id", "chunk_index"]).limit(None).to_arrow().to_pylist()
    assert sorted((r["doc_id"], r["chunk_index"]) for r in rows) == [("a.md", 0), ("b.md", 0), ("b.md", 1)]
