"""Late-interaction reranking: MaxSim over the bundled MiniLM's contextual token vectors, mixed
with the search's own score (both standardised over the candidates)."""

import lancedb
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from rag_assets.clients import late_interaction_model
from rag_assets.core.index import LanceIndex
from rag_assets.core.models import Chunk, ChunkedDocument, EmbeddedDocument
from rag_assets.core.retrieval import (Grouping, Hit, LateInteraction, is_closed_question, late_interaction,
                                       rerank_late, results_within_margin, search)

from tests.core.test_grouping import QUERY, unit


def hit(i: int, score: float, text: str) -> Hit:
    return Hit(id=f"h{i}", doc_id="d", text=text, source="s", title="t", heading_path="", page=None,
               start=10 * i, end=10 * i + 5, chunk_index=i, score=score)


def test_late_interaction_is_the_mean_of_each_query_tokens_best_cosine():
    query = np.eye(3)[:2]  # two query tokens along axes 0 and 1
    text = np.asarray([[1.0, 0.0, 0.0], [0.6, 0.8, 0.0]])
    assert late_interaction(query, text) == pytest.approx((1.0 + 0.8) / 2)
    assert late_interaction(query, np.eye(3)[2:]) == pytest.approx(0.0)


@settings(max_examples=50, deadline=None)
@given(scores=st.lists(st.floats(0.0, 1.0), min_size=2, max_size=12), seed=st.integers(0, 2**16))
def test_rerank_orders_by_the_standardised_sum_and_keeps_the_hits(scores, seed):
    rng = np.random.default_rng(seed)
    tokens = {f"t{i}": rng.normal(size=(3, 4)) for i in range(len(scores))}
    tokens = {t: v / np.linalg.norm(v, axis=1, keepdims=True) for t, v in tokens.items()}
    query = rng.normal(size=(2, 4))
    query /= np.linalg.norm(query, axis=1, keepdims=True)
    lookup = {"q": query, **tokens}
    hits = [hit(i, s, f"t{i}") for i, s in enumerate(scores)]
    ranked, late = rerank_late(hits, "q", 2.0, lambda texts: [lookup[t] for t in texts])
    assert sorted(h.id for h in ranked) == sorted(h.id for h in hits) and ranked[0] in hits

    def z(x):
        x = np.asarray(x)
        return (x - x.mean()) / x.std() if x.std() > 1e-12 else np.zeros_like(x)
    matched = [late_interaction(query, tokens[h.text]) for h in hits]
    assert late == pytest.approx(dict(zip((h.id for h in hits), matched)))
    combined = dict(zip((h.id for h in hits), z(scores) + 2.0 * z(matched)))
    values = [combined[h.id] for h in ranked]
    assert values == sorted(values, reverse=True)
    for a, b in zip(ranked, ranked[1:]):  # ties keep the search's order
        if combined[a.id] == combined[b.id]:
            assert hits.index(a) < hits.index(b)


def test_a_heavy_weight_lets_the_word_match_win_and_one_hit_is_left_alone():
    lookup = {"q": np.eye(2)[:1], "close": np.eye(2)[:1], "far": np.eye(2)[1:]}
    tokens = lambda texts: [lookup[t] for t in texts]  # noqa: E731
    hits = [hit(0, 0.9, "far"), hit(1, 0.8, "close")]
    assert [h.id for h in rerank_late(hits, "q", 2.0, tokens)[0]] == ["h1", "h0"]
    assert [h.id for h in rerank_late(hits, "q", 1.0, tokens)[0]] == ["h0", "h1"]  # equal sums: search order
    assert rerank_late(hits[:1], "q", 2.0, tokens) == (hits[:1], {})


def test_the_margin_judges_each_result_by_its_best_candidate_and_keeps_the_first_and_kept_ones():
    late = {"h0": 0.2, "h1": 0.9, "h2": 0.5, "h3": 0.75}
    h = {i: hit(int(i[1]), 0.5, i) for i in late}
    results = [[h["h0"]], [h["h2"]], [h["h2"], h["h3"]], [h["h0"]]]  # ranked; the best candidate, h1, is in none
    assert results_within_margin(results, late, 0.2) == [True, False, True, False]
    assert results_within_margin(results, late, 0.2, keep=frozenset({"h0"})) == [True, False, True, True]
    assert results_within_margin(results, late, 0.5) == [True, True, True, False]
    assert results_within_margin(results, late, None) == results_within_margin(results, {}, 0.2) == [True] * 4


