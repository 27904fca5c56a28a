"""Chunk one parsed document under a profile, with exact spans and a contextual header."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import replace
from functools import lru_cache

from rag_assets.core.chunking.cleaning import clean, repeated_page_lines
from rag_assets.core.chunking.code import code_language
from rag_assets.core.chunking.engine import Span, split_exact
from rag_assets.core.chunking.profile import ChunkingProfile, row_token_limit
from rag_assets.core.chunking.registry import make_chunker
from rag_assets.core.chunking.text import RecursiveChunker
from rag_assets.core.models import Chunk, ChunkedDocument, Element, ParsedDocument
from rag_assets.core.tokens import TokenCounter, get_token_counter

SECTION_TOKENS = 32
#: a chunk holds at most this many chars per token of its limit: natural text holds 2-9, but a
#: tokenizer may read a run of chars as one token (MiniLM's WordPiece reads a word over 100 chars
#: as one unknown token), and a result must stay a size a prompt can hold
MAX_CHARS_PER_TOKEN = 16


class _Headers:
    """Contextual headers with the title cut to 120 chars and the section path to
    ``SECTION_TOKENS`` tokens (it is metadata: shortening it never shortens the chunk)."""

    def __init__(self, title: str, counter: TokenCounter, max_room: int | None = None,
                 model: TokenCounter | None = None):
        """With ``max_room``, a title whose header would take more than ``max_room`` tokens (120
        chars of CJK are about 120 tokens) is cut to the longest prefix that fits, if any does.
        With ``model`` (a profile sizing chunks in another tokenizer), the section path is cut to
        ``SECTION_TOKENS`` in both, so the model-side room (``_split_for_model``) bounds it too."""
        self.counter = counter
        self._counters = (counter,) if model is None else (counter, model)
        self.title = " ".join(title.split())[:120]
        self._section = lru_cache(maxsize=256)(self._section_line)
        if max_room is not None and self.room() > max_room:
            full, lo, hi = self.title, 0, len(self.title)
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if self._room(full[:mid]) <= max_room:
                    lo = mid
                else:
                    hi = mid - 1
            self.title = full[:lo].rstrip()

    def _section_line(self, path: tuple[str, ...]) -> str:
        section = " > ".join(" ".join(p.split()) for p in path)
        while section and any(c.count(section) - c.special_tokens > SECTION_TOKENS for c in self._counters):
            section = section[: max(1, len(section) * 3 // 4)]
        return f"Section: {section}\n" if section else ""

    def header(self, path: tuple[str, ...]) -> str:
        return f"Document: {self.title}\n{self._section(path)}\n"

    def room(self) -> int:
        """Upper bound of any header's tokens (specials excluded)."""
        return self._room(self.title)

    def _room(self, title: str) -> int:
        bare = self.counter.count(f"Document: {title}\nSection: \n\n") - self.counter.special_tokens
        return bare + SECTION_TOKENS + 2


