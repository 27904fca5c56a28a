"""A chunker that fails on one document fails that document alone, with its name and cause."""

import pytest

from rag_assets.core.chunking import ChunkingProfile
from rag_assets.core.chunking.text import RecursiveChunker
from rag_assets.core.hashing import content_hash
from rag_assets.core.models import RawDocument
from rag_assets.core.parsing import DocumentError
from rag_assets.core.pipeline import chunk_stage, chunks_with, parse_stage, snapshot_raw
from rag_assets.core.store import StageStore
from rag_assets.core.tokens import get_token_counter

PROFILE = ChunkingProfile(name="t", strategy="recursive", max_tokens=64, contextual_header=False)
COUNTER = get_token_counter("cl100k_base")


@pytest.fixture
def store(tmp_path, monkeypatch):
    store = StageStore(tmp_path)
    for doc_id, text in (("good.md", "# Good\n\nFine text.\n"), ("bad.md", "# Bad\n\nboom\n"),
                         ("stop.md", "# Stop\n\ninterrupt\n")):
        data = text.encode()
        snapshot_raw(store, RawDocument(doc_id, f"file:///{doc_id}", content_hash(data), len(data), "v1", data))
        parse_stage(store, doc_id)
    original = RecursiveChunker.chunk

    def buggy(self, text, elements=()):
        if "boom" in text:
            return {}["missing"]
        if "interrupt" in text:
            raise KeyboardInterrupt
        return original(self, text, elements)

    monkeypatch.setattr(RecursiveChunker, "chunk", buggy)
    return store


def test_a_chunker_bug_fails_that_document_alone_naming_it_and_the_cause(store):
    assert chunk_stage(store, "good.md", PROFILE, COUNTER, 64).status == "computed"
    bad = chunk_stage(store, "bad.md", PROFILE, COUNTER, 64)
    assert bad.status == "failed"
    assert bad.error.startswith("bad.md: cannot chunk with profile 't': KeyError: 'missing' (at test_chunk_failures.py:")
    assert "in buggy)" in bad.error and store.current("chunks", "bad.md")["error"] == bad.error
    with pytest.raises(DocumentError, match="bad.md: cannot chunk"):  # what mirror_stage keeps rows for
        chunks_with(store, "bad.md", PROFILE, COUNTER, 64)


def test_an_interrupt_while_chunking_is_never_taken_for_a_document_failure(store):
    with pytest.raises(KeyboardInterrupt):
        chunk_stage(store, "stop.md", PROFILE, COUNTER, 64)
