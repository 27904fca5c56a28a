"""Items joined into a document: the (category, text, page, level...) tuples each reader makes,
joined into one text and elements whose spans index it exactly (``join_elements``); unstructured's
elements and tables as items; a document's title from its headings."""

from __future__ import annotations

import re

from rag_assets.core.models import Element
from rag_assets.core.parsing.html_tables import expand_spans, is_header_row
from rag_assets.core.parsing.structure import markdown_table


def sole_top_heading(text: str, elements: tuple[Element, ...]) -> str:
    """A Markdown document's title: its top-level heading when it has exactly one ("" otherwise,
    so the file name is used). A file of several top-level sections (a manual, a collection of
    articles) is not titled by its first section: the title goes into every chunk's header."""
    tops = [e for e in elements if e.category == "Title" and len(e.heading_path) == 1]
    return tops[0].heading_path[0] if len(tops) == 1 else ""


UNTITLED = "Untitled"  # the category of an item that ends the heading path before it (no text)
CONTINUED = "Continued"  # the category of an item whose text joins the next item to the one before
CLOSED = "Closed"  # the category of an item that ends the headings of its level and below (no text)


#: what a page or a section carries whatever heading it is under: a Word section's header and footer, a deck's
#: footer
_FURNITURE = frozenset({"Header", "Footer"})


def join_elements(items: list[tuple]) -> tuple[str, tuple[Element, ...]]:
    """Join (category, text, page) items with blank lines. A Title item starts the heading path
    of the items after it, under the titles before it of smaller level numbers only (an h2 under an
    h1; an h2 after an h2 is its sibling where the page has no h1): its level is a fourth field, 1
    when absent (top level); a fifth, True, marks an item OCR read (``Element.ocr``); a sixth names
    a Title's heading where its text is markup (a Markdown attachment's "# Notes"). An
    ``UNTITLED`` item ends the heading path (a slide without a title is not under the slide
    before it), a ``CLOSED`` one the headings of its level (a fourth field) and below (what follows
    an API object's description is the section's again); a ``CONTINUED`` item's text (" " or "")
    joins the items around it in place of the blank lines (a paragraph that a page break cuts
    mid-sentence). A header or footer is under no
    heading (``_FURNITURE``)."""
    parts: list[str] = []
    elements: list[Element] = []
    pos = 0
    heading: tuple[str, ...] = ()
    levels: list[int] = []  # each heading's level: a title closes those at its level or below
    joint = "\n\n"  # what joins the next item to the one before
    for category, item_text, page, *more in items:
        if category == UNTITLED:  # a part without a heading: nothing before it heads it
            heading = ()
            levels.clear()
            continue
        if category == CLOSED:
            while levels and levels[-1] >= more[0]:
                levels.pop()
            heading = heading[: len(levels)]
            continue
        if category == CONTINUED:
            joint = item_text
            continue
        item_text = item_text.strip()
        if not item_text:
            continue
        if parts:
            parts.append(joint)
            pos += len(joint)
        joint = "\n\n"
        if category == "Title":  # under the headings of higher levels only, however many levels it skips
            level = more[0] if more else 1
            while levels and levels[-1] >= level:
                levels.pop()
            heading = heading[: len(levels)] + ((len(more) > 2 and more[2]) or item_text[:200],)
            levels.append(level)
        elements.append(Element(pos, pos + len(item_text), category, page=page,
                                heading_path=() if category in _FURNITURE else heading, ocr=len(more) > 1 and more[1]))
        parts.append(item_text)
        pos += len(item_text)
    return "".join(parts), tuple(elements)


def unstructured_items(elements, page: int | None = None, under: int = 0, outline: dict[str, int] | None = None,
                       code: re.Pattern | None = None,
                       marked_headers: bool = False) -> list[tuple[str, str, int | None, int]]:
    """unstructured's elements as items for ``join_elements``: a title at the level its depth
    gives (an HTML h2 or a Word "Heading 2" under the h1 before it), ``under`` levels down; a
    paragraph whose style ``outline`` names (style name -> 0-based level) is a title of that level,
    one whose style ``code`` matches a CodeSnippet; tables as ``_table_rows`` reads them."""
    items = []
    for el in elements:
        if el.category in ("PageBreak", "Image"):
            continue
        category, depth = el.category, el.metadata.category_depth or 0
        if outline and category != "Table" and (level := outline.get(el.metadata.style_name or "")) is not None:
            category, depth = "Title", level
        elif code and category != "Table" and code.fullmatch(el.metadata.style_name or ""):
            category = "CodeSnippet"
        where = (page if page is not None else el.metadata.page_number, under + depth + 1)
        if category != "Table":
            items.append((category, str(el), *where))
            continue
        caption, table = _table_rows(el, marked_headers)
        items += [*([("NarrativeText", caption, *where)] if caption else []), ("Table", table, *where)]
    return items


def _table_rows(table, marked_headers: bool = False) -> tuple[str, str]:
    """An unstructured table's caption (``_caption``) and Markdown rows (``markdown_table``); its
    flat text where unstructured kept no structure. Its first row is the header unless
    ``marked_headers`` (a format whose markup marks header rows: a web page, LaTeX, Org, JATS,
    DocBook) and that row is no header row (``is_header_row``): a table of parameters or of a row
    header and its value has none, and each chunk of a long one repeated its first row."""
    from lxml import html

    rows, headers = [], []
    root = html.fromstring(table.metadata.text_as_html or "<table></table>")
    for element in root.iter("table"):
        expand_spans(element)  # a Word table's merged cells
    for tr in root.iter("tr"):
        for br in tr.iter("br"):
            br.tail = "\n" + (br.tail or "")
        rows.append([cell.text_content() for cell in tr if cell.tag in ("td", "th")])
        headers.append(is_header_row(tr))
    caption, kept = _caption(rows)
    first = next((i for i in range(len(rows) - len(kept), len(rows)) if any(c.strip() for c in rows[i])), None)
    header = not marked_headers or (first is not None and headers[first])
    return caption, markdown_table(kept, header=header) or str(table)


def _caption(rows: list[list[str]]) -> tuple[str, list[list[str]]]:
    """A table's caption and the rows after it: its first row where that holds one value alone (a
    title merged across the table, a sheet's title in A1) above a header of two values or more and a
    row below, else ("", ``rows``): read as the header, such a title named every column of every
    chunk after the first, and the real column names were lost."""
    filled = [i for i, row in enumerate(rows) if any(cell.strip() for cell in row)]
    if len(filled) < 3:
        return "", rows
    first, second = ([" ".join(cell.split()) for cell in rows[i]] for i in filled[:2])
    title = first[0]  # a merged cell's text is its first column's (a header's empty corner is no title)
    if title and all(cell in ("", title) for cell in first) and len(set(second) - {""}) >= 2:
        return title, rows[filled[0] + 1 :]
    return "", rows


# unstructured detects each document's language (langdetect, whose 55 profiles a forked child
# loaded anew per document: ~0.4 s) only for element metadata we never read; [""] turns it off.
NO_LANGUAGE = [""]


def table_items(rows: list[list[str]], page: int | None) -> list[tuple[str, str, int | None]]:
    """A table's items: its caption (``_caption``) where it has one, then its rows as a Markdown
    table; none for a table without cells."""
    caption, rows = _caption(rows)
    if not (table := markdown_table(rows)):
        return []
    return [*([("NarrativeText", caption, page)] if caption else []), ("Table", table, page)]


def first_title(text: str, elements: tuple[Element, ...]) -> str:
    for element in elements:
        if element.category == "Title":
            return text[element.start : element.end][:200]
    return ""
