"""What a slide shows in graphics that unstructured skips: a chart's data as table rows, a SmartArt
diagram's text as its nodes in the diagram's order."""

from __future__ import annotations

from collections import defaultdict

_DGM = "{http://schemas.openxmlformats.org/drawingml/2006/diagram}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_NODE_TYPES = ("node", "asst")  # a diagram's points that show text (others: the document, transitions, layout)


def chart_rows(chart) -> tuple[str, list[list[str]]]:
    """A python-pptx chart's title ("" where it shows none) and its data as rows: a header of the
    series' names, then a row a category (a point, for a chart without categories) with its label
    and each series' value as Excel's General format shows it ("" where there is none)."""
    title = chart.chart_title.text_frame.text if chart.has_title and chart.chart_title.has_text_frame else ""
    plots = list(chart.plots)
    categories = [_shown(label) for label in plots[0].categories] if plots else []
    series = [one for plot in plots for one in plot.series]
    values = [list(one.values) for one in series]
    count = max([len(categories), *map(len, values)], default=0)
    rows = [["", *(one.name or f"Series {n}" for n, one in enumerate(series, start=1))]]
    rows += [[categories[i] if i < len(categories) else "", *(_shown(v[i]) if i < len(v) else "" for v in values)]
             for i in range(count)]
    return " ".join(title.split()), rows


def _shown(value) -> str:
    """A chart's label or value as Excel's General format shows it: 15 significant digits."""
    if value is None:
        return ""
    return format(value, ".15g") if isinstance(value, (int, float)) else str(value)


def diagram_lines(data_model) -> list[str]:
    """A SmartArt diagram's text, from its data part's root (``dgm:dataModel``, an lxml element):
    each node's text (its paragraphs joined by spaces) in the order the diagram shows them (its
    parent-of connections' order, a node before those under it); nodes without text left out."""
    texts, kinds = {}, {}
    for point in data_model.iterfind(f"{_DGM}ptLst/{_DGM}pt"):
        key = point.get("modelId")
        kinds[key] = point.get("type", "node")
        paragraphs = ("".join(t.text or "" for t in p.iter(f"{_A}t")) for p in point.iterfind(f"{_DGM}t/{_A}p"))
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
