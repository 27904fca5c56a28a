"""The report's token-level metrics on hand-computed cases, and chunk-level hits."""

from itertools import accumulate

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_assets.core.evaluation import (Question, Reference, Retrieved, Scores, bootstrap_ci, is_hit, precision_omega,
                                        shown_offsets, token_scores)


def q(*refs, corpus="c"):
    return Question("?", corpus, tuple(Reference(a, b) for a, b in refs))


def test_one_reference_inside_one_chunk():
    # reference 10..20 (10 chars) inside chunk 0..50; a second chunk 50..100 misses.
    recall, precision, iou = token_scores(q((10, 20)), [Retrieved("c", 0, 50), Retrieved("c", 50, 100)])
    assert recall == pytest.approx(1.0)
    assert precision == pytest.approx(10 / 100)
    assert iou == pytest.approx(10 / (100 + 0))


def test_partial_overlap_and_unused_reference_text():
    # reference 40..60: chunk 0..50 covers 40..50; 50..60 stays unused.
    recall, precision, iou = token_scores(q((40, 60)), [Retrieved("c", 0, 50)])
    assert recall == pytest.approx(10 / 20)
    assert precision == pytest.approx(10 / 50)
    assert iou == pytest.approx(10 / (50 + 10))


def test_overlapping_chunks_count_twice_in_the_denominator_but_once_in_the_numerator():
    recall, precision, iou = token_scores(q((10, 30)), [Retrieved("c", 0, 40), Retrieved("c", 20, 60)])
    assert recall == pytest.approx(1.0)
    assert precision == pytest.approx(20 / (40 + 40))
    assert iou == pytest.approx(20 / 80)


def test_chunks_of_another_corpus_add_nothing_but_count_in_precision():
    recall, precision, iou = token_scores(q((0, 10)), [Retrieved("other", 0, 10), Retrieved("c", 0, 10)])
    assert recall == pytest.approx(1.0)
    assert precision == pytest.approx(10 / 20)


def test_two_references_and_precision_omega():
    question = q((0, 10), (90, 100))
    chunks = [Retrieved("c", 0, 50), Retrieved("c", 50, 80), Retrieved("c", 80, 120)]
    assert precision_omega(question, chunks) == pytest.approx(20 / (50 + 40))
    recall, _, iou = token_scores(question, chunks[:1])
    assert recall == pytest.approx(0.5)
    assert iou == pytest.approx(10 / (50 + 10))


def same_at_every_depth(retrieved: list) -> dict:
    return {n: retrieved[:n] for n in (1, 3, 5, 10)}


def test_chunk_level_hits_recall_at_k_and_mrr():
    question = q((100, 120))
    scores = Scores()
    scores.add(question, same_at_every_depth([Retrieved("c", 0, 50), Retrieved("c", 110, 200)]), 5, None)
    scores.add(question, same_at_every_depth([Retrieved("c", 0, 50)]), 5, None)
    summary = scores.summary()
    assert summary["recall_at_1"] == 0.0 and summary["recall_at_3"] == 50.0
    assert summary["mrr"] == pytest.approx(100 * (0.5 + 0) / 2)
    doc_question = Question("?", "a.md", expected_doc="a.md", expected_section="Refunds")
    assert is_hit(doc_question, Retrieved("a.md", 0, 10, ("Guide > Refunds > Enterprise",)))
    assert not is_hit(doc_question, Retrieved("a.md", 0, 10, ("Guide > Shipping",)))


def test_bootstrap_interval_brackets_the_mean_narrows_with_more_questions_and_is_repeatable():
    values = [1.0, 0.0, 0.5, 1.0, 0.25, 0.75, 1.0, 0.0] * 5
    low, high = bootstrap_ci(values)
    assert low < sum(values) / len(values) < high
    assert bootstrap_ci(values) == (low, high)  # fixed seed
    wide = bootstrap_ci(values[:8])
    assert wide[1] - wide[0] > high - low
    assert bootstrap_ci([0.4] * 10) == pytest.approx((0.4, 0.4))
    assert bootstrap_ci([]) == (0.0, 0.0)


