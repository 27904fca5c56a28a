"""Diagrams read as a reader sees them: each page's shapes' texts in reading order (in rows top
down, each row left to right; a group's or container's text before its members'), each with the
data set on it, then its connections as "From → To: label" lines. Visio drawings (.vsdx, .vsdm)
from their page parts, draw.io diagrams (.drawio) from their mxGraph XML, SVG pictures as the text
they draw (lxml). Neither unstructured nor pandoc reads any of them."""

from __future__ import annotations

import base64
import io
import posixpath
import re
import zlib
from dataclasses import dataclass, field
from urllib.parse import unquote

from rag_assets.core.parsing.items import UNTITLED, first_title, join_elements
from rag_assets.core.parsing.packages import member_reader, package_title

_V = "{http://schemas.microsoft.com/office/visio/2012/main}"
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_RELS = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_PAGES = "visio/pages/pages.xml"
_DEFAULT_NAME = re.compile(r"Page-\d+")  # the name Visio and draw.io give a page


@dataclass
class _Shape:
    """A diagram's shape: its text, its data lines, its centre (``middle`` down from the top,
    ``left`` across) and height in its parent's units, and the shapes it holds."""

    key: str
    text: str
    data: list[str]
    middle: float
    left: float
    height: float
    inner: list["_Shape"] = field(default_factory=list)


def _diagram_items(shapes: list[_Shape], connectors: dict[str, tuple[str | None, str | None]]) -> list[tuple[str, str]]:
    """What a page of ``shapes`` (its top level) shows: each shape's text and data in reading order,
    then each connector (``connectors``: key -> its begin's and end's shape keys) joining two
    shapes with text as ``("connection", "From → To: label")``; a connector that does not is read
    as a shape."""
    order: list[_Shape] = []

    def walk(level: list[_Shape]) -> None:
        for shape in _reading_order(level):
            order.append(shape)
            walk(shape.inner)

    walk(shapes)
    texts = {shape.key: shape.text for shape in order}
    linked = {key: ends for key, ends in connectors.items() if texts.get(ends[0] or "") and texts.get(ends[1] or "")}
    rank = {shape.key: n for n, shape in enumerate(order)}
    items = [("text", "\n".join(filter(None, [shape.text, *shape.data]))) for shape in order
             if (shape.text or shape.data) and shape.key not in linked]
    for key, (begin, end) in sorted(linked.items(), key=lambda kv: (rank.get(kv[1][0], 0), rank.get(kv[1][1], 0))):
        label = texts.get(key, "")
        items.append(("connection", f"{texts[begin]} → {texts[end]}" + (f": {label}" if label else "")))
    return items


def _reading_order(shapes: list[_Shape]) -> list[_Shape]:
    """Shapes as they read: in rows, the highest first, each row left to right; a shape whose
    centre lies within half its height of a row's first is in that row."""
    rows: list[list[_Shape]] = []
    for shape in sorted(shapes, key=lambda s: s.middle):
        if rows and shape.middle - rows[-1][0].middle <= abs(shape.height) / 2:
            rows[-1].append(shape)
        else:
            rows.append([shape])
    return [shape for row in rows for shape in sorted(row, key=lambda s: s.left)]


def visio_pages(read) -> list[tuple[str, list[tuple[str, str]]]]:
    """A Visio drawing's foreground pages in order, each as its name ("" where Visio named it, "Page-2")
    and what it shows: ``("text", shape text)`` for each shape with text, top to bottom, then left
    to right (a group's text before its members'; a shape without text of its own shows its
    master's), each followed by its data set on it ("IP address: 10.0.0.1", a line a field), then
    ``("connection", "From → To")`` for each connector glued to two shapes with
    text, labelled with the connector's own text ("From → To: Yes"). ``read(part name)`` returns
    a package part's bytes, None where there is none. Background pages (a title block, a frame)
    are not read."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
    if read(_PAGES) is None:
        raise ValueError("the package has no visio/pages/pages.xml: it is no Visio drawing (save it again from Visio)")
    masters = _master_shapes(read, parser)
    pages = []
    for page, contents in _listed(read, "pages", "Page", parser):
        if page.get("Background") == "1":
            continue
        name = page.get("Name") or page.get("NameU") or ""
        pages.append(("" if _DEFAULT_NAME.fullmatch(name) else name,
                      _page_items(etree.fromstring(contents, parser), masters) if contents else []))
    return pages


def _listed(read, folder: str, tag: str, parser):
    """The entries ``tag`` a Visio package lists in ``visio/{folder}/{folder}.xml`` (its pages, its
    masters), each with its part's bytes (None where its part is missing), in order."""
    from lxml import etree

    listing, rels = read(f"visio/{folder}/{folder}.xml"), read(f"visio/{folder}/_rels/{folder}.xml.rels")
    if listing is None:
        return
    targets = {} if rels is None else {rel.get("Id"): rel.get("Target", "") for rel in etree.fromstring(
        rels, parser).iter(f"{_RELS}Relationship") if rel.get("TargetMode") != "External"}
    for entry in etree.fromstring(listing, parser).iterfind(f"{_V}{tag}"):
        rel = entry.find(f"{_V}Rel")
        target = targets.get(rel.get(f"{_R}id")) if rel is not None else None
        yield entry, read(posixpath.normpath(posixpath.join(f"visio/{folder}", target))) if target else None


