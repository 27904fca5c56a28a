"""Presentations: PowerPoint decks (97-2003 ones converted first) and OpenDocument presentations
and drawings, a slide a page: its title, text, tables, charts, diagrams and connectors, then its
speaker notes."""

from __future__ import annotations

import io
import re
from functools import partial

from rag_assets.core.parsing.embedded import graphic_content
from rag_assets.core.parsing.items import (NO_LANGUAGE, UNTITLED, first_title, join_elements, table_items,
                                           unstructured_items)
from rag_assets.core.parsing.math_text import OMML, omml_text
from rag_assets.core.parsing.office_graphics import connections
from rag_assets.core.parsing.opendocument import presentation_slides
from rag_assets.core.parsing.packages import (DRAWING, MC, OLE_MAGIC, as_modern_office, embedded_content,
                                              opendocument_content, plain_package, with_members)
from rag_assets.core.parsing.pdf import SCANNED_MAX_CHARS, pictures_text
from rag_assets.core.parsing.structure import markdown_table


_P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"


def _ppt97_as_pptx(data: bytes) -> bytes:
    """A PowerPoint 97-2003 presentation as PPTX, converted by ppt2pptx (``as_modern_office``)."""
    from ppt2pptx import convert
    from ppt2pptx.errors import EncryptedPresentationError, Ppt2PptxError

    return as_modern_office(data, convert, "ppt", "pptx", "PowerPoint", Ppt2PptxError, EncryptedPresentationError)


def parse_pptx(data: bytes):
    """Each slide's title, text and tables (unstructured), its charts' data and SmartArt's text
    (``_slide_graphics``), what OCR reads in its pictures where they are most of the slide and its
    own text is next to nothing (``_slide_pictures``), then its speaker notes (python-pptx:
    unstructured would put them before the slide's title); a slide's number is its page. A
    PowerPoint 97-2003 presentation (a compound file, told apart by content) is converted to PPTX
    first (``_ppt97_as_pptx``)."""
    from pptx import Presentation

    from rag_assets.core.parsing.offline import prepare_unstructured

    prepare_unstructured()
    from unstructured.partition.pptx import partition_pptx

    data = _ppt97_as_pptx(data) if data.startswith(OLE_MAGIC) else plain_package(data, "presentationml.presentation")
    data = _slides_unwrapped(data)
    by_slide: dict[int, list[tuple[str, str, int | None]]] = {}
    for item in unstructured_items(partition_pptx(file=io.BytesIO(data), languages=NO_LANGUAGE)):
        by_slide.setdefault(item[2], []).append(item)
    items = []
    shown: set[str] = set()
    deck = Presentation(io.BytesIO(data))
    for number, slide in enumerate(deck.slides, start=1):
        slide_items = _slide_furniture(_one_slide_title(by_slide.get(number, []), slide.shapes.title), slide, shown)
        slide_items += _slide_graphics(slide, number) + _slide_connections(slide, number)
        if not any(item[0] == "Title" for item in slide_items):
            items.append((UNTITLED, "", number))
        items += slide_items
        if sum(len(item[1].strip()) for item in slide_items) <= SCANNED_MAX_CHARS:
            items += pictures_text(_slide_pictures(slide, deck.slide_width * deck.slide_height), number)
        notes = slide.notes_slide.notes_text_frame if slide.has_notes_slide else None
        if notes is not None and notes.text.strip():
            items.append(("NarrativeText", notes.text.replace("\v", "\n"), number))
    text, spans = join_elements(items)
    return text, spans, first_title(text, spans)


_SHAPE_TAGS = {f"{_P}{tag}" for tag in ("sp", "grpSp", "graphicFrame", "cxnSp", "pic")}
_SLIDE_PART = re.compile(r"ppt/slides/slide\d+\.xml")


def _slides_unwrapped(data: bytes) -> bytes:
    """A deck whose slides hold each shape PowerPoint wraps in markup compatibility
    (``mc:AlternateContent``: a text box holding an equation, with a picture of it for older
    readers) as the shape itself, its equations (``a14:m``) as runs of their text
    (``omml_text``): python-pptx and unstructured skip the wrapper, so the shape's text was lost.
    A wrapper's choice is read where it holds shapes, else its fallback. A deck without one is
    returned as it is."""
    import zipfile

    from lxml import etree

    package = zipfile.ZipFile(io.BytesIO(data))
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
    bodies = {}
    for name in package.namelist():
        if not _SLIDE_PART.fullmatch(name) or b"AlternateContent" not in (xml := package.read(name)):
            continue
        root = etree.fromstring(xml, parser)
        for wrapper in list(root.iter(f"{MC}AlternateContent")):
            parent = wrapper.getparent()
            if parent is None or parent.tag not in (f"{_P}spTree", f"{_P}grpSp"):
                continue
            choice = next((c for c in wrapper.iterchildren(f"{MC}Choice") if any(s.tag in _SHAPE_TAGS for s in c)),
                          wrapper.find(f"{MC}Fallback"))
            shapes = [s for s in choice if s.tag in _SHAPE_TAGS] if choice is not None else []
            at = parent.index(wrapper)
            parent[at:at + 1] = shapes
        for equation in list(root.iter("{http://schemas.microsoft.com/office/drawing/2010/main}m")):
            run = etree.Element(f"{DRAWING}r")
            etree.SubElement(run, f"{DRAWING}t").text = " ".join(omml_text(e) for e in equation.iter(f"{OMML}oMath"))
            equation.getparent().replace(equation, run)
        bodies[name] = etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)
    return with_members(data, bodies, zipfile.ZIP_DEFLATED) if bodies else data


