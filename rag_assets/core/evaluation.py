"""Retrieval evaluation: chunk-level recall@k and MRR, and the token-level metrics of Chroma's
"Evaluating Chunking Strategies for Retrieval" (2024), computed as its open-source evaluation
does: character-span intersection and union over the top-k retrieved chunks; chunks retrieved
from another corpus add nothing to the numerator (but do count in the precision denominator,
as there); precision-omega uses every chunk of the corpus that touches a reference.
"""

from __future__ import annotations

import csv
import difflib
import json
import os
import statistics
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field, replace
from itertools import accumulate
from pathlib import Path
from typing import Callable

import numpy as np
import yaml

Span = tuple[int, int]
RECALL_AT = (1, 3, 5, 10)  # recall@n is reported for these n, each from asking for n results


def _total(spans: list[Span]) -> int:
    return sum(b - a for a, b in spans)


def _merge(spans: list[Span]) -> list[Span]:
    """Union of spans; touching spans merge."""
    out: list[Span] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _overlap(x: Span, y: Span) -> Span | None:
    """Intersection of two spans; touching spans give an empty (zero-length) intersection."""
    a, b = max(x[0], y[0]), min(x[1], y[1])
    return (a, b) if a <= b else None


def _subtract(spans: list[Span], cut: Span) -> list[Span]:
    """``spans`` minus ``cut`` (spans merely touching ``cut`` are kept whole)."""
    out: list[Span] = []
    for a, b in spans:
        if b < cut[0] or a > cut[1]:
            out.append((a, b))
            continue
        if a < cut[0]:
            out.append((a, cut[0]))
        if b > cut[1]:
            out.append((cut[1], b))
    return out


@dataclass(frozen=True)
class Reference:
    start: int
    end: int


@dataclass(frozen=True)
class Question:
    """A question, the corpus (or document) it is about, and where its answer is; a ``scoped``
    question is asked of its own corpus only (a filter on it), as a reviewer asks of one contract."""

    question: str
    corpus_id: str
    references: tuple[Reference, ...] = ()
    expected_doc: str | None = None
    expected_section: str | None = None
    scoped: bool = False


@dataclass(frozen=True)
class Retrieved:
    corpus_id: str
    start: int
    end: int
    sections: tuple[str, ...] = ()  # every heading path its text lies under


def _coverage(question: Question, chunks: list[Retrieved]) -> tuple[list[Span], list[Span], list[Span]]:
    """(covered reference text, reference text no chunk covers, union of the chunks that cover
    any) over the chunks of the question's corpus."""
    refs = [(r.start, r.end) for r in question.references]
    unused = list(refs)
    covered: list[Span] = []
    touching: list[Span] = []
    for chunk in chunks:
        if chunk.corpus_id != question.corpus_id:
            continue
        for ref in refs:
            hit = _overlap((chunk.start, chunk.end), ref)
            if hit is not None:
                unused = _subtract(unused, hit)
                covered = _merge([hit, *covered])
                touching = _merge([(chunk.start, chunk.end), *touching])
    return covered, unused, touching


def token_scores(question: Question, retrieved: list[Retrieved]) -> tuple[float, float, float]:
    """(recall, precision, iou) of one question over the retrieved chunks."""
    covered, unused, _ = _coverage(question, retrieved)
    found = _total(covered)
    reference_size = _total([(r.start, r.end) for r in question.references])
    retrieved_size = _total([(c.start, c.end) for c in retrieved])
    recall = found / reference_size if reference_size else 0.0
    precision = found / retrieved_size if retrieved_size else 0.0
    iou_den = retrieved_size + _total(unused)
    return recall, precision, (found / iou_den if iou_den else 0.0)


def precision_omega(question: Question, corpus_chunks: list[Retrieved]) -> float:
    """Best achievable precision: intersection over the union of every chunk touching a
    reference plus the reference text no chunk covers."""
    covered, unused, touching = _coverage(question, corpus_chunks)
    return _total(covered) / _total(_merge(touching + unused)) if covered else 0.0