def test_minilm_token_vectors_are_contextual_unit_rows_of_the_word_pieces():
    model = late_interaction_model()
    a, b, c, empty = model.token_vectors(["The bank of the river.", "The bank raised interest rates.",
                                          "Photosynthesis in plants.", "..."])
    pieces = model.counter.tokenizer.encode("The bank of the river.", add_special_tokens=False).tokens
    assert a.shape == (sum(any(ch.isalnum() for ch in p) for p in pieces), 384)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(a[1], b[1])  # "bank" reads differently in each sentence
    assert late_interaction(a, a) == pytest.approx(1.0, abs=1e-5)
    assert late_interaction(a, b) > late_interaction(a, c)
    assert empty.shape == (1, 384) and not empty.any()


def test_a_text_over_the_model_limit_is_read_in_windows_not_refused_or_cut():
    model = late_interaction_model()
    words = " ".join(f"topic{i % 7} alpha beta" for i in range(200))  # far over 256 wordpieces
    pieces = model.counter.tokenizer.encode(words, add_special_tokens=False).tokens
    assert len(pieces) > 2 * model.max_input_tokens
    (long,) = model.token_vectors([words])
    assert long.shape == (sum(any(ch.isalnum() for ch in p) for p in pieces), 384)
    assert np.allclose(np.linalg.norm(long, axis=1), 1.0, atol=1e-5)
    # The first window reads exactly as the text's own start does.
    head = model.token_vectors([model.counter.tokenizer.decode(
        model.counter.tokenizer.encode(words, add_special_tokens=True).ids[1:model.max_input_tokens - 1])])[0]
    assert np.allclose(long[:len(head)], head, atol=1e-4)


def test_token_vectors_run_the_model_once_per_text_while_it_is_kept(monkeypatch):
    """A text asked again (in one call, or a later one) gets the vectors computed for it, read-only,
    without the model; the kept vectors stay within ``token_cache_bytes``, oldest use evicted."""
    from rag_assets.core.embedding import LocalMiniLMEmbedder

    model = LocalMiniLMEmbedder()
    fresh = LocalMiniLMEmbedder()
    read: list[str] = []
    original = LocalMiniLMEmbedder._token_vectors
    monkeypatch.setattr(LocalMiniLMEmbedder, "_token_vectors",
                        lambda self, texts: read.extend(texts) or original(self, texts))
    a, b, again = model.token_vectors(["The bank of the river.", "Interest rates rose.", "The bank of the river."])
    assert read == ["The bank of the river.", "Interest rates rose."] and again is a
    assert not a.flags.writeable
    read.clear()
    b2, c = model.token_vectors(["Interest rates rose.", "A third sentence."])
    assert read == ["A third sentence."] and b2 is b
    assert np.allclose(c, fresh.token_vectors(["A third sentence."])[0], atol=1e-5)

    model.token_cache_bytes = a.nbytes + c.nbytes  # room for two: "Interest rates rose." was used longest ago
    read.clear()
    model.token_vectors(["The bank of the river.", "A third sentence.", "Something new."])
    assert read == ["Something new."]
    assert model._token_cache_held <= model.token_cache_bytes
    read.clear()
    model.token_vectors(["Interest rates rose."])
    assert read == ["Interest rates rose."]


