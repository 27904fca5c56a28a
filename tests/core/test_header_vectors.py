"""A profile's ``header_weight``: the contextual header is embedded apart, once per distinct
header, and each row's vector is the unit-length mix (1 - w) x text + w x header. The chunks
themselves (spans, and header plus text within the limit) are those of the header prepended."""

import lancedb
import pytest
import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from rag_assets.core.chunking import ChunkingProfile, chunk_document
from rag_assets.core.embed_cache import EmbeddingCache
from rag_assets.core.embedding import chunk_inputs, chunk_vectors
from rag_assets.core.hashing import content_hash, text_hash
from rag_assets.core.index import LanceIndex
from rag_assets.core.models import RawDocument
from rag_assets.core.parsing import parse_document
from rag_assets.core.pipeline import chunk_stage, embed_stage, index_stage, parse_stage, snapshot_raw
from rag_assets.core.store import StageStore
from rag_assets.core.tokens import MINILM_TOKENIZER, get_token_counter

COUNTER = get_token_counter(MINILM_TOKENIZER)
PREPENDED = ChunkingProfile("w", strategy="sentence_window", max_tokens=80, window=0, embed_window=1, min_tokens=0)
APART = ChunkingProfile("w", strategy="sentence_window", max_tokens=80, window=0, embed_window=1, min_tokens=0,
                        header_weight=0.2)
DIM = 6


def markdown(sections: list[tuple[str, list[str]]]) -> bytes:
    return "\n\n".join(f"# {title}\n\n" + " ".join(sentences) for title, sentences in sections).encode()


def parse(data: bytes, name: str = "manual.md"):
    return parse_document(RawDocument(name, f"file:///{name}", content_hash(data), len(data), "v", data))


words = st.text(alphabet="abcdefghij klmnop", min_size=1, max_size=60).map(lambda s: s.strip() or "x")
sections = st.lists(st.tuples(words, st.lists(words.map(lambda s: s.capitalize() + "."), min_size=1, max_size=6)),
                    min_size=1, max_size=4)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sections)
def test_a_header_apart_keeps_the_chunks_and_moves_only_the_header(doc_sections):
    doc = parse(markdown(doc_sections))
    prepended = chunk_document(doc, PREPENDED, COUNTER, model_limit=256).chunks
    apart = chunk_document(doc, APART, COUNTER, model_limit=256)
    assert apart.header_weight == 0.2
    assert [(c.start, c.end) for c in apart.chunks] == [(c.start, c.end) for c in prepended]
    for a, p in zip(apart.chunks, prepended):
        assert a.header.startswith("Document: ") and not p.header
        assert a.header + "\n\n" + a.embed_text == p.embed_text  # nothing else differs
        assert COUNTER.count(a.embed_text) == a.tokens
        assert COUNTER.count(a.header + "\n\n" + a.embed_text) <= 80  # together within the row limit
    assert APART.fingerprint() != PREPENDED.fingerprint()


def test_each_row_vector_is_the_unit_mix_of_its_text_and_its_header():
    doc = parse(markdown([("Remote", ["Press the power key.", "Hold it."]),
                          ("Sound", ["Press the power key."])]))
    chunked = chunk_document(doc, APART, COUNTER, model_limit=256)
    inputs = chunk_inputs(chunked)
    headers = {c.header for c in chunked.chunks}
    assert len(headers) == 2 and headers <= set(inputs) and len(inputs) == len(set(inputs))
    rng = np.random.default_rng(7)
    vector_of = {t: rng.normal(size=DIM).tolist() for t in inputs}
    mixed = np.asarray(chunk_vectors(chunked, vector_of))
    for chunk, row in zip(chunked.chunks, mixed):
        body, head = (np.asarray(vector_of[t]) / np.linalg.norm(vector_of[t]) for t in (chunk.embed_text, chunk.header))
        expected = 0.8 * body + 0.2 * head
        assert np.allclose(row, expected / np.linalg.norm(expected))
    # The same sentence under two sections: one text embedding, two different row vectors.
    same = [i for i, c in enumerate(chunked.chunks) if c.text == "Press the power key."]
    assert len(same) == 2 and not np.allclose(mixed[same[0]], mixed[same[1]])
    prepended = chunk_document(doc, PREPENDED, COUNTER, model_limit=256)
    assert chunk_inputs(prepended) == list(dict.fromkeys(c.embed_text for c in prepended.chunks))
    assert chunk_vectors(prepended, {t: [1.0] * DIM for t in chunk_inputs(prepended)}) == \
        [[1.0] * DIM for _ in prepended.chunks]


def fake_embed(texts: list[str]) -> list[list[float]]:
    return [[float(len(t) % 5 + 1), float(t.count("e") + 1), 1.0, 0.5, float(len(t)), 2.0] for t in texts]