def _master_shapes(read, parser) -> dict[str, dict]:
    """Each master's (by its ID) shapes by shape ID, its top shape also under ""."""
    from lxml import etree

    masters = {}
    for master, contents in _listed(read, "masters", "Master", parser):
        if contents is None:
            continue
        root = etree.fromstring(contents, parser)
        shapes = {shape.get("ID", ""): shape for shape in root.iter(f"{_V}Shape")}
        top = root.find(f"{_V}Shapes/{_V}Shape")
        if top is not None:
            shapes[""] = top
        masters[master.get("ID", "")] = shapes
    return masters


def _own_text(shape) -> str:
    """A shape's own text (``Text``: its runs and fields' values), whitespace collapsed."""
    found = shape.find(f"{_V}Text")
    return " ".join("".join(found.itertext()).split()) if found is not None else ""


def _shape_data(shape, master) -> list[str]:
    """A shape's data as "Label: value" lines: the fields set on the shape itself (its master's
    defaults, repeated on every instance, are not), labelled as the shape or its master labels
    them, else by the field's name; hidden and empty fields left out."""
    def cell(row, name: str):
        return row.find(f"{_V}Cell[@N='{name}']") if row is not None else None

    labels = {} if master is None else {row.get("N"): cell(row, "Label").get("V", "") for row in master.iterfind(
        f"{_V}Section[@N='Property']/{_V}Row") if cell(row, "Label") is not None}
    lines = []
    for row in shape.iterfind(f"{_V}Section[@N='Property']/{_V}Row"):
        value, hidden = cell(row, "Value"), cell(row, "Invisible")
        shown = " ".join((value.get("V") or "").split()) if value is not None and value.get("F") != "No Formula" else ""
        if shown and (hidden is None or hidden.get("V") in ("0", "FALSE", None)):
            label = cell(row, "Label").get("V", "") if cell(row, "Label") is not None else labels.get(row.get("N"), "")
            lines.append(f"{label or row.get('N', '')}: {shown}")
    return lines


def _page_items(contents, masters: dict[str, dict]) -> list[tuple[str, str]]:
    """A Visio page's shapes' texts (each with its data) in reading order, then its connections."""
    def shapes(parent, master: dict) -> list[_Shape]:  # each shape's text, else its master's
        found = []
        for shape in parent.iterfind(f"{_V}Shapes/{_V}Shape"):
            own = masters.get(shape.get("Master"), {}) if shape.get("Master") else master
            source = own.get("" if shape.get("Master") else shape.get("MasterShape", "\0"))
            found.append(_Shape(shape.get("ID", ""), _own_text(shape) or (_own_text(source) if source is not None else ""),
                                _shape_data(shape, source), -_cell(shape, "PinY"), _cell(shape, "PinX"),
                                _cell(shape, "Height"), shapes(shape, own)))
        return found

    ends: dict[str, dict[str, str]] = {}
    for connect in contents.iterfind(f"{_V}Connects/{_V}Connect"):
        end = {"BeginX": "begin", "EndX": "end"}.get(connect.get("FromCell", ""))
        if end:
            ends.setdefault(connect.get("FromSheet", ""), {})[end] = connect.get("ToSheet", "")
    return _diagram_items(shapes(contents, {}), {key: (sides.get("begin"), sides.get("end")) for key, sides in ends.items()})


def _cell(shape, name: str) -> float:
    """A Visio shape's cell value (``PinX``, ``PinY``, ``Height``, in inches; its y axis points
    up); 0 where it has none of its own (inherited from its master) or it is no number."""
    found = shape.find(f"{_V}Cell[@N='{name}']")
    try:
        return float(found.get("V")) if found is not None else 0.0
    except (TypeError, ValueError):
        return 0.0


