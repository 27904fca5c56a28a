"""Quality gate of a model switch: the ``+promote_if`` rule and the decision it makes.

A rule reads ``<metric> >= live [+|- number]``: the candidate's score on the corpus' golden
questions must reach the live configuration's score plus (or minus) the margin, in the
evaluation's units (percent for recall and IoU, MRR x 100).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Metrics of rag_assets.evaluate's summary a rule may compare (higher is better for each).
METRICS = ("recall_at_1", "recall_at_3", "recall_at_5", "recall_at_10", "mrr", "recall", "precision", "iou")
GRAMMAR = f"'<metric> >= live [+|- number]' with <metric> one of {', '.join(METRICS)}, e.g. 'recall_at_5 >= live - 1'"
_RULE = re.compile(r"\s*([a-z_0-9]+)\s*>=\s*live\s*(?:([+-])\s*(\d+(?:\.\d+)?))?\s*")


@dataclass(frozen=True)
class PromoteRule:
    """``metric`` of the candidate must be at least the live one's plus ``margin`` (may be negative)."""

    metric: str
    margin: float = 0.0

    def __str__(self) -> str:
        sign = "+" if self.margin >= 0 else "-"
        return f"{self.metric} >= live" + (f" {sign} {abs(self.margin):g}" if self.margin else "")


@dataclass(frozen=True)
class Decision:
    """Whether the candidate goes live, the two scores compared and why, in one sentence."""

    promote: bool
    rule: str
    candidate: float
    live: float
    reason: str


def parse_rule(text: str) -> PromoteRule:
    """The rule ``text`` states. Raises ValueError naming the accepted grammar when it is not one."""
    match = _RULE.fullmatch(text or "")
    if not match:
        raise ValueError(f"{text!r} is not a promotion rule; expected {GRAMMAR}")
    metric, sign, number = match.groups()
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r} in {text!r}; expected {GRAMMAR}")
    margin = float(number or 0) * (-1 if sign == "-" else 1)
    return PromoteRule(metric, margin)


def decide(rule: PromoteRule, candidate: dict, live: dict, candidate_name: str, live_name: str) -> Decision:
    """Apply ``rule`` to two evaluation summaries (metric -> score). The candidate is promoted when
    its score reaches ``live score + margin``; never when either score is missing (None: the
    golden set does not measure that metric, e.g. token recall without answer spans)."""
    if candidate.get(rule.metric) is None or live.get(rule.metric) is None:
        return Decision(False, str(rule), 0.0, 0.0,
                        f"{rule.metric} is not measured on the golden set (token metrics need answer spans): held "
                        f"back; use a metric it measures in +promote_if, e.g. recall_at_5 or mrr")
    new, old = float(candidate[rule.metric]), float(live[rule.metric])
    needed = round(old + rule.margin, 4)
    promote = new >= needed
    verdict = "reaches" if promote else "is below"
    reason = (f"{rule.metric} of {candidate_name} ({new:g}) {verdict} {needed:g} "
              f"(live {live_name}: {old:g}, rule {rule})")
    return Decision(promote, str(rule), new, old, reason)
