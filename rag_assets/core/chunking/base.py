"""The one shape of every chunking strategy."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

from rag_assets.core.chunking.engine import Span
from rag_assets.core.models import Element
from rag_assets.core.tokens import TokenCounter

if TYPE_CHECKING:
    from rag_assets.core.chunking.profile import ChunkingProfile

#: texts -> one vector each (semantic chunking's breakpoints)
Embed = Callable[[list[str]], list[list[float]]]


class Chunker:
    """Base of every strategy: ``Chunker(max_tokens, overlap, token_counter)`` and
    ``chunk(text, elements) -> list[Span]``; every strategy guarantees exact spans and the limit."""

    name = "base"
    #: constructor keyword -> ``ChunkingProfile`` field, for each option the strategy takes from a profile
    profile_options: dict[str, str] = {}
    #: whether the strategy embeds while chunking (it then takes ``embed`` and ``embed_limit``)
    uses_embedder = False
    #: whether the strategy reads the document's language (it then takes ``language``)
    reads_language = False

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

    @classmethod
    def from_profile(cls, profile: ChunkingProfile, max_tokens: int, token_counter: TokenCounter,
                     embed: Embed | None = None, embed_limit: int | None = None, language: str = "") -> Chunker:
        """The strategy with ``profile``'s options (overlap capped at half of ``max_tokens``);
        ``embed`` and ``embed_limit`` (the model's input limit) reach strategies that embed, the
        document's ``language`` those that read it."""
        options = {arg: getattr(profile, field) for arg, field in cls.profile_options.items()}
        if cls.uses_embedder:
            options.update(embed=embed, embed_limit=embed_limit)
        if cls.reads_language:
            options.update(language=language)
        return cls(max_tokens, min(profile.overlap, max_tokens // 2), token_counter, **options)

    @property
    def budget(self) -> int:
        """Content tokens per chunk (the model's special tokens excluded)."""
        return self.max_tokens - self.counter.special_tokens

    def chunk_spans(self, text: str) -> list[tuple[int, int]]:
        """``(start, end)`` spans: ``counter.count(text[s:e]) <= max_tokens`` for each, every
        non-whitespace char covered, ordered by start."""
        return [(s.start, s.end) for s in self.chunk(text)]

    def chunk(self, text: str, elements: Sequence[Element] = ()) -> list[Span]:
        """Spans with their exact token counts; ``elements`` (parsed structure) may guide cuts."""
        raise NotImplementedError
