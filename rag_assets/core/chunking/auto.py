"""``auto``: pick a strategy from the document's type and structure (the selection guide:
code -> functions, tables -> rows, notebooks -> sections, FAQ -> whole pairs, transcripts ->
turns (speakers who speak more than once; not e-mail, whose header lines look like turns), structured docs
(headings, or a table: split by rows, its header repeated) -> sections, legal prose -> sentences,
everything else -> paragraphs via recursive)."""

from __future__ import annotations

import re
from collections import Counter

from rag_assets.core.chunking.markers import QUESTION, TURN
from rag_assets.core.models import ParsedDocument

_LEGAL = re.compile(r"\b(?:hereinafter|pursuant to|notwithstanding|whereas|shall not|indemnif\w+)\b", re.I)


def choose_strategy(doc: ParsedDocument) -> str:
    """Strategy name for ``doc``; deterministic, explained in the module docstring."""
    if doc.content_type == "code":
        return "code"
    if doc.content_type == "csv":
        return "table"
    if doc.content_type == "notebook":  # Markdown cells and fenced code: by section, code kept whole
        return "markdown"
    categories = [el.category for el in doc.elements]
    structured = categories.count("Title") >= 2 or "Table" in categories
    if doc.content_type == "email":  # its From/To/Cc/Date lines are not turns of a dialogue
        return "markdown" if structured else "recursive"
    text = doc.text
    lines = max(1, text.count("\n") + 1)
    if len(QUESTION.findall(text)) >= 3:
        return "faq"
    speakers = Counter(name.strip() for name in TURN.findall(text))
    turns = sum(speakers.values())
    # A dialogue's speakers come back; labels (Note:, Fixed:, Übersicht:) are each said once.
    if turns >= 4 and turns >= 0.3 * sum(1 for line in text.splitlines() if line.strip()) \
            and len(speakers) < turns:
        return "transcript"
    if structured:
        return "markdown"
    if len(_LEGAL.findall(text)) >= max(3, lines // 200):
        return "sentence"
    return "recursive"
