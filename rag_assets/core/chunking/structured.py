"""Chunkers that follow a document's structure: heading sections, table rows."""

from __future__ import annotations

import re
from typing import Sequence

from rag_assets.core.chunking.base import Chunker
from rag_assets.core.chunking.engine import Span, TokenIndex, strip_span
from rag_assets.core.chunking.packing import Item, finalize_items, merge_small, pack_units
from rag_assets.core.models import Element
from rag_assets.core.parsing.structure import gfm_header, markdown_elements


def _sections(text: str, elements: Sequence[Element]) -> list[tuple[int, int, tuple[str, ...], list[Element]]]:
    """Heading sections: (start, end, heading path, elements) from each Title to the next, or to
    an element under another heading path without one (a slide without a title)."""
    elements = sorted(elements, key=lambda e: e.start)
    starts = [0] + [e.start for before, e in zip([None, *elements], elements) if e.start > 0 and (
        e.category == "Title" or (before is not None and e.heading_path != before.heading_path))]
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
    profile_options = {"min_tokens": "min_tokens", "table_records": "table_records"}

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
        return finalize_items(index, items, self.max_tokens)

    def _pack(self, index: TokenIndex, blocks: list[tuple[int, int]], meta: dict) -> list[Item]:
        blocks = [(a, b) for a, b in blocks if index.text[a:b].strip()]
        return [Item(a, b, dict(meta)) for a, b in pack_units(index, blocks, self.budget, self.overlap)]


