"""Code chunked by its syntax tree (tree-sitter): invariants (hypothesis) and, per language, a
function whole under its name with the comment above it."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag_assets.core.chunking import ChunkingProfile, chunk_document
from rag_assets.core.chunking.code import GRAMMARS, CodeChunker, code_language
from rag_assets.core.hashing import content_hash
from rag_assets.core.models import RawDocument
from rag_assets.core.parsing import parse_document
from rag_assets.core.pipeline import chunk_stage, parse_stage, snapshot_raw
from rag_assets.core.store import StageStore
from rag_assets.core.tokens import MINILM_TOKENIZER, get_token_counter

COUNTER = get_token_counter(MINILM_TOKENIZER)

# Two functions, alpha and beta, each under a comment, in each language with a grammar.
FUNCTIONS = {
    "c": ("//", "int {name}(int stock, int total)\n{{", "    total = total + stock * 2;\n    log_value(total);\n"
          "    return total;", "}}"),
    "cpp": ("//", "int {name}(int stock, int total) {{", "    total = total + stock * 2;\n    log_value(total);\n"
            "    return total;", "}}"),
    "go": ("//", "func {name}(stock int, total int) int {{", "\ttotal = total + stock*2\n\tlogValue(total)\n"
           "\treturn total", "}}"),
    "javascript": ("//", "function {name}(stock, total) {{", "  total = total + stock * 2;\n  logValue(total);\n"
                   "  return total;", "}}"),
    "typescript": ("//", "function {name}(stock: number, total: number): number {{",
                   "  total = total + stock * 2;\n  logValue(total);\n  return total;", "}}"),
    "tsx": ("//", "export function {name}(stock: number) {{", "  const total = stock * 2;\n  logValue(total);\n"
            "  return <span>{{total}}</span>;", "}}"),
    "rust": ("///", "pub fn {name}(stock: i32, total: i32) -> i32 {{", "    let sum = total + stock * 2;\n"
             "    log_value(sum);\n    sum", "}}"),
    "ruby": ("#", "def {name}(stock, total)", "  total = total + stock * 2\n  log_value(total)\n  total", "end"),
    "php": ("//", "function {name}($stock, $total) {{", "  $total = $total + $stock * 2;\n  log_value($total);\n"
            "  return $total;", "}}"),
    "bash": ("#", "{name}() {{", "  total=$(( $2 + $1 * 2 ))\n  log_value \"$total\"\n  echo \"$total\"", "}}"),
    "kotlin": ("//", "fun {name}(stock: Int, total: Int): Int {{", "    val sum = total + stock * 2\n"
               "    logValue(sum)\n    return sum", "}}"),
    "swift": ("//", "func {name}(stock: Int, total: Int) -> Int {{", "    let sum = total + stock * 2\n"
              "    logValue(sum)\n    return sum", "}}"),
    "scala": ("//", "def {name}(stock: Int, total: Int): Int = {{", "  val sum = total + stock * 2\n  logValue(sum)\n"
              "  sum", "}}"),
    "lua": ("--", "function {name}(stock, total)", "  total = total + stock * 2\n  log_value(total)\n"
            "  return total", "end"),
    "elixir": ("#", "def {name}(stock, total) when stock > 0 do", "    total = total + stock * 2\n"
               "    Logger.info(total)\n    total", "end"),
    "powershell": ("#", "function {name} {{", "  param($Stock, $Total)\n  $Total = $Total + $Stock * 2\n"
                   "  Write-Log $Total\n  return $Total", "}}"),
    "perl": ("#", "sub {name} {{", "  my ($stock, $total) = @_;\n  $total = $total + $stock * 2;\n  log_value($total);\n"
             "  return $total;", "}}"),
    "haskell": ("--", "{name} :: Int -> Int -> Int\n{name} stock total =", "  let sum = total + stock * 2\n"
                "  in logValue sum `seq`", "     sum"),  # its type signature with it
    "dart": ("///", "int {name}(int stock, int total) {{", "  final sum = total + stock * 2;\n  logValue(sum);\n"
             "  return sum;", "}}"),  # a signature and its body: siblings in the grammar
    "julia": ("#", "function {name}(stock::Int, total::Int)", "    sum = total + stock * 2\n    log_value(sum)\n"
              "    return sum", "end"),
    "ocaml": ("(*", "*)\nlet {name} stock total =", "  let sum = total + stock * 2 in\n  log_value sum;\n  sum", ""),
    "zig": ("//", "pub fn {name}(stock: i32, total: i32) i32 {{", "    const sum = total + stock * 2;\n    logValue(sum);\n"
            "    return sum;", "}}"),
}
# Java and C# hold methods in a class: read into it, each method carries the class's opening line.
CLASSES = {
    "java": ("public class Warehouse {", "    public int {name}(int stock, int total) {{",
             "        total = total + stock * 2;\n        logValue(total);\n        return total;", "    }}", "}"),
    "c_sharp": ("public class Warehouse {", "    public int {name}(int stock, int total) {{",
                "        total = total + stock * 2;\n        LogValue(total);\n        return total;", "    }}", "}"),
    "dart": ("class Warehouse {", "  int {name}(int stock, int total) {{",
             "    total = total + stock * 2;\n    logValue(total);\n    return total;", "  }}", "}"),
}


def _function(language: str, name: str) -> str:
    comment, head, stmts, close = FUNCTIONS[language]
    return f"{comment} Adds the stock of the {name} bin to the total and logs it.\n{head.format(name=name)}\n" \
           f"{stmts}\n{close.format()}\n"


def _chunks(language: str, text: str, max_tokens: int, min_tokens: int = 0):
    return CodeChunker(max_tokens, 0, COUNTER, min_tokens=min_tokens, language=language).chunk(text)


def test_every_grammar_is_tested_and_every_extension_names_one():
    assert set(FUNCTIONS) | set(CLASSES) | {"sql", "hcl", "ocaml_interface"} == set(GRAMMARS)
    assert {code_language(f"src/a{ext}") for ext in (".c", ".hpp", ".kt", ".swift", ".tsx", ".sh", ".cs")} == {
        "c", "cpp", "kotlin", "swift", "tsx", "bash", "c_sharp"}
    assert code_language("a.py") == "python" and code_language("query.sql") == "sql" and code_language("a.groovy") == ""
    assert {code_language(f"infra/main{ext}") for ext in (".tf", ".tfvars", ".hcl")} == {"hcl"}
    assert [code_language(f"src/a{ext}") for ext in (".jl", ".ml", ".mli")] == ["julia", "ocaml", "ocaml_interface"]


@pytest.mark.parametrize("language", sorted(FUNCTIONS))
def test_a_function_is_a_chunk_under_its_name_with_the_comment_above_it(language):
    """Kotlin's, C's and C++'s functions open with no keyword the line rule knew (`fun`, a return
    type): they were cut by lines, and no language's chunk named its function."""
    prefix = "<?php\n" if language == "php" else ""
    text = prefix + "\n".join(_function(language, name) for name in ("alpha", "beta"))
    spans = _chunks(language, text, 64)
    by_path = {span.heading_path: text[span.start : span.end] for span in spans}
    assert ("alpha",) in by_path and ("beta",) in by_path, (language, [s.heading_path for s in spans])
    assert by_path[("alpha",)].strip() == (prefix + _function(language, "alpha")).strip(), language  # <?php joins it
    assert by_path[("beta",)].strip() == _function(language, "beta").strip(), language


