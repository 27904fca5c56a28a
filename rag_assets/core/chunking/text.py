"""Chunkers that cut plain text by tokens: fixed token windows, and recursive splitting on
paragraphs, lines, sentences, words, then tokens, coalesced back up to the token budget (see
``engine`` for how counts stay exact)."""

from __future__ import annotations

from typing import Sequence

from rag_assets.core.chunking.base import Chunker
from rag_assets.core.chunking.engine import Span, TokenIndex, add_overlap, finalize, pack, pieces, split_exact
from rag_assets.core.models import Element


class FixedTokenChunker(Chunker):
    """Windows of ``max_tokens`` tokens, consecutive windows sharing ``overlap`` tokens; each cut
    moves back (at most 16 tokens) to a word boundary when one is there."""

    name = "fixed"
    SNAP = 16
    # Trimming a window's leading space can add a token or two ("Congress" vs " Congress");
    # leaving that slack avoids re-splitting a window that would land just over the limit.
    SLACK = 2

    def chunk(self, text: str, elements: Sequence[Element] = ()) -> list[Span]:
        if not text or text.isspace():
            return []
        index = TokenIndex(text, self.counter)
        windows = self._windows(index)
        # Token-aligned windows keep their whitespace; only an unsafe edge costs a re-count.
        chars = index.to_chars([p for a, b, _ in windows for p in (a, b)])
        out: list[Span] = []
        for a, b, exact in windows:
            cs, ce = chars[a], chars[b]
            if exact is not None and exact <= self.max_tokens:
                if not text[cs].isspace() or not text[ce - 1].isspace() or text[cs:ce].strip():
                    out.append(Span(cs, ce, exact))
            # An unsafe window is re-split as each mode always did (finalize keeps edges on safe
            # cuts, split_exact strips and counts the chars): one fix-up for both could change
            # stored chunks under an unchanged fingerprint.
            elif self.overlap:
                out.extend(finalize(index, [(a, b)], self.max_tokens))
            elif cs < ce:
                out.extend(split_exact(text, self.counter, cs, ce, self.max_tokens))
        return out

    def _windows(self, index: TokenIndex) -> list[tuple[int, int, int | None]]:
        """``(start, end, tokens)`` of each window in index units; ``tokens`` counts it exactly
        (specials included) when both edges are safe cuts, else is None. Each end moves back to a
        safe cut within ``SNAP`` tokens when one is there; with overlap, each next window starts
        ``overlap`` tokens back, moved forward to a safe cut within ``SNAP`` tokens."""
        ends = index.ends
        item = ends.item
        total = len(ends)
        size = max(1, self.budget - self.SLACK)
        windows = []
        first, start, start_safe = 0, 0, True
        while first < total:
            last = min(first + size, total)  # one past the last token
            end_safe = last == total
            if not end_safe:
                for k in range(last, max(last - self.SNAP, first + 1) - 1, -1):
                    if index.safe(item(k - 1)):
                        last, end_safe = k, True
                        break
            end = item(last - 1) if last < total else index.n
            exact = last - first + self.counter.special_tokens if start_safe and end_safe else None
            windows.append((start, end, exact))
            if last >= total:
                break
            nxt, start, start_safe = last, end, end_safe
            if self.overlap:
                nxt = max(first + 1, last - self.overlap)
                start, start_safe = item(nxt - 1), False
                for k in range(nxt, min(nxt + self.SNAP, last)):
                    if index.safe(item(k - 1)):
                        nxt, start, start_safe = k, item(k - 1), True
                        break
            first = nxt
        return windows


class RecursiveChunker(Chunker):
    """Paragraph -> line -> sentence -> word -> token splitting, coalesced up to the budget."""

    name = "recursive"

    def chunk(self, text: str, elements: Sequence[Element] = ()) -> list[Span]:
        if not text or text.isspace():
            return []
        index = TokenIndex(text, self.counter)
        bounds = pieces(index, self.budget)
        spans = pack(index, bounds, self.budget - self.overlap)
        spans = add_overlap(index, spans, self.overlap, self.budget)
        return finalize(index, spans, self.max_tokens)
