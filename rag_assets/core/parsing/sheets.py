"""Spreadsheets (Excel .xlsx, .xlsb and 97-2003 .xls, OpenDocument .ods): a visible sheet a page, its tables
as Markdown rows with numbers as their formats show them, then its text boxes and connectors."""

from __future__ import annotations

import io
import math
import posixpath
import re
from datetime import datetime, time, timedelta
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from rag_assets.core.parsing.items import join_elements, table_items
from rag_assets.core.parsing.office_graphics import connections, drawing_frames, drawing_texts, drawn_graphic
from rag_assets.core.parsing.opendocument import spreadsheet_sheets
from rag_assets.core.parsing.packages import (ENCRYPTED, OLE_MAGIC, RELATIONSHIP, is_encrypted, office_package,
                                              opendocument_content, package_path, package_title, zip_member)
from rag_assets.core.parsing.structure import markdown_table
from rag_assets.core.parsing.web import parse_html, text_office_file


def parse_xlsx(data: bytes):
    """An Excel workbook: each visible sheet's name (a title) and its cells as Markdown rows (values
    as last saved, shown in their number formats; a date at midnight as its date, trailing empty
    cells dropped), then its text boxes', shapes' and charts' (``_sheet_drawings``: openpyxl reads
    none); a chart sheet is its chart; a sheet's number (its tab's) is its page. Hidden sheets are
    left out: a workbook's author keeps them from its readers. Its title is the workbook's own, if it has one. An Excel 97-2003
    workbook (.xls, a compound file, told apart by content) is read the same way with xlrd, a binary
    workbook (.xlsb) with calamine, an HTML table under an Excel name as a web page."""
    from openpyxl import load_workbook

    if data.startswith(OLE_MAGIC):
        return _parse_xls(data)
    if office_package(data) == "xlsx" and not zip_member(data, "xl/workbook.xml"):
        return _parse_xlsb(data)
    if text_office_file(data) == "html":  # a web application's "Excel export": an HTML table, headed by its first row
        return parse_html(data, marked_headers=False)
    book = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    drawings = _sheet_drawings(data)
    items: list[tuple[str, str, int | None]] = []
    try:
        for number, name in enumerate(book.sheetnames, start=1):
            sheet = book[name]
            if sheet.sheet_state != "visible":  # hidden (or very hidden) from whoever opens the workbook
                continue
            rows = sheet_rows(sheet) if hasattr(sheet, "iter_rows") else []  # a chart sheet has no cells
            sheet_items = _sheet_items(sheet.title, rows, number)
            if boxes := drawings.get(sheet.title):  # after its cells, under its name
                sheet_items = (sheet_items or [("Title", sheet.title, number)]) + [
                    (kind, text, number) for kind, text in boxes]
            items += sheet_items
        title = (book.properties.title or "").strip()
    finally:
        book.close()
    text, spans = join_elements(items)
    return text, spans, title


def sheet_rows(sheet) -> list[list[str]]:
    """An openpyxl sheet's rows of cell texts as last saved, in their number formats
    (``_cell_text``), trailing empty cells dropped."""
    return [_trimmed([_cell_text(cell.value, getattr(cell, "number_format", None)) for cell in row])
            for row in sheet.iter_rows()]


def _trimmed(cells: list[str]) -> list[str]:
    """A row's cell texts without the empty ones it ends with."""
    while cells and not cells[-1].strip():
        cells.pop()
    return cells


def parse_ods(data: bytes):
    """An OpenDocument spreadsheet (LibreOffice Calc), read as an Excel workbook is: each visible
    sheet's name (a title) and its cells as Markdown rows (``opendocument.spreadsheet_sheets``:
    values as their formats show them, as the file keeps them); a sheet's number is its page; its
    title is its properties' own."""
    items: list[tuple[str, str, int | None]] = []
    for number, name, rows in spreadsheet_sheets(opendocument_content(data)):
        items += _sheet_items(name, rows, number)
    text, spans = join_elements(items)
    return text, spans, package_title(data)


_SPREADSHEET = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_XDR = "{http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing}"


