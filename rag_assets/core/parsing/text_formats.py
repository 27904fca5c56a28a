"""Text formats, read in process: Markdown as its rendered page shows it, reStructuredText, plain
text with underlined titles, code, CSV, subtitles as their transcript, JSON records as a table."""

from __future__ import annotations

import json
import re
from bisect import bisect_right

from rag_assets.core.models import Element
from rag_assets.core.parsing.anchors import markdown_heading_ids
from rag_assets.core.parsing.api_objects import object_kind
from rag_assets.core.parsing.chats import chat_items, whatsapp_items
from rag_assets.core.parsing.contacts import contact_items
from rag_assets.core.parsing.decode import decode_text, elide_inline_data
from rag_assets.core.parsing.html_landmarks import MIN_CONTENTS_ENTRIES
from rag_assets.core.parsing.html_tables import table_rows
from rag_assets.core.parsing.items import join_elements, sole_top_heading
from rag_assets.core.parsing.openapi import is_openapi_yaml, openapi_items
from rag_assets.core.parsing.rst import directive_reading, role_text, rst_as_shown
from rag_assets.core.parsing.structure import (closes_fence, html_heading_as_atx, indent_width, markdown_blocks,
                                               markdown_table, paragraph_elements, rst_elements, without_lines,
                                               without_site_markup)
from rag_assets.core.parsing.subtitles import subtitle_transcript


# A Markdown block that no renderer shows, left out of the text: only an HTML comment (a licence
# header, a TODO, a linter directive), an MDX comment {/* */}, a Liquid {% comment %} block, or MDX's
# ES module lines (import ... from '...'; export const x = ...;). One inside a fence is code and stays.
_COMMENT_BLOCK = re.compile(
    r"[ \t]*(?:<!--(?:(?!-->).)*-->|\{/\*(?:(?!\*/\}).)*\*/\}"
    r"|\{%-?\s*comment\s*-?%\}(?:(?!\{%-?\s*endcomment).)*\{%-?\s*endcomment\s*-?%\})[ \t]*"
    r"|(?:[ \t]*(?:import\s[^\n]*?\bfrom\s+['\"][^'\"\n]+['\"];?[ \t]*|import\s+['\"][^'\"\n]+['\"];?[ \t]*"
    r"|export\s+(?:const|let|default|function)\b[^\n]*)(?:\n|$))+", re.S)  # (an export line's tail read one way only)


def parse_text(content_type: str, data: bytes):
    """A text format's decoded text, its elements and title (a Markdown file's sole top-level
    heading, a reStructuredText file's sole top-level title; a front matter's title, which names
    a Markdown file before it, is read by ``parse_document``). Markdown is read as its rendered page
    shows it (``markdown_as_shown``), a WhatsApp chat exported as text as its turns
    (``chats.whatsapp_items``), a vCard file as its contacts (``contacts.contact_items``)."""
    text = elide_inline_data(decode_text(data)[0])
    if content_type == "subtitles":
        text = subtitle_transcript(text)
    if content_type == "json" and (read := _parse_json(text)) is not None:
        return read
    if content_type == "markdown":
        text, elements = markdown_as_shown(text)
        elements = tuple(markdown_heading_ids(text, elements))
    elif content_type == "rst":
        text, elements = rst_as_shown(text)
    elif content_type == "csv":
        elements = (Element(0, len(text.rstrip()), "Table"),) if text.strip() else ()
    elif content_type == "code":
        elements = (Element(0, len(text.rstrip()), "CodeSnippet"),) if text.strip() else ()
    elif content_type == "text" and is_openapi_yaml(text) and (api := _openapi_yaml(text)) is not None:
        return api
    elif content_type == "text" and (chat := whatsapp_items(text)) is not None:
        text, elements = join_elements(chat)
    elif content_type == "contacts" and (cards := contact_items(text)) is not None:
        text, elements = join_elements(cards)
        return text, elements, ""
    elif content_type == "text" and (titled := _underlined_titles(text)):
        text, elements = titled
    else:
        elements = paragraph_elements(text)
    return text, elements, sole_top_heading(text, elements)


