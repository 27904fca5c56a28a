"""Code chunked by its syntax: a chunk is a function, a class, or a method carrying its class's
first lines as context. Python is read with ``ast``; C, C++, C#, Go, Java, JavaScript, TypeScript,
Rust, Ruby, PHP, shell, PowerShell, Kotlin, Swift, Scala, Lua, Elixir, SQL, Perl, Haskell, Zig, Dart,
Julia, OCaml and Terraform (HCL) with their tree-sitter grammars (each a package of its own, nothing downloaded); other
languages by their top-level definition lines."""

from __future__ import annotations

import ast
import importlib
import posixpath
import re
from bisect import bisect_left
from functools import lru_cache
from itertools import groupby
from typing import Callable, Sequence

from rag_assets.core.chunking.base import Chunker
from rag_assets.core.chunking.engine import Span, TokenIndex
from rag_assets.core.chunking.packing import Item, finalize_items, merge_small, pack_units
from rag_assets.core.models import Element

#: language -> (grammar module, its function returning the language)
GRAMMARS = {
    "bash": ("tree_sitter_bash", "language"),
    "c": ("tree_sitter_c", "language"),
    "c_sharp": ("tree_sitter_c_sharp", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "dart": ("tree_sitter_dart", "language"),
    "elixir": ("tree_sitter_elixir", "language"),
    "go": ("tree_sitter_go", "language"),
    "haskell": ("tree_sitter_haskell", "language"),
    "julia": ("tree_sitter_julia", "language"),
    "hcl": ("tree_sitter_hcl", "language"),  # Terraform
    "java": ("tree_sitter_java", "language"),
    "javascript": ("tree_sitter_javascript", "language"),  # JSX too
    "kotlin": ("tree_sitter_kotlin", "language"),
    "lua": ("tree_sitter_lua", "language"),
    "ocaml": ("tree_sitter_ocaml", "language_ocaml"),
    "ocaml_interface": ("tree_sitter_ocaml", "language_ocaml_interface"),
    "perl": ("tree_sitter_perl", "language"),
    "php": ("tree_sitter_php", "language_php"),
    "powershell": ("tree_sitter_powershell", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "scala": ("tree_sitter_scala", "language"),
    "sql": ("tree_sitter_sql", "language"),
    "swift": ("tree_sitter_swift", "language"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "zig": ("tree_sitter_zig", "language"),
}
#: file extension -> language (``python``: read with ``ast``)
LANGUAGES = {
    ".py": "python", ".c": "c", ".h": "cpp",  # a header may be C or C++: C++'s grammar reads both
    **dict.fromkeys((".cc", ".cpp", ".cxx", ".hpp"), "cpp"), ".cs": "c_sharp", ".go": "go", ".java": "java",
    **dict.fromkeys((".js", ".mjs", ".cjs", ".jsx"), "javascript"), ".ts": "typescript", ".tsx": "tsx",
    ".kt": "kotlin", ".kts": "kotlin", ".lua": "lua", ".php": "php", ".rb": "ruby", ".rs": "rust",
    ".scala": "scala", ".swift": "swift", **dict.fromkeys((".sh", ".bash", ".zsh"), "bash"), ".ps1": "powershell",
    ".sql": "sql", ".ex": "elixir", ".exs": "elixir", ".pl": "perl", ".pm": "perl", ".hs": "haskell", ".zig": "zig",
    ".dart": "dart", ".jl": "julia", ".ml": "ocaml", ".mli": "ocaml_interface",
    **dict.fromkeys((".tf", ".tfvars", ".hcl"), "hcl"),
}

# Top-level definition lines of a language without a grammar here (Groovy).
_DEF_LINE = re.compile(
    r"^(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:def|class|function|func|fn|interface|struct|impl|enum|trait|module|"
    r"(?:public|private|protected|static|final|abstract)\b[^\n]*\()",
    re.M,
)
#: a node that belongs to the definition below it: a comment, a Rust attribute (#[derive(...)]), Haskell's
#: documentation (-- |) and type signature (add :: Int -> Int), Perl's POD
_LEADING = re.compile(r"comment|^(?:attribute_item|haddock|signature|pod)$")
#: a node holding a definition's members or statements, where the grammar names no ``body`` field
_BODY = re.compile(r"body|block|declaration_list|compound_statement")
#: a node naming its definition, where the grammar names no ``name`` field (PowerShell's, SQL's, OCaml's a
#: let binding's, a module's and a signature's value, Julia's a struct's type head)
_NAMING = ("function_name", "object_reference", "value_name", "module_name", "type_head")
#: a node whose children are read as its container's: a C preprocessor conditional (an include guard),
#: PowerShell's list of a script's statements, Haskell's of a module's declarations
_TRANSPARENT = re.compile(r"^(?:preproc_(?:if|ifdef|else|elif|elifdef)|statement_list|declarations)$")
#: a node defining a function or method (not calling one), which the chunk holding it cites when it is on one line
_ONE_LINE_DEFINITION = re.compile(r"^(?!.*(?:call|invocation))(?:.*_)?(?:function|method|subroutine)(?:_.*)?$")
#: a node holding a function as its value (JavaScript's arrow functions and function expressions, a lambda)
_FUNCTION_VALUE = re.compile(r"^(?:arrow_function|function_expression|function|lambda(?:_expression)?)$")
#: a value that an assignment or a property defines under its name (a function, a class, an object of them)
_HELD_DEFINITION = re.compile(r"^(?:arrow_function|function_expression|function|class|object)$")
#: a node declaring what its children define (an export, a const or variable declaration, an assignment)
_DECLARING = re.compile(r"^(?:export_statement|lexical_declaration|variable_declaration|expression_statement)$")
#: a node holding declarations, not statements (a class body: an unnamed one's members are its container's)
_DECLARATIONS = re.compile(r"^(?:class_body|declaration_list|field_declaration_list)$")
#: the calls that open a group of tests or a test, in JavaScript's test frameworks (Jest, Mocha, Vitest...),
#: Ruby's (RSpec, Minitest's specs) and Elixir's (ExUnit)
_TEST_CALLS = {**dict.fromkeys((b"describe", b"context", b"suite", b"fdescribe", b"xdescribe"), "group"),
               **dict.fromkeys((b"it", b"test", b"specify", b"fit", b"xit"), "case")}
#: the methods of a web framework's router that define a route (``app.get("/users", ...)``, Sinatra's ``get '/'``)
_ROUTE_VERBS = frozenset((b"get", b"post", b"put", b"patch", b"delete", b"head", b"options", b"all"))
MAX_DEPTH = 8  # how many levels a definition over the limit is read into (#ifdef, namespaces, class, method, block)


def code_language(doc_id: str) -> str:
    """The language ``doc_id``'s extension names (``LANGUAGES``), "" where none is known."""
    return LANGUAGES.get(posixpath.splitext(doc_id.lower())[1], "")


def read_as(doc_id: str) -> str:
    """How the code strategy reads ``doc_id``, as the CLI and the chunks materialisation say it: its
    language (``code_language``), or "definition lines" where no grammar reads it."""
    return code_language(doc_id) or "definition lines"


@lru_cache(maxsize=None)
def _grammar(language: str):
    from tree_sitter import Language

    module, function = GRAMMARS[language]
    return Language(getattr(importlib.import_module(module), function)())


class CodeChunker(Chunker):
    """Code by function and class. Python through ``ast`` (decorators and leading comments stay
    with their definition, methods of a big class carry the class as path and context); a
    ``language`` with a grammar (``GRAMMARS``) through tree-sitter the same way, a definition over
    the limit read into its members (a namespace's classes, a class's methods, a function's
    statements), each carrying the lines that open it as context, statements packed together; other
    languages by top-level definition lines. Comments directly above a definition stay with it;
    imports join the next definition when it fits. A context over half the limit is not repeated."""

    name = "code"
    profile_options = {"min_tokens": "min_tokens"}
    reads_language = True

    def __init__(self, max_tokens, overlap=0, token_counter=None, min_tokens: int = 0, language: str = ""):
        """``language``: the document's (``code_language``); "" reads it as Python where it parses."""
        super().__init__(max_tokens, overlap, token_counter, min_tokens)
        self.language = language

    def chunk(self, text: str, elements: Sequence[Element] = ()) -> list[Span]:
        if not text or text.isspace():
            return []
        index = TokenIndex(text, self.counter, chars=True)
        counter = self.counter

        @lru_cache(maxsize=None)  # a class's lines are the context of each of its members
        def context_tokens(context: str) -> int:
            """What ``context`` adds to a chunk's tokens (the model's special tokens are the text's)."""
            return counter.count(context) - counter.special_tokens if context else 0

        units, named = None, []
        if self.language in GRAMMARS:
            from tree_sitter import Parser

            root = Parser(_grammar(self.language)).parse(text.encode("utf-8", "surrogatepass")).root_node
            walked = _Units(index, self.budget, self.min_tokens, context_tokens)
            units, named = walked.of(root), walked.named
        elif self.language in ("", "python"):
            try:
                units, named = self._python_units(index, ast.parse(text))
            except (SyntaxError, ValueError, RecursionError, MemoryError):  # not Python, or nested past the parser
                pass
        units = _with_preamble(index, units or self._generic_units(text), self.budget)
        # Read by a grammar, the units of one place in the tree (a function's statements, the lines
        # between two definitions) are packed together; otherwise each unit is a piece of its own.
        groups = [list(g) for _, g in groupby(units, key=lambda unit: unit[2])] if self.language in GRAMMARS \
            else [[unit] for unit in units]
        items: list[Item] = []
        for group in groups:
            meta = group[0][2]
            ctx_tokens = context_tokens(meta.get("context", ""))
            # A class line over half the limit would crowd out the method; a method that fits the limit
            # alone but not after its class's lines is embedded whole, without them.
            if ctx_tokens > self.budget // 2 or (len(group) == 1 and ctx_tokens
                                                 and self.budget - ctx_tokens < index.count(group[0][0], group[0][1])
                                                 <= self.budget):
                meta, ctx_tokens = {k: v for k, v in meta.items() if k != "context"}, 0
            room = self.budget - ctx_tokens
            items.extend(Item(x, y, dict(meta), self.max_tokens - (self.budget - room))
                         for x, y in pack_units(index, [(a, b) for a, b, _ in group], room))
        items = merge_small(index, items, self.min_tokens, self.budget)
        return _with_sections(text, finalize_items(index, items, self.max_tokens), named)

    def _python_units(self, index: TokenIndex, tree: ast.Module):
        """(units, named): the module's units, and the span and path of each function and class in it,
        those a class holds (its methods, its nested classes') included."""
        text = index.text
        line_starts = [0] + [m.end() for m in re.finditer(r"\n", text)]

        def offset(lineno: int) -> int:
            return line_starts[lineno - 1] if lineno - 1 < len(line_starts) else len(text)

        def node_start(node) -> int:
            line = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            while line > 1 and text[offset(line - 1) : offset(line)].lstrip().startswith("#"):
                line -= 1  # comments directly above belong to the definition
            return offset(line)

        def node_end(node) -> int:
            return offset(node.end_lineno + 1)

        units: list[tuple[int, int, dict]] = []
        pos = 0
        for node in tree.body:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            start, end = node_start(node), node_end(node)
            if start > pos:
                units.append((pos, start, {"heading_path": ()}))
            if isinstance(node, ast.ClassDef) and index.count(start, end) > self.budget:
                methods = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
                signature = text[offset(node.lineno) : offset(node.lineno + 1)].rstrip() + "\n"
                inner = start
                for method in methods:
                    m_start, m_end = node_start(method), node_end(method)
                    if m_start > inner:
                        units.append((inner, m_start, {"heading_path": (node.name,)}))
                    units.append((m_start, m_end, {"heading_path": (node.name, method.name), "context": signature}))
                    inner = m_end
                if inner < end:
                    units.append((inner, end, {"heading_path": (node.name,)}))
            else:
                units.append((start, end, {"heading_path": (node.name,)}))
            pos = end
        if pos < len(text):
            units.append((pos, len(text), {"heading_path": ()}))

        named: list[tuple[int, int, tuple[str, ...]]] = []
        definitions = [(node, ()) for node in tree.body]
        while definitions:  # a function's own inner functions are not listed; a class's members are
            node, path = definitions.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                named.append((node_start(node), node_end(node), path + (node.name,)))
                if isinstance(node, ast.ClassDef) and len(path) < MAX_DEPTH:
                    definitions.extend((member, path + (node.name,)) for member in node.body)
        return [u for u in units if text[u[0] : u[1]].strip()], named

    def _generic_units(self, text: str) -> list[tuple[int, int, dict]]:
        starts = sorted({0, *(m.start() for m in _DEF_LINE.finditer(text))})
        bounds = starts + [len(text)]
        return [(a, b, {}) for a, b in zip(bounds, bounds[1:]) if text[a:b].strip()]


def _with_preamble(index: TokenIndex, units: list[tuple[int, int, dict]], budget: int) -> list[tuple[int, int, dict]]:
    """Imports and a module docstring never stand alone: the first unit, outside any definition,
    joins the first definition when the two fit ``budget``."""
    if len(units) > 1 and units[0][2].get("heading_path") == () and units[1][2].get("heading_path") \
            and "context" not in units[1][2] and index.count(units[0][0], units[1][1]) <= budget:
        return [(units[0][0], units[1][1], units[1][2]), *units[2:]]
    return units


class _Units:
    """A tree-sitter tree's units: (start, end, meta) on whole lines, covering the text in order.
    A multi-line node is a unit (the comments directly above it included, unless only the node fits
    ``budget``), headed by its name where it holds ``min_tokens`` or more (a smaller one takes its
    container's path, as the lines between nodes do, and packs with them); a unit over ``budget``
    tokens is read into its members (``MAX_DEPTH`` levels), which carry the lines opening it as
    context."""

    def __init__(self, index: TokenIndex, budget: int, min_tokens: int, context_tokens: Callable[[str], int]):
        self.index, self.budget, self.min_tokens, self.context_tokens = index, budget, min_tokens, context_tokens
        text = index.text
        self.line_starts = [0] + [m.end() for m in re.finditer(r"\n", text)] + [len(text)]
        self.units: list[tuple[int, int, dict]] = []
        self.named: list[tuple[int, int, tuple[str, ...]]] = []  # each named definition's span and path

    def at(self, row: int) -> int:
        return self.line_starts[min(row, len(self.line_starts) - 1)]

    def of(self, root) -> list[tuple[int, int, dict]]:
        nodes = [inner for node in root.named_children  # HCL's file: a body holding its blocks, comments after it
                 for inner in (node.named_children if node.type == "body" else [node])]
        self._walk(nodes, (), "", "", 0, len(self.index.text), 0)
        return [u for u in self.units if self.index.text[u[0] : u[1]].strip()]

    def _walk(self, nodes, path: tuple[str, ...], context: str, outer: str, start: int, end: int, depth: int) -> None:
        """Units of ``nodes`` from ``start`` to ``end`` under ``path`` with ``context``; the lines
        before the first of them (those opening their container) with the container's ``outer``."""
        pos, first = start, len(self.units)
        self._one_line_functions(nodes, path, start, end)
        for first_row, last_row, node in _definitions(nodes):
            a, b = max(self.at(first_row), pos), min(self.at(last_row + 1), end)
            if a >= b:
                continue
            tokens = self.index.count(a, b)
            bare = max(self.at(node.start_point.row), pos)
            if tokens > self.budget >= (alone := self.index.count(bare, b)):  # it fits without the comments above it
                a, tokens = bare, alone
            if a > pos:
                self.units.append((pos, a, _meta(path, outer if pos == start else context)))
            if _TRANSPARENT.match(node.type) and depth < MAX_DEPTH:
                self._walk(node.named_children, path, context, context, a, b, depth + 1)
                pos = b
                continue
            name = _name(node)
            if name:
                self.named.append((a, b, path + (name,)))
            inner = path + (name,) if name and tokens >= self.min_tokens else path  # a small one packs with its neighbours
            body = _body(node) if depth < MAX_DEPTH and tokens > self.budget else None
            if body is not None:
                opening = self.index.text[self.at(node.start_point.row) : self.at(body.start_point.row + 1)]
                self._walk(body.named_children, inner, context + opening, context, a, b, depth + 1)
            else:
                self.units.append((a, b, _meta(inner, context)))
                if name and not _function_name(node):
                    self._members(node, path + (name,), a, b, depth + 1)
            pos = b
        if pos < end:
            self.units.append((pos, end, _meta(path, outer if pos == start else context)))
        if depth:
            self._edges_joined(first, start, end)

    def _one_line_functions(self, nodes, path: tuple[str, ...], start: int, end: int) -> None:
        """A function defined on one line is no unit, but a chunk holding it cites it."""
        for node in nodes:
            if not _multiline(node) and (name := _function_name(node)):
                self.named.append((max(self.at(node.start_point.row), start), min(self.at(node.end_point.row + 1), end),
                                   path + (name,)))

    def _members(self, node, path: tuple[str, ...], start: int, end: int, depth: int) -> None:
        """The named members of ``node``, a container kept whole from ``start`` to ``end`` (a class's
        methods, a nested class's), under ``path``, so that the chunk holding them cites them; a
        function's own statements are not read."""
        body = (_object_held(node) or _body(node)) if depth < MAX_DEPTH else None
        if body is None:
            return
        self._one_line_functions(body.named_children, path, start, end)
        for first_row, last_row, member in _definitions(body.named_children):
            a, b = max(self.at(first_row), start), min(self.at(last_row + 1), end)
            name = _name(member)
            if _TRANSPARENT.match(member.type) or not name and (inner := _body(member)) is not None \
                    and _DECLARATIONS.search(inner.type):  # an #ifdef, Kotlin's unnamed companion object
                self._members(member, path, a, b, depth + 1)
            elif name:
                self.named.append((a, b, path + (name,)))
                if not _function_name(member):
                    self._members(member, path + (name,), a, b, depth + 1)

    def _edges_joined(self, first: int, start: int, end: int) -> None:
        """A container's opening and closing lines (from ``start``, to ``end``) under ``min_tokens``
        go with its first and last members, packed with them (alone they were chunks of "class Stock {"
        or "end"); the first member's chunk then shows its opening lines twice, as context and text."""
        units = self.units
        if len(units) - first < 2:
            return
        (a, b, _), (_, d, meta) = units[first], units[first + 1]
        if a == start and self.index.count(a, b) < self.min_tokens and self._fits(a, d, meta):
            units[first] = (a, b, meta)
        (a, b, meta), (c, d, _) = units[-2], units[-1]
        if d == end and self.index.count(c, d) < self.min_tokens and len(units) - first > 2 and self._fits(a, d, meta):
            units[-1] = (c, d, meta)

    def _fits(self, a: int, b: int, meta: dict) -> bool:
        """Whether ``text[a:b]`` fits ``budget`` after the context ``meta`` gives it."""
        return self.index.count(a, b) + self.context_tokens(meta.get("context", "")) <= self.budget


def _with_sections(text: str, spans: list[Span], named: list[tuple[int, int, tuple[str, ...]]]) -> list[Span]:
    """``spans`` with the paths of the ``named`` definitions each holds whole besides its own heading
    path (``Span.sections``): the small functions a chunk packs under their container."""
    named = sorted((a + len(text[a:b]) - len(text[a:b].lstrip()), a + len(text[a:b].rstrip()), path)
                   for a, b, path in named)
    starts = [a for a, _, _ in named]
    out = []
    for span in spans:
        held = tuple(dict.fromkeys(path for a, b, path in named[bisect_left(starts, span.start):
                                                               bisect_left(starts, span.end)]
                                   if b <= span.end and path != span.heading_path))
        out.append(span._replace(sections=held) if held else span)
    return out


def _meta(path: tuple[str, ...], context: str) -> dict:
    return {"heading_path": path, **({"context": context} if context else {})}


def _definitions(nodes):
    """(first row, last row, node) of each node spanning lines, its first row that of the comments
    and attributes directly above it (no blank line between), its last the last before the comments
    it ends with (Scala's indented blocks hold the next definition's doc comment)."""
    lead = last = None
    paired = None  # the body of the signature before, read with it
    for node in nodes:
        if paired is not None and node == paired:
            continue
        paired = _body_after(node)
        top, bottom = _rows(node)
        if paired is not None:
            bottom = _rows(paired)[1]
        if _LEADING.search(node.type):
            lead = top if lead is None or last is None or top > last + 1 else lead
            last = bottom
            continue
        first = lead if lead is not None and last is not None and last >= top - 1 else top
        lead = last = None
        if (trailing := _trailing_comments(paired or node)) is not None:
            bottom, (lead, last) = trailing[0], (trailing[1], bottom)
        if bottom > top:
            yield first, bottom, node


def _body_after(node):
    """The body a signature is followed by where the grammar makes them siblings (Dart's
    ``function_signature`` or ``method_signature`` and its ``function_body``: one definition), else
    None."""
    after = node.next_named_sibling if node.type.endswith("signature") else None
    return after if after is not None and after.type == "function_body" else None


def _trailing_comments(node) -> tuple[int, int] | None:
    """(last row before them, first row of them) where ``node`` ends with comments, nothing after
    them but blank space; None where it does not."""
    end = node
    while end.named_child_count:
        children = end.named_children
        tail = end.text[children[-1].end_byte - end.start_byte :]
        if tail.strip():  # the node closes after its last child (a "}", an "end")
            return None
        if _LEADING.search(children[-1].type):
            kept = [child for child in children if not _LEADING.search(child.type)]
            if not kept:
                return None
            first_comment = next(child for child in children if child.start_byte >= kept[-1].end_byte)
            return _rows(kept[-1])[1], _rows(first_comment)[0]
        end = children[-1]
    return None


def _rows(node) -> tuple[int, int]:
    """A node's first and last rows, blank space it ends with left out (a C directive's newline, the
    indentation of the line after a Scala definition)."""
    text = node.text
    return node.start_point.row, node.end_point.row - text[len(text.rstrip()) :].count(b"\n")


def _multiline(node) -> bool:
    top, bottom = _rows(node)
    return bottom > top


def _name(node, depth: int = 0, wraps: int = 0) -> str:
    """What a definition is called: its ``name``, else its declarator's (a C function's, at most 8
    declarators deep), its type's (a Rust impl's), or a wrapped definition's (an export, a template, a
    const holding a function; at most 2 wrappers deep); "" for a statement."""
    if node.type == "call" and (keyword := node.child_by_field_name("target")) is not None \
            and keyword.text.startswith(b"def") and (named := _elixir_name(node)):
        return named
    if held := _held_name(node, _HELD_DEFINITION) or _call_name(node)[1] or _hcl_address(node):
        return held
    children = node.named_children
    if node.type.endswith("signature") and node.child_by_field_name("name") is None:  # Dart's method_signature
        inner = next((c for c in children if c.type.endswith("signature")), None)  # wraps a function_signature
        if inner is not None:
            return _name(inner, depth + 1, wraps)
        if node.type == "factory_constructor_signature":  # factory Book.fromJson(...)
            return ".".join(_label(c) for c in children if c.type == "identifier")
    signature = next((c for c in children if c.type == "signature"), None) if node.type.endswith("definition") \
        else children[0] if node.type == "assignment" and children else None  # Julia: function f(x), f(x) = ...
    if signature is not None and (call := signature if signature.type == "call_expression" else next(
            (c for c in signature.named_children if c.type == "call_expression"), None)) is not None:
        return _label(call.named_children[0]) if call.named_children else ""
    if node.type == "test_declaration":  # Zig's test "name" {...}
        return next((_label(c, '"') for c in children if c.type == "string"), "")
    if node.type == "variable_declaration" and children and children[0].type == "identifier" \
            and node.child_by_field_name("type") != children[0]:  # Zig's const Pool = struct {...}
        return children[0].text.decode("utf-8", "replace")[:100]
    for field in ("name", "declarator", None, "type"):  # OCaml's val names its value, then its type
        found = node.child_by_field_name(field) if field else next((c for c in node.children if c.type in _NAMING), None)
        if found is not None:
            return (field not in ("name", None) and depth < 8 and _name(found, depth + 1, wraps)) \
                or _label(found)
    if wraps < 2:
        body = _body(node, nested=False)
        for child in node.named_children:
            if body is not None and child.start_byte >= body.start_byte:
                break
            if not _LEADING.search(child.type) and _multiline(child) and (found := _name(child, depth + 1, wraps + 1)):
                return found
    return ""


def _function_name(node, wraps: int = 0) -> str:
    """The name of the function or method ``node`` defines: a definition's, a const's, variable's or
    field's holding a function (``const add = (a, b) => a + b``), an export's of one (at most 2
    wrappers deep); "" for anything else."""
    if _ONE_LINE_DEFINITION.search(node.type) or node.type == "call" and (
            (node.child_by_field_name("target") or node).text in (b"def", b"defp", b"defmacro", b"defmacrop")):
        return _name(node)
    if held := _held_name(node, _FUNCTION_VALUE):
        return held
    if (called := _call_name(node))[0] == "case":
        return called[1]
    if wraps < 2 and _DECLARING.match(node.type):
        return next((found for child in node.named_children if (found := _function_name(child, wraps + 1))), "")
    return ""


def _call_name(node) -> tuple[str, str]:
    """("group", name) for a call opening a group of tests (``describe("Stack", () => {...})``, RSpec's
    ``describe Stack do``, ExUnit's ``describe "add/2" do``), its first argument's text; ("case", name)
    for one opening a test (``it("pushes", ...)``, ``test "adds" do``), or a web route (Express's
    ``app.get("/users/:id", ...)``, Sinatra's ``get '/' do``, Phoenix's ``get "/", PageController``:
    "GET /users/:id"); ("", "") for any other node."""
    if node.type not in ("call_expression", "call"):
        return "", ""
    callee = node.child_by_field_name("function") or node.child_by_field_name("method") \
        or node.child_by_field_name("target")
    arguments = node.child_by_field_name("arguments") or next(
        (c for c in node.named_children if c.type in ("arguments", "argument_list")), None)
    if callee is None or arguments is None or not arguments.named_children:
        return "", ""
    first = arguments.named_children[0]
    text = _label(first, "'\"`")
    verb = re.search(rb"(\w+)\s*$", callee.text)
    handled = any(_FUNCTION_VALUE.search(c.type) or c.type == "alias" for c in arguments.named_children[1:]) \
        or any(c.type in ("do_block", "block") for c in node.named_children)  # a handler, not a client's request
    if verb and verb.group(1).lower() in _ROUTE_VERBS and "string" in first.type and text.startswith("/") and handled:
        return "case", f"{verb.group(1).decode().upper()} {text}"
    kind = _TEST_CALLS.get(m.group()) if (m := re.match(rb"\w+", callee.text)) else None
    if kind is None or not re.search(r"string|identifier|constant|scope_resolution|alias", first.type):
        return "", ""
    return kind, text


def _hcl_address(node) -> str:
    """The address Terraform gives an HCL block (``resource "aws_vpc" "this" {`` is "aws_vpc.this", a
    ``module "vpc"`` "module.vpc", a ``variable "cidr"`` "var.cidr", ``locals`` "locals"); "" for
    another node."""
    children = node.named_children
    if node.type != "block" or not children or children[0].type != "identifier" \
            or not any(c.type == "block_start" for c in children):
        return ""
    words = [_label(c, '"') for c in children if c.type in ("identifier", "string_lit")]
    kind = {"resource": [], "variable": ["var"]}.get(words[0], words[:1])
    return ".".join(kind + words[1:])


def _held_name(node, kinds: re.Pattern) -> str:
    """The name a declarator, property or assignment gives the value it holds, where that value is
    of ``kinds`` (``const add = () => ...``, ``key: function () {...}``, ``Foo.prototype.bar =
    function () {...}``); "" otherwise."""
    value = _value(node)
    if value is None or not kinds.search(value.type):
        return ""
    target = node.child_by_field_name("name") or node.child_by_field_name("key") or node.child_by_field_name("left")
    return _label(target, "'\"`") if target is not None else ""


def _value(node):
    """What a declarator, property or assignment holds (its ``value`` or ``right``), else None."""
    return node.child_by_field_name("value") or node.child_by_field_name("right")


def _object_held(node, wraps: int = 0):
    """The object literal ``node`` declares or assigns (``module.exports = {...}``), its properties
    being its members; None where it holds none."""
    value = _value(node)
    if value is not None:
        return value if value.type == "object" else None
    if wraps < 2 and _DECLARING.match(node.type):
        return next((found for child in node.named_children if (found := _object_held(child, wraps + 1))), None)
    return None


def _label(node, quotes: str = "") -> str:
    """A node's text as a name: on one line, the ``quotes`` around it left out, at most 100 characters."""
    return " ".join(node.text.decode("utf-8", "replace").strip(quotes).split())[:100]


def _elixir_name(call) -> str:
    """The name an Elixir definition (``def add(a, b) do``, ``defmodule Acme.Stock do``, a call of
    a ``def...`` macro) gives: its first argument's head ("add", "Acme.Stock")."""
    arguments = next((c for c in call.named_children if c.type == "arguments"), None)
    head = arguments.named_children[0] if arguments is not None and arguments.named_children else None
    while head is not None and head.type in ("call", "binary_operator"):  # add(a, b); sub(a, b) when a > b
        head = head.child_by_field_name("target") or head.child_by_field_name("left")
    return _label(head) if head is not None else ""


def _body(node, nested: bool = True):
    """The node holding a definition's members or statements: its ``body`` (a class body, a
    block), else the node itself where two of its children span lines (a struct's initialiser), else,
    when ``nested``, its one such child's (an export's, a template's, a const's holding a function);
    None for a node without."""
    node = _body_after(node) or node
    for _ in range(6):  # wrappers: a call of a parenthesised function expression holding the file (an IIFE)
        body = node.child_by_field_name("body") or next((c for c in node.named_children if _BODY.search(c.type)), None)
        while body is not None and body.named_child_count == 1 and _BODY.search(body.named_children[0].type):
            body = body.named_children[0]  # a function body holding its block
        if body is not None and body.named_child_count:
            return body
        spanning = [c for c in node.named_children if _multiline(c)]
        if len(spanning) > 1 and nested:
            return node
        if not nested or not spanning:
            return None
        node = spanning[0]
    return None
