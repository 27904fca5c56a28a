"""Readable summaries of a document's chunks, for materialisation metadata and the command line.

Plain values in, plain values (numbers and markdown strings) out; never imports dagster.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from rag_assets.core.models import Chunk

BAR_WIDTH = 24


@dataclass(frozen=True)
class Bin:
    """Chunks with ``low <= tokens <= high``."""

    low: int
    high: int
    count: int


def token_histogram(tokens: Sequence[int], limit: int, bins: int = 8) -> list[Bin]:
    """``bins`` contiguous, equal-width token ranges covering 1..``limit`` (the last one also takes
    any count above ``limit``). Every count lands in exactly one bin, so the counts sum to
    ``len(tokens)``."""
    limit = max(limit, 1)
    bins = max(1, min(bins, limit))
    width = -(-limit // bins)  # ceiling division: the bins reach limit
    edges = [(i * width + 1, min((i + 1) * width, limit)) for i in range(bins) if i * width < limit]
    counts = [0] * len(edges)
    for t in tokens:
        counts[min(max(t - 1, 0) // width, len(edges) - 1)] += 1
    return [Bin(low if i else 0, high, count) for i, ((low, high), count) in enumerate(zip(edges, counts))]


def histogram_markdown(histogram: Sequence[Bin]) -> str:
    """A markdown table, one row per bin, with a text bar scaled to the fullest bin."""
    peak = max((b.count for b in histogram), default=0) or 1
    rows = [f"| {b.low}-{b.high} | {b.count} | {'█' * round(BAR_WIDTH * b.count / peak)} |" for b in histogram]
    return "| tokens | chunks | |\n|---|---:|---|\n" + "\n".join(rows)


def _cell(text: str, width: int, keep_end: bool = False) -> str:
    flat = " ".join(text.split()).replace("|", "\\|")
    if len(flat) <= width:
        return flat
    return "…" + flat[1 - width:] if keep_end else flat[: width - 1] + "…"


def sample_chunks_markdown(chunks: Sequence[Chunk], n: int = 5, preview: int = 80, max_chars: int = 990) -> str:
    """The first ``n`` chunks as a markdown table: index, char span, tokens, heading path and the
    start of the text (pipes escaped, whitespace collapsed; a long heading path keeps its end, the
    most specific part). Rows are dropped from the end until
    the table fits ``max_chars`` (Dagster's UI shows markdown under 1,000 characters inline)."""
    header = "| # | chars | tokens | heading path | text |\n|---:|---|---:|---|---|\n"
    rows = [f"| {c.chunk_index} | {c.start}-{c.end} | {c.tokens} | "
            f"{_cell(' > '.join(c.heading_path), 50, keep_end=True) or '–'} | {_cell(c.text, preview)} |"
            for c in chunks[:n]]
    while True:
        more = f"\n\n{len(chunks) - len(rows)} more chunks" if len(chunks) > len(rows) else ""
        table = header + "\n".join(rows) + more
        if len(table) <= max_chars or len(rows) <= 1:
            return table
        rows.pop()
