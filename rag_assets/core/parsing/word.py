"""Word documents (Word 97-2003 converted first) read with unstructured, after their XML is unwrapped
where python-docx skips text (tracked insertions, content controls, drawings, equations, imported
chunks); footnotes and endnotes after the body."""

from __future__ import annotations

import io
import posixpath
import re

from rag_assets.core.parsing.embedded import graphic_content, markdown_rows
from rag_assets.core.parsing.formats import read_format
from rag_assets.core.parsing.items import NO_LANGUAGE, join_elements, unstructured_items
from rag_assets.core.parsing.math_text import OMML, omml_text
from rag_assets.core.parsing.packages import (DRAWING, MC, OLE_MAGIC, RELATIONSHIP, as_modern_office, package_path,
                                              plain_package, put_after, rel_targets, with_member, zip_member)
from rag_assets.core.parsing.pandoc import parse_pandoc
from rag_assets.core.parsing.pdf import SCANNED_MAX_CHARS, pictures_text
from rag_assets.core.parsing.web import parse_html, text_office_file


def parse_docx(data: bytes):
    """A Word document; a Word 97-2003 one (a compound file, told apart by content) converted to
    DOCX first (``_word97_as_docx``); an RTF or HTML file under a Word name (what "Save as" in older
    tools and web exports write) is read as what it is. A paragraph is a heading when its style
    has an outline level, as in Word's navigation pane: the built-in Heading styles, a template's
    own heading styles, a translated "Überschrift 1". A table of contents (its entries' styles) is
    left out. A document whose text is next to nothing
    (``SCANNED_MAX_CHARS``) is followed by what OCR reads in its pictures (``_word_pictures``:
    pages scanned into Word)."""
    if kind := text_office_file(data):
        return parse_pandoc("rtf", data) if kind == "rtf" else parse_html(data, marked_headers=False)
    from rag_assets.core.parsing.offline import prepare_word

    prepare_word()
    from unstructured.partition.docx import STYLE_TO_ELEMENT_MAPPING, partition_docx

    data = _word97_as_docx(data) if data.startswith(OLE_MAGIC) else plain_package(data, "wordprocessingml.document")
    data, chunks = _alt_chunks(_unwrapped_body(data))
    elements = [el for el in partition_docx(file=io.BytesIO(data), languages=NO_LANGUAGE)
                if not _TOC_STYLE.match(el.metadata.style_name or "")]
    # Word's own style names unstructured reads itself; any other may be a heading style (its styles
    # part can be 350 kB: read only then)
    own = {"Normal", *STYLE_TO_ELEMENT_MAPPING}
    outline = _outline_levels(data) if any((el.metadata.style_name or "Normal") not in own for el in elements) else {}
    items = _code_blocks(unstructured_items(elements, outline=outline, code=_CODE_STYLE))
    if chunks:  # each marker paragraph stands for a chunk's items (one inside a table: for nothing)
        items = [chunk_item for item in items for chunk_item in chunks.get(item[1].strip(), [
            (item[0], _ALT_CHUNK_MARKER.sub("", item[1]), *item[2:])])]
    if sum(len(item[1].strip()) for item in items) <= SCANNED_MAX_CHARS:  # pictures of pages ("Scan to Word")
        items += pictures_text(_word_pictures(data), None)
    title = next((item[1].strip()[:200] for item in items if item[0] == "Title" and item[1].strip()), "")
    for heading, notes in _word_notes(data):  # after the body: never the document's title
        items += [("Title", heading, None, 1), *(("NarrativeText", note, None) for note in notes)]
    text, spans = join_elements(items)
    return text, spans, title


_NOTES = (("word/footnotes.xml", "footnote", "Footnotes"), ("word/endnotes.xml", "endnote", "Endnotes"))
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_SHOWN = {f"{_W}tab": " ", f"{_W}br": " ", f"{_W}cr": " "}  # what a note's tabs and line breaks read as


