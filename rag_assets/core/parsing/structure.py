"""Block structure of plain-text formats (markdown, text, code, csv), with exact char spans."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import replace
from functools import lru_cache
from itertools import accumulate
from typing import Mapping, Sequence

from rag_assets.core.models import Element

_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t](.*))?")  # fullmatch; its text is _atx_text(group 2)
# A fence, perhaps opening a list item's text ("- ```bash"; indented 4 columns or more it is code,
# not a fence); a backtick fence's info string holds no backtick ("```x```" is inline code).
_FENCE = re.compile(r"^ {0,3}(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)*(`{3,}(?=[^`]*$)|~{3,})")
_LIST_FENCE = re.compile(r"[ \t]*(`{3,}(?=[^`]*$)|~{3,})")  # in a list item: indented past its marker
# A line that opens a block of its own (a heading, a rule, a fence, HTML): never a paragraph's lazy line.
_OPENS_BLOCK = re.compile(r" {0,3}(?:#{1,6}(?:[ \t]|$)|(?:[-*_][ \t]*){3,}$|`{3,}|~{3,}|<|\{[{%])")
# HTML blocks whose lines are never Markdown (CommonMark's kinds 1 and 2): raw text and comments,
# each up to the line holding its end.
_RAW_BLOCK = re.compile(r"^ {0,3}<(pre|script|style|textarea|!--)(?=[\s>]|$|(?<=!--))", re.I)
_RAW_END = {"pre": "</pre>", "script": "</script>", "style": "</style>", "textarea": "</textarea>", "!--": "-->"}
# A static site generator's code block: Jekyll's {% highlight %} and {% raw %}, Hugo's {{< highlight >}}
# and {{< code >}} (their "# comment" lines are no headings), each up to its closing tag; a name
# goes on past a hyphen ({{< code-toggle >}}, its config in several formats, is code too; {{< code-x >}} is not).
_TEMPLATE_CODE = re.compile(r"^ {0,3}(?:\{%-?\s*(highlight|raw)|\{\{[<%]\s*(highlight|code(?:-toggle)?))(?!-*\w)", re.I)
_SELF_CLOSED = re.compile(r"/\s*[>%]\}\}")  # Hugo's {{< name ... />}}: no content to close
# A GFM table's delimiter row ("--- | :---:"), under its header row; a pipe at least.
_DELIMITER_ROW = re.compile(r" {0,3}(?=[^|\n]*\|)\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*(?:\|[ \t]*)?")
# An HTML heading alone on its line (a GitHub README's centred <h1 align="center">).
_HTML_HEADING = re.compile(r"^ {0,3}<h([1-6])(?:\s[^>]*)?>((?:(?!</?h[1-6]\b).)*)</h\1>[ \t]*$", re.I)
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")  # the line under a setext heading: "====" level 1, "----" level 2
_THEMATIC_BREAK = re.compile(r" {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})")  # "---", "* * *": a rule
_LIST = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_QUOTE_MARKS = re.compile(r"(?:[ \t]*>)+[ \t]?")  # a block quote's markers, "> " or "> > " (nested)
_DEFINITION = re.compile(r" {0,3}:[ \t]+(?=\S)")  # a definition list's ":   text" (Python-Markdown, Pandoc, MkDocs)
#: a heading's trailing attribute list, which MkDocs (attr_list), Pandoc and Quarto render as its id or class:
#: "Install {#setup}", "Install { #setup .wide }", "Install {: #setup}", "References {.unnumbered}", "Preface {-}"
HEADING_ATTRIBUTES = re.compile(r"\s+\{(?::[^{}\n]*|[ \t]*[#.][^{}\n]*|-)\}\s*$")
_INLINE = [
    (HEADING_ATTRIBUTES, ""),
    (re.compile(r"<[^<>\n]*>"), ""),  # HTML tags and anchors: "Limits<a name=\"limits\"></a>"
    (re.compile(r"!?\[([^\]]*)\]\([^)]*\)"), r"\1"),  # links and images: their text
    (re.compile(r"(\*\*|__|\*|`)(?=\S)(.+?)(?<=\S)\1"), r"\2"),  # emphasis and code spans
    (re.compile(r"\\([!-/:-@\[-`{-~])"), r"\1"),  # backslash escapes: "Multi\-AZ"
]


MAX_HEADING_CHARS = 1_000  # a heading's text read (no page's heading is longer; the patterns are quadratic)


def html_heading_as_atx(line: str) -> str | None:
    """An HTML heading alone on its line (``<h1 align="center">Acme <i>Gate</i></h1>``, as READMEs
    write one) as the Markdown heading a reader sees ("# Acme Gate"); None for another line or a
    heading showing no text (a logo)."""
    match = _HTML_HEADING.fullmatch(line)
    text = heading_text(match.group(2)) if match else ""
    return "#" * int(match.group(1)) + " " + text if text else None


def heading_text(raw: str) -> str:
    """A Markdown heading's text as a reader sees it: inline markup, links and escapes rendered, a
    trailing attribute list (``{#id}``) left out; of its first ``MAX_HEADING_CHARS`` characters."""
    raw = raw[:MAX_HEADING_CHARS]
    for pattern, replacement in _INLINE:
        raw = pattern.sub(replacement, raw)
    return " ".join(raw.split())


_YAML_FRONT_MATTER = re.compile(r"---[ \t]*\n(.*?\n)?(?:---|\.\.\.)[ \t]*(?:\n|$)", re.S)
_TOML_FRONT_MATTER = re.compile(r"\+\+\+[ \t]*\n(.*?\n)?\+\+\+[ \t]*(?:\n|$)", re.S)
FRONT_MATTER_CHARS = 65_536  # a block longer than this is no front matter


MAX_TAGS = 32


def front_matter(text: str) -> tuple[str, tuple[str, ...]]:
    """The ``title`` and ``tags`` of a Markdown file's front matter (a YAML block between "---"
    lines, or a TOML one between "+++" lines, at the very start, as static-site generators and
    note apps write it); ("", ()) when there is none or it does not parse. Tags are a list, or one
    string of comma- (else space-) separated tags as Jekyll reads it; each one's whitespace is
    collapsed, commas and semicolons split it, and at most ``MAX_TAGS`` of 1-100 characters are
    kept."""
    matter = _front_matter_block(text)
    if matter is None:
        return "", ()
    fields = matter[1]
    title = fields.get("title")
    title = heading_text(str(title))[:200] if isinstance(title, (str, int, float)) else ""
    return title, _tags(fields.get("tags"))


def _front_matter_block(text: str) -> tuple[int, dict] | None:
    """Where a Markdown text's front matter ends and its fields; None when it has none (a block
    that is not a YAML or TOML mapping, such as a horizontal rule over a paragraph, is none)."""
    head = text[:FRONT_MATTER_CHARS]
    return _read_front_matter(head) if head.startswith(("---", "+++")) else None


@lru_cache(maxsize=16)
def _read_front_matter(head: str) -> tuple[int, dict] | None:
    """``_front_matter_block`` of a text's head, read once however often a parse asks (the fields
    are not to be changed)."""
    try:
        if match := _YAML_FRONT_MATTER.match(head):
            import yaml

            fields = yaml.safe_load(match.group(1) or "")
        elif match := _TOML_FRONT_MATTER.match(head):
            import tomllib

            fields = tomllib.loads(match.group(1) or "")
        else:
            return None
    except Exception:  # not YAML or TOML after all
        return None
    return (match.end(), fields) if isinstance(fields, dict) else None


def _front_matter_end(text: str) -> int:
    """Where a Markdown text's front matter block ends (0 without one): a block that parses, or
    one without a blank line that does not (a broken front matter is still no setext heading)."""
    if matter := _front_matter_block(text):
        return matter[0]
    match = _YAML_FRONT_MATTER.match(text[:FRONT_MATTER_CHARS]) or _TOML_FRONT_MATTER.match(text[:FRONT_MATTER_CHARS])
    return match.end() if match and not re.search(r"\n[ \t]*\n", match.group(0)) else 0


def _tags(value) -> tuple[str, ...]:
    if isinstance(value, str):
        value = value.split(",") if "," in value else value.split()
    if not isinstance(value, list):
        return ()
    return tag_names(str(item) for item in value if isinstance(item, (str, int, float)))


def tag_names(values) -> tuple[str, ...]:
    """Tags from strings: each split at commas and semicolons, its whitespace collapsed; the
    first ``MAX_TAGS`` distinct ones of 1-100 characters."""
    names = (" ".join(part.split()) for value in values for part in re.split(r"[,;]", value))
    return tuple(dict.fromkeys(name for name in names if 0 < len(name) <= 100))[:MAX_TAGS]


def _lines(text: str, markdown: bool = False):
    """(start, end, the line without its break) of each line of ``text``, split where Python splits
    lines (as docutils reads them), or at "\n" alone (``markdown``: CommonMark's line ends; a form
    feed or U+2028 is no line end there)."""
    pos = 0
    for line in text.split("\n") if markdown else text.splitlines(keepends=True):
        size = len(line) + markdown
        yield pos, min(pos + size, len(text)), line.rstrip("\n")
        pos += size


def closes_fence(line: str, fence: str, max_indent: int | None = None) -> bool:
    """Whether ``line`` closes the block ``fence`` ("```", "~~~~", MyST's ":::") opened: a line of its own
    character alone, at least as long, as CommonMark reads it; indented ``max_indent`` columns at
    most, when given (deeper, it is a line of the code)."""
    closing = re.fullmatch(rf"[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*", line) is not None
    return closing and (max_indent is None or _columns(line) <= max_indent)


def _columns(line: str) -> int:
    """The columns ``line``'s indentation takes, a tab to the next multiple of 4 (CommonMark)."""
    return len(line[: indent_width(line)].expandtabs(4))


def _block_end(opening: re.Match) -> re.Pattern:
    """What closes the raw HTML or template code block ``opening`` opened (Jekyll's {% endname %},
    Hugo's {{< /name >}}, spaces allowed inside the tags)."""
    if opening.re is _TEMPLATE_CODE:
        if opening.group(1):
            return re.compile(rf"\{{%-?\s*end{opening.group(1)}\s*-?%\}}", re.I)
        return re.compile(rf"\{{\{{[<%]\s*/\s*{re.escape(opening.group(2))}\s*[>%]\}}\}}", re.I)
    return re.compile(re.escape(_RAW_END[opening.group(1).lower()]), re.I)


def _open_item(items: list[int], marker: int, text: int) -> None:
    """A list item whose marker is at column ``marker`` and text at column ``text`` opens: the items
    whose text starts right of its marker have ended (it is their sibling or an outer one)."""
    while items and items[-1] > marker:
        items.pop()
    items.append(text)


def _atx_text(rest: str | None) -> str:
    """An ATX heading's text from what follows its "#"s: without a closing run of "#"s that a
    space or tab opens ("# Title ##"; "## Example in C#" keeps its "#")."""
    rest = (rest or "").strip(" \t")
    bare = rest.rstrip("#")
    return bare.rstrip(" \t") if not bare or bare[-1] in " \t" else rest


def gfm_header(header: str, under: str | None) -> bool:
    """Whether line ``header`` heads a GFM table: line ``under`` is a delimiter row ("--- | :---:", a
    pipe at least) of as many cells."""
    return under is not None and _columns(header) < 4 and _DELIMITER_ROW.fullmatch(under) is not None \
        and _cells(header) == _cells(under)


def _cells(row: str) -> int:
    """How many cells a GFM table row holds: its unescaped pipes, less a leading and a trailing one."""
    row = row.strip()
    pipes = len(re.findall(r"(?<!\\)\|", row))
    return pipes + 1 - row.startswith("|") - (row.endswith("|") and not row.endswith("\\|") and len(row) > 1)


def markdown_elements(text: str) -> tuple[Element, ...]:
    """The blocks of ``markdown_blocks``."""
    return markdown_blocks(text)[0]


def markdown_blocks(text: str, containers: Mapping[int, int] | None = None
                    ) -> tuple[tuple[Element, ...], tuple[tuple[int, int], ...]]:
    """Blocks of a markdown text: Title (ATX headings, setext ones: a paragraph over a line of
    "=" or "-", and an HTML <h1>-<h6> alone on its line, outside fences), Table (rows opening with
    a pipe, or a GFM table: a header row over a delimiter row, its rows up to a line without a
    pipe or a list item), CodeSnippet (a fence, also one indented past a list item's marker, closes
    on a line of its own character at least as long and indented at most 3 columns past the text
    holding the fence, the page's or a list item's, as CommonMark reads it, or where that item ends;
    indented code: lines indented 4 columns past that text, opening no paragraph's line, up to a
    line indented less; an HTML <pre>, <script>, <style> or <textarea> block; Jekyll's and Hugo's
    highlight, raw, code and code-toggle blocks; a fence in a block quote, up to its closing line
    or the quote's end), ListItem, NarrativeText (an HTML comment is one, never read for
    headings); a front matter block is one NarrativeText. Every element carries the heading path it
    sits under. A definition (":   text") holds its lines as a list item does, and so does an MkDocs
    admonition or tab, its text 4 columns past its marker (Python-Markdown's), also one whose marker
    line is gone: ``containers`` maps the offset of the line after it to the marker's column. Also
    the ``(start, end)`` spans of the lines a page shows as no text: setext underlines and thematic
    breaks ("---", "* * *"), their line breaks not included; no element holds one."""
    elements: list[Element] = []
    rules: list[tuple[int, int]] = []
    stack: list[tuple[int, str]] = []
    block_start: int | None = None
    block_end = 0
    block_kind = ""
    first_line = ""  # the open block's first line
    last_line = (0, "")  # and its last line's start and text
    # the open fence, the deepest indent of its closing line, and the column of the list item's (or
    # MkDocs block's) text holding it (0: the page's)
    fence: tuple[str, int, int] | None = None
    code_column: int | None = None  # the indent that keeps a line in the open indented code block
    quoted: tuple[str, int] | None = None  # the open fence in a block quote and the quote's depth
    raw_end: re.Pattern | None = None  # what ends the HTML raw block, comment or template code the lines are in
    items: list[int] = []  # where the text of each list item the lines are in starts, the innermost last
    after_blank = True

    def path() -> tuple[str, ...]:
        return tuple(title for _, title in stack)

    def flush() -> None:
        nonlocal block_start
        if block_start is not None:
            elements.append(Element(block_start, block_end, block_kind, heading_path=path()))
            block_start = None

    def flush_unclosed() -> None:  # a fence its container ended: its code up to its last character
        nonlocal block_end
        while text[block_end - 1].isspace():
            block_end -= 1
        flush()

    def open_section(level: int, title: str) -> None:
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, heading_text(title) or "(untitled)"))

    matter_end = _front_matter_end(text)
    if matter_end:
        elements.append(Element(0, len(text[:matter_end].rstrip()), "NarrativeText"))
    for start, end, line in _lines(text, markdown=True):
        if start < matter_end:
            continue
        if containers and start in containers:
            _open_item(items, containers[start], containers[start] + 4)
        if fence is not None and line.strip() and _columns(line) < fence[2]:  # its item ended: so did the fence
            fence = None
            flush_unclosed()
        if fence is not None:
            block_end = end
            if closes_fence(line, fence[0], fence[1]):
                fence = None
                flush()
            continue
        if quoted is not None:  # a fence in a block quote: its lines keep the quote's depth
            marks = _QUOTE_MARKS.match(line)
            if marks is None or marks.group().count(">") < quoted[1]:  # the quote ended: so did the fence
                quoted = None
                flush_unclosed()
            else:
                block_end = end
                if closes_fence(line[marks.end():], quoted[0], 3):
                    quoted = None
                    flush()
                continue
        if raw_end is not None:
            block_end = start + len(line)
            if raw_end.search(line):
                raw_end = None
                flush()
            continue
        blank = not line.strip()
        indent = _columns(line)
        if code_column is not None:  # blank lines and lines indented to its column are the code's
            if blank or indent >= code_column:
                if not blank:
                    block_end = start + len(line)
                after_blank = blank
                continue
            code_column = None
            flush()
        marker = _LIST.match(line)
        if items and not blank and indent < items[-1] and not marker and (
                after_blank or block_start is None or block_kind not in ("ListItem", "NarrativeText")
                or _OPENS_BLOCK.match(line)):  # not a paragraph's lazy line: the items right of it ended
            while items and indent < items[-1]:
                items.pop()
        after_blank = blank
        owner = next((column for column in reversed(items) if column <= indent), None)  # the item holding the line
        if not blank and block_start is None and indent >= (owner or 0) + 4:  # indented code (no paragraph's line)
            code_column = (owner or 0) + 4
            block_start, block_end, block_kind = start, start + len(line), "CodeSnippet"
            continue
        fence_match = _FENCE.match(line)
        if fence_match is None and owner is not None and indent < owner + 4:
            fence_match = _LIST_FENCE.match(line)
        if fence_match:
            flush()
            before = line[: fence_match.start(1)]
            column = len(before.expandtabs(4))
            if before.strip():  # a list item opening with the fence: its text starts at the fence
                _open_item(items, indent, column)
                owner = column
            # a closing line may be indented 3 columns past the text holding the fence: a list item's or the page's
            fence = (fence_match.group(1), (owner or 0) + 3, owner or 0)
            block_start, block_end, block_kind = start, end, "CodeSnippet"
            continue
        if (marks := _QUOTE_MARKS.match(line)) and (opening := _FENCE.match(line[marks.end():])):
            flush()
            quoted = (opening.group(1), marks.group().count(">"))
            block_start, block_end, block_kind = start, end, "CodeSnippet"
            continue
        raw = _RAW_BLOCK.match(line) or _TEMPLATE_CODE.match(line)
        if raw and not (raw.re is _TEMPLATE_CODE and raw.group(2) and _SELF_CLOSED.search(line, raw.end())):
            flush()
            block_start, block_end = start, start + len(line)
            block_kind = "NarrativeText" if raw.group(1) == "!--" else "CodeSnippet"
            closing = _block_end(raw)
            if closing.search(line, raw.end()):
                flush()
            else:
                raw_end = closing
            continue
        heading = _HEADING.fullmatch(line) or _HTML_HEADING.match(line)
        if heading and not (_atx_text(heading.group(2)) if heading.re is _HEADING else heading_text(heading.group(2))):
            heading = None  # a "#" alone, a logo in an <h1>: no heading
        if heading:
            flush()
            atx = heading.re is _HEADING
            open_section(len(heading.group(1)) if atx else int(heading.group(1)),
                         _atx_text(heading.group(2)) if atx else heading.group(2))
            elements.append(Element(start, start + len(line), "Title", heading_path=path()))
            continue
        underline = _SETEXT.match(line)
        # a paragraph's underline; not a quote's, nor indented code's (4 columns or more)
        if underline and block_start is not None and block_kind == "NarrativeText" \
                and _columns(first_line) < 4 and not first_line.lstrip().startswith(">"):
            open_section(1 if underline.group(1)[0] == "=" else 2, text[block_start:block_end])
            elements.append(Element(block_start, block_end, "Title", heading_path=path()))
            rules.append((start, start + len(line)))
            block_start = None
            continue
        if block_start is not None and block_kind == "NarrativeText" and gfm_header(last_line[1], line):
            if last_line[0] > block_start:  # a table interrupts the paragraph: its last line is the header
                block_end = last_line[0] - 1
                flush()
            block_start, block_end, block_kind = last_line[0], start + len(line), "Table"
            continue
        if _THEMATIC_BREAK.fullmatch(line):
            flush()
            rules.append((start, start + len(line)))
            continue
        if blank:
            flush()
            continue
        if marker:
            _open_item(items, indent, len(marker.group(0).expandtabs(4)))
        elif line.lstrip(" \t")[:1] in "!?=" and _mkdocs_marker(line):  # its content is indented 4 columns past it
            _open_item(items, indent, indent + 4)
        elif definition := _DEFINITION.match(line):
            _open_item(items, indent, len(definition.group(0).expandtabs(4)))
        kind = "Table" if line.lstrip().startswith("|") or (
            block_start is not None and block_kind == "Table" and "|" in line and not marker) \
            else "ListItem" if marker else "NarrativeText"
        if block_start is not None and kind != block_kind and not (block_kind == "ListItem" and kind == "NarrativeText"):
            flush()
        if block_start is None:
            block_start, block_kind, first_line = start, kind, line
        last_line = (start, line)
        block_end = start + len(line)
    flush()
    return tuple(elements), tuple(rules)


