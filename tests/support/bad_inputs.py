"""The bad-input corpus: documents a company folder really holds, generated (binary ones included)
into a folder, each with the outcome the pipeline must reach.

``write_corpus(root, outside)`` writes every case under ``root`` (and a secret file in ``outside``
that a symlink points at) and returns the cases. A case ends either in a correct result ("ok":
rows in the index, checked by ``check``) or in a per-document error whose message contains
``cause``. ``write_large_text`` writes the 50 MB file, which is not part of the default corpus.
"""

from __future__ import annotations

import io
import os
import mimetypes
import subprocess
import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from tests.support.make_sample_binaries import scanned, write_pdf
from tests.support.opendocument import spreadsheet
from tests.support.visio import drawing, shape

REPO = Path(__file__).resolve().parents[2]

SECRET = "OUTSIDE-ROOT-SECRET-93c1"


@dataclass(frozen=True)
class Case:
    """One kind of bad input: its documents, and what must come of them."""

    name: str
    doc_ids: tuple[str, ...]
    expect: str  # "ok" or "error"
    cause: str = ""  # error: a substring of the per-document error
    check: Callable[[list[dict]], bool] | None = None  # ok: a test over the case's index rows
    describe: str = ""


def png() -> bytes:
    """A valid 2x2 RGB PNG."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + b"\xff\x00\x00" * 2 for _ in range(2))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def _noise_png() -> bytes:
    """A photograph's worth of noise: no text in it."""
    from PIL import Image

    out = io.BytesIO()
    Image.effect_noise((900, 600), 60).save(out, "PNG")
    return out.getvalue()


def _page_jpeg(pdf: bytes) -> bytes:
    """A PDF's first page as a JPEG photograph of it."""
    import pypdfium2

    out = io.BytesIO()
    pypdfium2.PdfDocument(pdf)[0].render(scale=200 / 72).to_pil().save(out, "JPEG")
    return out.getvalue()


def _bomb_png() -> bytes:
    """A black-and-white PNG of 20,000 x 20,000 pixels (60 kB): a decompression bomb."""
    from PIL import Image

    out = io.BytesIO()
    Image.new("1", (20_000, 20_000)).save(out, "PNG")
    return out.getvalue()


def _pdf_bytes(pages: list[list[str]], folder: Path) -> bytes:
    path = folder / ".tmp.pdf"
    write_pdf(path, pages)
    data = path.read_bytes()
    path.unlink()
    return data