@pytest.mark.parametrize("language", sorted(CLASSES))
def test_a_class_over_the_limit_is_read_into_its_methods_which_carry_its_opening_line(language):
    opening, head, stmts, close, end = CLASSES[language]
    methods = [f"    // Adds the stock of the {name} bin.\n{head.format(name=name)}\n{stmts}\n{close.format()}\n"
               for name in ("alpha", "beta", "gamma")]
    text = f"{opening}\n" + "\n".join(methods) + f"{end}\n"
    spans = _chunks(language, text, 64)
    method_spans = {s.heading_path: s for s in spans if len(s.heading_path) == 2}
    assert set(method_spans) == {("Warehouse", name) for name in ("alpha", "beta", "gamma")}, language
    for (_, name), span in method_spans.items():
        assert text[span.start : span.end].strip().startswith(f"// Adds the stock of the {name} bin.")
        assert span.context == opening + "\n"


def test_terraform_is_chunked_by_block_each_under_its_address():
    """A .tf file was text, chunked by paragraph: a resource's arguments cut from its name, and no
    chunk said which resource it held. Each block is a definition under the address Terraform gives
    it (aws_vpc.this, module.vpc, var.cidr); small ones pack, each in the chunk's sections."""
    resource = 'resource "aws_vpc" "this" {\n' + "".join(f'  tag_{i} = "dock-{i}"\n' for i in range(6)) + "}\n"
    text = ('# The network.\nvariable "cidr" {\n  type    = string\n  default = "10.0.0.0/16"\n}\n\n'
            f'# The VPC itself.\n{resource}\nmodule "vpc" {{\n  source = "../vpc"\n}}\n\n# trailing note\n')
    doc = parse_document(RawDocument("infra/main.tf", "", "h", len(text), "", text.encode()))
    assert doc.content_type == "code"
    chunks = chunk_document(doc, ChunkingProfile("p", strategy="code", max_tokens=128, min_tokens=30), COUNTER,
                            256).chunks
    holder = next(c for c in chunks if 'resource "aws_vpc"' in c.text)
    assert resource.strip() in holder.text and holder.text.count("# The VPC itself.") == 1
    assert "aws_vpc.this" in holder.sections  # its heading path or one of its packed definitions
    assert {"var.cidr", "module.vpc"} <= {s for c in chunks for s in c.sections}


