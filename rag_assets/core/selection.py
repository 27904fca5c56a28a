"""Choosing a retrieval setting that generalises: the quality bar against the baselines, and
leave-one-corpus-out selection among candidate settings.

A *unit* is one corpus scored in one mode (dense or hybrid); ``scores[unit][profile]`` is that
profile's mean (recall, IoU) in % there. The bar asks, per unit, for recall at least the best
baseline's minus ``recall_slack`` and IoU at least ``iou_ratio`` times the best baseline's.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import numpy as np

Unit = tuple[str, str]  # (corpus, mode)
Scores = dict[Unit, dict[str, tuple[float, float]]]


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


def choose(candidates: list[str], scores: Scores, baselines: list[str], units: list[Unit] | None = None,
           bar: Bar = Bar()) -> str:
    """The candidate with the least total shortfall to the bar over ``units`` (all by default);
    among equals, the one with the highest mean recall over the best baseline's (recall is what
    a wider context buys and what the bar protects)."""
    units = list(scores) if units is None else units
    if not candidates or not units:
        raise ValueError("need candidates and units to choose from")

    def key(candidate: str):
        bests = [bar.best(scores[u], baselines) for u in units]
        short = sum(bar.shortfall(scores[u][candidate], b) for u, b in zip(units, bests))
        gain = statistics.fmean(scores[u][candidate][0] - b[0] for u, b in zip(units, bests))
        return (round(short, 6), -gain, candidates.index(candidate))

    return min(candidates, key=key)


def leave_one_corpus_out(candidates: list[str], scores: Scores, baselines: list[str],
                         bar: Bar = Bar()) -> dict[str, str]:
    """corpus -> the candidate ``choose`` picks from every other corpus' units (all modes): how
    the selection rule does on a corpus it never saw."""
    corpora = sorted({corpus for corpus, _ in scores})
    if len(corpora) < 2:
        raise ValueError("leave-one-corpus-out needs at least two corpora")
    return {held: choose(candidates, scores, baselines, [u for u in scores if u[0] != held], bar) for held in corpora}
