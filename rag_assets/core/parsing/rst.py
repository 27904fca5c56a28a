"""reStructuredText read as Sphinx or docutils shows it: what the rendered page holds, with its
elements. Pure text work: no Sphinx, and of docutils only its table parsers (a page is read alone,
its includes unfollowed)."""

from __future__ import annotations

import csv
import re
from unicodedata import east_asian_width

from rag_assets.core.models import Element
from rag_assets.core.parsing.api_objects import cut_name, object_kind, object_name
from rag_assets.core.parsing.structure import (ADORNMENT, indent_width, line_body, line_break, markdown_table,
                                              rst_elements, rst_underline, without_lines)

# Patterns are anchored at a line's start and never scan a long line more than once or twice.
_DIRECTIVE = re.compile(r"([ \t]*)\.\.[ \t]+([\w+.-]+(?::[\w+.-]+)*)::(?:[ \t](.*))?")
_SUBSTITUTION = re.compile(r"[ \t]*\.\.[ \t]+\|([^|\n]+)\|[ \t]+([\w:+.-]+)::(?:[ \t](.*))?")
_TARGET = re.compile(r"[ \t]*(?:\.\.[ \t]+_|__[ \t]+\S).*")
_FOOTNOTE = re.compile(r"[ \t]*(\.\.[ \t]+)\[(?:\d+|#[\w.:+-]*|\*|[A-Za-z0-9][\w.:+-]*)\](?:[ \t]|$)")
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+\u2022]|\d+[.)]|#\.)[ \t]+")
_OPTION = re.compile(r"[ \t]+:([\w-]+):(?:[ \t](.*))?")
_ADMONITIONS = {"attention": "Attention", "caution": "Caution", "danger": "Danger", "error": "Error", "hint": "Hint",
                "important": "Important", "note": "Note", "tip": "Tip", "warning": "Warning", "seealso": "See also",
                "todo": "Todo"}
_VERSIONS = {"versionadded": "Added in version", "versionchanged": "Changed in version",
             "deprecated": "Deprecated since version", "versionremoved": "Removed in version"}
# Directives whose line shows nothing (their content, if any, still shows), whose content shows
# nothing either, and whose content is code or math (kept as written, never rewritten).
_SILENT = frozenset("module contents highlight include literalinclude image figure only tabularcolumns currentmodule "
                    "moduleauthor sectionauthor codeauthor program "
                    "default-role role ifconfig tab-set grid container class sectnum header footer".split())
_HIDDEN = frozenset("toctree index meta raw testsetup testcleanup".split())
_CODE = frozenset("code-block code sourcecode code-tab parsed-literal testcode testoutput doctest ipython "
                  "jupyter-execute prompt math".split())
_PARSED = "parsed-literal"  # code whose inline markup (roles, references, substitutions) is read as shown
# Another directive's argument that is a relative file path ("../../Modules/FindBoost.cmake"): the page
# pulls that file in (an include of a Sphinx extension's), shown as nothing, as ``include`` is; an
# absolute one may be what the directive describes (".. describe:: /etc/acme.conf") and shows.
_PATH_ARGUMENT = re.compile(r"\.{1,2}/(?:[\w.+-]+/)*[\w.+-]+\.\w{1,10}")
_MAX_JOINED = 3  # the most lines after a role or reference's first one that may close it
_SHOWN_OPTIONS = ("alt", "caption", "title", "header")
# Tables: a grid table's top border, a simple table's (two columns or more) and any border line of one.
_GRID_TOP = re.compile(r"\+-[-+]+-\+")
_GRID_BOTTOM = re.compile(r"\+(?:[-=]+\+)+")
_SIMPLE_TOP = re.compile(r"=+(?:[ \t]+=+)+")
_SIMPLE_BORDER = re.compile(r"=+(?:[ \t]+=+)*")
_UNDERLINE = re.compile(r"-+")
_TABLE_DIRECTIVES = frozenset(("list-table", "csv-table"))
_BULLET = re.compile(r"[-*+\u2022\u2023\u2043](?:[ \t]+|$)")
_PAD = "\x00"  # docutils' double_width_pad_char
MAX_TABLE_WORK = 20_000_000  # lines x columns x width; docutils parses a table of 10 million in about 2 s
# Inline markup: a role (:ref:`Install <install>`, :func:`~acme.send`), a hyperlink reference
# (`Docs <https://...>`_, `Install`_) and a substitution (|product|).
_ROLE = re.compile(r"(?<![\w`]):((?:[\w+.-]{1,40}:){0,2}[\w+.-]{1,40}):`(?>([^`\n]+))`(?!`)")
_LITERAL = re.compile(r"(``(?>[^`\n]+)``)")
_SUBSTITUTION_USE = re.compile(r"\|(?![ \t])([^|\n]*[^|\s])\|(?:__?)?")  # |name|, no space inside its bars
_TARGET_OPEN = re.compile(r"(?<!\\)<")
_PYTHON_ROLES = frozenset("class meth func attr obj exc data mod const".split())
_INVENTORY = re.compile(r"^[A-Za-z][\w-]*:(?=[\w.])")  # an intersphinx inventory's name before a Python target
_FOOTNOTE_REFERENCE = re.compile(r"\[(#?[\w-]*|\*)\]_(?!\w)")  # "[1]_", "[#note]_": shown as the label
_REFERENCE = re.compile(r"(?<![\w`])`(?>([^`<\n]*))(?>(<[^<>`\n]*>)?)`__?(?!\w)")