# A docs site's markup line, which its renderer turns into a label or nothing: a container fence
# (Docusaurus and VitePress ":::note Title", ":::tip[Title]", Pandoc's "::: {.class}", MyST's
# ":::{note}", each closing ":::"), an MkDocs admonition or tab ('!!! warning "Title"', '??? note',
# '=== "Python"', nested by four spaces), a GitHub alert ("> [!NOTE]"), a line of HTML or JSX tags
# alone ("<Tabs>", '<TabItem value="py" label="Python">'; not an HTML table's rows and cells, whose
# lines keep its shape), Hugo shortcodes alone ("{{< note >}}") or Liquid and Jinja tags alone
# ("{% if site.beta %}"). Only an MkDocs marker may be indented four columns or more: deeper, a
# line is indented code.
_CONTAINER = re.compile(r" {0,3}:{3,}[ \t]*(?:\{([A-Za-z][\w-]*)\}|([A-Za-z][\w-]*))?(.*)")
_MKDOCS = re.compile(r"(?: {4})*(?:(?:!!!|\?\?\?\+?)[ \t]+([a-z][\w-]*)(?:[ \t]+(?:inline|end))*"
                     r"(?:[ \t]+\"([^\"\n]*)\")?|===\+?[ \t]+\"([^\"\n]*)\")[ \t]*")