def _one_slide_title(items: list[tuple], title_shape) -> list[tuple]:
    """A slide's items with one heading: its title placeholder's text, or its first line where it
    has several (an empty placeholder: none; no placeholder: the first title unstructured found);
    unstructured's other titles, short bullets, a subtitle or a grouped shape's label, read as text
    under it (they nested every later bullet and the notes)."""
    lines = None
    if title_shape is not None and title_shape.has_text_frame:
        frame = title_shape.text_frame
        lines = {" ".join(frame.text.split())} | {" ".join(p.text.split()) for p in frame.paragraphs}
        lines.discard("")
    kept, out = False, []
    for category, text, *rest in items:
        if category == "Title":
            if not kept and (lines is None or " ".join(text.split()) in lines):
                kept = True
            else:
                category = "NarrativeText"
        out.append((category, text, *rest))
    return out


def _slide_graphics(slide, page: int) -> list[tuple]:
    """A slide's charts (a chart's title, then its data as a table) and SmartArt diagrams (a list
    item a node), in the slide's shape order, groups included (``graphic_content``); unstructured
    reads neither. One whose part is missing or damaged is left out."""
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    items: list[tuple] = []
    shapes = list(slide.shapes)
    while shapes:
        shape = shapes.pop(0)
        if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
            shapes[:0] = list(shape.shapes)
            continue
        try:
            content = graphic_content(shape.element, lambda rid: slide.part.related_part(rid).blob)
        except Exception:  # noqa: BLE001 - a missing or damaged part: python-pptx and lxml raise many types
            continue
        if content:
            title, rows, nodes, shown = content
            items += [("NarrativeText", title, page)] if title else []
            items += [("Table", markdown_table(rows), page)] if rows else []
            items += [("ListItem", text, page) for text in nodes]
            items += [(kind, text, page) for kind, text in shown]
    return items


def _slide_connections(slide, page: int) -> list[tuple]:
    """A slide's connectors (a flowchart's arrows) joining two shapes with text, each a list item
    "From → To" (``office_graphics.connections``); unstructured reads shapes' text but not what
    joins them."""
    return [("ListItem", text, page) for text in connections(slide.element, _P)]


def _slide_furniture(items: list[tuple], slide, shown: set[str]) -> list[tuple]:
    """A slide's items without its slide number (the slide is the page) and without the text of a
    footer or date placeholder that an earlier slide showed (``shown``, updated): a deck's footer,
    on every slide, is read once, under no heading, as a Word section's footer is."""
    from pptx.enum.shapes import PP_PLACEHOLDER

    kinds = {" ".join(shape.text_frame.text.split()): shape.placeholder_format.type for shape in slide.placeholders
             if shape.placeholder_format.type in (PP_PLACEHOLDER.FOOTER, PP_PLACEHOLDER.DATE, PP_PLACEHOLDER.SLIDE_NUMBER)
             and shape.has_text_frame}
    out = []
    for category, text, *rest in items:
        key = " ".join(text.split())
        kind = kinds.get(key)
        if kind is None:
            out.append((category, text, *rest))
        elif kind != PP_PLACEHOLDER.SLIDE_NUMBER and key not in shown:
            shown.add(key)
            out.append(("Footer", text, *rest))
    return out


def _slide_pictures(slide, area: int) -> list[bytes]:
    """A slide's pictures where together they cover half its ``area`` (a slide that is a picture
    of a page or of a slide), else none."""
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    pictures = [shape for shape in slide.shapes
                if shape.shape_type == MSO_SHAPE_TYPE.PICTURE or (shape.is_placeholder and hasattr(shape, "image"))]
    if sum((shape.width or 0) * (shape.height or 0) for shape in pictures) < 0.5 * area:
        return []
    return [shape.image.blob for shape in pictures]


def parse_odp(data: bytes):
    """An OpenDocument presentation (LibreOffice Impress), read as a PowerPoint deck is: a slide is
    a page headed by its title alone, its text, list items and tables under it (an embedded chart
    as its title and data table, an embedded spreadsheet as its tables: ``embedded_content``),
    then its speaker notes (``opendocument.presentation_slides``); its title is its first slide's,
    as a deck's is."""
    items: list[tuple] = []
    slides = presentation_slides(opendocument_content(data), partial(embedded_content, data))
    for number, (title, shown, notes) in enumerate(slides, start=1):
        items.append(("Title", title, number, 1) if title else (UNTITLED, "", number))
        for kind, value in shown:
            if kind == "table":
                items += table_items(value, number)
            else:
                items.append(("ListItem" if kind == "item" else "NarrativeText", value, number))
        if notes:
            items.append(("NarrativeText", notes, number))
    text, spans = join_elements(items)
    return text, spans, first_title(text, spans)