def test_sql_is_chunked_by_statement_each_table_or_view_under_its_name():
    """A migration was cut by lines: a CREATE TABLE's columns apart from its name."""
    tables = "".join(f"-- Stock of the {name} warehouse, one row a bin.\nCREATE TABLE {name}_stock (\n"
                     + "".join(f"  column_{i} INT NOT NULL,\n" for i in range(8)) + "  id INT PRIMARY KEY\n);\n\n"
                     for name in ("alpha", "beta"))
    text = tables + "CREATE VIEW low_stock AS\nSELECT id FROM alpha_stock\nWHERE column_1 < 12;\n"
    spans = _chunks("sql", text, 96)
    held = {s.heading_path: text[s.start : s.end] for s in spans}
    assert held[("alpha_stock",)].startswith("-- Stock of the alpha warehouse") and held[("alpha_stock",)].endswith(");")
    assert held[("beta_stock",)].count("CREATE TABLE") == 1 and ("low_stock",) in held


def test_a_container_s_opening_and_closing_lines_go_with_its_first_and_last_members():
    """Of nine projects' 35,611 code chunks, 1,845 were a closing "}" or "end" alone (a class or
    module read into its members) and many more its opening line alone: they pack with its members."""
    opening, head, stmts, close, end = CLASSES["java"]
    methods = "\n".join(f"    // Adds the stock of the {name} bin to the running total, then logs it for the audit.\n"
                        f"{head.format(name=name)}\n{stmts}\n{close.format()}\n" for name in ("alpha", "beta", "gamma"))
    module = "defmodule Acme.Stock do\n" + "\n".join(
        "  " + _function("elixir", name).replace("\n", "\n  ") for name in ("alpha", "beta", "gamma")) + "\nend\n"
    for language, text, top in (("java", f"{opening}\n{methods}{end}\n", opening), ("elixir", module, "defmodule Acme.Stock do")):
        pieces = [text[s.start : s.end].strip() for s in _chunks(language, text, 120, min_tokens=50)]
        assert len(pieces) > 1 and all(p.strip("}; \n") not in ("", "end") for p in pieces), (language, pieces)
        assert top not in pieces and pieces[0].startswith(top) and "alpha" in pieces[0], language


