"""The quality bar and leave-one-corpus-out selection on hand-made scores."""

import pytest

from rag_assets.core.selection import Bar, bar_probability, choose, leave_one_corpus_out

BASE = ["fixed", "recursive"]


def test_bar_takes_the_best_baseline_recall_and_iou_separately():
    bar = Bar()
    row = {"fixed": (80.0, 4.0), "recursive": (85.0, 3.0)}
    assert bar.best(row, BASE) == (85.0, 4.0)
    assert bar.met((84.5, 6.0), (85.0, 4.0))
    assert not bar.met((84.4, 6.0), (85.0, 4.0))
    assert bar.shortfall((84.0, 5.0), (85.0, 4.0)) == pytest.approx(0.5 + 1.0)


def test_choose_prefers_meeting_the_bar_then_recall():
    scores = {("a", "vector"): {"fixed": (80.0, 4.0), "recursive": (82.0, 4.0),
                                "narrow": (78.0, 9.0), "wide": (83.0, 6.5), "wider": (84.0, 6.0)}}
    assert choose(["narrow", "wide", "wider"], scores, BASE) == "wider"
    scores[("a", "vector")]["wider"] = (84.0, 5.0)  # IoU now below 1.5 x 4
    assert choose(["narrow", "wide", "wider"], scores, BASE) == "wide"


def test_leave_one_corpus_out_never_looks_at_the_held_out_corpus():
    base = {"fixed": (80.0, 4.0), "recursive": (80.0, 4.0)}
    scores = {("a", "vector"): {**base, "x": (81.0, 7.0), "y": (79.0, 7.0)},
              ("b", "vector"): {**base, "x": (81.0, 7.0), "y": (79.0, 7.0)},
              ("c", "vector"): {**base, "x": (60.0, 7.0), "y": (95.0, 7.0)}}  # only c favours y
    # held out c: a and b alone favour x, whatever c says; held out a or b: c's 19.5-point
    # shortfall under x outweighs y's 0.5 on the other one
    assert leave_one_corpus_out(["x", "y"], scores, BASE) == {"a": "y", "b": "y", "c": "x"}
    assert choose(["x", "y"], scores, BASE) == "y"
    with pytest.raises(ValueError):
        leave_one_corpus_out(["x"], {("a", "vector"): scores[("a", "vector")]}, BASE)


def test_bar_probability_is_how_often_the_bar_holds_over_resampled_questions():
    base = {"fixed": [(100.0, 4.0), (0.0, 0.0)] * 20, "recursive": [(50.0, 2.0)] * 40}
    assert bar_probability([(100.0, 9.0)] * 40, base) == 1.0  # above every resample
    assert bar_probability([(0.0, 9.0)] * 40, base) == 0.0  # never the recall
    # exactly the best baseline's recall question by question, IoU 1.5x: holds in every resample
    assert bar_probability([(r, 1.5 * i) for r, i in base["fixed"]], {"fixed": base["fixed"]}) == 1.0
    # a coin toss: the candidate differs from the baseline on a few questions, both ways
    tossed = [(100.0, 9.0), (0.0, 9.0)] * 20
    tossed[0], tossed[3] = (0.0, 9.0), (100.0, 9.0)
    p = bar_probability(tossed, {"fixed": base["fixed"]})
    assert 0.2 < p < 0.8
    assert bar_probability(tossed, {"fixed": base["fixed"]}) == p  # fixed seed
    with pytest.raises(ValueError):
        bar_probability([(1.0, 1.0)], base)
