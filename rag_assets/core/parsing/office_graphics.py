"""What a slide, a Word page or a sheet shows in graphics that unstructured and openpyxl skip: a
chart's data as table rows (an Office 2016 chart's too), a SmartArt diagram's text as its nodes in the diagram's order, a
sheet's text boxes. Each reads the graphic's own part (DrawingML XML), so a deck and a document
read them alike."""

from __future__ import annotations

import math
from collections import defaultdict

from rag_assets.core.parsing.packages import RELATIONSHIP

_DGM = "{http://schemas.openxmlformats.org/drawingml/2006/diagram}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_C = "{http://schemas.openxmlformats.org/drawingml/2006/chart}"
_PLOTS = frozenset(f"{_C}{kind}Chart" for kind in ("area", "area3D", "bar", "bar3D", "bubble", "doughnut", "line",
                                                    "line3D", "ofPie", "pie", "pie3D", "radar", "scatter", "stock",
                                                    "surface", "surface3D"))
_MAX_POINTS = 100_000  # a chart's points read at most (a declared count is no reason to allocate)
_XDR = "{http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing}"
_ANCHORS = (f"{_XDR}twoCellAnchor", f"{_XDR}oneCellAnchor", f"{_XDR}absoluteAnchor")
_NODE_TYPES = ("node", "asst")  # a diagram's points that show text (others: the document, transitions, layout)


_CHART_REF = f"{_C}chart"
_CHARTEX_REF = "{http://schemas.microsoft.com/office/drawing/2014/chartex}chart"  # Office 2016's kinds: a waterfall...
_DIAGRAM_REF = f"{_DGM}relIds"


def drawn_graphic(graphic, part) -> tuple[str, list[list[str]], list[str]] | None:
    """What a DrawingML graphic (an lxml element holding a ``c:chart``, ``cx:chart`` or
    ``dgm:relIds`` reference) shows, read from the part ``part(relationship id)`` returns (its
    bytes): a chart's title and rows (``chart_rows``, an Office 2016 chart's ``chartex_rows``) or a
    SmartArt diagram's nodes (``diagram_lines``), as (title, rows, nodes); None for another graphic."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    if (chart := graphic.find(f".//{_CHART_REF}")) is not None:
        return (*chart_rows(etree.fromstring(part(chart.get(f"{RELATIONSHIP}id")), parser)), [])
    if (chart := graphic.find(f".//{_CHARTEX_REF}")) is not None:
        return (*chartex_rows(etree.fromstring(part(chart.get(f"{RELATIONSHIP}id")), parser)), [])
    if (diagram := graphic.find(f".//{_DIAGRAM_REF}")) is not None:
        return "", [], diagram_lines(etree.fromstring(part(diagram.get(f"{RELATIONSHIP}dm")), parser))
    return None


def chart_rows(chart_space) -> tuple[str, list[list[str]]]:
    """A chart's title ("" where none is typed) and its data as rows, from its chart part's root
    (``c:chartSpace``, an lxml element): a header of the series' names, then a row a category (a
    scatter or bubble chart's x value) with its label and each series' value as Excel's General
    format shows it ("" where there is none); no rows for a chart without data. The values are
    those the chart caches: what it shows without its workbook."""
    title = " ".join(" ".join(_texts(chart_space.find(f"{_C}chart/{_C}title/{_C}tx"))).split())
    plots = [plot for plot in chart_space.iterfind(f"{_C}chart/{_C}plotArea/*") if plot.tag in _PLOTS]
    series = [one for plot in plots for one in sorted(plot.iterfind(f"{_C}ser"), key=_order)]
    first = plots[0].find(f"{_C}ser") if plots else None
    categories, numeric = _cached(first, ("cat", "xVal")) if first is not None else ([], False)
    categories = [_shown(label) for label in categories] if numeric else categories
    values = [[_shown(value) for value in _cached(one, ("val", "yVal"))[0]] for one in series]
    count = max([len(categories), *map(len, values)], default=0)
    if not count:
        return title, []
    rows = [["", *(_name(one) or f"Series {n}" for n, one in enumerate(series, start=1))]]
    rows += [[categories[i] if i < len(categories) else "", *(v[i] if i < len(v) else "" for v in values)]
             for i in range(count)]
    return title, rows


_CX = "{http://schemas.microsoft.com/office/drawing/2014/chartex}"


def chartex_rows(chart_space) -> tuple[str, list[list[str]]]:
    """An Office 2016 chart's (``cx:chartSpace``: waterfall, histogram, Pareto, box and whisker,
    funnel, treemap, sunburst) title and data as ``chart_rows`` reads a chart's: a header of the
    series' names, then a row a category, each level of a hierarchy (a treemap's, a sunburst's) a
    column of its own, outermost first, then each series' value as Excel's General format shows
    it ("" where there is none); no rows for a chart without data. A Pareto chart's line (computed
    from the columns) is no series of its own."""
    chart = chart_space.find(f"{_CX}chart")
    title = " ".join(" ".join(_cx_texts(chart_space.find(f"{_CX}chart/{_CX}title/{_CX}tx"))).split())
    data = {block.get("id"): block for block in chart_space.iterfind(f"{_CX}chartData/{_CX}data")}
    columns = []  # (series name, data block)
    for one in chart.iterfind(f"{_CX}plotArea/{_CX}plotAreaRegion/{_CX}series") if chart is not None else []:
        block = data.get(one.find(f"{_CX}dataId").get("val") if one.find(f"{_CX}dataId") is not None else None)
        if block is not None and one.get("layoutId") != "paretoLine":
            columns.append((" ".join(" ".join(_cx_texts(one.find(f"{_CX}tx"))).split()), block))
    columns = columns or [("", block) for block in data.values()]
    if not columns:
        return title, []
    categories = columns[0][1].find(f"{_CX}strDim[@type='cat']")
    levels = [_cx_points(level) for level in categories.iterfind(f"{_CX}lvl")][::-1] if categories is not None else []
    values = [[_shown(v) for v in _cx_points(block.find(f"{_CX}numDim/{_CX}lvl"))] for _, block in columns]
    count = max(map(len, [*levels, *values]), default=0)
    if not count:
        return title, []
    rows = [[""] * max(len(levels), 1) + [name or f"Series {n}" for n, (name, _) in enumerate(columns, start=1)]]
    rows += [[*(level[i] if i < len(level) else "" for level in levels or [[]]), *(v[i] if i < len(v) else "" for v in values)]
             for i in range(count)]
    return title, rows


def _cx_texts(element) -> list[str]:
    """The texts of an Office 2016 chart's title or series name (``cx:tx``): its rich text's
    paragraphs, or the text it caches from a cell."""
    if element is None:
        return []
    paragraphs = [_paragraph_text(p) for p in element.iter(f"{_A}p")]
    return paragraphs or [v.text or "" for v in element.iter(f"{_CX}v")]


def _cx_points(level) -> list[str]:
    """An Office 2016 chart's level of points (``cx:lvl``) by index, "" where a point is missing."""
    if level is None:
        return []
    found = {int(point.get("idx")): point.text or "" for point in level.iterfind(f"{_CX}pt")
             if (point.get("idx") or "").isdigit()}
    size = int(level.get("ptCount")) if (level.get("ptCount") or "").isdigit() else 0
    return [found.get(i, "") for i in range(min(max(size, max(found, default=-1) + 1), _MAX_POINTS))]


