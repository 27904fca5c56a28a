"""Every chunking strategy behind one interface: ``Chunker(max_tokens, overlap, token_counter)``
and ``chunk(text, elements) -> list[Span]``; all guarantee exact spans and the token limit."""

from __future__ import annotations

import ast
import csv
import io
import re
from typing import Callable, Sequence

import numpy as np

from rag_assets.core.chunking.engine import Span, TokenIndex, finalize, fit_exact
from rag_assets.core.chunking.packing import Item, emit, fit_units, merge_small, pack_units
from rag_assets.core.chunking.recursive import Chunker, RecursiveChunker
from rag_assets.core.chunking.sentences import sentence_spans
from rag_assets.core.models import Element
from rag_assets.core.parsing.structure import markdown_elements


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
        if not self.overlap:
            return self._chunk_no_overlap(index, text)
        ends = index.ends
        item = ends.item
        total = len(ends)
        size = max(1, self.budget - self.SLACK)
        windows = []  # (start unit, end unit, exact tokens or None when an edge is not a safe cut)
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
        # Token-aligned windows keep their whitespace; only an unsafe edge costs a re-count.
        chars = index.to_chars([p for a, b, _ in windows for p in (a, b)])
        out: list[Span] = []
        for a, b, exact in windows:
            cs, ce = chars[a], chars[b]
            if exact is not None and exact <= self.max_tokens:
                if not text[cs].isspace() or not text[ce - 1].isspace() or text[cs:ce].strip():
                    out.append(Span(cs, ce, exact))
            else:
                out.extend(finalize(index, [(a, b)], self.max_tokens))
        return out


    def _chunk_no_overlap(self, index: TokenIndex, text: str) -> list[Span]:
        """Without overlap each window starts where the last ended: one pass over the
        boundaries, each moved back to a safe cut within ``SNAP`` tokens when one is there."""
        ends = index.ends
        total = len(ends)
        size = max(1, self.budget - self.SLACK)
        safe = index.safe
        item = ends.item
        bounds = [0]
        exact_edges = [True]
        first = 0
        while first + size < total:
            k = first + size
            for j in range(k, max(k - self.SNAP, first + 1) - 1, -1):
                if safe(item(j - 1)):
                    k = j
                    exact_edges.append(True)
                    break
            else:
                exact_edges.append(False)
            bounds.append(k)
            first = k
        bounds.append(total)
        exact_edges.append(True)
        units = [0, *(item(b - 1) for b in bounds[1:-1]), index.n]
        chars = index.to_chars(units)
        specials = self.counter.special_tokens
        out: list[Span] = []
        for i in range(len(bounds) - 1):
            cs, ce = chars[units[i]], chars[units[i + 1]]
            if cs >= ce:
                continue
            tokens = bounds[i + 1] - bounds[i] + specials
            if exact_edges[i] and exact_edges[i + 1] and tokens <= self.max_tokens:
                if not text[cs].isspace() or not text[ce - 1].isspace() or text[cs:ce].strip():
                    out.append(Span(cs, ce, tokens))
            else:
                out.extend(fit_exact(text, self.counter, cs, ce, self.max_tokens))
        return out


class SentenceChunker(Chunker):
    """Whole sentences packed up to the budget; overlap repeats whole trailing sentences."""

    name = "sentence"

    def chunk(self, text: str, elements: Sequence[Element] = ()) -> list[Span]:
        if not text or text.isspace():
            return []
        index = TokenIndex(text, self.counter, chars=True)
        spans = pack_units(index, sentence_spans(text), self.budget, self.overlap)
        return finalize(index, spans, self.max_tokens)


def _sections(text: str, elements: Sequence[Element]) -> list[tuple[int, int, tuple[str, ...], list[Element]]]:
    """Heading sections: (start, end, heading path, elements) from each Title to the next."""
    elements = sorted(elements, key=lambda e: e.start)
    starts = [0] + [e.start for e in elements if e.category == "Title" and e.start > 0]
    bounds = sorted(set(starts)) + [len(text)]
    out = []
    ei = 0
    for a, b in zip(bounds, bounds[1:]):
        members = []
        while ei < len(elements) and elements[ei].start < b:
            if elements[ei].end > a:
                members.append(elements[ei])
            ei += 1
        path = next((e.heading_path for e in members if e.category == "Title"), None)
        if path is None:
            path = members[0].heading_path if members else ()
        out.append((a, b, path, members))
    return out


