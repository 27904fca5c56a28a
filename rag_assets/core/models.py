"""Plain value types passed between pipeline stages."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class RawDocument:
    """The bytes of one document as read from its source, with their content hash."""

    doc_id: str
    uri: str
    content_hash: str
    size: int
    source_version: str
    data: bytes


@dataclass(frozen=True)
class Element:
    """A span of the parsed text with the structural facts unstructured found for it."""

    start: int
    end: int
    category: str
    page: int | None = None
    heading_path: tuple[str, ...] = ()
    ocr: bool = False  # its text was read by OCR from a scan or a picture (it may hold misreadings)
    anchor: str | None = None  # a web page's heading: the id a link to its section ends with (#anchor)


@dataclass(frozen=True)
class ParsedDocument:
    """Text of a document plus element spans that index into it exactly."""

    doc_id: str
    uri: str
    content_hash: str
    source_version: str
    title: str
    content_type: str
    text: str
    elements: tuple[Element, ...] = ()
    tags: tuple[str, ...] = ()  # the document's own (front matter tags, keywords), beside the corpus'
    ocr_pages: int = 0  # the pages and pictures whose text OCR read (its misreadings are in the text)


@dataclass(frozen=True)
class Chunk:
    """A contiguous span ``text[start:end]`` of a parsed document.

    ``embed_text`` is what the embedder sees (contextual header + chunk text); ``text`` stays clean.
    ``header`` is the contextual header when the profile embeds it apart (``header_weight``: the
    row's vector mixes the two embeddings) and then not part of ``embed_text``; empty otherwise.
    ``sentence`` is the chunk's own embedded text when the profile mixes it into a sentence window's
    (``sentence_weight``); empty otherwise.
    """

    doc_id: str
    chunk_index: int
    start: int
    end: int
    text: str
    embed_text: str
    tokens: int
    heading_path: tuple[str, ...] = ()
    page: int | None = None  # where the chunk starts
    page_end: int | None = None  # where it ends: ``page`` when it lies on one
    element_types: tuple[str, ...] = ()
    strategy: str = ""
    profile_hash: str = ""
    window_start: int | None = None
    window_end: int | None = None
    header: str = ""
    sentence: str = ""
    ocr: bool = False  # some of its text was read by OCR (an element's ``ocr``)
    # Every heading path (joined with " > ") its text lies under, ``heading_path``'s first: a chunk
    # that took in a small section after its own lists that one too.
    sections: tuple[str, ...] = ()
    anchor: str | None = None  # the id of the nearest heading of ``heading_path`` a web page gives one


@dataclass(frozen=True)
class ChunkedDocument:
    """All chunks of one parsed document under one chunking profile."""

    doc_id: str
    uri: str
    title: str
    content_hash: str
    source_version: str
    content_type: str
    profile: str
    profile_hash: str
    chunks: tuple[Chunk, ...] = ()
    header_weight: float | None = None  # each chunk's vector: (1 - w) x its text's + w x its header's
    sentence_weight: float | None = None  # and s x its own sentence's, taken from the text's share
    tags: tuple[str, ...] = ()  # the parsed document's own


@dataclass(frozen=True)
class EmbeddedDocument:
    """Chunks of one document with one vector each, from one embedding model."""

    chunked: ChunkedDocument
    model: str
    vectors: tuple[tuple[float, ...], ...] = field(default_factory=tuple)