MAX_PAGE_BYTES = 64 * 2**20  # a compressed draw.io page expands to at most this much XML (a bomb is refused)
_DRAWIO_KEPT = {"id", "label", "placeholders", "tooltip", "link", "linkTarget"}  # an object's attributes that are no data


def drawio_pages(data: bytes) -> list[tuple[str, list[tuple[str, str]]]]:
    """A draw.io diagram's pages in order (``diagram`` elements of its ``mxfile``, each compressed
    or not), each as its name ("" where draw.io named it, "Page-1") and what it shows, as
    ``visio_pages`` reads a page: its shapes' labels (their HTML read as text) in reading order,
    an object's own attributes as data lines ("owner: NetOps"), then each edge joining two
    labelled shapes as a connection, labelled with its own label or its label cells'."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
    root = etree.fromstring(data, parser)
    if root.tag == "mxGraphModel":  # a bare graph, as draw.io's "Export as XML" without its file
        return [("", _drawio_items(root))]
    if root.tag != "mxfile":
        raise ValueError(f"its root element is <{root.tag}>, not draw.io's <mxfile>: export it again from draw.io")
    pages = []
    for diagram in root.iterfind("diagram"):
        model = diagram.find("mxGraphModel")
        if model is None and (diagram.text or "").strip():
            inflating = zlib.decompressobj(-15)  # raw deflate, as draw.io saves a page
            inflated = inflating.decompress(base64.b64decode(diagram.text.strip()), MAX_PAGE_BYTES + 1)
            if len(inflated) > MAX_PAGE_BYTES:
                raise ValueError(f"page {diagram.get('name', '')!r} expands past {MAX_PAGE_BYTES // 2**20} MB: "
                                 "it is no diagram draw.io saved (open and save it again in draw.io)")
            model = etree.fromstring(unquote(inflated.decode("utf-8")).encode("utf-8"), parser)
        name = diagram.get("name", "")
        pages.append(("" if _DEFAULT_NAME.fullmatch(name) else name, _drawio_items(model) if model is not None else []))
    return pages


def _drawio_items(model) -> list[tuple[str, str]]:
    """A draw.io page's (``mxGraphModel``) shapes and connections, as ``_diagram_items`` reads them."""
    cells, texts, data = {}, {}, {}
    for cell in model.iter("mxCell"):
        holder = cell.getparent() if cell.getparent().tag in ("UserObject", "object") else None
        key = (holder if holder is not None else cell).get("id", "")
        cells[key] = cell
        texts[key] = _label((holder if holder is not None else cell).get("label" if holder is not None else "value", ""))
        data[key] = [f"{name}: {value}" for name, value in (holder.attrib.items() if holder is not None else [])
                     if name not in _DRAWIO_KEPT and value.strip()]
    edges = {key: cell for key, cell in cells.items() if cell.get("edge") == "1"}
    for key, cell in cells.items():  # a label cell on an edge labels it
        if cell.get("parent") in edges and texts[key] and cell.get("vertex") == "1":
            parent = cell.get("parent")
            texts[parent] = " ".join(filter(None, [texts[parent], texts[key]]))
            texts[key] = ""
    children: dict[str, list[_Shape]] = {}
    for key, cell in cells.items():
        geometry = cell.find("mxGeometry")

        def number(name: str, geometry=geometry) -> float:
            try:
                return float(geometry.get(name, "0")) if geometry is not None else 0.0
            except ValueError:
                return 0.0

        shape = _Shape(key, texts[key], data[key], number("y") + number("height") / 2, number("x") + number("width") / 2,
                       number("height"))
        children.setdefault(cell.get("parent", ""), []).append(shape)
    for shapes in children.values():
        for shape in shapes:
            shape.inner = children.get(shape.key, [])
    top = [shape for key in cells if cells[key].get("parent") is None for shape in children.get(key, [])]
    layers = [shape for layer in top for shape in layer.inner]  # the root's children are layers
    return _diagram_items(layers, {key: (cell.get("source"), cell.get("target")) for key, cell in edges.items()})


def _label(value: str) -> str:
    """A draw.io label as text: its HTML (``html=1`` labels: "Submit<br>request") read as a
    browser shows it, whitespace collapsed."""
    if "<" not in value and "&" not in value:
        return " ".join(value.split())
    from lxml import html as lxml_html

    try:
        fragment = lxml_html.fragment_fromstring(value, create_parent="div")
    except Exception:  # noqa: BLE001 - markup lxml cannot read: the label as written
        return " ".join(value.split())
    for br in fragment.iter("br"):
        br.tail = " " + (br.tail or "")
    for block in fragment.iter("div", "p", "li"):
        block.tail = " " + (block.tail or "")
    return " ".join(fragment.text_content().split())