def _role_text(role: str, body: str) -> str:
    """What Sphinx shows for ``:role:`body```: a title before its <target> (opened by the first "<"
    not escaped with a backslash, as Sphinx's explicit_title_re reads it), a ~path's last part,
    a Python object's .path without its leading dots and its intersphinx inventory's name
    (``py3:StopIteration`` shows "StopIteration" once intersphinx resolves it)."""
    if role == "math":
        return body
    if body.endswith(">") and (target := _TARGET_OPEN.search(body, 1)):
        return body[: target.start()].rstrip()
    if body.startswith("!") and len(body) > 1:  # "!" only suppresses the link
        body = body[1:]
    if role in _PYTHON_ROLES:  # a Python name holds no ":": "py3:" names the inventory, which a resolved link drops
        body = _INVENTORY.sub("", body, count=1).lstrip(".") or body
    return body[1:].rsplit(".", 1)[-1] if body.startswith("~") and len(body) > 1 else body


def _inline_as_shown(line: str, substitutions: dict[str, str]) -> str:
    """``line`` with its roles, references, footnote references and substitutions as shown; an
    inline literal (````text````) is kept as written."""
    if "`" not in line and "|" not in line and "]_" not in line:  # most lines: no inline markup
        return line
    parts = _LITERAL.split(line)  # odd parts are literals
    for k in range(0, len(parts), 2):
        part = _FOOTNOTE_REFERENCE.sub(r"[\1]", parts[k])
        part = _ROLE.sub(lambda m: _role_text(m.group(1).rsplit(":", 1)[-1], m.group(2)), part)
        part = _REFERENCE.sub(lambda m: m.group(1).rstrip() or (m.group(2) or "")[1:-1] if m.group(2) else m.group(1),
                              part)
        if substitutions and "|" in part:
            part = _SUBSTITUTION_USE.sub(lambda m: substitutions.get(m.group(1), m.group(0)), part)
        parts[k] = part
    return "".join(parts)


def _directive_line(indent: str, name: str, argument: str) -> str:
    """The text a directive's own line shows ("" for none)."""
    if name in _ADMONITIONS:
        label = _ADMONITIONS[name]
        return f"{indent}{label}\n{indent}   {argument}" if argument else indent + label
    if name in _VERSIONS:
        version, _, rest = argument.partition(" ")
        return f"{indent}{_VERSIONS[name]} {version}" + (f": {rest.strip()}" if rest.strip() else "")
    if name in _SILENT or name in _HIDDEN or name in _CODE or _PATH_ARGUMENT.fullmatch(argument):
        return ""
    return indent + argument if argument else ""


def directive_reading(name: str, argument: str) -> tuple[str, str]:
    """How Sphinx shows a directive ``name`` with its ``argument`` (written in reStructuredText or
    in MyST's Markdown): ("hidden", "") where its content shows nothing either (``toctree``,
    ``index``, ``raw``), ("code", "") where its content is code, else ("text", what its own line
    shows: a label, a version note, its argument, "" for nothing)."""
    if name in _HIDDEN:
        return "hidden", ""
    if name in _CODE:
        return "code", ""
    return "text", _directive_line("", name, argument)


def role_text(role: str, body: str) -> str:
    """What Sphinx shows for a role ``role`` (its domain dropped) around ``body`` (``_role_text``)."""
    return _role_text(role.rsplit(":", 1)[-1], body)


def _opens_inline(line: str) -> bool:
    """Whether ``line`` leaves a role or reference open (an odd number of backquotes outside its
    literals): its text or target goes on in the next line."""
    return "`" in line and _LITERAL.sub("", line).count("`") % 2 == 1