_ALERT = re.compile(r"( {0,3}>[ \t]*)\[!(NOTE|TIP|IMPORTANT|WARNING|CAUTION)\][ \t]*", re.I)
# Each tag is matched once, atomically, to its first possible end: no backtracking over a long line.
_TAGS_ALONE = re.compile(r" {0,3}(?:(?>(?:</?[A-Za-z][\w.:-]*(?:[ \t][^<>\n]*)?/?>"
                         r"|\{\{[<%][ \t]*+/?[ \t]*+[\w./-]++(?:[^>%\n]|[>%](?!\}\}))*+[>%]\}\}"
                         r"|\{%-?[ \t]*+[\w-]++(?:[^%\n]|%(?!\}))*+%\})[ \t]*))+")
_TAG_NAME = re.compile(r"</?([A-Za-z][\w.:-]*)")
_TABLE_TAGS = frozenset("table thead tbody tfoot tr th td caption colgroup col".split())
_SHOWN_ATTRIBUTE = re.compile(r"(?<![\w-])(?:label|title|caption|alt|content)=\{?(?:\"([^\"\n]*)\"|'([^'\n]*)')"
                              r"|(?<![\w-])label:[ \t]*(?:\"([^\"\n]*)\"|'([^'\n]*)')")  # values={[{label: 'macOS'}]}
