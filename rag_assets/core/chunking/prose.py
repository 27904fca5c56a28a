"""Chunkers built on sentences: whole sentences packed to the budget, semantic breakpoints between
them, and one sentence per chunk carrying its window."""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Sequence

import numpy as np

from rag_assets.core.chunking.base import Chunker, Embed
from rag_assets.core.chunking.engine import Span, TokenIndex, finalize, strip_span
from rag_assets.core.chunking.packing import Item, finalize_items, merge_small, pack_units, split_units
from rag_assets.core.chunking.sentences import sentence_spans
from rag_assets.core.models import Element
from rag_assets.core.parsing.structure import gfm_header


_WORD = re.compile(r"[^\W_]")  # a letter or a digit


def prose_units(text: str, elements: Sequence[Element] = ()) -> list[tuple[int, int]]:
    """The sentences of ``text``, each code block (a CodeSnippet element) one unit: code has no
    sentences (its blank-line paragraphs, "# comment" lines and YAML list items were units of their own).
    A unit of no letter or digit (a rule of "---", a signature line of dots, a lone ")") is joined to
    the unit before it (the first, to the one after): alone it was an index row of punctuation."""
    return _marks_joined(text, _units(text, elements))


def _marks_joined(text: str, units: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    lead = None  # the start of the marks before the first unit with a word
    for a, b in units:
        if not _WORD.search(text, a, b):
            if out:
                out[-1] = (out[-1][0], b)
            elif lead is None:
                lead = a
            continue
        out.append((a if lead is None else lead, b))
        lead = None
    return out if lead is None else [(lead, units[-1][1])]  # marks alone: one unit


def _units(text: str, elements: Sequence[Element]) -> list[tuple[int, int]]:
    """Sentences, a code block whole, a table without outer pipes a unit a row (``_pipeless_rows``)."""
    whole = [(e, [span] if (span := strip_span(text, e.start, e.end))[0] < span[1] else [])
             for e in elements if e.category == "CodeSnippet"]
    rows = [(e, found) for e in elements if e.category == "Table" and (found := _pipeless_rows(text, e))]
    units: list[tuple[int, int]] = []
    pos = 0
    for element, own in sorted(whole + rows, key=lambda pair: pair[0].start):
        if element.start < pos:
            continue
        units += sentence_spans(text, pos, element.start) + own
        pos = element.end
    return units + sentence_spans(text, pos)


def _pipeless_rows(text: str, table: Element) -> list[tuple[int, int]]:
    """A GFM table without outer pipes ("Name | Value" over "--- | ---"; ``sentence_spans`` reads rows
    by their opening pipe): its header and delimiter rows as one unit, then each row a unit; [] for any
    other table."""
    rows = [(table.start + m.start(), table.start + m.end())
            for m in re.finditer(r"\S(?:[^\n]*\S)?", text[table.start : table.end])]
    if len(rows) < 2 or text[rows[0][0]] == "|" or not gfm_header(text[slice(*rows[0])], text[slice(*rows[1])]):
        return []
    return [(rows[0][0], rows[1][1]), *rows[2:]]


class SentenceChunker(Chunker):
    """Whole sentences packed up to the budget; overlap repeats whole trailing sentences."""

    name = "sentence"

    def chunk(self, text: str, elements: Sequence[Element] = ()) -> list[Span]:
        if not text or text.isspace():
            return []
        index = TokenIndex(text, self.counter, chars=True)
        spans = pack_units(index, prose_units(text, elements), self.budget, self.overlap)
        return finalize(index, spans, self.max_tokens)


class SemanticChunker(Chunker):
    """Breakpoints where the embedding similarity of adjacent sentences drops (distance above
    the ``percentile``-th percentile); groups over the limit are split by sentences, so the hard
    maximum holds (which similarity-only chunkers do not guarantee)."""

    name = "semantic"
    profile_options = {"min_tokens": "min_tokens", "percentile": "semantic_percentile", "buffer": "semantic_buffer"}
    uses_embedder = True

    def __init__(self, max_tokens, overlap=0, token_counter=None, embed: Embed | None = None,
                 percentile: float = 90.0, buffer: int = 1, min_tokens: int = 50, embed_limit: int | None = None):
        super().__init__(max_tokens, overlap, token_counter, min_tokens)
        if embed is None:
            raise ValueError("semantic chunking needs an embedder (embed=...)")
        self.embed = embed
        self.percentile = percentile
        self.buffer = buffer
        self.embed_limit = embed_limit or max_tokens

    def chunk(self, text: str, elements: Sequence[Element] = ()) -> list[Span]:
        if not text or text.isspace():
            return []
        index = TokenIndex(text, self.counter, chars=True)
        # A long code block is cut at its lines, a blank one among them: pieces of white space go.
        pieces = (strip_span(text, a, b) for a, b in split_units(index, prose_units(text, elements), self.budget))
        sentences = [(a, b) for a, b in pieces if a < b]
        if len(sentences) < 3:
            return finalize_items(index, [Item(a, b) for a, b in pack_units(index, sentences, self.budget)], self.max_tokens)
        # Compare the ``size`` sentences before each boundary with the ``size`` after it.
        size = self.buffer + 1
        windows = []
        for k in range(len(sentences)):
            a, b = sentences[k][0], sentences[min(len(sentences), k + size) - 1][1]
            # The similarity signal only needs a window's head when it is longer than the model reads.
            head = finalize(index, [(a, b)], self.embed_limit)[0]
            windows.append(text[head.start : head.end])
        vectors = np.asarray(self.embed(windows), dtype=np.float32)
        vectors /= np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)
        left = vectors[[max(0, i - size + 1) for i in range(len(sentences) - 1)]]
        right = vectors[1:]
        distances = 1.0 - np.sum(left * right, axis=1)
        threshold = float(np.percentile(distances, self.percentile))
        groups: list[list[tuple[int, int]]] = [[sentences[0]]]
        for sentence, distance in zip(sentences[1:], distances):
            if distance > threshold:
                groups.append([])
            groups[-1].append(sentence)
        items = [Item(a, b) for group in groups for a, b in pack_units(index, group, self.budget)]
        items = merge_small(index, items, self.min_tokens, self.budget)
        return finalize_items(index, items, self.max_tokens)