def _cell_rows(rows: list[list], head: int, compact: bool) -> list[list[str]]:
    """docutils' parsed rows as text rows, a spanning cell's text in every row and column it spans
    (as HTML tables are read), the ``head`` header rows merged into one. A cell is ``(morerows,
    morecols, offset, lines)``; a grid table's row holds one a column (None where a span covers
    it), a simple table's row (``compact``) only its cells, each after the columns the one before spans."""
    width = max(sum(cell[1] + 1 for cell in row) if compact else len(row) for row in rows)
    grid = [[""] * width for _ in rows]
    for r, row in enumerate(rows):
        column = 0
        for c, cell in enumerate(row):
            if cell is None:
                continue
            column = column if compact else c
            text = " ".join(" ".join(cell[3]).split())
            for covered in grid[r : r + cell[0] + 1]:
                covered[column : column + cell[1] + 1] = [text] * len(covered[column : column + cell[1] + 1])
            column += cell[1] + 1
    return _merged_header(grid, head)


def _merged_header(rows: list[list[str]], head: int) -> list[list[str]]:
    """``rows`` with their first ``head`` rows (a header of several lines) merged into one: each
    column's distinct texts joined in order."""
    if head < 2:
        return rows
    width = max(len(row) for row in rows[:head])
    columns = [[row[c] for row in rows[:head] if c < len(row) and row[c]] for c in range(width)]
    return [[" ".join(dict.fromkeys(texts)) for texts in columns], *rows[head:]]


def _laid_out(line: str) -> str:
    """A table line as docutils lays it out: tabs expanded to 8-column stops, a pad (which its
    parsers drop from cells) after each East Asian wide character, as it takes two columns."""
    line = line.expandtabs(8)
    return line if line.isascii() else "".join(c + _PAD if east_asian_width(c) in "WF" else c for c in line)


def _width(line: str) -> int:
    """How many columns ``line``'s indentation takes, a tab to the next multiple of 8 (as docutils reads it)."""
    line = line.expandtabs(8)
    return len(line) - len(line.lstrip(" "))


class _DrawnTables:
    """A page's grid and simple tables, read by docutils' parsers within bounds on the whole page:
    the scans for simple tables' ends pass at most two lines per line of the page (plus 10,000: a
    top border never closed is scanned to the page's end), and the parsers, whose time grows with a
    table's lines x columns x width, get ``MAX_TABLE_WORK`` of it. A table past either stays text."""

    def __init__(self, lines: list[str]):
        self.lines = lines
        self.scan = 2 * len(lines) + 10_000
        self.work = MAX_TABLE_WORK

    def at(self, first: int) -> tuple[list[list[str]], bool, int] | None:
        """The table whose top border is line ``first``: its rows as docutils reads them, whether
        it has a header row, and the index of the line after it; None where the lines are no
        well-formed table (docutils reports an error, and the page shows them as text). A simple
        table ends, as docutils ends it, at its second rule after the top border or at a rule
        before a blank line."""
        # docutils' parser package takes ~170 ms to import: only a page with a table pays it.
        from docutils.parsers.rst.tableparser import GridTableParser, SimpleTableParser, TableMarkupError
        from docutils.statemachine import StringList

        lines = self.lines
        top = _laid_out(line_body(lines[first])).strip()
        indent = _width(line_body(lines[first]))
        block = []
        end = first
        if _GRID_TOP.fullmatch(top):
            while end < len(lines) and (body := _laid_out(line_body(lines[end]))).strip() and not body[:indent].strip() \
                    and body[indent:indent + 1] in ("+", "|"):
                block.append(body[indent:].rstrip())
                end += 1
            self.scan -= end - first
            if len(block) < 3 or not _GRID_BOTTOM.fullmatch(block[-1]) or any(len(b) != len(top) for b in block):
                return None
            parser, columns = GridTableParser(), top.count("+") - 1
        else:
            rules, closed = 0, False
            for end in range(first + 1, min(len(lines), first + 1 + max(self.scan, 0))):
                body = _laid_out(line_body(lines[end]))
                if body.strip() and body[:indent].strip():  # a line left of the table
                    break
                if _SIMPLE_BORDER.fullmatch(body[indent:].rstrip()):
                    rules += 1
                    if len(body.strip()) != len(top):  # a rule of another width: malformed
                        break
                    if rules == 2 or end + 1 == len(lines) or not lines[end + 1].strip():
                        closed = True
                        break
            self.scan -= end - first
            if not closed:
                return None
            block = [_laid_out(line_body(line))[indent:].rstrip() for line in lines[first : end + 1]]
            end += 1
            parser, columns = SimpleTableParser(), len(top.split())
        work = len(block) * columns * len(top)
        if work > self.work:
            return None
        self.work -= work
        try:
            _, head, body = parser.parse(StringList(block))
        except (TableMarkupError, AssertionError, IndexError):  # docutils asserts that every cell is used once,
            return None  # and a line with combining characters ends before its border where the parser looks
        simple = isinstance(parser, SimpleTableParser)
        # a simple table's first row underlined column by column ("----  ----", no span) is its header as
        # its author drew it, though docutils reads a header only above a "=" rule (pyparsing's docs)
        n_head = len(head) or int(simple and len(body) > 1 and len(block) > 2
                                  and len(_UNDERLINE.findall(block[2])) == columns and not block[2].strip("- \t"))
        return _cell_rows(head + body, n_head, simple), bool(n_head), end


