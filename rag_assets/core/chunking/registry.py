"""The strategies by name: the one list of them, which the config schema and the CLI read."""

from __future__ import annotations

from rag_assets.core.chunking.base import Chunker, Embed
from rag_assets.core.chunking.code import CodeChunker
from rag_assets.core.chunking.dialogue import FAQChunker, TranscriptChunker
from rag_assets.core.chunking.profile import ChunkingProfile
from rag_assets.core.chunking.prose import SemanticChunker, SentenceChunker, SentenceWindowChunker
from rag_assets.core.chunking.structured import MarkdownChunker, TableChunker
from rag_assets.core.chunking.text import FixedTokenChunker, RecursiveChunker
from rag_assets.core.tokens import TokenCounter

STRATEGIES: dict[str, type[Chunker]] = {
    cls.name: cls
    for cls in (FixedTokenChunker, SentenceChunker, RecursiveChunker, MarkdownChunker, TableChunker, CodeChunker,
                FAQChunker, TranscriptChunker, SemanticChunker, SentenceWindowChunker)
}
#: every name a profile may give as its strategy: the strategies, and ``auto`` (one chosen per document)
STRATEGY_NAMES = tuple(sorted(STRATEGIES)) + ("auto",)


def make_chunker(strategy: str, profile: ChunkingProfile, max_tokens: int, counter: TokenCounter,
                 embed: Embed | None = None, embed_limit: int | None = None, language: str = "") -> Chunker:
    """The ``strategy`` chunker with the profile's options (and the document's ``language``, for
    a strategy that reads it: ``code``)."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown chunking strategy {strategy!r}; known: {', '.join(STRATEGY_NAMES)}")
    return STRATEGIES[strategy].from_profile(profile, max_tokens, counter, embed, embed_limit, language)
