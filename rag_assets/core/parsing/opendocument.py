"""OpenDocument spreadsheets (.ods), presentations (.odp) and drawings (.odg), read from their content part
(``content.xml``, an lxml root) as LibreOffice shows them: a cell's text as its format displays it
(the file keeps that text beside the value), a slide's title, text, lists and tables and its
speaker notes, an embedded object's content. Neither unstructured nor pandoc reads these formats."""

from __future__ import annotations

from rag_assets.core.parsing.math_text import mathml_text

_OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
_DRAW = "{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}"
_STYLE = "{urn:oasis:names:tc:opendocument:xmlns:style:1.0}"
_PRESENTATION = "{urn:oasis:names:tc:opendocument:xmlns:presentation:1.0}"
_CHART = "{urn:oasis:names:tc:opendocument:xmlns:chart:1.0}"
_XLINK = "{http://www.w3.org/1999/xlink}"
_XML = "{http://www.w3.org/XML/1998/namespace}"
_ROW_GROUPS = {f"{_TABLE}{name}" for name in ("table-header-rows", "table-row-group", "table-rows")}
_CELLS = (f"{_TABLE}table-cell", f"{_TABLE}covered-table-cell")
_PARAGRAPHS = (f"{_TEXT}p", f"{_TEXT}h")
#: A slide's placeholders that repeat on every slide (the slide is the page; a deck's footer is not its text)
_FURNITURE = frozenset({"footer", "date-time", "page-number", "header", "page"})
MAX_ROWS = 1_048_576  # a sheet's rows read at most (LibreOffice's limit)
MAX_COLUMNS = 16_384  # a row's cells read at most (LibreOffice's limit)
MAX_SPACES = 1_000  # the spaces one ``text:s`` stands for, at most (a damaged file may claim billions)


def shown_text(element) -> str:
    """An ODF text element's text as shown: ``text:s`` as its count of spaces, tabs and line
    breaks as such, a note's or comment's (``office:annotation``) text left out."""
    out = [element.text or ""]
    for child in element:
        tag = child.tag if isinstance(child.tag, str) else ""
        if tag == f"{_TEXT}s":
            out.append(" " * min(int(child.get(f"{_TEXT}c", "1") or "1"), MAX_SPACES))
        elif tag == f"{_TEXT}tab":
            out.append("\t")
        elif tag == f"{_TEXT}line-break":
            out.append("\n")
        elif tag not in (f"{_OFFICE}annotation", f"{_TEXT}note", f"{_OFFICE}annotation-end"):
            out.append(shown_text(child))
        out.append(child.tail or "")
    return "".join(out)


def spreadsheet_sheets(content) -> list[tuple[int, str, list[list[str]]]]:
    """A spreadsheet's visible sheets, in order: each one's number (hidden ones counted), name and
    rows of cell texts (a cell's paragraphs joined by line ends; a merged cell's text in its first
    cell, the cells it covers empty), trailing empty cells and rows dropped and a run of empty
    rows read as one. A sheet whose table style hides it (``table:display="false"``) is left out,
    as Excel's hidden sheets are."""
    hidden = {style.get(f"{_STYLE}name") for style in content.iter(f"{_STYLE}style")
              if any(props.get(f"{_TABLE}display") == "false" for props in style.iter(f"{_STYLE}table-properties"))}
    body = content.find(f"{_OFFICE}body/{_OFFICE}spreadsheet")
    sheets = list(body.iterfind(f"{_TABLE}table")) if body is not None else []
    return [(number, sheet.get(f"{_TABLE}name", ""), _rows(sheet)) for number, sheet in enumerate(sheets, start=1)
            if sheet.get(f"{_TABLE}style-name") not in hidden]


def _rows(table) -> list[list[str]]:
    """A table's rows of cell texts (see ``spreadsheet_sheets``)."""
    rows: list[list[str]] = []
    for row in _row_elements(table):
        cells = _cells(row)
        repeat = min(int(row.get(f"{_TABLE}number-rows-repeated", "1") or "1"), MAX_ROWS - len(rows))
        if not cells:  # an empty row (LibreOffice writes a sheet's last million as one, repeated)
            if rows and rows[-1]:
                rows.append([])
            continue
        rows += [list(cells) for _ in range(max(repeat, 1))]
        if len(rows) >= MAX_ROWS:
            break
    while rows and not rows[-1]:
        rows.pop()
    return rows


def _row_elements(table):
    """A table's rows in order, inside its header, group and row-set elements too."""
    for child in table:
        if child.tag == f"{_TABLE}table-row":
            yield child
        elif child.tag in _ROW_GROUPS:
            yield from _row_elements(child)


def _cells(row) -> list[str]:
    """A row's cell texts, repeated cells repeated, trailing empty cells dropped."""
    cells: list[str] = []
    empty = 0  # empty cells not written yet: only those before a cell with text are
    for cell in row:
        if cell.tag not in _CELLS:
            continue
        repeat = int(cell.get(f"{_TABLE}number-columns-repeated", "1") or "1")
        text = "\n".join(shown_text(p) for p in cell.iter(*_PARAGRAPHS)
                         if next(p.iterancestors(f"{_OFFICE}annotation"), None) is None).strip()
        if not text:
            empty += repeat
            continue
        cells += [""] * min(empty, MAX_COLUMNS - len(cells))
        cells += [text] * min(repeat, MAX_COLUMNS - len(cells))
        empty = 0
    return cells