def is_hit(question: Question, chunk: Retrieved) -> bool:
    """A retrieved chunk answers the question: it overlaps an expected span, or comes from the
    expected document (and section, when one is given)."""
    if question.references:
        return chunk.corpus_id == question.corpus_id and any(
            chunk.start < r.end and r.start < chunk.end for r in question.references)
    if chunk.corpus_id != (question.expected_doc or question.corpus_id):
        return False
    return question.expected_section is None or any(question.expected_section.lower() in s.lower() for s in chunk.sections)


def bootstrap_ci(values: list[float], level: float = 0.95, resamples: int = 2000, seed: int = 0) -> tuple[float, float]:
    """Percentile-bootstrap confidence interval of the mean of ``values`` (questions resampled with
    replacement, ``resamples`` times, from a fixed ``seed``: the same values give the same interval).
    For a paired comparison pass the per-question differences. (0, 0) for no values."""
    return bootstrap_ci_of_sets([values], level, resamples, seed)


def bootstrap_ci_of_sets(sets: list[list[float]], level: float = 0.95, resamples: int = 2000,
                         seed: int = 0) -> tuple[float, float]:
    """Interval of the mean of the sets' means (every set weighs the same, whatever its size):
    each set's questions are resampled on their own (a stratified bootstrap). Empty sets are
    skipped; (0, 0) when nothing is left."""
    sets = [np.asarray(s, dtype=np.float64) for s in sets if len(s)]
    if not sets:
        return (0.0, 0.0)
    rng = np.random.default_rng(seed)
    means = np.mean([s[rng.integers(0, len(s), size=(resamples, len(s)))].mean(axis=1) for s in sets], axis=0)
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


@dataclass
class Scores:
    """Per-question metric lists; ``summary`` gives means, standard deviations and bootstrap 95%
    confidence intervals (``recall_ci``, ``iou_ci``: [low, high])."""

    recall: list[float] = field(default_factory=list)
    precision: list[float] = field(default_factory=list)
    iou: list[float] = field(default_factory=list)
    precision_omega: list[float] = field(default_factory=list)
    ranks: list[int | None] = field(default_factory=list)  # rank of the first hit (1-based), None if none
    hits_at: dict[int, list[bool]] = field(default_factory=dict)  # per k of RECALL_AT: a hit in k results

    def add(self, question: Question, results: dict[int, list[Retrieved]], k: int, omega: float | None) -> None:
        """``results[n]``: what the retrieval path returns when asked for ``n`` results, for ``k``
        and every n of RECALL_AT. Token metrics over ``results[k]``; recall@n over ``results[n]``
        (asking for fewer results can merge differently); the first-hit rank (MRR) over the
        deepest list."""
        if question.references:  # token metrics need answer spans; a golden set without them has none
            recall, precision, iou = token_scores(question, results[k])
            self.recall.append(recall)
            self.precision.append(precision)
            self.iou.append(iou)
        if omega is not None:
            self.precision_omega.append(omega)
        deepest = results[max(results)]
        self.ranks.append(next((i for i, c in enumerate(deepest, start=1) if is_hit(question, c)), None))
        for n in RECALL_AT:
            self.hits_at.setdefault(n, []).append(any(is_hit(question, c) for c in results[n]))

    def summary(self) -> dict:
        def mean(values):
            return round(100 * statistics.fmean(values), 2) if values else None

        def std(values):
            return round(100 * statistics.pstdev(values), 2) if values else None

        def ci(values):
            return [round(100 * v, 2) for v in bootstrap_ci(values)] if values else None

        out = {"n_questions": len(self.ranks), "recall": mean(self.recall), "recall_std": std(self.recall),
               "precision": mean(self.precision), "precision_std": std(self.precision),
               "precision_omega": mean(self.precision_omega), "precision_omega_std": std(self.precision_omega),
               "iou": mean(self.iou), "iou_std": std(self.iou), "recall_ci": ci(self.recall), "iou_ci": ci(self.iou)}
        for k in RECALL_AT:
            out[f"recall_at_{k}"] = mean([1.0 if hit else 0.0 for hit in self.hits_at.get(k, [])])
        out["mrr"] = mean([1.0 / r if r else 0.0 for r in self.ranks])
        return out


