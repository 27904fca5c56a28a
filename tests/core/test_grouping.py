"""Sentence-window grouping at query time, on a real LanceDB table: the group margin drops weak
later results, the minimum result width widens narrow results by whole sentences, and a result of
several hits brings its short heading section."""

import lancedb
from lancedb.table import LanceTable
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from rag_assets.core.index import LanceIndex
from rag_assets.core.models import Chunk, ChunkedDocument, EmbeddedDocument
from rag_assets.core.retrieval import Grouping, group_sentences, search, vector_search

DIM = 4
QUERY = [1.0, 0.0, 0.0, 0.0]


def unit(cosine: float) -> tuple[float, ...]:
    """A unit vector whose cosine similarity to QUERY is ``cosine``."""
    return (cosine, float(np.sqrt(max(0.0, 1 - cosine * cosine))), 0.0, 0.0)


def build(tmp_path, sentences: list[str], cosines: list[float],
          sections: list[tuple[str, ...]] | None = None) -> tuple[LanceIndex, str]:
    text, chunks, pos = "", [], 0
    for i, sentence in enumerate(sentences):
        start = pos
        text += sentence + " "
        pos = len(text)
        chunks.append(Chunk("doc.md", i, start, start + len(sentence), sentence, sentence, 5,
                            heading_path=sections[i] if sections else (),
                            window_start=start, window_end=start + len(sentence)))
    doc = ChunkedDocument("doc.md", "file:///doc.md", "Doc", "h", "v", "text", "p", "ph", tuple(chunks))
    index = LanceIndex(lancedb.connect(str(tmp_path / "db")), "c", "m", DIM, "p")
    index.write_documents([EmbeddedDocument(doc, "m", tuple(unit(c) for c in cosines))], None, "run")
    return index, text


def grouped(index, hits, k: int, vector=None, **settings):
    """``group_sentences``' results for one number of results ``k`` (``settings``: a ``Grouping``'s)."""
    return group_sentences(index, hits, Grouping(**settings), ks=[k], vector=vector)[k]


def spans(hits):
    return [(h.start, h.end) for h in hits]


def test_group_margin_keeps_the_first_result_and_later_ones_close_to_the_best(tmp_path):
    # Sentences 0, 10 and 20 are three separate groups (gap 2) scoring 0.9, 0.8 and 0.6.
    cosines = [0.0] * 21
    cosines[0], cosines[10], cosines[20] = 0.9, 0.8, 0.6
    index, _ = build(tmp_path, [f"Sentence number {i} here." for i in range(21)], cosines)
    hits = vector_search(index, QUERY, k=3)
    every = grouped(index, hits, gap=2, k=5, context=0)
    assert [h.chunk_index for h in every] == [0, 10, 20]
    close = grouped(index, hits, gap=2, k=5, context=0, margin=0.15, vector=QUERY)
    assert [h.chunk_index for h in close] == [0, 10]
    assert spans(close) == spans(every[:2])
    # The first result always stays, whatever the margin; without the query vector nothing is cut.
    assert len(grouped(index, hits, gap=2, k=5, context=0, margin=0.01, vector=QUERY)) == 1
    assert len(grouped(index, hits, gap=2, k=5, context=0, margin=0.01)) == 3
    # Several result counts from one grouping: each is what asking for that count alone returns.
    many = group_sentences(index, hits, Grouping(2, context=0, margin=0.15), ks=[1, 2, 3], vector=QUERY)
    for k in (1, 2, 3):
        assert spans(many[k]) == spans(grouped(index, hits, gap=2, k=k, context=0, margin=0.15, vector=QUERY))
    assert [len(many[k]) for k in (1, 2, 3)] == [1, 2, 2]