_MARKUP_STARTS = frozenset(":!?=<>{")  # what a markup line opens with
# A JSX tag whose attributes run over lines, as prettier writes it ("<Tabs" ... "]}>"): its first
# line, then lines of attributes (name, name="...", name={...), or of an open brace's content, up
# to the line closing it.
_TAG_OPENS = re.compile(r" {0,3}<([A-Za-z][\w.:-]*)(?:[ \t][^<>\n]*)?")
_ATTRIBUTES = re.compile(r"(?:[ \t]+[A-Za-z_:][\w.:-]*(?:=(?:\"[^\"\n]*\"|'[^'\n]*'|\{.*|[^\s>]+))?)+[ \t]*+/?>?[ \t]*"
                         r"|[ \t]*+[\]})]*+[ \t]*+/?>[ \t]*")
MAX_TAG_LINES = 30


def _shown(tag: str) -> str:
    """The text a tag's attributes show: its labels, titles, captions, alt texts and contents."""
    return " ".join(next(v for v in values if v) for values in _SHOWN_ATTRIBUTE.findall(tag) if any(v.strip() for v in values))


def _attributes(line: str) -> bool:
    """Whether ``line`` reads as a JSX tag's attributes: some with values, or a bare one alone
    (a line of bare words is prose), or the tag's closing."""
    words = line.split()
    return bool(_ATTRIBUTES.fullmatch(line)) and ("=" in line or len(words) == 1 or words[0][0] in "/>]})")