_SVG_UNREAD = {"defs", "symbol", "style", "script", "metadata", "title", "desc", "clipPath", "mask", "pattern", "marker"}


def svg_pages(data: bytes) -> tuple[str, list[tuple[str, list[tuple[str, str]]]]]:
    """An SVG picture's title (its own ``<title>``) and pages: a diagram draw.io exported (its
    ``mxfile`` in the root's ``content``, where it shows any text) as ``drawio_pages`` reads it,
    else one page of each
    text the picture shows, in the order it is drawn (``<text>`` with its spans, the HTML of a
    ``<foreignObject>``: draw.io's and Mermaid's labels; of a ``<switch>``, the first choice
    alone), its description first; what is never drawn (definitions, styles, scripts) left out."""
    from lxml import etree

    root = etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True))
    if etree.QName(root).localname != "svg":
        raise ValueError(f"its root element is <{etree.QName(root).localname}>, not <svg>: it is no SVG picture")
    title = next((" ".join("".join(t.itertext()).split()) for t in root if _local(t) == "title"), "")
    if (root.get("content") or "").lstrip().startswith("<mxfile"):
        pages = drawio_pages(root.get("content").encode("utf-8"))
        if any(shown for _, shown in pages):  # else the diagram kept is stale: what is drawn is read
            return title, pages
    shown = [" ".join("".join(d.itertext()).split()) for d in root if _local(d) == "desc"]

    def walk(element) -> None:
        for child in element:
            name = _local(child)
            if name in _SVG_UNREAD:
                continue
            if name in ("text", "foreignObject"):
                shown.append(_label(etree.tostring(child, method="html", encoding="unicode", with_tail=False))
                             if name == "foreignObject" else _svg_text(child))
            elif name == "switch":  # its first choice a renderer can show is drawn, the rest are fallbacks
                walk([c for c in child if isinstance(c.tag, str)][:1])
            else:
                walk(child)

    walk(root)
    return title, [("", [("text", text) for text in shown if text])]


def _svg_text(text) -> str:
    """A ``<text>``'s words: a span placed on a line of its own (``x``, ``y`` or ``dy``: a label's
    second line) starts after a space; one that is not runs on from the text before it."""
    def words(element) -> str:
        inner = "".join((" " if any(child.get(n) is not None for n in ("x", "y", "dy")) else "") + words(child)
                        + (child.tail or "") for child in element if isinstance(child.tag, str))
        return (element.text or "") + inner

    return " ".join(words(text).split())


def _local(element) -> str:
    """An element's name without its namespace ("" for a comment or processing instruction)."""
    return element.tag.rpartition("}")[2] if isinstance(element.tag, str) else ""


def parse_drawio(data: bytes):
    """A draw.io diagram, read as a Visio drawing is (``diagrams.drawio_pages``): each page headed
    by its name (none for draw.io's own "Page-1"), its shapes' labels in reading order, then its
    connections as list items; its title is its first page's name."""
    return _diagram_document(drawio_pages(data), "")


def parse_svg(data: bytes):
    """An SVG picture: the text it shows, in the order it is drawn, or the diagram draw.io exported
    into it (``diagrams.svg_pages``); its title is its own ``<title>``."""
    title, pages = svg_pages(data)
    return _diagram_document(pages, title)


def _diagram_document(pages: list[tuple[str, list[tuple[str, str]]]], title: str):
    """A diagram's ``pages`` (name, what it shows) as a document: a page a page, headed by its name
    where it has one, a shape's text a paragraph, a connection a list item; titled ``title``, else
    by its first page's name."""
    items: list[tuple] = []
    for number, (name, shown) in enumerate(pages, start=1):
        items.append(("Title", name, number, 1) if name else (UNTITLED, "", number))
        items += [("ListItem" if kind == "connection" else "NarrativeText", text, number) for kind, text in shown]
    text, spans = join_elements(items)
    return text, spans, title or first_title(text, spans)


def parse_visio(data: bytes):
    """A Visio drawing: each foreground page a page headed by its name (none where Visio named it,
    "Page-1"), its shapes' texts in reading order, then its connections as list items ("Submit →
    Approve: Yes"; ``diagrams.visio_pages``); its title is its properties' own, else its first
    page's name."""
    import zipfile

    package = zipfile.ZipFile(io.BytesIO(data))  # a damaged one raises BadZipFile: see parse_document
    return _diagram_document(visio_pages(member_reader(package)), package_title(data, "docProps/core.xml"))