def _word_notes(data: bytes) -> list[tuple[str, list[str]]]:
    """A Word document's footnotes and endnotes (unstructured reads neither), each kind under its
    heading, in the order the document holds them; kinds without notes are left out."""
    from lxml import etree

    found = []
    for member, tag, heading in _NOTES:
        if not (xml := zip_member(data, member)):
            continue
        try:
            root = etree.fromstring(xml.encode(), parser=etree.XMLParser(resolve_entities=False, huge_tree=True))
        except etree.XMLSyntaxError:  # a damaged notes part: the body is still read
            continue
        notes = []
        for note in root.iter(f"{_W}{tag}"):
            if note.get(f"{_W}type") in (None, "normal"):  # not the separator lines
                paragraphs = ("".join((el.text or "") if el.tag == f"{_W}t" else _SHOWN.get(el.tag, "")
                                      for el in p.iter()) for p in note.iter(f"{_W}p"))
                if text := "\n".join(" ".join(p.split()) for p in paragraphs if p.strip()):
                    notes.append(text)
        if notes:
            found.append((heading, notes))
    return found


# A table of contents' entries and heading (Word stores built-in style names in English, whatever the
# language it shows them in): page numbers of the headings the document holds anyway, left out
_TOC_STYLE = re.compile(r"toc (?:\d|heading)", re.I)
# Code's paragraph styles: pandoc's "Source Code", Word's "HTML Preformatted" and "Macro Text", a
# template's "Code", "Code Block", "Listing" or "Preformatted Text"
_CODE_STYLE = re.compile(r"(?:source )?code(?: block)?|html preformatted|macro text|preformatted(?: text)?|"
                         r"listing|verbatim", re.I)


def _code_blocks(items: list[tuple]) -> list[tuple]:
    """``items`` with each run of CodeSnippet items on one page (a code block written a paragraph a
    line, as Word users write one) one item, a line under the other as the page shows them."""
    out: list[tuple] = []
    for item in items:
        if item[0] == "CodeSnippet" and out and out[-1][0] == "CodeSnippet" and out[-1][2:] == item[2:]:
            out[-1] = (item[0], out[-1][1].rstrip("\n") + "\n" + item[1].strip("\n"), *item[2:])
        else:
            out.append(item)
    return out


_WRAPPERS = ("ins", "moveTo", "sdt", "customXml", "smartTag", "fldSimple")  # w: elements whose text python-docx skips


def _unwrapped_body(data: bytes) -> bytes:
    """A Word package whose body's text inside tracked insertions and moves (``w:ins``,
    ``w:moveTo``: a document circulated with Track Changes on), content controls (``w:sdt``, a
    template's or form's fields and blocks), simple fields (``w:fldSimple``: a caption's "Figure
    1", a document property) and custom XML or smart tags stands where they wrap it, as Word shows
    it (python-docx, so unstructured, skips it); deletions stay out. An equation reads as a line
    of text in its place (``math_text.omml_text``). A text box's paragraphs (a sidebar, a callout, a flyer
    laid out in boxes), a chart's data and a SmartArt diagram's nodes follow the paragraph they are
    anchored in (``_drawn_after``). Each of these was lost. A hyperlink whose target is missing
    from the package keeps its text, without the link (the document failed). A package without
    any of them is returned as it is."""
    import zipfile

    from lxml import etree

    xml = zip_member(data, "word/document.xml")
    rels = zip_member(data, "word/_rels/document.xml.rels")
    unlinked = set(re.findall(r'<w:hyperlink\b[^>]*\br:id="([^"]*)"', xml)) - set(re.findall(r'\bId="([^"]*)"', rels))
    if not unlinked and not re.search(r"<w:(?:ins|moveTo|sdt|customXml|smartTag|fldSimple|txbxContent|object)\b|<m:oMath\b|"
                                      r'graphicData uri="http://schemas\.(?:openxmlformats\.org/drawingml/2006/'
                                      r'(?:chart|diagram)|microsoft\.com/office/drawing/2014/chartex)"', xml):
        return data
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
    root = etree.fromstring(xml.encode(), parser)
    for hyperlink in root.iter(f"{_W}hyperlink"):  # a link to no target: its text kept (python-docx failed on it)
        if hyperlink.get(f"{RELATIONSHIP}id") in unlinked:
            del hyperlink.attrib[f"{RELATIONSHIP}id"]
    for wrapper in list(root.iter(*(_W + tag for tag in _WRAPPERS))):
        content = wrapper.find(f"{_W}sdtContent") if wrapper.tag == f"{_W}sdt" else wrapper
        parent = wrapper.getparent()
        if parent is None:
            continue
        at = parent.index(wrapper)
        kept = [] if content is None else [child for child in content if child.tag not in (f"{_W}sdtPr", f"{_W}customXmlPr",
                                                                                            f"{_W}smartTagPr", f"{_W}sdtEndPr")]
        parent[at:at + 1] = kept
    for equations in [*root.iter(f"{OMML}oMathPara"), *root.iter(f"{OMML}oMath")]:  # displayed, then in a line
        if next(equations.iterancestors(f"{OMML}oMathPara"), None) is not None:  # read with its display
            continue
        run = etree.Element(f"{_W}r")
        etree.SubElement(run, f"{_W}t").text = (omml_text(equations) if equations.tag == f"{OMML}oMath" else
                                               " ".join(omml_text(e) for e in equations.iter(f"{OMML}oMath")))
        equations.getparent().replace(equations, run)
    source = zipfile.ZipFile(io.BytesIO(data))
    targets = rel_targets(rels, parser)
    _drawn_after(root, lambda rid: source.read(package_path("word", targets[rid])))
    body = etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)
    return with_member(data, "word/document.xml", body, zipfile.ZIP_DEFLATED)