class MarkdownChunker(Chunker):
    """Structure-aware: one section per heading (heading path kept); big sections are split by
    their blocks (tables by rows with the header repeated), tiny ones merge with a neighbour."""

    name = "markdown"

    def __init__(self, max_tokens, overlap=0, token_counter=None, min_tokens: int = 50, table_records: bool = False):
        super().__init__(max_tokens, overlap, token_counter, min_tokens)
        self.table_records = table_records

    def chunk(self, text: str, elements: Sequence[Element] = ()) -> list[Span]:
        if not text or text.isspace():
            return []
        elements = tuple(elements) or markdown_elements(text)
        index = TokenIndex(text, self.counter, chars=True)
        items: list[Item] = []
        tables = TableChunker(self.max_tokens, 0, self.counter, records=self.table_records)
        for a, b, path, members in _sections(text, elements):
            meta = {"heading_path": path}
            if index.count(a, b) <= self.budget:
                items.append(Item(a, b, meta))
                continue
            blocks: list[tuple[int, int]] = []
            pos = a
            for el in members:
                if el.category == "Table" and index.count(el.start, el.end) > self.budget:
                    if pos < el.start:
                        blocks.append((pos, el.start))
                    items.extend(self._pack(index, blocks, meta))
                    blocks = []
                    items.extend(tables.table_items(index, el.start, el.end, meta))
                    pos = el.end
                elif el.start > pos:
                    blocks.append((pos, el.start))
                    pos = el.start
            if pos < b:
                blocks.append((pos, b))
            items.extend(self._pack(index, blocks, meta))
        items = merge_small(index, items, self.min_tokens, self.budget)
        return emit(index, items, self.max_tokens)

    def _pack(self, index: TokenIndex, blocks: list[tuple[int, int]], meta: dict) -> list[Item]:
        blocks = [(a, b) for a, b in blocks if index.text[a:b].strip()]
        return [Item(a, b, dict(meta)) for a, b in pack_units(index, blocks, self.budget, self.overlap)]