def load_questions(path: str | Path) -> list[Question]:
    """Questions from Chroma's CSV format (question, references JSON, corpus_id; an optional
    ``scope`` column where ``corpus`` asks that row's question of its corpus only) or our YAML.
    Raises ValueError naming the file (and line or entry) for one that is missing, malformed or
    holds no questions: an empty question, a reference that is not a span (0 <= start < end) of
    whole numbers, a missing column or key, an unknown YAML key."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"no question file at {path}: give a Chroma-format .csv or a .yml golden set")
    out = _csv_questions(path) if brings_its_texts(path) else _yaml_questions(path)
    if not out:
        raise ValueError(f"{path} holds no questions: add some (see dbt_like_configs/evals/sample_questions.yml)")
    return out


CSV_COLUMNS = ("question", "references", "corpus_id")
YAML_KEYS = ("question", "document", "section")


def _csv_questions(path: Path) -> list[Question]:
    with path.open(newline="", encoding="utf-8-sig") as f:  # Excel's "CSV UTF-8" starts with a BOM
        reader = csv.DictReader(f)
        missing = [c for c in CSV_COLUMNS if c not in (reader.fieldnames or ())]
        if missing:
            raise ValueError(f"{path}: no column {', '.join(missing)} (columns: {', '.join(reader.fieldnames or ())}); "
                             f"a question set's columns are {', '.join(CSV_COLUMNS)} and optionally scope")
        rows = list(reader)
    out = []
    for line, row in enumerate(rows, start=2):
        if row.get("scope") not in (None, "", "corpus"):
            raise ValueError(f"{path}:{line}: scope must be empty or 'corpus', got {row['scope']!r}")
        if not (row["question"] or "").strip():
            raise ValueError(f"{path}:{line}: the question is empty")
        try:
            references = json.loads(row["references"] or "")
        except ValueError as exc:
            raise ValueError(f"{path}:{line}: references is not JSON ({exc})") from exc
        if not isinstance(references, list) or not all(isinstance(r, dict) for r in references):
            raise ValueError(f"{path}:{line}: references must be a JSON list of "
                             '{"start_index": N, "end_index": M} objects')
        spans = []
        for reference in references:
            start, end = reference.get("start_index"), reference.get("end_index")
            if not (type(start) is int and type(end) is int and 0 <= start < end):
                raise ValueError(f"{path}:{line}: reference {json.dumps(reference)} is no span of the document "
                                 "(whole numbers, 0 <= start_index < end_index)")
            spans.append(Reference(start, end))
        out.append(Question(row["question"], row["corpus_id"], tuple(spans), scoped=row.get("scope") == "corpus"))
    return out


def _yaml_questions(path: Path) -> list[Question]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8-sig"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not valid YAML in UTF-8: {str(exc).splitlines()[0]}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("questions"), list):
        raise ValueError(f"{path}: expected a mapping with a list of 'questions' (and 'corpus')")
    out = []
    for i, item in enumerate(data["questions"]):
        if not isinstance(item, dict):
            raise ValueError(f"{path}: questions[{i}] must be a mapping with 'question' and 'document'")
        unknown = sorted(set(map(str, item)) - set(YAML_KEYS))
        if unknown:
            raise ValueError(f"{path}: questions[{i}] has unknown key(s) {unknown}; use {', '.join(YAML_KEYS)}")
        values = {key: item.get(key) for key in YAML_KEYS}
        if not all(isinstance(values[key], str) and values[key].strip() for key in ("question", "document")) or (
                values["section"] is not None and not isinstance(values["section"], str)):
            raise ValueError(f"{path}: questions[{i}] needs a 'question' and a 'document' (and an optional 'section') "
                             "as text")
        out.append(Question(values["question"], values["document"], expected_doc=values["document"],
                            expected_section=values["section"]))
    return out


def shown_offsets(source: str, shown: str) -> Callable[[int], int]:
    """Where each character offset of ``source`` lies in ``shown``, a reading of it with lines left
    out or replaced (a parsed Markdown file without its rules and comments): an offset in a kept
    line moves with it, one in a replaced line to the same place in its replacement (``_in_line``), one
    in a line left out to where that line was (``_matched_lines`` pairs the lines)."""
    if source == shown:
        return lambda pos: pos
    source_lines, shown_lines = source.splitlines(keepends=True), shown.splitlines(keepends=True)
    source_starts = [0, *accumulate(map(len, source_lines))]
    shown_starts = [0, *accumulate(map(len, shown_lines))]
    # per source line: the shown line it reads as, and whether it is that line (else its replacement)
    target: list[tuple[int, bool | None]] = []
    previous = (-1, -1)
    for i, j in [*_matched_lines(source_lines, shown_lines), (len(source_lines), len(shown_lines))]:
        gap, shown_gap = i - previous[0] - 1, j - previous[1] - 1
        for k in range(gap):  # replaced one for one, else left out (all go to where the gap is shown)
            target.append((previous[1] + 1 + k, False) if gap == shown_gap else (previous[1] + 1, None))
        target.append((j, True))
        previous = (i, j)

    def moved(pos: int) -> int:
        line = bisect_right(source_starts, pos) - 1
        j, same = target[line]
        column = pos - source_starts[line]
        if same is None or j == len(shown_lines):
            return shown_starts[j]
        return shown_starts[j] + (column if same else _in_line(source_lines[line], shown_lines[j], column))

    return moved


def _in_line(source: str, shown: str, column: int) -> int:
    """Where ``column`` of line ``source`` lies in ``shown``, the line it reads as: the same column in
    their common start, as far from the end in their common end (text after an elided image), else
    where the two part."""
    common = len(os.path.commonprefix([source, shown]))
    if column <= common:
        return column
    tail = len(os.path.commonprefix([source[common:][::-1], shown[common:][::-1]]))
    return len(shown) - (len(source) - column) if column >= len(source) - tail else common


_DIFFLIB_CELLS = 1_000_000  # difflib on ranges up to this many line pairs (it is quadratic)
_LOOK_AHEAD = 100  # lines of a searched for a line of b on a range too long for difflib


def _matched_lines(a: list[str], b: list[str]) -> list[tuple[int, int]]:
    """The pairs of equal lines of ``a`` and ``b``, in order in both, as patience diff finds them: a
    range's common start and end, then its lines found once in each side of it (their longest run in
    order) as anchors, the ranges between them matched the same way; a range with no such line (every
    line of it repeated) by difflib, or, too long for it, each line of ``b`` paired with the next
    equal line of ``a`` at most ``_LOOK_AHEAD`` lines on. Near linear where lines are mostly unique, as a
    document's are; difflib alone on a whole document is quadratic in its changes."""
    pairs: list[tuple[int, int]] = []
    ranges = [(0, len(a), 0, len(b))]
    while ranges:
        a_lo, a_hi, b_lo, b_hi = ranges.pop()
        while a_lo < a_hi and b_lo < b_hi and a[a_lo] == b[b_lo]:
            pairs.append((a_lo, b_lo))
            a_lo, b_lo = a_lo + 1, b_lo + 1
        while a_lo < a_hi and b_lo < b_hi and a[a_hi - 1] == b[b_hi - 1]:
            a_hi, b_hi = a_hi - 1, b_hi - 1
            pairs.append((a_hi, b_hi))
        if a_lo == a_hi or b_lo == b_hi:
            continue
        anchors = _anchors(a, b, a_lo, a_hi, b_lo, b_hi)
        if not anchors and (a_hi - a_lo) * (b_hi - b_lo) <= _DIFFLIB_CELLS:
            gap = difflib.SequenceMatcher(None, a[a_lo:a_hi], b[b_lo:b_hi], autojunk=False)
            pairs += [(a_lo + x + n, b_lo + y + n) for x, y, size in gap.get_matching_blocks() for n in range(size)]
            continue
        if not anchors:  # too long for difflib: each line of b to the next equal line of a close ahead
            for j in range(b_lo, b_hi):
                i = next((i for i in range(a_lo, min(a_hi, a_lo + _LOOK_AHEAD)) if a[i] == b[j]), None)
                if i is not None:
                    pairs.append((i, j))
                    a_lo = i + 1
            continue
        previous = (a_lo - 1, b_lo - 1)
        for i, j in [*anchors, (a_hi, b_hi)]:
            ranges.append((previous[0] + 1, i, previous[1] + 1, j))
            if i < a_hi:
                pairs.append((i, j))
            previous = (i, j)
    return sorted(pairs)