class SentenceWindowChunker(Chunker):
    """One sentence per chunk (the retrieval unit), each carrying the span of the ``window``
    sentences around it for expansion at query time; with ``embed_window`` the sentence is
    embedded together with that many sentences on each side (its meaning in context).

    A sentence over the budget is split into the fewest pieces that fit, at its clauses where it
    can (each piece its own chunk, embedded on its own). A piece's window still spans its whole
    sentence when the rest of the sentence is at most one more chunk's budget, so results never
    end inside a sentence that reads as one; a longer run (a line with no end marks, a run-on
    block) keeps windows of pieces."""

    name = "sentence_window"
    profile_options = {"window": "window", "embed_window": "embed_window"}

    def __init__(self, max_tokens, overlap=0, token_counter=None, window: int = 2, embed_window: int = 0):
        super().__init__(max_tokens, overlap, token_counter)
        self.window = window
        self.embed_window = embed_window

    def chunk(self, text: str, elements: Sequence[Element] = ()) -> list[Span]:
        if not text or text.isspace():
            return []
        index = TokenIndex(text, self.counter, chars=True)
        sentences = prose_units(text, elements)
        pieces = [piece for sentence in sentences for piece in pack_units(index, [sentence], self.budget)]
        spans = finalize(index, pieces, self.max_tokens)
        own = self._own_spans(index, sentences, spans)
        last = len(spans) - 1
        out = []
        for i, span in enumerate(spans):
            window = (own[max(0, i - self.window)][0], own[min(last, i + self.window)][1])
            embed = None
            if self.embed_window:
                embed = (spans[max(0, i - self.embed_window)].start, spans[min(last, i + self.embed_window)].end)
            out.append(Span(span.start, span.end, span.tokens, window=window, embed_span=embed))
        return out

    def _own_spans(self, index: TokenIndex, sentences: list[tuple[int, int]],
                   spans: list[Span]) -> list[tuple[int, int]]:
        """Per chunk, what its window counts as one sentence: its whole sentence, or the chunk
        itself when it is a piece of a sentence whose rest exceeds the budget."""
        starts = [a for a, _ in sentences]
        own = []
        for span in spans:
            a, b = sentences[bisect_right(starts, span.start) - 1]  # pieces never cross sentences
            whole = index.count(a, b) - index.count(span.start, span.end) <= self.budget
            own.append((a, b) if whole else (span.start, span.end))
        return own