def chunk_document(
    doc: ParsedDocument, profile: ChunkingProfile, counter: TokenCounter, model_limit: int, embed=None
) -> ChunkedDocument:
    """Split ``doc`` into chunks that fit both the profile and the embedding model's limit; a title
    too long for the contextual header to leave a quarter of the limit to text is shortened.
    Raises ValueError when the limit leaves no room for text after the contextual header."""
    limit = row_token_limit(profile, counter.name, model_limit)
    # A size_tokenizer naming the model's own tokenizer sizes with the model's counter.
    sizer = counter if profile.counts_in(counter.name) else get_token_counter(profile.size_tokenizer)
    size_limit = limit if sizer is counter else profile.max_tokens
    content_room = max(16, size_limit // 4)  # what the header must leave for the chunk's own text
    headers = _Headers(doc.title, sizer, size_limit - content_room, model=None if sizer is counter else counter)
    header_room = headers.room() if profile.contextual_header else 0
    if size_limit - header_room < content_room:
        raise ValueError(
            f"{doc.doc_id}: contextual header takes up to {header_room} of {size_limit} tokens; "
            "raise max_tokens or set contextual_header: false in the profile"
        )
    strategy = profile.strategy_for(doc)
    chunker = make_chunker(strategy, profile, size_limit - header_room, sizer, embed, model_limit,
                           code_language(doc.doc_id))
    elements = tuple(sorted(doc.elements, key=lambda el: el.start))
    starts = [el.start for el in elements]
    furniture = repeated_page_lines(doc.text, elements) if profile.cleaning.strip_page_furniture else frozenset()
    profile_hash = profile.fingerprint()
    spans = _cap_chars(doc.text, chunker.chunk(doc.text, elements), MAX_CHARS_PER_TOKEN * size_limit, sizer,
                       size_limit - header_room)
    if sizer is not counter:
        spans = _split_for_model(doc.text, spans, profile, counter, model_limit, _Headers(headers.title, counter))
    chunks: list[Chunk] = []
    for span in spans:
        chunks.append(_make_chunk(doc, span, len(chunks), elements, starts, headers, profile, counter, limit, furniture,
                                  strategy, profile_hash))
    _set_anchors(chunks, [(el.start, el.heading_path, el.anchor) for el in elements if el.anchor])
    return ChunkedDocument(
        doc_id=doc.doc_id,
        uri=doc.uri,
        title=doc.title,
        content_hash=doc.content_hash,
        source_version=doc.source_version,
        content_type=doc.content_type,
        profile=profile.name,
        profile_hash=profile_hash,
        chunks=tuple(chunks),
        header_weight=profile.header_weight,
        sentence_weight=profile.sentence_weight,
        tags=doc.tags,
    )


def _cap_chars(text: str, spans: list[Span], max_chars: int, counter: TokenCounter, max_tokens: int) -> list[Span]:
    """Spans over ``max_chars`` chars cut into pieces of at most that many (at the last whitespace
    in a piece's second half, else mid-word), each re-counted and re-split to ``max_tokens`` where
    the cut changed how it tokenises; a piece embeds its own text. A sentence window reaching into
    a span cut so is dropped (its chunk is returned alone)."""
    cut_spans = [(span.start, span.end) for span in spans if span.end - span.start > max_chars]
    if not cut_spans:
        return spans
    out: list[Span] = []
    for span in spans:
        if span.window and any(a < span.window[1] and span.window[0] < b for a, b in cut_spans):
            span = span._replace(window=None)
        if span.end - span.start <= max_chars:
            out.append(span)
            continue
        start = span.start
        while start < span.end:
            half, cut = start + max_chars // 2, min(start + max_chars, span.end)
            if cut < span.end:
                space = max(text.rfind(" ", half, cut), text.rfind("\n", half, cut))
                cut = space if space > half else cut
            out += [Span(p.start, p.end, p.tokens, heading_path=span.heading_path)
                    for p in split_exact(text, counter, start, cut, max_tokens)]
            start = cut
    return out


def _split_for_model(text: str, spans: list[Span], profile: ChunkingProfile, counter: TokenCounter,
                     model_limit: int, headers: "_Headers") -> list[Span]:
    """Spans sized with another tokenizer, re-split where the model's own tokenizer says they
    exceed its input limit (never truncated). A span that embeds other text than its own (a table
    row's ``column: value`` pieces) embeds its own text where that other text does not fit."""
    room = headers.room() if profile.contextual_header else 0
    splitter = RecursiveChunker(model_limit - room, 0, counter)
    out: list[Span] = []
    for span in spans:
        if span.embed_override is not None and counter.count(span.context + span.embed_override) + room > model_limit:
            span = span._replace(embed_override=None)
        body = span.context + text[span.start : span.end]
        if counter.count(body) + room <= model_limit:
            out.append(span)
            continue
        for start, end in splitter.chunk_spans(text[span.start : span.end]):
            out.append(Span(span.start + start, span.start + end, counter.count(text[span.start + start : span.start + end]),
                            heading_path=span.heading_path))
    return out


def _make_chunk(doc, span: Span, index, elements, starts, headers, profile, counter, limit, furniture, strategy, profile_hash) -> Chunk:
    covering = _overlapping(elements, starts, span.start, span.end)
    path = span.heading_path if span.heading_path is not None else (covering[0].heading_path if covering else ())
    text = doc.text[span.start : span.end]
    body = span.context + (span.embed_override if span.embed_override is not None else text)
    header = headers.header(path) if profile.contextual_header else ""
    embed_text = header + (clean(body, profile.cleaning, furniture) or body)  # a page of furniture alone: as it is
    tokens = counter.count(embed_text)
    own = embed_text if tokens <= limit else header + body  # the sentence alone (the chunker's budget fits it)
    if span.embed_span is not None:  # the sentence in its context, when that fits the model
        context = doc.text[span.embed_span[0] : span.embed_span[1]]
        wide = header + (clean(context, profile.cleaning, furniture) or context)
        wide_tokens = counter.count(wide)
        if wide_tokens <= limit:
            embed_text, tokens = wide, wide_tokens
    if tokens > limit:  # cleaning can change tokenisation: fall back to the raw text
        embed_text = header + body
        tokens = counter.count(embed_text)
    if tokens > limit:
        raise AssertionError(f"{doc.doc_id}: chunk {span.start}:{span.end} needs {tokens} > {limit} tokens")
    apart = ""
    if profile.header_weight is not None:  # embedded apart; header and text still fit the limit together
        apart, embed_text, own = header.rstrip("\n"), embed_text[len(header):], own[len(header):]
        tokens = counter.count(embed_text)
    sentence = own if profile.sentence_weight is not None and span.embed_span is not None else ""
    return Chunk(
        doc_id=doc.doc_id,
        chunk_index=index,
        start=span.start,
        end=span.end,
        text=text,
        embed_text=embed_text,
        tokens=tokens,
        heading_path=tuple(path),
        page=(page := _start_page(covering)),
        page_end=max(el.page for el in covering if el.page is not None) if page is not None else None,
        element_types=tuple(dict.fromkeys(el.category for el in covering)),
        strategy=strategy,
        profile_hash=profile_hash,
        window_start=span.window[0] if span.window else None,
        window_end=span.window[1] if span.window else None,
        ocr=any(el.ocr for el in covering),
        header=apart,
        sentence=sentence,
        sections=tuple(dict.fromkeys(" > ".join(p) for p in (path, *(el.heading_path for el in covering), *span.sections)
                                     if p)),
    )


def _set_anchors(chunks: list[Chunk], anchored: list[tuple[int, tuple[str, ...], str]]) -> None:
    """Give each chunk the anchor of the deepest heading of its path that has one (a section
    without an id links to the one it is in): of the last heading of that path that starts where
    or before the chunk does (a repeated heading's own), else of its first (a chunk that starts
    before its heading's markup); ``anchored``: (start, heading path, anchor) in page order."""
    if not anchored:
        return
    first: dict[tuple[str, ...], str] = {}
    for _, path, anchor in anchored:
        first.setdefault(path, anchor)
    latest: dict[tuple[str, ...], str] = {}
    k = 0
    for i in sorted(range(len(chunks)), key=lambda i: chunks[i].start):
        while k < len(anchored) and anchored[k][0] <= chunks[i].start:
            latest[anchored[k][1]] = anchored[k][2]
            k += 1
        path = chunks[i].heading_path
        chunks[i] = replace(chunks[i], anchor=next((latest.get(path[:n]) or first[path[:n]]
                                                    for n in range(len(path), 0, -1) if path[:n] in first), None))


def _start_page(covering) -> int | None:
    """The page where the chunk starts: its first element's, a page-less heading passed over (an
    e-mail attachment's heading before the attachment's first page). A chunk that starts in
    page-less text (an e-mail's body before a PDF attachment's pages) has none, and no end page."""
    for element in covering:
        if element.page is not None:
            return element.page
        if element.category != "Title":
            return None
    return None


def _overlapping(elements: tuple[Element, ...], starts: list[int], start: int, end: int) -> list[Element]:
    idx = max(0, bisect_right(starts, start) - 1)
    found = []
    while idx < len(elements) and elements[idx].start < end:
        if elements[idx].end > start:
            found.append(elements[idx])
        idx += 1
    return found