def _under_title(lines: list[str], k: int) -> bool:
    """Whether line ``k - 1`` is a section title's underline (``rst_underline``, under a line that
    starts a block), so a table may start right under it."""
    return k >= 2 and rst_underline(line_body(lines[k - 2]), line_body(lines[k - 1])) is not None \
        and (k == 2 or not lines[k - 3].strip() or bool(ADORNMENT.fullmatch(line_body(lines[k - 3]))))


def _directive_table(name: str, lines: list[str], first: int) -> tuple[list[list[str]], bool, int] | None:
    """The rows of the ``list-table`` or ``csv-table`` directive at ``lines[first]`` (its ``header``
    and ``header-rows`` options applied), whether it has a header row, and the index of the line
    after its content; None where its content is no table (a list that is no two-level list, CSV
    that does not parse, a table read from a file)."""
    end = first + 1
    indent = _width(line_body(lines[first]))
    for k in range(first + 1, len(lines)):
        if lines[k].strip():
            if _width(line_body(lines[k])) <= indent:
                break
            end = k + 1
    options: dict[str, str] = {}
    content = first + 1
    while content < end and (option := _OPTION.fullmatch(line_body(lines[content]))):
        options[option.group(1)] = (option.group(2) or "").strip()
        content += 1
    content = [line_body(line) for line in lines[content:end]]
    if name == "list-table":
        rows = _list_rows(content)
    else:
        delimiter = {"tab": "\t", "space": " "}.get(options.get("delim", ","), options.get("delim", ","))
        dialect = {"delimiter": delimiter, "quotechar": options.get("quote", '"') or '"', "strict": True,
                   "escapechar": options.get("escape") or None, "skipinitialspace": "keepspace" not in options}
        try:
            rows = [row for row in csv.reader([line.strip() + "\n" for line in content], **dialect) if row]
            if header := options.get("header"):
                rows = [next(csv.reader([header], **dialect)), *rows]
        except (csv.Error, TypeError, StopIteration):  # TypeError: a delimiter or quote of two characters
            return None
    if not rows:
        return None
    try:
        head = int(options.get("header-rows") or 0) + ("header" in options)
    except ValueError:
        head = 0
    return _merged_header(rows, head), head > 0, end


def _list_rows(content: list[str]) -> list[list[str]] | None:
    """A list table's rows: each item of its outer bullet list a row, each item of the row's inner
    list a cell (its lines joined)."""
    rows: list[list[list[str]]] = []
    base = cell_indent = None
    for line in content:
        if not line.strip():
            continue
        line = line.expandtabs(8)  # columns, as docutils counts them
        indent, text = len(line) - len(line.lstrip()), line.strip()
        base = indent if base is None else base
        if indent == base:
            if not (row := _BULLET.match(text)):
                return None
            rows.append([])
            rest = text[row.end():]
            cell_indent = None
            if rest:
                if not (cell := _BULLET.match(rest)):
                    return None
                cell_indent = indent + row.end()
                rows[-1].append([rest[cell.end():]])
        elif indent < base:
            return None
        elif (cell := _BULLET.match(text)) and cell_indent in (None, indent):
            cell_indent = indent
            rows[-1].append([text[cell.end():]])
        elif rows[-1]:
            rows[-1][-1].append(text)
        else:
            return None
    return [[" ".join(" ".join(cell).split()) for cell in row] for row in rows]


