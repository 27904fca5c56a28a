"""Block structure of plain-text formats (markdown, text, code, csv), with exact char spans."""

from __future__ import annotations

import re

from rag_assets.core.models import Element

_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LIST = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_INLINE = [
    (re.compile(r"<[^<>\n]*>"), ""),  # HTML tags and anchors: "Limits<a name=\"limits\"></a>"
    (re.compile(r"!?\[([^\]]*)\]\([^)]*\)"), r"\1"),  # links and images: their text
    (re.compile(r"(\*\*|__|\*|`)(?=\S)(.+?)(?<=\S)\1"), r"\2"),  # emphasis and code spans
    (re.compile(r"\\([!-/:-@\[-`{-~])"), r"\1"),  # backslash escapes: "Multi\-AZ"
]


def heading_text(raw: str) -> str:
    """A Markdown heading's text as a reader sees it: inline markup, links and escapes rendered."""
    for pattern, replacement in _INLINE:
        raw = pattern.sub(replacement, raw)
    return " ".join(raw.split())


_YAML_FRONT_MATTER = re.compile(r"---[ \t]*\n(.*?\n)?(?:---|\.\.\.)[ \t]*(?:\n|$)", re.S)
_TOML_FRONT_MATTER = re.compile(r"\+\+\+[ \t]*\n(.*?\n)?\+\+\+[ \t]*(?:\n|$)", re.S)
FRONT_MATTER_CHARS = 65_536  # a block longer than this is no front matter


def front_matter_title(text: str) -> str:
    """The ``title`` of a Markdown file's front matter (a YAML block between "---" lines, or a TOML
    one between "+++" lines, at the very start, as static-site generators and note apps write it);
    "" when there is none, it has no title, or it does not parse."""
    head = text[:FRONT_MATTER_CHARS]
    try:
        if match := _YAML_FRONT_MATTER.match(head):
            import yaml

            fields = yaml.safe_load(match.group(1) or "")
        elif match := _TOML_FRONT_MATTER.match(head):
            import tomllib

            fields = tomllib.loads(match.group(1) or "")
        else:
            return ""
    except Exception:  # not YAML or TOML after all (a horizontal rule over a paragraph): no title
        return ""
    title = fields.get("title") if isinstance(fields, dict) else None
    return heading_text(str(title))[:200] if isinstance(title, (str, int, float)) else ""


def _lines(text: str):
    pos = 0
    for line in text.splitlines(keepends=True):
        yield pos, pos + len(line), line.rstrip("\n")
        pos += len(line)


def markdown_elements(text: str) -> tuple[Element, ...]:
    """Blocks of a markdown text: Title (ATX headings outside fences), Table, CodeSnippet,
    ListItem, NarrativeText. Every element carries the heading path it sits under."""
    elements: list[Element] = []
    stack: list[tuple[int, str]] = []
    block_start: int | None = None
    block_end = 0
    block_kind = ""
    fence: str | None = None

    def path() -> tuple[str, ...]:
        return tuple(title for _, title in stack)

    def flush() -> None:
        nonlocal block_start
        if block_start is not None:
            elements.append(Element(block_start, block_end, block_kind, heading_path=path()))
            block_start = None

    for start, end, line in _lines(text):
        if fence is not None:
            block_end = end
            if line.lstrip().startswith(fence):
                fence = None
                flush()
            continue
        fence_match = _FENCE.match(line)
        if fence_match:
            flush()
            fence = fence_match.group(1)[0] * 3
            block_start, block_end, block_kind = start, end, "CodeSnippet"
            continue
        heading = _HEADING.match(line)
        if heading:
            flush()
            level = len(heading.group(1))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, heading_text(heading.group(2)) or "(untitled)"))
            elements.append(Element(start, start + len(line), "Title", heading_path=path()))
            continue
        if not line.strip():
            flush()
            continue
        kind = "Table" if line.lstrip().startswith("|") else "ListItem" if _LIST.match(line) else "NarrativeText"
        if block_start is not None and kind != block_kind and not (block_kind == "ListItem" and kind == "NarrativeText"):
            flush()
        if block_start is None:
            block_start, block_kind = start, kind
        block_end = start + len(line)
    flush()
    return tuple(elements)


def paragraph_elements(text: str, category: str = "NarrativeText") -> tuple[Element, ...]:
    """Blank-line separated paragraphs of ``text`` as elements of one category."""
    return tuple(
        Element(m.start(), m.end(), category) for m in re.finditer(r"\S(?:.*\S)?(?:\n(?![ \t]*\n)[^\n]*\S)*", text)
    )
