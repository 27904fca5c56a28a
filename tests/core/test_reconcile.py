"""Planning against what the index really holds, and a stage store that is never trusted blindly.

The pipeline's core stages run here without Dagster, over a real stage store and LanceDB on
disk, with a counting embedder: what a rebuild costs is measured, not assumed.
"""

import shutil

import lancedb
import pytest

from rag_assets.core.chunking import ChunkingProfile
from rag_assets.core.embed_cache import EmbeddingCache
from rag_assets.core.index import IndexUnreadable, LanceIndex
from rag_assets.core.embedding import InputTooLong
from rag_assets.core.pipeline import (chunk_stage, chunks_with, embed_stage, index_stage, mirror_stage, parse_stage,
                                      snapshot_raw)
from rag_assets.core.planning import plan_sweep
from rag_assets.core.sources import list_disk, read_disk
from rag_assets.core.store import StageStore
from rag_assets.core.tokens import get_token_counter

DIM = 8
PROFILE = ChunkingProfile(name="t", max_tokens=40, min_tokens=0, contextual_header=False)
COUNTER = get_token_counter("cl100k_base")


class CountingEmbedder:
    def __init__(self):
        self.texts = 0

    def __call__(self, texts):
        self.texts += len(texts)
        return [[float(len(t) % 7)] * (DIM - 1) + [1.0] for t in texts]


class Corpus:
    """A folder of documents, its stage store and its LanceDB, ingested with the core stages."""

    def __init__(self, tmp_path, documents: int = 6):
        self.docs, self.db_path = tmp_path / "docs", tmp_path / "lancedb"
        self.docs.mkdir()
        for i in range(documents):
            body = "\n\n".join(f"Paragraph {j} of note {i} says the depot {j * i} opens at {j} o'clock."
                               for j in range(6))
            (self.docs / f"note{i}.md").write_text(f"# Note {i}\n\n{body}\n")
        self.store = StageStore(tmp_path / "stages")
        self.embed = CountingEmbedder()

    def index(self) -> LanceIndex:
        return LanceIndex(lancedb.connect(self.db_path), "c", "m", DIM, "p")

    def plan(self, known=()):
        refs = list_disk(self.docs, ("**/*",), ())
        return plan_sweep(refs, lambda d: read_disk(self.docs, d), self.store, known or [r.doc_id for r in refs],
                          PROFILE.fingerprint(), "m", complete=self.index().complete_documents())

    def ingest(self) -> list[str]:
        """One sweep and the stages over its work; returns the documents worked on."""
        plan = self.plan()
        for raw in plan.snapshots:
            snapshot_raw(self.store, raw)
        db = lancedb.connect(self.db_path)
        for doc_id in plan.work:
            parse_stage(self.store, doc_id)
            chunk_stage(self.store, doc_id, PROFILE, COUNTER, 64)
        cache = EmbeddingCache(db, "m", DIM)
        embed_stage(self.store, plan.work, cache, self.embed, "m")
        index_stage(self.store, plan.work, self.index(), cache, None, "run", PROFILE.fingerprint(), "m")
        return plan.work

    def rows(self) -> dict[str, int]:
        return self.index().rows_per_document()


@pytest.fixture
def corpus(tmp_path):
    corpus = Corpus(tmp_path)
    assert len(corpus.ingest()) == 6
    return corpus


def test_an_ingested_corpus_plans_no_work(corpus):
    rows = corpus.rows()
    assert len(rows) == 6 and sum(rows.values()) > 6
    assert corpus.plan().work == []


def test_lost_lancedb_folder_is_rebuilt_from_stored_chunks_and_vectors_without_the_model(corpus):
    rows, embedded = corpus.rows(), corpus.embed.texts
    shutil.rmtree(corpus.db_path)  # the index and the embedding cache in it are gone
    assert sorted(corpus.ingest()) == sorted(rows)
    assert corpus.rows() == rows
    assert corpus.embed.texts == embedded  # nothing re-embedded: the vectors were in the stage store
    assert corpus.plan().work == []


def test_without_stored_vectors_a_lost_folder_re_embeds_every_chunk(corpus):
    """What the layout before stored vectors cost (the cache lived in the lost folder): every chunk."""
    rows, embedded = corpus.rows(), corpus.embed.texts
    shutil.rmtree(corpus.db_path)
    shutil.rmtree(corpus.store.blobs.root / "vectors")
    corpus.ingest()
    assert corpus.rows() == rows
    assert corpus.embed.texts - embedded == sum(rows.values())


def test_documents_with_missing_or_partial_rows_are_redone_and_only_they(corpus):
    table = corpus.index().table()
    table.delete("doc_id = 'note1.md'")
    victim = table.search().where("doc_id = 'note4.md'").select(["id"]).limit(1).to_list()[0]["id"]
    table.delete(f"id = '{victim}'")
    rows_before_damage = corpus.rows()
    assert corpus.plan().work == ["note1.md", "note4.md"]
    corpus.ingest()
    assert corpus.rows()["note1.md"] > 0 and corpus.rows()["note4.md"] == rows_before_damage["note4.md"] + 1
    assert corpus.plan().work == []


def test_failed_document_is_not_retried_because_it_has_no_rows(corpus):
    (corpus.docs / "broken.md").write_bytes(b"\x00\x01\xff" * 200)
    assert corpus.ingest() == ["broken.md"]
    assert "broken.md" not in corpus.rows()
    assert corpus.plan().work == []