def test_a_long_function_is_cut_between_its_statements_each_piece_under_its_signature():
    blocks = "".join(f"    if (bins[{i}] > limit) {{\n        total += bins[{i}] * {i};\n        log_value(total);\n    }}\n"
                     for i in range(30))
    text = f"int restock(int *bins, int limit)\n{{\n    int total = 0;\n{blocks}    return total;\n}}\n"
    spans = _chunks("c", text, 96)
    assert len(spans) > 3
    cut = [s for s in spans if s.context]
    assert cut and all(s.context == "int restock(int *bins, int limit)\n{\n" for s in cut)
    assert all(s.heading_path == ("restock",) for s in cut)
    assert all(text[s.start : s.end].lstrip().startswith(("if (", "int total", "return total")) for s in cut)


def test_an_include_guard_heads_nothing():
    """A header's #ifndef wraps the whole file: its definitions are read as top-level ones."""
    functions = "\n".join(_function("c", name) for name in ("alpha", "beta"))
    text = f"#ifndef WAREHOUSE_H\n#define WAREHOUSE_H\n\n{functions}\n#endif\n"
    paths = {s.heading_path for s in _chunks("cpp", text, 64)}
    assert ("alpha",) in paths and ("beta",) in paths and not any("WAREHOUSE_H" in p for p in paths)


def test_definitions_are_read_however_deep_a_header_or_a_script_wraps_them():
    """LLVM's headers nest a class's methods in a class, two namespaces and an include guard, and
    scripts wrap a file in a function called at once: their methods and functions were cut by lines."""
    methods = "".join(_function("cpp", name).replace("\n", "\n    ") + "\n" for name in ("alpha", "beta", "gamma"))
    header = (f"#ifndef ARCH_H\n#define ARCH_H\nnamespace llvm {{\nnamespace object {{\nclass Universal {{\n"
              f"  class ObjectForArch {{\n  public:\n    {methods}  }};\n}};\n}}\n}}\n#endif\n")
    paths = {s.heading_path for s in _chunks("cpp", header, 64)}
    assert {("llvm", "object", "Universal", "ObjectForArch", name) for name in ("alpha", "beta", "gamma")} <= paths
    script = "(function () {\n" + "\n".join(_function("javascript", n) for n in ("alpha", "beta", "gamma")) + "})();\n"
    assert {("alpha",), ("beta",), ("gamma",)} <= {s.heading_path for s in _chunks("javascript", script, 64)}


def test_small_declarations_pack_together_up_to_the_limit():
    """Twenty two-line prototypes in an extern "C" block over the limit were twenty chunks of a
    dozen tokens each: definitions under min_tokens are packed with their neighbours."""
    prototypes = "".join(f"extern int stock_of_bin_{i}(int bin,\n                          int shelf);\n" for i in range(20))
    text = f"extern \"C\" {{\n{prototypes}}}\n"
    held = [s for s in _chunks("cpp", text, 128, min_tokens=50) if "stock_of_bin_" in text[s.start : s.end]]
    assert len(held) <= 4 and sum(text[s.start : s.end].count("stock_of_bin_") for s in held) == 20
    assert all(s.context == 'extern "C" {\n' for s in held)
    assert len(_chunks("cpp", text, 128)) >= 20  # each its own without min_tokens