_ALT_CHUNK_MARKER = re.compile("\u2063altChunk-\\d+\u2063")
_ALT_CHUNK_READERS = {".htm": "html", ".html": "html", ".mht": "html", ".mhtml": "html", ".xhtml": "html",
                      ".rtf": "rtf", ".docx": "docx", ".txt": "text"}


def _alt_chunks(data: bytes) -> tuple[bytes, dict[str, list[tuple]]]:
    """A Word package whose imported chunks (``w:altChunk``: a web page, RTF or Word document that
    "export to Word" tools and mail merges embed whole, which python-docx skips, so a document of
    them read empty) each stand as a paragraph of a marker of its own, and each marker's items: the
    chunk read as its format is (a part of another format as text), its headings kept; a missing or
    unreadable chunk stands for nothing. A package without chunks is returned as it is, with none."""
    import zipfile

    from lxml import etree

    xml = zip_member(data, "word/document.xml")
    if "altChunk" not in xml:
        return data, {}
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
    targets = rel_targets(zip_member(data, "word/_rels/document.xml.rels"), parser)
    package, root = zipfile.ZipFile(io.BytesIO(data)), etree.fromstring(xml.encode(), parser)
    chunks: dict[str, list[tuple]] = {}
    for n, chunk in enumerate(list(root.iter(f"{_W}altChunk")), start=1):
        marker = f"\u2063altChunk-{n}\u2063"  # invisible separators: no document's own text
        paragraph = etree.Element(f"{_W}p")
        etree.SubElement(etree.SubElement(paragraph, f"{_W}r"), f"{_W}t").text = marker
        chunk.getparent().replace(chunk, paragraph)
        target = targets.get(chunk.get(f"{RELATIONSHIP}id"), "")
        kind = _ALT_CHUNK_READERS.get(posixpath.splitext(target)[1].lower(), "text")
        try:
            text, elements, _ = read_format(kind, package.read(package_path("word", target)))
        except Exception:  # noqa: BLE001 - a missing or damaged chunk: the rest of the document is read
            chunks[marker] = []
            continue
        chunks[marker] = [(e.category, text[e.start : e.end], e.page, max(len(e.heading_path), 1)) for e in elements]
    body = etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)
    return with_member(data, "word/document.xml", body, zipfile.ZIP_DEFLATED), chunks


def _drawn_after(root, part) -> None:
    """Put what a Word body ``root`` draws after the paragraph each drawing is anchored in, in the
    order they are written: a text box's paragraphs and tables (``w:txbxContent``) moved there, a
    chart's title and a table of its data, a SmartArt diagram's nodes as list items, an embedded
    Excel worksheet's cells as a table (``graphic_content``, reading the part ``part(relationship
    id)`` returns). A drawing's fallback copy for older readers (in ``mc:Fallback``) is left where
    it is, unread; a chart, diagram or worksheet whose part is missing or damaged is left out."""
    fallback = f"{MC}Fallback"
    last: dict = {}  # an anchoring paragraph -> the last block put after it
    for drawn in list(root.iter(f"{_W}txbxContent", f"{DRAWING}graphic", f"{_W}object")):
        anchor = next(drawn.iterancestors(f"{_W}p"), None)
        if anchor is None or next(drawn.iterancestors(fallback), None) is not None:
            continue
        if drawn.tag == f"{_W}txbxContent":
            blocks = [child for child in drawn if child.tag in (f"{_W}p", f"{_W}tbl")]
        else:
            try:
                title, rows, nodes, shown = graphic_content(drawn, part) or ("", [], [], [])
            except Exception:  # noqa: BLE001 - a missing or damaged part: zipfile and lxml raise many types
                continue
            blocks = ([_word_paragraph(title)] if title else []) + ([_word_table(rows)] if rows else []) \
                + [_word_paragraph(text, listed=True) for text in nodes] \
                + [_word_table(markdown_rows(text)) if kind == "Table" else _word_paragraph(text, kind == "ListItem")
                   for kind, text in shown]
        put_after(anchor, blocks, last)


