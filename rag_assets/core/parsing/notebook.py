"""Jupyter notebooks, read as Markdown: Markdown cells as written, code cells fenced, each followed
by what it printed or displayed."""

from __future__ import annotations


from rag_assets.core.parsing.decode import decode_text, elide_inline_data
from rag_assets.core.parsing.items import sole_top_heading
from rag_assets.core.parsing.text_formats import markdown_as_shown


NOTEBOOK_OUTPUT_LINES, NOTEBOOK_OUTPUT_CHARS = 20, 1000  # of a code cell's printed output kept


def _notebook_output(cell: dict) -> str:
    """What a code cell printed (stdout) and the text of its result and of what it displayed
    (``display(df.head())``; Markdown where it shows Markdown, else plain text), as a reader sees
    it under the cell (a metric, a value, a small table), cut to its first ``NOTEBOOK_OUTPUT_LINES``
    lines and ``NOTEBOOK_OUTPUT_CHARS`` characters (at a line's end); stderr, pictures and their
    captions (<Figure ...>), widgets and HTML are left out."""
    texts = []
    for output in cell.get("outputs") or []:
        kind, data = output.get("output_type"), output.get("data") or {}
        if kind == "stream" and output.get("name") == "stdout":
            text = output.get("text", "")
        elif kind in ("execute_result", "pyout", "display_data") and not any(
                k.startswith(("image/", "application/vnd.jupyter.widget")) for k in data):
            text = data.get("text/markdown", data.get("text/plain", output.get("text", "")))
        else:
            continue
        texts.append(("".join(text) if isinstance(text, list) else str(text)).strip("\n"))
    lines = "\n".join(t for t in texts if t.strip()).splitlines()[:NOTEBOOK_OUTPUT_LINES]
    kept = elide_inline_data("\n".join(lines))
    if len(kept) > NOTEBOOK_OUTPUT_CHARS:
        cut = kept.rfind("\n", 0, NOTEBOOK_OUTPUT_CHARS)
        kept = kept[:cut] if cut > 0 else kept[:NOTEBOOK_OUTPUT_CHARS]
    return kept


def parse_notebook(data: bytes):
    """A Jupyter notebook (.ipynb, nbformat 3 or 4): its cells' sources in order, Markdown cells as
    written and code cells fenced in the kernel's language, each followed by what it printed
    (``_notebook_output``, fenced as text), read as Markdown; pictures, stderr and HTML outputs are
    left out. Its title is its sole top-level heading."""
    import json

    notebook = json.loads(decode_text(data)[0])
    if not isinstance(notebook, dict) or not ("cells" in notebook or "worksheets" in notebook):
        raise ValueError("no cells: not a Jupyter notebook; check its extension")
    cells = notebook.get("cells") or [c for sheet in notebook.get("worksheets") or [] for c in sheet.get("cells") or []]
    metadata = notebook.get("metadata") or {}
    language = str((metadata.get("kernelspec") or {}).get("language") or (metadata.get("language_info") or {}).get("name")
                   or "")
    parts = []
    for cell in cells:
        source = cell.get("source", cell.get("input", ""))
        source = "".join(source) if isinstance(source, list) else str(source)
        source = elide_inline_data(source.replace("\r\n", "\n").replace("\r", "\n").strip("\n"))
        if not source.strip():
            continue
        if cell.get("cell_type") == "code":
            fence = "~~~~" if "```" in source else "```"
            source = f"{fence}{language}\n{source}\n{fence}"
            if printed := _notebook_output(cell):
                fence = "~~~~" if "```" in printed else "```"
                source += f"\n\n{fence}text\n{printed}\n{fence}"
        parts.append(source)
    text, elements = markdown_as_shown("\n\n".join(parts))
    return text, elements, sole_top_heading(text, elements)