def ingest_manual(tmp_path, data: bytes, profile: ChunkingProfile) -> tuple[list[str], list[dict]]:
    """Ingest ``data`` as manual.md through the pipeline stages with ``fake_embed``: the texts
    embedded, in order, and the index rows (chunk_index, vector, embed_text_hash) by chunk."""
    seen: list[str] = []

    def embed(texts):
        seen.extend(texts)
        return fake_embed(texts)

    store = StageStore(tmp_path / "stages")
    snapshot_raw(store, RawDocument("manual.md", "file:///manual.md", content_hash(data), len(data), "v", data))
    parse_stage(store, "manual.md")
    chunk_stage(store, "manual.md", profile, COUNTER, 256)
    db = lancedb.connect(tmp_path / "db")
    cache = EmbeddingCache(db, "m", DIM)
    embed_stage(store, ["manual.md"], cache, embed, "m")
    index = LanceIndex(db, "c", "m", DIM, "w")
    index_stage(store, ["manual.md"], index, cache, None, "run", profile.fingerprint(), "m")
    rows = index.table().search().select(["chunk_index", "vector", "embed_text_hash"]).limit(None).to_list()
    return seen, sorted(rows, key=lambda r: r["chunk_index"])


def test_ingest_embeds_each_distinct_header_once_and_indexes_the_mixed_vectors(tmp_path):
    data = markdown([("Remote", ["Press the power key.", "Hold it for two seconds.", "The light blinks."]),
                     ("Sound", ["Open the sound menu.", "Pick a mode."])])
    seen, rows = ingest_manual(tmp_path, data, APART)
    chunked = chunk_document(parse(data), APART, COUNTER, model_limit=256)
    assert sorted(seen) == sorted(chunk_inputs(chunked))  # 5 texts and 2 headers, each embedded once
    assert sum(t.startswith("Document: ") for t in seen) == 2
    expected = chunk_vectors(chunked, dict(zip(seen, fake_embed(seen))))
    assert np.allclose([r["vector"] for r in rows], expected, atol=1e-6)


def test_a_document_the_model_refuses_fails_alone_and_the_batch_is_embedded(tmp_path):
    """One document's text over the model's limit stopped the embedding of every document in its batch."""
    from rag_assets.core.embedding import InputTooLong

    def embed(texts):
        if any("refused" in t for t in texts):
            raise InputTooLong("m: input of 300 tokens exceeds the limit of 256 (starts 'refused')")
        return fake_embed(texts)

    store = StageStore(tmp_path / "stages")
    docs = {"good.md": b"# Good\n\nPress the power key.", "bad.md": b"# Bad\n\nThis text is refused.",
            "also.md": b"# Also\n\nHold it for two seconds."}
    for name, data in docs.items():
        snapshot_raw(store, RawDocument(name, f"file:///{name}", content_hash(data), len(data), "v", data))
        parse_stage(store, name)
        chunk_stage(store, name, PREPENDED, COUNTER, 256)
    cache = EmbeddingCache(lancedb.connect(tmp_path / "db"), "m", DIM)
    results, totals = embed_stage(store, list(docs), cache, embed, "m")
    outcome = {r.doc_id: (r.status, r.error) for r in results}
    assert outcome["good.md"][0] == outcome["also.md"][0] == "computed"
    assert outcome["bad.md"] == ("failed", "m: input of 300 tokens exceeds the limit of 256 (starts 'refused')")
    assert store.current("embeddings", "bad.md")["error"].startswith("m: input of 300")
    assert totals.embedded == len({t for d in ("good.md", "also.md")
                                   for t in chunk_inputs(store.load("chunks", store.current("chunks", d)["key"]))})


def test_an_embedding_pass_stopped_midway_keeps_the_slices_it_embedded(tmp_path, monkeypatch):
    """A 30,000-chunk file lost 14 minutes of vectors to one interrupt: the cache was written only
    after the batch's one embed call."""
    from rag_assets.core import embed_cache

    monkeypatch.setattr(embed_cache, "SLICE", 4)
    store = StageStore(tmp_path / "stages")
    data = markdown([("Remote", [f"Press key number {i} to change the channel." for i in range(10)])])
    snapshot_raw(store, RawDocument("manual.md", "file:///manual.md", content_hash(data), len(data), "v", data))
    parse_stage(store, "manual.md")
    chunk_stage(store, "manual.md", APART, COUNTER, 256)
    texts = chunk_inputs(store.load("chunks", store.current("chunks", "manual.md")["key"]))
    assert len(texts) > 8
    calls, seen, steps = [], [], []

    def interrupted(batch):
        calls.append(len(batch))
        if len(calls) == 3:
            raise KeyboardInterrupt
        seen.extend(batch)
        return fake_embed(batch)

    cache = EmbeddingCache(lancedb.connect(tmp_path / "db"), "m", DIM)
    with pytest.raises(KeyboardInterrupt):
        embed_stage(store, ["manual.md"], cache, interrupted, "m")
    assert calls[:2] == [4, 4] and len(cache.get_many([text_hash(t) for t in texts])) == 8
    again = []
    results, totals = embed_stage(store, ["manual.md"], cache, lambda b: again.extend(b) or fake_embed(b), "m",
                                  progress=lambda done, total: steps.append((done, total)))
    assert results[0].status == "computed" and totals.embedded == len(texts) - 8
    assert sorted(again) == sorted(set(texts) - set(seen))  # only what the interrupt left
    n = len(again)
    assert steps == ([(min(i + 4, n), n) for i in range(0, n, 4)] if n > 4 else [])
