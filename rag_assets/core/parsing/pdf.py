"""PDF files and pictures: a page's lines with their fonts read as headings, paragraphs and ruled
tables, its outline's entries as headings and its form fields' values; scanned pages and image
files read by OCR; running headers, footers and page numbers left out."""

from __future__ import annotations

import io
import re
import unicodedata
from dataclasses import replace

from rag_assets.core.models import Element
from rag_assets.core.parsing.hyphens import Hyphens, joined_lines
from rag_assets.core.parsing.items import CONTINUED, NO_LANGUAGE, first_title, join_elements, unstructured_items
from rag_assets.core.parsing.limits import report_ocr_page, report_pages
from rag_assets.core.parsing.pdf_columns import Box, reading_order
from rag_assets.core.parsing.structure import markdown_table


def parse_pdf(data: bytes):
    """pdfminer extracts each page's text (the 'fast' strategy) line by line with its font size,
    and ``_paged_text`` reads it; a ruled table (pdfplumber finds it by its lines) is its rows as
    Markdown, in place of its cells' text. A line that an entry of the PDF's outline (its
    bookmarks) names on the entry's page is a heading, whatever its font (``_pdf_outline``,
    ``_outline_lines``). A page whose text layer holds next to nothing while an image covers most
    of it (a scan, ``_scanned``) is read by OCR instead (``ocr.read_image`` on the page rendered by
    pdfium; the next scanned pages read in threads meanwhile: ``ocr.read_in_order``). The pages are
    counted first and each one reported done (``report_pages``, an OCR'd
    one also ``report_ocr_page``): a long PDF's time limit grows with its pages."""
    import pdfplumber
    from pdfminer.pdfdocument import PDFEncryptionError, PDFPasswordIncorrect
    from pdfplumber.utils.exceptions import PdfminerException

    from rag_assets.core.parsing.ocr import read_in_order

    try:
        with pdfplumber.open(io.BytesIO(data), laparams={}) as pdf, _PdfRenderer(data) as render:
            pages = pdf.pages
            report_pages(0, len(pages))
            outline = _pdf_outline(pdf.doc, {page.page_obj.pageid: n for n, page in enumerate(pages, start=1)})
            fields = _pdf_form_values(pdf.doc, _widget_pages(pages))
            sizes: list[float] = []  # the font sizes OCR measured so far
            scans: set[int] = set()  # the pages OCR read

            def laid_out():  # each page's lines, or its picture to read
                for page_number, page in enumerate(pages, start=1):
                    lines, page_edges = _pdf_lines(page.layout, page_number, _pdf_tables(page), fields.get(page_number, ()))
                    picture = None
                    if _scanned(page, lines) or _unmapped(lines):
                        report_ocr_page()
                        scans.add(page_number)
                        picture = render(page_number - 1)
                    page.close()  # its objects' cache
                    yield (page_number, lines, page_edges, picture and picture[1]), picture
                    report_pages(page_number, len(pages))

            def read():
                for (page_number, lines, page_edges, dpi), paragraphs in read_in_order(laid_out()):
                    if paragraphs is not None:  # OCR read the page: its filled form fields after its text
                        lines, page_edges = _scanned_lines(paragraphs, dpi, page_number, sizes)
                        lines += _pdf_lines((), page_number, (), fields.get(page_number, ()))[0]
                    yield lines, page_edges, outline.get(page_number, [])

            text, elements, title = _paged_text(read())
            return text, tuple(replace(e, ocr=True) if e.page in scans else e for e in elements), title
    except (PdfminerException, PDFEncryptionError, PDFPasswordIncorrect) as exc:
        cause = exc.args[0] if isinstance(exc, PdfminerException) and exc.args else exc
        if isinstance(cause, (PDFEncryptionError, PDFPasswordIncorrect)):
            raise ValueError("the PDF is encrypted (password protected); save an unprotected copy or exclude it") from exc
        raise cause if isinstance(cause, Exception) else exc


def parse_image(data: bytes):
    """An image file read by OCR (``ocr.read_image``), each page of a multi-page TIFF a page (of
    other formats the first frame: an animation's frames repeat it), then read as a PDF's pages
    are (``_paged_text``)."""
    from PIL import Image, ImageSequence

    from rag_assets.core.parsing.ocr import read_in_order

    try:
        image = Image.open(io.BytesIO(data))
    except Image.DecompressionBombError as exc:
        raise ValueError(f"{str(exc).rstrip('.')}; scale the image down or exclude it") from exc
    total = getattr(image, "n_frames", 1) if image.format == "TIFF" else 1
    dpi = _image_dpi(image)

    def frames():
        report_pages(0, total)
        for page_number, frame in enumerate(ImageSequence.Iterator(image), start=1):
            if page_number > total:
                break
            report_ocr_page()
            yield page_number, (frame.convert("L"), dpi)  # a copy: the next frame is read into ``frame``
            report_pages(page_number, total)

    def read():
        sizes: list[float] = []  # the font sizes OCR measured so far
        for page_number, paragraphs in read_in_order(frames()):
            yield (*_scanned_lines(paragraphs, dpi, page_number, sizes), [])

    text, elements, title = _paged_text(read())
    return text, tuple(replace(e, ocr=True) for e in elements), title