def test_summary_reports_intervals_and_recall_at_10_beyond_k():
    question = q((100, 120))
    scores = Scores()
    far = [Retrieved("c", 200 + 10 * i, 205 + 10 * i) for i in range(7)] + [Retrieved("c", 100, 120)]
    scores.add(question, {n: far[:n] for n in (1, 3, 5, 10)}, 5, None)  # the hit is 8th: outside the top 5
    scores.add(question, same_at_every_depth([Retrieved("c", 90, 130)]), 5, None)
    summary = scores.summary()
    assert summary["recall"] == 50.0 and summary["recall_at_5"] == 50.0 and summary["recall_at_10"] == 100.0
    # recall@n is read from asking for n results: a hit that asking for 3 merges away from the
    # top does not count at 3 even when the 10-result list ranks it second.
    merged = Scores()
    merged.add(question, {1: [far[0]], 3: far[:3], 5: far[:5], 10: [far[0], far[7]]}, 5, None)
    assert merged.summary()["recall_at_3"] == 0.0 and merged.summary()["recall_at_10"] == 100.0
    assert merged.summary()["mrr"] == 50.0
    assert summary["recall_ci"][0] <= summary["recall"] <= summary["recall_ci"][1]
    assert summary["iou_ci"][0] <= summary["iou"] <= summary["iou_ci"][1]


def test_a_golden_set_without_answer_spans_measures_hits_but_no_token_metrics():
    doc_question = Question("?", "a.md", expected_doc="a.md")
    scores = Scores()
    scores.add(doc_question, same_at_every_depth([Retrieved("a.md", 0, 10)]), 5, None)
    summary = scores.summary()
    assert summary["recall_at_1"] == 100.0 and summary["mrr"] == 100.0
    assert (summary["recall"], summary["iou"], summary["recall_ci"]) == (None, None, None)


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(st.tuples(st.sampled_from(["keep", "drop", "blank", "replace"]),
                                st.text(alphabet="ab -#", min_size=1, max_size=12)), max_size=40))
def test_offsets_of_kept_lines_move_with_them_and_never_go_back(lines):
    """A file's text read with lines left out (a rule), emptied or replaced (a markup line read as
    its label): each character of a kept line maps to the same character, and offsets stay in order."""
    source = "".join(f"{line}\n" if kind != "blank" else "\n" for kind, line in lines)
    shown = "".join("" if kind == "drop" else "\n" if kind == "blank" else f"{line}\n" if kind == "keep"
                    else f"label {line}\n" for kind, line in lines)
    moved = shown_offsets(source, shown)
    positions = [moved(pos) for pos in range(len(source) + 1)]
    assert positions == sorted(positions) and positions[-1] == len(shown)
    pos = 0
    for kind, line in lines:
        if kind == "keep" and [other for _, other in lines].count(line) == 1:  # one place it can be
            assert shown[moved(pos) : moved(pos + len(line))] == line
        pos += len(line) + 1 if kind != "blank" else 1


def test_a_long_page_of_repeated_lines_keeps_each_kept_line_in_place():
    """Lines that all recur (a long table of few values) have no unique line to anchor on; difflib
    took every popular line for junk there and paired almost none, so references moved to the page's
    start. Each kept line now reads as an equal line of the shown text."""
    lines = [f"| row | {i % 30} |\n" for i in range(3_000)]
    source = "".join(lines)
    shown = "".join(line for i, line in enumerate(lines) if i % 97 != 5)
    moved = shown_offsets(source, shown)
    starts = [0, *accumulate(map(len, lines))]
    kept = [i for i in range(len(lines)) if i % 97 != 5]
    assert all(shown[moved(starts[i]) : moved(starts[i + 1] - 1)] == lines[i][:-1] for i in kept)
    assert [moved(starts[i]) for i in kept] == sorted({moved(starts[i]) for i in kept})