def _tag_end(lines: list[str], first: int) -> int | None:
    """The index of the line closing the JSX tag that ``lines[first]`` opens (within
    ``MAX_TAG_LINES``: each line after the first a line of attributes, or inside an open brace or
    bracket, and the last ending ">" with every brace closed), or None: no such tag."""
    depth = 0
    for k in range(first, min(len(lines), first + MAX_TAG_LINES)):
        body = lines[k].rstrip("\r\n")
        if k > first and ("<" in body or not body.strip() or depth <= 0 and not _attributes(body)):
            return None
        depth += sum(body.count(c) for c in "{[(") - sum(body.count(c) for c in "}])")
        if k > first and depth <= 0 and body.endswith(">"):
            return k
    return None


def _mkdocs_marker(line: str) -> re.Match | None:
    """An MkDocs admonition's or tab's opening line (``_MKDOCS``; Python-Markdown: a tab is 4 columns)."""
    lead = indent_width(line)
    return _MKDOCS.fullmatch(line[:lead].expandtabs(4) + line[lead:])


def _rendered_line(line: str) -> str | None:
    """What a renderer shows for a docs-site markup line (its label, title, caption, alt text or
    content, "" for none); None for a line that is no such markup."""
    if match := _CONTAINER.fullmatch(line):
        kind, rest = match.group(1) or match.group(2), match.group(3).strip()
        if rest.endswith("}") and "{" in rest:  # attributes: ":::note Title {#id}"
            rest = rest[: rest.rindex("{")].strip()
        if rest.startswith("[") and rest.endswith("]"):
            rest = rest[1:-1].strip()
        return rest or (kind.capitalize() if kind else "")
    lead = indent_width(line)
    if match := _mkdocs_marker(line):
        title = match.group(2) if match.group(3) is None else match.group(3)
        label = title if title is not None else match.group(1).capitalize()
        return line[:lead] + label if label.strip() else ""
    if match := _ALERT.fullmatch(line):
        return match.group(1) + match.group(2).capitalize()
    if _TAGS_ALONE.fullmatch(line):
        names = {name.lower() for name in _TAG_NAME.findall(line)}
        return None if names and names <= _TABLE_TAGS else _shown(line)
    return None