def test_a_method_that_fits_only_without_its_class_line_is_embedded_whole_without_it():
    """cuda_fp8.hpp's 230-token operators under a 20-token struct line were cut in two to make room
    for the line: a method is kept whole before its class's lines are repeated."""
    opening = "public class Warehouse extends AbstractInventoryService implements Comparable<Warehouse>, Serializable {"
    statements = "".join(f"        total = total + bins[{i}] * weights[{i}];\n" for i in range(9))
    big = f"    public int weigh(int[] bins, int[] weights) {{\n        int total = 0;\n{statements}        return total;\n    }}\n"
    small = "    public int zero() {\n        return 0;\n    }\n"
    text = f"{opening}\n{small}\n{big}\n{small.replace('zero', 'none')}}}\n"
    chunker = CodeChunker(170, 0, COUNTER, language="java")
    assert COUNTER.count(big) <= chunker.budget < COUNTER.count(opening + "\n" + big) - COUNTER.special_tokens
    held = [s for s in chunker.chunk(text) if "weigh(" in text[s.start : s.end]]
    assert len(held) == 1 and text[held[0].start : held[0].end].strip() == big.strip() and not held[0].context


def test_a_function_that_fits_only_without_the_comment_above_it_is_kept_whole():
    comment = "".join(f"// Step {i}: the picker scans the bin label, then confirms the count on the handheld.\n"
                      for i in range(4))
    body = "".join(f"    total += bins[{i}] * {i + 3};\n" for i in range(14))
    function = f"int weigh(const int *bins)\n{{\n    int total = 0;\n{body}    return total;\n}}\n"
    text = comment + function
    chunker = CodeChunker(180, 0, COUNTER, language="c")
    assert COUNTER.count(function) <= chunker.budget < COUNTER.count(text)
    spans = chunker.chunk(text)
    assert any(text[s.start : s.end].strip() == function.strip() for s in spans)


def test_a_doc_comment_the_grammar_puts_in_the_definition_above_goes_with_the_one_below():
    """Scala's indented blocks end at the next definition: each held the next one's doc comment,
    and a definition on the line after another was cut with the first line of the next."""
    definitions = "".join(f"  /** Units in bin {name}, counted at the last stocktake. */\n"
                          f"  def {name}(shelf: Int): Int =\n    stock(shelf) * {len(name)} + reserve(shelf)\n\n"
                          for name in ("alpha", "beta", "gamma", "delta"))
    text = f"object Stock {{\n{definitions}  def epsilon: Int =\n    0\n  def zeta: Int =\n    1\n}}\n"
    spans = _chunks("scala", text, 40)
    for name in ("alpha", "beta", "gamma", "delta"):
        held = [text[s.start : s.end] for s in spans if f"def {name}(" in text[s.start : s.end]]
        assert len(held) == 1 and held[0].startswith(f"/** Units in bin {name},"), (name, held)
        assert held[0].count("/**") == 1
    epsilon = [text[s.start : s.end] for s in spans if "def epsilon" in text[s.start : s.end]]
    assert epsilon == ["def epsilon: Int =\n    0"]


def test_chunk_document_reads_the_language_from_the_document_name():
    source = "\n".join(_function("kotlin", name) for name in ("alpha", "beta")).encode()
    doc = parse_document(RawDocument("app/Stock.kt", "", "h", len(source), "", source))
    for strategy in ("auto", "code"):
        profile = ChunkingProfile("p", strategy=strategy, max_tokens=128, min_tokens=0)
        chunks = chunk_document(doc, profile, COUNTER, 256).chunks
        assert {c.heading_path for c in chunks} >= {("alpha",), ("beta",)}, strategy