def presentation_slides(content, embedded=lambda href: None) -> list[tuple[str, list[tuple[str, object]], str]]:
    """A presentation's slides, in order: each one's title (its title placeholder's text, ""
    where it has none), what else it shows in order (``("text", paragraph)``, ``("item", list
    item)``, ``("table", rows)``; groups' shapes in their place, a repeated placeholder such as
    its footer or number left out, an embedded chart or spreadsheet as ``object_items`` reads the
    content part ``embedded(its link)`` returns, None where there is none; then each connector
    joining two shapes with text as ``("item", "From → To: label")``) and its speaker notes ("" where
    it has none). A drawing's pages (LibreOffice Draw) read alike."""
    slides = []
    for page in content.iter(f"{_DRAW}page"):
        title, items, texts, connectors = "", [], {}, []
        for shape in _shapes(page):
            kind = shape.get(f"{_PRESENTATION}class", "")
            if kind in _FURNITURE:
                continue
            if kind == "title" and not title:
                title = " ".join(" ".join(shown_text(p) for p in shape.iter(*_PARAGRAPHS)).split())
                continue
            if shape.tag == f"{_DRAW}connector":
                connectors.append(shape)
                continue
            shown = _shape_items(shape, embedded)
            for key in (shape.get(f"{_DRAW}id"), shape.get(f"{_XML}id")):
                if key:
                    texts[key] = " ".join(text for what, text in shown if what != "table")
            items += shown
        for connector in connectors:  # after the shapes: "From → To: label" where both ends show text
            label = " ".join(text for what, text in _shape_items(connector, embedded) if what != "table")
            begin, end = texts.get(connector.get(f"{_DRAW}start-shape", "")), texts.get(connector.get(f"{_DRAW}end-shape", ""))
            items += [("item", f"{begin} → {end}" + (f": {label}" if label else ""))] if begin and end else \
                [("text", label)] if label else []
        notes = page.find(f"{_PRESENTATION}notes")
        notes_text = "" if notes is None else "\n".join(
            shown_text(p).strip() for frame in _shapes(notes) if frame.get(f"{_PRESENTATION}class") == "notes"
            for p in frame.iter(*_PARAGRAPHS) if shown_text(p).strip())
        slides.append((title, items, notes_text))
    return slides


def _shapes(parent):
    """The shapes under a slide or group in order, groups' shapes in their place."""
    for child in parent:
        if child.tag == f"{_DRAW}g":
            yield from _shapes(child)
        elif isinstance(child.tag, str) and child.tag.startswith(_DRAW) and child.tag != f"{_DRAW}page-thumbnail":
            yield child


def object_items(content) -> list[tuple[str, object]]:
    """What an embedded object shows, from its content part: a chart's title and subtitle
    (``("text", ...)``) and its data table (a header of its series' names, a row a category), a spreadsheet's
    sheets as tables, a formula (MathML) as a line of text (``mathml_text``); nothing for another
    object (a drawing)."""
    if is_formula(content):
        text = mathml_text(content)
        return [("text", text)] if text else []
    chart = content.find(f"{_OFFICE}body/{_OFFICE}chart/{_CHART}chart")
    if chart is not None:
        titles = [" ".join(" ".join(shown_text(p) for p in chart.iterfind(f"{_CHART}{kind}/{_TEXT}p")).split())
                  for kind in ("title", "subtitle")]
        table = chart.find(f".//{_TABLE}table")
        rows = _rows(table) if table is not None else []
        return [*(("text", title) for title in titles if title), *([("table", rows)] if rows else [])]
    return [("table", rows) for _, _, rows in spreadsheet_sheets(content) if rows]


def is_formula(content) -> bool:
    """Whether an embedded object's content part is a formula's (MathML, LibreOffice Math's)."""
    return isinstance(content.tag, str) and content.tag.rpartition("}")[2] == "math"


def _shape_items(shape, embedded) -> list[tuple[str, object]]:
    """A shape's paragraphs, list items, tables and embedded objects in order."""
    items: list[tuple[str, object]] = []

    def walk(element, listed: bool) -> None:
        for child in element:
            if child.tag == f"{_DRAW}object":
                found = embedded(child.get(f"{_XLINK}href", ""))
                items.extend(object_items(found) if found is not None else [])
            elif child.tag == f"{_TABLE}table":
                items.append(("table", _rows(child)))
            elif child.tag == f"{_TEXT}list":
                walk(child, True)
            elif child.tag in _PARAGRAPHS:
                text = " ".join(shown_text(child).split())
                if text:
                    items.append(("item" if listed else "text", text))
            elif isinstance(child.tag, str) and child.tag != f"{_OFFICE}annotation":
                walk(child, listed)

    walk(shape, False)
    return items
