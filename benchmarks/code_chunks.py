"""How often a function that fits one chunk is chunked whole and cited under its name: the code
chunker with the file's grammar (``chunking.code``) against the definition-line rule it replaced
(the same chunker given no language), on the same files in the same run.

A function is a node of the file's syntax tree whose type names a function, method or subroutine (not a
preprocessor macro, a call or its arguments: Lua's and HCL's function_call, a function's type or body), a
Dart signature with the body after it, or an Elixir def, from its first line to its last (before comments
it ends with), at most the chunk's budget; it is whole where one chunk holds all its lines, named where
that chunk's heading path ends with its name (an anonymous function's: the const, property or assignment
target holding it, the test or route it is the body of; another callback has none), cited where it is
named or one of the chunk's sections (the small definitions it packs, a whole class's methods) ends with
its name.

    .venv/bin/python benchmarks/code_chunks.py PATH... [--max-tokens 256] [--min-tokens 50] [--files 400]

PATH: source files or folders (searched for the extensions ``chunking.code.LANGUAGES`` names);
prints counts per language and the ratios."""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag_assets.core.chunking.code import (GRAMMARS, CodeChunker, _body_after, _call_name,  # noqa: E402
                                          _grammar, _name, _rows, _trailing_comments, code_language)
from rag_assets.core.tokens import MINILM_TOKENIZER, get_token_counter  # noqa: E402


def _functions(root):
    stack = [root]
    while stack:
        node = stack.pop()
        elixir_def = node.type == "call" and (node.child_by_field_name("target") or node).text in (b"def", b"defp")
        body = _body_after(node)  # Dart: a signature and its body are siblings
        if body is not None or (re.search(r"function|method|subroutine", node.type)
                                and not re.search(r"^preproc|call|argument|signature|_type$|_body$", node.type)) \
                or elixir_def:
            if (body or node).end_point.row > node.start_point.row:
                yield node, body or node
        stack.extend(node.named_children)


def _own_name(node) -> str:
    """A function's name, or, for an anonymous one, the name of what holds it: a const or variable
    (``const add = () => ...``), a property (``key: function () {...}``), an assignment's target
    (``Foo.prototype.bar = function () {...}``), a test's or a route's (``it("pushes", () => {...})``,
    ``app.get("/users", (req, res) => {...})``: "GET /users"), as a reader names it; "" for another callback."""
    if own := _name(node):
        return own
    parent = node.parent
    if parent is not None and parent.type == "arguments" and parent.parent is not None \
            and (test := _call_name(parent.parent)[1]):
        return test
    if parent is None or (parent.child_by_field_name("value") or parent.child_by_field_name("right")) != node:
        return ""
    target = parent.child_by_field_name("name") or parent.child_by_field_name("key") or parent.child_by_field_name("left")
    return " ".join(target.text.decode("utf-8", "replace").strip("'\"`").split())[:100] if target is not None else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--min-tokens", type=int, default=50)
    parser.add_argument("--files", type=int, default=400, help="at most this many files, drawn at random (seed 1)")
    args = parser.parse_args()
    from tree_sitter import Parser

    files = sorted({p for path in args.paths for p in ([path] if path.is_file() else path.rglob("*"))
                    if p.is_file() and code_language(p.name) in GRAMMARS})
    random.Random(1).shuffle(files)
    counter = get_token_counter(MINILM_TOKENIZER)
    budget = CodeChunker(args.max_tokens, 0, counter).budget
    stats: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for path in files[: args.files]:
        language = code_language(path.name)
        text = path.read_text(encoding="utf-8", errors="replace")
        if not text.strip() or len(text) > 2_000_000:
            continue
        lines = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"] + [len(text)]
        root = Parser(_grammar(language)).parse(text.encode("utf-8", "surrogatepass")).root_node
        s = stats[language]
        s["files"] += 1
        for name, chunker_language in (("tree", language), ("lines", "")):
            started = time.perf_counter()
            spans = CodeChunker(args.max_tokens, 0, counter, args.min_tokens, chunker_language).chunk(text)
            s[f"{name}_seconds"] += time.perf_counter() - started
            s[f"{name}_chunks"] += len(spans)
            for node, end in _functions(root):
                # a doc comment it ends with is the next definition's, blank space after it nobody's
                last_row = trailing[0] if (trailing := _trailing_comments(end)) else _rows(end)[1]
                a, b = lines[node.start_point.row], lines[min(last_row + 1, len(lines) - 1)]
                if counter.count(text[a:b]) > budget:
                    continue
                s["functions"] += name == "tree"
                first = a + len(text[a:b]) - len(text[a:b].lstrip())  # chunks are trimmed: so are the lines
                last = first + len(text[a:b].strip())
                holder = next((sp for sp in spans if sp.start <= first and sp.end >= last), None)
                if holder is not None:
                    s[f"{name}_whole"] += 1
                    named = bool(holder.heading_path) and holder.heading_path[-1] == (own := _own_name(node))
                    s[f"{name}_named"] += named
                    s[f"{name}_cited"] += named or any(path and path[-1] == own for path in holder.sections)
    total: dict[str, float] = defaultdict(float)
    print(f"{'language':12s} {'files':>5s} {'functions':>9s}  whole: tree  lines   named: tree  lines   "
          f"cited: tree  lines   chunks: tree  lines")
    for language, s in sorted(stats.items()):
        for key, value in s.items():
            total[key] += value
        _row(language, s)
    _row("all", total)
    print(f"chunking time: tree {total['tree_seconds']:.1f} s, lines {total['lines_seconds']:.1f} s "
          f"({total['tree_seconds'] / max(total['lines_seconds'], 1e-9):.2f}x)")


def _row(label: str, s: dict[str, float]) -> None:
    n = max(s["functions"], 1)
    print(f"{label:12s} {int(s['files']):5d} {int(s['functions']):9d}  "
          f"{100 * s['tree_whole'] / n:10.1f}% {100 * s['lines_whole'] / n:5.1f}%  "
          f"{100 * s['tree_named'] / n:10.1f}% {100 * s['lines_named'] / n:5.1f}%  "
          f"{100 * s['tree_cited'] / n:10.1f}% {100 * s['lines_cited'] / n:5.1f}%  "
          f"{int(s['tree_chunks']):11d} {int(s['lines_chunks']):6d}")


if __name__ == "__main__":
    main()