def test_group_margin_compares_cosines_not_fused_scores(tmp_path):
    # Hybrid scores are reciprocal ranks: the margin still reads each group's cosine similarity.
    cosines = [0.0] * 21
    cosines[0], cosines[10], cosines[20] = 0.9, 0.8, 0.6
    words = ["alpha"] * 21
    words[10] = "zebra zebra zebra"
    index, _ = build(tmp_path, [f"{w} sentence {i}." for i, w in enumerate(words)], cosines)
    index.ensure_search_indexes(ann_min_rows=10**9)
    results = search(index, "zebra", QUERY, ks=(5,), mode="hybrid", candidates=3,
                     grouping=Grouping(2, context=0, margin=0.15))[5]
    # Fused ranks 10, 0, 20 (all three fused scores lie within 0.15 of each other); 20's cosine does not.
    assert [h.chunk_index for h in results] == [10, 0]
    assert all(h.mode == "hybrid" for h in results)


def test_hybrid_keeps_the_keyword_searchs_best_hit_whatever_its_cosine(tmp_path):
    # "zebra" is the keyword search's best match at sentence 20 (cosine 0.6, outside the margin):
    # hybrid keeps its result, vector search (no keyword evidence) drops it.
    cosines = [0.0] * 21
    cosines[0], cosines[10], cosines[20] = 0.9, 0.8, 0.6
    words = ["alpha"] * 21
    words[0], words[20] = "zebra", "zebra zebra zebra"
    index, _ = build(tmp_path, [f"{w} sentence {i}." for i, w in enumerate(words)], cosines)
    index.ensure_search_indexes(ann_min_rows=10**9)
    settings = dict(ks=(5,), candidates=3, grouping=Grouping(2, context=0, margin=0.15))
    hybrid = search(index, "zebra", QUERY, mode="hybrid", **settings)[5]
    assert [h.chunk_index for h in hybrid] == [0, 20, 10]
    assert [h.chunk_index for h in search(index, "zebra", QUERY, mode="vector", **settings)[5]] == [0, 10]


def test_narrow_results_widen_by_whole_sentences_after_then_before(tmp_path):
    sentences = ["Aa.", "Bb.", "Cc.", "Dd.", "Ee.", "Ff.", "Gg."]  # 3 characters + a space each
    cosines = [0.0] * 7
    cosines[3] = 0.9
    index, text = build(tmp_path, sentences, cosines)
    hits = vector_search(index, QUERY, k=1)
    alone = grouped(index, hits, gap=2, k=5, context=0)[0]
    assert text[alone.start:alone.end] == "Dd."
    after = grouped(index, hits, gap=2, k=5, context=0, min_chars=6)[0]
    assert text[after.start:after.end] == "Dd. Ee."  # one after first: 7 >= 6 stops
    wide = grouped(index, hits, gap=2, k=5, context=0, min_chars=9)[0]
    assert text[wide.start:wide.end] == "Cc. Dd. Ee."  # then one before
    wider = grouped(index, hits, gap=2, k=5, context=0, min_chars=12)[0]
    assert text[wider.start:wider.end] == "Cc. Dd. Ee. Ff."
    whole = grouped(index, hits, gap=2, k=5, context=0, min_chars=10_000)[0]
    assert (whole.start, whole.end) == (0, len(text) - 1)  # the document ends it
    assert whole.id == alone.id and whole.score == alone.score