def rst_as_shown(text: str) -> tuple[str, tuple[Element, ...]]:
    """``text`` as its rendered page shows it, and its elements: comments, hyperlink targets and
    substitution definitions left out (a substitution's ``replace::`` text put where it is used),
    a directive's line read as what it shows (an admonition's label, a version note, its argument:
    a rubric's or a tab's title, a function's signature; nothing for ``toctree``, ``image``,
    ``code-block`` and the like), its options left out but for an ``alt``, ``caption`` or
    ``title``, a ``toctree``'s, ``index``'s, ``meta``'s or ``raw``'s content left out, roles and
    hyperlink references read as their text. Code (a literal block after "::", a code directive's
    content, math) is kept as written and is a CodeSnippet. A table (grid, simple, ``list-table``,
    ``csv-table``) is a Markdown table, a Table: a row a line under its header row, if it has one."""
    lines = text.splitlines(keepends=True)
    substitutions = {}
    for line in lines:
        if (match := _SUBSTITUTION.fullmatch(line_body(line))) and match.group(2) == "replace":
            substitutions[match.group(1)] = (match.group(3) or "").strip()
    out: list[str] = []
    code: list[tuple[int, int]] = []
    tables: list[tuple[int, int]] = []
    skip_to = 0  # the line after a table read whole
    drawn_tables = _DrawnTables(lines)
    swallow: tuple[str, int] | None = None  # ("drop" | "code" | _PARSED, the indent the block must exceed)
    options_over: int | None = None  # a directive's indent while its option lines may follow
    objects: list[list] = []  # API objects: [start, end, content end, name] (rst_elements' objects)
    described: list[tuple[int, int]] = []  # the objects whose description goes on: (indent, index)
    glossary: list | None = None  # an open glossary: [its indent, its terms' indent, whether a term line came last]
    size = 0

    def emit(piece: str, is_code: bool = False) -> None:
        nonlocal size
        if is_code:
            code.append((size, size + len(piece)))
        out.append(piece)
        size += len(piece)

    def shown_table(rows: list[list[str]], headed: bool) -> str:
        """The rows as a Markdown table, headed by the first where the table has a header row (one
        holding text: a blank header row is none)."""
        shown = [[_inline_as_shown(cell, substitutions) for cell in row] for row in rows]
        return markdown_table(shown, header=headed and any(cell.strip() for cell in shown[0]))

    def emit_table(table: str, indent: str, end: str, after: int) -> None:
        """Emit a Markdown ``table``, a line a row, a blank line before and after it where the page
        has none (the line shown before it, or line ``after``, is text)."""
        if out and out[-1].strip():
            emit(end or "\n")
        piece = "".join(indent + row + (end or "\n") for row in table.split("\n"))
        tables.append((size, size + len(piece)))
        emit(piece + ("\n" if after < len(lines) and lines[after].strip() else ""))

    for k, line in enumerate(lines):
        if k < skip_to:
            continue
        end = line_break(line)  # "\n", or a form feed, U+2028...
        body = line[: len(line) - len(end)]
        blank = not body.strip()
        synonym = glossary is not None and glossary[2] and not blank and indent_width(body) == glossary[1]
        while described and not blank and not synonym and indent_width(body) <= described[-1][0]:  # it ends
            objects[described.pop()[1]][2] = size
        if glossary is not None and blank:
            glossary[2] = False  # a blank line ends a term's synonyms
        elif glossary is not None and indent_width(body) <= glossary[0]:
            glossary = None  # and a line as far left as the directive the glossary
        if options_over is not None and not blank and indent_width(body) > options_over and (option := _OPTION.fullmatch(body)):
            value = (option.group(2) or "").strip()
            if option.group(1) in _SHOWN_OPTIONS and value and (swallow is None or swallow[0] == "code"):
                emit(" " * (options_over + 3) + value + end)
            continue
        options_over = None
        if swallow is not None and (blank or indent_width(body) > swallow[1]):
            if swallow[0] == _PARSED and not blank:
                emit(_inline_as_shown(body, substitutions) + end, is_code=True)
            elif swallow[0] != "drop" or blank:  # blank lines still part paragraphs
                emit(line, is_code=swallow[0] != "drop")
            continue
        swallow = None
        if blank:
            emit(line)
            continue
        marker = ""  # a list item's bullet or number when a directive opens the item ("* .. versionadded:: 3.6")
        if (item := _LIST_ITEM.match(body)) and body.startswith("..", item.end()) and "\t" not in item.group() \
                and _DIRECTIVE.fullmatch(body, item.end()):
            marker, body = item.group(), " " * item.end() + body[item.end():]
        indent = indent_width(body)
        if body[indent:indent + 1] in ("+", "=") and (_GRID_TOP.fullmatch(body.strip()) or _SIMPLE_TOP.fullmatch(body.strip())) \
                and (k == 0 or not lines[k - 1].strip() or _under_title(lines, k)) \
                and (drawn := drawn_tables.at(k)):
            if table := shown_table(*drawn[:2]):  # a table of empty cells shows nothing
                emit_table(table, body[:indent], end, drawn[2])
            skip_to = drawn[2]
            continue
        if not body.startswith(("..", "__"), indent):  # most lines: no directive, target or comment
            pass
        elif footnote := _FOOTNOTE.match(body):  # shown as its label and text: "[1] A footnote."
            emit(body[: footnote.start(1)] + _inline_as_shown(body[footnote.end(1):], substitutions) + end)
            continue
        elif _SUBSTITUTION.fullmatch(body) or _TARGET.fullmatch(body):
            swallow = ("drop", indent)
            continue
        elif directive := _DIRECTIVE.fullmatch(body):
            name = directive.group(2)
            argument = _inline_as_shown((directive.group(3) or "").strip(), substitutions)
            shown = _directive_line(directive.group(1), name, argument)
            if name in _TABLE_DIRECTIVES and (read := _directive_table(name, lines, k)) \
                    and (table := shown_table(*read[:2])):
                if shown:  # the table's title, a paragraph of its own
                    emit(marker + shown[len(marker):] + end)
                emit_table(table, directive.group(1), end, read[2])
                skip_to = read[2]
                continue
            if (kind := object_kind(name)) and argument and not marker \
                    and (name != "class" or _has_content(lines, k, indent)):  # docutils' class:: classes what follows
                shown = directive.group(1) + argument
                objects.append([size + len(directive.group(1)), size + len(shown), None,
                                object_name(*kind, argument)])
                described.append((indent, len(objects) - 1))
            if shown:
                emit(marker + shown[len(marker):] + end)
            if name == "glossary":
                glossary = [indent, None, False]
            options_over = indent
            if name in _HIDDEN or name in _CODE:
                swallow = ("drop" if name in _HIDDEN else _PARSED if name == _PARSED else "code", indent)
            continue
        elif body.lstrip().startswith("..") and body.lstrip()[2:3] in ("", " ", "\t"):  # a comment
            empty = not body.lstrip()[2:].strip()
            if not (empty and (k + 1 == len(lines) or not lines[k + 1].strip())):
                swallow = ("drop", indent)  # an empty comment before a blank line ends there: a quote follows
            continue
        if _opens_inline(body):  # a role or reference that the paragraph's next lines close is read whole
            joined = body
            for j in range(k + 1, min(k + 1 + _MAX_JOINED, len(lines))):
                if not lines[j].strip():
                    break
                joined += " " + line_body(lines[j]).strip()
                if not _opens_inline(joined):
                    body, end, skip_to = joined, line_break(lines[j]), j + 1
                    break
        if body.rstrip().endswith("::"):  # a literal block follows, indented past the paragraph's text
            item = _LIST_ITEM.match(body)
            swallow = ("code", item.end() if item else indent)
            head = body.rstrip()[:-2]  # "Run it::" shows "Run it:", "Run it ::" and "::" show no colon
            body = head + ":" if head and not head[-1].isspace() else head.rstrip()
            if not body.strip():
                continue
        shown_line = _inline_as_shown(body, substitutions)
        if glossary is not None:  # a term: a line at the indent of the glossary's first; synonyms follow it
            glossary[1] = indent if glossary[1] is None else glossary[1]
            if indent == glossary[1] and not glossary[2] and shown_line.strip():
                term = shown_line.strip()
                objects.append([size + indent_width(shown_line), size + len(shown_line.rstrip()), None, cut_name(term)])
                described.append((indent, len(objects) - 1))
            glossary[2] = indent == glossary[1]
        emit(shown_line + end)
    for _, index in described:
        objects[index][2] = size
    shown = "".join(out)
    return without_lines(shown, *rst_elements(shown, code, tables, objects=[tuple(o) for o in objects]))


def _has_content(lines: list[str], k: int, indent: int) -> bool:
    """Whether the directive at ``lines[k]`` has content: its first line after the options is indented
    past the directive's ``indent``."""
    for line in lines[k + 1:]:
        if line.strip() and not _OPTION.fullmatch(line_body(line)):
            return indent_width(line_body(line)) > indent
    return False