def _texts(element) -> list[str]:
    """The texts of a chart title's or series name's ``c:tx``: its rich text's paragraphs, or the
    text it caches from a cell."""
    if element is None:
        return []
    paragraphs = [_paragraph_text(p) for p in element.iter(f"{_A}p")]
    return paragraphs or [v.text or "" for v in element.iter(f"{_C}v")]


def _paragraph_text(paragraph) -> str:
    """A DrawingML paragraph's (``a:p``) text: its runs' and fields' texts (``a:t``) as written."""
    return "".join(t.text or "" for t in paragraph.iter(f"{_A}t"))


def _name(series) -> str:
    """A series' name, as its legend shows it ("" where it has none)."""
    return " ".join(" ".join(_texts(series.find(f"{_C}tx"))).split())


def _order(series) -> int:
    """A series' plotting order (``c:order``), by which the chart lists it."""
    order = series.find(f"{_C}order")
    return int(order.get("val", "0")) if order is not None and order.get("val", "0").isdigit() else 0


def _cached(series, names: tuple[str, ...]) -> tuple[list[str], bool]:
    """The cached points of a series' first data reference among ``names`` (``c:cat``, ``c:val``,
    ...) by index, "" where a point is missing (a multi-level category's innermost level), and
    whether they are numbers."""
    data = next((found for name in names if (found := series.find(f"{_C}{name}")) is not None), None)
    if data is None:
        return [], False
    level = data.find(f".//{_C}lvl")
    points = (level if level is not None else data).iterfind(f".//{_C}pt")
    found = {int(point.get("idx", "-1")): point.findtext(f"{_C}v") or "" for point in points
             if point.get("idx", "").isdigit()}
    count = data.find(f".//{_C}ptCount")
    size = int(count.get("val")) if count is not None and (count.get("val") or "").isdigit() else 0
    numeric = data.find(f"{_C}numRef") is not None or data.find(f"{_C}numLit") is not None
    return [found.get(i, "") for i in range(min(max(size, max(found, default=-1) + 1), _MAX_POINTS))], numeric