def _image_dpi(image) -> float:
    """The resolution a PIL image was scanned at, where it says one (70-1200 dpi), else
    ``ocr.OCR_DPI`` (Tesseract's best guess)."""
    from rag_assets.core.parsing.ocr import OCR_DPI

    dpi = image.info.get("dpi", (0,))[0]
    return dpi if 70 <= dpi <= 1200 else OCR_DPI


def pictures_text(pictures: list[bytes], page: int | None) -> list[tuple]:
    """What OCR reads in ``pictures`` (image files' bytes, in order; read in threads as a scan's
    pages are: ``ocr.read_in_order``), a paragraph an item on ``page``; a picture Pillow cannot
    open or decode (a Windows metafile, a damaged image) is skipped: the document's other text
    stands."""
    from PIL import Image

    from rag_assets.core.parsing.ocr import read_in_order

    def opened():
        for blob in pictures:
            try:
                image = Image.open(io.BytesIO(blob))
                image.load()
            except (OSError, ValueError, Image.DecompressionBombError):
                continue
            report_ocr_page()
            yield None, (image, _image_dpi(image))

    return [("NarrativeText", " ".join(p.lines), page, 1, True)
            for _, paragraphs in read_in_order(opened()) for p in paragraphs]


def _paged_text(pages) -> tuple[str, tuple[Element, ...], str]:
    """A paged document's text, elements and title from its ``pages``: per page, its lines (box
    number, text with the line end, font size: ``_pdf_lines``), the keys of its top and bottom
    lines and its outline entries. unstructured classifies the text a page at a time, split
    where the font size changes. Where the document sets short lines in a font larger than its
    body text, those are its headings, nested by size (``_pdf_heading_levels``), and
    unstructured's guesses at titles (short lines: running headers, code, captions) are not:
    once the pages so far show such headings, the text is read without the test behind those
    guesses (``plainly``), and read again with it where a later page proves the document to be
    in one size. A document in one font size keeps unstructured's titles. Lines the outline
    names are headings of its depth (levels by ``_outline_levels_by_depth``). Running headers and
    footers (``_running_lines``) and page numbers are left out. A sentence a page break cuts is
    read on (``_page_joint``), past the page's footnotes (text in a smaller font than the body's
    that ends the page), which follow it."""
    from collections import Counter

    from rag_assets.core.parsing.offline import prepare_unstructured

    prepare_unstructured()
    from unstructured.cleaners.core import blank_line_grouper, clean_bullets
    from unstructured.nlp.patterns import UNICODE_BULLETS_RE
    from unstructured.partition.text import partition_text
    from unstructured.partition.text_type import (is_bulleted_text, is_email_address, is_possible_numbered_list,
                                                  is_us_city_state_zip)

    def classified(boxes: list[list[str]], page: int) -> list[tuple]:
        # A box is a paragraph: its lines are joined (unstructured's blank-line grouping; left to
        # choose, it takes every line of a run of long boxes for a paragraph of its own).
        body = "\n".join("".join(box) for box in boxes)  # as pdfminer joins a page's boxes
        return unstructured_items(partition_text(text=body, languages=NO_LANGUAGE, paragraph_grouper=blank_line_grouper),
                                  page=page) if body.strip() else []
 
    def plainly(boxes: list[list[str]], page: int) -> list[tuple]:
        # The paragraphs and list items ``classified`` gives, without unstructured's narrative-text
        # test (spaCy's tagger on every paragraph: half a PDF's parse), which only tells narrative
        # from other text and titles: a PDF headed by sizes or its outline drops those titles.
        items = []
        for text in re.split(r"\s*\n\s*", blank_line_grouper("\n".join("".join(box) for box in boxes)).strip()):
            if not text or (len(text) == 1 and UNICODE_BULLETS_RE.match(text)):
                continue
            bulleted = is_bulleted_text(text)
            category = ("ListItem" if bulleted else "EmailAddress" if is_email_address(text)
                        else "Address" if is_us_city_state_zip(text) else "ListItem" if is_possible_numbered_list(text)
                        else "NarrativeText")
            items.append((category, clean_bullets(text) if bulleted else text, page, 1))
        return items

    # page, size, the run's lines by box, unstructured's items (None: not classified yet), whether
    # it could be a heading (a few short lines a box), the outline depth that makes it a heading (0: none)
    runs: list[tuple[int, float, list[list[str]], list[tuple] | None, bool, int]] = []
    chars: Counter = Counter()  # characters by font size
    short_sizes: set[float] = set()  # the sizes of the runs that could be headings so far
    outlined = False  # whether a line so far is a heading the outline names
    plain_runs: list[int] = []  # the runs classified ``plainly``, the document looking headed so far
    edges: list[set[str]] = []  # per page, the keys (``_line_keys``) of its top and bottom lines
    hyphens = Hyphens()  # the words of the pages so far, to read a word hyphenated over a line break
    for page_number, (lines, page_edges, entries) in enumerate(pages, start=1):
        lines = joined_lines([(box, _CID.sub("", line).translate(_LIGATURES), size) for box, line, size in lines],
                             hyphens)
        edges.append(page_edges)
        page_runs = _size_runs(lines, _outline_lines(lines, entries, page_edges, page_number))
        page_chars: Counter = Counter()
        for size, boxes, _ in page_runs:
            if size != _TABLE:
                page_chars[size] += sum(len(line.strip()) for box in boxes for line in box)
        chars.update(page_chars)
        common = page_chars.most_common(1)[0][0] if page_chars else 0.0
        shorts = [size != _TABLE and all(len(box) <= 3 and all(map(_heading_like, box)) for box in boxes)
                  for size, boxes, _ in page_runs]
        short_sizes.update(size for (size, _, _), short in zip(page_runs, shorts) if short)
        outlined = outlined or any(depth for _, _, depth in page_runs)
        # headed as far as the pages so far tell (checked at the end: see below)
        classify = plainly if outlined or _pdf_heading_levels(chars, short_sizes) else classified
        for (size, boxes, depth), short in zip(page_runs, shorts):
            if size == _TABLE:
                tables = [("Table", table, page_number) for box in boxes for table in box]  # adjacent ones too
                runs.append((page_number, size, boxes, tables, False, 0))
                continue
            # a run in a larger font than most of its page's text waits to be judged a heading
            found = None if depth or (short and size > common) else classify(boxes, page_number)
            if found is not None and classify is plainly:
                plain_runs.append(len(runs))
            runs.append((page_number, size, boxes, found, short, depth))
    levels = _pdf_heading_levels(chars, {size for _, size, _, _, short, _ in runs if short})
    by_depth = _outline_levels_by_depth([(depth, levels.get(size)) for _, size, _, _, _, depth in runs if depth])
    running = _running_lines(edges)
    headed = levels or by_depth  # unstructured's guesses at titles give way to these headings
    if not headed:  # a later page's text set the body size larger: the early guess was wrong
        for n in plain_runs:
            runs[n] = (*runs[n][:3], None, *runs[n][4:])
    classify = plainly if headed else classified
    body_size = chars.most_common(1)[0][0] if chars else 0.0
    items: list[tuple] = []
    notes: int | None = None  # where the items in a smaller font than the body that end the items so far start
    for page_number, size, boxes, found, short, depth in runs:
        if depth or (short and size in levels):  # a heading a box
            level = by_depth[depth] if depth else levels[size]
            items += [("Title", " ".join(line.strip() for line in box), page_number, level) for box in boxes]
            notes = None
            continue
        for item in classify(boxes, page_number) if found is None else found:
            if _line_keys(item[1], page_number) & edges[page_number - 1] & running:
                continue
            item = ("UncategorizedText", *item[1:]) if headed and item[0] == "Title" else item
            held: list[tuple] = []
            joint = _page_joint(items[-1], item, items[-1][2] != page_number, hyphens) if items else None
            if joint is None and notes and items[-1][2] != page_number \
                    and (joint := _page_joint(items[notes - 1], item, True, hyphens)) is not None:
                held, items[notes:] = items[notes:], []  # a page's footnotes: read after the sentence they cut
            if joint is not None:
                items[-1], joiner = joint
                items.append((CONTINUED, joiner, page_number))
                item = ("NarrativeText", *item[1:]) if item[0] == "Title" else item  # no title goes on a sentence
            if 0 < size < body_size and not held:
                notes = len(items) if notes is None else notes
            else:
                notes = None
            items += [item, *held]
    text, elements = join_elements([(category, _without_leaders(item_text), *rest)
                                    for category, item_text, *rest in items])
    return text, elements, first_title(text, elements)