def _openapi_yaml(text: str):
    """An OpenAPI or Swagger description in YAML read as its reference (``openapi.openapi_items``),
    or None where the YAML does not parse or is no such description."""
    import yaml

    try:
        read = openapi_items(yaml.safe_load(text))
    except (yaml.YAMLError, RecursionError):
        return None
    if read is None:
        return None
    joined, elements = join_elements(_whole_chars(read[0]))
    return joined, elements, read[1]


def _underlined_titles(text: str) -> tuple[str, tuple[Element, ...]] | None:
    """A plain text's blocks where it underlines (or over- and underlines) its titles with a line of
    "=", "-", "~"... as long as the title, as release notes, specs and READMEs do: read as
    reStructuredText reads titles (``rst_elements``: each style a level in the order the text first
    uses it, the adornment lines and lone rules left out of the text), but a shorter line is no
    underline (a one-line paragraph over a "-----" rule); None for a text without."""
    elements, adornments = rst_elements(text, whole=True)
    if not any(e.category == "Title" for e in elements):
        return None
    return without_lines(text, elements, adornments)


# A link reference definition ('[docs]: https://example.com "Title"'), which no renderer shows (a link
# using it shows its own text); "[^1]: ..." is a footnote, which the page shows.
_LINK_DEFINITION = re.compile(r" {0,3}\[(?!\^)(?:[^\[\]\\\n]|\\.){1,999}\]:[ \t]*(?:<[^<>\n]*>|[^\s<]\S*)"
                              r"(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*(?:\n|$)")


def markdown_as_shown(text: str) -> tuple[str, tuple[Element, ...]]:
    """Markdown text as a reader of its rendered page sees it, and its elements: MyST's directives and
    roles read as Sphinx shows them (``_myst_directives``), what no renderer
    shows (``_unshown``) and the page's own tables of contents (``_contents_lists``) left out,
    docs-site markup lines replaced by their labels (``without_site_markup``), an HTML table block
    written as a Markdown table and another HTML block as its text (``_html_blocks_as_markdown``), setext underlines and thematic
    breaks left out (``markdown_blocks``)."""
    text = _myst_directives(text)
    blocks = markdown_blocks(text)
    if cuts := sorted(_unshown(text, blocks[0]) + _contents_lists(text, blocks[0])):
        text = without_lines(text, (), tuple(cuts))[0]
        blocks = markdown_blocks(text)
    shown, containers = without_site_markup(text, blocks[0])
    if shown != text:
        text, blocks = shown, markdown_blocks(shown, containers)
    if (rendered := _html_blocks_as_markdown(text, blocks[0])) != text:
        text, blocks = rendered, markdown_blocks(rendered, containers)
    return without_lines(text, *blocks)


# MyST's directives: a fence of backticks, tildes or colons whose info string is {name}, then its argument.
_MYST_OPEN = re.compile(r"( {0,3})(`{3,}|~{3,}|:{3,})\{([A-Za-z][\w:.+-]*)\}[ \t]*([^`\n]*)")
# Directives MyST pages use (Sphinx's, sphinx-design's, MyST-NB's): only these are read as directives, so an R
# Markdown or Quarto code chunk (```{r}, ```{python}) stays code. API objects ({py:function}) are read too.
_MYST_NAMES = frozenset("""admonition attention caution danger error hint important note seealso tip todo warning
    versionadded versionchanged deprecated versionremoved dropdown tab-set tab-item tabbed grid grid-item grid-item-card
    card card-carousel button-link button-ref article-info figure image list-table csv-table table glossary topic
    sidebar margin epigraph pull-quote highlights rubric centered hlist div only include literalinclude toctree
    tableofcontents contents index raw math code-block code sourcecode code-cell eval-rst mermaid graphviz
    bibliography parsed-literal doctest testcode testoutput ipython jupyter-execute prompt productionlist""".split())
_MYST_FENCE = re.compile(r"^ {0,3}(?:`{3,}|~{3,}|:{3,})\{", re.M)
_MYST_CODE = frozenset(("code-cell", "eval-rst", "mermaid", "graphviz"))  # MyST's code besides reStructuredText's
_MYST_OPTION = re.compile(r"[ \t]*:[\w-]+:(?:[ \t].*)?")
_MYST_ROLE = re.compile(r"\{([A-Za-z][\w+.-]*(?::[\w+.-]+){0,2})\}$")  # {ref}, right before a code span: a role
_CODE_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)")  # CommonMark's: closed by a run of as many backticks
MAX_MYST_NESTING = 8  # directives in directives read; deeper ones stay as written


