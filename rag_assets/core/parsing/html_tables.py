"""HTML tables made readable before unstructured sees them: a table that only lays a page out is
read as its blocks, and a data table's merged cells are repeated in every row and column they
span, so each row reads right under its header."""

from __future__ import annotations

import re
from collections import deque
from copy import deepcopy

#: the most copies of one merged cell across (HTML allows 1,000): a title spanning a sheet's width
MAX_COLSPAN = 100
#: the most cells a table's merged cells may expand it to; a larger one keeps its cells unrepeated
MAX_EXPANDED_CELLS = 100_000
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_TABLE = re.compile(r"<table\b", re.I)


def readable_tables(page: str) -> str:
    """``page`` with its layout tables turned into plain blocks (``is_layout``), its other tables'
    merged cells repeated (``expand_spans``), a header row written in bold <th> cells
    (``bold_header``) and each table's caption a paragraph before it; ``page`` itself where that
    changes nothing."""
    if not _TABLE.search(page):
        return page
    from lxml import html

    root = html.document_fromstring(page.encode("utf-8"), parser=html.HTMLParser(encoding="utf-8", huge_tree=True))
    tables = list(root.iter("table"))
    layout = [table for table in tables if is_layout(table)]  # decided before any table changes
    merged = [table for table in set(tables) - set(layout) if table.xpath(".//*[@colspan or @rowspan]")]
    captions = [caption for table in tables for caption in table if caption.tag == "caption"]
    bold = [cell for table in set(tables) - set(layout) for cell in bold_header(table)]
    if not layout and not merged and not captions and not bold:
        return page
    for cell in bold:
        cell.tag = "th"
    for caption in captions:  # a paragraph before its table (unstructured drops a <caption>)
        table = caption.getparent()
        table.remove(caption)
        caption.tag, caption.tail = "p", None
        table.addprevious(caption)
    for table in merged:
        expand_spans(table)
    for table in layout:
        for element in (table, *_sections(table), *_rows(table), *(c for row in _rows(table) for c in _cells(row))):
            element.tag = "div"
    return html.tostring(root, encoding="unicode")


def is_layout(table) -> bool:
    """Whether a table lays a page out (an e-mail template, an old site) rather than holds data: it
    says so (``role="presentation"``), holds a heading, has one column, or holds a table without
    having a header row of its own (two ``<th>`` cells or more: a data table may nest a small one)."""
    if (table.get("role") or "").strip().lower() in ("presentation", "none"):
        return True
    if any(True for _ in table.iterdescendants(*_HEADINGS)):
        return True
    rows = _rows(table)
    if all(len(_cells(row)) <= 1 for row in rows):
        return True
    headed = any(sum(cell.tag == "th" for cell in _cells(row)) >= 2 for row in rows[:1])
    return not headed and any(True for _ in table.iterdescendants("table"))


def is_header_row(row) -> bool:
    """Whether the table row ``row`` is a header row: in a <thead>, or every cell holding text a <th>."""
    if row.getparent() is not None and row.getparent().tag == "thead":
        return True
    filled = [cell for cell in _cells(row) if cell.text_content().strip()]
    return bool(filled) and all(cell.tag == "th" for cell in filled)


def bold_header(table) -> list:
    """The <td> cells of ``table``'s first row where that row is a header written without <th>:
    it has no <th>, and each of its cells holding text is bold throughout (<b> or <strong>), as
    hand-written pages and word processors' exports mark one. [] otherwise."""
    rows = _rows(table)
    cells = _cells(rows[0]) if rows else []
    filled = [cell for cell in cells if cell.text_content().strip()]
    if not filled or any(cell.tag == "th" for cell in cells):
        return []
    return [cell for cell in cells if cell.tag == "td"] if all(map(_bold_throughout, filled)) else []


def _bold_throughout(cell) -> bool:
    """Whether all of ``cell``'s text is in <b> or <strong> elements."""
    if not any(True for _ in cell.iter("b", "strong")):
        return False
    plain = _copy(cell)
    for bold in list(plain.iter("b", "strong")):
        if bold.getparent() is not None:
            bold.drop_tree()  # its tail, the text after it, stays
    return not plain.text_content().strip()


def expand_spans(table) -> None:
    """Repeat each cell with ``colspan``/``rowspan`` in every column and row it spans (at most
    ``MAX_COLSPAN`` columns; a row span stops at its row group's last row), in place; a table that would
    grow past ``MAX_EXPANDED_CELLS`` is left as it is."""
    rows = _rows(table)
    width = max((sum(_span(cell, "colspan", MAX_COLSPAN) for cell in _cells(row)) for row in rows), default=0)
    if len(rows) * width > MAX_EXPANDED_CELLS:
        return
    below: dict[int, list] = {}  # column -> [rows still spanned, the cell]
    group = None
    for row in rows:
        if row.getparent() is not group:  # a row span ends with its row group (thead, tbody, tfoot)
            group, below = row.getparent(), {}
        queue, placed, column = deque(_cells(row)), [], 0
        far = max(below, default=-1)  # the last column spanned from rows above (this row's own spans lie behind)
        while queue or column <= far:
            if column in below:
                left, cell = below[column]
                placed.append(_copy(cell))
                if left == 1:
                    del below[column]
                else:
                    below[column][0] -= 1
            elif queue:
                cell = queue.popleft()
                across, down = _span(cell, "colspan", MAX_COLSPAN), _span(cell, "rowspan", None)
                for attribute in ("colspan", "rowspan"):
                    cell.attrib.pop(attribute, None)
                for k in range(across):
                    placed.append(cell if k == 0 else _copy(cell))
                    if down > 1:
                        below[column + k] = [down - 1, cell]
                column += across - 1
            else:  # a column spanned from above further right: keep the columns aligned
                placed.append(row.makeelement("td", {}))
            column += 1
        for cell in _cells(row):
            row.remove(cell)
        row.extend(placed)


def _span(cell, attribute: str, most: int | None) -> int:
    value = (cell.get(attribute) or "1").strip()
    span = int(value) if value.isascii() and value.isdigit() and int(value) > 0 else 1
    return min(span, most) if most else span


def _copy(cell):
    copy = deepcopy(cell)
    copy.tail = None
    return copy


def _sections(table) -> list:
    return [child for child in table if child.tag in ("thead", "tbody", "tfoot")]


def _rows(table) -> list:
    return [row for part in (table, *_sections(table)) for row in part if row.tag == "tr"]


def _cells(row) -> list:
    return [cell for cell in row if cell.tag in ("td", "th")]


def table_rows(markup: str) -> tuple[list[list[str]], bool] | None:
    """The rows of cell texts of the one HTML table ``markup`` is (as a Markdown file embeds one:
    merged cells repeated, a line break read as a space) and whether its first row heads it (its
    cells <th>, in a <thead>, or bold throughout: ``is_header_row``, ``bold_header``); None where
    the markup is no single table or nests one (a layout)."""
    from lxml import html

    try:
        tables = html.fragments_fromstring(markup)
    except Exception:  # noqa: BLE001 - markup lxml cannot read: left as it is
        return None
    tables = [t for t in tables if not isinstance(t, str)]
    if len(tables) != 1 or tables[0].tag != "table" or any(True for _ in tables[0].iterdescendants("table")):
        return None
    table = tables[0]
    header = bool(bold_header(table))
    expand_spans(table)
    for br in table.iter("br"):
        br.tail = " " + (br.tail or "")
    rows = _rows(table)
    return [[cell.text_content() for cell in _cells(row)] for row in rows], header or bool(rows) and is_header_row(rows[0])