def _word_paragraph(text: str, listed: bool = False):
    """A Word paragraph (``w:p``) of ``text``; a list item (numbered by no list) where ``listed``."""
    from lxml import etree

    paragraph = etree.Element(f"{_W}p")
    if listed:
        numbering = etree.SubElement(etree.SubElement(paragraph, f"{_W}pPr"), f"{_W}numPr")
        etree.SubElement(numbering, f"{_W}ilvl", {f"{_W}val": "0"})
        etree.SubElement(numbering, f"{_W}numId", {f"{_W}val": "0"})
    etree.SubElement(etree.SubElement(paragraph, f"{_W}r"), f"{_W}t").text = text
    return paragraph


def _word_table(rows: list[list[str]]):
    """A Word table (``w:tbl``) of ``rows``, all as wide as the first."""
    from lxml import etree

    table = etree.Element(f"{_W}tbl")
    etree.SubElement(table, f"{_W}tblPr")
    grid = etree.SubElement(table, f"{_W}tblGrid")
    for _ in rows[0]:
        etree.SubElement(grid, f"{_W}gridCol")
    for row in rows:
        line = etree.SubElement(table, f"{_W}tr")
        for cell in row:
            paragraph = etree.SubElement(etree.SubElement(line, f"{_W}tc"), f"{_W}p")
            if cell:
                etree.SubElement(etree.SubElement(paragraph, f"{_W}r"), f"{_W}t").text = cell
    return table


def _word_pictures(data: bytes) -> list[bytes]:
    """The pictures of a Word document's body, inline or floating, in the order it shows them."""
    from docx import Document

    document = Document(io.BytesIO(data))
    rels = document.part.rels
    ids = re.findall(r'<a:blip\b[^>]*\br:embed="([^"]+)"', document.element.xml)
    return [rels[rid].target_part.blob for rid in dict.fromkeys(ids) if rid in rels and not rels[rid].is_external]


def _word97_as_docx(data: bytes) -> bytes:
    """A Word 97-2003 document as DOCX, converted by msdoc2docx (``as_modern_office``)."""
    from doc2docx import convert
    from doc2docx.errors import Doc2DocxError, EncryptedDocumentError

    return as_modern_office(data, convert, "doc", "docx", "Word", Doc2DocxError, EncryptedDocumentError)


def _outline_levels(data: bytes) -> dict[str, int]:
    """A Word document's paragraph styles that have an outline level (0-8), by the name unstructured
    reports (python-docx's: "Heading 1" for "heading 1"), the level inherited through ``basedOn``
    unless a style sets its own (9 is body text); the default paragraph style is never a heading."""
    from docx.styles import BabelFish
    from lxml import etree

    xml = zip_member(data, "word/styles.xml")
    if not xml:
        return {}
    w = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
    root = etree.fromstring(xml.encode(), etree.XMLParser(resolve_entities=False, no_network=True))
    styles = {}  # style id -> (name, own level or None, based on, default)
    for style in root.iter(f"{w}style"):
        if style.get(f"{w}type") != "paragraph":
            continue
        name, level, based = style.find(f"{w}name"), style.find(f"{w}pPr/{w}outlineLvl"), style.find(f"{w}basedOn")
        styles[style.get(f"{w}styleId")] = (
            BabelFish.internal2ui(name.get(f"{w}val", "")) if name is not None else "",
            _int_or_none(level.get(f"{w}val")) if level is not None else None,
            based.get(f"{w}val") if based is not None else None,
            style.get(f"{w}default") in ("1", "true", "on"))
    levels = {}
    for style_id, (name, _, _, default) in styles.items():
        seen, current, level = set(), style_id, None
        while current in styles and current not in seen and level is None:  # a cycle ends the walk
            seen.add(current)
            _, level, current, _ = styles[current]
        if name and not default and level is not None and 0 <= level <= 8:
            levels[name] = level
    return levels


def _int_or_none(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None
