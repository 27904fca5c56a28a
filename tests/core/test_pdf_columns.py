from hypothesis import given
from hypothesis import strategies as st

from rag_assets.core.parsing.pdf_columns import Box, reading_order


def column(x0: float, x1: float, top: float, heights: list[int], gap: float = 12) -> list[Box]:
    """Paragraph boxes of ``heights`` lines (12 points a line) from ``top`` down, ``gap`` apart."""
    boxes = []
    for lines in heights:
        boxes.append(Box(x0, top - 12 * lines, x1, top, lines))
        top -= 12 * lines + gap
    return boxes


def test_columns_read_in_turn_between_the_boxes_spanning_them():
    title, abstract = Box(150, 740, 460, 760, 1), Box(72, 690, 540, 730, 3)
    left, right = column(72, 290, 670, [10, 8, 12]), column(320, 540, 670, [6, 5])
    caption = Box(72, 250, 540, 262, 1)  # a figure's caption set full width
    below_left, below_right = column(72, 290, 240, [4]), column(320, 540, 240, [5])
    number = Box(300, 40, 306, 50, 1)  # the page number, under the left column's edge (its text is ragged)
    boxes = [*right, title, *below_right, caption, number, *left, abstract, *below_left]  # pdfminer's order, shuffled
    order = [boxes[i] for i in reading_order(boxes)]
    assert order == [title, abstract, *left, *right, caption, *below_left, *below_right, number]


def test_a_column_keeps_pdfminer_s_order_of_its_boxes():
    """A column holding a list set in two narrower columns of names (an NCCN guideline's panel list),
    which pdfminer reads name column by name column, is not read across them line by line."""
    names = [Box(x, top - 10, x + 80, top, 1) for x in (72, 170) for top in range(700, 600, -20)]
    notes = column(72, 290, 580, [4, 6])
    right = column(320, 540, 700, [7, 5])
    boxes = [*right, *names, *notes]
    assert [boxes[i] for i in reading_order(boxes)] == [*names, *notes, *right]


def test_a_column_s_last_line_stays_in_it_and_a_page_number_goes_last():
    """A one-line box just under the left column's paragraphs (a one-line reference) where the
    right column is the shorter is that column's; a line set apart below them is the page's."""
    left = column(72, 290, 700, [6, 8, 5])
    last = Box(72, left[-1].y0 - 15, 200, left[-1].y0 - 3, 1)
    right = column(320, 540, 700, [5, 4])
    number = Box(300, 30, 310, 40, 1)
    boxes = [*right, *left, last, number]
    assert [boxes[i] for i in reading_order(boxes)] == [*left, last, *right, number]


def test_three_columns_read_left_to_right():
    columns = [column(x, x + 150, 700, heights) for x, heights in ((50, [5, 7]), (230, [3, 9]), (410, [8, 2]))]
    boxes = [*columns[2], *columns[0], *columns[1]]
    assert [boxes[i] for i in reading_order(boxes)] == [*columns[0], *columns[1], *columns[2]]


def test_a_page_in_one_column_keeps_pdfminer_s_order():
    body = column(72, 540, 700, [5, 3, 8])
    quote = Box(120, 300, 480, 340, 3)  # an indented block of three lines: no column beside another
    boxes = [body[1], quote, body[0], body[2]]
    assert reading_order(boxes) == [0, 1, 2, 3]


def test_a_table_s_columns_of_values_and_notes_beside_text_are_no_columns():
    """A field table set without rules (shared-mime-info's spec: offsets, types and names, each a
    narrow box of several lines, read row by row), a table of two wide columns whose cells start
    level and two-line notes beside the text keep pdfminer's order."""
    heading = Box(72, 700, 540, 740, 3)
    rows = [[Box(x, top - 36, x + width, top, 3) for x, width in ((72, 30), (110, 50), (170, 90))] for top in (650, 600)]
    boxes = [heading, *rows[0], *rows[1]]
    assert reading_order(boxes) == list(range(len(boxes)))
    cells = [[Box(x, top - 36, x + 200, top, 3) for x in (72, 320)] for top in (450, 400, 350)]
    boxes = [box for row in cells for box in row]  # a table of two wide columns, read row by row
    assert reading_order(boxes) == list(range(len(boxes)))
    body = column(120, 300, 500, [6, 5])
    notes = [Box(335, 480, 453, 500, 2), Box(335, 404, 453, 425, 2)]
    boxes = [body[0], notes[0], body[1], notes[1]]
    assert reading_order(boxes) == list(range(len(boxes)))


@given(st.lists(st.tuples(st.floats(0, 500), st.floats(0, 700), st.floats(1, 300), st.floats(1, 100),
                          st.integers(1, 20)), max_size=30))
def test_the_reading_order_is_a_permutation_of_the_boxes(shapes):
    boxes = [Box(x, y, x + w, y + h, lines) for x, y, w, h, lines in shapes]
    assert sorted(reading_order(boxes)) == list(range(len(boxes)))