@pytest.mark.parametrize("name, source", [
    ("stock.c", "struct stock { int n; };\n\nstatic int add(int a, int b) {\n    return a + b;\n}\n\n"
                "static int sub(int a, int b) {\n    return a - b;\n}\n"),
    ("stock.py", "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"),
    ("stock.kt", "fun add(a: Int, b: Int) = a + b\nfun sub(a: Int, b: Int) = a - b\n"),  # one line each
    ("Stock.java", "public class Stock {\n" + "".join(
        f"    /** {verb} the two counts. */\n    int {verb}(int a, int b) {{\n        return a + b;\n    }}\n\n"
        for verb in ("add", "sub", "merge", "split"))
        + "    int total() {\n" + "        audit();\n" * 40 + "        return 0;\n    }\n}\n"),
])
def test_a_chunk_packing_small_definitions_cites_each(name, source):
    """Definitions under min_tokens (one-line ones too) pack into one chunk, cited under their
    container alone (the file, or the class): each is now in the chunk's sections, as a heading
    section is."""
    doc = parse_document(RawDocument(name, "", "h", len(source), "", source.encode()))
    chunks = chunk_document(doc, ChunkingProfile("p", strategy="code", max_tokens=128, min_tokens=50), COUNTER,
                            256).chunks
    container = ("Stock",) if name.endswith(".java") else ()
    packed = [c for c in chunks if "add(int a" in c.text or "def add" in c.text or "fun add" in c.text]
    assert len(packed) == 1 and packed[0].heading_path == container
    assert {" > ".join((*container, verb)) for verb in ("add", "sub")} <= set(packed[0].sections)
    # a definition cut into several chunks is cited by their heading paths, never in another chunk's sections
    assert all(" > ".join((*container, "total")) not in c.sections for c in chunks if "total" not in c.heading_path)


@pytest.mark.parametrize("name, source, members", [
    ("stack.ts", "export class Stack<T> {\n  private items: T[] = [];\n\n  push(item: T): void {\n"
                 "    this.items.push(item);\n  }\n\n  peek = (): T | undefined => this.items[0];\n\n"
                 "  get size(): number {\n    return this.items.length;\n  }\n}\n",
     {"Stack > push", "Stack > peek", "Stack > size"}),
    ("stack.py", "class Stack:\n    def push(self, x):\n        self.items.append(x)\n\n"
                 "    class Empty(Exception):\n        def describe(self):\n            return 'empty'\n\n\n"
                 "def helper(a):\n    def inner():\n        return a\n    return inner\n",
     {"Stack", "Stack > push", "Stack > Empty", "Stack > Empty > describe", "helper"}),
    ("Stock.kt", "class Stock(val name: String) {\n    fun add(a: Int) = a\n    fun sub(a: Int): Int {\n"
                 "        return -a\n    }\n    companion object {\n        fun create(): Stock {\n"
                 "            return Stock(\"x\")\n        }\n    }\n}\n",
     {"Stock > add", "Stock > sub", "Stock > create"}),
    ("stock.js", "const add = (a, b) => a + b;\nexport const sub = function (a, b) { return a - b; };\n"
                 "var limit = 3, scale = (a) => a * limit;\nfunction mul(a, b) { return a * b; }\n",
     {"add", "sub", "scale", "mul"}),
    ("legacy.js", "function Stack() {\n  this.items = [];\n}\n\nStack.prototype.push = function (x) {\n"
                  "  this.items.push(x);\n};\n\nmodule.exports = {\n  Stack: Stack,\n  create: function () {\n"
                  "    return new Stack();\n  },\n  'make-two': () => [new Stack(), new Stack()],\n};\n",
     {"Stack", "Stack.prototype.push", "module.exports", "module.exports > create", "module.exports > make-two"}),
])
def test_a_chunk_holding_a_whole_class_cites_its_members(name, source, members):
    """A class that fits one chunk was cited under the class alone, its methods unlisted (a question
    about Stack.push found the chunk, the citation did not say where push is); a function held by a
    const (JavaScript's arrow functions), a property or an assignment (``Stack.prototype.push =
    function``) carried no name. A function's own inner functions and statements are not listed."""
    doc = parse_document(RawDocument(name, "", "h", len(source), "", source.encode()))
    chunks = chunk_document(doc, ChunkingProfile("p", strategy="code", max_tokens=256, min_tokens=50), COUNTER,
                            256).chunks
    assert len(chunks) == 1
    listed = set(chunks[0].sections) - {" > ".join(chunks[0].heading_path)}
    assert listed == members
    assert not any("inner" in s or "items" in s or "limit" in s for s in chunks[0].sections)


