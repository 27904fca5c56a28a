"""Chunk parsed documents under a profile, with exact spans and a contextual header.

``chunk_document`` guarantees for every chunk: ``doc.text[start:end] == chunk.text`` and
``counter.count(chunk.embed_text) <= row_token_limit(profile, counter.name, model_limit)``, where
``embed_text`` = contextual header + strategy context + (cleaned) chunk text; with the profile's
``header_weight`` the header is ``chunk.header`` instead, embedded apart, and the two together
still fit that limit.

Modules: ``profile`` (settings, fingerprint, row token limit), ``registry`` (strategies by name),
``document`` (``chunk_document``), ``base`` (the ``Chunker`` shape) and the strategies by kind:
``text`` (fixed, recursive), ``prose`` (sentence, semantic, sentence_window), ``structured``
(markdown, table), ``code``, ``dialogue`` (faq, transcript); ``auto`` picks one per document.
``engine`` and ``packing`` hold the exact-count machinery they share, with one verb per step:
*split* cuts what is over the budget until every piece fits, *pack* joins consecutive pieces up to
the budget, *finalize* trims spans and counts them exactly (re-splitting any still over).
"""

from rag_assets.core.chunking.document import chunk_document
from rag_assets.core.chunking.profile import ChunkingProfile, row_token_limit
from rag_assets.core.chunking.registry import STRATEGIES, STRATEGY_NAMES, make_chunker

__all__ = ["ChunkingProfile", "STRATEGIES", "STRATEGY_NAMES", "chunk_document", "make_chunker", "row_token_limit"]
