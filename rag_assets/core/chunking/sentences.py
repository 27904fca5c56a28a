"""A rule-based sentence splitter that returns exact char spans.

Handles abbreviations (Dr., e.g., U.S., Inc.), decimals and version numbers (3.5, v4.8.1),
ellipses, closing quotes and brackets after the end mark, list items and line-separated
headings, Markdown table rows (one sentence each, a delimiter row kept with the header row above
it), and CJK end marks that are not followed by a space.
"""

from __future__ import annotations

import re
from bisect import bisect_right

ABBREVIATIONS = frozenset(
    """mr mrs ms dr prof sr jr st vs etc e.g i.e cf al inc ltd co corp no nos fig figs vol pp p
    approx dept est jan feb mar apr jun jul aug sep sept oct nov dec mon tue wed thu fri sat sun
    u.s u.k a.m p.m ph.d m.d b.a m.a gen col lt sgt rev hon gov sen rep op art sec ch eq min max""".split()
)

# A candidate end: end marks, then closing quotes/brackets, then whitespace.
# (A run of marks is matched once, from its first mark: a run of 100,000 dots with no space after it was tried
# from each of its marks.)
_END = re.compile(r"((?<![.!?\u2026])[.!?\u2026]++|(?<![\u3002\uff01\uff1f])[\u3002\uff01\uff1f]+)(['\"\u2019\u201d)\]]*)"
                  r"(\s+|(?<=[\u3002\uff01\uff1f])(?=\S))")
_LIST_ITEM = re.compile(r"(?:^|\n)[ \t]*(?:[-*+\u2022]|\d{1,3}[.)])[ \t]+")
_LINE_BREAKS = re.compile(r"\n[ \t]*\n|\n(?=[ \t]*(?:#|[-*+\u2022][ \t]|\d{1,3}[.)][ \t]))")
# A table row: a line that starts with a pipe, but not a delimiter row (| --- | :-: |).
_TABLE_ROW = re.compile(r"(?m)^[ \t]*\|(?![ \t:|-]*$).*$")
_DELIMITER = re.compile(r"\n[ \t]*\|(?=[ \t:|-]*-)[ \t:|-]*+(?=\n|$)")


def _opens_its_line(text: str, mark_start: int) -> bool:
    """Whether the end mark at ``mark_start`` is a list number's ("2. Create") or opens its line
    (reStructuredText's ".. note::"): either way it ends no sentence."""
    lo = max(0, mark_start - 12)  # a list number (3 digits) indented up to 9 columns; never the whole line
    newline = text.rfind("\n", lo, mark_start)
    if newline < 0 and lo > 0:
        return False
    line = text[newline + 1 : mark_start].strip(" \t")
    return not line or (line.isdigit() and len(line) <= 3 and text[mark_start] == ".")


def _is_abbreviation(text: str, mark_start: int) -> bool:
    word_start = mark_start
    while word_start > 0 and (text[word_start - 1].isalpha() or text[word_start - 1] == "."):
        word_start -= 1
    word = text[word_start:mark_start].lower()
    if not word:
        return False
    if word in ABBREVIATIONS:
        return True
    # Single capital initials ("J. Smith") and dotted acronyms ("U.S.A").
    return len(word) == 1 and text[word_start].isupper() or ("." in word and len(word) <= 6)


def _row_end(text: str, line_end: int, end: int) -> int:
    """The end of a table row at ``line_end``, taking the delimiter row that follows a header row."""
    m = _DELIMITER.match(text, line_end, end)
    return m.end() if m else line_end


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Sentences of ``text[start:end]`` as trimmed ``(start, end)`` spans, in order; together
    they cover every non-whitespace char of the range."""
    end = len(text) if end is None else end
    cuts = {start, end}
    rows = [(m.start(), _row_end(text, m.end(), end)) for m in _TABLE_ROW.finditer(text, start, end)]
    for a, b in rows:
        cuts.update((a, b))
    row_starts = [a for a, _ in rows]
    for m in _END.finditer(text, start, end):
        i = bisect_right(row_starts, m.start()) - 1
        if i >= 0 and m.start() < rows[i][1]:
            continue  # a row is one sentence, whatever its cells say
        mark = m.group(1)
        if mark == "." and _is_abbreviation(text, m.start(1)) or _opens_its_line(text, m.start(1)):
            continue
        nxt = m.end()
        # "3.5", "v4.8.1" never match (no whitespace after the dot); a lowercase continuation
        # ('"Yes!" she said', 'wait... and then') is the same sentence.
        if nxt < end and text[nxt].islower():
            continue
        cuts.add(m.end(2))
    for m in _LINE_BREAKS.finditer(text, start, end):
        cuts.add(m.start() + 1)
    for m in _LIST_ITEM.finditer(text, start - 1 if start else 0, end):
        cuts.add(m.start() + (text[m.start()] == "\n"))  # the item's line starts after its newline
        line_end = text.find("\n", m.end(), end)
        if line_end >= 0:
            cuts.add(line_end + 1)  # a list item ends with its line
    bounds = sorted(c for c in cuts if start <= c <= end)
    spans = []
    for a, b in zip(bounds, bounds[1:]):
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if a < b:
            spans.append((a, b))
    return spans