def _sheet_drawings(data: bytes) -> dict[str, list[tuple[str, str]]]:
    """An XLSX package's text boxes and shapes by sheet name, each sheet's in the order of the cells
    they are anchored at (``office_graphics.drawing_texts``), then its charts (a title and a table of
    the data the chart caches) and SmartArt diagrams (a list item a node) in the same order
    (``office_graphics.drawn_graphic``, as a slide's are read; a damaged one left out), then its
    connectors joining two of them as list items "From → To" (``office_graphics.connections``), as
    (category, text); {} where it has none or they cannot be read (they are then left out: the
    cells are the workbook's content)."""
    import zipfile

    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    try:
        package = zipfile.ZipFile(io.BytesIO(data))
        members = set(package.namelist())
        if not any(name.startswith("xl/drawings/") for name in members):
            return {}

        def related(part: str) -> list[tuple[str, str, str]]:  # (id, type, member) of a part's relationships
            folder, name = posixpath.split(part)
            rels = posixpath.join(folder, "_rels", f"{name}.rels")
            if rels not in members:
                return []
            return [(rel.get("Id", ""), rel.get("Type", ""), package_path(folder, rel.get("Target", "")))
                    for rel in etree.fromstring(package.read(rels), parser) if rel.get("TargetMode") != "External"]

        sheet_parts = {rid: member for rid, _, member in related("xl/workbook.xml")}
        found: dict[str, list[str]] = {}
        for sheet in etree.fromstring(package.read("xl/workbook.xml"), parser).iter(f"{_SPREADSHEET}sheet"):
            part = sheet_parts.get(sheet.get(f"{RELATIONSHIP}id"))
            drawings = [(member, etree.fromstring(package.read(member), parser)) for _, kind, member in
                        (related(part) if part else []) if kind.endswith("/drawing") and member in members]
            shown = [("NarrativeText", text) for _, drawing in drawings for text in drawing_texts(drawing)]
            for member, drawing in drawings:
                targets = {rid: target for rid, _, target in related(member)}
                for frame in drawing_frames(drawing):
                    try:
                        content = drawn_graphic(frame, lambda rid: package.read(targets[rid]))
                    except Exception:  # noqa: BLE001 - a missing or damaged chart: lxml and zipfile raise many types
                        continue
                    if content:
                        title, rows, nodes = content
                        shown += [("NarrativeText", title)] if title else []
                        shown += [("Table", table)] if (table := markdown_table(rows)) else []
                        shown += [("ListItem", node) for node in nodes]
            shown += [("ListItem", text) for _, drawing in drawings for text in connections(drawing, _XDR)]
            if shown:
                found[sheet.get("name", "")] = shown
        return found
    except Exception:  # noqa: BLE001 - drawings are optional: damaged ones must not fail the workbook
        return {}


def _sheet_items(name: str, rows: list[list[str]], page: int) -> list[tuple[str, str, int]]:
    """A sheet's items: its name (a title), then each of its tables (``_sheet_tables``) as its
    caption (``_caption``) and its rows; none when it has no cells."""
    items = [item for block in _sheet_tables(rows) for item in table_items(block, page)]
    return [("Title", name, page), *items] if items else []


_NUMBER_CELL = re.compile(r"[-+(]?\s*[$€£¥]?\s*[-+(]?\d[\d,.\s]*(?:[eE][-+]?\d+)?\s*[%)]?(?:\s*[$€£¥KMB])?|"
                          r"\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?")


_YEAR = re.compile(r"(?:19|20)\d\d")  # columns named by their years (Metric | 2023 | 2024): a header's


def _sheet_tables(rows: list[list[str]]) -> list[list[list[str]]]:
    """A sheet's rows split into its tables: a blank row followed by a header (two values or more, no
    number among them but years, two or more of them, above a row with a number under one of its
    values), or by one value alone above such a header (its title), starts a new table. Read as one, a second table's rows were
    named by the first's header and its own header was a data row; a blank row inside one table
    (a gap between groups of rows) is followed by data, not by a header, and splits nothing, nor
    does one under a title alone (the title stays its table's caption)."""
    filled = [i for i, row in enumerate(rows) if any(cell.strip() for cell in row)]
    starts = [0]
    for n, i in enumerate(filled[1:], start=1):
        title_alone = _values(rows[filled[n - 1]]) == 1 and (n < 2 or filled[n - 2] < starts[-1])
        if i - filled[n - 1] > 1 and not title_alone and (
                _header_over(rows, filled[n:n + 2])
                or (_values(rows[i]) == 1 and _header_over(rows, filled[n + 1:n + 3]))):
            starts.append(i)
    return [rows[a:b] for a, b in zip(starts, starts[1:] + [len(rows)])]