# Typographic ligatures as their letters: many PDFs (LaTeX's among them) map their glyphs to U+FB01 "ﬁ" and
# the like, which no keyword search matches to "fi" and MiniLM reads apart ("ﬁle" as "ﬁ", "##le"; "ﬃ" unknown).
_LIGATURES = str.maketrans({"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl",
                            "\ufb05": "st", "\ufb06": "st"})
_PROSE = ("NarrativeText", "UncategorizedText", "ListItem")
_CUT_SENTENCE = re.compile(r"(?:[^\W_]|[,;(\u2010-])\Z")  # a paragraph's end that is no sentence's end


def _page_joint(before: tuple, after: tuple, new_page: bool, hyphens: Hyphens) -> tuple[tuple, str] | None:
    """Where the item ``after`` goes on with the sentence the item ``before`` leaves unfinished
    (prose that ends in a word or a comma, then text in lower case that is no list item:
    unstructured takes a short one for a title), after a page break (``new_page``), a list item's
    lines read apart or a box ending in a cut word: ``before`` (its hyphen dropped where the break
    cut a word, ``Hyphens.cut``) and what joins them (" ", or "" for a cut word, or the hyphen
    kept). None where they are apart."""
    text, first = before[1].rstrip(), after[1].lstrip()
    cut = hyphens.cut(text, first)
    if not (new_page or before[0] == "ListItem" or cut) or before[0] not in _PROSE \
            or after[0] not in ("NarrativeText", "UncategorizedText", "Title") \
            or not first[:1].islower() or not _CUT_SENTENCE.search(text):
        return None
    return ((before[0], cut[0], *before[2:]), cut[1]) if cut else (before, " ")


