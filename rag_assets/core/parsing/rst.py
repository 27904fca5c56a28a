"""reStructuredText read as Sphinx or docutils shows it: what the rendered page holds, with its
elements. Pure text work: no docutils, no Sphinx (a page is read alone, its includes unfollowed)."""

from __future__ import annotations

import re

from rag_assets.core.models import Element
from rag_assets.core.parsing.structure import indent_width, line_break, rst_elements

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
                    "default-role role ifconfig tab-set grid container class sectnum header footer".split())
_HIDDEN = frozenset("toctree index meta raw testsetup testcleanup".split())
_CODE = frozenset("code-block code sourcecode code-tab parsed-literal testcode testoutput doctest ipython "
                  "jupyter-execute prompt math".split())
_SHOWN_OPTIONS = ("alt", "caption", "title", "header")
# Inline markup: a role (:ref:`Install <install>`, :func:`~acme.send`), a hyperlink reference
# (`Docs <https://...>`_, `Install`_) and a substitution (|product|).
_ROLE = re.compile(r"(?<![\w`]):((?:[\w+.-]{1,40}:){0,2}[\w+.-]{1,40}):`(?>([^`\n]+))`(?!`)")
_LITERAL = re.compile(r"(``(?>[^`\n]+)``)")
_SUBSTITUTION_USE = re.compile(r"\|(?![ \t])([^|\n]*[^|\s])\|(?:__?)?")  # |name|, no space inside its bars
_PYTHON_ROLES = frozenset("class meth func attr obj exc data mod const".split())
_FOOTNOTE_REFERENCE = re.compile(r"\[(#?[\w-]*|\*)\]_(?!\w)")  # "[1]_", "[#note]_": shown as the label
_REFERENCE = re.compile(r"(?<![\w`])`(?>([^`<\n]*))(?>(<[^<>`\n]*>)?)`__?(?!\w)")


def _role_text(role: str, body: str) -> str:
    """What Sphinx shows for ``:role:`body```: a title before its <target>, a ~path's last part,
    a Python object's .path without its leading dots."""
    if role == "math":
        return body
    if body.endswith(">") and "<" in body and body.index("<") > 0:
        return body[: body.rindex("<")].rstrip()
    if body.startswith("!") and len(body) > 1:  # "!" only suppresses the link
        body = body[1:]
    if role in _PYTHON_ROLES:
        body = body.lstrip(".") or body
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
    if name in _SILENT or name in _HIDDEN or name in _CODE:
        return ""
    return indent + argument if argument else ""


def rst_as_shown(text: str) -> tuple[str, tuple[Element, ...]]:
    """``text`` as its rendered page shows it, and its elements: comments, hyperlink targets and
    substitution definitions left out (a substitution's ``replace::`` text put where it is used),
    a directive's line read as what it shows (an admonition's label, a version note, its argument:
    a rubric's or a tab's title, a function's signature; nothing for ``toctree``, ``image``,
    ``code-block`` and the like), its options left out but for an ``alt``, ``caption`` or
    ``title``, a ``toctree``'s, ``index``'s, ``meta``'s or ``raw``'s content left out, roles and
    hyperlink references read as their text. Code (a literal block after "::", a code directive's
    content, math) is kept as written and is a CodeSnippet."""
    lines = text.splitlines(keepends=True)
    substitutions = {}
    for line in lines:
        if (match := _SUBSTITUTION.fullmatch(line[: len(line) - len(line_break(line))])) and match.group(2) == "replace":
            substitutions[match.group(1)] = (match.group(3) or "").strip()
    out: list[str] = []
    code: list[tuple[int, int]] = []
    swallow: tuple[str, int] | None = None  # ("drop" | "code", the indent the block must exceed)
    options_over: int | None = None  # a directive's indent while its option lines may follow
    size = 0

    def emit(piece: str, is_code: bool = False) -> None:
        nonlocal size
        if is_code:
            code.append((size, size + len(piece)))
        out.append(piece)
        size += len(piece)

    for k, line in enumerate(lines):
        end = line_break(line)  # "\n", or a form feed, U+2028...
        body = line[: len(line) - len(end)]
        blank = not body.strip()
        if options_over is not None and not blank and indent_width(body) > options_over and (option := _OPTION.fullmatch(body)):
            value = (option.group(2) or "").strip()
            if option.group(1) in _SHOWN_OPTIONS and value and (swallow is None or swallow[0] == "code"):
                emit(" " * (options_over + 3) + value + end)
            continue
        options_over = None
        if swallow is not None and (blank or indent_width(body) > swallow[1]):
            if swallow[0] == "code" or blank:  # blank lines still part paragraphs
                emit(line, is_code=swallow[0] == "code")
            continue
        swallow = None
        if blank:
            emit(line)
            continue
        indent = indent_width(body)
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
            if shown:
                emit(shown + end)
            options_over = indent
            if name in _HIDDEN or name in _CODE:
                swallow = ("drop" if name in _HIDDEN else "code", indent)
            continue
        elif body.lstrip().startswith("..") and body.lstrip()[2:3] in ("", " ", "\t"):  # a comment
            empty = not body.lstrip()[2:].strip()
            if not (empty and (k + 1 == len(lines) or not lines[k + 1].strip())):
                swallow = ("drop", indent)  # an empty comment before a blank line ends there: a quote follows
            continue
        if body.rstrip().endswith("::"):  # a literal block follows, indented past the paragraph's text
            item = _LIST_ITEM.match(body)
            swallow = ("code", item.end() if item else indent)
            head = body.rstrip()[:-2]  # "Run it::" shows "Run it:", "Run it ::" and "::" show no colon
            body = head + ":" if head and not head[-1].isspace() else head.rstrip()
            if not body.strip():
                continue
        emit(_inline_as_shown(body, substitutions) + end)
    shown = "".join(out)
    return shown, rst_elements(shown, code)