def test_a_result_of_several_hits_brings_its_short_heading_section(tmp_path):
    sentences = ["Aa.", "Bb.", "Cc.", "Dd.", "Ee.", "Ff.", "Gg.", "Hh."]
    sections = [("A",)] * 2 + [("A", "B")] * 4 + [("C",)] * 2  # B is "Cc. Dd. Ee. Ff.": 15 characters
    cosines = [0.0, 0.0, 0.0, 0.9, 0.85, 0.0, 0.0, 0.0]
    index, text = build(tmp_path, sentences, cosines, sections)
    hits = vector_search(index, QUERY, k=2)

    def result(**settings):
        found = grouped(index, hits, gap=2, k=5, context=0, **settings)
        assert len(found) == 1
        return text[found[0].start:found[0].end]

    assert result() == "Dd. Ee."
    assert result(section_chars=15) == "Cc. Dd. Ee. Ff."  # the section, not its parent A nor C
    assert result(section_chars=14) == "Dd. Ee."  # a longer section is not returned
    lone = grouped(index, hits[:1], gap=2, k=5, context=0, section_chars=1000)
    assert text[lone[0].start:lone[0].end] == "Dd."  # one hit marks a sentence, not a passage

    repeated = [("A", "N")] * 2 + [("A", "M")] + [("A", "N")] * 3 + [("C",)] * 2  # "A > N" twice
    twice, twice_text = build(tmp_path / "twice", sentences, cosines, repeated)
    found = grouped(twice, vector_search(twice, QUERY, k=2), gap=2, k=5, context=0, section_chars=1000)
    assert [(r.text, twice_text[r.start:r.end]) for r in found] == [("Dd. Ee. Ff.", "Dd. Ee. Ff.")]  # its own run

    # Two groups of one section (hits 0-1 and 4-5, gap 2) both take it: one result, not its text twice.
    pairs, pairs_text = build(tmp_path / "pairs", sentences, [0.9, 0.85, 0.0, 0.0, 0.8, 0.75, 0.0, 0.0],
                              [("A",)] * 6 + [("C",)] * 2)
    hits = vector_search(pairs, QUERY, k=4)
    found = grouped(pairs, hits, gap=2, k=5, context=0, section_chars=1000)
    assert [(r.chunk_index, pairs_text[r.start:r.end]) for r in found] == [(0, "Aa. Bb. Cc. Dd. Ee. Ff.")]
    assert [pairs_text[r.start:r.end] for r in grouped(pairs, hits, gap=2, k=5, context=0)] == ["Aa. Bb.", "Ee. Ff."]

    plain, plain_text = build(tmp_path / "plain", sentences, cosines)  # no headings: one section, the document
    found = grouped(plain, vector_search(plain, QUERY, k=2), gap=2, k=5, context=0, section_chars=1000)
    assert [plain_text[r.start:r.end] for r in found] == ["Dd. Ee."]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 40), min_size=1, max_size=60), st.data())
def test_widened_results_are_the_smallest_whole_sentence_span_grown_in_turn(tmp_path_factory, lengths, data):
    """Property: the widened span starts and ends on sentence boundaries, contains the plain result,
    reaches ``min_chars`` unless it is the whole document, and one sentence fewer would not."""
    tmp_path = tmp_path_factory.mktemp("grow")
    sentences = [chr(97 + i % 26) * n for i, n in enumerate(lengths)]
    hit_at = data.draw(st.integers(0, len(lengths) - 1))
    min_chars = data.draw(st.integers(0, sum(lengths) + 2 * len(lengths)))
    cosines = [0.0] * len(lengths)
    cosines[hit_at] = 0.9
    index, text = build(tmp_path, sentences, cosines)
    hits = [h for h in vector_search(index, QUERY, k=1)]
    plain = grouped(index, hits, gap=0, k=1, context=0)[0]
    wide = grouped(index, hits, gap=0, k=1, context=0, min_chars=min_chars)[0]
    bounds = {(c_start, c_end) for c_start, c_end in zip(
        [sum(lengths[:i]) + i for i in range(len(lengths))],
        [sum(lengths[:i + 1]) + i for i in range(len(lengths))])}
    assert wide.start in {a for a, _ in bounds} and wide.end in {b for _, b in bounds}
    assert wide.start <= plain.start and plain.end <= wide.end
    assert wide.text == text[wide.start:wide.end]
    whole = (wide.start, wide.end) == (0, len(text) - 1)
    assert wide.end - wide.start >= min_chars or whole
    first, last = wide.start == plain.start, wide.end == plain.end
    if not (first and last):
        # Dropping the sentence added last leaves it short of min_chars.
        starts = sorted(a for a, _ in bounds)
        ends = sorted(b for _, b in bounds)
        before_last = ends[ends.index(wide.end) - 1] if not last else None
        after_first = starts[starts.index(wide.start) + 1] if not first else None
        shorter = [(wide.start, e) for e in [before_last] if e] + [(s, wide.end) for s in [after_first] if s]
        assert any(e - s < min_chars for s, e in shorter)


@pytest.mark.parametrize("min_chars", [0, 50])
def test_widening_needs_no_more_than_the_document(tmp_path, min_chars):
    index, text = build(tmp_path, ["Only sentence."], [0.9])
    result = grouped(index, vector_search(index, QUERY, k=1), gap=1, k=5, context=1, min_chars=min_chars)
    assert [(r.start, r.end) for r in result] == [(0, len("Only sentence."))]