_LEADER = re.compile(r"[ \t]*(?:\.[ \t]?){5,}")  # a contents or index line's dots: "Setup . . . . . . 12"


def _without_leaders(text: str) -> str:
    """``text`` with each run of five dots or more (a leader to a page number in a table of contents
    or an index: MiniLM embedded each dot as a token, 30 to an entry) one "…"."""
    return _LEADER.sub(lambda m: " …" if m.end() == len(text) or text[m.end()] == "\n" else " … ", text)


class _PdfRenderer:
    """Renders a PDF's pages for OCR with pdfium (opened on the first page asked for): called with
    a page index, returns the page as a grayscale PIL image and its dots per inch
    (``ocr.render_scale``)."""

    def __init__(self, data: bytes):
        self.data, self.pdf = data, None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        if self.pdf is not None:
            self.pdf.close()

    def __call__(self, index: int):
        import pypdfium2

        from rag_assets.core.parsing.ocr import render_scale

        if self.pdf is None:
            self.pdf = pypdfium2.PdfDocument(self.data)
        page = self.pdf[index]
        try:
            scale = render_scale(*page.get_size())
            return page.render(scale=scale, grayscale=True).to_pil(), scale * 72
        finally:
            page.close()


#: a PDF page, a slide or a Word document is read by OCR when its own text has at most this many characters
SCANNED_MAX_CHARS = 100


def _scanned(page, lines: list[tuple[int, str, float]]) -> bool:
    """Whether a pdfplumber page is a scan: at most ``SCANNED_MAX_CHARS`` characters in its text
    layer (a stamped page number, a scanner's footer) while its images cover half the page."""
    if sum(len(line.strip()) for _, line, _ in lines) > SCANNED_MAX_CHARS or not page.images:
        return False
    x0, top, x1, bottom = page.bbox
    covered = sum(max(0.0, min(im["x1"], x1) - max(im["x0"], x0)) * max(0.0, min(im["bottom"], bottom) - max(im["top"], top))
                  for im in page.images)
    return covered >= 0.5 * (x1 - x0) * (bottom - top)


_CID = re.compile(r"\(cid:\d+\)")  # pdfminer's text for a glyph its font maps to no character


def _unmapped(lines: list[tuple[int, str, float]]) -> bool:
    """Whether most of a page's glyphs map to no character (a font without its ToUnicode map:
    pdfminer reads each as "(cid:82)"): such a page is read by OCR, as a scan is."""
    glyphs = sum(line.count("(cid:") for _, line, _ in lines)
    return glyphs > 0 and glyphs > sum(len(_CID.sub("", line).replace(" ", "").strip()) for _, line, _ in lines)


def _scanned_lines(paragraphs, dpi: float, page: int, sizes: list[float]) -> tuple[list[tuple[int, str, float]], set[str]]:
    """OCR'd ``paragraphs`` (``ocr.Paragraph``, read at ``dpi``) as ``_pdf_lines`` gives a page's
    lines: a paragraph a box, a line's font size its height in points, the paragraph's median
    height for the lines within ``SCANNED_SIZE_SPREAD`` of it (a heading read into the paragraph
    below keeps its own); each size taken as the first of the document's ``sizes`` so far within
    ``SCANNED_SIZE_SPREAD`` of it (a new one, to the half point, is added): OCR measures a font's
    size up to 10% apart from line to line. Also the keys of the one-line paragraphs
    within 5 points of the highest top or lowest bottom (``_edge_keys``)."""
    from statistics import median

    lines = []
    for n, paragraph in enumerate(paragraphs):
        middle = median(paragraph.heights)
        for line, height in zip(paragraph.lines, paragraph.heights):
            points = (middle if abs(height - middle) <= SCANNED_SIZE_SPREAD * middle else height) * 72 / dpi
            size = next((s for s in sizes if abs(points - s) <= SCANNED_SIZE_SPREAD * s), None)
            if size is None:
                size = round(points * 2) / 2
                sizes.append(size)
            lines.append((n, line + "\n", size))
    # image rows count down the page: negated, they are heights as a PDF's
    return lines, _edge_keys([("\n".join(p.lines), -p.top, -p.bottom) for p in paragraphs], 5 * dpi / 72, page)