def line_break(line: str) -> str:
    """The line break ending ``line`` (one of ``str.splitlines``: "\n", "\r\n", a form feed, U+2028...)."""
    if line.endswith("\n"):
        return "\r\n" if line.endswith("\r\n") else "\n"
    parts = line.splitlines()
    return line[len(parts[0]) :] if parts else line


def line_body(line: str) -> str:
    """``line`` without its line break (``line_break``)."""
    return line[: len(line) - len(line_break(line))]


def indent_width(line: str) -> int:
    """How many spaces and tabs open ``line``."""
    return len(line) - len(line.lstrip(" \t"))


def without_site_markup(text: str, elements: tuple[Element, ...]) -> tuple[str, dict[int, int]]:
    """``text`` with each docs-site markup line of its prose, list and table blocks replaced by
    what a renderer shows for it (``_rendered_line``; a line that shows nothing is left out with
    its line end): code blocks, headings and a front matter keep theirs. Also, for each MkDocs
    admonition or tab marker replaced, the offset in the new text of the line after it and the
    marker's column (``markdown_blocks``' ``containers``)."""
    matter_end = _front_matter_end(text)
    out, kept_to, size = [], 0, 0
    containers: dict[int, int] = {}
    for element in elements:
        if element.category not in ("NarrativeText", "ListItem", "Table") or element.start < matter_end:
            continue
        pos = element.start
        lines = text[pos : element.end + text.startswith("\n", element.end)].split("\n")
        lines = [line + "\n" for line in lines[:-1]] + [lines[-1]] * bool(lines[-1])  # Markdown's lines end at "\n" only
        k = 0
        while k < len(lines):
            line = lines[k]
            body = line.removesuffix("\n")
            k += 1
            if body.lstrip(" \t")[:1] not in _MARKUP_STARTS:  # most lines: prose
                pos += len(line)
                continue
            shown = _rendered_line(body)
            if shown is None and (opened := _TAG_OPENS.fullmatch(body)) and opened.group(1).lower() not in _TABLE_TAGS \
                    and (last := _tag_end(lines, k - 1)) is not None:
                tag = "".join(lines[k - 1 : last + 1])
                shown = _shown(tag)
                line, body, k = tag, tag.removesuffix("\n"), last + 1
            if shown is not None:
                out += [text[kept_to:pos], shown + line[len(body):] if shown else ""]
                size += len(out[-2]) + len(out[-1])
                if _mkdocs_marker(body):
                    containers[size] = _columns(body)
                kept_to = pos + len(line)
            pos += len(line)
    return ("".join(out) + text[kept_to:], containers) if out else (text, containers)


