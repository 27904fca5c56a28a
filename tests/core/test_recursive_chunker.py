"""Chunker invariants, property-tested: exact offsets, coverage, token limit, determinism."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_assets.core.chunking import ChunkingProfile, chunk_document
from rag_assets.core.chunking.cleaning import clean
from rag_assets.core.chunking.text import RecursiveChunker
from rag_assets.core.models import Element, ParsedDocument
from rag_assets.core.tokens import MINILM_TOKENIZER, get_token_counter

COUNTERS = {name: get_token_counter(name) for name in ("cl100k_base", MINILM_TOKENIZER)}

words = st.sampled_from(
    ["refund", "policy", "the", "robot", "E-217", "3.5", "Dr.", "naïve", "日本語", "テキスト", "🎉", "x" * 40,
     "supercalifragilistic", "(see", "note)", "\u200b", "مرحبا"]
)
separators = st.sampled_from(
    [" ", " ", " ", "\n", "\n\n", ". ", "? ", "\t", "  ", ".\n", ".\n\n", " \n \n", "\n  ", ",\n/", "!\n\t", "\u00a0", "\u3000"]
)
texts = st.lists(st.tuples(words, separators), max_size=400).map(lambda parts: "".join(w + s for w, s in parts))


def check_spans(text, spans, counter, max_tokens):
    for start, end in spans:
        assert 0 <= start < end <= len(text)
        assert counter.count(text[start:end]) <= max_tokens
        assert text[start:end].strip(), "a chunk is never whitespace only"
        assert not text[start].isspace() or text[start - 1] == "\n"
    covered = bytearray(len(text))
    for start, end in spans:
        covered[start:end] = b"\x01" * (end - start)
    missing = [i for i, ch in enumerate(text) if not ch.isspace() and not covered[i]]
    assert not missing, f"uncovered chars at {missing[:5]}"
    assert [s for s, _ in spans] == sorted(s for s, _ in spans)


@pytest.mark.parametrize("name", sorted(COUNTERS))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts, max_tokens=st.integers(12, 120), overlap_frac=st.sampled_from([0, 0.1, 0.3]))
def test_recursive_invariants(name, text, max_tokens, overlap_frac):
    counter = COUNTERS[name]
    chunker = RecursiveChunker(max_tokens, int(max_tokens * overlap_frac), counter)
    chunks = chunker.chunk(text)
    spans = [(c.start, c.end) for c in chunks]
    check_spans(text, spans, counter, max_tokens)
    # Counts read off the whole-text tokenisation must equal a fresh count of each chunk.
    assert [c.tokens for c in chunks] == [counter.count(text[s:e]) for s, e in spans]
    assert chunker.chunk_spans(text) == spans


@pytest.mark.parametrize("name", sorted(COUNTERS))
@pytest.mark.parametrize(
    "text",
    ["", "   \n\n\t ", "a" * 100_000, "日本語の文章です。" * 3000, ("word " * 50 + "\n\n") * 40, "x" * 5000 + " tail"],
    ids=["empty", "whitespace", "100k-no-spaces", "cjk", "paragraphs", "long-token-then-word"],
)
def test_recursive_edge_cases(name, text):
    counter = COUNTERS[name]
    spans = RecursiveChunker(64, 8, counter).chunk_spans(text)
    check_spans(text, spans, counter, 64)
    if not text.strip():
        assert spans == []


def test_coalesces_small_paragraphs_up_to_the_limit():
    counter = COUNTERS["cl100k_base"]
    text = "\n\n".join(f"Paragraph {i} is short." for i in range(200))
    spans = RecursiveChunker(100, 0, counter).chunk_spans(text)
    sizes = [counter.count(text[s:e]) for s, e in spans]
    assert max(sizes) <= 100
    # Coalescing: every chunk but the last is filled to within one paragraph of the limit.
    assert min(sizes[:-1]) > 100 - 2 * counter.count("Paragraph 199 is short.\n\n")


def test_overlap_repeats_text_of_the_previous_chunk():
    counter = COUNTERS["cl100k_base"]
    text = " ".join(f"w{i}" for i in range(3000))
    spans = RecursiveChunker(100, 20, counter).chunk_spans(text)
    overlaps = [prev_end - start for (_, prev_end), (start, _) in zip(spans, spans[1:])]
    assert all(o > 0 for o in overlaps)
    assert all(counter.count(text[s:pe]) <= 21 for (s, _), (_, pe) in zip(spans[1:], spans))


@settings(max_examples=30, deadline=None)
@given(text=texts)
def test_chunk_document_header_included_in_the_limit(text):
    counter = COUNTERS[MINILM_TOKENIZER]
    doc = ParsedDocument(
        doc_id="d.md", uri="file:///d.md", content_hash="h", source_version="v", title="A fairly long title " * 3,
        content_type="markdown", text=text,
        elements=(Element(0, len(text), "NarrativeText", heading_path=("Guide", "Refunds", "Enterprise")),),
    )
    profile = ChunkingProfile("p", max_tokens=512, overlap=8)
    chunked = chunk_document(doc, profile, counter, model_limit=96)
    for chunk in chunked.chunks:
        assert text[chunk.start : chunk.end] == chunk.text
        assert counter.count(chunk.embed_text) == chunk.tokens <= 96
        assert chunk.embed_text.endswith(clean(chunk.text, profile.cleaning))
        assert chunk.heading_path == ("Guide", "Refunds", "Enterprise")


raw_text = st.lists(
    st.sampled_from(list("ab Z9.,!?'\"()/-_\n\t  \r") + ["é", "日", "🎉", "\u00a0", "'s", "...", "\n\n", "word", " the"]),
    max_size=300,
).map("".join)


@pytest.mark.parametrize("name", sorted(COUNTERS))
@settings(max_examples=200, deadline=None)
@given(text=raw_text, max_tokens=st.integers(8, 40))
def test_counts_are_exact_on_arbitrary_character_soup(name, text, max_tokens):
    counter = COUNTERS[name]
    chunks = RecursiveChunker(max_tokens, 0, counter).chunk(text)
    spans = [(c.start, c.end) for c in chunks]
    check_spans(text, spans, counter, max_tokens)
    assert [c.tokens for c in chunks] == [counter.count(text[s:e]) for s, e in spans]


def test_split_exact_is_not_recursive_and_refuses_a_limit_with_no_room_for_text():
    from rag_assets.core.chunking.engine import split_exact

    counter = COUNTERS[MINILM_TOKENIZER]
    text = " ".join(["the"] * 1500)  # one token per piece: deeper than the recursion limit
    limit = counter.special_tokens + 1
    spans = split_exact(text, counter, 0, len(text), limit)
    assert len(spans) == 1500 and all(s.tokens == counter.count(text[s.start : s.end]) <= limit for s in spans)
    with pytest.raises(ValueError, match="max_tokens=2 leaves no room for text"):
        split_exact(text, counter, 0, len(text), counter.special_tokens)
    with pytest.raises(ValueError, match="alone takes 3 tokens, more than max_tokens=1"):
        split_exact("ab 🎉", COUNTERS["cl100k_base"], 0, 4, 1)  # never cut inside a char


def _paged(pages: list[list[tuple[str, str]]]) -> ParsedDocument:
    parts, elements, pos = [], [], 0
    for page, items in enumerate(pages, start=1):
        for category, text in items:
            if parts:
                parts.append("\n\n")
                pos += 2
            elements.append(Element(pos, pos + len(text), category, page=page))
            parts.append(text)
            pos += len(text)
    return ParsedDocument("r.pdf", "file:///r.pdf", "h", "v", "Report", "pdf", "".join(parts), tuple(elements))


def test_running_headers_and_footers_leave_the_embedded_text_as_whole_lines_only():
    """A footer holding the header's word ("ACME" in "ACME Confidential") was cut from sentences
    too, in an order that followed the set's hash seed; a page of furniture alone embedded ""."""
    doc = _paged([[("Header", "ACME"), ("NarrativeText", f"Page {n}: ACME Confidential data is kept."),
                   ("Footer", "ACME Confidential")] for n in range(1, 5)])
    counter = get_token_counter(MINILM_TOKENIZER)
    [chunk] = chunk_document(doc, ChunkingProfile("d", strategy="recursive"), counter, 256).chunks
    body = chunk.embed_text.split("\n\n", 1)[1]
    assert body == "\n\n".join(f"Page {n}: ACME Confidential data is kept." for n in range(1, 5))
    blank = _paged([[("Header", "ACME"), ("Footer", "ACME Confidential")]] * 4)  # pages left blank
    windowed = ChunkingProfile("s", strategy="sentence_window", max_tokens=128, window=0, embed_window=1,
                               min_tokens=0, header_weight=0.2, sentence_weight=0.3)  # as recommended embeds
    for profile in (ChunkingProfile("w", strategy="recursive", contextual_header=False), windowed):
        chunks = chunk_document(blank, profile, counter, 256).chunks
        assert chunks and all(c.embed_text.strip() for c in chunks)