def build_rows(tmp_path, rows: list[tuple[str, str, tuple[int, int] | None]], cosines: list[float],
               sections: list[tuple[str, ...]] | None = None):
    """A table of ``(text, separator after it, window as row offsets or None for its own span)``."""
    text, spans = "", []
    for piece, sep, _ in rows:
        spans.append((len(text), len(text) + len(piece)))
        text += piece + sep
    chunks = []
    for i, ((piece, _, window), (start, end)) in enumerate(zip(rows, spans)):
        lo, hi = window if window else (i, i)
        chunks.append(Chunk("doc.md", i, start, end, piece, piece, 5, heading_path=sections[i] if sections else (),
                            window_start=spans[lo][0], window_end=spans[hi][1]))
    doc = ChunkedDocument("doc.md", "file:///doc.md", "Doc", "h", "v", "text", "p", "ph", tuple(chunks))
    index = LanceIndex(lancedb.connect(str(tmp_path / "db")), "c", "m", DIM, "p")
    index.write_documents([EmbeddedDocument(doc, "m", tuple(unit(c) for c in cosines))], None, "run")
    return index, text


def paragraphs(pieces: list[list[str]]) -> list[tuple[str, str, None]]:
    """Rows of sentences joined by a space within a paragraph and a blank line between paragraphs."""
    rows = [(sentence, " ", None) for paragraph in pieces for sentence in paragraph]
    ends = {sum(len(p) for p in pieces[:i + 1]) - 1 for i in range(len(pieces))}
    return [(t, "\n\n" if i in ends else sep, w) for i, (t, sep, w) in enumerate(rows)]


def test_a_result_of_several_hits_brings_its_short_paragraph_when_no_section_does(tmp_path):
    rows = paragraphs([["Aa.", "Bb."], ["Cc.", "Dd.", "Ee.", "Ff."], ["Gg.", "Hh."]])
    index, text = build_rows(tmp_path, rows, [0.0, 0.0, 0.0, 0.9, 0.85, 0.0, 0.0, 0.0])
    hits = vector_search(index, QUERY, k=2)

    def result(hits=hits, **settings):
        found = grouped(index, hits, gap=2, k=5, context=0, **settings)
        assert len(found) == 1
        return text[found[0].start:found[0].end]

    assert result() == "Dd. Ee."
    assert result(paragraph_chars=15) == "Cc. Dd. Ee. Ff."  # its paragraph, never past a blank line
    assert result(paragraph_chars=14) == "Dd. Ee."  # a longer paragraph is not returned
    assert result(hits[:1], paragraph_chars=1000) == "Dd."  # one hit marks a sentence, not a passage
    # A document of one paragraph (no headings: no section to return) comes whole.
    one, one_text = build_rows(tmp_path / "one", paragraphs([["Aa.", "Bb.", "Cc.", "Dd.", "Ee.", "Ff."]]),
                               [0.0, 0.0, 0.0, 0.9, 0.85, 0.0])
    found = grouped(one, vector_search(one, QUERY, k=2), gap=2, k=5, context=0, section_chars=1000,
                    paragraph_chars=1000)
    assert [one_text[r.start:r.end] for r in found] == ["Aa. Bb. Cc. Dd. Ee. Ff."]
    # A heading section short enough is returned first; the paragraph only where it is not.
    sectioned, sectioned_text = build_rows(tmp_path / "sections", rows, [0.0, 0.0, 0.0, 0.9, 0.85, 0.0, 0.0, 0.0],
                                           [("A",)] * 2 + [("B",)] * 3 + [("C",)] * 3)
    hits = vector_search(sectioned, QUERY, k=2)
    assert [sectioned_text[r.start:r.end] for r in grouped(sectioned, hits, gap=2, k=5, context=0, section_chars=12,
                                                          paragraph_chars=1000)] == ["Cc. Dd. Ee."]
    assert [sectioned_text[r.start:r.end] for r in grouped(sectioned, hits, gap=2, k=5, context=0, section_chars=10,
                                                          paragraph_chars=1000)] == ["Cc. Dd. Ee. Ff."]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 30), st.booleans()), min_size=2, max_size=50), st.data())