def _myst_directives(text: str) -> str:
    """``text`` with MyST's directives read as Sphinx shows them: a directive's options (``:key:
    value`` lines, or a YAML block between ``---`` lines) left out; one whose content shows nothing
    (``{toctree}``, ``{index}``) left out whole; one of code (``{code-block} python``, ``{math}``) a
    fenced code block in that language; another (``{note}``, ``{versionadded} 2.1``, ``{dropdown}
    Title``, ``{figure} path``) its line read as what it shows (``rst.directive_reading``: "Note",
    "Added in version 2.1", "Title", nothing), a paragraph of its own, its closing fence left out and
    its content read as the page's Markdown. A role (``{ref}`the guide <guide>```) reads as its
    text. Directives nested in directives are read down to ``MAX_MYST_NESTING``."""
    if "}`" not in text and not _MYST_FENCE.search(text):  # most pages: none, and no extra block parse
        return text
    for _ in range(MAX_MYST_NESTING):
        rewritten = _myst_pass(text)
        if rewritten == text:
            break
        text = rewritten
    return text


def _myst_pass(text: str) -> str:
    """One reading of ``_myst_directives``: the directives no other holds, and roles outside code."""
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    code = {}  # a code block's first line -> its last line
    for element in markdown_blocks(text)[0]:
        if element.category == "CodeSnippet":
            first = bisect_right(starts, element.start) - 1
            code[first] = bisect_right(starts, max(element.end - 1, element.start)) - 1
    out: list[str] = []
    k = 0
    while k < len(lines):
        line = lines[k]
        opened = _MYST_OPEN.fullmatch(line.rstrip())
        in_code = k in code
        if opened is None or (opened.group(2)[0] == ":") == in_code \
                or not (opened.group(3) in _MYST_NAMES or object_kind(opened.group(3))):  # a colon fence is prose
            last = code.get(k, k)
            out += lines[k : last + 1] if in_code else [_myst_roles(line)]
            k = last + 1
            continue
        indent, fence, name, argument = opened.groups()
        if in_code:
            end = code[k]
            closing = end if end > k and closes_fence(lines[end], fence, 3) else None
        else:
            closing = next((j for j in range(k + 1, len(lines)) if closes_fence(lines[j], fence, 3)), None)
            end = closing if closing is not None else len(lines) - 1
        body = k + 1 + _options(lines, k + 1, end if closing is None else closing)
        content = lines[body : closing if closing is not None else end + 1]
        kind, shown = directive_reading(name, argument.strip())
        if kind == "code" or name in _MYST_CODE:
            ticks = "~" if fence[0] == "~" else "`"
            while content and not content[0].strip():  # the blank line after its options
                content = content[1:]
            out += [indent + ticks * len(fence) + argument.strip().split(" ", 1)[0], *content,
                    indent + ticks * len(fence)]
        elif kind == "text":
            out += ([indent + shown.strip(), *([""] if content and content[0].strip() else [])] if shown.strip()
                    else []) + content
        k = end + 1
    return "\n".join(out)


def _myst_roles(line: str) -> str:
    """``line`` with each MyST role (``{name}`` right before a code span of one backtick:
    ``{ref}`the guide <guide>```) read as its text (``rst.role_text``); other code spans as written."""
    if "}`" not in line:
        return line
    out, pos = [], 0
    for span in _CODE_SPAN.finditer(line):
        gap = line[pos : span.start()]
        role = _MYST_ROLE.search(gap)
        out.append(gap[: role.start()] + role_text(role.group(1), span.group(2)) if role and span.group(1) == "`"
                   else gap + span.group())
        pos = span.end()
    return "".join(out) + line[pos:]


def _options(lines: list[str], first: int, end: int) -> int:
    """How many lines from ``first`` (before ``end``) are a directive's options: ``:key: value``
    lines, or a YAML block between two ``---`` lines."""
    if first < end and lines[first].strip() == "---":
        close = next((j for j in range(first + 1, end) if lines[j].strip() == "---"), None)
        if close is not None:
            return close + 1 - first
    count = 0
    while first + count < end and _MYST_OPTION.fullmatch(lines[first + count]):
        count += 1
    return count