def test_damaged_stage_store_entries_are_recomputed_never_trusted(corpus):
    store = corpus.store
    chunks_key = store.current("chunks", "note2.md")["key"]
    parsed_key = store.current("parsed", "note3.md")["key"]
    folder = store.blobs.root
    (folder / store._artifact("chunks", chunks_key)).write_bytes(b"\x80\x05truncated")
    (folder / store._artifact("parsed", parsed_key)).write_bytes(b"")
    (folder / store._pointer("index", "note5.md")).write_text('{"doc_id": "note5.md", "key": ')  # cut off mid-write
    (folder / store._artifact("raw", store.current("raw", "note0.md")["key"])).unlink()
    corpus.index().table().delete("doc_id IN ('note2.md', 'note3.md')")  # both need work again
    assert sorted(corpus.plan().work) == ["note0.md", "note2.md", "note3.md", "note5.md"]
    rows = dict(corpus.rows())
    embedded = corpus.embed.texts
    corpus.ingest()
    assert len(corpus.rows()) == 6 and corpus.rows()["note5.md"] == rows["note5.md"]
    assert store.load("chunks", chunks_key) is not None and store.load("parsed", parsed_key) is not None
    assert store.has("raw", store.current("raw", "note0.md")["key"])
    assert corpus.embed.texts == embedded  # same chunks, so their vectors were still stored
    assert corpus.plan().work == []


def test_unreadable_table_is_a_clear_error_naming_the_path_and_the_fix(corpus):
    table_dir = corpus.db_path / "c__m__p.lance"
    for data_file in (table_dir / "data").iterdir():
        data_file.write_bytes(b"not lance")
    with pytest.raises(IndexUnreadable) as info:
        corpus.plan()
    assert f"move {corpus.db_path}/c__m__p.lance aside" in str(info.value)


def test_mirror_keeps_another_tables_rows_current_and_never_truncates(corpus):
    """The table queries stay on during a switch gets each document chunked with its own profile and
    embedded by its own model; a document that model refuses keeps its last good rows there."""
    db = lancedb.connect(corpus.db_path)
    serving, cache = LanceIndex(db, "c", "old", DIM, "small"), EmbeddingCache(db, "old", DIM)
    small = ChunkingProfile(name="small", max_tokens=16, min_tokens=0, contextual_header=False)

    def chunks(doc_id):
        return chunks_with(corpus.store, doc_id, small, COUNTER, 64)

    docs = sorted(corpus.rows())
    assert set(mirror_stage(docs, chunks, serving, cache, CountingEmbedder(), None, "r1", "old").values()) \
        == {"written"}
    old_rows = serving.rows_per_document()
    assert old_rows.keys() == corpus.rows().keys()
    assert all(old_rows[d] > corpus.rows()[d] for d in docs)  # its own, smaller chunks
    assert {r["chunk_profile"] for r in serving.table().to_arrow().to_pylist()} == {"small"}

    (corpus.docs / "note1.md").write_text("# Note 1\n\n" + "\n\n".join(f"New paragraph {j}." for j in range(9)))
    (corpus.docs / "note3.md").write_text("# Note 3\n\nREFUSED by the old model.\n")
    (corpus.docs / "note5.md").write_bytes(b"\x00\x01\xff" * 200)  # no longer parses
    assert sorted(corpus.ingest()) == ["note1.md", "note3.md", "note5.md"]
    sent = []

    def refusing(texts):
        if any("REFUSED" in t for t in texts):
            raise InputTooLong("old: input of 300 tokens exceeds the limit of 256")
        sent.extend(texts)
        return CountingEmbedder()(texts)

    outcome = mirror_stage(docs, chunks, serving, cache, refusing, None, "r2", "old")
    assert outcome["note3.md"].startswith("kept: ") and "exceeds the limit" in outcome["note3.md"]
    assert outcome["note5.md"].startswith("kept: ") and "note5.md" in outcome["note5.md"]
    assert {d: o for d, o in outcome.items() if d not in ("note3.md", "note5.md")} \
        == {d: "written" for d in docs if d not in ("note3.md", "note5.md")}
    rows = serving.rows_per_document()
    assert rows["note1.md"] == len(chunks("note1.md").chunks) != old_rows["note1.md"]
    assert rows["note3.md"] == old_rows["note3.md"] and rows["note5.md"] == old_rows["note5.md"]  # last good rows
    assert sent and all("New paragraph" in t for t in sent)  # unchanged chunks came from the cache


def test_rows_name_the_source_version_read_even_when_its_text_was_parsed_before(corpus):
    """Bytes that come back (an edit undone, a fixed file restored) reuse their earlier parse, which
    named the first read's mtime: the rows' source_version was that version, not the one read."""
    import os

    note = corpus.docs / "note0.md"
    original = note.read_bytes()

    def versions():
        rows = corpus.index().table().search().where("doc_id = 'note0.md'").select(["source_version"]).to_list()
        return {r["source_version"] for r in rows}

    first = versions()
    note.write_bytes(original + b"\nA line added.\n")
    os.utime(note, ns=(1_800_000_000_000_000_000, 1_800_000_000_000_000_000))
    assert corpus.ingest() == ["note0.md"]
    note.write_bytes(original)  # undone: the first version's bytes, read at a later mtime
    os.utime(note, ns=(1_900_000_000_000_000_000, 1_900_000_000_000_000_000))
    assert corpus.ingest() == ["note0.md"]
    assert versions() == {"mtime:1900000000000000000"} != first