def _values(row: list[str]) -> int:
    return sum(1 for cell in row if cell.strip())


def _header_over(rows: list[list[str]], pair: list[int]) -> bool:
    """Whether ``rows[pair[0]]`` reads as a header over the row ``rows[pair[1]]``."""
    if len(pair) < 2:
        return False
    header, below = rows[pair[0]], rows[pair[1]]
    values = [cell.strip() for cell in header if cell.strip()]
    years = sum(bool(_YEAR.fullmatch(value)) for value in values)
    if len(values) < 2 or any(_NUMBER_CELL.fullmatch(value) and not (years >= 2 and _YEAR.fullmatch(value))
                              for value in values):
        return False
    return any(name.strip() and i < len(below) and _NUMBER_CELL.fullmatch(below[i].strip())
               for i, name in enumerate(header))


def _parse_xls(data: bytes):
    """An Excel 97-2003 workbook, as ``parse_xlsx`` reads one: numbers as Excel shows a whole
    one (3, not 3.0), dates as dates, booleans and errors as their words."""
    import xlrd

    if is_encrypted(data):  # an encrypted .xlsx is a compound file too
        raise ValueError(ENCRYPTED)
    book = xlrd.open_workbook(file_contents=data, on_demand=True)
    items: list[tuple[str, str, int | None]] = []
    try:
        for number in range(book.nsheets):
            sheet = book.sheet_by_index(number)
            if sheet.visibility:  # 1 hidden, 2 very hidden
                book.unload_sheet(number)
                continue
            rows = [_trimmed([_xls_cell_text(cell, book.datemode) for cell in sheet.row(index)])
                    for index in range(sheet.nrows)]
            items += _sheet_items(sheet.name, rows, number + 1)
            book.unload_sheet(number)
    finally:
        book.release_resources()
    text, spans = join_elements(items)
    return text, spans, ""


def _parse_xlsb(data: bytes):
    """An Excel binary workbook (.xlsb), as ``parse_xlsx`` reads one, with calamine: each visible
    worksheet's cells as last saved, dates as dates; calamine reads no number format, so numbers read
    as Excel's General shows them (a 95% cell as 0.95). Its title is its properties' own."""
    from python_calamine import CalamineError, CalamineWorkbook, SheetTypeEnum, SheetVisibleEnum

    items: list[tuple[str, str, int | None]] = []
    try:
        book = CalamineWorkbook.from_filelike(io.BytesIO(data))
        try:
            for number, sheet in enumerate(book.sheets_metadata, start=1):
                if sheet.visible != SheetVisibleEnum.Visible or sheet.typ != SheetTypeEnum.WorkSheet:
                    continue  # hidden from its readers, or a chart sheet (no cells)
                rows = [_trimmed([_cell_text(value) for value in row])
                        for row in book.get_sheet_by_name(sheet.name).to_python(skip_empty_area=False)]
                items += _sheet_items(sheet.name, rows, number)
        finally:
            book.close()
    except CalamineError as exc:
        raise ValueError(f"a damaged Excel binary workbook ({exc}); save it again in Excel, or save it as "
                         ".xlsx") from exc
    text, spans = join_elements(items)
    return text, spans, package_title(data, "docProps/core.xml")


def _xls_cell_text(cell, datemode: int) -> str:
    import xlrd

    if cell.ctype == xlrd.XL_CELL_DATE:
        return _cell_text(xlrd.xldate.xldate_as_datetime(cell.value, datemode))
    if cell.ctype == xlrd.XL_CELL_NUMBER:
        return str(int(cell.value)) if float(cell.value).is_integer() else repr(cell.value)
    if cell.ctype == xlrd.XL_CELL_BOOLEAN:
        return str(bool(cell.value))
    if cell.ctype == xlrd.XL_CELL_ERROR:
        return xlrd.error_text_from_code.get(cell.value, "#ERROR")
    return _cell_text(cell.value or None)