# What docutils reads before a section title: a line opening a doctest, a bullet list, a line block, a
# field list or an option list is no title, whatever line of punctuation follows it.
_NO_TITLE = re.compile(r"(?:>>>|[-*+\u2022\u2023\u2043|]|:[^:\s][^:]*:)(?:[ \t]|$)|--?\w")
ADORNMENT = re.compile(r"([!-/:-@\[-`{-~])\1{2,}[ \t]*")  # a line of one punctuation character


def _adornment(line: str, title: str, whole: bool = False) -> str | None:
    """The character of ``line`` where it adorns ``title``: a line of one punctuation character, as
    long as the title or (not ``whole``) at least 4."""
    match = ADORNMENT.fullmatch(line)
    width = len(line.rstrip())
    return match.group(1) if match and (width >= len(title.rstrip()) or (width >= 4 and not whole)) else None


def rst_underline(title: str, under: str, whole: bool = False) -> str | None:
    """The adornment character where line ``under`` underlines line ``title`` as a section title
    (``title`` unindented text that is no adornment and opens nothing docutils reads first; ``whole``:
    ``under`` as long as it), else None."""
    if not title.strip() or title[:1] in " \t" or ADORNMENT.fullmatch(title) or _NO_TITLE.match(title):
        return None
    return _adornment(under, title, whole)


