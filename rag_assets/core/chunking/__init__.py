"""Chunk parsed documents under a profile, with exact spans and a contextual header.

``chunk_document`` guarantees for every chunk: ``doc.text[start:end] == chunk.text`` and
``counter.count(chunk.embed_text) <= min(profile.max_tokens, model_limit)``.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import asdict, dataclass

from rag_assets.core.hashing import settings_hash
from rag_assets.core.models import Chunk, ChunkedDocument, Element, ParsedDocument
from rag_assets.core.chunking.recursive import RecursiveChunker
from rag_assets.core.tokens import TokenCounter

CHUNKERS = {RecursiveChunker.name: RecursiveChunker}
CHUNKER_REVISION = "1"


@dataclass(frozen=True)
class ChunkingProfile:
    """The chunking settings a profile in ``profiles/chunking.yml`` declares."""

    name: str
    strategy: str = "recursive"
    max_tokens: int = 256
    overlap: int = 0
    contextual_header: bool = True

    def fingerprint(self) -> str:
        """Changes whenever the chunks this profile produces could change."""
        return settings_hash({**asdict(self), "revision": CHUNKER_REVISION})


def contextual_header(title: str, heading_path: tuple[str, ...]) -> str:
    """The text prepended to a chunk for embedding only ("Document: ...\\nSection: ...")."""
    header = f"Document: {title[:120]}\n"
    if heading_path:
        header += f"Section: {' > '.join(heading_path)[:200]}\n"
    return header + "\n"


def chunk_document(
    doc: ParsedDocument, profile: ChunkingProfile, counter: TokenCounter, model_limit: int
) -> ChunkedDocument:
    """Split ``doc`` into chunks that fit both the profile and the embedding model's limit."""
    if profile.strategy not in CHUNKERS:
        raise ValueError(f"unknown chunking strategy {profile.strategy!r}; known: {sorted(CHUNKERS)}")
    limit = min(profile.max_tokens, model_limit)
    elements = sorted(doc.elements, key=lambda el: el.start)
    starts = [el.start for el in elements]
    header_room = 0
    if profile.contextual_header:
        paths = {el.heading_path for el in elements} | {()}
        header_room = max(counter.count(contextual_header(doc.title, p)) - counter.special_tokens for p in paths)
    if limit - header_room < max(16, limit // 4):
        raise ValueError(
            f"{doc.doc_id}: contextual header takes {header_room} of {limit} tokens; "
            "raise max_tokens or set contextual_header: false in the profile"
        )
    chunker = CHUNKERS[profile.strategy](limit - header_room, min(profile.overlap, (limit - header_room) // 2), counter)
    fingerprint = profile.fingerprint()
    chunks: list[Chunk] = []
    for start, end in chunker.chunk_spans(doc.text):
        covering = _overlapping(elements, starts, start, end)
        path = covering[0].heading_path if covering else ()
        header = contextual_header(doc.title, path) if profile.contextual_header else ""
        text = doc.text[start:end]
        embed_text = header + text
        tokens = counter.count(embed_text)
        if tokens > limit:  # BPE merges across the header seam: never truncate, fail loudly
            raise AssertionError(f"{doc.doc_id}: chunk at {start}:{end} has {tokens} > {limit} tokens")
        chunks.append(
            Chunk(
                doc_id=doc.doc_id,
                chunk_index=len(chunks),
                start=start,
                end=end,
                text=text,
                embed_text=embed_text,
                tokens=tokens,
                heading_path=path,
                page=next((el.page for el in covering if el.page is not None), None),
                element_types=tuple(dict.fromkeys(el.category for el in covering)),
                strategy=profile.strategy,
                profile_hash=fingerprint,
            )
        )
    return ChunkedDocument(
        doc_id=doc.doc_id,
        uri=doc.uri,
        title=doc.title,
        content_hash=doc.content_hash,
        source_version=doc.source_version,
        content_type=doc.content_type,
        profile=profile.name,
        profile_hash=fingerprint,
        chunks=tuple(chunks),
    )


def _overlapping(elements: list[Element], starts: list[int], start: int, end: int) -> list[Element]:
    idx = max(0, bisect_right(starts, start) - 1)
    found = []
    while idx < len(elements) and elements[idx].start < end:
        if elements[idx].end > start:
            found.append(elements[idx])
        idx += 1
    return found