def test_search_reranks_its_candidates_before_grouping(tmp_path):
    # Sentence 0 scores best on the vector; sentence 9 matches the query word for word.
    sentences = [f"Filler sentence {i}." for i in range(10)]
    text, chunks, pos = "", [], 0
    for i, sentence in enumerate(sentences):
        chunks.append(Chunk("doc.md", i, pos, pos + len(sentence), sentence, sentence, 5,
                            window_start=pos, window_end=pos + len(sentence)))
        text += sentence + " "
        pos = len(text)
    doc = ChunkedDocument("doc.md", "file:///doc.md", "Doc", "h", "v", "text", "p", "ph", tuple(chunks))
    index = LanceIndex(lancedb.connect(str(tmp_path / "db")), "c", "m", 4, "p")
    cosines = [0.9, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.8]
    index.write_documents([EmbeddedDocument(doc, "m", tuple(unit(c) for c in cosines))], None, "run")

    def tokens(texts):
        return [np.eye(2)[:1] if t in ("query", "Filler sentence 9.") else np.eye(2)[1:] for t in texts]
    settings = dict(ks=(1,), mode="vector", candidates=10, grouping=Grouping(2, context=0))
    assert [h.chunk_index for h in search(index, "query", QUERY, **settings)[1]] == [0]
    reranked = search(index, "query", QUERY, late=LateInteraction(2.0, tokens), **settings)[1]
    assert [h.chunk_index for h in reranked] == [9] and reranked[0].score == pytest.approx(0.8, abs=1e-4)


def test_the_margin_keeps_a_passage_whole_when_its_best_sentence_matches(tmp_path):
    # Passages 0-1, 5-6 and 10 are the candidates (the score margin drops the filler). Sentence 1
    # matches the query best; in passage 5-6 only sentence 6 comes close, in passage 10 none does.
    sentences = [f"Sentence number {i}." for i in range(12)]
    chunks, pos = [], 0
    for i, sentence in enumerate(sentences):
        chunks.append(Chunk("doc.md", i, pos, pos + len(sentence), sentence, sentence, 5,
                            window_start=pos, window_end=pos + len(sentence)))
        pos += len(sentence) + 1
    doc = ChunkedDocument("doc.md", "file:///doc.md", "Doc", "h", "v", "text", "p", "ph", tuple(chunks))
    index = LanceIndex(lancedb.connect(str(tmp_path / "db")), "c", "m", 4, "p")
    cosines = {0: 0.9, 1: 0.85, 5: 0.8, 6: 0.75, 10: 0.7}
    index.write_documents([EmbeddedDocument(doc, "m", tuple(unit(cosines.get(i, 0.1)) for i in range(12)))],
                          None, "run")
    near = {"query": [1.0, 0.0], sentences[1]: [1.0, 0.0], sentences[6]: [0.95, np.sqrt(1 - 0.95**2)]}

    def tokens(texts):
        return [np.asarray([near.get(t, [0.0, 1.0])]) for t in texts]

    def spans(margin, query="query", closed=None):
        results = search(index, query, QUERY, ks=(5,), mode="vector", candidates=12, score_margin=0.3,
                         grouping=Grouping(2, context=0), late=LateInteraction(1.0, tokens, margin, closed))[5]
        return sorted((h.start, h.end) for h in results)

    passage = {first: (chunks[first].start, chunks[last].end) for first, last in [(0, 1), (5, 6), (10, 10)]}
    assert spans(None) == [passage[0], passage[5], passage[10]]
    assert spans(0.2) == [passage[0], passage[5]]  # sentence 5 stays with its passage
    assert spans(0.01) == [passage[0]]

    # A yes/no question keeps only the candidates near the best MaxSim: the sentences that state it.
    near["Does sentence one say so?"] = near["What does sentence one say?"] = [1.0, 0.0]
    sentence = {i: (chunks[i].start, chunks[i].end) for i in (1, 6)}
    assert spans(None, "Does sentence one say so?", closed=0.2) == [sentence[1], sentence[6]]
    assert spans(None, "Does sentence one say so?", closed=0.01) == [sentence[1]]
    assert spans(None, "What does sentence one say?", closed=0.01) == [passage[0], passage[5], passage[10]]


@pytest.mark.parametrize("text, closed", [
    ("Does AWS Lambda supports versioning?", True), ("Is Amazon SageMaker Studio available?", True),
    ("  can I stop a DB instance that has a read replica?", True), ("Will they allow me to opt out?", True),
    ("What is the latency of General Purpose SSD storage?", False), ("How do I do factory reset?", False),
    ("Isolation levels in RDS?", False), ("Receiving Party may share Confidential Information.", False),
])
def test_a_closed_question_opens_with_an_auxiliary_verb(text, closed):
    assert is_closed_question(text) is closed