_HTML_TABLE_BLOCK = re.compile(r" {0,3}<table\b.*</table>[ \t]*", re.I | re.S)
# A block of HTML a README writes (a centred banner, a <details> box): what it shows is its text.
_HTML_TEXT_BLOCK = re.compile(r" {0,3}<(p|div|center|details|summary|section|article|aside|figure|figcaption|blockquote|"
                              r"ul|ol|dl)(?:[\s>]).*</\1>[ \t]*", re.I | re.S)
_HTML_LINE_BREAKS = ("br", "p", "div", "li", "dt", "dd", "summary", "figcaption", "blockquote", "center", "section")


def _html_blocks_as_markdown(text: str, elements: tuple[Element, ...]) -> str:
    """``text`` with each block that is an HTML table (as READMEs embed one) written as a Markdown
    table (``html_tables.table_rows``: headed where its markup marks a header row), so it is cited
    and chunked row by row as one, each block that is other HTML (a centred banner, a <details>
    box, opening and closing with the same tag) as the text it shows, a line a block and a picture
    its alt text (``_html_block_text``), and an HTML heading as a Markdown one ("# Acme Gate"):
    their tags were read as text."""
    out, kept_to = [], 0
    for element in elements:
        block = text[element.start : element.end]
        if element.category == "Title":
            shown = html_heading_as_atx(block)
        elif element.category != "NarrativeText":
            continue
        elif _HTML_TABLE_BLOCK.fullmatch(block):
            read = table_rows(block)
            shown = markdown_table(*read) if read else None
        else:
            shown = _html_block_text(block) if _HTML_TEXT_BLOCK.fullmatch(block) else None
        if shown is not None:
            out += [text[kept_to : element.start], shown]
            kept_to = element.end
    return "".join(out) + text[kept_to:] if out else text


def _html_block_text(block: str) -> str | None:
    """The text an HTML block shows: a line a block element or line break, a picture its alt
    text; None where it holds preformatted text (kept as written), what a page shows as no text
    (a script, a style, a form), a table, or what lxml cannot read."""
    from lxml import html as lxml_html

    try:
        root = lxml_html.fragment_fromstring(block, create_parent="div")
    except Exception:  # noqa: BLE001 - markup lxml cannot read: left as written
        return None
    if any(True for _ in root.iter("pre", "script", "style", "form", "textarea", "iframe", "table")):
        return None
    for image in root.iter("img"):
        image.tail = (image.get("alt") or "") + (image.tail or "")
    for element in root.iter(*_HTML_LINE_BREAKS):
        element.tail = "\n" + (element.tail or "")
        if element.tag != "br":
            element.text = "\n" + (element.text or "")
    lines = (" ".join(line.split()) for line in root.text_content().split("\n"))
    return "\n".join(line for line in lines if line)


# A list line showing nothing but links to places on the page ("- [Install](#install)", "1. [A](#a), [B](#b)")
_CONTENTS_ENTRY = re.compile(r"[ \t]*(?:[-+*]|\d{1,9}[.)])[ \t]+(?:\[(?:[^\[\]\\\n]|\\.)*[^\W_](?:[^\[\]\\\n]|\\.)*\]"
                             r"\(#[^()\s]*\)[^\w\n\[]*)+")


def _contents_lists(text: str, elements: tuple[Element, ...]) -> list[tuple[int, int]]:
    """The spans of a Markdown page's own tables of contents, as a web page's are found
    (``html_landmarks``): a list of ``MIN_CONTENTS_ENTRIES`` items or more, nested ones counted, each
    a line showing nothing but links to places on the page, with its heading where that heads it
    alone ("## Contents", at most 40 characters; never a level 1 title). A list of fewer is text
    ("see Setup and Usage"), as is one whose items say more."""
    cuts = []
    for n, el in enumerate(elements):
        lines = text[el.start : el.end].split("\n")
        if el.category != "ListItem" or len(lines) < MIN_CONTENTS_ENTRIES \
                or not all(_CONTENTS_ENTRY.fullmatch(line) for line in lines):
            continue
        start, heading = el.start, elements[n - 1] if n else None
        after = elements[n + 1] if n + 1 < len(elements) else None
        heads_more = after is not None and (after.category != "Title" or len(after.heading_path) > len(el.heading_path))
        if heading is not None and heading.category == "Title" and len(heading.heading_path) > 1 \
                and heading.heading_path == el.heading_path and heading.end - heading.start <= 40 and not heads_more:
            start = heading.start
        cuts.append((start, el.end))
    return cuts