class TableChunker(Chunker):
    """Tables: whole when they fit; otherwise groups of rows, the header row repeated (as
    embedding context) in every group. ``records=True`` embeds rows as ``column: value``."""

    name = "table"

    def __init__(self, max_tokens, overlap=0, token_counter=None, records: bool = False):
        super().__init__(max_tokens, overlap, token_counter)
        self.records = records

    def chunk(self, text: str, elements: Sequence[Element] = ()) -> list[Span]:
        if not text or text.isspace():
            return []
        index = TokenIndex(text, self.counter, chars=True)
        tables = [e for e in elements if e.category == "Table"] or [Element(0, len(text), "Table")]
        items: list[Item] = []
        pos = 0
        for table in sorted(tables, key=lambda e: e.start):
            if table.start > pos and text[pos : table.start].strip():
                items.extend(Item(a, b) for a, b in pack_units(index, [(pos, table.start)], self.budget))
            items.extend(self.table_items(index, table.start, table.end, {}))
            pos = max(pos, table.end)
        if pos < len(text) and text[pos:].strip():
            items.extend(Item(a, b) for a, b in pack_units(index, [(pos, len(text))], self.budget))
        return emit(index, items, self.max_tokens)

    def table_items(self, index: TokenIndex, start: int, end: int, meta: dict) -> list[Item]:
        text = index.text
        rows = [(m.start(), m.end()) for m in re.finditer(r"[^\n]*\S[^\n]*", text[start:end])]
        rows = [(start + a, start + b) for a, b in rows]
        if not rows:
            return []
        is_md = text[rows[0][0] : rows[0][1]].lstrip().startswith("|")
        n_header = 2 if is_md and len(rows) > 1 and re.fullmatch(r"\s*\|?[\s:|-]+\|?\s*", text[rows[1][0] : rows[1][1]]) else 1
        header = text[rows[0][0] : rows[n_header - 1][1]]
        columns = _cells(text[rows[0][0] : rows[0][1]], is_md)
        if not self.records and index.count(start, end) <= self.budget:
            return [Item(start, end, dict(meta))]
        context = header + "\n"
        context_tokens = self.counter.count(context) - self.counter.special_tokens
        body = rows[n_header:] or rows
        room = self.budget - context_tokens
        if room < 8:
            return [Item(a, b, dict(meta)) for a, b in pack_units(index, [(start, end)], self.budget)]
        items: list[Item] = []
        group: list[tuple[int, int]] = []
        group_tokens = 0

        def flush():
            if not group:
                return
            item_meta = dict(meta)
            if self.records:
                item_meta["embed_override"] = "\n".join(
                    _record(columns, _cells(text[a:b], is_md)) for a, b in group
                )
            if items:  # later groups repeat the header row as context
                item_meta["context"] = context
                items.append(Item(group[0][0], group[-1][1], item_meta, self.max_tokens - context_tokens))
            else:  # the first group holds the header row itself
                items.append(Item(start, group[-1][1], item_meta, self.max_tokens - context_tokens))

        for a, b in fit_units(index, body, room):
            row_text = _record(columns, _cells(text[a:b], is_md)) if self.records else text[a:b]
            n = self.counter.count(row_text) - self.counter.special_tokens + 1
            if group and group_tokens + n > room:
                flush()
                group, group_tokens = [], 0
            group.append((a, b))
            group_tokens += n
        flush()
        return items


def _cells(line: str, markdown: bool) -> list[str]:
    if markdown:
        return [c.strip() for c in line.strip().strip("|").split("|")]
    try:
        return next(csv.reader(io.StringIO(line)))
    except (csv.Error, StopIteration):
        return [line]


def _record(columns: list[str], cells: list[str]) -> str:
    return "; ".join(f"{c}: {v}" for c, v in zip(columns, cells) if v) or " ".join(cells)


_DEF_LINE = re.compile(
    r"^(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:def|class|function|func|fn|interface|struct|impl|enum|trait|module|"
    r"(?:public|private|protected|static|final|abstract)\b[^\n]*\()",
    re.M,
)


