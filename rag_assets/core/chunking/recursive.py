"""Recursive chunking: split on paragraphs, lines, sentences, words, then tokens, and coalesce
the pieces back up to the token budget.

Token counts are estimated from one tokenisation of the whole text (token end offsets), then every
chunk is counted exactly and re-split if the estimate was short: no chunk ever exceeds the limit.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

from rag_assets.core.tokens import TokenCounter

SEPARATORS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\n[ \t]*\n\s*"),  # paragraphs
    re.compile(r"\n"),  # lines
    re.compile(r"(?<=[.!?;:。！？])[\"')\]]*\s+"),  # sentences and clauses
    re.compile(r"\s+"),  # words
)


class _Estimate:
    """Token counts of spans from the token end offsets of the whole text."""

    def __init__(self, ends: list[int]):
        self.ends = ends

    def __call__(self, start: int, end: int) -> int:
        """Tokens overlapping ``[start, end)``: a token cut by either edge counts, as it would
        still be at least one token when the span is encoded on its own."""
        first = bisect_right(self.ends, start)
        return min(bisect_left(self.ends, end) + 1, len(self.ends)) - first

    def cut_after(self, start: int, tokens: int) -> int:
        """Char offset after the ``tokens``-th token ending past ``start``."""
        idx = bisect_right(self.ends, start) + tokens - 1
        return self.ends[min(idx, len(self.ends) - 1)]


class RecursiveChunker:
    """Chunks of at most ``max_tokens`` (as ``token_counter`` counts them, specials included)."""

    name = "recursive"

    def __init__(self, max_tokens: int, overlap: int = 0, token_counter: TokenCounter | None = None):
        if token_counter is None:
            raise ValueError("RecursiveChunker needs a token_counter (the embedding model's tokenizer)")
        if max_tokens <= token_counter.special_tokens + 1:
            raise ValueError(f"max_tokens={max_tokens} leaves no room for text")
        if not 0 <= overlap < max_tokens:
            raise ValueError(f"overlap={overlap} must be >= 0 and smaller than max_tokens={max_tokens}")
        self.max_tokens = max_tokens
        self.overlap = overlap
        self.counter = token_counter

    def chunk_spans(self, text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
        """``(start, end)`` char spans covering every non-whitespace char of ``text[start:end]``.

        Guarantees: ``counter.count(text[s:e]) <= max_tokens`` for every span; spans are trimmed of
        surrounding whitespace, ordered, and overlap only by the configured token overlap.
        """
        end = len(text) if end is None else end
        if not text[start:end].strip():
            return []
        estimate = _Estimate(self.counter.token_ends(text[start:end]))
        if start:
            estimate.ends = [e + start for e in estimate.ends]
        budget = self.max_tokens - self.counter.special_tokens
        pieces = self._split(text, start, end, 0, estimate, budget)
        # Leave room for the overlap that will be prepended to every chunk but the first.
        spans = _merge(pieces, estimate, budget - self.overlap)
        spans = [s for s in (_trim(text, a, b) for a, b in spans) if s[0] < s[1]]
        if self.overlap:
            spans = self._add_overlap(text, spans, estimate, budget)
        return self._enforce(text, spans, budget)

    def _split(self, text: str, start: int, end: int, level: int, est: _Estimate, budget: int) -> list[tuple[int, int]]:
        if est(start, end) <= budget:
            return [(start, end)]
        while level < len(SEPARATORS):
            cuts = [m.end() for m in SEPARATORS[level].finditer(text, start, end) if start < m.end() < end]
            if cuts:
                pieces: list[tuple[int, int]] = []
                for a, b in zip([start, *cuts], [*cuts, end]):
                    pieces.extend(self._split(text, a, b, level + 1, est, budget))
                return pieces
            level += 1
        return _token_pieces(start, end, est, budget)

    def _add_overlap(self, text: str, spans: list[tuple[int, int]], est: _Estimate, budget: int):
        out = [spans[0]]
        for (prev_start, _), (s, e) in zip(spans, spans[1:]):
            room = min(self.overlap, budget - est(s, e))
            if room > 0:
                first = bisect_right(est.ends, s)  # index of the first token ending after s
                idx = max(bisect_right(est.ends, prev_start), first - room)
                new_start = est.ends[idx - 1] if idx > 0 else 0
                new_start = _next_word_start(text, max(new_start, prev_start), s)
                if new_start < s and self.counter.count(text[new_start:e]) <= self.max_tokens:
                    s = new_start
            out.append((s, e))
        return out

    def _enforce(self, text: str, spans: list[tuple[int, int]], budget: int) -> list[tuple[int, int]]:
        """Count every span exactly; re-split any the estimate let through over the limit."""
        out: list[tuple[int, int]] = []
        for s, e in spans:
            out.extend(self._fit(text, s, e))
        return out

    def _fit(self, text: str, s: int, e: int) -> list[tuple[int, int]]:
        if self.counter.count(text[s:e]) <= self.max_tokens:
            return [(s, e)]
        # Cut at the longest prefix that fits (binary search on chars, snapped to whitespace).
        lo, hi = s + 1, e
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.counter.count(text[s:mid]) <= self.max_tokens:
                lo = mid
            else:
                hi = mid - 1
        cut = lo
        space = text.rfind(" ", s + 1, cut)
        newline = text.rfind("\n", s + 1, cut)
        boundary = max(space, newline)
        if boundary > s + (cut - s) // 2:
            cut = boundary
        head = _trim(text, s, cut)
        tail = _trim(text, cut, e)
        result = [head] if head[0] < head[1] else []
        if tail[0] < tail[1]:
            result.extend(self._fit(text, *tail))
        return result


def _token_pieces(start: int, end: int, est: _Estimate, budget: int) -> list[tuple[int, int]]:
    pieces = []
    pos = start
    while pos < end:
        cut = min(end, est.cut_after(pos, budget))
        if cut <= pos:
            cut = end
        pieces.append((pos, cut))
        pos = cut
    return pieces


def _merge(pieces: list[tuple[int, int]], est: _Estimate, budget: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    cur_start, cur_end = pieces[0]
    for a, b in pieces[1:]:
        if est(cur_start, b) <= budget:
            cur_end = b
        else:
            spans.append((cur_start, cur_end))
            cur_start, cur_end = a, b
    spans.append((cur_start, cur_end))
    return spans


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _next_word_start(text: str, pos: int, limit: int) -> int:
    """First char at or after ``pos`` that starts a word (so overlaps never begin mid-word)."""
    if pos == 0 or text[pos - 1].isspace():
        return _trim(text, pos, limit)[0] if pos < limit else limit
    m = re.compile(r"\s+").search(text, pos, limit)
    return m.end() if m else limit


__all__ = ["RecursiveChunker", "SEPARATORS"]