def test_the_paragraph_returned_is_the_one_a_reader_sees(tmp_path_factory, shape, data):
    """Property: a group of two hits returns its paragraph (the sentences between blank lines) exactly
    when that spans at most ``paragraph_chars``, whatever lies beyond, else the hits alone."""
    rows = [(chr(97 + i % 26) * n, "\n\n" if blank else " ", None) for i, (n, blank) in enumerate(shape)]
    at = data.draw(st.integers(0, len(rows) - 2))
    cap = data.draw(st.integers(0, sum(n + 2 for n, _ in shape)))
    cosines = [0.0] * len(rows)
    cosines[at], cosines[at + 1] = 0.9, 0.85
    index, text = build_rows(tmp_path_factory.mktemp("para"), rows, cosines)
    found = grouped(index, vector_search(index, QUERY, k=2), gap=2, k=5, context=0, paragraph_chars=cap)
    starts = [sum(len(t) + len(sep) for t, sep, _ in rows[:i]) for i in range(len(rows))]
    ends = [a + len(t) for a, (t, _, _) in zip(starts, rows)]
    first = max([i + 1 for i in range(at) if rows[i][1] != " "], default=0)
    last = min([i for i in range(at, len(rows)) if rows[i][1] != " "], default=len(rows) - 1)
    # The second hit may sit past a blank line: the result then spans both paragraphs' parts it touches.
    paragraph = (starts[first], ends[last]) if ends[last] - starts[first] <= cap else (starts[at], ends[at])
    assert [(r.start, r.end) for r in found] == [(min(paragraph[0], starts[at]), max(paragraph[1], ends[at + 1]))]


def test_a_lone_hit_takes_its_own_context_width_and_a_group_the_group_width(tmp_path):
    # Sentences 3-4 are one group (gap 1), sentence 12 a lone hit.
    cosines = [0.0] * 16
    cosines[3], cosines[4], cosines[12] = 0.9, 0.85, 0.8
    index, text = build(tmp_path, [f"S{i:02d}." for i in range(16)], cosines)
    hits = vector_search(index, QUERY, k=3)
    found = grouped(index, hits, gap=1, k=5, context=1, lone_context=2)
    assert [text[h.start:h.end] for h in found] == ["S02. S03. S04. S05.", "S10. S11. S12. S13. S14."]
    found = grouped(index, hits, gap=1, k=5, context=2, lone_context=0)
    assert [text[h.start:h.end] for h in found] == ["S01. S02. S03. S04. S05. S06.", "S12."]
    # Without a lone width, a lone hit takes the group width.
    assert [text[h.start:h.end] for h in grouped(index, hits, gap=1, k=5, context=1)][1] == "S11. S12. S13."


def test_a_piece_of_a_split_sentence_brings_the_rest_of_its_sentence(tmp_path):
    # Rows 1-2 are one sentence split in two (each windows the whole sentence); rows 4-5 are a
    # run-on split in two whose windows are the pieces themselves.
    rows = [("Aa.", " ", None), ("The refund rule covers", " ", (1, 2)), ("every order placed online.", " ", (1, 2)),
            ("Dd.", " ", None), ("Then word word word", " ", None), ("word word word.", "", None)]
    index, text = build_rows(tmp_path, rows, [0.0, 0.9, 0.1, 0.0, 0.0, 0.0])
    hit = grouped(index, vector_search(index, QUERY, k=1), gap=1, k=1, context=0)[0]
    assert hit.text == text[hit.start:hit.end] == "The refund rule covers every order placed online."
    # Context reaching into the split sentence takes all of it; a run-on stays in pieces.
    index, text = build_rows(tmp_path / "a", rows, [0.9, 0.0, 0.0, 0.0, 0.0, 0.0])
    assert grouped(index, vector_search(index, QUERY, k=1), gap=1, k=1, context=1)[0].text == \
        "Aa. The refund rule covers every order placed online."
    index, text = build_rows(tmp_path / "b", rows, [0.0, 0.0, 0.0, 0.0, 0.9, 0.0])
    assert grouped(index, vector_search(index, QUERY, k=1), gap=1, k=1, context=0)[0].text == "Then word word word"


