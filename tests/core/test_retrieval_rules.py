"""Pure retrieval rules: the relative score margin, rank fusion, and what the profile fingerprint covers."""

from dataclasses import replace

from hypothesis import given, strategies as st

from rag_assets.core.chunking import ChunkingProfile
from rag_assets.core.retrieval import RRF_K, Hit, merge_overlapping, rrf, within_margin


def hit(i: int, score: float) -> Hit:
    return Hit(id=f"h{i}", doc_id="d", text="t", source="s", title="", heading_path="", page=None, start=i, end=i + 1,
               chunk_index=i, score=score)


@given(st.lists(st.floats(-1, 1, allow_nan=False), min_size=1, max_size=30), st.floats(0.01, 2))
def test_margin_keeps_exactly_the_hits_close_to_the_best_in_rank_order(scores, margin):
    hits = [hit(i, s) for i, s in enumerate(scores)]
    kept = within_margin(hits, margin)
    best = max(scores)
    assert [h.id for h in kept] == [h.id for h in hits if h.score >= best - margin]
    assert any(h.score == best for h in kept)
    assert within_margin(hits, None) == hits


@given(st.permutations(range(8)), st.permutations(range(8)), st.integers(3, 8), st.integers(3, 8),
       st.permutations(range(8)))
def test_fusion_orders_by_summed_reciprocal_rank_and_ties_by_first_appearance(ids_a, ids_b, len_a, len_b, names):
    """Row ids never decide a tie: renaming every id (as a profile rename does) keeps the order."""
    a, b = [hit(i, 0.0) for i in ids_a[:len_a]], [hit(i, 0.0) for i in ids_b[:len_b]]
    fused = rrf([a, b], 16)
    score = {h.id: sum(1 / (RRF_K + r) for r, x in [*enumerate(a, 1), *enumerate(b, 1)] if x.id == h.id)
             for h in fused}
    appearance = [h.id for h in a] + [h.id for h in b if h.id not in {x.id for x in a}]
    assert [h.id for h in fused] == sorted(appearance, key=lambda i: -score[i])
    assert [h.score for h in fused] == [round(score[h.id], 6) for h in fused]
    renamed = rrf([[replace(h, id=f"r{names[h.start]}") for h in ranking] for ranking in (a, b)], 16)
    assert [h.start for h in renamed] == [h.start for h in fused]


def test_query_settings_do_not_change_the_chunk_fingerprint():
    base = ChunkingProfile("p", strategy="sentence_window", group_gap=3)
    assert replace(base, score_margin=0.2, group_gap=6, group_candidates=50, group_context=3,
                   lone_hit_context=0, group_margin=0.1, min_result_chars=300,
                   section_chars=4000, paragraph_chars=2000, late_interaction_weight=2.0).fingerprint() \
        == base.fingerprint()
    assert replace(base, window=3).fingerprint() != base.fingerprint()
    assert replace(base, max_tokens=100).fingerprint() != base.fingerprint()


def test_profile_fingerprints_stay_put_across_refactors():
    """A fingerprint change re-chunks and re-embeds every corpus on the profile: these are the
    shipped default and fixed_200_0 settings, pinned (bump CHUNKER_REVISION, or the strategy's
    STRATEGY_REVISIONS entry, when chunks change)."""
    default = ChunkingProfile("default", strategy="auto", max_tokens=256, overlap=32, min_tokens=50)
    fixed = ChunkingProfile("fixed_200_0", strategy="fixed", max_tokens=200, contextual_header=False,
                            size_tokenizer="cl100k_base")
    assert (default.fingerprint(), fixed.fingerprint()) == ("45e259f6be56", "ad44177c0753")



def test_a_strategy_revision_redoes_only_the_profiles_that_can_use_that_strategy(monkeypatch):
    from rag_assets.core.chunking import profile as profile_module

    profiles = (ChunkingProfile("w", strategy="sentence_window"),
                ChunkingProfile("m", strategy="recursive", content_types=(("text", "sentence_window"),)),
                ChunkingProfile("r", strategy="recursive"))
    before = [p.fingerprint() for p in profiles]
    monkeypatch.setitem(profile_module.STRATEGY_REVISIONS, "sentence_window", "next")
    after = [p.fingerprint() for p in profiles]
    assert after[0] != before[0] and after[1] != before[1] and after[2] == before[2]

TEXT = "Alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau."


@given(st.lists(st.tuples(st.integers(0, len(TEXT) - 1), st.integers(1, 30), st.sampled_from(["d", "e"])),
                min_size=1, max_size=12))
def test_merged_results_never_overlap_and_keep_every_hits_text(spans):
    """Hits of one document that overlap or touch become one result, however the hits arrive
    (a later hit bridging two earlier results joins all three); the text is the document's."""
    hits = [Hit(id=f"h{i}", doc_id=doc, text=TEXT[a:min(a + n, len(TEXT))], source="s", title="", heading_path="",
                page=None, start=a, end=min(a + n, len(TEXT)), chunk_index=i, score=1 - i / 100)
            for i, (a, n, doc) in enumerate(spans)]
    merged = merge_overlapping(hits)
    for r in merged:
        assert r.text == TEXT[r.start:r.end]
    for x in merged:
        for y in merged:
            if x is not y and x.doc_id == y.doc_id:
                assert x.end < y.start or y.end < x.start  # neither overlapping nor touching
    for h in hits:
        assert any(r.doc_id == h.doc_id and r.start <= h.start and h.end <= r.end for r in merged)
    # each result keeps the identity and rank of its best-ranked hit
    assert [r.id for r in merged] == sorted((r.id for r in merged), key=lambda i: int(i[1:]))
    assert all(r.score == max(h.score for h in hits if h.doc_id == r.doc_id and r.start <= h.start and h.end <= r.end)
               for r in merged)