#: how far apart (a fraction) OCR'd line heights may be and still be one font size
SCANNED_SIZE_SPREAD = 0.1


_TABLE = -1.0  # the "font size" of a ruled table's run of one line: its Markdown rows


def _pdf_tables(page) -> list[tuple[tuple[float, float, float, float], str]]:
    """A pdfplumber page's ruled tables of two rows and two columns or more (its "lines" strategy:
    cells bounded by drawn lines), each as its box in pdfminer's coordinates (x0, y0, x1, y1) and
    its rows as Markdown; none are searched for on a page whose drawings cannot bound two rows of
    two cells (``_may_bound_cells``): finding them converts every character of the page."""
    if not _may_bound_cells(page.layout):
        return []
    found = []
    mb_top = page.mediabox[1]
    for table in page.find_tables():
        rows = [[cell or "" for cell in row] for row in table.extract()]
        if len(rows) < 2 or max(len(row) for row in rows) < 2 or not (markdown := markdown_table(rows)):
            continue
        x0, top, x1, bottom = table.bbox
        found.append(((x0, page.height + mb_top - bottom, x1, page.height + mb_top - top), markdown))
    return found


def _may_bound_cells(layout) -> bool:
    """Whether a page's drawings could be a ruled table's: a rectangle, a path of more than one
    segment, or straight lines of which at least two are horizontal and two vertical."""
    from pdfminer.layout import LTCurve, LTLine, LTRect

    horizontal = vertical = 0
    for el in layout:
        if isinstance(el, LTRect) or (isinstance(el, LTCurve) and not isinstance(el, LTLine)):
            return True
        if isinstance(el, LTLine):
            horizontal += el.height < 1
            vertical += el.width < 1
    return horizontal >= 2 and vertical >= 2


def _size_runs(lines: list[tuple[int, str, float]], headings: dict[int, tuple[int, int]]
               ) -> list[tuple[float, list[list[str]], int]]:
    """A page's lines (``_pdf_lines``) in runs of one font size: (size, the run's lines by box, 0);
    the lines ``headings`` marks (line number -> (outline entry, depth); ``_outline_lines``) are a
    run of their own per entry: (size, [its lines], depth)."""
    runs: list[tuple[float, list[list[str]], int]] = []
    last = None  # the previous line's box, entry and size
    for number, (box, line, size) in enumerate(lines):
        entry, depth = headings.get(number, (None, 0))
        if not runs or last[1:] != (entry, size) or (entry is not None and box != last[0]):
            runs.append((size, [[]], depth))
        elif box != last[0]:
            runs[-1][1].append([])
        runs[-1][1][-1].append(line)
        last = (box, entry, size)
    return runs


