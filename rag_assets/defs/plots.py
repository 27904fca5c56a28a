"""PNG charts for materialisation metadata, embedded in markdown as data URIs (the Dagster UI
renders them inline; nothing is written to disk)."""

import base64
import io
from functools import lru_cache

from rag_assets.core.report import Bin


@lru_cache(maxsize=1)
def pyplot():
    """matplotlib's pyplot on the Agg backend, imported once per process."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def png_markdown(fig, alt: str) -> str:
    """The figure as a markdown image (base64 PNG); closes the figure."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    pyplot().close(fig)
    return f"![{alt}](data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()})"


def histogram_png(histogram: list[Bin], limit: int, title: str) -> str:
    """Chunks per token range as a small bar chart, the token limit marked."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(4.8, 2.4), dpi=80)
    ax.bar([f"{b.low}-{b.high}" for b in histogram], [b.count for b in histogram], color="#4f43dd")
    ax.set_xlabel(f"tokens per chunk (limit {limit})", fontsize=8)
    ax.set_ylabel("chunks", fontsize=8)
    ax.set_title(title, fontsize=9)
    ax.tick_params(labelsize=7)
    ax.yaxis.get_major_locator().set_params(integer=True)
    # Fixed margins that fit these labels: tight_layout measured every label on each call (half the cost).
    fig.subplots_adjust(left=0.13, right=0.98, bottom=0.22, top=0.88)
    return png_markdown(fig, title)