@pytest.mark.parametrize("name, source, paths", [
    ("stack.test.ts", "describe('Stack', () => {\n" + "".join(
        f"  it('{case}', () => {{\n" + "    const s = new Stack();\n" * 12 + "    expect(s.size).toBe(0);\n  });\n\n"
        for case in ("starts empty", "pushes", "pops")) + "  test.each([1, 2])('holds %i', (n) => expect(n).toBe(n));\n});\n",
     {("Stack", "starts empty"), ("Stack", "pushes"), ("Stack", "pops"), ("Stack", "holds %i")}),
    ("stack_spec.rb", "describe Stack do\n" + "".join(
        f"  it \"{case}\" do\n" + "    s = Stack.new\n" * 14 + "    expect(s.size).to eq(0)\n  end\n\n"
        for case in ("starts empty", "pushes", "pops")) + "end\n",
     {("Stack", "starts empty"), ("Stack", "pushes"), ("Stack", "pops")}),
    ("stack_test.exs", "defmodule StackTest do\n  describe \"push/2\" do\n" + "".join(
        f"    test \"{case}\" do\n" + "      assert Stack.new() == []\n" * 14 + "    end\n\n"
        for case in ("starts empty", "pushes", "pops")) + "  end\nend\n",
     {("StackTest", "push/2", "starts empty"), ("StackTest", "push/2", "pushes"), ("StackTest", "push/2", "pops")}),
])
def test_a_test_is_cited_by_its_description(name, source, paths):
    """A test is a call with a callback (Jest's and Mocha's it/test/describe, RSpec's, ExUnit's): its
    chunk was cited under nothing, or the file. Each test is now a definition named by its
    description, under its describe block's, a one-line test cited in the sections of the chunk
    holding it."""
    doc = parse_document(RawDocument(name, "", "h", len(source), "", source.encode()))
    chunks = chunk_document(doc, ChunkingProfile("p", strategy="code", max_tokens=128, min_tokens=20), COUNTER,
                            256).chunks
    cited = {c.heading_path for c in chunks} | {tuple(s.split(" > ")) for c in chunks for s in c.sections}
    assert paths <= cited
    for case in ("starts empty", "pushes", "pops"):  # each test (over min_tokens) is a chunk named after it
        held = [c for c in chunks if case in c.text]
        assert len(held) == 1 and held[0].heading_path[-1] == case, (case, [c.heading_path for c in held])


def test_a_web_route_is_cited_by_its_method_and_path():
    """A route's handler (Express's, Sinatra's) is a callback: cited under nothing, or the file. It is a
    definition named "GET /users/:id"; a client's request of a path (no handler) is not."""
    handler = "".join(f"  const {name} = await db.find(req.params.id);\n" for name in ("user", "team", "plan", "quota"))
    express = (f"app.get('/users/:id', async (req, res) => {{\n{handler * 4}  res.json(user);\n}});\n\n"
               f"router.post(\"/users\", (req, res) => {{\n{handler * 4}  res.status(201).end();\n}});\n\n"
               "axios.get('/api/users', {\n  headers: { Accept: 'application/json' },\n});\n")
    sinatra = "get '/' do\n  'Hello world!'\nend\n\npost '/users' do\n  User.create(params)\nend\n"
    for name, source, routes in (("server.js", express, {"GET /users/:id", "POST /users"}),
                                 ("app.rb", sinatra, {"GET /", "POST /users"})):
        doc = parse_document(RawDocument(name, "", "h", len(source), "", source.encode()))
        chunks = chunk_document(doc, ChunkingProfile("p", strategy="code", max_tokens=256, min_tokens=50), COUNTER,
                                256).chunks
        cited = {s for c in chunks for s in c.sections} | {" > ".join(c.heading_path) for c in chunks}
        assert routes <= cited and not any("/api/users" in s for s in cited), (name, cited)


