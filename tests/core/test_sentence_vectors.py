"""A profile's ``sentence_weight``: each sentence window's row vector also mixes in the sentence's
own embedding, (1 - s - w) x window + s x sentence + w x header. The chunks themselves (spans,
embedded windows, headers, token counts) are those of the profile without it."""

import numpy as np
from hypothesis import HealthCheck, given, settings

from rag_assets.core.chunking import ChunkingProfile, chunk_document
from rag_assets.core.embedding import chunk_inputs, chunk_vectors
from tests.core.test_header_vectors import APART, COUNTER, DIM, fake_embed, ingest_manual, markdown, parse, sections

MIXED = ChunkingProfile("w", strategy="sentence_window", max_tokens=80, window=0, embed_window=1, min_tokens=0,
                        header_weight=0.2, sentence_weight=0.3)
ALONE = ChunkingProfile("w", strategy="sentence_window", max_tokens=80, window=0, embed_window=0, min_tokens=0,
                        header_weight=0.2)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sections)
def test_a_sentence_mixed_in_keeps_the_chunks_and_adds_the_sentence_as_embedded_alone(doc_sections):
    doc = parse(markdown(doc_sections))
    windows = chunk_document(doc, APART, COUNTER, model_limit=256).chunks
    mixed = chunk_document(doc, MIXED, COUNTER, model_limit=256)
    alone = chunk_document(doc, ALONE, COUNTER, model_limit=256).chunks
    assert mixed.sentence_weight == 0.3
    assert [(c.start, c.end, c.embed_text, c.header, c.tokens) for c in mixed.chunks] == \
        [(c.start, c.end, c.embed_text, c.header, c.tokens) for c in windows]
    assert [c.sentence for c in mixed.chunks] == [c.embed_text for c in alone]  # what embed_window 0 embeds
    assert not any(c.sentence for c in windows)
    assert all(COUNTER.count(c.header + "\n\n" + c.sentence) <= 80 for c in mixed.chunks)  # the row limit
    assert len({MIXED.fingerprint(), APART.fingerprint(), ALONE.fingerprint()}) == 3


def test_each_row_vector_is_the_unit_mix_of_its_window_its_sentence_and_its_header():
    doc = parse(markdown([("Remote", ["Press the power key.", "Hold it.", "The light blinks."]),
                          ("Sound", ["Press the power key."])]))
    chunked = chunk_document(doc, MIXED, COUNTER, model_limit=256)
    inputs = chunk_inputs(chunked)
    assert len(inputs) == len(set(inputs)) and {c.sentence for c in chunked.chunks} <= set(inputs)
    rng = np.random.default_rng(11)
    vector_of = {t: rng.normal(size=DIM).tolist() for t in inputs}
    unit = {t: np.asarray(v) / np.linalg.norm(v) for t, v in vector_of.items()}
    rows = np.asarray(chunk_vectors(chunked, vector_of))
    for chunk, row in zip(chunked.chunks, rows):
        expected = 0.5 * unit[chunk.embed_text] + 0.3 * unit[chunk.sentence] + 0.2 * unit[chunk.header]
        assert np.allclose(row, expected / np.linalg.norm(expected))
    without = chunk_document(doc, APART, COUNTER, model_limit=256)
    assert not np.allclose(rows, chunk_vectors(without, vector_of))


def test_ingest_embeds_each_sentence_and_indexes_the_mixed_vectors(tmp_path):
    data = markdown([("Remote", ["Press the power key.", "Hold it for two seconds.", "The light blinks."])])
    seen, rows = ingest_manual(tmp_path, data, MIXED)
    chunked = chunk_document(parse(data), MIXED, COUNTER, model_limit=256)
    assert sorted(seen) == sorted(chunk_inputs(chunked))
    assert {c.sentence for c in chunked.chunks} <= set(seen)
    assert np.allclose([r["vector"] for r in rows], chunk_vectors(chunked, dict(zip(seen, fake_embed(seen)))),
                       atol=1e-6)
    assert len({r["embed_text_hash"] for r in rows}) == len(rows)