class TableChunker(Chunker):
    """Tables: whole when they fit; otherwise groups of rows, the header row repeated (as
    embedding context) in every group. ``records=True`` embeds rows as ``column: value``."""

    name = "table"
    profile_options = {"records": "table_records"}

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
        return finalize_items(index, items, self.max_tokens)

    def table_items(self, index: TokenIndex, start: int, end: int, meta: dict) -> list[Item]:
        """The table's items: whole rows grouped under the header row (repeated as context after
        the first group); a row too long to sit under it becomes pieces of its own (``row_pieces``),
        never packed with another row's text. A Markdown table without a delimiter row under its
        first row has no header (as GFM reads it): its groups repeat no row."""
        text = index.text
        lines = re.finditer(r"(?m)^[^\n]*\S[^\n]*", text[start:end])
        first, second = next(lines, None), next(lines, None)
        if first is None:
            return []
        is_md = first.group().lstrip().startswith("|") or gfm_header(first.group(), second and second.group())
        sep = "|" if is_md else _delimiter(first.group())
        rows = _rows(text, start, end, sep)
        delimited = len(rows) > 1 and re.fullmatch(r"[\s:|-]+", text[rows[1][0] : rows[1][1]])
        n_header = (2 if delimited else 0) if is_md else 1
        header = text[rows[0][0] : rows[n_header - 1][1]] if n_header else ""
        columns = _values(text, *rows[0], sep) if n_header else []
        if not self.records and index.count(start, end) <= self.budget:
            return [Item(start, end, dict(meta))]
        body = rows[n_header:]
        if not body:  # a header alone is no data: plain text
            return [Item(a, b, dict(meta)) for a, b in pack_units(index, [(start, end)], self.budget)]
        context = header + "\n" if header else ""
        context_tokens = self.counter.count(context) - self.counter.special_tokens if context else 0
        room = self.budget - context_tokens
        items: list[Item] = []
        group: list[tuple[int, int]] = []
        group_tokens = 0
        header_out = False  # the header rows are in an item

        def flush():
            nonlocal header_out
            if not group:
                return
            item_meta = dict(meta)
            if self.records:
                item_meta["embed_override"] = "\n".join(
                    _record(columns, _values(text, a, b, sep)) for a, b in group
                )
            if header_out and context:  # later groups repeat the header row as context
                item_meta["context"] = context
                items.append(Item(group[0][0], group[-1][1], item_meta, self.max_tokens - context_tokens))
            else:  # the first group holds the header row itself (a later one of a headerless table, none)
                items.append(Item(start if not header_out else group[0][0], group[-1][1], item_meta))
                header_out = True

        for a, b in body:
            n = self.counter.count(text[a:b]) - self.counter.special_tokens + 1
            if self.records:  # a group's rows must fit as they are cited and as they are embedded
                n = max(n, self.counter.count(_record(columns, _values(text, a, b, sep))) - self.counter.special_tokens + 1)
            if room >= 8 and n <= room:
                if group and group_tokens + n > room:
                    flush()
                    group, group_tokens = [], 0
                group.append((a, b))
                group_tokens += n
                continue
            flush()
            group, group_tokens = [], 0
            if not header_out:  # the header rows (all that precedes this row) on their own
                items.extend(Item(x, y, dict(meta)) for x, y in pack_units(index, [(start, a)], self.budget)
                             if text[x:y].strip())
                header_out = True
            items.extend(self.row_pieces(index, a, b, columns, sep, meta))
        flush()
        return items

    def row_pieces(self, index: TokenIndex, a: int, b: int, columns: list[str], sep: str,
                   meta: dict) -> list[Item]:
        """Row ``text[a:b]``, too long to sit under its table's header, as pieces of whole cells
        (a cell too long alone is cut), each embedded as ``column: value`` pairs: a piece's cells
        are named by their own columns, never read under the whole header. Pieces after the first
        also name the row by its first cell, where that is short (an order id, a name)."""
        text, budget, counter = index.text, self.budget, self.counter
        cells = _cell_spans(text, a, b, sep)
        if not cells:
            return [Item(x, y, dict(meta)) for x, y in pack_units(index, [(a, b)], budget)]
        bounds = [a] + [cs for _, cs, _ in cells[1:]] + [b]  # contiguous: separators go with the cell before
        labels = []
        for column, _, _ in cells:
            name = columns[column] if column < len(columns) else ""
            labels.append(f"{name}: " if name and counter.count(name) <= budget // 4 else "")
        first = labels[0] + _value(text, cells[0][1], cells[0][2], sep)
        key_tokens = counter.count(first) - counter.special_tokens + 2
        key = first + "; " if key_tokens <= budget // 8 else ""
        items: list[Item] = []
        piece: tuple[int, int, str] | None = None  # (start, end, what it embeds)
        piece_tokens = 0

        def emit(x: int, y: int, embedded: str) -> None:
            fits = counter.count(embedded) - counter.special_tokens <= budget
            items.append(Item(x, y, {**meta, "embed_override": embedded} if fits else dict(meta)))

        for (_, cs, ce), label, x, y in zip(cells, labels, bounds, bounds[1:]):
            cell = label + _value(text, cs, ce, sep)
            n = counter.count(cell) - counter.special_tokens + 1
            if piece and (piece_tokens + n > budget or index.count(piece[0], y) > budget):
                emit(*piece)
                piece = None
            named = key if items else ""  # the first piece holds the first cell itself
            if piece is None:
                piece_tokens = key_tokens if named else 0
            if piece is None and (piece_tokens + n > budget or index.count(x, y) > budget):  # too long alone: cut
                prefix = named + label
                for p, q in pack_units(index, [(x, y)], max(8, budget - counter.count(prefix) - 2)):
                    emit(p, q, prefix + _value(text, max(p, cs), min(q, ce), sep, whole=(cs, ce)))
                continue
            piece = (piece[0], y, piece[2] + "; " + cell) if piece else (x, y, named + cell)
            piece_tokens += n
        if piece:
            emit(*piece)
        return items


def _delimiter(header: str) -> str:
    """The delimiter of a delimited table whose header line is ``header``: comma, tab or semicolon,
    whichever it holds most of (a comma where none)."""
    return max((",", "\t", ";"), key=lambda d: (header.count(d), d == ","))


def _rows(text: str, start: int, end: int, sep: str) -> list[tuple[int, int]]:
    """The non-blank rows of the table ``text[start:end]``, whitespace trimmed: its lines, where a
    delimited (CSV) table's quoted cell may hold line breaks, as csv reads it."""
    if sep == "|":
        return [(start + m.start(), start + m.end()) for m in re.finditer(r"(?m)^[^\n]*\S[^\n]*", text[start:end])]
    if '"' not in text[start:end]:  # no quoted cell: its lines, trimmed, found by the regex engine
        return [(start + m.start(), start + m.end()) for m in re.finditer(r"\S(?:[^\n]*\S)?", text[start:end])]
    rows, row, quoted = [], start, False
    for i in range(start, end):
        if text[i] == '"':
            quoted = not quoted
        elif text[i] == "\n" and not quoted:
            rows.append((row, i))
            row = i + 1
    rows.append((row, end))
    return [(a, b) for a, b in (strip_span(text, a, b) for a, b in rows) if b > a]


def _cell_spans(text: str, a: int, b: int, sep: str) -> list[tuple[int, int, int]]:
    """(column, start, end) of each non-blank cell of row ``text[a:b]``, whitespace trimmed: cells
    split at ``|`` (Markdown: not an escaped ``\\|``; the row's edge pipes are no cells) or at
    ``sep`` outside double quotes (a delimited table)."""
    markdown = sep == "|"
    spans, cell, quoted, escaped = [], a, False, False
    for i in range(a, b):
        ch = text[i]
        if markdown and ch == "\\":
            escaped = not escaped
            continue
        if ch == '"' and not markdown:
            quoted = not quoted
        elif ch == sep and not quoted and not escaped:
            spans.append((cell, i))
            cell = i + 1
        escaped = False
    spans.append((cell, b))
    if markdown and spans and not text[spans[0][0] : spans[0][1]].strip():
        spans = spans[1:]
    if markdown and spans and not text[spans[-1][0] : spans[-1][1]].strip():
        spans = spans[:-1]
    return [(column, s, e) for column, (s, e) in enumerate(strip_span(text, a, b) for a, b in spans) if e > s]


def _value(text: str, s: int, e: int, sep: str, whole: tuple[int, int] | None = None) -> str:
    """Cell text ``text[s:e]`` as a reader takes it: a delimited table's quotes off (those of the
    cell ``whole`` spans, where ``s:e`` is part of one) and its doubled quotes single."""
    cs, ce = whole or (s, e)
    if sep == "|" or ce - cs < 2 or text[cs] != '"' or text[ce - 1] != '"':
        return text[s:e].strip()
    return text[max(s, cs + 1) : min(e, ce - 1)].replace('""', '"').strip()


def _values(text: str, a: int, b: int, sep: str) -> list[str]:
    """Row ``text[a:b]``'s cell values by column (a blank cell empty)."""
    cells = _cell_spans(text, a, b, sep)
    values = [""] * (cells[-1][0] + 1 if cells else 0)
    for column, cs, ce in cells:
        values[column] = _value(text, cs, ce, sep)
    return values


def _record(columns: list[str], cells: list[str]) -> str:
    return "; ".join(f"{c}: {v}" for c, v in zip(columns, cells) if v) or " ".join(cells)