def rst_elements(text: str, code: Sequence[tuple[int, int]] = (), tables: Sequence[tuple[int, int]] = (),
                 whole: bool = False, objects: Sequence[tuple[int, int, int, str]] = ()
                 ) -> tuple[tuple[Element, ...], tuple[tuple[int, int], ...]]:
    """Blocks of a reStructuredText text: Title (a line under, or between, two adornment lines of
    one character, as long as the title or, but with ``whole``, at least 4; each adornment style a
    level, in the order the text first uses it), CodeSnippet and Table (a block starting in a
    ``code`` or ``tables`` span: sorted ``(start, end)`` spans, as ``rst_as_shown`` finds them,
    never read for titles), ListItem, NarrativeText. An API object (``objects``: sorted ``(start, end,
    content_end, name)``, as ``rst_as_shown`` finds them) is a Title too, the line at ``start`` to
    ``end``, cited by its name, one level below the title it is under and each object it is in,
    until ``content_end``. Every element carries the heading path it sits under. Also the
    ``(start, end)`` spans of the titles' adornment lines and of transitions (a line of one
    punctuation character, 4 or more, alone between blank lines), their line breaks included."""
    lines = list(_lines(text))
    code_starts, table_starts = [a for a, _ in code], [a for a, _ in tables]

    def within(spans: Sequence[tuple[int, int]], starts: list[int], pos: int) -> bool:
        k = bisect_right(starts, pos) - 1
        return k >= 0 and pos < spans[k][1]

    def in_span(pos: int) -> bool:
        return within(code, code_starts, pos) or within(tables, table_starts, pos)

    styles: list[tuple[str, bool]] = []
    stack: list[tuple[int, str]] = []
    elements: list[Element] = []
    adornments: list[tuple[int, int]] = []
    block: list[tuple[int, int, str]] = []

    def flush() -> None:
        if block:
            first = block[0][2]
            kind = "Table" if within(tables, table_starts, block[0][0]) else "CodeSnippet" if in_span(block[0][0]) \
                else "ListItem" if _LIST.match(first) else "NarrativeText"
            start = block[0][0] + len(first) - len(first.lstrip())
            elements.append(Element(start, block[-1][0] + len(block[-1][2].rstrip()), kind,
                                    heading_path=tuple(t for _, t in stack)))
            block.clear()

    object_starts = [o[0] for o in objects]
    open_objects: list[int] = []  # the content ends of the objects on the stack, innermost last
    i = 0
    while i < len(lines):
        start, _, line = lines[i]
        if open_objects and start >= open_objects[-1]:
            flush()
            while open_objects and start >= open_objects[-1]:
                open_objects.pop()
                stack.pop()
        if (o := bisect_left(object_starts, start)) < len(objects) and objects[o][0] < start + len(line):
            flush()
            _, end, content_end, name = objects[o]
            stack.append(((stack[-1][0] if stack else 0) + 1, name))
            open_objects.append(content_end)
            elements.append(Element(objects[o][0], end, "Title", heading_path=tuple(t for _, t in stack)))
            i += 1
            continue
        prose = not in_span(start)
        over = ADORNMENT.fullmatch(line) if prose else None
        title_at = None
        if not block and over and i + 2 < len(lines) and lines[i + 1][2].strip() and not ADORNMENT.fullmatch(lines[i + 1][2]) \
                and _adornment(lines[i + 2][2], lines[i + 1][2].strip(), whole) == over.group(1):
            title_at, style, skip = i + 1, (over.group(1), True), 3
        elif prose and not block and i + 1 < len(lines) and (char := rst_underline(line, lines[i + 1][2], whole)):
            title_at, style, skip = i, (char, False), 2
        if title_at is None:
            if over and not block and len(line.rstrip()) >= 4 and (i + 1 == len(lines) or not lines[i + 1][2].strip()):
                adornments.append(lines[i][:2])  # a transition: the page shows a rule, not a line of "-"
            elif line.strip():
                block.append(lines[i])
            else:
                flush()
            i += 1
            continue
        if style not in styles:
            styles.append(style)
        level = styles.index(style) + 1
        del stack[len(stack) - len(open_objects):]  # no title lies in an object's description
        open_objects.clear()
        while stack and stack[-1][0] >= level:
            stack.pop()
        title_start, _, title_line = lines[title_at]
        stack.append((level, heading_text(title_line) or "(untitled)"))
        begin = title_start + len(title_line) - len(title_line.lstrip())
        elements.append(Element(begin, title_start + len(title_line.rstrip()), "Title",
                                heading_path=tuple(t for _, t in stack)))
        adornments += [lines[k][:2] for k in range(i, i + skip) if k != title_at]
        i += skip
    flush()
    return tuple(elements), tuple(adornments)


def without_lines(text: str, elements: tuple[Element, ...],
                  cuts: tuple[tuple[int, int], ...]) -> tuple[str, tuple[Element, ...]]:
    """``text`` without the sorted ``cuts`` (lines a page shows as a title's style or a rule, not as
    a line of "=" that embeds a token a character), and ``elements``, which hold none of them,
    moved to match."""
    if not cuts:
        return text, elements
    ends = [b for _, b in cuts]
    removed = [0, *accumulate(b - a for a, b in cuts)]  # characters cut before the k-th cut's end

    def moved(pos: int) -> int:
        return pos - removed[bisect_right(ends, pos)]

    kept = "".join(text[b:a] for b, a in zip((0, *ends), (*(a for a, _ in cuts), len(text))))
    return kept, tuple(replace(e, start=moved(e.start), end=moved(e.end)) for e in elements)


def markdown_table(rows: list[list[str]], header: bool = True) -> str:
    """Rows of cells as a Markdown table: the first row, a separator, then a line a row (a cell's
    whitespace collapsed, a "|" in it written as "｜", short rows padded), so the table is cited and
    chunked row by row with its header; with ``header`` false (a table whose markup marks no header
    row) no separator, so no row is read as the header. Empty rows and columns are left out (a stray
    cell in column XFD made 16,384 columns of a sheet of two); "" when none is left."""
    kept = [cells for cells in ([" ".join(c.split()).replace("|", "｜") for c in row] for row in rows) if any(cells)]
    if not kept:
        return ""
    used = sorted({i for cells in kept for i, cell in enumerate(cells) if cell})
    kept = [[cells[i] if i < len(cells) else "" for i in used] for cells in kept]
    width = len(used)
    lines = ["| " + " | ".join(cells + [""] * (width - len(cells))) + " |" for cells in kept]
    return "\n".join([lines[0], "|" + " --- |" * width, *lines[1:]] if header else lines)


def paragraph_elements(text: str, category: str = "NarrativeText") -> tuple[Element, ...]:
    """Blank-line separated paragraphs of ``text`` as elements of one category."""
    return tuple(
        Element(m.start(), m.end(), category) for m in re.finditer(r"\S(?:.*\S)?(?:\n(?![ \t]*\n)[^\n]*\S)*", text)
    )