@pytest.mark.parametrize("language", sorted(GRAMMARS))
def test_code_nested_thousands_deep_or_on_one_long_line_is_chunked_and_covered(language):
    """A pointer declarator 5,000 stars deep raised RecursionError naming the C function: the
    document failed at chunking."""
    texts = ["int *\n" + "*" * 5000 + "x;\n", "int f(void) {\n" + "{" * 3000 + "}" * 3000 + "\n}\n",
             "x = " + "(" * 4000 + "1" + ")" * 4000 + "\n", "var a = '" + "x" * 100_000 + "';\n"]
    for text in texts:
        spans = _chunks(language, text, 64, 50)
        covered = "".join(text[s.start : s.end] for s in spans)
        assert "".join(covered.split()) == "".join(text.split()), language


def test_a_code_document_s_chunks_say_which_language_read_them(tmp_path):
    """What the chunks asset's materialisation shows in the Dagster UI: the language its code was read
    as (the grammar, or Python's ast), beside the strategy; nothing for a document that is no code."""
    store = StageStore(tmp_path)
    docs = {"app/Stock.kt": "\n".join(_function("kotlin", n) for n in ("alpha", "beta")), "notes.md": "# Notes\n\nText.\n",
            "ci/load.groovy": "def load() {\n  return 1\n}\n"}
    for doc_id, text in docs.items():
        data = text.encode()
        snapshot_raw(store, RawDocument(doc_id, f"file:///{doc_id}", content_hash(data), len(data), "v1", data))
        parse_stage(store, doc_id)
    profile = ChunkingProfile("p", strategy="auto", max_tokens=128)
    shown = {doc_id: chunk_stage(store, doc_id, profile, COUNTER, 256).metadata for doc_id in docs}
    assert (shown["app/Stock.kt"]["strategy"], shown["app/Stock.kt"]["language"]) == ("code", "kotlin")
    assert "language" not in shown["notes.md"] and shown["ci/load.groovy"]["language"] == "definition lines"


lines = st.sampled_from(
    ["int f(int a) {", "}", "  return a;", "/* a comment", "   over lines */", "// note", "class K {", "fn main() {",
     "def x", "end", "fun k() {", "{", "if (x) {", "} else {", "", "x" * 300, "日本語の文です。", "    ", "#ifdef X",
     "#endif", '"an unterminated string', "#[derive(Debug)]", "struct S {", "  int a;", "function g() {", "};",
     "  total += stock * 2;", "package main", "import x from \"y\";", "<?php", "  log(a, b, c, d, e, f, g);"])
documents = st.lists(lines, max_size=60).map("\n".join)


@pytest.mark.parametrize("language", ["c", "cpp", "javascript", "rust", "kotlin", "ruby", "bash", "php", "sql", "powershell",
                                      "perl", "haskell", "zig", "hcl", "dart", "julia", "ocaml"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=documents, max_tokens=st.integers(16, 96), min_tokens=st.sampled_from([0, 30]))
def test_code_chunks_are_exact_covered_within_the_limit_and_deterministic(language, text, max_tokens, min_tokens):
    spans = _chunks(language, text, max_tokens, min_tokens)
    covered = bytearray(len(text))
    for span in spans:
        piece = text[span.start : span.end]
        assert 0 <= span.start < span.end <= len(text) and piece.strip()
        assert span.tokens == COUNTER.count(piece) <= max_tokens
        if span.context:
            assert COUNTER.count(span.context + piece) <= max_tokens + COUNTER.special_tokens + 2
        covered[span.start : span.end] = b"\x01" * (span.end - span.start)
    assert all(covered[i] or ch.isspace() for i, ch in enumerate(text))
    assert [s.start for s in spans] == sorted(s.start for s in spans)
    assert _chunks(language, text, max_tokens, min_tokens) == spans