def _shown(value: str) -> str:
    """A cached value as Excel's General format shows it: 15 significant digits."""
    try:
        number = float(value)
    except ValueError:  # a text or an empty point
        return value
    return format(number, ".15g") if math.isfinite(number) else value


def diagram_lines(data_model) -> list[str]:
    """A SmartArt diagram's text, from its data part's root (``dgm:dataModel``, an lxml element):
    each node's text (its paragraphs joined by spaces) in the order the diagram shows them (its
    parent-of connections' order, a node before those under it); nodes without text left out."""
    texts, kinds = {}, {}
    for point in data_model.iterfind(f"{_DGM}ptLst/{_DGM}pt"):
        key = point.get("modelId")
        kinds[key] = point.get("type", "node")
        paragraphs = (_paragraph_text(p) for p in point.iterfind(f"{_DGM}t/{_A}p"))
        texts[key] = " ".join(" ".join(p.split()) for p in paragraphs if p.strip())
    children = defaultdict(list)
    for link in data_model.iterfind(f"{_DGM}cxnLst/{_DGM}cxn"):
        if link.get("type", "parOf") == "parOf":
            children[link.get("srcId")].append((int(link.get("srcOrd", "0")), link.get("destId")))
    root = next((key for key, kind in kinds.items() if kind == "doc"), None)
    if root is None:  # no tree: the points as written
        return [texts[key] for key, kind in kinds.items() if kind in _NODE_TYPES and texts[key]]
    lines, stack, seen = [], [root], set()
    while stack:
        key = stack.pop()
        if key in seen:  # a malformed diagram's cycle
            continue
        seen.add(key)
        if kinds.get(key) in _NODE_TYPES and texts.get(key):
            lines.append(texts[key])
        stack += [child for _, child in sorted(children[key], reverse=True)]
    return lines


def drawing_texts(drawing) -> list[str]:
    """The texts of a sheet's text boxes and shapes, from its drawing part's root (``xdr:wsDr``,
    an lxml element): one a shape (its paragraphs joined by line ends), in the order of the cells
    they are anchored at (row, then column; an absolute anchor first), groups' shapes in their
    place; shapes without text (a line, an arrow, a picture) left out."""
    found = []
    for place, anchor in _anchors(drawing):
        for body in anchor.iter(f"{_XDR}txBody"):
            paragraphs = (_paragraph_text(p) for p in body.iterfind(f"{_A}p"))
            text = "\n".join(" ".join(p.split()) for p in paragraphs if p.strip())
            if text:
                found.append((place, text))
    return [text for _, text in sorted(found)]


def _anchors(drawing):
    """A sheet drawing's anchors, each with its place: (row, column, position), the cell it is
    anchored at (an absolute anchor at -1, -1) and its position among the anchors."""
    for n, anchor in enumerate(child for child in drawing if child.tag in _ANCHORS):
        start = anchor.find(f"{_XDR}from")
        row, column = ((_number(start.findtext(f"{_XDR}row")), _number(start.findtext(f"{_XDR}col")))
                       if start is not None else (-1, -1))
        yield (row, column, n), anchor


def drawing_frames(drawing) -> list:
    """A sheet's graphic frames (a chart's, a SmartArt diagram's: ``xdr:graphicFrame`` elements),
    from its drawing part's root (``xdr:wsDr``), in the order of the cells they are anchored at, as
    ``drawing_texts`` orders text boxes."""
    found = [(place, frame) for place, anchor in _anchors(drawing) for frame in anchor.iter(f"{_XDR}graphicFrame")]
    return [frame for _, frame in sorted(found, key=lambda item: item[0])]


def _number(text: str | None) -> int:
    return int(text) if text and text.strip().isdigit() else -1


def connections(root, namespace: str) -> list[str]:
    """"From → To" for each connector under ``root`` (a slide's shapes, a sheet's drawing: DrawingML
    shapes in ``namespace``, PresentationML's or SpreadsheetDrawing's) glued to two shapes with text
    (a flowchart's arrows), in the order they are drawn, groups included."""
    texts: dict[str, str] = {}
    joins: list[tuple[str, str]] = []
    for element in root.iter(f"{namespace}sp", f"{namespace}cxnSp"):
        if element.tag == f"{namespace}cxnSp":
            start, end = element.find(f".//{_A}stCxn"), element.find(f".//{_A}endCxn")
            if start is not None and end is not None:
                joins.append((start.get("id", ""), end.get("id", "")))
            continue
        named, body = element.find(f"{namespace}nvSpPr/{namespace}cNvPr"), element.find(f"{namespace}txBody")
        if named is not None and body is not None:
            texts[named.get("id", "")] = " ".join(" ".join(_paragraph_text(p) for p in body.iter(f"{_A}p")).split())
    return [f"{texts[a]} → {texts[b]}" for a, b in joins if texts.get(a) and texts.get(b)]