def _pdf_lines(layout, page: int, tables=(), fields=()) -> tuple[list[tuple[int, str, float]], set[str]]:
    """A page's text lines in reading order (pdfminer's, column by column on a page set in columns:
    ``reading_order``): (its box's number, its text with the line end, its font size: the size
    most of its characters have, to the half point); the lines of a box joined, and the boxes
    joined by a line end, are the page's text as pdfminer gives it. A box inside one of the
    ``tables`` (``_pdf_tables``) is left out, the table's Markdown rows standing as one line (size
    ``_TABLE``) where its first box was. Each of the form's filled ``fields`` on the page
    (``_pdf_form_values``) is a line of its own, in the body's size, before the first box whose
    top is below the field's middle (after its label on its row). Also the keys (``_line_keys``)
    of the one-line boxes at the top and at the bottom of the page (within 5 points of the
    highest top or lowest bottom), where running headers and footers are. A box that goes on with
    the sentence the column before it leaves unfinished is part of that box (``_column_goes_on``)."""
    from collections import Counter

    from pdfminer.layout import LTChar, LTText, LTTextContainer, LTTextLine

    boxes = [el for el in layout if isinstance(el, LTTextContainer)]
    boxes = [boxes[i] for i in reading_order([Box(box.x0, box.y0, box.x1, box.y1,
                                                  sum(isinstance(line, LTTextLine) for line in box) or 1)
                                              for box in boxes])]
    edges = _edge_keys([(box, box.y1, box.y0) for box in boxes], 5, page, lambda box: box.get_text().strip())
    sequence: list = list(boxes)
    for middle, _, entry in fields:
        at = next((i for i, item in enumerate(sequence) if not isinstance(item, str) and item.y1 < middle), len(sequence))
        sequence.insert(at, entry)
    lines: list[tuple[int, str, float | None]] = []
    placed: set[int] = set()  # the tables already written
    number = -1
    for n, box in enumerate(sequence):
        if isinstance(box, str):  # a form field's label and value
            lines.append((n, box + "\n", None))
            continue
        number = number if n and not isinstance(sequence[n - 1], str) and _column_goes_on(sequence[n - 1], box) else n
        x, y = (box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2
        inside = next((i for i, ((x0, y0, x1, y1), _) in enumerate(tables) if x0 <= x <= x1 and y0 <= y <= y1), None)
        if inside is not None:
            if inside not in placed:
                placed.add(inside)
                lines.append((number, tables[inside][1], _TABLE))
            continue
        for line in box:
            if not isinstance(line, LTText):
                continue
            glyphs = line if isinstance(line, LTTextContainer) else ()
            sizes = Counter(round(ch.size * 2) / 2 for ch in glyphs if isinstance(ch, LTChar) and not ch.get_text().isspace())
            size = sizes.most_common(1)[0][0] if sizes else 0.0
            lines.append((number, _scripted(line, size) if len(sizes) > 1 else line.get_text(), size))
    body = Counter(size for _, text, size in lines for _ in text if size is not None and size > 0).most_common(1)
    return [(n, text, (body[0][0] if body else 0.0) if size is None else size) for n, text, size in lines], edges


def _column_goes_on(before, box) -> bool:
    """Whether pdfminer text ``box`` opens a column (it stands right of the box ``before`` it and
    starts higher) with the sentence that ``before`` leaves unfinished: it ends in a word, a
    comma or a hyphen, and ``box`` starts in lower case. A paragraph a column break cut read as two."""
    return box.x0 >= before.x1 - 1 and box.y1 > before.y1 and bool(_CUT_SENTENCE.search(before.get_text().rstrip())) \
        and box.get_text().lstrip()[:1].islower()


def _scripted(line, size: float) -> str:
    """A pdfminer text line's text, each run of characters set smaller than its ``size`` and raised
    above its baseline opened by "^", lowered below it by "_": "10^6", "m^2", "CO_2", "maintenance^3"
    (a footnote's mark), where they read "106", "m2", "CO2" and "maintenance3"."""
    from statistics import median

    from pdfminer.layout import LTChar

    glyphs = [ch for ch in line if isinstance(ch, LTChar)]
    body = [ch.y0 for ch in glyphs if round(ch.size * 2) / 2 == size]
    if not body:
        return line.get_text()
    base, out, mode = median(body), [], ""
    for ch in line:
        now = ""
        if isinstance(ch, LTChar) and ch.size <= 0.85 * size and not ch.get_text().isspace():
            now = "^" if ch.y0 - base >= 0.15 * size else "_" if base - ch.y0 >= 0.1 * size else ""
        if now and now != mode:
            out.append(now)
        if not (isinstance(ch, LTChar) and ch.get_text().isspace() and mode):  # a space inside a run stays in it
            mode = now
        out.append(ch.get_text())
    return "".join(out)


MAX_OUTLINE_ENTRIES = 10_000


def _pdf_outline(doc, page_numbers: dict[int, int]) -> dict[int, list[tuple[int, str]]]:
    """A PDF's outline (bookmarks) by page: page number -> [(depth, title as ``_outline_key``)],
    in outline order, for the entries whose destination is a page of ``page_numbers`` (page
    object id -> page number). Read without recursion, each entry once (a cycle ends the walk),
    at most ``MAX_OUTLINE_ENTRIES``; a damaged outline is no outline."""
    from pdfminer.pdftypes import PDFObjRef, resolve1
    from pdfminer.psparser import PSLiteral
    from pdfminer.utils import decode_text as decode_pdf_text

    def page_of(entry: dict) -> int | None:
        dest = entry.get("Dest")
        action = resolve1(entry.get("A"))
        if dest is None and isinstance(action, dict) and getattr(resolve1(action.get("S")), "name", None) == "GoTo":
            dest = action.get("D")
        dest = resolve1(dest)
        if isinstance(dest, (bytes, str, PSLiteral)):  # a named destination
            dest = resolve1(doc.get_dest(dest.name if isinstance(dest, PSLiteral) else dest))
        if isinstance(dest, dict):
            dest = resolve1(dest.get("D"))
        if isinstance(dest, list) and dest and isinstance(dest[0], PDFObjRef):
            return page_numbers.get(dest[0].objid)
        return None

    found: dict[int, list[tuple[int, str]]] = {}
    try:
        root = resolve1(doc.catalog.get("Outlines"))
        stack = [(root.get("First"), 1)] if isinstance(root, dict) else []
        seen: set[int] = set()  # the entries' object numbers
        while stack and len(seen) < MAX_OUTLINE_ENTRIES:
            ref, depth = stack.pop()
            entry = resolve1(ref)
            if not isinstance(ref, PDFObjRef) or ref.objid in seen or not isinstance(entry, dict):
                continue
            seen.add(ref.objid)
            stack.append((entry.get("Next"), depth))  # after this entry's children
            stack.append((entry.get("First"), depth + 1))
            title = resolve1(entry.get("Title"))
            if isinstance(title, bytes) and (page := page_of(entry)) is not None:
                found.setdefault(page, []).append((depth, _outline_key(decode_pdf_text(title))))
    except Exception:  # noqa: BLE001 - bookmarks are optional: damaged ones must not fail the parse
        return {}
    return found


MAX_FORM_FIELDS = 10_000


def _widget_pages(pages) -> dict[int, int]:
    """The object id of each annotation a PDF's ``pages`` (pdfplumber's) list -> its page number:
    where a form field's widget shows (its own /P is optional, often missing)."""
    from pdfminer.pdftypes import PDFObjRef, resolve1

    found = {}
    for number, page in enumerate(pages, start=1):
        annotations = resolve1(page.page_obj.attrs.get("Annots"))
        for ref in annotations if isinstance(annotations, list) else []:
            if isinstance(ref, PDFObjRef):
                found.setdefault(ref.objid, number)
    return found


def _pdf_form_values(doc, widget_pages: dict[int, int]) -> dict[int, list[tuple[float, float, str]]]:
    """A PDF form's filled fields by the page that shows them (``widget_pages``: a widget
    annotation's object id -> the number of the page listing it): page number -> [(middle, left,
    "label: value")] top down (a widget's middle height and left edge), a field's
    label its tooltip (``/TU``, what a reader sees named) else its name, its value as the form
    shows it: a text or a choice, a ticked box's or chosen button's name ("Yes", "Female"); empty
    fields and unticked boxes left out. pdfminer reads no field's value (it is no page text), so a
    filled form was read blank. Read without recursion, each field once, at most
    ``MAX_FORM_FIELDS``; a damaged form is no form."""
    from pdfminer.pdftypes import PDFObjRef, resolve1
    from pdfminer.psparser import PSLiteral
    from pdfminer.utils import decode_text as decode_pdf_text

    def text(value) -> str:
        value = resolve1(value)
        if isinstance(value, PSLiteral):
            return "" if value.name == "Off" else str(value.name)
        if isinstance(value, bytes):
            return " ".join(decode_pdf_text(value).split())
        if isinstance(value, list):
            return ", ".join(filter(None, (text(item) for item in value)))
        return ""

    found: dict[int, list[tuple[float, float, str]]] = {}
    try:
        form = resolve1(doc.catalog.get("AcroForm"))
        fields = resolve1(form.get("Fields")) if isinstance(form, dict) else None
        stack = [(ref, None, "") for ref in reversed(fields)] if isinstance(fields, list) else []
        seen: set[int] = set()
        while stack and len(seen) < MAX_FORM_FIELDS:
            ref, value, label = stack.pop()
            field = resolve1(ref)
            if not isinstance(ref, PDFObjRef) or ref.objid in seen or not isinstance(field, dict):
                continue
            seen.add(ref.objid)
            value = field.get("V", value)  # a kid inherits its parent's value and label
            label = text(field.get("TU")) or text(field.get("T")) or label
            kids = resolve1(field.get("Kids"))
            if isinstance(kids, list) and kids:
                stack += [(kid, value, label) for kid in reversed(kids)]
                continue
            shown, rect, number = text(value), resolve1(field.get("Rect")), widget_pages.get(ref.objid)
            if shown and number is not None and isinstance(rect, list) and len(rect) == 4:
                entry = f"{label}: {shown}" if label else shown
                if entry not in {line for _, _, line in found.get(number, [])}:  # one value, several widgets
                    found.setdefault(number, []).append(((float(rect[1]) + float(rect[3])) / 2, float(min(rect[0], rect[2])),
                                                         entry))
    except Exception:  # noqa: BLE001 - a form is optional: a damaged one must not fail the parse
        return {}
    return {number: sorted(values, key=lambda value: (-value[0], value[1])) for number, values in found.items()}


def _outline_key(text: str) -> str:
    """A title or line as outline entries are matched to lines: NFKC (ligatures as letters),
    whitespace collapsed, case folded."""
    return " ".join(unicodedata.normalize("NFKC", text).split()).casefold()


#: what may stand before an outline entry's title on its line: a number ("2.1", "A.", "IV)"),
#: perhaps after "Chapter", "Section", "Part", "Appendix", "Annex" or "§"
_NUMBERING = re.compile(r"(?:(?:chapter|section|part|appendix|annex|§)\s*)?(?:\d+|[ivxlcdm]+|[a-z])(?:[.\-]\w+)*[.:)]?")


def _outline_lines(lines: list[tuple[int, str, float]], entries: list[tuple[int, str]], edges: set[str],
                   page: int) -> dict[int, tuple[int, int]]:
    """Which of a page's lines (``_pdf_lines``) are the headings its outline ``entries`` name:
    line number -> (entry number, depth). An entry names a line, or two or three consecutive
    lines of one box (a wrapped title), that read as its title, or as a number (``_NUMBERING``)
    and its title; an exact reading beats a numbered one, and a line of the page's first or last
    box that is one of its edges (``edges``: where running headers are) is taken only when no
    other line reads so."""
    if not entries:
        return {}
    keys = [_outline_key(text) for _, text, _ in lines]
    outer = {lines[0][0], lines[-1][0]} if lines else set()  # the page's first and last boxes
    found: dict[int, tuple[int, int]] = {}
    for entry, (depth, title) in enumerate(entries):
        best = None
        for first in range(len(lines)):
            for last in range(first, min(first + 3, len(lines))):
                if lines[last][0] != lines[first][0] or any(n in found for n in range(first, last + 1)):
                    break
                text = " ".join(keys[first:last + 1])
                numbered = text.endswith(" " + title) and _NUMBERING.fullmatch(text[: -len(title) - 1]) is not None
                if text == title or numbered:
                    edge = lines[first][0] in outer and bool(_line_keys(text, page) & edges)
                    rank = (edge, numbered, first)
                    if best is None or rank < best[0]:
                        best = (rank, range(first, last + 1))
                    break
        if best is not None:
            found.update(dict.fromkeys(best[1], (entry, depth)))
    return found


def _outline_levels_by_depth(headings: list[tuple[int, int | None]]) -> dict[int, int]:
    """Heading levels for outline depths, given each outline heading's (depth, its level by font
    size or None): a depth takes the level most of its headings have by size where that nests
    under the depth above, else the level below the depth above's (depth 1 under none: 1)."""
    from collections import Counter

    by_depth: dict[int, int] = {}
    level = 0
    for depth in range(1, max((d for d, _ in headings), default=0) + 1):
        sized = Counter(size_level for d, size_level in headings if d == depth and size_level is not None)
        common = sized.most_common(1)[0][0] if sized else None
        level = min(common if common is not None and common > level else level + 1, MAX_HEADING_LEVEL)
        by_depth[depth] = level
    return by_depth


def _running_lines(edges: list[set[str]]) -> set[str]:
    """The keys of a PDF's running headers and footers: lines at the top or bottom of at least
    half its pages, and of three, alike but for a number that counts the pages; and in a document
    of three pages or more, a line at the top or bottom of pages at most two apart (a chapter's
    title over each of its pages, or over every other one: a book's or manual's), of two such
    pages written alike, of three alike but for such a number."""
    pages_of: dict[str, list[int]] = {}
    for number, page in enumerate(edges):
        for key in page:
            pages_of.setdefault(key, []).append(number)
    return {key for key, pages in pages_of.items() if len(pages) >= max(3, len(edges) / 2) or len(edges) >= 3
            and sum(b - a <= 2 for a, b in zip(pages, pages[1:])) >= (2 if "#" in key else 1)}


def _edge_keys(blocks: list, slack: float, page: int, text=str) -> set[str]:
    """The keys (``_line_keys``) of a page's one-line blocks of at most 100 characters at its top
    or bottom (within ``slack`` of the highest top or the lowest bottom), where running headers
    and footers are: ``blocks`` are (block, top, bottom), heights up the page, ``text`` a block's
    text (called only for those at an edge)."""
    if not blocks:
        return set()
    top, bottom = max(high for _, high, _ in blocks), min(low for _, _, low in blocks)
    return {key for block, high, low in blocks if high >= top - slack or low <= bottom + slack
            if len(line := text(block)) <= 100 and "\n" not in line for key in _line_keys(line, page)}


def _line_keys(text: str, page: int) -> set[str]:
    """A line on ``page`` as running headers and footers are compared: its text (whitespace
    collapsed, case folded), and the same with one of its first three numbers written as its
    offset from the page number, so that "Page 3 of 12" on page 3 and "Page 4 of 12" on page 4,
    or "7" on page 9 and "8" on page 10, are alike."""
    text = " ".join(text.split()).casefold()
    return {text} | {f"{text[:m.start()]}#{int(m.group()) - page}{text[m.end():]}"
                     for m in list(re.finditer(r"\d+", text))[:3]}


def _pdf_heading_levels(chars, sizes: set[float]) -> dict[float, int]:
    """Heading levels by font size: of ``sizes`` (those that set short runs of heading-like lines),
    the ones at least ``HEADING_SCALE`` times the body text's (the size most of the ``chars``
    counts have), largest first (level 1); {} when there is none."""
    if not chars:
        return {}
    body = chars.most_common(1)[0][0]
    ranked = sorted((size for size in sizes if size >= body * HEADING_SCALE), reverse=True)
    return {size: min(level, MAX_HEADING_LEVEL) for level, size in enumerate(ranked, start=1)}


#: a PDF line is a heading when its font is at least this much larger than the body text's
HEADING_SCALE = 1.15
MAX_HEADING_LEVEL = 6


def _heading_like(line: str) -> bool:
    """Whether a line could be a heading: a letter in it, at most 150 characters, no dot leaders
    (a table of contents' entry)."""
    text = line.strip()
    return 0 < len(text) <= 150 and any(ch.isalpha() for ch in text) and not _DOT_LEADER.search(text)


_DOT_LEADER = re.compile(r"(?:\.\s?){4,}")