class CodeChunker(Chunker):
    """Code by function and class: Python through ``ast`` (decorators and leading comments stay
    with their definition, methods of a big class carry the class as path and context), other
    languages by top-level definition lines. Imports join the next definition when it fits."""

    name = "code"

    def chunk(self, text: str, elements: Sequence[Element] = ()) -> list[Span]:
        if not text or text.isspace():
            return []
        index = TokenIndex(text, self.counter, chars=True)
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            tree = None
        units = self._python_units(index, tree) if tree is not None else self._generic_units(text)
        items: list[Item] = []
        for a, b, meta in units:
            context = meta.get("context", "")
            room = self.budget - (self.counter.count(context) - self.counter.special_tokens if context else 0)
            if index.count(a, b) <= room:
                items.append(Item(a, b, meta, self.max_tokens - (self.budget - room)))
            else:
                items.extend(Item(x, y, dict(meta), self.max_tokens - (self.budget - room))
                             for x, y in pack_units(index, [(a, b)], room))
        items = merge_small(index, items, self.min_tokens, self.budget)
        return emit(index, items, self.max_tokens)

    def _python_units(self, index: TokenIndex, tree: ast.Module) -> list[tuple[int, int, dict]]:
        text = index.text
        line_starts = [0] + [m.end() for m in re.finditer(r"\n", text)]

        def offset(lineno: int) -> int:
            return line_starts[lineno - 1] if lineno - 1 < len(line_starts) else len(text)

        def node_start(node) -> int:
            line = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            while line > 1 and text[offset(line - 1) : offset(line)].lstrip().startswith("#"):
                line -= 1  # comments directly above belong to the definition
            return offset(line)

        def node_end(node) -> int:
            return offset(node.end_lineno + 1)

        units: list[tuple[int, int, dict]] = []
        pos = 0
        for node in tree.body:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            start, end = node_start(node), node_end(node)
            if start > pos:
                units.append((pos, start, {"heading_path": ()}))
            if isinstance(node, ast.ClassDef) and index.count(start, end) > self.budget:
                methods = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
                signature = text[offset(node.lineno) : offset(node.lineno + 1)].rstrip() + "\n"
                inner = start
                for method in methods:
                    m_start, m_end = node_start(method), node_end(method)
                    if m_start > inner:
                        units.append((inner, m_start, {"heading_path": (node.name,)}))
                    units.append((m_start, m_end, {"heading_path": (node.name, method.name), "context": signature}))
                    inner = m_end
                if inner < end:
                    units.append((inner, end, {"heading_path": (node.name,)}))
            else:
                units.append((start, end, {"heading_path": (node.name,)}))
            pos = end
        if pos < len(text):
            units.append((pos, len(text), {"heading_path": ()}))
        units = [u for u in units if text[u[0] : u[1]].strip()]
        # Imports and module docstring never stand alone: they join the first definition.
        if len(units) > 1 and units[0][2]["heading_path"] == () and "context" not in units[1][2]:
            a, _, _ = units[0]
            b_start, b_end, b_meta = units[1]
            if index.count(a, b_end) <= self.budget:
                units[:2] = [(a, b_end, b_meta)]
        return units

    def _generic_units(self, text: str) -> list[tuple[int, int, dict]]:
        starts = sorted({0, *(m.start() for m in _DEF_LINE.finditer(text))})
        bounds = starts + [len(text)]
        return [(a, b, {}) for a, b in zip(bounds, bounds[1:]) if text[a:b].strip()]


_QUESTION = re.compile(
    r"^[ \t]*(?:Q\s*[:.)]|Question\s*\d*\s*[:.]|\*\*Q[:.]|#{1,6}[^\n]*\?[ \t]*$|\*\*[^\n]*\?\*\*[ \t]*$)", re.M | re.I
)
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]", re.M)


class FAQChunker(Chunker):
    """One question with its answer per chunk; a pair is split only if over the hard limit,
    and then every piece carries the question as context."""

    name = "faq"

    def chunk(self, text: str, elements: Sequence[Element] = ()) -> list[Span]:
        if not text or text.isspace():
            return []
        index = TokenIndex(text, self.counter, chars=True)
        questions = {m.start() for m in _QUESTION.finditer(text)}
        starts = sorted({0} | questions | {m.start() for m in _HEADING.finditer(text)})
        bounds = starts + [len(text)]
        items: list[Item] = []
        for a, b in zip(bounds, bounds[1:]):
            if not text[a:b].strip():
                continue
            if index.count(a, b) <= self.budget or a not in questions:
                items.extend(Item(x, y) for x, y in pack_units(index, [(a, b)], self.budget))
                continue
            line_end = text.find("\n", a, b)
            line_end = b if line_end < 0 else line_end
            question = text[a:line_end].strip() + "\n"
            ctx_tokens = self.counter.count(question) - self.counter.special_tokens
            items.append(Item(a, line_end))
            items.extend(Item(x, y, {"context": question}, self.max_tokens - ctx_tokens)
                         for x, y in pack_units(index, [(line_end, b)], self.budget - ctx_tokens))
        # Headings and intros join the pair after them; two pairs never share a chunk.
        merged: list[Item] = []
        has_question: list[bool] = []
        for item in items:
            is_question = item.start in questions or bool(item.meta)
            if (merged and not has_question[-1] and not merged[-1].meta and not item.meta
                    and index.count(merged[-1].start, item.end) <= self.budget):
                merged[-1] = Item(merged[-1].start, item.end)
                has_question[-1] = is_question
                continue
            merged.append(item)
            has_question.append(is_question)
        return emit(index, merged, self.max_tokens)


