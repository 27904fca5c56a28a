"""Visio drawings (.vsdx, .vsdm), read from their page parts (lxml) as a reader sees a diagram:
each foreground page's shapes' text in reading order, then its connections as "From → To"
lines. Neither unstructured nor pandoc reads Visio files."""

from __future__ import annotations

import posixpath
import re

_V = "{http://schemas.microsoft.com/office/visio/2012/main}"
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_RELS = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_PAGES = "visio/pages/pages.xml"
_DEFAULT_NAME = re.compile(r"Page-\d+")  # the name Visio gives a page


def diagram_pages(read) -> list[tuple[str, list[tuple[str, str]]]]:
    """A drawing's foreground pages in order, each as its name ("" where Visio named it, "Page-2")
    and what it shows: ``("text", shape text)`` for each shape with text, top to bottom, then left
    to right (a group's text before its members'; a shape without text of its own shows its
    master's), each followed by its data set on it ("IP address: 10.0.0.1", a line a field), then
    ``("connection", "From → To")`` for each connector glued to two shapes with
    text, labelled with the connector's own text ("From → To: Yes"). ``read(part name)`` returns
    a package part's bytes, None where there is none. Background pages (a title block, a frame)
    are not read."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
    listing = read(_PAGES)
    if listing is None:
        raise ValueError("the package has no visio/pages/pages.xml: it is no Visio drawing (save it again from Visio)")
    targets = _targets(read("visio/pages/_rels/pages.xml.rels"), parser)
    masters = _master_shapes(read, parser)
    pages = []
    for page in etree.fromstring(listing, parser).iterfind(f"{_V}Page"):
        if page.get("Background") == "1":
            continue
        rel = page.find(f"{_V}Rel")
        target = targets.get(rel.get(f"{_R}id")) if rel is not None else None
        contents = read(posixpath.normpath(posixpath.join("visio/pages", target))) if target else None
        name = page.get("Name") or page.get("NameU") or ""
        pages.append(("" if _DEFAULT_NAME.fullmatch(name) else name,
                      _page_items(etree.fromstring(contents, parser), masters) if contents else []))
    return pages


def _targets(rels: bytes | None, parser) -> dict[str, str]:
    from lxml import etree

    if rels is None:
        return {}
    return {rel.get("Id"): rel.get("Target", "") for rel in etree.fromstring(rels, parser).iter(f"{_RELS}Relationship")
            if rel.get("TargetMode") != "External"}


def _master_shapes(read, parser) -> dict[str, dict]:
    """Each master's (by its ID) shapes by shape ID, its top shape also under ""."""
    from lxml import etree

    listing = read("visio/masters/masters.xml")
    if listing is None:
        return {}
    targets = _targets(read("visio/masters/_rels/masters.xml.rels"), parser)
    masters = {}
    for master in etree.fromstring(listing, parser).iterfind(f"{_V}Master"):
        rel = master.find(f"{_V}Rel")
        target = targets.get(rel.get(f"{_R}id")) if rel is not None else None
        contents = read(posixpath.normpath(posixpath.join("visio/masters", target))) if target else None
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
    """A page's shapes' texts (each with its data) in reading order, then its connections."""
    texts: dict[str, str] = {}
    data: dict[str, list[str]] = {}

    def shown(shapes, master: dict) -> None:  # each shape's text, else its master's
        for shape in shapes.iterfind(f"{_V}Shape"):
            own = masters.get(shape.get("Master"), {}) if shape.get("Master") else master
            source = own.get("" if shape.get("Master") else shape.get("MasterShape", "\0"))
            key = shape.get("ID", "")
            texts[key] = _own_text(shape) or (_own_text(source) if source is not None else "")
            data[key] = _shape_data(shape, source)
            inner = shape.find(f"{_V}Shapes")
            if inner is not None:
                shown(inner, own)

    top = contents.find(f"{_V}Shapes")
    if top is not None:
        shown(top, {})
    ends: dict[str, dict[str, str]] = {}
    for connect in contents.iterfind(f"{_V}Connects/{_V}Connect"):
        end = {"BeginX": "begin", "EndX": "end"}.get(connect.get("FromCell", ""))
        if end:
            ends.setdefault(connect.get("FromSheet", ""), {})[end] = connect.get("ToSheet", "")
    linked = {connector: (sides["begin"], sides["end"]) for connector, sides in ends.items()
              if texts.get(sides.get("begin", "")) and texts.get(sides.get("end", ""))}
    order: list[str] = []

    def walk(shapes) -> None:
        for shape in _reading_order(list(shapes.iterfind(f"{_V}Shape"))):
            order.append(shape.get("ID", ""))
            inner = shape.find(f"{_V}Shapes")
            if inner is not None:
                walk(inner)

    if top is not None:
        walk(top)
    rank = {key: n for n, key in enumerate(order)}
    items = [("text", "\n".join(filter(None, [texts[key], *data[key]]))) for key in order
             if (texts[key] or data[key]) and key not in linked]
    for connector, (begin, end) in sorted(linked.items(), key=lambda kv: (rank.get(kv[1][0], 0), rank.get(kv[1][1], 0))):
        label = texts.get(connector, "")
        items.append(("connection", f"{texts[begin]} → {texts[end]}" + (f": {label}" if label else "")))
    return items


def _reading_order(shapes: list) -> list:
    """Shapes as they read: in rows, the highest first (Visio's y axis points up), each row left
    to right; a shape whose centre lies within half its height of a row's first is in that row."""
    rows: list[list] = []
    for shape in sorted(shapes, key=lambda s: -_cell(s, "PinY")):
        if rows and _cell(rows[-1][0], "PinY") - _cell(shape, "PinY") <= abs(_cell(shape, "Height")) / 2:
            rows[-1].append(shape)
        else:
            rows.append([shape])
    return [shape for row in rows for shape in sorted(row, key=lambda s: _cell(s, "PinX"))]


def _cell(shape, name: str) -> float:
    """A shape's cell value (``PinX``, ``PinY``, ``Height``, in inches); 0 where it has none of
    its own (inherited from its master) or it is no number."""
    found = shape.find(f"{_V}Cell[@N='{name}']")
    try:
        return float(found.get("V")) if found is not None else 0.0
    except (TypeError, ValueError):
        return 0.0