def _unshown(text: str, elements: tuple[Element, ...]) -> list[tuple[int, int]]:
    """The spans of ``text`` that no renderer shows, in order: blocks of comments or module lines
    alone (``_COMMENT_BLOCK``; not lines of indented code), and the link reference definitions
    that open a paragraph (one inside a paragraph is its text, as CommonMark reads it)."""
    cuts = []
    for el in elements:
        block = text[el.start : el.end]
        if _COMMENT_BLOCK.fullmatch(block) and indent_width(block.expandtabs(4)) < 4:
            cuts.append((el.start, el.end))
        elif el.category == "NarrativeText":
            pos = el.start
            while pos < el.end and (definition := _LINK_DEFINITION.match(text, pos, el.end)):
                pos = definition.end()
            if pos > el.start:
                cuts.append((el.start, min(pos, el.end)))
    return cuts


def _parse_json(text: str):
    """A JSON file (or JSON Lines, a value a line) as text to search: a chat export as its conversation
    (``chats.chat_items``: a message a turn under its day, titled by its channel), records (an array
    of objects, also under a top-level key, which heads them) as a table, a row a record under their
    keys (nested values as compact JSON; records whose keys differ much, as "key: value" lines a
    record), the rest pretty-printed, two spaces an indent, so a minified export reads line by line
    (it was one line, cut mid-field); None for text that is not JSON (a file with comments is read
    as text) or nests so deep that indenting would multiply it."""
    try:
        value = json.loads(text)
    except ValueError:
        try:
            value = [json.loads(line) for line in text.splitlines() if line.strip()]
        except (ValueError, RecursionError):
            return None
        if len(value) < 2:
            return None
    except RecursionError:
        return None
    try:
        if (read := openapi_items(value) or chat_items(value)) is not None:
            joined, elements = join_elements(_whole_chars(read[0]))
            return joined, elements, read[1]
        if _records(value):
            joined, elements = join_elements(_whole_chars(_record_items(value)))
        elif isinstance(value, dict) and any(_records(v) for v in value.values()):
            rest = {key: v for key, v in value.items() if not _records(v)}
            items = [("NarrativeText", json.dumps(rest, indent=2, ensure_ascii=False), None)] if rest else []
            for key, v in value.items():
                if _records(v):
                    items += [("Title", key, None), *_record_items(v)]
            joined, elements = join_elements(_whole_chars(items))
        else:
            joined = json.dumps(value, indent=2, ensure_ascii=False)
            if len(joined) > 4 * len(text) + 4096:  # deep nesting: each level indents every line below it
                return None
            joined = _LONE_SURROGATE.sub("\ufffd", joined)
            elements = paragraph_elements(joined)
    except RecursionError:
        return None
    return joined, elements, ""


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # a JSON escape of half a pair (an export cut mid-emoji)


def _whole_chars(items: list[tuple]) -> list[tuple]:
    """Items with each lone surrogate replaced (one character for one), before their text
    becomes the document's, its titles and heading paths (which no tokenizer or Arrow column takes)."""
    return [(category, _LONE_SURROGATE.sub("\ufffd", item), *rest) for category, item, *rest in items]


def _records(value) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) and v for v in value)


def _json_cell(value) -> str:
    return "" if value is None else value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _record_items(records: list[dict]) -> list[tuple[str, str, None]]:
    """Records as one table under the union of their keys (in the order first seen), or, where that
    union is over twice as wide as a record is on average (sparse records: mostly empty cells), as a
    paragraph of "key: value" lines a record."""
    keys = list(dict.fromkeys(key for record in records for key in record))
    if len(keys) > 2 * sum(map(len, records)) / len(records):
        return [("NarrativeText", "\n".join(f"{key}: {' '.join(_json_cell(v).split())}" for key, v in record.items()
                                            if v is not None), None) for record in records]
    return [("Table", markdown_table([keys, *([_json_cell(record.get(key)) for key in keys] for record in records)]),
             None)]
