"""What an Office document embeds: charts, SmartArt, Excel worksheets and Visio drawings, and files
embedded as icons (read as an e-mail's attachments are)."""

from __future__ import annotations

import io
import re

from rag_assets.core.parsing.diagrams import visio_pages
from rag_assets.core.parsing.formats import content_type_for
from rag_assets.core.parsing.limits import ParseLimitExceeded, ParseLimits
from rag_assets.core.parsing.mail import attachment_items
from rag_assets.core.parsing.office_graphics import drawn_graphic
from rag_assets.core.parsing.packages import OLE_MAGIC, RELATIONSHIP, member_reader, office_package
from rag_assets.core.parsing.sheets import sheet_rows


_OLE_WORD = "{urn:schemas-microsoft-com:office:office}OLEObject"  # an embedded object in a Word document
_OLE_SLIDE = "{http://schemas.openxmlformats.org/presentationml/2006/main}oleObj"  # ... on a slide


def graphic_content(graphic, part) -> tuple[str, list[list[str]], list[str], list[tuple[str, str]]] | None:
    """What a DrawingML graphic or embedded object (an lxml element holding a ``c:chart``,
    ``cx:chart``, ``dgm:relIds``, ``o:OLEObject`` or ``p:oleObj`` reference) shows, read from the
    part ``part(relationship id)`` returns (its bytes): a chart's title and rows or a SmartArt
    diagram's nodes (``office_graphics.drawn_graphic``), an embedded Excel worksheet's rows or Visio
    drawing's shapes and connections (``_embedded_object``; another object: None); None for another
    graphic (a picture, a shape)."""
    if (drawn := drawn_graphic(graphic, part)) is not None:
        return (*drawn, [])
    if (embedded := graphic.find(f".//{_OLE_WORD}")) is not None or (embedded := graphic.find(f".//{_OLE_SLIDE}")) is not None:
        blob = part(embedded.get(f"{RELATIONSHIP}id"))
        rows, nodes = _embedded_object(blob)
        if rows or nodes:
            return "", rows, nodes, []
        packaged = _packaged_file(blob)
        return (f"Attachment: {packaged[0]}", [], [], packaged[1]) if packaged and packaged[1] else None
    return None


def _packaged_file(data: bytes) -> tuple[str, list[tuple[str, str]]] | None:
    """The name of the file an embedded object packages and what it shows, as (category, text) of
    its elements (a heading as a paragraph of its text: it heads nothing in the document around
    it), read as an e-mail's attachment is (``attachment_items``) within the default parse limits:
    a file Windows' Object Packager wrapped (``\x01Ole10Native``: "Insert > Object > Create from file", shown as an
    icon), an Acrobat document's PDF (``CONTENTS``), a Word document or deck embedded whole; None
    for another object, and for a file of another kind (a picture) or one that cannot be read."""
    import olefile

    if kind := office_package(data):  # a Word document or deck embedded whole (Word.Document.12, PowerPoint.Show.12)
        name, payload = f"document.{kind}", data
    elif not data.startswith(OLE_MAGIC):
        return None
    else:
        with olefile.OleFileIO(io.BytesIO(data)) as package:
            if package.exists("\x01Ole10Native"):
                name, payload = _ole10_native(package.openstream("\x01Ole10Native").read())
            elif package.exists("CONTENTS") and (payload := package.openstream("CONTENTS").read()).startswith(b"%PDF"):
                name = "document.pdf"
            else:
                return None
    if not payload or content_type_for(name) == "image":  # a picture: not read by OCR here
        return None
    try:
        items = attachment_items(name, payload, ParseLimits(), 0)
    except Exception:  # noqa: BLE001 - a damaged, oversized or unread file: the document around it is read
        return None
    return name, [("NarrativeText", item[5]) if item[0] == "Title" and item[5] else item[:2]
                  for item in items]  # its headings head nothing here


def _ole10_native(record: bytes) -> tuple[str, bytes]:
    """The file name and bytes an Object Packager record (``\x01Ole10Native``) holds: after its
    size and flags, a label, the source path, two reserved words, a temporary path and the data,
    each length-prefixed or NUL-ended (MS-OLEDS); ("", b"") where it is no such record."""
    size = int.from_bytes(record[:4], "little")
    body = record[4 : 4 + size]
    if body[:2] != b"\x02\x00" or body.count(b"\0", 2) < 2:
        return "", b""
    label, rest = body[2:].split(b"\0", 1)
    source, rest = rest.split(b"\0", 1)
    rest = rest[4:]  # two reserved words
    temporary = int.from_bytes(rest[:4], "little")
    rest = rest[4 + temporary :]
    length = int.from_bytes(rest[:4], "little")
    named = source.decode("cp1252", "replace").replace("\\", "/").rsplit("/", 1)[-1]
    name = named if "." in named else label.decode("cp1252", "replace")
    return name, rest[4 : 4 + length]


def markdown_rows(table: str) -> list[list[str]]:
    """The rows of a Markdown table as ``markdown_table`` writes one (its delimiter row left out)."""
    return [[cell.strip() for cell in line.strip()[1:-1].split(" | ")] for line in table.splitlines()
            if line.strip() and not re.fullmatch(r"\|(?: --- \|)+", line.strip())]


def _embedded_object(data: bytes) -> tuple[list[list[str]], list[str]]:
    """What an object embedded in a document or slide shows, as (rows, nodes): an Excel workbook
    its active sheet's rows (``sheet_rows``; empty rows left out, each as wide as the widest), a
    Visio drawing its shapes' texts and connections, page after page (``diagrams.visio_pages``);
    neither for another object (a Word document, a 97-2003 object) or a package over the default
    parse limits' expanded size."""
    import zipfile

    from openpyxl import load_workbook

    try:
        package = zipfile.ZipFile(io.BytesIO(data))
        ParseLimits().check_archive(data)
    except (zipfile.BadZipFile, ParseLimitExceeded):
        return [], []
    names = set(package.namelist())
    if "visio/pages/pages.xml" in names:
        return [], [text for _, shown in visio_pages(member_reader(package)) for _, text in shown]
    if "xl/workbook.xml" not in names:
        return [], []
    book = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    try:
        rows = [row for row in sheet_rows(book.active) if any(cell.strip() for cell in row)]
    finally:
        book.close()
    width = max(map(len, rows), default=0)
    return [row + [""] * (width - len(row)) for row in rows], []
