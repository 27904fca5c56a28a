"""The chunk summaries shown in materialisation metadata: histogram bins and the sample table."""

import re

from hypothesis import given
from hypothesis import strategies as st

from rag_assets.core.models import Chunk
from rag_assets.core.report import histogram_markdown, sample_chunks_markdown, token_histogram


@given(st.lists(st.integers(0, 600), max_size=200), st.integers(1, 512), st.integers(1, 16))
def test_every_count_lands_in_exactly_the_bin_that_covers_it(tokens, limit, bins):
    histogram = token_histogram(tokens, limit, bins)
    assert sum(b.count for b in histogram) == len(tokens)
    assert histogram[0].low == 0 and histogram[-1].high == limit
    for before, after in zip(histogram, histogram[1:]):
        assert after.low == before.high + 1  # contiguous, no gaps or overlaps
    for b in histogram:
        last = b is histogram[-1]
        assert b.count == sum(1 for t in tokens if b.low <= t <= b.high or (last and t > limit))


def test_histogram_table_has_one_row_per_bin_and_bars_scaled_to_the_peak():
    histogram = token_histogram([10, 10, 10, 10, 100], 128, 4)
    rows = histogram_markdown(histogram).splitlines()[2:]
    assert [r.split("|")[1].strip() for r in rows] == ["0-32", "33-64", "65-96", "97-128"]
    bars = [r.split("|")[3].strip() for r in rows]
    assert len(bars[0]) == 24 and len(bars[3]) == 6 and bars[1] == ""


def test_sample_table_shows_heading_paths_and_escapes_pipes():
    chunks = [Chunk("d", i, i * 10, i * 10 + 9, f"a | b\n\nrow {i}", "", 7 + i, ("Guide", f"Part {i}"))
              for i in range(7)]
    table = sample_chunks_markdown(chunks, n=3)
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| #")]
    assert len(rows) == 3
    assert "Guide > Part 2" in rows[2] and "a \\| b row 2" in rows[2] and "| 9 |" in rows[2]
    # Escaped pipes keep every row at the header's column count.
    assert all(len(re.split(r"(?<!\\)\|", r)) == 7 for r in rows)
    assert table.endswith("4 more chunks")
    deep = sample_chunks_markdown([Chunk("d", 0, 0, 1, "x", "", 1, tuple(f"Section {j}" for j in range(9)))])
    assert "| …" in deep and "Section 7 > Section 8 |" in deep  # the most specific end survives


def test_sample_table_fits_the_inline_budget_by_dropping_rows():
    chunks = [Chunk("d", i, 0, 500, "word " * 100, "", 120, tuple(f"Heading {j}" for j in range(12)))
              for i in range(5)]
    table = sample_chunks_markdown(chunks, max_chars=600)
    assert len(table) <= 600
    kept = len([line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| #")])
    assert 1 <= kept < 5 and table.endswith(f"{5 - kept} more chunks")
