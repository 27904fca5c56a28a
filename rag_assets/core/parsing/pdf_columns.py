"""The reading order of a PDF page set in columns (a paper, a newsletter, a data sheet).

pdfminer orders a page's text boxes by grouping them pairwise by distance, and reads a group of
two columns right column first where the right one is the shorter (a paper's last page, a page
where a figure ends one column): the right column's text came before the left's, and a paragraph
that a column break cuts was read in two far-apart pieces. ``reading_order`` reads such a page
as its reader does: top to bottom between the boxes that span its columns (a title, an abstract
set full width, a figure's caption), each column left to right, each in pdfminer's order. A page
in one column keeps pdfminer's order.
"""

from __future__ import annotations

from typing import NamedTuple

MIN_GUTTER = 6.0  # points between two columns' text at least (a word space is about 3)
MIN_COLUMN_LINES = 3  # a column holds a paragraph of this many lines at least (2-line notes beside text are none)
WIDE = 0.6  # a paragraph wider than this share of the page's text spans columns: it is no column's
NARROW = 0.2  # a column is at least this share of the page's text wide (a table's columns of values are not)


class Box(NamedTuple):
    """A text box's bounding box in PDF coordinates (y grows upwards) and its number of lines."""

    x0: float
    y0: float
    x1: float
    y1: float
    lines: int


def reading_order(boxes: list[Box]) -> list[int]:
    """The indices of a page's text ``boxes`` (in pdfminer's order) in reading order. The page is
    set in columns where gaps of ``MIN_GUTTER`` points or more (gutters) run between the
    paragraphs (boxes of two lines or more, at most ``WIDE`` of the text's width), each column
    holds a paragraph of ``MIN_COLUMN_LINES`` lines or more and is ``NARROW`` of the text's width
    or wider (a table's columns of values are no columns of text), and their boxes are no table's
    rows (``_rows``); then a box crossing a gutter (a title, a caption) or a line above or below all
    paragraphs (``_margin``: a header, a page number) is read where it stands, between the bands
    of columns above and below it, and within a band each column is read in turn, its boxes in
    pdfminer's order (a list set in narrower columns inside one stays read column by column).
    Otherwise pdfminer's order stands."""
    order = list(range(len(boxes)))
    gutters = _gutters(boxes)
    if not gutters:
        return order
    edges = [(-float("inf"), gutters[0][0])] + [(a[1], b[0]) for a, b in zip(gutters, gutters[1:])] \
        + [(gutters[-1][1], float("inf"))]
    paragraphs = [box for box in boxes if box.lines >= 2]
    top, bottom = max(box.y1 for box in paragraphs), min(box.y0 for box in paragraphs)
    column_of = {i: c for i, box in enumerate(boxes) for c, (left, right) in enumerate(edges)
                 if box.x0 >= left - 1 and box.x1 <= right + 1 and not _margin(box, top, bottom)}
    spanning = sorted((i for i in order if i not in column_of), key=lambda i: -_middle(boxes[i]))
    bands: dict[int, list[int]] = {}
    for i in column_of:
        band = sum(_middle(boxes[s]) > _middle(boxes[i]) for s in spanning)
        bands.setdefault(band, []).append(i)
    if any(_rows(boxes, members, column_of) for members in bands.values()):
        return order
    out: list[int] = []
    for band in range(len(spanning) + 1):
        out += sorted(bands.get(band, []), key=lambda i: (column_of[i], i))
        out += spanning[band : band + 1]
    return out


def _rows(boxes: list[Box], members: list[int], column_of: dict[int, int]) -> bool:
    """Whether a band's columns (the boxes ``members``) are a table's: below each column's first
    box, two boxes of a column or more, and half of them at least, start level with a box of the
    column before it, as a table's cells of a row do (text in columns starts its paragraphs where
    they fall: two columns' second paragraphs may start level by chance)."""
    tops: dict[int, list[float]] = {}
    for i in sorted(members, key=lambda i: -boxes[i].y1):
        tops.setdefault(column_of[i], []).append(boxes[i].y1)
    pairs = [(tops[c], tops[c + 1][1:]) for c in sorted(tops) if c + 1 in tops]
    level = [sum(any(abs(top - other) <= 2 for other in left) for top in right) for left, right in pairs]
    return any(count >= 2 and 2 * count >= len(right) for count, (_, right) in zip(level, pairs))


def _margin(box: Box, top: float, bottom: float) -> bool:
    """Whether ``box`` is a line set apart above or below all the page's paragraphs (between
    ``top`` and ``bottom``), by a gap of its own height at least: a running header, a footer, a
    page number, read before or after the columns wherever it stands. A column's last line, just
    under its paragraphs, stays in it."""
    height = box.y1 - box.y0
    return box.lines == 1 and (box.y0 >= top + height or box.y1 <= bottom - height)


def _middle(box: Box) -> float:
    return (box.y0 + box.y1) / 2


def _gutters(boxes: list[Box]) -> list[tuple[float, float]]:
    """The x ranges between a page's columns of paragraphs, left to right (see ``reading_order``);
    none for a page in one column."""
    if len(boxes) < 2:
        return []
    width = max(box.x1 for box in boxes) - min(box.x0 for box in boxes)
    paragraphs = sorted((box for box in boxes if box.lines >= 2 and box.x1 - box.x0 <= WIDE * width),
                        key=lambda box: box.x0)
    runs: list[list[float]] = []  # [x0, x1, most lines of a paragraph] of paragraphs overlapping in x
    for box in paragraphs:
        if runs and box.x0 < runs[-1][1] + MIN_GUTTER:
            runs[-1][1] = max(runs[-1][1], box.x1)
            runs[-1][2] = max(runs[-1][2], box.lines)
        else:
            runs.append([box.x0, box.x1, box.lines])
    columns: list[list[float]] = []
    def column(run: list[float]) -> bool:
        return run[2] >= MIN_COLUMN_LINES and run[1] - run[0] >= NARROW * width

    columns: list[list[float]] = []
    for run in runs:  # a run too short or narrow to be a column joins the one before it (the first, the one after)
        if columns and not (column(run) and column(columns[-1])):
            columns[-1] = [columns[-1][0], run[1], max(columns[-1][2], run[2])]
        else:
            columns.append(run)
    if len(columns) < 2 or not column(columns[-1]):
        return []
    return [(a[1], b[0]) for a, b in zip(columns, columns[1:])]