_TURN = re.compile(r"^[ \t]*(?:\[?\(?\d{1,2}:\d{2}(?::\d{2})?\)?\]?[ \t]*)?([A-Z][\w.'\- ]{0,40}?)[ \t]*:[ \t]+\S", re.M)


class TranscriptChunker(Chunker):
    """Speaker turns kept whole and merged up to the budget; a turn over the limit is split with
    the speaker's name as context."""

    name = "transcript"

    def chunk(self, text: str, elements: Sequence[Element] = ()) -> list[Span]:
        if not text or text.isspace():
            return []
        index = TokenIndex(text, self.counter, chars=True)
        starts = sorted({0, *(m.start() for m in _TURN.finditer(text))})
        bounds = starts + [len(text)]
        items: list[Item] = []
        whole: list[tuple[int, int]] = []
        for a, b in zip(bounds, bounds[1:]):
            if not text[a:b].strip():
                continue
            if index.count(a, b) <= self.budget:
                whole.append((a, b))
                continue
            items.extend(Item(x, y) for x, y in pack_units(index, whole, self.budget, self.overlap))
            whole = []
            m = _TURN.match(text, a)
            speaker = (m.group(1) + ": ") if m else ""
            ctx_tokens = self.counter.count(speaker) - self.counter.special_tokens if speaker else 0
            for k, (x, y) in enumerate(pack_units(index, sentence_spans(text, a, b), self.budget - ctx_tokens)):
                meta = {"context": speaker} if speaker and k else {}
                items.append(Item(x, y, meta, self.max_tokens - ctx_tokens))
        items.extend(Item(x, y) for x, y in pack_units(index, whole, self.budget, self.overlap))
        items.sort(key=lambda it: it.start)
        return emit(index, items, self.max_tokens)


Embed = Callable[[list[str]], list[list[float]]]


class SemanticChunker(Chunker):
    """Breakpoints where the embedding similarity of adjacent sentences drops (distance above
    the ``percentile``-th percentile); groups over the limit are split by sentences, so the hard
    maximum holds (which similarity-only chunkers do not guarantee)."""

    name = "semantic"

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
        sentences = fit_units(index, sentence_spans(text), self.budget)
        if len(sentences) < 3:
            return emit(index, [Item(a, b) for a, b in pack_units(index, sentences, self.budget)], self.max_tokens)
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
        return emit(index, items, self.max_tokens)


class SentenceWindowChunker(Chunker):
    """One sentence per chunk (the retrieval unit), each carrying the span of the ``window``
    sentences around it for expansion at query time; with ``embed_window`` the sentence is
    embedded together with that many sentences on each side (its meaning in context)."""

    name = "sentence_window"

    def __init__(self, max_tokens, overlap=0, token_counter=None, window: int = 2, embed_window: int = 0):
        super().__init__(max_tokens, overlap, token_counter)
        self.window = window
        self.embed_window = embed_window

    def chunk(self, text: str, elements: Sequence[Element] = ()) -> list[Span]:
        if not text or text.isspace():
            return []
        index = TokenIndex(text, self.counter, chars=True)
        spans = finalize(index, fit_units(index, sentence_spans(text), self.budget), self.max_tokens)
        last = len(spans) - 1
        out = []
        for i, span in enumerate(spans):
            window = (spans[max(0, i - self.window)].start, spans[min(last, i + self.window)].end)
            embed = None
            if self.embed_window:
                embed = (spans[max(0, i - self.embed_window)].start, spans[min(last, i + self.embed_window)].end)
            out.append(Span(span.start, span.end, span.tokens, window=window, embed_span=embed))
        return out


STRATEGIES: dict[str, type[Chunker]] = {
    cls.name: cls
    for cls in (FixedTokenChunker, SentenceChunker, RecursiveChunker, MarkdownChunker, TableChunker, CodeChunker,
                FAQChunker, TranscriptChunker, SemanticChunker, SentenceWindowChunker)
}

__all__ = ["STRATEGIES"]