def test_a_result_in_a_short_document_is_the_whole_document_by_its_text_not_its_stored_counts(tmp_path):
    # 21 sentences of 4 words: 84 words of text, while the rows store 5 tokens each (105): a
    # sentence-window row counts what was embedded (its window, a header), not its sentence.
    cosines = [0.0] * 21
    cosines[3], cosines[4], cosines[15] = 0.9, 0.85, 0.8
    index, text = build(tmp_path, [f"Sentence number {i} here." for i in range(21)], cosines)
    settings = dict(ks=(3,), mode="vector", candidates=3, grouping=Grouping(2, context=0),
                    count_tokens=lambda t: len(t.split()))
    apart = search(index, "q", QUERY, whole_document_tokens=83, **settings)[3]
    assert [h.text for h in apart] == ["Sentence number 3 here. Sentence number 4 here.", "Sentence number 15 here."]
    whole = search(index, "q", QUERY, whole_document_tokens=84, **settings)[3]
    assert [(h.start, h.end) for h in whole] == [(0, len(text) - 1)]  # its results become one
    assert whole[0].chunk_index == 3 and whole[0].text == text.strip()
    # Several depths in one search judge each document once, and each depth gets what asking for it alone gets.
    for grouping in (settings["grouping"], None):
        alone = {k: search(index, "q", QUERY, **{**settings, "ks": (k,), "grouping": grouping}, whole_document_tokens=84)[k]
                 for k in (1, 3)}
        assert search(index, "q", QUERY, **{**settings, "ks": (1, 3), "grouping": grouping},
                      whole_document_tokens=84) == alone
    with pytest.raises(ValueError, match="count_tokens"):
        search(index, "q", QUERY, whole_document_tokens=84, ks=(3,), mode="vector", grouping=Grouping(2))


def test_results_from_several_documents_are_each_judged_short_or_long(tmp_path, monkeypatch):
    # Three documents in one search: two short ones (one whose id needs quoting) come whole, the
    # long one (more rows than the limit) keeps its sentence.
    docs = {"short.md": (3, 0.9), "it's short.md": (4, 0.8), "long.md": (30, 0.7)}
    embedded = []
    for doc_id, (n, best) in docs.items():
        text, chunks = "", []
        for i in range(n):
            sentence = f"{doc_id} sentence {i}."
            chunks.append(Chunk(doc_id, i, len(text), len(text) + len(sentence), sentence, sentence, 3,
                                window_start=len(text), window_end=len(text) + len(sentence)))
            text += sentence + " "
        doc = ChunkedDocument(doc_id, f"file:///{doc_id}", doc_id, "h", "v", "text", "p", "ph", tuple(chunks))
        embedded.append(EmbeddedDocument(doc, "m", tuple(unit(best if i == 1 else 0.0) for i in range(n))))
    index = LanceIndex(lancedb.connect(str(tmp_path / "db")), "c", "m", DIM, "p")
    index.write_documents(embedded, None, "run")
    settings = dict(ks=(3,), mode="vector", candidates=3, whole_document_tokens=20, count_tokens=lambda t: len(t.split()))
    hits = search(index, "q", QUERY, **settings)[3]
    assert [(h.doc_id, h.start, h.text.count("sentence")) for h in hits] == [
        ("short.md", 0, 3), ("it's short.md", 0, 4), ("long.md", len("long.md sentence 0. "), 1)]
    # Judgements kept across searches (an evaluation's): the same results, each document read once.
    wholes: dict = {}
    assert search(index, "q", QUERY, wholes=wholes, **settings)[3] == hits
    assert {d: w is not None for d, w in wholes.items()} == {"short.md": True, "it's short.md": True, "long.md": False}
    counted = []
    monkeypatch.setattr(LanceTable, "count_rows", lambda self, *a, **kw: counted.append(a) or 0)
    assert search(index, "q", QUERY, wholes=wholes, **settings)[3] == hits and counted == []