def _anchors(a: list[str], b: list[str], a_lo: int, a_hi: int, b_lo: int, b_hi: int) -> list[tuple[int, int]]:
    """The longest run, in order in both, of the lines found once in ``a[a_lo:a_hi]`` and once in
    ``b[b_lo:b_hi]``, as (index in ``a``, index in ``b``) pairs."""
    in_a, in_b = Counter(a[a_lo:a_hi]), Counter(b[b_lo:b_hi])
    where_b = {b[j]: j for j in range(b_lo, b_hi) if in_b[b[j]] == 1}
    candidates = [(i, where_b[a[i]]) for i in range(a_lo, a_hi) if in_a[a[i]] == 1 and a[i] in where_b]
    tails: list[int] = []  # per length of a run increasing in b, the candidate ending one with the least b
    tail_js: list[int] = []
    parent = [-1] * len(candidates)
    for k, (_, j) in enumerate(candidates):
        at = bisect_right(tail_js, j)
        parent[k] = tails[at - 1] if at else -1
        tails[at:at + 1], tail_js[at:at + 1] = [k], [j]
    anchors, k = [], tails[-1] if tails else -1
    while k >= 0:
        anchors.append(candidates[k])
        k = parent[k]
    return anchors[::-1]


def in_shown_text(questions: list[Question], corpus_id: str, moved: Callable[[int], int]) -> list[Question]:
    """``questions`` with the references of those about ``corpus_id`` moved from its file's text into
    the text it reads as (``shown_offsets``); a reference whose text was left out whole is dropped, and
    so is a question left without one (nothing the index holds could answer it)."""
    out = []
    for question in questions:
        if question.corpus_id == corpus_id and question.references:
            spans = (Reference(moved(ref.start), moved(ref.end)) for ref in question.references)
            question = replace(question, references=tuple(ref for ref in spans if ref.start < ref.end))
            if not question.references:
                continue
        out.append(question)
    return out


def brings_its_texts(path: str | Path) -> bool:
    """Whether a question set is Chroma's CSV format, which brings its own corpus texts (a YAML set
    asks about a corpus' documents)."""
    return Path(path).suffix.lower() == ".csv"


def question_set_corpus(path: str | Path) -> str | None:
    """The corpus a YAML question set names (its ``corpus`` key); None for a CSV or none named."""
    path = Path(path)
    if brings_its_texts(path):
        return None
    data = yaml.safe_load(path.read_text(encoding="utf-8-sig"))
    corpus = data.get("corpus") if isinstance(data, dict) else None
    return str(corpus) if corpus is not None else None
