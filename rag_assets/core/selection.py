"""Choosing a retrieval setting that generalises: the quality bar against the baselines, and
leave-one-corpus-out selection among candidate settings.

A *unit* is one corpus scored in one mode (dense or hybrid); ``per_question[unit][profile]`` is
that profile's (recall, IoU) in % on each of the unit's questions, in question order. The bar
asks, per unit, for recall at least the best baseline's minus ``recall_slack`` and IoU at least
``iou_ratio`` times the best baseline's.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import numpy as np

Unit = tuple[str, str]  # (corpus, mode)
PerQuestion = dict[Unit, dict[str, list[tuple[float, float]]]]  # per-question (recall, IoU) in question order


@dataclass(frozen=True)
class Bar:
    """recall >= best baseline recall - recall_slack and IoU >= iou_ratio * best baseline IoU."""

    recall_slack: float = 0.5
    iou_ratio: float = 1.5

    def best(self, row: dict[str, tuple[float, float]], baselines: list[str]) -> tuple[float, float]:
        """(best recall, best IoU) of the baselines in one unit (each may come from a different one)."""
        present = [row[b] for b in baselines if b in row]
        if not present:
            raise KeyError(f"no baseline of {baselines} scored")
        return max(r for r, _ in present), max(i for _, i in present)

    def shortfall(self, score: tuple[float, float], best: tuple[float, float]) -> float:
        """Points missing to the bar (0 when met): recall points plus IoU points."""
        recall, iou = score
        return max(0.0, best[0] - self.recall_slack - recall) + max(0.0, self.iou_ratio * best[1] - iou)

    def met(self, score: tuple[float, float], best: tuple[float, float]) -> bool:
        return self.shortfall(score, best) == 0.0


def bar_probability(candidate: list[tuple[float, float]], baselines: dict[str, list[tuple[float, float]]],
                    bar: Bar = Bar(), resamples: int = 2000, seed: int = 0) -> float:
    """How often the bar holds when one unit's questions are resampled with replacement (the same
    resample for the candidate and every baseline: a paired bootstrap from a fixed ``seed``).
    ``candidate`` and each baseline list hold per-question (recall, IoU) in question order. Near
    1 the bar holds beyond the noise of the question sample; near 0.5 it is a coin toss."""
    values = np.asarray(candidate, dtype=np.float64)
    if not len(values) or not baselines or any(len(v) != len(values) for v in baselines.values()):
        raise ValueError("need per-question scores of the candidate and of every baseline, on the same questions")
    picks = np.random.default_rng(seed).integers(0, len(values), size=(resamples, len(values)))
    base = np.stack([np.asarray(v, dtype=np.float64)[picks].mean(axis=1) for v in baselines.values()])
    ours = values[picks].mean(axis=1)
    tie = 1e-9  # a score equal to the bar meets it, whatever the float rounding of the means
    met = (ours[:, 0] >= base[:, :, 0].max(axis=0) - bar.recall_slack - tie) & \
          (ours[:, 1] >= bar.iou_ratio * base[:, :, 1].max(axis=0) - tie)
    return float(met.mean())


def unit_means(per_question: PerQuestion) -> dict[Unit, dict[str, tuple[float, float]]]:
    """Each profile's mean (recall, IoU) in each unit."""
    return {u: {p: (statistics.fmean(r for r, _ in v), statistics.fmean(i for _, i in v)) for p, v in row.items()}
            for u, row in per_question.items()}


def _tables(candidates: list[str], per_question: PerQuestion, baselines: list[str], bar: Bar):
    """The means and each candidate's ``bar_probability`` in every unit, computed once."""
    probabilities = {u: {c: bar_probability(row[c], {b: row[b] for b in baselines if b in row}, bar)
                         for c in candidates} for u, row in per_question.items()}
    return unit_means(per_question), probabilities


def _pick(candidates: list[str], means, probabilities, baselines: list[str], units: list[Unit], bar: Bar) -> str:
    if not candidates or not units:
        raise ValueError("need candidates and units to choose from")
    bests = {u: bar.best(means[u], baselines) for u in units}

    def key(candidate: str):
        expected = sum(probabilities[u][candidate] for u in units)
        short = sum(bar.shortfall(means[u][candidate], bests[u]) for u in units)
        gain = statistics.fmean(means[u][candidate][0] - bests[u][0] for u in units)
        return (-round(expected, 3), round(short, 6), -gain, candidates.index(candidate))

    return min(candidates, key=key)


def choose(candidates: list[str], per_question: PerQuestion, baselines: list[str], units: list[Unit] | None = None,
           bar: Bar = Bar()) -> str:
    """The candidate expected to meet the bar on the most ``units`` (all by default): the sum of
    its ``bar_probability`` over them, so a lead inside the noise of a unit's questions counts for
    little; among equals, the least total shortfall of the means, then the highest mean recall
    over the best baseline's (recall is what a wider context buys and what the bar protects)."""
    units = list(per_question) if units is None else units
    chosen = {u: per_question[u] for u in units}
    return _pick(candidates, *_tables(candidates, chosen, baselines, bar), baselines, units, bar)


def leave_one_corpus_out(candidates: list[str], per_question: PerQuestion, baselines: list[str],
                         bar: Bar = Bar()) -> dict[str, str]:
    """corpus -> the candidate ``choose`` picks from every other corpus' units (all modes): how
    the selection rule does on a corpus it never saw. Each unit's probabilities are computed once."""
    return held_out_and_overall(candidates, per_question, baselines, bar)[0]


def held_out_and_overall(candidates: list[str], per_question: PerQuestion, baselines: list[str],
                         bar: Bar = Bar()) -> tuple[dict[str, str], str]:
    """``leave_one_corpus_out``'s picks and ``choose``'s pick on all units, from one computation of
    every unit's means and probabilities (the paired bootstrap is the costly part)."""
    corpora = sorted({corpus for corpus, _ in per_question})
    if len(corpora) < 2:
        raise ValueError("leave-one-corpus-out needs at least two corpora")
    means, probabilities = _tables(candidates, per_question, baselines, bar)
    held = {corpus: _pick(candidates, means, probabilities, baselines, [u for u in per_question if u[0] != corpus], bar)
            for corpus in corpora}
    return held, _pick(candidates, means, probabilities, baselines, list(per_question), bar)