def _cell_text(value, number_format: str = "General") -> str:
    """A cell's value as Excel shows it: a date at midnight as its date, a duration as hours,
    minutes and seconds (``[h]:mm:ss``: 255:10:10), a number in its ``number_format``
    (``_number_text``)."""
    if value is None:
        return ""
    if isinstance(value, datetime) and value.time() == time():
        return value.date().isoformat()
    if isinstance(value, timedelta):  # calamine's reading of a duration format
        total = round(value.total_seconds())
        hours, seconds = divmod(abs(total), 3600)
        return f"{'-' if total < 0 else ''}{hours}:{seconds // 60:02d}:{seconds % 60:02d}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _number_text(value, number_format)
    return str(value)


# A number format's pieces: a quoted text, a [$€-407] currency, another [...] (a colour, a locale, a
# condition), an escaped char, a padding or fill char, a run of digit placeholders, any other char.
_FORMAT_PIECE = re.compile(r'"([^"]*)"|\[\$([^\]-]*)[^\]]*\]|(\[[^\]]*\])|\\(.)|([_*].)|([#0?][#0?,.]*|\.[#0?][#0?,.]*)|(.)')


def _number_text(value: float, number_format: str) -> str:
    """A number as Excel's format shows it, for the formats a sheet's reader meets: a percentage
    (``0.0%``: 95.0%), decimals and thousands separators (``#,##0.00``), thousands by a trailing
    comma (``#,##0,"K"``), a currency or a unit (``"$"#,##0.00``, ``[$€-407] #,##0``, ``0 "kg"``),
    a negative or zero section (``#,##0;(#,##0)``); else as Excel's General shows it, 15
    significant digits (0.1 + 0.2 is 0.3, 3.0 is 3). Scientific, fraction and conditional formats,
    and numbers they cannot show, read as General."""
    general = f"{value:.15g}" if isinstance(value, float) else str(value)
    sections = (number_format or "General").split(";")
    section, sign = sections[0], "-" if value < 0 else ""
    if value < 0 and len(sections) > 1:
        section, sign = sections[1], ""  # the negative section shows the sign itself, or brackets
    elif value == 0 and len(sections) > 2:
        section = sections[2]
    if section.strip().lower() in ("general", "") or re.search(r"[eE][+-]|\?/|\[[<>=]", section) \
            or not math.isfinite(value):
        return general
    pieces, runs, percent = [], [], False  # runs: the digit placeholders' runs, each a None in pieces
    for text, currency, _, escaped, _, digits, other in _FORMAT_PIECE.findall(section):
        if digits:
            runs.append(digits)
            pieces.append(None)
        else:
            percent |= other == "%"
            pieces.append(text or currency or escaped or (other if other not in "#0?" else ""))
    if not runs:
        return general
    if len(runs) > 1:  # a template of digits: a phone number 000-000-0000, a ZIP+4 00000-0000
        return _digit_template(value, runs, pieces) or general
    number = runs[0]
    scale = len(number) - len(number.rstrip(","))  # each trailing comma: thousands
    decimals = len(number.rstrip(",").split(".")[1]) if "." in number else 0
    try:
        shown = (Decimal(repr(abs(value))) * (100 if percent else 1) / 1000 ** scale).quantize(
            Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)  # as Excel rounds
    except InvalidOperation:  # more digits than Decimal holds: 1e30 in "0"
        return general
    grouped = "," in number.rstrip(",")
    digits_text = f"{shown:{',' if grouped else ''}.{decimals}f}"
    if not grouped:  # a zero placeholder shows a leading zero: 00000 is a ZIP code's 02134
        whole, point, fraction = digits_text.partition(".")
        digits_text = whole.zfill(number.split(".")[0].count("0")) + point + fraction
    if not shown and "0" not in number:
        digits_text = ""  # "#" and "?" show no insignificant zero: an accounting zero is "$ -"
    return sign + "".join(digits_text if piece is None else piece for piece in pieces)


def _digit_template(value: float, runs: list[str], pieces: list[str | None]) -> str | None:
    """``value`` written into a template of digit runs (000-000-0000), filled from the right, the
    first run taking any digits left over; None where the template has decimals or separators."""
    if any(ch in run for run in runs for ch in ".,") or not float(value).is_integer():
        return None
    digits = str(int(abs(value))).zfill(sum(run.count("0") for run in runs))
    filled, end = [], len(digits)
    for k, run in enumerate(reversed(runs)):
        start = 0 if k == len(runs) - 1 else max(0, end - len(run))
        filled.append(digits[start:end])
        end = start
    values = iter(reversed(filled))
    return ("-" if value < 0 else "") + "".join(next(values) if piece is None else piece for piece in pieces)
