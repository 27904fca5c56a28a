"""Recursive chunking: split on paragraphs, lines, sentences, words, then tokens, and coalesce
the pieces back up to the token budget (see ``engine`` for how counts stay exact)."""

from __future__ import annotations

from rag_assets.core.chunking.engine import Span, TokenIndex, add_overlap, finalize, pack, pieces
from rag_assets.core.tokens import TokenCounter


class Chunker:
    """Base of every strategy: ``(max_tokens, overlap, token_counter)`` and ``chunk_spans``."""

    name = "base"

    def __init__(self, max_tokens: int, overlap: int = 0, token_counter: TokenCounter | None = None,
                 min_tokens: int = 0):
        """``min_tokens``: strategies that merge pieces merge those smaller than this."""
        if token_counter is None:
            raise ValueError(f"{type(self).__name__} needs a token_counter (the embedding model's tokenizer)")
        if max_tokens <= token_counter.special_tokens + 1:
            raise ValueError(f"max_tokens={max_tokens} leaves no room for text")
        if not 0 <= overlap < max_tokens:
            raise ValueError(f"overlap={overlap} must be >= 0 and smaller than max_tokens={max_tokens}")
        self.max_tokens = max_tokens
        self.overlap = overlap
        self.counter = token_counter
        self.min_tokens = min_tokens

    @property
    def budget(self) -> int:
        """Content tokens per chunk (the model's special tokens excluded)."""
        return self.max_tokens - self.counter.special_tokens

    def chunk_spans(self, text: str) -> list[tuple[int, int]]:
        """``(start, end)`` spans: ``counter.count(text[s:e]) <= max_tokens`` for each, every
        non-whitespace char covered, ordered by start."""
        return [(s.start, s.end) for s in self.chunk(text)]

    def chunk(self, text: str, elements=()) -> list[Span]:
        """Spans with their exact token counts; ``elements`` (parsed structure) may guide cuts."""
        raise NotImplementedError


class RecursiveChunker(Chunker):
    """Paragraph -> line -> sentence -> word -> token splitting, coalesced up to the budget."""

    name = "recursive"

    def chunk(self, text: str, elements=()) -> list[Span]:
        if not text or text.isspace():
            return []
        index = TokenIndex(text, self.counter)
        bounds = pieces(index, self.budget)
        spans = pack(index, bounds, self.budget - self.overlap)
        spans = add_overlap(index, spans, self.overlap, self.budget)
        return finalize(index, spans, self.max_tokens)