def _encrypted_pdf(plain: bytes) -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(plain)))
    writer.encrypt(user_password="open-sesame", owner_password="owner-pass", algorithm="AES-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _images_only_docx() -> bytes:
    from docx import Document

    doc = Document()
    doc.add_picture(io.BytesIO(png()))
    doc.add_picture(io.BytesIO(png()))
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


def expanding_docx(megabytes: float) -> bytes:
    """A valid DOCX whose word/document.xml unzips to about ``megabytes`` MB of short paragraphs
    (deflate shrinks the repetition a few hundredfold: 60 MB fits in a few hundred kB)."""
    from docx import Document

    out = io.BytesIO()
    Document().save(out)
    template = zipfile.ZipFile(io.BytesIO(out.getvalue()))
    paragraph = "<w:p><w:r><w:t>Quarterly figures, line {:03d}.</w:t></w:r></w:p>"
    body = "".join(paragraph.format(i % 500) for i in range(int(megabytes * 2**20 / len(paragraph.format(0)))))
    hostile = io.BytesIO()
    with zipfile.ZipFile(hostile, "w", zipfile.ZIP_DEFLATED) as archive:
        for member in template.infolist():
            data = template.read(member.filename)
            if member.filename == "word/document.xml":
                data = data.replace(b"<w:body>", b"<w:body>" + body.encode(), 1)
            archive.writestr(member.filename, data, compresslevel=9)
    return hostile.getvalue()


def slide_deck() -> bytes:
    """A PPTX of three slides: a title slide, a bulleted slide with speaker notes, a table."""
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[0])
    first.shapes.title.text = "Quarterly Robot Review"
    first.placeholders[1].text = "Northwind Robotics, Q3 2026"
    second = deck.slides.add_slide(deck.slide_layouts[1])
    second.shapes.title.text = "Battery returns"
    body = second.placeholders[1].text_frame
    body.text = "Returns fell to 1.2 percent after the firmware fix."
    body.add_paragraph().text = "Most returns came from robots stored in hot cars."
    second.notes_slide.notes_text_frame.text = "Mention the supply of part NW-BATT-5200."
    third = deck.slides.add_slide(deck.slide_layouts[5])
    third.shapes.title.text = "Sales by region"
    table = third.shapes.add_table(3, 2, Inches(1), Inches(2), Inches(6), Inches(2)).table
    for r, row in enumerate([("Region", "Units"), ("EMEA", "1200"), ("Americas", "950")]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


_MAIL_SUBJECT = "Dock firmware 2.4 stops R4 docks charging"
_MAIL_TEXT = "Hi team,\n\nAfter updating to dock firmware 2.4 the R4 dock no longer charges.\n"
_MAIL_HTML = ("<html><body><p>Hi team,</p><p>After updating to dock firmware 2.4 the R4 dock no longer charges. "
              "Holding the reset button for ten seconds restores firmware 2.3.</p><table><tr><th>Dock</th>"
              "<th>Firmware</th></tr><tr><td>R4</td><td>2.4</td></tr></table></body></html>")


def _mail_attachments() -> list[tuple[str, bytes]]:
    """A log, a one-page PDF, a photo and a truncated Word file: two read, two named with the cause."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        write_pdf(Path(folder) / "f.pdf", [["Dock R4 service note", "Firmware 2.3 is the last that charges."]])
        pdf = (Path(folder) / "f.pdf").read_bytes()
    return [("dock.log", b"ATTACHMENT-TEXT-7731: charge controller timeout\n"), ("service note.pdf", pdf),
            ("photo.png", png()), ("settings.docx", b"PK\x03\x04 truncated")]


def email_message() -> bytes:
    """An e-mail with a plain-text and an HTML body (the HTML one holds a table) and four attachments."""
    from email.message import EmailMessage

    message = EmailMessage()
    message["From"] = "Dana Lee <dana@northwind.example>"
    message["To"] = "support@northwind.example"
    message["Cc"] = "Jürgen Weiß <jw@northwind.example>"
    message["Subject"] = _MAIL_SUBJECT
    message["Date"] = "Tue, 03 Nov 2026 10:12:00 +0000"
    message.set_content(_MAIL_TEXT)
    message.add_alternative(_MAIL_HTML, subtype="html")
    for name, data in _mail_attachments():
        kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
        message.add_attachment(data, maintype=kind.split("/")[0], subtype=kind.split("/")[1], filename=name)
    return bytes(message)


def outlook_message(html: bool = True) -> bytes:
    """``email_message()`` as Outlook saves it (.msg, written with msgforge): the same senders, date,
    bodies and attachments; ``html=False`` leaves the HTML body out."""
    from datetime import datetime, timezone

    from msgforge import Message

    message = Message(subject=_MAIL_SUBJECT, text_body=_MAIL_TEXT, html_body=_MAIL_HTML if html else "",
                      sender=("dana@northwind.example", "Dana Lee"), to=["support@northwind.example"],
                      cc=[("jw@northwind.example", "Jürgen Weiß")],
                      sent=datetime(2026, 11, 3, 10, 12, tzinfo=timezone.utc))
    for name, data in _mail_attachments():
        message.attach_bytes(name, data)
    return message.as_bytes()


def notebook(image_kb: int = 3) -> bytes:
    """A Jupyter notebook (nbformat 4): a titled Markdown cell, a code cell whose output is a PNG of
    ``image_kb`` kB (base64) and a log line, a second section, and an empty code cell."""
    import base64
    import json

    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Churn analysis\n", "\n", "We load the **events** table."]},
        {"cell_type": "code", "metadata": {}, "execution_count": 1,
         "source": ["import pandas as pd\n", "events = pd.read_parquet('events.parquet')"],
         "outputs": [{"output_type": "stream", "name": "stdout", "text": ["OUTPUT-LOG-4417\n"]},
                     {"output_type": "display_data", "metadata": {},
                      "data": {"image/png": base64.b64encode(png() * (image_kb * 1024 // len(png()) + 1)).decode(),
                               "text/plain": ["<Figure>"]}}]},
        {"cell_type": "markdown", "metadata": {}, "source": "## Findings\n\nChurn is highest in the third month."},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "source": [], "outputs": []},
    ]
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "cells": cells,
                       "metadata": {"kernelspec": {"name": "python3", "language": "python"}}}).encode()


def workbook(rows: int = 3) -> bytes:
    """An Excel workbook: a "Stock" sheet (header, ``rows`` rows of parts, a blank row, a formula
    cell never calculated), an empty sheet, a "Prices" sheet and a hidden "Salaries" one; titled
    "Parts inventory"."""
    from datetime import date

    from openpyxl import Workbook

    book = Workbook()
    book.properties.title = "Parts inventory"
    stock = book.active
    stock.title = "Stock"
    stock.append(["Part", "Name", "Units", "Checked"])
    stock.append(["NW-BATT-5200", "Battery | 5200 mAh", 40, date(2026, 3, 31)])
    for _ in range(rows - 2):
        stock.append(["NW-BRUSH-1", "Side brush", None])
    stock.append([])
    stock.append(["NW-DOCK-4", "Dock R4", 7])
    stock["F2"] = "=C2*2"
    book.create_sheet("Empty")
    book.create_sheet("Prices").append(["Part", "EUR"])
    book["Prices"].append(["NW-DOCK-4", 129.5])
    salaries = book.create_sheet("Salaries")  # hidden from its readers: never indexed
    salaries.append(["Name", "Salary"])
    salaries.append(["Alice Jones", 123456])
    salaries.sheet_state = "hidden"
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def legacy_workbook() -> bytes:
    """``workbook()``'s sheets and values as an Excel 97-2003 file (.xls, xlwt), without its
    formula cell and title (xlwt writes neither as Excel would)."""
    from datetime import date

    import xlwt

    book = xlwt.Workbook()
    day = xlwt.easyxf(num_format_str="YYYY-MM-DD")
    sheets = {"Stock": [["Part", "Name", "Units", "Checked"], ["NW-BATT-5200", "Battery | 5200 mAh", 40, date(2026, 3, 31)],
                        ["NW-BRUSH-1", "Side brush"], [], ["NW-DOCK-4", "Dock R4", 7]],
              "Empty": [], "Prices": [["Part", "EUR"], ["NW-DOCK-4", 129.5]],
              "Salaries": [["Name", "Salary"], ["Alice Jones", 123456]]}
    for name, rows in sheets.items():
        sheet = book.add_sheet(name)
        sheet.visibility = int(name == "Salaries")  # hidden, as workbook()'s
        for r, row in enumerate(rows):
            for c, value in enumerate(row):
                sheet.write(r, c, value, day if isinstance(value, date) else xlwt.Style.default_style)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def binary_workbook() -> bytes:
    """``workbook()``'s sheets and values as an Excel binary workbook (.xlsb, pyxlsbwriter), without
    its formula cell and title (pyxlsbwriter writes neither)."""
    import tempfile
    from datetime import date
    from pathlib import Path

    from pyxlsbwriter import XlsbWriter

    sheets = {"Stock": [["Part", "Name", "Units", "Checked"], ["NW-BATT-5200", "Battery | 5200 mAh", 40, date(2026, 3, 31)],
                        ["NW-BRUSH-1", "Side brush"], [], ["NW-DOCK-4", "Dock R4", 7]],
              "Empty": [], "Prices": [["Part", "EUR"], ["NW-DOCK-4", 129.5]],
              "Salaries": [["Name", "Salary"], ["Alice Jones", 123456]]}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "stock.xlsb"
        with XlsbWriter(str(path)) as book:
            for name, rows in sheets.items():
                book.add_sheet(name, hidden=name == "Salaries")  # hidden, as workbook()'s
                book.write_sheet([row + [None] * (4 - len(row)) for row in rows])  # it writes rectangles
        return path.read_bytes()


def encrypted_docx() -> bytes:
    """A Word file saved with a password (Office's agile encryption, msoffcrypto-tool)."""
    from docx import Document
    from msoffcrypto.format.ooxml import OOXMLFile

    plain, locked = io.BytesIO(), io.BytesIO()
    document = Document()
    document.add_paragraph("Salary bands for 2027.")
    document.save(plain)
    plain.seek(0)
    OOXMLFile(plain).encrypt("s3cret", locked)
    return locked.getvalue()


def pandoc_document(markdown: str, to: str, tmp: Path, title: str = "", writer: str = "") -> bytes:
    """``markdown`` written as a ``.{to}`` file (odt, rtf, epub, ...; in pandoc's ``writer`` format
    where the extension does not name it) by the pandoc the project installs; an RTF file gets
    ``title`` in its properties as Word writes them (pandoc's RTF writer leaves them out)."""
    import pypandoc

    source, target = tmp / "source.md", tmp / f"document.{to}"
    source.write_text(markdown, encoding="utf-8")
    subprocess.run([pypandoc.get_pandoc_path(), "--standalone", str(source), "-o", str(target),
                    *(["--to", writer] if writer else [])], check=True, capture_output=True)
    data = target.read_bytes()
    return data.replace(b"\\deff0", b"\\deff0{\\info{\\title " + title.encode() + b"}}", 1) if to == "rtf" else data


def _texts(rows: list[dict]) -> str:
    return "\n".join(r["text"] for r in sorted(rows, key=lambda r: r["start"]))


def write_corpus(root: Path, outside: Path) -> list[Case]:
    """Write the corpus under ``root`` (a secret under ``outside``); returns its cases."""
    root.mkdir(parents=True, exist_ok=True)
    outside.mkdir(parents=True, exist_ok=True)
    good_pdf = _pdf_bytes([["Dock Manual", "", "The dock charges the robot in 90 minutes."]], root)
    deck = slide_deck()
    long_line = "".join(f"NW{i:05d}" for i in range(100_000 // 7 + 1))[:100_000]
    deep = "".join("#" * (1 + i % 6) + f" Level {i}\n\n" + "  " * (i % 40) + f"- item {i} about pumps\n\n"
                   for i in range(120)) + ">" * 200 + " quoted deep down\n"
    # Rows repeat (only the first and last are unique), so most chunks embed once: the table
    # tests parsing, chunking and writing 10k rows, not the embedder's speed.
    table = "# Parts\n\n| part | stock |\n|---|---|\n| NW-first | 1 |\n" + "| NW-part | 5 |\n" * 9_998 + \
        "| NW-last | 9 |\n"
    html_table = ("<html><body><h1>Parts</h1><table><tr><th>part</th><th>stock</th></tr>"
                  "<tr><td>NW-first</td><td>1</td></tr>" + "<tr><td>NW-part</td><td>5</td></tr>" * 9_998 +
                  "<tr><td>NW-last</td><td>9</td></tr></table></body></html>")
    html = ("<html><head><title>Gate Policy</title><style>body { font-family: SECRET_STYLE; }</style>"
            "<script>window.trackingId = 'SCRIPT_LEAK_42';</script></head><body><h1>Gate Policy</h1>"
            "<p>The loading gate closes at 22:00 every night.</p><script>alert('SCRIPT_LEAK_43')</script></body></html>")
    cjk = "# 维护手册\n\n机器人每周需要清洁一次滤网。电池大约可以使用五百次完整充电。\n\n" * 8 + \
          "## ロボットの手入れ\n\nブラシは毎月交換してください。" * 6
    rtl = "سياسة الإجازات: يحصل كل موظف على سبعة وعشرين يوما من الإجازة المدفوعة.\n\n" \
          "מדיניות חופשה: כל עובד מקבל עשרים ושבעה ימי חופשה בשנה.\n"
    guide = "# Gate Guide\n\n## Night shift\n\nThe east gate opens at 05:30 for deliveries.\n"
    odt = pandoc_document(guide, "odt", outside)
    stock_ods = spreadsheet("Stock", [["Part", "Units"], *([f"NW-{n:05d}", str(n % 97)] for n in range(10_000))])
    flow = drawing([("Gate opening", shape(1, "Guard checks the badge", y=2) + shape(2, "Gate opens", y=1), "")])
    emoji = "# Party 🎉\n\nThe team lunch 🍕 is on Fri\u200bday at the ro\u200dof terrace 🏙️.\u200c\ufeff Bring 👍🏽 mood.\n"
    files: dict[str, bytes] = {
        "good/ordinary.md": b"# Ordinary\n\nThe cafeteria opens at eight and closes at three.\n",
        "good/dock_manual.pdf": good_pdf,
        "pdf/corrupt.pdf": good_pdf[: len(good_pdf) // 3] + b"\x00garbage\xff" * 50,
        "pdf/encrypted.pdf": _encrypted_pdf(good_pdf),
        "empty/zero_bytes.md": b"",
        "docx/truncated.docx": _images_only_docx()[:2000],
        "binary/photo.md": png() * 20,
        "binary/blob.bin": bytes(range(256)) * 64,
        "encoding/latin1.txt": "Café crème, naïve façade: Grüße aus Köln.\n".encode("latin-1"),
        "encoding/utf16_bom.txt": "Grüße aus München: the tram leaves at 7:15.\n".encode("utf-16"),
        "encoding/mixed_endings.md": b"# Endings\r\n\r\nLine one.\rLine two.\nLine three.\r\n",
        "huge/long_line.txt": long_line.encode(),
        "structure/deep.md": deep.encode(),
        "structure/table_10k.md": table.encode(),
        "structure/table_10k.html": html_table.encode(),
        "web/scripts_and_styles.html": html.encode(),
        "web/only_scripts.html": b"<html><head><script>var a = 1;</script><style>p {}</style></head><body></body></html>",
        "code/nested.c": b"/* Restarts the dock's charger: CODE-MARKER-5120. */\nint *\n" + b"*" * 5000 + b"charger;\n",
        "docx/images_only.docx": _images_only_docx(),
        "pptx/review.pptx": deck,
        "pptx/corrupt.pptx": deck[: len(deck) // 2],
        "mail/dock_firmware.eml": email_message(),
        "sheets/stock_10k.xlsx": workbook(10_000),
        "sheets/stock_10k.ods": stock_ods,
        "opendocument/truncated.ods": stock_ods[: len(stock_ods) // 2],
        "diagrams/gate_flow.vsdx": flow,
        "diagrams/truncated.vsdx": flow[: len(flow) // 2],
        "notebooks/churn.ipynb": notebook(image_kb=2048),
        "notebooks/truncated.ipynb": notebook()[:500],
        "mail/photo.eml": png() * 20,
        "mail/dock_firmware.msg": outlook_message(),
        "mail/truncated.msg": outlook_message()[:3000],
        "sheets/stock.xls": legacy_workbook(),
        "legacy/minutes.doc": legacy_workbook(),  # a compound file that is no Word document
        "legacy/harmless-clean.doc": (REPO / "tests" / "fixtures" / "office97" / "harmless-clean.doc").read_bytes(),
        "legacy/embedded-simple-2007.ppt": (REPO / "tests" / "fixtures" / "office97" / "embedded-simple-2007.ppt").read_bytes(),
        "locked/salaries.docx": encrypted_docx(),
        "opendocument/gate_guide.odt": odt,
        "opendocument/gate_guide.rtf": pandoc_document(guide, "rtf", outside, "Gate Guide"),
        "opendocument/gate_guide.epub": pandoc_document(guide, "epub", outside),
        "opendocument/truncated.odt": odt[: len(odt) // 2],
        "latex/macro_loop.tex": b"\\documentclass{article}\\def\\a{\\a}\\begin{document}\\a\\end{document}",
        "scripts/cjk.md": cjk.encode(),
        "scripts/rtl.txt": rtl.encode(),
        "scripts/emoji_zero_width.md": emoji.encode(),
        'names/quote "it", she said.md': b"# Quotes\n\nCommas, quotes and spaces are fine in names.\n",
        "names/line\nbreak.md": b"# Newline\n\nA file name with a newline in it.\n",
        "names/dots..in...name.md": b"# Dots\n\nDots that look like a parent folder are only dots.\n",
        "names/" + "x" * 200 + ".md": b"# Long name\n\nA 203-character file name.\n",
        "dup/first copy.md": b"# Duplicate\n\nThe visitor badge must be returned at the front desk.\n",
        "dup/second copy.md": b"# Duplicate\n\nThe visitor badge must be returned at the front desk.\n",
        "nothing/whitespace.txt": b"   \n\n\t  \n",
        "scans/dock_manual.pdf": scanned(good_pdf),
        "scans/noise.png": _noise_png(),
        "scans/truncated.jpg": _page_jpeg(good_pdf)[:4000],
        "scans/bomb.png": _bomb_png(),
    }
    for doc_id, data in files.items():
        path = root / doc_id
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (outside / "secret.md").write_text(f"# Secret\n\n{SECRET} must never be indexed.\n")
    (root / "links").mkdir(exist_ok=True)
    (root / "links" / "leak.md").symlink_to(outside / "secret.md")
    (root / "links" / "inside.md").symlink_to(root / "good" / "ordinary.md")
    (root / "names").mkdir(exist_ok=True)
    (root / "names" / os.fsdecode(b"caf\xe9 menu.md")).write_text("# Menu\n\nSoup of the day.\n")  # a cp1252 name

    def has(*needles: str) -> Callable[[list[dict]], bool]:
        return lambda rows: bool(rows) and all(n in _texts(rows) for n in needles)

    return [
        Case("ordinary markdown", ("good/ordinary.md",), "ok", check=has("cafeteria opens at eight")),
        Case("valid PDF", ("good/dock_manual.pdf",), "ok", check=has("90 minutes")),
        Case("corrupt PDF", ("pdf/corrupt.pdf",), "error", "cannot parse as pdf"),
        Case("encrypted PDF", ("pdf/encrypted.pdf",), "error", "encrypted"),
        Case("zero-byte file", ("empty/zero_bytes.md",), "error", "the file is empty (0 bytes)"),
        Case("truncated Word file", ("docx/truncated.docx",), "error",
             "cannot parse as docx: the file is damaged or cut short"),
        Case("binary file named .md", ("binary/photo.md",), "error", "a PNG image, not text; name it .png"),
        Case("binary file, unknown extension", ("binary/blob.bin",), "error", "binary"),
        Case("Latin-1 text", ("encoding/latin1.txt",), "ok", check=has("Café crème", "Grüße aus Köln")),
        Case("UTF-16 with BOM", ("encoding/utf16_bom.txt",), "ok", check=has("Grüße aus München")),
        Case("mixed line endings", ("encoding/mixed_endings.md",), "ok",
             check=lambda rows: has("Line one.\nLine two.\nLine three.")(rows) and "\r" not in _texts(rows)),
        Case("100 kB line without spaces", ("huge/long_line.txt",), "ok",
             check=lambda rows: "".join(r["text"] for r in sorted(rows, key=lambda r: r["start"])) == long_line),
        Case("deeply nested markdown", ("structure/deep.md",), "ok", check=has("Level 119", "quoted deep down")),
        Case("markdown table of 10k rows", ("structure/table_10k.md",), "ok",
             check=lambda rows: len(rows) > 50 and has("NW-first", "NW-last")(rows)),
        Case("web page table of 10k rows", ("structure/table_10k.html",), "ok",
             check=lambda rows: len(rows) > 50 and has("| NW-first | 1 |", "| NW-last | 9 |")(rows)),
        Case("HTML with scripts and styles", ("web/scripts_and_styles.html",), "ok",
             check=lambda rows: has("closes at 22:00")(rows) and "LEAK" not in _texts(rows)
             and "SECRET_STYLE" not in _texts(rows)),
        Case("HTML that parses to nothing", ("web/only_scripts.html",), "error", "no text"),
        Case("C source nested 5,000 declarators deep", ("code/nested.c",), "ok", check=has("CODE-MARKER-5120")),
        Case("DOCX with only images", ("docx/images_only.docx",), "error", "no text"),
        Case("PowerPoint deck with notes and a table", ("pptx/review.pptx",), "ok",
             check=has("Returns fell to 1.2 percent", "NW-BATT-5200", "EMEA")),
        Case("corrupt PowerPoint file", ("pptx/corrupt.pptx",), "error", "cannot parse as pptx"),
        Case("e-mail with an HTML body, two readable attachments and two not", ("mail/dock_firmware.eml",), "ok",
             check=has("From: Dana Lee", "restores firmware 2.3", "| R4 | 2.4 |", "ATTACHMENT-TEXT-7731",
                       "Firmware 2.3 is the last that charges", "settings.docx (not read: cannot be parsed as docx)")),
        Case("binary file named .eml", ("mail/photo.eml",), "error", "not an e-mail message"),
        Case("Outlook message with an HTML body and attachments", ("mail/dock_firmware.msg",), "ok",
             check=has("From: Dana Lee", "restores firmware 2.3", "| R4 | 2.4 |", "ATTACHMENT-TEXT-7731",
                       "Firmware 2.3 is the last that charges", "photo.png (not read: OCR found no text)")),
        Case("truncated Outlook message", ("mail/truncated.msg",), "error", "cannot parse as email"),
        Case("spreadsheet of 10k rows", ("sheets/stock_10k.xlsx",), "ok",
             check=lambda rows: len(rows) > 50 and has("| NW-BATT-5200 | Battery ｜ 5200 mAh | 40 | 2026-03-31 |",
                                                       "| NW-DOCK-4 | 129.5 |")(rows)),
        Case("OpenDocument spreadsheet of 10k rows", ("sheets/stock_10k.ods",), "ok",
             check=lambda rows: len(rows) > 50 and has("| NW-00000 | 0 |", "| NW-09999 | 8 |")(rows)),
        Case("truncated OpenDocument spreadsheet", ("opendocument/truncated.ods",), "error",
             "cannot parse as ods: the file is damaged or cut short"),
        Case("Visio drawing", ("diagrams/gate_flow.vsdx",), "ok", check=has("Guard checks the badge", "Gate opens")),
        Case("truncated Visio drawing", ("diagrams/truncated.vsdx",), "error",
             "cannot parse as visio: the file is damaged or cut short"),
        Case("Excel 97-2003 workbook", ("sheets/stock.xls",), "ok",
             check=has("| NW-BATT-5200 | Battery ｜ 5200 mAh | 40 | 2026-03-31 |", "| NW-DOCK-4 | 129.5 |")),
        Case("Word 97-2003 document", ("legacy/harmless-clean.doc",), "ok",
             check=lambda rows: has("This is a harmless test document.")(rows)
             and all(r["heading_path"].endswith("Test") for r in rows)),
        Case("PowerPoint 97-2003 presentation", ("legacy/embedded-simple-2007.ppt",), "ok",
             check=has("It is a simple harmless ASCII text file")),
        Case("Excel 97-2003 workbook named .doc", ("legacy/minutes.doc",), "error", "save it as .docx"),
        Case("password-protected Word file", ("locked/salaries.docx",), "error", "encrypted (password protected)"),
        Case("OpenDocument text, RTF and EPUB", ("opendocument/gate_guide.odt", "opendocument/gate_guide.rtf",
                                                 "opendocument/gate_guide.epub"), "ok",
             check=lambda rows: len({r["doc_id"] for r in rows if "opens at 05:30" in r["text"]}) == 3
             and all(r["heading_path"].endswith("Gate Guide > Night shift") for r in rows if "05:30" in r["text"])),
        Case("truncated OpenDocument file", ("opendocument/truncated.odt",), "error", "cannot parse as odt"),
        Case("LaTeX macro that expands forever", ("latex/macro_loop.tex",), "error", "Loop encountered in expanding macro"),
        Case("notebook with a 2 MB image output", ("notebooks/churn.ipynb",), "ok",
             check=lambda rows: has("# Churn analysis", "```python\nimport pandas as pd", "third month")(rows)
             and "OUTPUT-LOG-4417" in _texts(rows)  # what the cell printed; not its picture or <Figure>
             and "iVBOR" not in _texts(rows) and "<Figure>" not in _texts(rows)),
        Case("truncated notebook", ("notebooks/truncated.ipynb",), "error", "cannot parse as notebook"),
        Case("whitespace-only text", ("nothing/whitespace.txt",), "error", "no text"),
        Case("CJK text", ("scripts/cjk.md",), "ok", check=has("电池大约可以使用五百次完整充电", "ブラシは毎月交換")),
        Case("right-to-left text", ("scripts/rtl.txt",), "ok", check=has("سبعة وعشرين", "עשרים ושבעה")),
        Case("emoji and zero-width characters", ("scripts/emoji_zero_width.md",), "ok",
             check=has("🍕", "Fri\u200bday", "ro\u200dof")),
        Case("file names with commas, quotes, newlines, dots", ('names/quote "it", she said.md', "names/line\nbreak.md",
                                                                "names/dots..in...name.md", "names/" + "x" * 200 + ".md"),
             "ok", check=lambda rows: len({r["doc_id"] for r in rows}) == 4),
        Case("file name that is not UTF-8", ("names/caf\\xe9 menu.md",), "error", "file name is not UTF-8"),
        Case("symlink outside the source root", ("links/leak.md",), "error", "outside the source root"),
        Case("symlink inside the source root", ("links/inside.md",), "ok", check=has("cafeteria opens at eight")),
        Case("scanned PDF (pages that are images)", ("scans/dock_manual.pdf",), "ok", check=has("90 minutes")),
        Case("image without text", ("scans/noise.png",), "error", "OCR found no text"),
        Case("truncated JPEG", ("scans/truncated.jpg",), "error", "cannot parse as image"),
        Case("image of 400 M pixels in 60 kB", ("scans/bomb.png",), "error", "decompression bomb"),
        Case("duplicate content under two paths", ("dup/first copy.md", "dup/second copy.md"), "ok",
             check=lambda rows: len({r["doc_id"] for r in rows}) == 2
             and len({r["embed_text_hash"] for r in rows}) == len(rows) // 2),
    ]


def write_large_text(path: Path, megabytes: int = 50) -> int:
    """A text file of ``megabytes`` MB written line by line (never held in memory); returns bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    line = b"The quarterly report lists every shipment of spare parts to the Munich depot.\n"
    size = 0
    with path.open("wb") as f:
        while size < megabytes * 1024 * 1024:
            f.write(line * 1000)
            size += len(line) * 1000
    return size
