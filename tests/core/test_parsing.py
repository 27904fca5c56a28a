import base64
import copy
import io
import json
import random
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rag_assets.core.hashing import content_hash
from rag_assets.core.models import RawDocument
from rag_assets.core.parsing import DocumentError, ParseLimits, parse_document
from rag_assets.core.parsing.subtitles import _unmarked
from rag_assets.core.sources import list_disk, read_disk
from tests.support.bad_inputs import (binary_workbook, email_message, encrypted_docx, expanding_docx, legacy_workbook,
                                      notebook, outlook_message, pandoc_document, png, slide_deck, workbook)
from tests.support.opendocument import ODF_NAMESPACES, opendocument, saved_zip, spreadsheet

SAMPLE = Path(__file__).resolve().parents[2] / "sample_docs"


def raw(doc_id: str, data: bytes) -> RawDocument:
    return RawDocument(doc_id, f"file:///{doc_id}", content_hash(data), len(data), "v1", data)


def saved(office) -> bytes:
    """A python-docx, python-pptx or openpyxl document as its file's bytes."""
    out = io.BytesIO()
    office.save(out)
    return out.getvalue()


def heading_paths(doc) -> dict[str, tuple[str, ...]]:
    """Each element's text and heading path."""
    return {doc.text[e.start : e.end]: e.heading_path for e in doc.elements}


def test_every_sample_document_parses_with_exact_element_spans():
    refs = list_disk(SAMPLE, ("**/*",), ())
    assert len(refs) >= 10
    types = set()
    for ref in refs:
        doc = parse_document(read_disk(SAMPLE, ref.doc_id))
        types.add(doc.content_type)
        assert doc.text.strip()
        assert doc.elements, ref.doc_id
        for el in doc.elements:
            assert 0 <= el.start < el.end <= len(doc.text)
            assert doc.text[el.start : el.end].strip()
    assert {"markdown", "text", "html", "pdf", "docx", "code", "csv"} <= types


def test_markdown_text_is_the_file_as_read_and_heading_paths_nest():
    path = SAMPLE / "handbook" / "employee_handbook.md"
    doc = parse_document(read_disk(SAMPLE, "handbook/employee_handbook.md"))
    assert doc.text == path.read_text(encoding="utf-8")
    vacation = doc.text.index("27 days")
    el = next(e for e in doc.elements if e.start <= vacation < e.end)
    assert el.heading_path == ("Northwind Robotics Employee Handbook", "Time Off", "Vacation")
    table = next(e for e in doc.elements if e.category == "Table")
    assert doc.text[table.start : table.end].startswith("| Category |")


@pytest.mark.parametrize("text, title", [
    ("# Handbook\n\n## Leave\n\nText.\n\n## Pay\n\nMore.\n", "Handbook"),
    ("# Quick Guides\n\nText.\n\n# Using Smart Hub\n\nMore.\n", "tv manual"),
    ("Intro line.\n\n## Only section\n\nText.\n", "Only section"),
    ("No headings at all.\n", "tv manual"),
])
def test_markdown_title_is_the_sole_top_level_heading_else_the_file_name(text, title):
    assert parse_document(raw("docs/tv_manual.md", text.encode())).title == title


def test_markdown_headings_are_read_as_text_not_markup():
    text = ('# Stopping a DB Instance<a name="USER_StopInstance"></a>\n\nIntro.\n\n'
            '## Using **Multi\\-AZ** with `aws s3` and [the CLI](cli.md)<a name="x"></a>\n\nBody.\n')
    doc = parse_document(raw("guide/USER_StopInstance.md", text.encode()))
    body = next(e for e in doc.elements if "Body." in doc.text[e.start : e.end])
    assert body.heading_path == ("Stopping a DB Instance", "Using Multi-AZ with aws s3 and the CLI")
    assert doc.title == "Stopping a DB Instance"
    assert doc.text == text  # the text, and so every offset, is the file's


def test_hash_inside_a_code_fence_is_not_a_heading():
    text = "# Top\n\n```bash\n# just a comment\necho hi\n```\n\nAfter the fence.\n"
    doc = parse_document(raw("a.md", text.encode()))
    titles = [doc.text[e.start : e.end] for e in doc.elements if e.category == "Title"]
    assert titles == ["# Top"]
    after = next(e for e in doc.elements if "After the fence" in doc.text[e.start : e.end])
    assert after.heading_path == ("Top",)


@pytest.mark.parametrize("body", [
    "<!--\n## Deprecated: old procedure\nUse legacy.\n-->",
    "<pre>\n# /etc/app.conf\nworkers = 8\n</pre>",
    "<script>\n# not markdown\n</script>",
    "- ```bash\n  # install the CLI\n  pip install tool\n  ```\n- Then run it.",
    "1. Step:\n\n        ```\n        # indented under the item\n        ```",
    "```x``` is inline code, ```\n# no fence was opened above",
    "    ```\n    # indented code, no fence: it never swallows what follows",
    "{% highlight bash %}\n# install the CLI\npip install tool\n{% endhighlight %}",  # Jekyll
    "{%- raw -%}\n# {{ not liquid }}\n{%- endraw -%}",
    "{{< highlight go >}}\n# a comment\n{{< /highlight >}}",  # Hugo
    "{{< code lang=\"py\" >}}\n# a comment\n{{< /code >}}",
])
def test_lines_of_html_blocks_and_fences_in_list_items_are_never_headings(body):
    doc = parse_document(raw("docs/runbook.md", f"# Runbook\n\nIntro.\n\n{body}\n\n## Verify\n\nCheck it.\n".encode()))
    titles = [doc.text[e.start : e.end] for e in doc.elements if e.category == "Title"]
    if "no fence was opened" in body:
        assert titles == ["# Runbook", "# no fence was opened above", "## Verify"]
        return
    assert titles == ["# Runbook", "## Verify"] and doc.title == "Runbook"
    verify = next(e for e in doc.elements if doc.text[e.start : e.end] == "Check it.")
    assert verify.heading_path == ("Runbook", "Verify")


def test_an_html_heading_alone_on_its_line_is_a_heading():
    text = ('<p align="center"><img src="logo.png"></p>\n\n<h1 align="center">Widget <em>2</em></h1>\n\n'
            "Widget is fast.\n\n<h2>Install</h2>\n\npip install widget\n")
    doc = parse_document(raw("README.md", text.encode()))
    assert doc.title == "Widget 2"
    install = next(e for e in doc.elements if doc.text[e.start : e.end] == "pip install widget")
    assert install.heading_path == ("Widget 2", "Install")
    logo = parse_document(raw("README.md", b'<h1 align="center"><img src="logo.png"></h1>\n\nIntro.\n\n# Widget\n\nx\n'))
    assert logo.title == "Widget"  # an <h1> holding only a logo is no heading
    two = parse_document(raw("a.md", b"# T\n\n<h2>A</h2> <h2>B</h2>\n\ntext\n"))
    assert [two.text[e.start : e.end] for e in two.elements if e.category == "Title"] == ["# T"]


def test_setext_headings_are_headings_and_title_the_document():
    # pandoc's Markdown writer underlines level 1 and 2 headings ("setext"), as many READMEs do
    text = ("Main Title\n==========\n\nIntro.\n\nInstall\nGuide\n---\n\nRun it.\n\n### Deep\n\nDeep text.\n\n"
            "Usage\n-----\n\nUse it.\n\n---\n\nAfter a rule.\n\n- an item\n---\n")
    doc = parse_document(raw("docs/readme.md", text.encode()))
    titles = [(doc.text[e.start:e.end], e.heading_path) for e in doc.elements if e.category == "Title"]
    assert titles == [("Main Title", ("Main Title",)),
                      ("Install\nGuide", ("Main Title", "Install Guide")),  # a paragraph's lines, joined
                      ("### Deep", ("Main Title", "Install Guide", "Deep")),
                      ("Usage", ("Main Title", "Usage"))]  # a rule after a blank line or a list item is none
    assert doc.title == "Main Title"
    assert next(e for e in doc.elements if "After a rule" in doc.text[e.start:e.end]).heading_path == ("Main Title", "Usage")
    # the page shows underlines as a heading's style and rules as lines, not as "=====" to embed
    assert "==" not in doc.text and "---" not in doc.text and "- an item" in doc.text
    assert doc.text.split() == [w for w in text.split() if w.strip("=-") or w == "-"]  # the item's marker stays


def test_thematic_breaks_are_left_out_wherever_they_end_a_block():
    text = ("# Notes\n\nFirst part.\n***\nSecond part.\n\n* * *\n\n- item one\n- item two\n___\n"
            "| a | b |\n|---|---|\n| 1 | 2 |\n- - -\n```\n---\n```\nEnd.\n")
    doc = parse_document(raw("notes.md", text.encode()))
    blocks = [(e.category, doc.text[e.start:e.end]) for e in doc.elements]
    assert blocks == [("Title", "# Notes"), ("NarrativeText", "First part."), ("NarrativeText", "Second part."),
                      ("ListItem", "- item one\n- item two"), ("Table", "| a | b |\n|---|---|\n| 1 | 2 |"),
                      ("CodeSnippet", "```\n---\n```\n"), ("NarrativeText", "End.")]  # a rule in code stays
    assert "***" not in doc.text and "* * *" not in doc.text and "___" not in doc.text and "- - -" not in doc.text


def _titles(doc) -> list[tuple[str, ...]]:
    return [e.heading_path for e in doc.elements if e.category == "Title"]


def test_a_fence_line_indented_past_its_text_is_code_and_one_in_a_list_item_opens_there():
    # a YAML block scalar holding a fence, indented 4 columns: lines of the code, not its end (the real end then
    # opened a fence that swallowed the rest of the page)
    inner = parse_document(raw("ci.md", b"# CI\n\n```yaml\nbody: |\n    ```\n    npm test\n    ```\n```\n\n"
                                        b"## Permissions\n\nGrant write access.\n"))
    assert _titles(inner) == [("CI",), ("CI", "Permissions")]
    code = next(e for e in inner.elements if e.category == "CodeSnippet")
    assert inner.text[code.start : code.end].rstrip().endswith("    ```\n```")
    # a fence in a list item's text, indented 4 columns under "* ", closes 3 columns in: then the page goes on
    listed = parse_document(raw("setup.md", b"# Setup\n\n* Install:\n\n    ```bash\n    # as root\n    npm i\n   ```\n\n"
                                           b"## Usage\n\nRun it.\n"))
    assert _titles(listed) == [("Setup",), ("Setup", "Usage")]  # "# as root" is code
    assert [listed.text[e.start : e.end] for e in listed.elements if e.category == "CodeSnippet"] \
        == ["    ```bash\n    # as root\n    npm i\n   ```\n"]
    # a heading ends the list: a fence indented under it after the heading is indented code, which opens nothing
    ended = parse_document(raw("ended.md", b"- a\n## H\n    ```\n    code\n\nText\n\n## Next\n\nmore\n"))
    assert _titles(ended) == [("H",), ("Next",)]
    # back in the outer item's text after a nested item: the fence there closes within 3 columns of that text
    nested = parse_document(raw("nested.md", b"1. a\n   - b\n\n   ```\n   x\n    ```\n\n# After\n\ntext\n"))
    assert _titles(nested) == [("After",)]


def test_hugo_and_jekyll_code_blocks_end_at_their_own_closing_tag():
    text = ("# Build\n\n{{< code-toggle config=build />}}\n\n## Options\n\n"  # another shortcode, closed on its line
            "{{< code >}}\ncd /code/app\n# a comment\n{{< /code >}}\n\n## Paths\n\n"  # "/code/app" ends nothing
            "{{< highlight go >}}\n# another\n{{</ highlight >}}\n\n## Go\n\n"  # spaces in the closing tag
            "{%- highlight ruby -%}\n# ruby\n{%- endhighlight -%}\n\n## Ruby\n\n"
            "{{< code-toggle file=hugo >}}\n# Site settings\nbaseURL = 1\n{{< /code-toggle >}}\n\ntext\n")  # paired: code
    doc = parse_document(raw("build.md", text.encode()))
    assert _titles(doc) == [("Build",), ("Build", "Options"), ("Build", "Paths"), ("Build", "Go"), ("Build", "Ruby")]
    assert [doc.text[e.start : e.end].splitlines()[1] for e in doc.elements if e.category == "CodeSnippet"] \
        == ["cd /code/app", "# another", "# ruby", "# Site settings"]


def test_an_atx_headings_closing_hashes_need_a_space_and_a_hash_alone_is_no_heading():
    doc = parse_document(raw("csharp.md", b"# Guide ##\n\n## Example in C#\n\ntext\n\n#\n\n#hashtag\n\n### F# ###\n\nx\n"))
    assert _titles(doc) == [("Guide",), ("Guide", "Example in C#"), ("Guide", "Example in C#", "F#")]
    assert doc.title == "Guide"


@pytest.mark.parametrize("text", ["# a" + " " * 20_000 + "b\n", "# a" + "\t" * 20_000 + "x #\n",
                                  "[" * 200_000 + "\n---\n", "# " + "`a " * 60_000 + "\n",
                                  "# Some paragraph\n-" + " " * 80_000 + "|x\n"])
def test_a_long_heading_line_is_read_in_one_pass(text):
    """The heading pattern matched a run of spaces every way it could be cut (20,000: hours), and
    inline markup was matched from each unclosed "[" or "`" (200 kB: minutes): a heading's text is its
    first 1,000 characters."""
    doc = parse_document(raw("long.md", text.encode()))
    assert 0 < len(doc.title) <= 1_000 and text.split("\n")[0].strip() in doc.text


def test_a_gfm_table_without_outer_pipes_is_a_table():
    text = ("# Formats\n\nThe formats we read:\nName | Value\n:--- | ---:\nfoo | 1\nbar | 2\n---\n\n"
            "Prose | with a pipe\nand no delimiter row.\n")
    doc = parse_document(raw("formats.md", text.encode()))
    blocks = [(e.category, doc.text[e.start : e.end]) for e in doc.elements]
    assert blocks == [("Title", "# Formats"), ("NarrativeText", "The formats we read:"),
                      ("Table", "Name | Value\n:--- | ---:\nfoo | 1\nbar | 2"),  # under it a rule, not a heading
                      ("NarrativeText", "Prose | with a pipe\nand no delimiter row.")]
    assert _titles(doc) == [("Formats",)]
    after = parse_document(raw("after.md", b"a | b\n--|--\nx | y\n- list | item\n\n    c | d\n--|--\n"))
    assert [(e.category, after.text[e.start : e.end]) for e in after.elements][:2] == \
        [("Table", "a | b\n--|--\nx | y"), ("ListItem", "- list | item")]  # a list item ends the table
    assert all(e.category != "Table" or "c | d" not in after.text[e.start : e.end] for e in after.elements)  # code

def test_a_quote_or_indented_code_over_a_line_of_dashes_is_no_heading():
    doc = parse_document(raw("notes.md", b"# Notes\n\n> Note: see below.\n---\n\nText.\n\n    code\n    ---\n\nEnd.\n"))
    assert _titles(doc) == [("Notes",)]
    assert "> Note: see below." in doc.text and "    ---" in doc.text  # the rule goes; the code's line stays


def test_markdown_lines_end_at_newlines_only_and_notebooks_crlf_cells_read_as_lines():
    doc = parse_document(raw("form.md", "# Form\n\npara\u2028# not a heading\x0cstill the paragraph\n".encode()))
    assert _titles(doc) == [("Form",)]
    cells = [{"cell_type": "markdown", "source": ["# Title\r\n", "```bash\r\n", "x\r\n", "```\r\n"]},
             {"cell_type": "markdown", "source": ["## Next\r\n", "\r\n", "text\r\n"]}]
    notebook = parse_document(raw("nb.ipynb", json.dumps({"cells": cells, "metadata": {}, "nbformat": 4}).encode()))
    assert _titles(notebook) == [("Title",), ("Title", "Next")] and "\r" not in notebook.text


def test_lines_of_indented_code_are_kept_though_they_look_like_comments_or_imports():
    doc = parse_document(raw("usage.md", b'# Usage\n\nUsage:\n\n    import foo from "foo";\n\n    <!-- TODO -->\n\nDone.\n'))
    assert 'import foo from "foo";' in doc.text and "<!-- TODO -->" in doc.text


def _blocks(doc) -> list[tuple[str, str]]:
    return [(e.category, doc.text[e.start : e.end]) for e in doc.elements]


def test_indented_code_is_one_code_block_whose_markers_and_pipes_are_code():
    """Indented code read as prose: its "- " line a list item, its "|" line a table row, each comment a
    sentence. CommonMark: lines indented 4 columns past their text, blank lines within, not a paragraph's."""
    text = ("# Config\n\nWrite this:\n\n    # workers\n    - name: a\n\n    | not | a table |\n\nThen restart.\n"
            "A paragraph goes on\n    on an indented line.\n\n- An item:\n\n      item code\n\n  Item text.\n")
    doc = parse_document(raw("config.md", text.encode()))
    assert _blocks(doc) == [("Title", "# Config"), ("NarrativeText", "Write this:"),
                            ("CodeSnippet", "    # workers\n    - name: a\n\n    | not | a table |"),
                            ("NarrativeText", "Then restart.\nA paragraph goes on\n    on an indented line."),
                            ("ListItem", "- An item:"), ("CodeSnippet", "      item code"),  # 4 past the item's text
                            ("NarrativeText", "  Item text.")]
    assert all(e.heading_path == ("Config",) for e in doc.elements)


def test_an_unclosed_fence_in_a_list_item_ends_with_the_item():
    text = "# Steps\n\n1. Run:\n   ```bash\n   make\n\n## Verify\n\nCheck the logs.\n\n- ```\n  x\ny\n"
    doc = parse_document(raw("steps.md", text.encode()))
    assert _titles(doc) == [("Steps",), ("Steps", "Verify")]
    assert [t for kind, t in _blocks(doc) if kind == "CodeSnippet"] == ["   ```bash\n   make", "- ```\n  x"]
    assert _blocks(doc)[-1] == ("NarrativeText", "y")  # left of the item's text: the item and its fence end


def test_an_mkdocs_admonitions_content_is_text_and_a_fence_in_it_code():
    text = ('# Setup\n\n!!! note "Heads up"\n\n    Back up first.\n\n    ```yaml\n    # keep\n    - a\n    ```\n\n'
            '=== "Linux"\n\n    Run the script.\n\n        ./install.sh\n\nDone.\n')
    doc = parse_document(raw("docs/setup.md", text.encode()))
    assert _blocks(doc) == [("Title", "# Setup"), ("NarrativeText", "Heads up"), ("NarrativeText", "    Back up first."),
                            ("CodeSnippet", "    ```yaml\n    # keep\n    - a\n    ```\n"), ("NarrativeText", "Linux"),
                            ("NarrativeText", "    Run the script."), ("CodeSnippet", "        ./install.sh"),
                            ("NarrativeText", "Done.")]
    # a definition's text (Python-Markdown's ":   ") holds its indented lines as a list item does
    listed = parse_document(raw("docs/options.md", b'`mode`\n\n:   How to read it:\n\n    === "View"\n\n'
                                                   b'        ```yaml\n        mode: view\n        ```\n'))
    assert _blocks(listed)[2:] == [("NarrativeText", "    View"),
                                   ("CodeSnippet", "        ```yaml\n        mode: view\n        ```\n")]


def test_a_fence_in_a_block_quote_is_code_up_to_its_closing_line_or_the_quote_s_end():
    text = ("# Build\n\n> [!TIP]\n> Cross-compile it:\n> ```bash\n> # the toolchain first\n> - make\n> ```\n> Done.\n\n"
            "> > ```\n> > nested\n> > ```\n\n> ```\n> never closed\n\nAfter.\n\n## Next\n\ntext\n")
    doc = parse_document(raw("build.md", text.encode()))
    assert _titles(doc) == [("Build",), ("Build", "Next")]
    assert [t for kind, t in _blocks(doc) if kind == "CodeSnippet"] == [
        "> ```bash\n> # the toolchain first\n> - make\n> ```\n", "> > ```\n> > nested\n> > ```\n", "> ```\n> never closed"]
    assert ("NarrativeText", "> Done.") in _blocks(doc) and ("NarrativeText", "After.") in _blocks(doc)


def test_link_reference_definitions_are_left_out_as_the_page_shows_none():
    """A page's "[label]: url" lines were indexed as text: in mkdocs-material's docs 8.9% of the indexed
    characters, 131 of 2,219 rows mostly URLs."""
    text = ('# Guide\n\nSee the [docs] and the [API][api].\n\n[docs]: https://example.com/docs "Docs"\n'
            "  [api]: <https://example.com/api>\n[^1]: A footnote, which the page shows.\n\n"
            "[Note]: this line is prose, not a definition.\n\n[a]: /x\nText after a definition.\n\n"
            "A paragraph\n[b]: /in-a-paragraph\n")
    doc = parse_document(raw("guide.md", text.encode()))
    assert "example.com" not in doc.text and "/x" not in doc.text
    assert _blocks(doc) == [("Title", "# Guide"), ("NarrativeText", "See the [docs] and the [API][api]."),
                            ("NarrativeText", "[^1]: A footnote, which the page shows."),
                            ("NarrativeText", "[Note]: this line is prose, not a definition."),
                            ("NarrativeText", "Text after a definition."),
                            ("NarrativeText", "A paragraph\n[b]: /in-a-paragraph")]  # no definition interrupts one
    with pytest.raises(DocumentError, match="links.md: the page shows no text .* exclude globs"):
        parse_document(raw("links.md", b"  [docs]: https://example.com/docs\n<!-- shared by every page -->\n"))


def test_an_html_table_in_markdown_reads_as_a_markdown_table_and_other_html_blocks_as_their_text():
    """Node.js' API docs and many READMEs write their tables in HTML: the tags were read as text,
    so the table was neither cited nor chunked by rows. Headed where its markup marks a header row
    (merged cells repeated, a line break a space); one cut by a blank line, or a table of tables
    (a layout), is left as written. A README's centred banner or <details> box reads as its text
    (a line a block, a picture its alt text), an HTML heading as a Markdown one; one holding
    preformatted text is left as written, and so is inline HTML in prose."""
    md = ("# Signals\n\n<table>\n  <tr>\n    <th>Constant</th>\n    <th>Description</th>\n  </tr>\n  <tr>\n"
          "    <td><code>SIGINT</code></td>\n    <td>Sent on <kbd>Ctrl</kbd>+<kbd>C</kbd>.<br>Stops the process.</td>\n"
          '  </tr>\n  <tr><td colspan="2">Both are POSIX.</td></tr>\n</table>\n\nText.\n\n  <TABLE><tr><td>no</td>'
          "<td>header</td></tr></TABLE>\n\n<table><tr><td>a</td></tr>\n\n<tr><td>b</td></tr></table>\n\n"
          "<table><tr><td><table><tr><td>inner</td></tr></table></td></tr></table>\n")
    doc = parse_document(raw("api/os.md", md.encode()))
    assert [(doc.text[e.start : e.end], e.category) for e in doc.elements][:4] == [
        ("# Signals", "Title"),
        ("| Constant | Description |\n| --- | --- |\n| SIGINT | Sent on Ctrl+C. Stops the process. |\n"
         "| Both are POSIX. | Both are POSIX. |", "Table"), ("Text.", "NarrativeText"), ("| no | header |", "Table")]
    assert "<table><tr><td>a</td></tr>" in doc.text and "<table><tr><td><table>" in doc.text
    readme = ('<h1 align="center">Acme <i>Gate</i></h1>\n\n'  # a heading as Markdown writes it
              '<p align="center"><img src="logo.svg" alt="Acme Gate"><br><b>Fast gate control</b> for warehouses.</p>\n\n'
              "<details>\n\n<summary>Why offline?</summary>\n\nDocks lose <b>Wi-Fi</b>.\n\n</details>\n\n"
              "<div><pre>gate:\n  open: true</pre></div>\n")
    doc = parse_document(raw("README.md", readme.encode()))
    assert [doc.text[e.start : e.end] for e in doc.elements] == [
        "# Acme Gate", "Acme Gate\nFast gate control for warehouses.", "Why offline?", "Docks lose <b>Wi-Fi</b>.",
        "<div><pre>gate:\n  open: true</pre></div>"]
    assert doc.elements[-1].heading_path == ("Acme Gate",)


def test_a_markdown_page_s_table_of_contents_is_left_out_as_a_web_page_s_is():
    """A README's "## Table of contents" list of links to its own sections (21 of 404 Markdown
    files on this machine: Node.js' docs, npm's READMEs) was a chunk of section names, as a web
    page's was before it was left out."""
    text = ("# Node.js\n\n## Table of contents\n\n* [Support](#support)\n* [Release types](#release-types)\n"
            "  * [Download](#download)\n* [`verify()`](#verify), [2. \\<nodejs.org> access](#access)\n\n"
            "## Support\n\nSee [Download](#download).\n\n- [save](#save) keeps it\n- [global](#global) installs it\n"
            "- [x](#x)\n\n- [Setup](#setup)\n- [Usage](#usage)\n\n1. [Install](install.md)\n2. [Use](use.md)\n"
            "3. [API](api.md)\n\n## More\n\n- [A](#a)\n- [B](#b)\n- [C](#c)\n\nThe end.\n")
    doc = parse_document(raw("README.md", text.encode()))
    assert "Table of contents" not in doc.text and "Release types" not in doc.text and "access" not in doc.text
    assert "[A](#a)" not in doc.text  # a list under a heading that heads more is left out, the heading kept
    for kept in ("See [Download](#download).", "[save](#save) keeps it", "[Setup](#setup)\n- [Usage](#usage)",
                 "[Install](install.md)", "## More", "The end."):
        assert kept in doc.text, kept  # items with text of their own, a list of two, links to other pages
    assert [e.heading_path for e in doc.elements if e.category == "Title"] == [
        ("Node.js",), ("Node.js", "Support"), ("Node.js", "More")]
    assert all(doc.text[e.start : e.end].strip() for e in doc.elements)


def test_a_fence_closes_only_on_a_line_of_its_character_at_least_as_long():
    text = ("# Writing Guide\n\n````markdown\n```yaml\n# this is YAML\n```\n````\n\n~~~\n```\n# still code\n~~~~\n\n"
            "## Review process\n\nText.\n")
    doc = parse_document(raw("docs/guide.md", text.encode()))
    assert [e.heading_path for e in doc.elements if e.category == "Title"] == [
        ("Writing Guide",), ("Writing Guide", "Review process")]
    code = [doc.text[e.start:e.end] for e in doc.elements if e.category == "CodeSnippet"]
    assert code == ["````markdown\n```yaml\n# this is YAML\n```\n````\n", "~~~\n```\n# still code\n~~~~\n"]
    assert doc.title == "Writing Guide"


@pytest.mark.parametrize("head", ["---\ntitle: [unclosed\n---\n", "---\nowner: billing\n\nteam: payments\n---\n"])
def test_a_front_matter_block_is_no_setext_heading(head):
    doc = parse_document(raw("docs/deploy-runbook.md", (head + "\nRun the pipeline.\n\n## Rollback\n\nUse it.\n").encode()))
    assert [e.heading_path for e in doc.elements if e.category == "Title"] == [("Rollback",)]
    assert doc.text[doc.elements[0].start:doc.elements[0].end] == head.rstrip()


def test_a_web_page_s_faq_details_and_figure_captions_are_read():
    page = ("<html><head><title>Support FAQ</title></head><body><h1>Support FAQ</h1>"
            "<details><summary>How do I reset my password?</summary><p>Open Settings and click Reset.</p></details>"
            "<DETAILS open><SUMMARY>Can I get a refund?</SUMMARY>Within 30 days.</DETAILS>"
            "<figure><img src='u.png'><figcaption>Figure 1: uptime was 99.95%.</figcaption></figure></body></html>")
    doc = parse_document(raw("help/faq.html", page.encode()))
    for said in ("How do I reset my password?", "Open Settings and click Reset.", "Can I get a refund?",
                 "Within 30 days.", "Figure 1: uptime was 99.95%."):
        assert said in doc.text
        element = next(e for e in doc.elements if said in doc.text[e.start:e.end])
        assert element.heading_path[:1] == ("Support FAQ",)


def test_a_web_page_s_aria_navigation_and_heading_permalinks_are_left_out():
    """Node.js' API pages: every page's first chunks were its sidebar of 60 links, version picker and
    table of contents (marked role="navigation", its content role="main"), its headings "Path#"; the
    Rust book's pages ended in the site's copyright footer; a
    Sphinx page's read "Install¶", rustdoc's "§Examples", Docusaurus' ended in a zero-width space."""
    page = ("<html><head><title>Path | Node.js</title></head><body><a href='#apicontent'>Skip to content</a>"
            "<div role='navigation' id='column2'><ul><li><a href='fs.html'>File system</a></li></ul></div>"
            "<div id='column1'><header><h1>Node.js v20 documentation</h1><a href='v18/'>Other versions</a></header>"
            "<details ROLE='doc-toc navigation' open><summary>Table of contents</summary><a href='#sep'>path.sep</a>"
            "</details><div role='main' id='apicontent'><h2>Path<a class='mark' href='#path'>#</a></h2>"
            "<nav class='contents' role='doc-toc'><p>Contents: path.sep, Examples</p></nav>"
            "<div role='doc-toc'><p>On this page: path.sep</p></div>"
            "<p>Utilities for file paths.</p><h3>path.sep<a class='headerlink' href='#sep' title='Link'>&para;</a></h3>"
            "<p>The segment separator.</p><h3><a href='#ex' class='doc-anchor'>§</a>Examples<a href='#ex' "
            "class='hash-link'>\u200b</a></h3><p>Use it.</p>"
            "<p>Issue <a href='#n3'>#3</a> and <a href='https://acme.example/#x'>#</a> stay.</p></div></div></body></html>")
    doc = parse_document(raw("api/path.html", page.encode()))
    assert doc.text == ("Path\n\nUtilities for file paths.\n\npath.sep\n\nThe segment separator.\n\nExamples\n\n"
                        "Use it.\n\nIssue #3 and # stay.")
    assert [e.heading_path for e in doc.elements if e.category == "Title"] == [
        ("Path",), ("Path", "path.sep"), ("Path", "Examples")]
    # no main landmark: the navigation alone goes; a role on a wrapper of the main content keeps it
    for body, kept in (("<div role=search><p>Search the docs</p></div><p>Body text.</p>", "Body text."),
                       ("<table summary='Navigation header'><tr><td><a href=p.html>Prev</a></td><td>Next</td></tr>"
                        "</table><p>Chapter text.</p>", "Chapter text."),  # DocBook's Prev/Up/Next bar
                       ("<div role=banner><p>Acme Docs</p></div><p>Page text.</p><footer><p>(c) 2026 Acme.</p></footer>"
                        "<article><p>Post.</p><footer><p>By Ann.</p></footer></article>",
                        "Page text.\n\nPost.\n\nBy Ann."),  # the site's banner and footer; an article's footer stays
                       ("<div role=navigation><main><p>Main text.</p></main></div>", "Main text.")):
        assert parse_document(raw("a.html", f"<html><body>{body}</body></html>".encode())).text == kept


def test_a_web_page_s_unmarked_table_of_contents_is_left_out():
    """npm's docs (and a Confluence page's Table of Contents macro) list every section as a link to its
    place on the page with no role: 86 of 93 npm pages began with a chunk of section names."""
    page = ("<html><body><h1>npm-install</h1><section><h2>Table of contents</h2><ul><li><a href='#synopsis'>Synopsis"
            "</a></li><li><a href='#config'>Configuration</a></li><ul><li><a href='#save'><code>save</code></a></li>"
            "<li><a href='#global'><code>global</code></a></li></ul><li><a href='#see-also'>See Also</a></li></ul>"
            "</section><h3 id='synopsis'>Synopsis</h3><p>Run it. See <a href='#config'>Configuration</a>.</p>"
            "<ul><li><a href='#save'>save</a> keeps it</li><li><a href='#global'>global</a> installs it</li>"
            "<li><a href='#x'>x</a> and more</li></ul><ul><li><a href='#a'>Setup</a></li><li><a href='#b'>Usage</a>"
            "</li></ul><ol><li>A note. <a href='#r1'>↩</a></li><li>B note. <a href='#r2'>↩</a></li>"
            "<li>C note. <a href='#r3'>↩</a></li></ol></body></html>")
    doc = parse_document(raw("commands/npm-install.html", page.encode()))
    assert "See Also" not in doc.text and "Configuration\n" not in doc.text and "global\n" not in doc.text
    for kept in ("Run it. See Configuration.", "save keeps it", "Setup", "Usage", "A note. ↩"):
        assert kept in doc.text, kept  # items with text of their own, a list of two links, footnotes
    # the contents' own title goes with them: it headed the page's (h3) sections after it
    assert "Table of contents" not in doc.text
    assert next(e for e in doc.elements if doc.text[e.start : e.end] == "Run it. See Configuration.").heading_path == (
        "npm-install", "Synopsis")


def test_a_page_nested_past_the_html_parser_s_depth_is_read_whole_or_refused():
    """lxml's HTML parser stops at 255 levels: a page of unclosed <font> tags (old or generated
    HTML) lost everything after part 126, a tail after 300 nested divs too, with no error."""
    unclosed = "<html><body><p>intro</p>" + "".join(f"<p><font color=red>Part {i}: text" for i in range(400))
    doc = parse_document(raw("old/unclosed.html", (unclosed + "<p>lastword</p></body></html>").encode()))
    assert all(f"Part {i}: text" in doc.text for i in range(400)) and doc.text.rstrip().endswith("lastword")
    assert doc.text[doc.elements[-1].start:doc.elements[-1].end].endswith("lastword")
    divs = "<html><body><p>intro</p>" + "<div>" * 300 + "deepword" + "</div>" * 300 + "<p>Tail tailword.</p></body></html>"
    assert "deepword" in (text := parse_document(raw("old/divs.html", divs.encode())).text) and "tailword" in text
    with pytest.raises(DocumentError, match="old/endless.html: .*nest too deep for the HTML parser to read it all"):
        parse_document(raw("old/endless.html", (unclosed * 10).encode()))


@pytest.mark.parametrize("charset, words", [("shift_jis", "保守マニュアル"), ("gb2312", "维护手册"),
                                             ("windows-1251", "Меняйте щётки"), ("iso-8859-1", "Preis: 20 € für Öl")])
def test_a_web_page_is_decoded_by_the_charset_it_declares(charset, words):
    page = f'<html><head><meta charset="{charset}"><title>T</title></head><body><p>{words}</p></body></html>'
    codec = "cp1252" if charset == "iso-8859-1" else charset  # as browsers read ISO-8859-1
    doc = parse_document(raw("pages/manual.html", page.encode(codec)))
    assert words in doc.text
    http_equiv = page.replace(f'<meta charset="{charset}">', f'<meta http-equiv="Content-Type" content="text/html; charset={charset}">')
    assert words in parse_document(raw("pages/manual.html", http_equiv.encode(codec))).text


def test_pdf_pages_and_html_scripts():
    pdf = parse_document(read_disk(SAMPLE, "handbook/robot_maintenance_guide.pdf"))
    assert {e.page for e in pdf.elements} == {1, 2, 3}
    battery = pdf.text.index("500 full charge cycles")
    assert next(e.page for e in pdf.elements if e.start <= battery < e.end) == 3
    html = parse_document(read_disk(SAMPLE, "support/security_policy.html"))
    assert html.title == "Information Security Policy"
    assert "window.analytics" not in html.text and "font-family" not in html.text
    assert "hardware key" in html.text


def test_a_slide_deck_parses_slide_by_slide_with_its_notes_after_each_slide():
    deck = parse_document(raw("sales/q3 review.pptx", slide_deck()))
    assert (deck.content_type, deck.title) == ("pptx", "Quarterly Robot Review")
    spans = {deck.text[e.start:e.end]: e for e in deck.elements}
    notes = spans["Mention the supply of part NW-BATT-5200."]
    assert (notes.page, notes.heading_path) == (2, ("Battery returns",))  # the slide it annotates
    assert notes.start > spans["Most returns came from robots stored in hot cars."].start
    assert (spans["Battery returns"].category, spans["Battery returns"].page) == ("Title", 2)
    table = next(e for e in deck.elements if e.category == "Table")
    assert (table.page, table.heading_path) == (3, ("Sales by region",))
    assert deck.text[table.start:table.end] == "| Region | Units |\n| --- | --- |\n| EMEA | 1200 |\n| Americas | 950 |"


def test_a_slide_s_one_heading_is_its_title_and_short_bullets_or_a_subtitle_are_text_under_it():
    from pptx import Presentation

    deck = Presentation()
    cover = deck.slides.add_slide(deck.slide_layouts[0])
    cover.shapes.title.text_frame.text = "Q3"
    cover.shapes.title.text_frame.add_paragraph().text = "Review"  # Enter pressed in the title
    cover.placeholders[1].text = "Finance team"
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Highlights"
    body = slide.placeholders[1].text_frame
    body.text = "Revenue up 12% year on year"
    for text, level in [("EMEA grew fastest", 1), ("APAC flat", 1), ("Churn down to 3.1%", 0)]:
        paragraph = body.add_paragraph()
        paragraph.text, paragraph.level = text, level
    slide.notes_slide.notes_text_frame.text = "Growth came from the Lyon distributor."
    doc = parse_document(raw("q3.pptx", saved(deck)))
    assert [doc.text[e.start : e.end] for e in doc.elements if e.category == "Title"][-1] == "Highlights"
    assert doc.title in ("Q3", "Q3\nReview", "Q3 Review")  # however unstructured splits a title of two lines
    paths = heading_paths(doc)
    assert paths["Finance team"] == (doc.title,)
    assert paths["Churn down to 3.1%"] == paths["Growth came from the Lyon distributor."] == ("Highlights",)


@pytest.mark.parametrize("head, title, shown", [
    ("---\nid: deploy-runbook\ntitle: Deploying the **billing** service\ntags: [billing]\n---\n", "Deploying the billing service",
     None),
    ("+++\ntitle = \"Deploying billing\"\ndraft = false\n+++\n", "Deploying billing", None),  # Hugo's TOML
    ("---\r\ntitle: Written on Windows\r\n...\r\n", "Written on Windows", "---\ntitle: Written on Windows\n...\n"),
    ("---\nid: no-title\n---\n", "Rollback", None),  # no title: the sole heading, as without front matter
    ("---\ntitle: [unclosed\n---\n", "Rollback", None),  # not YAML
    # no front matter: the page shows its "---" as a rule, which is left out of the text
    ("---\ntitle: mismatched\n+++\n", "Rollback", "\ntitle: mismatched\n+++\n"),
    ("---\n\nA rule, then a paragraph with title: in it.\n\n", "Rollback", "\n\nA rule, then a paragraph with title: in it."),
])
def test_a_markdown_files_front_matter_names_it(head, title, shown):
    doc = parse_document(raw("docs/deploy-runbook.md", (head + "\nRun the pipeline.\n\n## Rollback\n\nUse the last tag.\n").encode()))
    assert doc.title == title
    assert doc.text.startswith(shown or head)  # the text is the file's, front matter included


@pytest.mark.parametrize("head, tags", [
    ("---\ntitle: Deploy\ntags: [billing, \"on call\", billing]\n---\n", ("billing", "on call")),
    ("---\ntags:\n  - billing\n  - 2026\n---\n", ("billing", "2026")),
    ("---\ntags: billing, on call\n---\n", ("billing", "on call")),  # one string: comma-separated
    ("---\ntags: billing release\n---\n", ("billing", "release")),  # Jekyll: space-separated
    ("---\ntags: [\"a,b\", \"  spaced   out \"]\n---\n", ("a", "b", "spaced out")),  # commas delimit the column
    ("+++\ntags = [\"billing\"]\n+++\n", ("billing",)),
    ("---\ntags: {billing: true}\n---\n", ()),
    ("---\ntitle: No tags\n---\n", ()),
])
def test_a_markdown_files_front_matter_tags_it(head, tags):
    doc = parse_document(raw("docs/deploy.md", (head + "\nRun the pipeline.\n").encode()))
    assert doc.tags == tags
    assert parse_document(raw("docs/deploy.txt", (head + "\nRun the pipeline.\n").encode())).tags == ()  # not Markdown


def test_a_plain_text_s_underlined_titles_are_its_headings():
    """Release notes, specs and READMEs in plain text underline their titles (338 of 739 such files
    here: git's release notes, dpkg's specs): they were read as paragraphs, under no heading, each
    underline embedded as a token a "="."""
    notes = ("Acme 2.0 Release Notes\n======================\n\nUpdates since 1.9\n-----------------\n\n"
             " * Faster sync.\n\nFixes since 1.9\n---------------\n\nThe crash on exit is gone.\n\n----\n\n"
             "Review the draft.\n-----\nAn old message.\n\nThanks,\nBob\n-----\n")
    doc = parse_document(raw("notes/2.0.txt", notes.encode()))
    assert doc.text == ("Acme 2.0 Release Notes\n\nUpdates since 1.9\n\n * Faster sync.\n\nFixes since 1.9\n\n"
                        "The crash on exit is gone.\n\n\nReview the draft.\n-----\nAn old message.\n\n"
                        "Thanks,\nBob\n-----\n")  # a rule shorter than the line above, or under a paragraph, is no underline
    paths = heading_paths(doc)
    assert paths["* Faster sync."] == ("Acme 2.0 Release Notes", "Updates since 1.9")
    assert paths["Thanks,\nBob\n-----"] == ("Acme 2.0 Release Notes", "Fixes since 1.9")
    assert doc.title == "Acme 2.0 Release Notes"
    plain = "Notes\nfrom Monday.\n\n---\n\nMore notes.\n"  # no title: read as it was, rule and all
    assert parse_document(raw("notes/monday.txt", plain.encode())).text == plain


MDX = """---
title: Install the CLI
---
import Tabs from '@theme/Tabs';

## Linux

```{bash}
# not a heading: inside a fence
curl -sSL https://example.com/install.sh | sh
```

Run `rag --help` to check.
"""


@pytest.mark.parametrize("name", ["docs/install.mdx", "docs/install.qmd", "docs/install.Rmd"])
def test_mdx_quarto_and_r_markdown_read_as_markdown(name):
    doc = parse_document(raw(name, MDX.encode()))
    shown = MDX.replace("import Tabs from '@theme/Tabs';", "")  # MDX's module lines: no renderer shows them
    assert (doc.content_type, doc.title, doc.text) == ("markdown", "Install the CLI", shown)  # was: text, "install"
    spans = {doc.text[e.start:e.end]: e for e in doc.elements}
    assert spans["Run `rag --help` to check."].heading_path == ("Linux",)
    assert next(e for e in doc.elements if "curl" in doc.text[e.start:e.end]).category == "CodeSnippet"


RST = """=================
 Deployment guide
=================

How we ship the billing service.

Install
=======

Run the installer::

    ./install.sh --prod

Linux
-----

- Use apt.

Use
===

A two-line paragraph
is no title, nor is a short underline:

Short
===
"""


def test_restructuredtext_sections_nest_by_the_order_of_their_adornments():
    doc = parse_document(raw("docs/deploy.rst", RST.encode()))
    # as Sphinx shows it: the "::" marks the literal block, a title's adornment lines are its style
    shown = RST.replace("installer::", "installer:").replace("=================\n", "")
    for title, line in (("Install", "======="), ("Linux", "-----"), ("Use", "===")):
        shown = shown.replace(f"\n{title}\n{line}\n", f"\n{title}\n")
    assert "Short\n===" in shown and "Linux\n\n- Use apt." in shown
    assert (doc.content_type, doc.title, doc.text) == ("rst", "Deployment guide", shown)
    assert [(e.category, e.heading_path, doc.text[e.start:e.end]) for e in doc.elements] == [
        ("Title", ("Deployment guide",), "Deployment guide"),
        ("NarrativeText", ("Deployment guide",), "How we ship the billing service."),
        ("Title", ("Deployment guide", "Install"), "Install"),
        ("NarrativeText", ("Deployment guide", "Install"), "Run the installer:"),
        ("CodeSnippet", ("Deployment guide", "Install"), "./install.sh --prod"),
        ("Title", ("Deployment guide", "Install", "Linux"), "Linux"),
        ("ListItem", ("Deployment guide", "Install", "Linux"), "- Use apt."),
        ("Title", ("Deployment guide", "Use"), "Use"),
        ("NarrativeText", ("Deployment guide", "Use"), "A two-line paragraph\nis no title, nor is a short underline:"),
        ("NarrativeText", ("Deployment guide", "Use"), "Short\n==="),
    ]


@given(st.text(alphabet="ab =-~:\n\t", max_size=120))
@settings(max_examples=300, deadline=None)
def test_restructuredtext_elements_are_ordered_non_empty_spans_of_the_text(text):
    from rag_assets.core.parsing.structure import rst_elements

    ends = 0
    for element in rst_elements(text)[0]:
        body = text[element.start:element.end]
        assert ends <= element.start < element.end <= len(text) and body.strip() == body
        assert element.category != "Title" or ("\n" not in body and element.heading_path[-1])
        ends = element.end


def test_web_page_and_word_headings_nest_by_their_depth():
    page = (b"<html><body><h1>Guide</h1><p>Intro.</p><h2>Install</h2><p>Steps.</p><h3>Linux</h3><p>Use apt.</p>"
            b"<h2>Use</h2><p>Run it.</p></body></html>")
    doc = parse_document(raw("guide.html", page))
    paths = heading_paths(doc)
    assert paths["Use apt."] == ("Guide", "Install", "Linux")  # was ("Linux",): every heading top-level
    assert paths["Run it."] == ("Guide", "Use")
    word = parse_document(read_disk(SAMPLE, "handbook/travel_policy.docx"))  # Heading 1 and Heading 2 styles
    hotels = next(e for e in word.elements if word.text[e.start:e.end].startswith("Choose hotels"))
    assert hotels.heading_path == ("Travel Policy", "Hotels")


def test_web_pages_and_word_documents_are_read_without_spacy(monkeypatch):
    """Their headings come from tags and styles, and unstructured's narrative-text test only
    tells their NarrativeText from plain Text: its sentence counts and verb search (spaCy on
    every paragraph, most of their parse) are not run. A one-font PDF still runs them (its
    titles are unstructured's guesses)."""
    import unstructured.partition.text_type as text_type

    from rag_assets.core.parsing.formats import read_format

    sentences = []
    count = text_type.sentence_count
    monkeypatch.setattr(text_type, "sentence_count", lambda text, *a, **k: sentences.append(text) or count(text, *a, **k))
    page = (b"<html><body><h1>Guide</h1><p>Install the dock near a socket.</p><p>RESET THE DOCK</p><p>2026</p>"
            b"<ul><li>Unplug it.</li></ul></body></html>")
    text, elements, _ = read_format("html", page)
    assert [(text[e.start:e.end], e.category) for e in elements] == [
        ("Guide", "Title"), ("Install the dock near a socket.", "NarrativeText"), ("RESET THE DOCK", "NarrativeText"),
        ("2026", "UncategorizedText"), ("Unplug it.", "ListItem")]
    text, elements, _ = read_format("docx", read_disk(SAMPLE, "handbook/travel_policy.docx").data)
    assert sentences == [] and {e.category for e in elements} >= {"Title", "NarrativeText"}
    read_format("pdf", read_disk(SAMPLE, "handbook/robot_maintenance_guide.pdf").data)
    assert sentences


OFFICE97 = Path(__file__).resolve().parents[1] / "fixtures" / "office97"  # real Office files: see PROVENANCE.md there


def _with_notes(docx: bytes, footnotes: list[str], endnotes: list[str]) -> bytes:
    """``docx`` with footnotes and endnotes parts as Word writes them: separators first, then notes."""
    import zipfile

    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"

    def part(tag: str, notes: list[str]) -> str:
        separators = "".join(f'<w:{tag} w:type="{kind}" w:id="{i - 1}"><w:p><w:r><w:{kind}/></w:r></w:p></w:{tag}>'
                             for i, kind in enumerate(("separator", "continuationSeparator")))
        body = "".join(f'<w:{tag} w:id="{i}"><w:p><w:r><w:t>{text.replace("<w:tab/>", "</w:t><w:tab/><w:t>")}'
                       f'</w:t></w:r></w:p></w:{tag}>' for i, text in enumerate(notes, start=1))
        return f'<?xml version="1.0"?><w:{tag}s xmlns:w="{w}">{separators}{body}</w:{tag}s>'

    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(docx)) as source, zipfile.ZipFile(out, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "word/_rels/document.xml.rels":
                data = data.replace(b"</Relationships>", b'<Relationship Id="rIdF" Type="http://schemas.openxmlformats.org/'
                                    b'officeDocument/2006/relationships/footnotes" Target="footnotes.xml"/></Relationships>')
            target.writestr(item, data)
        target.writestr("word/footnotes.xml", part("footnote", footnotes))
        target.writestr("word/endnotes.xml", part("endnote", endnotes))
    return out.getvalue()


def test_word_footnotes_and_endnotes_are_read_after_the_body_under_their_headings():
    from docx import Document

    word = Document()
    word.add_paragraph("Employees book economy class.")
    unheaded = parse_document(raw("travel.docx", _with_notes(saved(word), ["A note."], [])))
    assert unheaded.title == "travel"  # the notes' heading never names the document
    word.paragraphs[0].insert_paragraph_before("Travel policy", style="Heading 1")
    doc = parse_document(raw("travel.docx", _with_notes(saved(word), ["Contractors follow the Contractor Annex."],
                                                        ["Replacement fee is capped at EUR<w:tab/>50."])))
    assert doc.text == ("Travel policy\n\nEmployees book economy class.\n\nFootnotes\n\nContractors follow the "
                        "Contractor Annex.\n\nEndnotes\n\nReplacement fee is capped at EUR 50.")
    assert doc.title == "Travel policy"
    note = next(e for e in doc.elements if doc.text[e.start : e.end].startswith("Contractors"))
    assert note.heading_path == ("Footnotes",)


def test_a_word_section_s_header_and_footer_are_under_no_heading():
    """A section's footer was cited under the section's last heading, the next section's header
    under the heading before it."""
    from docx import Document
    from docx.enum.section import WD_SECTION

    word = Document()
    word.sections[0].header.paragraphs[0].text = "ACME confidential"
    word.sections[0].footer.paragraphs[0].text = "Handbook v3"
    word.add_heading("Leave", 1)
    word.add_paragraph("Employees get 25 days.")
    annex = word.add_section(WD_SECTION.NEW_PAGE)
    for part, text in ((annex.header, "Annex header"), (annex.footer, "Annex footer")):
        part.is_linked_to_previous = False
        part.paragraphs[0].text = text
    word.add_heading("Annex", 1)
    word.add_paragraph("Rates for 2024.")
    doc = parse_document(raw("handbook.docx", saved(word)))
    paths = heading_paths(doc)
    assert paths == {"ACME confidential": (), "Leave": ("Leave",), "Employees get 25 days.": ("Leave",),
                     "Handbook v3": (), "Annex header": (), "Annex": ("Annex",), "Rates for 2024.": ("Annex",),
                     "Annex footer": ()}
    assert doc.title == "Leave"


def _text_box(text: str, fallback: bool) -> str:
    """A run holding a text box of ``text``: as Word 2010 and later write one (a DrawingML shape,
    with a VML copy for older readers under mc:Fallback), or as Word 2007 did (VML alone)."""
    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    content = f"<w:txbxContent {w}><w:p><w:r><w:t>{text}</w:t></w:r></w:p></w:txbxContent>"
    vml = f'<w:pict {w}><v:shape xmlns:v="urn:schemas-microsoft-com:vml"><v:textbox>{content}</v:textbox></v:shape></w:pict>'
    if not fallback:
        return f"<w:r {w}>{vml}</w:r>"
    shape = ('<wps:wsp xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"><wps:txbx>'
             f"{content}</wps:txbx></wps:wsp>")
    return (f'<w:r {w}><mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006">'
            f'<mc:Choice Requires="wps"><w:drawing>{shape}</w:drawing></mc:Choice><mc:Fallback>{vml}</mc:Fallback>'
            "</mc:AlternateContent></w:r>")


def test_a_word_text_box_is_read_after_the_paragraph_it_is_anchored_in():
    """A text box's text (a sidebar, a callout, a flyer laid out in boxes) was lost."""
    from docx import Document
    from lxml import etree

    word = Document()
    word.add_heading("Safety", 1)
    anchor = word.add_paragraph("Read the rules below.")
    for text, fallback in (("Wear a helmet on the dock.", True), ("Sign in at the gate.", False)):
        anchor._p.append(etree.fromstring(_text_box(text, fallback)))
    word.add_paragraph("Report every incident.")
    doc = parse_document(raw("safety.docx", saved(word)))
    assert doc.text == ("Safety\n\nRead the rules below.\n\nWear a helmet on the dock.\n\nSign in at the gate.\n\n"
                        "Report every incident.")  # each box once: its fallback copy is not read again
    assert heading_paths(doc)["Sign in at the gate."] == ("Safety",)


def test_word_equations_simple_fields_and_links_to_nothing_read_in_their_place():
    """An equation (OMML) and a simple field's result (a caption's number, a document property)
    were lost: "The rate is  per year.", "Figure : Cash flows"; a hyperlink whose target the
    package lacks failed the whole document ("KeyError: 'rId99'")."""
    from docx import Document
    from lxml import etree

    m = 'xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math"'
    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    run = lambda text: f"<m:r><m:t>{text}</m:t></m:r>"  # noqa: E731
    npv = (f'<m:oMathPara {m}><m:oMath>{run("NPV=")}<m:nary><m:naryPr><m:chr m:val="∑"/></m:naryPr>'
           f'<m:sub>{run("t=0")}</m:sub><m:sup>{run("n")}</m:sup><m:e><m:f><m:num><m:sSub><m:e>{run("CF")}</m:e>'
           f'<m:sub>{run("t")}</m:sub></m:sSub></m:num><m:den><m:sSup><m:e><m:d><m:e>{run("1+r")}</m:e></m:d></m:e>'
           f'<m:sup>{run("t")}</m:sup></m:sSup></m:den></m:f></m:e></m:nary></m:oMath></m:oMathPara>')
    roots = (f'<m:oMath {m}>{run("x=")}<m:f><m:num>{run("-b±")}<m:rad><m:radPr><m:degHide m:val="1"/></m:radPr><m:deg/>'
             f'<m:e><m:sSup><m:e>{run("b")}</m:e><m:sup>{run("2")}</m:sup></m:sSup>{run("-4ac")}</m:e></m:rad></m:num>'
             f'<m:den>{run("2a")}</m:den></m:f></m:oMath>')
    word = Document()
    word.add_paragraph()._p.append(etree.fromstring(npv))
    line = word.add_paragraph("The roots are ")
    line._p.append(etree.fromstring(roots))
    line.add_run(" for a≠0.")
    caption = word.add_paragraph("Figure ")
    caption._p.append(etree.fromstring(f'<w:fldSimple {w} w:instr=" SEQ Figure \\* ARABIC "><w:r><w:t>3</w:t></w:r></w:fldSimple>'))
    caption.add_run(": Cash flows by year")
    see = word.add_paragraph("See ")
    see._p.append(etree.fromstring(f'<w:hyperlink {w} xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/'
                                   'relationships" r:id="rId99"><w:r><w:t>the rates</w:t></w:r></w:hyperlink>'))
    doc = parse_document(raw("finance/npv.docx", saved(word)))
    assert doc.text == ("NPV=∑_(t=0)^n CF_t/(1+r)^t\n\nThe roots are x=(-b±√(b^2-4ac))/2a for a≠0.\n\n"
                        "Figure 3: Cash flows by year\n\nSee the rates")


def test_bold_lines_of_a_word_document_without_heading_styles_are_not_headings():
    from docx import Document

    form = Document()  # a form's bold labels, as a contract's defined terms or a letter's signer
    for label, value in (("Name", "John Smith"), ("Date", "2024-03-01"), ("Department", "Finance")):
        form.add_paragraph().add_run(label).bold = True
        form.add_paragraph(value)
    doc = parse_document(raw("expense_form.docx", saved(form)))
    assert doc.title == "expense form" and "Title" not in {e.category for e in doc.elements}


def test_a_word_table_of_contents_is_left_out():
    from docx import Document
    from docx.enum.style import WD_STYLE_TYPE

    word = Document()
    for name in ("toc 1", "toc 2"):
        word.styles.add_style(name, WD_STYLE_TYPE.PARAGRAPH)
    word.add_paragraph("Contents", style="TOC Heading")
    word.add_paragraph("1 Travel\t2", style="toc 1")
    word.add_paragraph("1.1 Flights\t2", style="toc 2")
    word.add_heading("Travel", 1)
    word.add_paragraph("Book flights early.")
    doc = parse_document(raw("policy.docx", saved(word)))
    assert (doc.title, doc.text) == ("Travel", "Travel\n\nBook flights early.")


def test_a_word_document_s_code_styled_paragraphs_are_one_code_block():
    """Code in a code style (a runbook's "Code" paragraphs, a line each; pandoc's "Source Code") was
    prose: the sentence strategies cut it into "sentences" between its lines."""
    from docx import Document
    from docx.enum.style import WD_STYLE_TYPE

    word = Document()
    word.styles.add_style("Code", WD_STYLE_TYPE.PARAGRAPH)
    word.add_heading("Deploy", 1)
    word.add_paragraph("Run these commands.")
    for line in ("make build", "  # then push it.", "make deploy"):
        word.add_paragraph(line, style="Code")
    word.add_paragraph("Done. Check the logs.")
    doc = parse_document(raw("runbook.docx", saved(word)))
    assert [(e.category, doc.text[e.start : e.end]) for e in doc.elements] == [
        ("Title", "Deploy"), ("NarrativeText", "Run these commands."),
        ("CodeSnippet", "make build\n  # then push it.\nmake deploy"), ("NarrativeText", "Done. Check the logs.")]


def test_headings_that_start_below_the_top_level_are_siblings_not_nested():
    """A web page or Word document whose headings start at h2 ("Heading 2"), as an mdBook page under
    its book's title: each h2 was nested under the first, each h3 under the one before it (a tenth of
    the Rust book's pages cited "Ownership Rules" under "The Stack and the Heap")."""
    from docx import Document

    sections = ((2, "Alpha", "One."), (2, "Beta", "Two."), (3, "Gamma", "Three."), (3, "Delta", "Four."),
                (2, "Epsilon", "Five."))
    page = "".join(f"<h{level}>{heading}</h{level}><p>{body}</p>" for level, heading, body in sections)
    word = Document()
    for level, heading, body in sections:
        word.add_heading(heading, level)
        word.add_paragraph(body)
    out = io.BytesIO()
    word.save(out)
    for doc in (parse_document(raw("page.html", f"<html><body>{page}</body></html>".encode())),
                parse_document(raw("notes.docx", out.getvalue()))):
        paths = heading_paths(doc)
        assert [paths[body] for _, _, body in sections] == [
            ("Alpha",), ("Beta",), ("Beta", "Gamma"), ("Beta", "Delta"), ("Epsilon",)], doc.content_type


def test_a_word_97_document_is_read_with_its_headings_and_exact_spans():
    german = parse_document(raw("archive/harmless-clean.doc", (OFFICE97 / "harmless-clean.doc").read_bytes()))
    assert (german.content_type, german.title) == ("docx", "Test")  # its "Überschrift 1" paragraph
    assert german.text.startswith("Test\n\nThis is a harmless test document.\n\nIt contains neither macros")
    assert "we add some ünicöde-ßtringß and different text" in german.text
    paragraph = next(e for e in german.elements if german.text[e.start:e.end] == "This is a harmless test document.")
    assert paragraph.heading_path == ("Test",)
    assert [e.category for e in german.elements][0] == "Title"
    english = parse_document(raw("archive/test-ole-file.doc", (OFFICE97 / "test-ole-file.doc").read_bytes()))
    assert english.text == "Test OLE file, saved as Word 97-2003 Document."
    for doc in (german, english):
        assert all(doc.text[e.start:e.end].strip() == doc.text[e.start:e.end] != "" for e in doc.elements)


def test_a_powerpoint_97_presentation_is_read_slide_by_slide():
    deck = parse_document(raw("decks/embedded-simple-2007.ppt", (OFFICE97 / "embedded-simple-2007.ppt").read_bytes()))
    assert (deck.content_type, deck.title) == ("pptx", "Embedded Objects")
    assert deck.text == ("Embedded Objects\n\nThis slide contains an embedded object\n\n"
                         "It is a simple harmless ASCII text file")
    assert {e.page for e in deck.elements} == {1}
    assert all(e.heading_path == ("Embedded Objects",) for e in deck.elements)


def _declared_as(package: bytes, main_type: str) -> bytes:
    """An Office package with its main part declared as ``main_type`` (what Office writes for a
    macro-enabled file, a template or a slide show; the parts stay the same)."""
    import re
    import zipfile

    source, out = zipfile.ZipFile(io.BytesIO(package)), io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            body = source.read(item)
            if item.filename == "[Content_Types].xml":
                body, count = re.subn(rb"application/vnd\.openxmlformats-officedocument\.\w+\.\w+\.main\+xml",
                                      main_type.encode(), body)
                assert count == 1
            target.writestr(item, body)
    return out.getvalue()


@pytest.mark.parametrize("name, main_type", [
    ("policy.docm", "application/vnd.ms-word.document.macroEnabled.main+xml"),
    ("letter.dotx", "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml"),
    ("letter.dotm", "application/vnd.ms-word.template.macroEnabled.main+xml"),
    ("kiosk.ppsx", "application/vnd.openxmlformats-officedocument.presentationml.slideshow.main+xml"),
    ("kiosk.ppsm", "application/vnd.ms-powerpoint.slideshow.macroEnabled.main+xml"),
    ("brand.potx", "application/vnd.openxmlformats-officedocument.presentationml.template.main+xml"),
    ("review.pptm", "application/vnd.ms-powerpoint.presentation.macroEnabled.main+xml"),
    ("budget.xlsm", "application/vnd.ms-excel.sheet.macroEnabled.main+xml"),
    ("budget.xltx", "application/vnd.openxmlformats-officedocument.spreadsheetml.template.main+xml"),
])
def test_macro_enabled_template_and_slide_show_files_read_as_their_office_format(name, main_type):
    from docx import Document

    word = Document()
    word.add_heading("Expenses", 1)
    word.add_paragraph("Receipts are kept for ten years.")
    out = io.BytesIO()
    word.save(out)
    kind = {"d": "docx", "p": "pptx", "x": "xlsx"}[name.rsplit(".", 1)[1][0]]
    plain = {"docx": out.getvalue(), "pptx": slide_deck(), "xlsx": workbook()}[kind]
    expected = parse_document(raw(f"plain.{kind}", plain))
    doc = parse_document(raw(name, _declared_as(plain, main_type)))
    assert (doc.content_type, doc.text, doc.elements) == (expected.content_type, expected.text, expected.elements)
    assert doc.text.strip()


def test_word_tracked_changes_and_content_controls_read_as_word_shows_them():
    import re
    import zipfile

    import docx

    document = docx.Document()
    document.add_heading("Contract Summary", 1)
    document.add_paragraph("PLACEHOLDER")
    document.add_paragraph("Closing paragraph.")
    out = io.BytesIO()
    document.save(out)
    body = ('<w:p><w:r><w:t xml:space="preserve">Payment terms: </w:t></w:r>'
            '<w:del w:id="1" w:author="Legal"><w:r><w:delText>net 30 days.</w:delText></w:r></w:del>'
            '<w:ins w:id="2" w:author="Legal"><w:r><w:t>net 60 days.</w:t></w:r></w:ins></w:p>'
            '<w:sdt><w:sdtPr><w:alias w:val="Scope"/></w:sdtPr><w:sdtContent>'
            '<w:p><w:r><w:t>The scope covers all EU sites.</w:t></w:r></w:p></w:sdtContent></w:sdt>'
            '<w:p><w:r><w:t xml:space="preserve">Client: </w:t></w:r><w:sdt><w:sdtPr/><w:sdtContent>'
            '<w:ins w:id="3" w:author="Legal"><w:r><w:t>Acme GmbH</w:t></w:r></w:ins></w:sdtContent></w:sdt></w:p>')
    source, edited = zipfile.ZipFile(io.BytesIO(out.getvalue())), io.BytesIO()
    with zipfile.ZipFile(edited, "w") as package:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "word/document.xml":
                data = re.sub(r"<w:p>(?:(?!<w:p>).)*?PLACEHOLDER.*?</w:p>", body, data.decode(), flags=re.S).encode()
            package.writestr(item, data)
    doc = parse_document(raw("legal/contract.docx", edited.getvalue()))
    assert doc.text == ("Contract Summary\n\nPayment terms: net 60 days.\n\nThe scope covers all EU sites.\n\n"
                        "Client: Acme GmbH\n\nClosing paragraph.")
    assert next(e for e in doc.elements if "EU sites" in doc.text[e.start:e.end]).heading_path == ("Contract Summary",)


def test_a_markdown_attachment_s_headings_are_named_without_their_markup():
    from email.message import EmailMessage

    message = EmailMessage()
    message["From"], message["Subject"] = "dana@northwind.example", "Weekly report"
    message.set_content("Notes attached.\n")
    message.add_attachment(b"# Dock Notes\n\n## Firmware\n\nVersion 2.3 charges fastest.\n", maintype="text",
                           subtype="markdown", filename="notes.md")
    mail = parse_document(raw("mail/report.eml", bytes(message)))
    firmware = next(e for e in mail.elements if "charges fastest" in mail.text[e.start:e.end])
    assert firmware.heading_path == ("Weekly report", "Attachment: notes.md", "Dock Notes", "Firmware")


def test_a_deck_s_footer_is_read_once_under_no_heading_and_its_slide_numbers_not_at_all():
    """Footer, date and slide-number placeholders were lines of every slide, under its title."""
    from lxml import etree
    from pptx import Presentation
    from pptx.enum.shapes import PP_PLACEHOLDER

    drawing = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
    deck = Presentation()
    layout = deck.slide_layouts[1]
    for number, (title, body) in enumerate([("Leave", "Employees get 25 days."), ("Travel", "Book via the portal.")], 1):
        slide = deck.slides.add_slide(layout)
        slide.shapes.title.text, slide.placeholders[1].text = title, body
        for placeholder in layout.placeholders:  # what Insert > Header & Footer puts on each slide
            kind = placeholder.placeholder_format.type
            if kind in (PP_PLACEHOLDER.FOOTER, PP_PLACEHOLDER.DATE):
                slide.shapes._spTree.append(copy.deepcopy(placeholder._element))
                slide.shapes[-1].text = "ACME confidential" if kind == PP_PLACEHOLDER.FOOTER else "March 2024"
            elif kind == PP_PLACEHOLDER.SLIDE_NUMBER:  # a field PowerPoint fills in
                slide.shapes._spTree.append(copy.deepcopy(placeholder._element))
                paragraph = slide.shapes[-1].text_frame.paragraphs[0]._p
                etree.SubElement(etree.SubElement(paragraph, f"{drawing}fld", id="{B6F15528-21DE-4FAA-801E-634DDDAF4B2B}",
                                                  type="slidenum"), f"{drawing}t").text = str(number)
    doc = parse_document(raw("decks/policy.pptx", saved(deck)))
    assert [(doc.text[e.start : e.end], e.page, e.heading_path) for e in doc.elements] == [
        ("Leave", 1, ("Leave",)), ("Employees get 25 days.", 1, ("Leave",)), ("March 2024", 1, ()),
        ("ACME confidential", 1, ()), ("Travel", 2, ("Travel",)), ("Book via the portal.", 2, ("Travel",))]


_DGM = "http://schemas.openxmlformats.org/drawingml/2006/diagram"
_DRAWING = "http://schemas.openxmlformats.org/drawingml/2006/main"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


def _smartart_model() -> bytes:
    """A SmartArt diagram's data part whose nodes are written out of order (its connections give
    the order and nesting): read, "Sign the contract", "Get a badge", "Meet your buddy"."""
    points = "".join(f'<dgm:pt modelId="{key}" type="{kind}"><dgm:t><a:p><a:r><a:t>{text}</a:t></a:r></a:p></dgm:t></dgm:pt>'
                     for key, kind, text in [("0", "doc", ""), ("3", "node", "Get a badge"), ("1", "node", "Sign the contract"),
                                             ("2", "node", "Meet your buddy"), ("9", "pres", "layout only")])
    links = "".join(f'<dgm:cxn modelId="c{n}" srcId="{src}" destId="{dest}" srcOrd="{order}"/>'
                    for n, (src, dest, order) in enumerate([("0", "1", 0), ("0", "3", 1), ("3", "2", 0)]))
    return (f'<dgm:dataModel xmlns:dgm="{_DGM}" xmlns:a="{_DRAWING}"><dgm:ptLst>{points}</dgm:ptLst>'
            f"<dgm:cxnLst>{links}</dgm:cxnLst></dgm:dataModel>").encode()


def _revenue_chart_data():
    """A column chart's data: two series, one value missing."""
    from pptx.chart.data import CategoryChartData

    data = CategoryChartData()
    data.categories = ["Q1", "Q2", "Q3"]
    data.add_series("2024", (1.5, 2.25, 3))
    data.add_series("2025", (2, None, 4.125))
    return data


REVENUE_TABLE = "|  | 2024 | 2025 |\n| --- | --- | --- |\n| Q1 | 1.5 | 2 |\n| Q2 | 2.25 |  |\n| Q3 | 3 | 4.125 |"


def _graphics_deck() -> bytes:
    """Two slides: a column chart with a title (``_revenue_chart_data``), and a SmartArt diagram
    (``_smartart_model``)."""
    from lxml import etree
    from pptx import Presentation
    from pptx.enum.chart import XL_CHART_TYPE
    from pptx.opc.constants import RELATIONSHIP_TYPE
    from pptx.opc.package import Part
    from pptx.opc.packuri import PackURI
    from pptx.util import Inches

    deck = Presentation()
    revenue = deck.slides.add_slide(deck.slide_layouts[5])
    revenue.shapes.title.text = "Revenue"
    chart = revenue.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(2), Inches(6), Inches(4),
                                     _revenue_chart_data()).chart
    chart.has_title = True
    chart.chart_title.text_frame.text = "Revenue by quarter (M EUR)"
    steps = deck.slides.add_slide(deck.slide_layouts[5])
    steps.shapes.title.text = "Onboarding"
    part = Part(PackURI("/ppt/diagrams/data1.xml"), "application/vnd.openxmlformats-officedocument.drawingml.diagramData+xml",
                deck.part.package, _smartart_model())
    relationship = steps.part.relate_to(part, RELATIONSHIP_TYPE.DIAGRAM_DATA)
    steps.shapes._spTree.append(etree.fromstring(
        f'<p:graphicFrame xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:a="{_DRAWING}" '
        f'xmlns:r="{_REL}"><p:nvGraphicFramePr>'
        '<p:cNvPr id="9" name="Diagram 1"/><p:cNvGraphicFramePr/><p:nvPr/></p:nvGraphicFramePr><p:xfrm><a:off x="0" y="0"/>'
        f'<a:ext cx="100" cy="100"/></p:xfrm><a:graphic><a:graphicData uri="{_DGM}"><dgm:relIds xmlns:dgm="{_DGM}" '
        f'r:dm="{relationship}" r:lo="" r:qs="" r:cs=""/></a:graphicData></a:graphic></p:graphicFrame>'))
    return saved(deck)


def test_a_slide_s_chart_reads_as_its_data_and_a_smartart_diagram_as_its_nodes():
    """unstructured skips charts and SmartArt: a deck's numbers and process steps were lost."""
    doc = parse_document(raw("decks/q3.pptx", _graphics_deck()))
    assert [(doc.text[e.start : e.end], e.category, e.page) for e in doc.elements] == [
        ("Revenue", "Title", 1), ("Revenue by quarter (M EUR)", "NarrativeText", 1), (REVENUE_TABLE, "Table", 1),
        ("Onboarding", "Title", 2), ("Sign the contract", "ListItem", 2), ("Get a badge", "ListItem", 2),
        ("Meet your buddy", "ListItem", 2)]


def test_a_slide_s_shape_powerpoint_wraps_for_older_readers_is_read_with_its_equation():
    """PowerPoint wraps a text box holding an equation in ``mc:AlternateContent`` (a picture of it
    as the fallback): python-pptx skips the wrapper, so the box's text and the equation were lost."""
    from lxml import etree
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Discounting"
    box = slide.shapes.add_textbox(Inches(1), Inches(2), Inches(4), Inches(1))
    box.text_frame.text = "Value today: "
    m, mc = "http://schemas.openxmlformats.org/officeDocument/2006/math", "http://schemas.openxmlformats.org/markup-compatibility/2006"
    a14 = "http://schemas.microsoft.com/office/drawing/2010/main"
    box.text_frame.paragraphs[0]._p.append(etree.fromstring(
        f'<a14:m xmlns:a14="{a14}"><m:oMathPara xmlns:m="{m}"><m:oMath><m:r><m:t>NPV=</m:t></m:r><m:f><m:num><m:r>'
        "<m:t>CF</m:t></m:r></m:num><m:den><m:r><m:t>1+r</m:t></m:r></m:den></m:f></m:oMath></m:oMathPara></a14:m>"))
    wrapper = etree.fromstring(f'<mc:AlternateContent xmlns:mc="{mc}"><mc:Choice xmlns:a14="{a14}" Requires="a14"/>'
                               "<mc:Fallback/></mc:AlternateContent>")
    fallback = copy.deepcopy(box._element)
    for run in fallback.iter("{http://schemas.openxmlformats.org/drawingml/2006/main}t"):
        run.text = "Value today: [a picture of the equation]"
    box._element.addprevious(wrapper)
    wrapper[0].append(box._element)
    wrapper[1].append(fallback)
    doc = parse_document(raw("decks/npv.pptx", saved(deck)))
    assert doc.text == "Discounting\n\nValue today: NPV=CF/(1+r)"


def test_a_slide_s_connectors_read_as_what_they_join():
    """A flowchart on a slide read as its boxes alone: which step leads to which was lost. A
    connector glued to two shapes with text reads as "From → To"; one glued to nothing is left out."""
    from pptx import Presentation
    from pptx.enum.shapes import MSO_CONNECTOR, MSO_SHAPE
    from pptx.util import Inches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Returns"
    shipped = slide.shapes.add_shape(MSO_SHAPE.RECTANGLE, Inches(1), Inches(2), Inches(2), Inches(1))
    shipped.text = "Customer ships item"
    group = slide.shapes.add_group_shape()
    inspected = group.shapes.add_shape(MSO_SHAPE.RECTANGLE, Inches(5), Inches(2), Inches(2), Inches(1))
    inspected.text = "Warehouse inspects"
    arrow = slide.shapes.add_connector(MSO_CONNECTOR.STRAIGHT, Inches(3), Inches(2.5), Inches(5), Inches(2.5))
    arrow.begin_connect(shipped, 3)
    arrow.end_connect(inspected, 1)
    slide.shapes.add_connector(MSO_CONNECTOR.STRAIGHT, Inches(3), Inches(4), Inches(5), Inches(4))  # glued to nothing
    doc = parse_document(raw("decks/returns.pptx", saved(deck)))
    assert doc.text == "Returns\n\nCustomer ships item\n\nWarehouse inspects\n\nCustomer ships item → Warehouse inspects"
    assert doc.elements[-1].category == "ListItem"


def _chart_space(kind, data, title: str = "") -> bytes:
    """A chart part's XML, as python-pptx writes one, with a typed ``title`` where one is given."""
    from lxml import etree
    from pptx.chart.xmlwriter import ChartXmlWriter

    space = etree.fromstring(ChartXmlWriter(kind, data).xml.encode())
    if title:
        c = "http://schemas.openxmlformats.org/drawingml/2006/chart"
        space.find(f"{{{c}}}chart").insert(0, etree.fromstring(
            f'<c:title xmlns:c="{c}" xmlns:a="{_DRAWING}"><c:tx><c:rich><a:bodyPr/><a:p><a:r><a:t>{title}</a:t></a:r>'
            "</a:p></c:rich></c:tx></c:title>"))
    return etree.tostring(space)


def test_a_word_chart_reads_as_its_data_and_a_smartart_diagram_as_its_nodes_after_their_paragraph():
    """python-docx reads no chart or diagram: a report's figures and process steps were lost. A
    chart whose part is damaged is left out, and the rest of the document is read."""
    from docx import Document
    from docx.opc.constants import RELATIONSHIP_TYPE
    from docx.opc.packuri import PackURI
    from docx.opc.part import Part
    from lxml import etree
    from pptx.enum.chart import XL_CHART_TYPE

    word = Document()
    word.add_heading("Results", 1)

    def drawn(paragraph, name: str, uri: str, blob: bytes, kind: str, reference: str) -> None:
        part = Part(PackURI(f"/word/{name}"), "application/xml", blob, word.part.package)
        relationship = word.part.relate_to(part, kind)
        paragraph._p.append(etree.fromstring(
            f'<w:r xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:drawing>'
            f'<wp:inline xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing">'
            f'<a:graphic xmlns:a="{_DRAWING}"><a:graphicData uri="{uri}">{reference.format(rel=relationship)}'
            "</a:graphicData></a:graphic></wp:inline></w:drawing></w:r>"))

    chart_uri = "http://schemas.openxmlformats.org/drawingml/2006/chart"
    figure = word.add_paragraph("Revenue rose in every quarter.")
    drawn(figure, "charts/chart1.xml", chart_uri,
          _chart_space(XL_CHART_TYPE.COLUMN_CLUSTERED, _revenue_chart_data(), "Revenue by quarter (M EUR)"),
          RELATIONSHIP_TYPE.CHART, f'<c:chart xmlns:c="{chart_uri}" xmlns:r="{_REL}" r:id="{{rel}}"/>')
    drawn(word.add_paragraph("Costs are shown below."), "charts/chart2.xml", chart_uri, b"<c:chartSpace",
          RELATIONSHIP_TYPE.CHART, f'<c:chart xmlns:c="{chart_uri}" xmlns:r="{_REL}" r:id="{{rel}}"/>')
    word.add_heading("Onboarding", 1)
    drawn(word.add_paragraph("Every new hire:"), "diagrams/data1.xml", _DGM, _smartart_model(),
          RELATIONSHIP_TYPE.DIAGRAM_DATA, f'<dgm:relIds xmlns:dgm="{_DGM}" xmlns:r="{_REL}" r:dm="{{rel}}" r:lo="" r:qs="" r:cs=""/>')
    word.add_paragraph("Welcome aboard.")
    doc = parse_document(raw("reports/q3.docx", saved(word)))
    assert [(doc.text[e.start : e.end], e.category, e.heading_path) for e in doc.elements] == [
        ("Results", "Title", ("Results",)), ("Revenue rose in every quarter.", "NarrativeText", ("Results",)),
        ("Revenue by quarter (M EUR)", "NarrativeText", ("Results",)), (REVENUE_TABLE, "Table", ("Results",)),
        ("Costs are shown below.", "NarrativeText", ("Results",)), ("Onboarding", "Title", ("Onboarding",)),
        ("Every new hire:", "NarrativeText", ("Onboarding",)), ("Sign the contract", "ListItem", ("Onboarding",)),
        ("Get a badge", "ListItem", ("Onboarding",)), ("Meet your buddy", "ListItem", ("Onboarding",)),
        ("Welcome aboard.", "NarrativeText", ("Onboarding",))]


_CX = "http://schemas.microsoft.com/office/drawing/2014/chartex"
_W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def _chartex_space(series: str, data: str, title: str = "") -> bytes:
    """An Office 2016 chart part (``cx:chartSpace``) of ``data`` blocks and ``series``."""
    titled = f"<cx:title><cx:tx><cx:txData><cx:v>{title}</cx:v></cx:txData></cx:tx></cx:title>" if title else ""
    return (f'<cx:chartSpace xmlns:cx="{_CX}" xmlns:a="{_DRAWING}"><cx:chartData>{data}</cx:chartData><cx:chart>{titled}'
            f"<cx:plotArea><cx:plotAreaRegion>{series}</cx:plotAreaRegion></cx:plotArea></cx:chart></cx:chartSpace>").encode()


def _cx_level(*points: str, count: int | None = None) -> str:
    return (f'<cx:lvl ptCount="{len(points) if count is None else count}">'
            + "".join(f'<cx:pt idx="{n}">{p}</cx:pt>' for n, p in enumerate(points) if p) + "</cx:lvl>")


def test_an_office_2016_chart_reads_as_its_data_in_a_word_document_and_a_deck():
    """A waterfall, treemap or Pareto chart (``cx:chart``, wrapped for older readers with a picture
    as the fallback) was lost in Word documents and decks alike: it reads as a chart does, a
    hierarchy's levels each a column, outermost first."""
    from docx import Document
    from docx.opc.packuri import PackURI
    from docx.opc.part import Part
    from lxml import etree

    from rag_assets.core.parsing.office_graphics import chartex_rows

    waterfall = _chartex_space(
        '<cx:series layoutId="waterfall"><cx:tx><cx:txData><cx:f>Sheet1!$B$1</cx:f><cx:v>Cash (k EUR)</cx:v></cx:txData>'
        '</cx:tx><cx:dataId val="0"/></cx:series>',
        '<cx:data id="0"><cx:strDim type="cat">' + _cx_level("Start", "Sales", "Costs", "End") + '</cx:strDim>'
        '<cx:numDim type="val">' + _cx_level("100", "40.5", "-30.000000000000004", "") + "</cx:numDim></cx:data>",
        "Cash bridge")
    table = [["", "Cash (k EUR)"], ["Start", "100"], ["Sales", "40.5"], ["Costs", "-30"], ["End", ""]]
    assert chartex_rows(etree.fromstring(waterfall)) == ("Cash bridge", table)
    treemap = _chartex_space(  # levels deepest first; a Pareto chart's line is no series
        '<cx:series layoutId="treemap"><cx:dataId val="1"/></cx:series><cx:series layoutId="paretoLine" ownerIdx="0">'
        '<cx:dataId val="1"/></cx:series>',
        '<cx:data id="1"><cx:strDim type="cat">' + _cx_level("Oslo", "Bergen", "Lyon") + _cx_level("Norway", "", "France")
        + '</cx:strDim><cx:numDim type="size">' + _cx_level("7", "3", "5") + "</cx:numDim></cx:data>")
    assert chartex_rows(etree.fromstring(treemap)) == ("", [["", "", "Series 1"], ["Norway", "Oslo", "7"],
                                                           ["", "Bergen", "3"], ["France", "Lyon", "5"]])
    assert chartex_rows(etree.fromstring(_chartex_space("", ""))) == ("", [])

    word = Document()
    figure = word.add_paragraph("Cash rose this year.")
    part = Part(PackURI("/word/charts/chartEx1.xml"), "application/vnd.ms-office.chartex+xml", waterfall, word.part.package)
    rel = word.part.relate_to(part, "http://schemas.microsoft.com/office/2014/relationships/chartEx")
    mc, w = "http://schemas.openxmlformats.org/markup-compatibility/2006", "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    figure._p.append(etree.fromstring(
        f'<w:r xmlns:w="{w}"><mc:AlternateContent xmlns:mc="{mc}"><mc:Choice xmlns:cx1="{_CX}" Requires="cx1"><w:drawing>'
        f'<wp:inline xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"><a:graphic '
        f'xmlns:a="{_DRAWING}"><a:graphicData uri="{_CX}"><cx:chart xmlns:cx="{_CX}" xmlns:r="{_REL}" r:id="{rel}"/>'
        "</a:graphicData></a:graphic></wp:inline></w:drawing></mc:Choice><mc:Fallback><w:pict><w:txbxContent><w:p><w:r>"
        "<w:t>This chart isn't available in your version of Word</w:t></w:r></w:p></w:txbxContent></w:pict></mc:Fallback>"
        "</mc:AlternateContent></w:r>"))
    word.add_paragraph("Ask finance for details.")
    doc = parse_document(raw("reports/cash.docx", saved(word)))
    markdown = "|  | Cash (k EUR) |\n| --- | --- |\n| Start | 100 |\n| Sales | 40.5 |\n| Costs | -30 |\n| End |  |"
    assert doc.text == f"Cash rose this year.\n\nCash bridge\n\n{markdown}\n\nAsk finance for details."

    from pptx import Presentation
    from pptx.opc.packuri import PackURI as SlidePackURI
    from pptx.opc.package import Part as SlidePart
    from pptx.util import Inches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Cash"
    chart = SlidePart(SlidePackURI("/ppt/charts/chartEx1.xml"), "application/vnd.ms-office.chartex+xml",
                      deck.part.package, waterfall)
    rel = slide.part.relate_to(chart, "http://schemas.microsoft.com/office/2014/relationships/chartEx")
    frame = slide.shapes.add_table(1, 1, Inches(1), Inches(2), Inches(4), Inches(3))._element  # a frame to re-point
    data = frame.find(f".//{{{_DRAWING}}}graphicData")
    data.set("uri", _CX)
    data[:] = [etree.fromstring(f'<cx:chart xmlns:cx="{_CX}" xmlns:r="{_REL}" r:id="{rel}"/>')]
    wrapper = etree.fromstring(f'<mc:AlternateContent xmlns:mc="{mc}"><mc:Choice xmlns:cx1="{_CX}" Requires="cx1"/>'
                               "<mc:Fallback/></mc:AlternateContent>")
    frame.addprevious(wrapper)
    wrapper[0].append(frame)
    doc = parse_document(raw("decks/cash.pptx", saved(deck)))
    assert doc.text == f"Cash\n\nCash bridge\n\n{markdown}"


def test_an_excel_worksheet_or_visio_drawing_embedded_in_a_word_document_or_on_a_slide_is_read():
    """An embedded worksheet or drawing ("Insert > Object", pasted as an object) shows a picture:
    its numbers and steps were lost. A worksheet's active sheet reads as a table (empty rows left
    out, numbers as formatted), a drawing's shapes and connections as list items, after the
    paragraph it is in, or in its place on the slide; an embedded Word document under "Attachment";
    a damaged one is left out."""
    from tests.support.visio import connect, drawing, shape
    from docx import Document
    from docx.opc.packuri import PackURI
    from docx.opc.part import Part
    from lxml import etree
    from openpyxl import Workbook
    from pptx import Presentation
    from pptx.enum.shapes import PROG_ID
    from pptx.util import Inches

    book = Workbook()
    book.active.title = "Notes"
    rates = book.create_sheet("Rates")
    for row in (["Site", "Rate"], [], ["Oslo", 0.125], ["Lyon", 0.1]):
        rates.append(row)
    rates["B3"].number_format = rates["B4"].number_format = "0.0%"
    book.active = rates  # the sheet the object shows
    embedded = io.BytesIO()
    book.save(embedded)
    table = "| Site | Rate |\n| --- | --- |\n| Oslo | 12.5% |\n| Lyon | 10.0% |"

    word = Document()
    package = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/package"
    flow = drawing([("Page-1", shape(1, "Request", y=2) + shape(2, "Approve", y=1) + shape(3, y=1.5), connect(3, 1, 2))])
    annex = Document()
    annex.add_paragraph("See the annex.")
    annex = saved(annex)
    for name, blob, text in (("Microsoft_Excel_Worksheet.xlsx", embedded.getvalue(), "Rates by site:"),
                             ("Microsoft_Visio_Drawing.vsdx", flow, "The approval flow:"),
                             ("Microsoft_Word_Document.docx", annex, "An embedded document:"),
                             ("Microsoft_Excel_Worksheet1.xlsx", b"PK damaged", "A damaged one:")):
        part = Part(PackURI(f"/word/embeddings/{name}"), "application/octet-stream", blob, word.part.package)
        rel = word.part.relate_to(part, package)
        word.add_paragraph(text)._p.append(etree.fromstring(
            '<w:r xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:object><o:OLEObject '
            f'xmlns:o="urn:schemas-microsoft-com:office:office" xmlns:r="{_REL}" Type="Embed" ProgID="Excel.Sheet.12" '
            f'r:id="{rel}"/></w:object></w:r>'))
    word.add_paragraph("Rates change in May.")
    doc = parse_document(raw("reports/rates.docx", saved(word)))
    assert doc.text == (f"Rates by site:\n\n{table}\n\nThe approval flow:\n\nRequest\n\nApprove\n\nRequest → Approve\n\n"
                        "An embedded document:\n\nAttachment: document.docx\n\nSee the annex.\n\nA damaged one:\n\n"
                        "Rates change in May.")
    assert [e.category for e in doc.elements][1:6] == ["Table", "NarrativeText", "ListItem", "ListItem", "ListItem"]

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Rates"
    embedded.seek(0)
    slide.shapes.add_ole_object(embedded, PROG_ID.XLSX, Inches(1), Inches(2))
    slide.shapes.add_ole_object(io.BytesIO(flow), "Visio.Drawing.15", Inches(1), Inches(4), Inches(2), Inches(1))
    doc = parse_document(raw("decks/rates.pptx", saved(deck)))
    assert doc.text == f"Rates\n\n{table}\n\nRequest\n\nApprove\n\nRequest → Approve"


def test_a_file_embedded_as_an_icon_in_a_word_document_or_on_a_slide_is_read_as_its_format_is(tmp_path):
    """"Insert > Object > Create from file" packages a file (Object Packager's ``Ole10Native``)
    shown as an icon: its text was lost. It reads under "Attachment: name" as its extension says,
    after the paragraph it is in or in its place on the slide, its tables as tables; a picture, a
    damaged file or another object is left out."""
    from docx import Document
    from docx.opc.packuri import PackURI
    from docx.opc.part import Part
    from lxml import etree
    from pptx import Presentation
    from pptx.util import Inches

    from tests.support.compound import compound_file, ole10_native

    notes = b"# Gate rota\n\nThe east gate opens at 05:30.\n\n| Day | Guard |\n| --- | --- |\n| Mon | Ana |\n"
    packaged = compound_file("\x01Ole10Native", ole10_native("rota.md", notes))
    picture = compound_file("\x01Ole10Native", ole10_native("logo.png", b"\x89PNG\r\n\x1a\n" + bytes(200)))
    damaged = compound_file("\x01Ole10Native", b"\x10\x00\x00\x00\x02\x00no ends")
    word = Document()
    ole = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/oleObject"
    for n, (blob, text) in enumerate(((packaged, "The rota is attached:"), (picture, "Our logo:"), (damaged, "Broken:")), 1):
        part = Part(PackURI(f"/word/embeddings/oleObject{n}.bin"), "application/vnd.openxmlformats-officedocument.oleObject",
                    blob, word.part.package)
        rel = word.part.relate_to(part, ole)
        word.add_paragraph(text)._p.append(etree.fromstring(
            f'<w:r xmlns:w="{_W_NS}"><w:object><o:OLEObject xmlns:o="urn:schemas-microsoft-com:office:office" '
            f'xmlns:r="{_REL}" Type="Embed" ProgID="Package" r:id="{rel}"/></w:object></w:r>'))
    doc = parse_document(raw("ops/gates.docx", saved(word)))
    assert [(doc.text[e.start : e.end], e.category) for e in doc.elements] == [
        ("The rota is attached:", "NarrativeText"), ("Attachment: rota.md", "NarrativeText"), ("Gate rota", "NarrativeText"),
        ("The east gate opens at 05:30.", "NarrativeText"), ("| Day | Guard |\n| --- | --- |\n| Mon | Ana |", "Table"),
        ("Our logo:", "NarrativeText"), ("Broken:", "NarrativeText")]
    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Rota"
    slide.shapes.add_ole_object(io.BytesIO(packaged), "Package", Inches(1), Inches(2), Inches(1), Inches(1))
    from tests.support.make_sample_binaries import write_pdf

    write_pdf(tmp_path / "dock.pdf", [["Dock Manual", "", "The dock charges the robot."]])
    acrobat = compound_file("CONTENTS", (tmp_path / "dock.pdf").read_bytes())  # an Acrobat document's object
    slide.shapes.add_ole_object(io.BytesIO(acrobat), "AcroExch.Document.DC", Inches(3), Inches(2), Inches(1), Inches(1))
    doc = parse_document(raw("ops/gates.pptx", saved(deck)))
    assert [(doc.text[e.start : e.end], e.category) for e in doc.elements][:3] == [
        ("Rota", "Title"), ("Attachment: rota.md", "NarrativeText"), ("Gate rota", "NarrativeText")]
    assert "Attachment: document.pdf\n\nDock Manual\n\nThe dock charges the robot." in doc.text
    assert doc.elements[2].heading_path == ("Rota",)  # the slide's title still heads it


def test_a_word_document_s_imported_chunks_are_read_in_their_place(tmp_path):
    """"Export to Word" tools and mail merges embed a web page, RTF or Word document whole
    (``w:altChunk``): python-docx skips it, so such a document read empty. Each is read as its
    format is, in its place, its headings kept; a missing one, or one in a table, stands for
    nothing."""
    from docx import Document
    from docx.opc.packuri import PackURI
    from docx.opc.part import Part
    from lxml import etree

    word = Document()
    word.add_paragraph("Exported from the intranet.")
    page = (b"<html><body><h1>Travel policy</h1><p>Book trains for trips under six hours.</p><table><tr><th>City</th>"
            b"<th>Hotel limit</th></tr><tr><td>Oslo</td><td>180 EUR</td></tr></table></body></html>")
    memo = pandoc_document("Visitors park on level 2.\n", "rtf", tmp_path)
    chunk_type = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/aFChunk"

    def chunk(name: str | None, blob: bytes = b""):
        rel = word.part.relate_to(Part(PackURI(f"/word/{name}"), "text/html", blob, word.part.package), chunk_type) \
            if name else "rId999"
        return etree.fromstring(f'<w:altChunk xmlns:w="{_W_NS}" xmlns:r="{_REL}" r:id="{rel}"/>')

    body = word.element.body
    body.insert(1, chunk("afchunk1.htm", page))
    body.insert(2, chunk("afchunk2.rtf", memo))
    body.insert(3, chunk(None))  # its part is missing
    word.add_paragraph("Questions: travel@acme.example")
    cell = word.add_table(rows=1, cols=1).cell(0, 0)._tc
    cell.append(chunk("afchunk3.htm", b"<p>In a cell</p>"))
    doc = parse_document(raw("policies/travel.docx", saved(word)))
    assert [(doc.text[e.start : e.end], e.category, e.heading_path) for e in doc.elements][:6] == [
        ("Exported from the intranet.", "NarrativeText", ()), ("Travel policy", "Title", ("Travel policy",)),
        ("Book trains for trips under six hours.", "NarrativeText", ("Travel policy",)),
        ("| City | Hotel limit |\n| --- | --- |\n| Oslo | 180 EUR |", "Table", ("Travel policy",)),
        ("Visitors park on level 2.", "NarrativeText", ("Travel policy",)),
        ("Questions: travel@acme.example", "NarrativeText", ("Travel policy",))]
    assert "altChunk" not in doc.text and "\u2063" not in doc.text


def test_a_chart_reads_its_cached_titles_and_a_scatter_chart_its_x_values():
    """A title or series name taken from a cell is read from the chart's cache, as are a scatter
    chart's x values (python-pptx's categories left their rows blank)."""
    from lxml import etree
    from pptx.chart.data import XyChartData
    from pptx.enum.chart import XL_CHART_TYPE

    from rag_assets.core.parsing.office_graphics import chart_rows

    data = XyChartData()
    load = data.add_series("Latency (ms)")
    for x, y in ((100, 12.5), (250, 30), (1e3, 0.1 + 0.2)):
        load.add_data_point(x, y)
    space = etree.fromstring(_chart_space(XL_CHART_TYPE.XY_SCATTER, data))
    c = "http://schemas.openxmlformats.org/drawingml/2006/chart"
    space.find(f"{{{c}}}chart").insert(0, etree.fromstring(
        f'<c:title xmlns:c="{c}"><c:tx><c:strRef><c:f>Sheet1!$A$1</c:f><c:strCache><c:ptCount val="1"/>'
        '<c:pt idx="0"><c:v>Load test</c:v></c:pt></c:strCache></c:strRef></c:tx></c:title>'))
    assert chart_rows(space) == ("Load test", [["", "Latency (ms)"], ["100", "12.5"], ["250", "30"], ["1000", "0.3"]])
    empty = etree.fromstring(f'<c:chartSpace xmlns:c="{c}"><c:chart><c:plotArea><c:barChart/></c:plotArea></c:chart></c:chartSpace>')
    assert chart_rows(empty) == ("", [])


def test_a_slide_without_a_title_is_not_under_the_slide_before_it():
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[1])
    first.shapes.title.text = "Budget 2026"
    first.placeholders[1].text = "The travel budget is frozen until the second quarter."
    second = deck.slides.add_slide(deck.slide_layouts[6])  # blank: no title placeholder
    second.shapes.add_textbox(Inches(1), Inches(1), Inches(6), Inches(2)).text_frame.text = \
        "All contractors must renew their badge at the front desk."
    doc = parse_document(raw("decks/budget.pptx", saved(deck)))
    badge = next(e for e in doc.elements if "renew their badge" in doc.text[e.start:e.end])
    assert (badge.page, badge.heading_path) == (2, ())
    from rag_assets.core.chunking import ChunkingProfile, chunk_document
    from rag_assets.core.tokens import MINILM_TOKENIZER, get_token_counter

    for min_tokens in (0, 50):  # alone, or merged with the first slide
        chunks = chunk_document(doc, ChunkingProfile("p", strategy="markdown", min_tokens=min_tokens),
                                get_token_counter(MINILM_TOKENIZER), 256).chunks
        assert next(c for c in chunks if "renew their badge" in c.text).heading_path == ()


def _with_text_boxes(workbook: bytes, boxes: dict[int, list[tuple[int, int, str]]],
                     arrows: dict[int, tuple[int, int]] | None = None) -> bytes:
    """An XLSX ``workbook`` whose sheets (by number, from 1) show text boxes: (row, column, text),
    each a drawing shape anchored at that cell (its id the row), as Excel writes one, and on a
    sheet of ``arrows`` a connector from one box to another (by their rows)."""
    import zipfile

    xdr, a = "http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing", _DRAWING
    source, out = zipfile.ZipFile(io.BytesIO(workbook)), io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        for item in source.infolist():
            package.writestr(item, source.read(item))
        for number, shapes in boxes.items():
            anchors = "".join(
                f"<xdr:twoCellAnchor><xdr:from><xdr:col>{column}</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>{row}</xdr:row>"
                f"<xdr:rowOff>0</xdr:rowOff></xdr:from><xdr:to><xdr:col>{column + 3}</xdr:col><xdr:colOff>0</xdr:colOff>"
                f"<xdr:row>{row + 2}</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:to><xdr:sp><xdr:nvSpPr><xdr:cNvPr id='{row}' "
                f"name='TextBox'/><xdr:cNvSpPr txBox='1'/></xdr:nvSpPr><xdr:spPr/><xdr:txBody><a:bodyPr/>"
                + "".join(f"<a:p><a:r><a:t>{line}</a:t></a:r></a:p>" for line in text.split("\n"))
                + "</xdr:txBody></xdr:sp><xdr:clientData/></xdr:twoCellAnchor>" for row, column, text in shapes)
            glued = "<a:stCxn id='{}' idx='3'/><a:endCxn id='{}' idx='1'/>".format(*arrows[number]) \
                if arrows and number in arrows else ""
            anchors += ("<xdr:oneCellAnchor><xdr:from><xdr:col>0</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>0</xdr:row>"
                        "<xdr:rowOff>0</xdr:rowOff></xdr:from><xdr:ext cx='1' cy='1'/><xdr:cxnSp><xdr:nvCxnSpPr>"
                        f"<xdr:cNvPr id='99' name='Arrow'/><xdr:cNvCxnSpPr>{glued}</xdr:cNvCxnSpPr></xdr:nvCxnSpPr>"
                        "<xdr:spPr/></xdr:cxnSp><xdr:clientData/></xdr:oneCellAnchor>")  # an arrow: no text
            package.writestr(f"xl/drawings/drawing{number}.xml",
                             f'<xdr:wsDr xmlns:xdr="{xdr}" xmlns:a="{a}">{anchors}</xdr:wsDr>')
            package.writestr(f"xl/worksheets/_rels/sheet{number}.xml.rels",
                             '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
                             f'<Relationship Id="rId1" Type="{_REL}/drawing" Target="../drawings/drawing{number}.xml"/>'
                             "</Relationships>")
    return out.getvalue()


def test_a_sheet_s_text_boxes_are_read_after_its_cells():
    """openpyxl reads no drawing: a sheet's instructions or notes in text boxes were lost, and so
    was the arrow of a process drawn in boxes."""
    from openpyxl import Workbook

    book = Workbook()
    stock = book.active
    stock.title = "Stock"
    stock.append(["Part", "Units"])
    stock.append(["NW-BATT-5200", 40])
    book.create_sheet("Notes")  # no cells: a text box alone
    data = _with_text_boxes(saved(book), {1: [(6, 0, "Count the stock every Friday."),
                                               (1, 4, "How to fill in:\nUnits are pieces, not boxes.")],
                                          2: [(0, 0, "Ask Dana before ordering.")]}, arrows={1: (1, 6)})
    doc = parse_document(raw("stock.xlsx", data))
    assert [(doc.text[e.start : e.end], e.category, e.page) for e in doc.elements] == [
        ("Stock", "Title", 1), ("| Part | Units |\n| --- | --- |\n| NW-BATT-5200 | 40 |", "Table", 1),
        ("How to fill in:\nUnits are pieces, not boxes.", "NarrativeText", 1),
        ("Count the stock every Friday.", "NarrativeText", 1),
        ("How to fill in: Units are pieces, not boxes. → Count the stock every Friday.", "ListItem", 1),
        ("Notes", "Title", 2), ("Ask Dana before ordering.", "NarrativeText", 2)]


def test_a_sheet_s_charts_and_chart_sheets_read_as_their_titles_and_data():
    """openpyxl reads no chart: a chart's title ("Revenue by month 2026"), which no cell holds, was
    lost, and a chart sheet (a tab that is one chart) was left out. A chart reads after its sheet's
    cells as a slide's does: its title, then the data it caches as a table (none cached: its title
    alone); a chart sheet is a page of its own, numbered as its tab."""
    import re
    import zipfile

    from openpyxl import Workbook
    from openpyxl.chart import BarChart, LineChart, Reference

    book = Workbook()
    sales = book.active
    sales.title = "Sales"
    for row in (["Month", "Revenue"], ["Jan", 10], ["Feb", 12.5]):
        sales.append(row)
    charts = []
    for kind, title in ((BarChart, "Revenue by month 2026"), (LineChart, "Revenue trend")):
        chart = kind()
        chart.title = title
        chart.add_data(Reference(sales, min_col=2, min_row=1, max_row=3), titles_from_data=True)
        chart.set_categories(Reference(sales, min_col=1, min_row=2, max_row=3))
        charts.append(chart)
    sales.add_chart(charts[0], "D2")
    book.create_chartsheet("Trend").add_chart(charts[1])
    source, out = zipfile.ZipFile(io.BytesIO(saved(book))), io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:  # the values Excel caches in a chart (openpyxl writes none)
        for item in source.infolist():
            part = source.read(item)
            if item.filename == "xl/charts/chart1.xml":
                part = re.sub(rb"(<cat><numRef><f>[^<]*</f>)", rb"\1<numCache><ptCount val='2'/><pt idx='0'><v>Jan</v>"
                              rb"</pt><pt idx='1'><v>Feb</v></pt></numCache>", part)
                part = re.sub(rb"(<val><numRef><f>[^<]*</f>)", rb"\1<numCache><ptCount val='2'/><pt idx='0'><v>10</v>"
                              rb"</pt><pt idx='1'><v>12.5</v></pt></numCache>", part)
                part = part.replace(b"<strRef><f>'Sales'!B1</f>", b"<strRef><f>'Sales'!B1</f><strCache><ptCount val='1'/>"
                                    b"<pt idx='0'><v>Revenue</v></pt></strCache>")
            package.writestr(item, part)
    doc = parse_document(raw("sales.xlsx", out.getvalue()))
    assert [(doc.text[e.start : e.end], e.category, e.page) for e in doc.elements] == [
        ("Sales", "Title", 1), ("| Month | Revenue |\n| --- | --- |\n| Jan | 10 |\n| Feb | 12.5 |", "Table", 1),
        ("Revenue by month 2026", "NarrativeText", 1),
        ("|  | Revenue |\n| --- | --- |\n| Jan | 10 |\n| Feb | 12.5 |", "Table", 1),
        ("Trend", "Title", 2), ("Revenue trend", "NarrativeText", 2)]


def test_a_sheet_s_empty_columns_are_left_out():
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.title = "Stock"
    sheet["A1"], sheet["C1"], sheet["XFD1"] = "part", "units", "note"  # a stray cell far right
    sheet["A2"], sheet["C2"] = "NW-DOCK-4", 12
    doc = parse_document(raw("sheets/stock.xlsx", saved(book)))
    assert doc.text == "Stock\n\n| part | units | note |\n| --- | --- | --- |\n| NW-DOCK-4 | 12 |  |"


def test_a_word_style_with_an_outline_level_is_a_heading_of_that_level():
    from docx import Document
    from docx.enum.style import WD_STYLE_TYPE
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    word = Document()
    chapter = word.styles.add_style("Chapter", WD_STYLE_TYPE.PARAGRAPH)  # a template's own heading style
    chapter.base_style = word.styles["Heading 1"]
    translated = word.styles.add_style("Überschrift 2", WD_STYLE_TYPE.PARAGRAPH)  # a translated name, its own level
    level = OxmlElement("w:outlineLvl")
    level.set(qn("w:val"), "1")
    translated.element.get_or_add_pPr().append(level)
    contents = word.styles.add_style("Contents title", WD_STYLE_TYPE.PARAGRAPH)  # Heading 1 made body text again
    contents.base_style = word.styles["Heading 1"]
    body = OxmlElement("w:outlineLvl")
    body.set(qn("w:val"), "9")
    contents.element.get_or_add_pPr().append(body)
    word.add_paragraph("Contents", style="Contents title")
    word.add_paragraph("Travel and expenses", style="Chapter")
    word.add_paragraph("Hotels", style="Überschrift 2")
    word.add_paragraph("Book hotels through the travel desk at least a week ahead.")
    word.add_heading("Meals", 2)
    word.add_paragraph("Meals are paid up to the daily allowance of the destination city.")
    doc = parse_document(raw("handbook/travel.docx", saved(word)))
    paths = heading_paths(doc)
    assert paths["Book hotels through the travel desk at least a week ahead."] == ("Travel and expenses", "Hotels")
    assert paths["Meals are paid up to the daily allowance of the destination city."] == ("Travel and expenses", "Meals")
    assert paths["Contents"] == ()  # outline level 9: body text
    assert doc.title == "Travel and expenses"


def test_a_pdf_s_larger_font_lines_are_its_headings_nested_by_size(tmp_path):
    from tests.support.make_sample_binaries import write_pdf

    body = "The dock charges the robot in ninety minutes when the battery is empty."
    write_pdf(tmp_path / "dock.pdf", [
        [("Dock Manual", 24), "", ("Contents . . . . . . . . 2", 18), "Dock Manual",  # a running header, body size
         ("1 Setup", 18), "", ("1.1 Placing the dock", 14), "", "Keep half a metre free on each side of the dock.",
         "Weekly checks", "Wipe the charging contacts with a dry cloth."],
        ["Dock Manual", ("2 Charging", 18), "", body, ("2.1 Battery care", 14), "",
         "Store a robot at half charge when it is not used for a month."],
    ])
    doc = parse_document(raw("manuals/dock.pdf", (tmp_path / "dock.pdf").read_bytes()))
    assert doc.title == "Dock Manual"
    titles = [(e.page, e.heading_path) for e in doc.elements if e.category == "Title"]
    assert titles == [(1, ("Dock Manual",)), (1, ("Dock Manual", "1 Setup")), (1, ("Dock Manual", "1 Setup", "1.1 Placing the dock")),
                      (2, ("Dock Manual", "2 Charging")), (2, ("Dock Manual", "2 Charging", "2.1 Battery care"))]
    paths = heading_paths(doc)
    assert paths[body] == ("Dock Manual", "2 Charging")
    assert paths["Store a robot at half charge when it is not used for a month."][-1] == "2.1 Battery care"
    wipe = next(path for text, path in paths.items() if "Wipe the charging contacts" in text)
    assert wipe == ("Dock Manual", "1 Setup", "1.1 Placing the dock")  # "Weekly checks" (body size) is no heading
    assert all(doc.text[e.start:e.end].strip() == doc.text[e.start:e.end] != "" for e in doc.elements)
    # One font size throughout: unstructured's titles stay (the sample guide's "Monthly tasks").
    guide = parse_document(read_disk(SAMPLE, "handbook/robot_maintenance_guide.pdf"))
    assert [guide.text[e.start:e.end] for e in guide.elements if e.category == "Title"] == [
        "Robot Maintenance Guide", "Monthly tasks", "Battery care"]


def _column_ops(x: float, top: float, lines: list[str], size: float = 10) -> str:
    """A PDF content stream's text block: ``lines`` from (``x``, ``top``) down, in Helvetica ``size``."""
    shown = " ".join(f"({line}) Tj T*" for line in lines)
    return f"BT /F1 {size:g} Tf {size * 1.2:g} TL {x:g} {top:g} Td {shown} ET"


def test_a_pdf_page_in_two_columns_reads_column_by_column_and_a_paragraph_the_columns_cut_whole(tmp_path):
    """pdfminer read a two-column page whose right column is the shorter (a paper's last page, a
    figure ending a column) right column first, and a paragraph a column break cut in two pieces."""
    from tests.support.make_sample_binaries import write_pdf

    words = "the pump moves cold water through the loop and the valve keeps pressure steady".split()

    def paragraph(name: str, count: int, end: str = ".") -> list[str]:
        text = " ".join([f"{name} says", *(words[i % len(words)] for i in range(count))]) + end
        lines, line = [], ""
        for word in text.split():
            if len(line) + len(word) >= 38:
                lines.append(line)
                line = ""
            line = f"{line} {word}".strip()
        return lines + [line]

    left = [*paragraph("Alpha", 60), "", *paragraph("Beta", 50, "")]  # Beta goes on in the right column
    right = [*paragraph("and so", 12), "", *paragraph("Gamma", 30)]
    abstract = ["Abstract. We measure how cold water pumps hold pressure in closed loops, over a winter of",
                "readings from four plants, and show where the valves fail first and how to find them early."]
    ops = [_column_ops(150, 750, ["Pumps in Cold Loops"], 16), _column_ops(72, 715, abstract),
           _column_ops(72, 670, left), _column_ops(320, 670, right), _column_ops(300, 40, ["7"])]
    write_pdf(tmp_path / "paper.pdf", [[]], drawings={0: ops})
    doc = parse_document(raw("papers/pumps.pdf", (tmp_path / "paper.pdf").read_bytes()))
    paragraphs = [doc.text[e.start : e.end] for e in doc.elements]
    assert [p.split()[0] for p in paragraphs] == ["Pumps", "Abstract.", "Alpha", "Beta", "Gamma", "7"]
    # the sentence the column break cut is one paragraph, read on from the left column into the right
    assert " ".join(paragraphs[3].split()) == " ".join([*paragraph("Beta", 50, ""), *paragraph("and so", 12)])
    assert " ".join(paragraphs[4].split()) == " ".join(paragraph("Gamma", 30))


def test_a_pdf_s_contents_leaders_are_one_ellipsis(tmp_path):
    """libtasn1's manual: each contents and index entry's leader dots were 30 tokens of "." to MiniLM,
    its contents and index 15 of 134 chunks."""
    from tests.support.make_sample_binaries import write_pdf

    write_pdf(tmp_path / "dock.pdf", [["Contents", "1 Setup . . . . . . . . . . . . . 2", "2 Charging ............ 3",
                                       "Wait... the dock beeps. Version 1.2.3.4.5 fixes it."]])
    doc = parse_document(raw("manuals/dock.pdf", (tmp_path / "dock.pdf").read_bytes()))
    assert "1 Setup … 2" in doc.text and "2 Charging … 3" in doc.text and ". ." not in doc.text
    assert "Wait... the dock beeps. Version 1.2.3.4.5 fixes it." in doc.text  # an ellipsis and a version stay


def test_a_pdf_headed_by_its_font_sizes_is_read_without_unstructured_s_narrative_text_test(tmp_path, monkeypatch):
    """Its title guesses give way to the size headings, so the test that tells narrative text
    from titles (spaCy's tagger on each paragraph: half a PDF's parse) is not run; a PDF in one
    font size still runs it and keeps the guesses. A document that looked headed until a later
    page set the body size larger is read as one in one size."""
    import unstructured.partition.text as partition

    from rag_assets.core.parsing.pdf import parse_pdf
    from tests.support.make_sample_binaries import write_pdf

    calls = []
    narrative = partition.is_possible_narrative_text
    monkeypatch.setattr(partition, "is_possible_narrative_text", lambda text, *a, **k: calls.append(text) or narrative(text, *a, **k))
    body = "The dock charges the robot in ninety minutes when the battery is empty and the contacts are clean."
    write_pdf(tmp_path / "headed.pdf", [[("Dock Manual", 24), "", body, "", "Battery care", "", body], [body, body]])
    text, elements, _ = parse_pdf((tmp_path / "headed.pdf").read_bytes())
    assert calls == []
    assert [(text[e.start:e.end], e.category) for e in elements][:4] == [
        ("Dock Manual", "Title"), (body, "NarrativeText"), ("Battery care", "NarrativeText"), (body, "NarrativeText")]
    guide = read_disk(SAMPLE, "handbook/robot_maintenance_guide.pdf").data
    text, elements, _ = parse_pdf(guide)
    assert calls and "Monthly tasks" in [text[e.start:e.end] for e in elements if e.category == "Title"]
    # Page 1 looks headed ("Safety notes" above 10-point text), pages 2-3 set the body at 12 points.
    write_pdf(tmp_path / "late.pdf", [[("Safety notes", 12), "", (body, 10), (body, 10), "", ("Battery care", 10), "",
                                       (body, 10)], [body] * 7, [body] * 7])
    late = parse_document(raw("manuals/late.pdf", (tmp_path / "late.pdf").read_bytes()))
    care = next(e for e in late.elements if late.text[e.start:e.end] == "Battery care")
    assert (care.category, care.heading_path) == ("Title", ("Battery care",))  # unstructured's guess, as before


def test_a_pdf_s_outline_names_its_headings_whatever_their_font(tmp_path):
    from tests.support.make_sample_binaries import write_pdf

    # As Word exports one: bookmarks for its headings, the lower ones at the body's size.
    body = "The dock charges the robot in ninety minutes when the battery is empty."
    pages = [[("Dock Manual", 24), "", ("1 Setup", 16), "", "Placing the dock",
              "Keep half a metre free on each side of the dock.", "", "Weekly checks",
              "Wipe the charging contacts with a dry cloth."],
             ["Battery care", "", ("2 Charging", 16), "", "Charging times", body, "", "Battery care",
              "Store a robot at half charge when it is not used for a month.", "", "Returning a robot to its dock after",
              "a long storage period", "Charge it fully before its first run."]]
    outline = [(1, "Setup", 0), (2, "Placing the dock", 0), (1, "Charging", 1), (2, "Charging times", 1),
               (2, "Weekly checks", 1),  # names page 2, where no line reads so
               (2, "Battery care", 1), (2, "Returning a robot to its dock after a long storage period", 1)]
    write_pdf(tmp_path / "dock.pdf", pages, outline=outline)
    doc = parse_document(raw("manuals/dock.pdf", (tmp_path / "dock.pdf").read_bytes()))
    assert doc.title == "Dock Manual"
    titles = [(e.page, e.heading_path) for e in doc.elements if e.category == "Title"]
    assert titles == [(1, ("Dock Manual",)), (1, ("Dock Manual", "1 Setup")), (1, ("Dock Manual", "1 Setup", "Placing the dock")),
                      (2, ("Dock Manual", "2 Charging")), (2, ("Dock Manual", "2 Charging", "Charging times")),
                      (2, ("Dock Manual", "2 Charging", "Battery care")),
                      (2, ("Dock Manual", "2 Charging", "Returning a robot to its dock after a long storage period"))]
    paths = heading_paths(doc)
    assert paths[body][-1] == "Charging times"
    wipe = next(path for text, path in paths.items() if "Wipe the charging contacts" in text)
    assert wipe[-1] == "Placing the dock"  # "Weekly checks" is named for another page: no heading
    top = doc.elements[[doc.text[e.start:e.end] for e in doc.elements].index("Battery care")]
    assert (top.page, top.category, top.heading_path) == (2, "NarrativeText", ("Dock Manual", "1 Setup", "Placing the dock"))  # atop page 2: not the heading
    assert paths["Charge it fully before its first run."][-1].startswith("Returning a robot")
    # Without the outline the body-size headings are body text; a damaged (cyclic) outline reads the same.
    write_pdf(tmp_path / "plain.pdf", pages)
    plain = parse_document(raw("manuals/dock.pdf", (tmp_path / "plain.pdf").read_bytes()))
    assert [e.heading_path for e in plain.elements if e.category == "Title"] == [
        ("Dock Manual",), ("Dock Manual", "1 Setup"), ("Dock Manual", "2 Charging")]
    write_pdf(tmp_path / "cycle.pdf", pages, outline=outline, outline_cycle=True)
    cyclic = parse_document(raw("manuals/dock.pdf", (tmp_path / "cycle.pdf").read_bytes()))
    assert (cyclic.text, cyclic.elements) == (doc.text, doc.elements)
    write_pdf(tmp_path / "named.pdf", pages, outline=outline, outline_names=True)  # GoTo named destinations
    named = parse_document(raw("manuals/dock.pdf", (tmp_path / "named.pdf").read_bytes()))
    assert (named.text, named.elements) == (doc.text, doc.elements)


def test_a_pdf_s_ruled_table_is_its_rows(tmp_path):
    from tests.support.make_sample_binaries import write_pdf

    rows = [("Model", "Charge time", "Dock"), ("R3", "90 minutes", "D3"), ("R4", "75 minutes", "D4 or D4S")]
    xs, ys = [72, 200, 330, 460], [600, 580, 560, 540]  # the grid's columns and rows
    table = [f"{x} {ys[0]} m {x} {ys[-1]} l S" for x in xs] + [f"{xs[0]} {y} m {xs[-1]} {y} l S" for y in ys]
    for r, row in enumerate(rows):
        table += [f"BT /F1 10 Tf {xs[c] + 4} {ys[r] - 14} Td ({cell}) Tj ET" for c, cell in enumerate(row)]
    write_pdf(tmp_path / "models.pdf", [[("Dock models", 18), "", "Each robot charges on its own dock.",
                                         "", "", "", "", "", "", "", "", "", "", "", "", "", "", "",
                                         "Older docks charge newer robots at half speed."]], drawings={0: table})
    doc = parse_document(raw("manuals/models.pdf", (tmp_path / "models.pdf").read_bytes()))
    assert doc.text == ("Dock models\n\nEach robot charges on its own dock.\n\n"
                        "| Model | Charge time | Dock |\n| --- | --- | --- |\n| R3 | 90 minutes | D3 |\n"
                        "| R4 | 75 minutes | D4 or D4S |\n\nOlder docks charge newer robots at half speed.")
    assert [e.category for e in doc.elements][0::2] == ["Title", "Table"]
    assert all(e.heading_path == ("Dock models",) for e in doc.elements)
    # A frame around one paragraph (one cell) is no table.
    frame = ["72 700 m 540 700 l S", "72 640 m 540 640 l S", "72 700 m 72 640 l S", "540 700 m 540 640 l S"]
    write_pdf(tmp_path / "note.pdf", [["", "", "", "Note: keep the dock dry."]], drawings={0: frame})
    assert "|" not in parse_document(raw("note.pdf", (tmp_path / "note.pdf").read_bytes())).text


def test_a_pdf_paragraph_is_one_element_however_many_lines_it_has(tmp_path):
    import textwrap

    from tests.support.make_sample_binaries import write_pdf

    clause = ("The supplier shall deliver the goods to the warehouse of the buyer within thirty days of the order, "
              "and shall bear the cost of carriage and insurance until the goods are received. ")
    long, short = textwrap.wrap(clause * 6, 90), textwrap.wrap(clause, 90)
    assert len(long) >= 12
    write_pdf(tmp_path / "contract.pdf", [[("Terms", 16), "", *long], [*short]])
    doc = parse_document(raw("legal/contract.pdf", (tmp_path / "contract.pdf").read_bytes()))
    # was: with ten lines or more in a row, unstructured made each line a paragraph of its own,
    # cutting sentences at line ends ("... within thirty days of" / "the order, and ...")
    assert [doc.text[e.start:e.end] for e in doc.elements] == ["Terms", " ".join(long), " ".join(short)]


def test_only_drawings_that_can_bound_cells_are_searched_for_tables(tmp_path):
    import pdfplumber

    from rag_assets.core.parsing.pdf import _may_bound_cells
    from tests.support.make_sample_binaries import write_pdf

    rules = ["72 700 m 540 700 l S", "72 100 m 540 100 l S", "300 650 m 300 600 l S"]  # two rules, one bar
    grid = [f"{x} 600 m {x} 540 l S" for x in (72, 200, 330)] + [f"72 {y} m 330 {y} l S" for y in (600, 570, 540)]
    drawings = {0: rules, 1: grid, 2: ["72 600 200 60 re S"], 3: ["72 600 m 200 600 l 200 540 l S"]}
    write_pdf(tmp_path / "drawn.pdf", [["A page of text."]] * 4, drawings=drawings)
    with pdfplumber.open(tmp_path / "drawn.pdf", laparams={}) as pdf:
        assert [_may_bound_cells(page.layout) for page in pdf.pages] == [False, True, True, True]


def test_a_pdf_s_running_headers_footers_and_page_numbers_are_left_out(tmp_path):
    from tests.support.make_sample_binaries import write_pdf

    pages = [["Northwind Dock Manual - Confidential", "", "", f"Step {n}: the dock charges the robot in {n * 10} minutes.",
              "", "Wear gloves.", "", f"Step {n}b: check the contacts.", "", "", "", f"Page {n} of 4"] for n in range(1, 5)]
    write_pdf(tmp_path / "manual.pdf", pages)
    doc = parse_document(raw("manuals/manual.pdf", (tmp_path / "manual.pdf").read_bytes()))
    assert "Confidential" not in doc.text and "Page " not in doc.text
    assert doc.text.count("Wear gloves.") == 4  # repeated on every page, but inside it: kept
    assert [e.page for e in doc.elements if "the dock charges the robot" in doc.text[e.start:e.end]] == [1, 2, 3, 4]
    assert "Step 4b: check the contacts." in doc.text
    write_pdf(tmp_path / "short.pdf", pages[:2])  # two pages: too few to tell a running header
    assert "Confidential" in parse_document(raw("manuals/short.pdf", (tmp_path / "short.pdf").read_bytes())).text


def test_a_pdf_s_ligatures_read_as_their_letters(tmp_path):
    """A font that maps its ligature glyphs to U+FB01 "ﬁ" and the like (matplotlib's TrueType
    embedding does, as LaTeX's often do): "ﬁle" matched no keyword search for "file"."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with matplotlib.rc_context({"pdf.fonttype": 42}):
        figure = plt.figure(figsize=(6, 4))
        figure.text(0.1, 0.8, "The \ufb01le \ufb02ows into the o\ufb03ce.", fontsize=12)
        figure.savefig(tmp_path / "office.pdf")
        plt.close(figure)
    doc = parse_document(raw("office.pdf", (tmp_path / "office.pdf").read_bytes()))
    assert doc.text == "The file flows into the office."


def test_a_pdf_s_raised_and_lowered_characters_read_as_such(tmp_path):
    """Superscripts and subscripts (smaller, set above or below the baseline with the text rise) ran
    into the word before them: 10 to the 6th read "106", a footnote's mark "maintenance3"."""
    from tests.support.make_sample_binaries import write_pdf

    def small(text: str, rise: int) -> list[str]:
        return ["/F1 8 Tf", f"{rise} Ts", f"({text}) Tj", "0 Ts", "/F1 12 Tf"]

    ops = ["BT", "/F1 12 Tf", "72 700 Td", "(Check the maintenance) Tj", *small("3", 5), "( plan: 10) Tj",
           *small("-6", 5), "( per m) Tj", *small("2", 5), "( of CO) Tj", *small("2", -3), "( in SMALL CAPS) Tj",
           *small("TEXT", 0), "(.) Tj", "ET"]
    write_pdf(tmp_path / "plan.pdf", [["Intro."]], drawings={0: ops})
    doc = parse_document(raw("plan.pdf", (tmp_path / "plan.pdf").read_bytes()))
    assert doc.text == "Intro.\n\nCheck the maintenance^3 plan: 10^-6 per m^2 of CO_2 in SMALL CAPSTEXT."


def test_a_web_page_s_superscripts_and_subscripts_read_as_such():
    """unstructured ran a <sup> or <sub> into the text before it: 2 to the 32nd read "232" (the Rust
    reference's integer ranges), a footnote mark "tests.1", H2O's subscript "H2O"."""
    page = ("<html><body><h1>Ranges</h1><p>From 0 to 2<sup>32</sup>-1 or <code>2</code><sup>-64</sup>; see the "
            "tests.<sup class='footnote'><a href='#fn1'>1</a></sup> H<sub>2</sub>O.</p><p><sup>Syntax</sup> "
            "Visibility<sup>?</sup> Item</p></body></html>")
    doc = parse_document(raw("ranges.html", page.encode()))
    assert doc.text == "Ranges\n\nFrom 0 to 2^32-1 or 2^-64; see the tests.^1 H_2O.\n\nSyntax Visibility? Item"
    org = parse_document(raw("sizes.org", b"* Sizes\n\nAbout 10^{6} cells of H_{2}O.\n"))  # through pandoc's HTML
    assert org.text == "Sizes\n\nAbout 10^6 cells of H_2O."


def test_a_web_page_s_equations_read_as_lines_of_text():
    """unstructured read no MathML: an equation was lost and its sentence read with a gap ("Energy
    holds"). One without a rendering reads as its alttext; one lxml cannot read stays as it was."""
    page = ('<html><body><h1>Physics</h1><p>Energy <math><mi>E</mi><mo>=</mo><mi>m</mi><msup><mi>c</mi><mn>2</mn>'
            '</msup></math> holds.</p><MATH display="block"><semantics><mfrac><mrow><mi>a</mi><mo>+</mo><mi>b</mi></mrow>'
            '<mn>2</mn></mfrac><annotation encoding="application/x-tex">\\frac{a+b}{2}</annotation></semantics></MATH>'
            '<p>Then <math alttext="x &lt; 1"></math> and <math><mtext>a &amp; b</mtext></math>.</p></body></html>')
    doc = parse_document(raw("physics.html", page.encode()))
    assert doc.text == "Physics\n\nEnergy E=mc^2 holds.\n\n(a+b)/2\n\nThen x < 1 and a & b."
    # KaTeX's output: the MathML, and its rendering for the eye hidden from readers (read "E=mc2" beside it)
    katex = ('<p>So <span class="katex"><span class="katex-mathml"><math><semantics><mrow><mi>E</mi><mo>=</mo><mi>m</mi>'
             '<msup><mi>c</mi><mn>2</mn></msup></mrow><annotation encoding="application/x-tex">E=mc^2</annotation>'
             '</semantics></math></span><span class="katex-html" aria-hidden="true"><span class="mord">E</span><span '
             'class="mrel">=</span><span class="mord">mc</span><span class="msupsub">2</span></span></span> holds.</p>'
             '<p><span aria-hidden="true">4.5</span> stars</p>')  # hidden beside no equation: read as before
    assert parse_document(raw("katex.html", katex.encode())).text == "So E=mc^2 holds.\n\n4.5 stars"


def test_a_chapter_s_running_header_over_its_pages_is_left_out(tmp_path):
    """A book's running header names the chapter over its pages (libtasn1's manual: "Chapter 4:
    Function reference" over 15 of 36 pages, "Chapter 3: Utilities" over 2): fewer than half the
    pages each, they were read into the text at every page's top."""
    from tests.support.make_sample_binaries import write_pdf

    pages = [[f"Chapter {1 + n // 3}: {'Setup' if n < 3 else 'Charging'}", "", f"Step {n}: the dock works {n} hours.",
              "", "Wear gloves."] for n in range(7)]
    pages[0][0:1] = [("Chapter 1: Setup", 18)]  # the chapter's heading: kept
    write_pdf(tmp_path / "book.pdf", pages + [["Notes"]])
    doc = parse_document(raw("manuals/book.pdf", (tmp_path / "book.pdf").read_bytes()))
    assert "Chapter 2" not in doc.text and doc.text.count("Chapter 1: Setup") == 1
    assert [e.page for e in doc.elements if "the dock works" in doc.text[e.start:e.end]] == list(range(1, 8))
    odd = [["Intro text."], ["Body A.", "", "", "", "Item 2"], ["Body B.", "", "", "", "Item 3"], ["End."]]
    write_pdf(tmp_path / "items.pdf", odd)  # numbered like the pages on two of them only: no running line
    items = parse_document(raw("manuals/items.pdf", (tmp_path / "items.pdf").read_bytes()))
    assert "Item 2" in items.text and "Item 3" in items.text


def test_a_sentence_a_page_break_cuts_reads_as_one(tmp_path):
    """A paragraph that runs over a page break was two, the sentence cut in two units (and a word
    hyphenated over the break two words); it reads as one, each part cited on its own page."""
    from rag_assets.core.chunking import ChunkingProfile, chunk_document
    from rag_assets.core.tokens import MINILM_TOKENIZER, get_token_counter
    from tests.support.make_sample_binaries import write_pdf

    write_pdf(tmp_path / "dock.pdf", [["Clean the dock.", "", "Its contacts must be wiped every"],
                                      ["week with a dry cloth. Replace the mainte-"], ["nance kit yearly."],
                                      ["Then stop.", "", "The end"], ["Afterword in lower case."]])
    doc = parse_document(raw("manuals/dock.pdf", (tmp_path / "dock.pdf").read_bytes()))
    assert doc.text == ("Clean the dock.\n\nIts contacts must be wiped every week with a dry cloth. Replace the "
                        "maintenance kit yearly.\n\nThen stop.\n\nThe end\n\nAfterword in lower case.")
    assert [e.page for e in doc.elements if e.category != "Title"][:4] == [1, 1, 2, 3]
    chunks = chunk_document(doc, ChunkingProfile("p", strategy="sentence", max_tokens=24, min_tokens=0,
                                                           contextual_header=False),
                            get_token_counter(MINILM_TOKENIZER), 256).chunks
    wiped = next(chunk for chunk in chunks if "Its contacts must be wiped every week with a dry cloth." in chunk.text)
    assert (wiped.page, wiped.page_end) == (1, 3 if "kit yearly" in wiped.text else 2)
    # within a page: a list item's lines read apart, a box that ends in a cut word; a box of code lines stays
    write_pdf(tmp_path / "list.pdf", [["Clean the dock.", "", "- Wipe the contacts with a dry cloth, and", "",
                                       "the charging plate too.", "", "It writes the DER en-", "", "coding of it.", "",
                                       "Code", "", "value1 INTEGER", "", "value2 BOOLEAN"]])
    listed = parse_document(raw("manuals/list.pdf", (tmp_path / "list.pdf").read_bytes()))
    assert listed.text == ("Clean the dock.\n\nWipe the contacts with a dry cloth, and the charging plate too.\n\n"
                           "It writes the DER encoding of it.\n\nCode\n\nvalue1 INTEGER\n\nvalue2 BOOLEAN")


def test_a_sentence_a_page_break_cuts_reads_on_past_the_page_s_footnotes(tmp_path):
    """A footnote at the page's foot (a contract's, a paper's) stood between a sentence and its
    end on the next page, which then read as two paragraphs."""
    from tests.support.make_sample_binaries import write_pdf

    write_pdf(tmp_path / "lease.pdf", [["The tenant keeps the dock clean.", "", "Its contacts must be wiped every"],
                                       ["week with a dry cloth by the staff of the tenant."]],
              drawings={0: [_column_ops(72, 80, ["1 The staff are listed in annex B.", "2 As of 2026."], 8)]})
    doc = parse_document(raw("contracts/lease.pdf", (tmp_path / "lease.pdf").read_bytes()))
    assert doc.text == ("The tenant keeps the dock clean.\n\nIts contacts must be wiped every week with a dry cloth by "
                        "the staff of the tenant.\n\n1 The staff are listed in annex B. 2 As of 2026.")
    assert [e.page for e in doc.elements] == [1, 1, 2, 1]  # each part, and the footnotes, cited on their own page


def _filled_form() -> bytes:
    """A one-page PDF form: labels on the page, a filled text field (its tooltip names it), an
    empty one, a ticked and an unticked box, and a radio group whose chosen button is one of two
    widgets, the value on the group; widgets without /P (optional), listed by the page."""
    from tests.support.make_sample_binaries import _pdf_file

    labels = [(72, 700, "Employee name"), (72, 660, "Team"), (72, 620, "First aider"), (72, 580, "Night shifts"),
              (72, 540, "Vest colour"), (72, 480, "Return the form to the site office.")]
    stream = "BT /F1 12 Tf " + " ".join(f"1 0 0 1 {x} {y} Tm ({text}) Tj" for x, y, text in labels) + " ET"
    widget = "/Type /Annot /Subtype /Widget /F 4"
    objects = [
        (1, b"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [5 0 R 6 0 R 7 0 R 8 0 R 9 0 R] >> >>"),
        (2, b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>"),
        (3, b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 12 0 R "
            b">> >> /Annots [5 0 R 6 0 R 7 0 R 8 0 R 10 0 R 11 0 R] >>"),
        (4, b"<< /Length %d >>\nstream\n" % len(stream) + stream.encode() + b"\nendstream"),
        (5, f"<< {widget} /FT /Tx /T (f1_01) /TU (Employee name) /V (Ann Lee) /Rect [200 696 400 714] >>".encode()),
        (6, f"<< {widget} /FT /Tx /T (team) /V () /Rect [200 656 400 674] >>".encode()),
        (7, f"<< {widget} /FT /Btn /T (First aider) /V /Yes /Rect [200 616 214 630] >>".encode()),
        (8, f"<< {widget} /FT /Btn /T (Night shifts) /V /Off /Rect [200 576 214 590] >>".encode()),
        (9, b"<< /FT /Btn /T (Vest colour) /V /Orange /Kids [10 0 R 11 0 R] >>"),
        (10, f"<< {widget} /Parent 9 0 R /Rect [200 536 214 550] >>".encode()),
        (11, f"<< {widget} /Parent 9 0 R /Rect [260 536 274 550] >>".encode()),
        (12, b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"),
    ]
    return _pdf_file(objects)


def test_a_pdf_form_s_filled_fields_are_read_after_their_labels():
    """pdfminer reads no field's value (it is no page text): a filled form was read blank."""
    doc = parse_document(raw("forms/badge.pdf", _filled_form()))
    assert doc.text == ("Employee name\n\nEmployee name: Ann Lee\n\nTeam\n\nFirst aider\n\nFirst aider: Yes\n\n"
                        "Night shifts\n\nVest colour\n\nVest colour: Orange\n\nReturn the form to the site office.")
    assert all(e.page == 1 for e in doc.elements)
    # a damaged form (a field that is its own kid's kid, a field of no dictionary) reads as far as it can
    damaged = _filled_form().replace(b"/Kids [10 0 R 11 0 R]", b"/Kids [9 0 R 10 0 R 11 0 R 13 0 R]")
    assert "Vest colour: Orange" in parse_document(raw("forms/damaged.pdf", damaged)).text


def test_an_email_is_its_subject_senders_body_and_attachments():
    mail = parse_document(raw("support/dock firmware.eml", email_message()))
    assert (mail.content_type, mail.title) == ("email", "Dock firmware 2.4 stops R4 docks charging")
    assert mail.text.startswith(
        "Dock firmware 2.4 stops R4 docks charging\n\nFrom: Dana Lee <dana@northwind.example>\n"
        "To: support@northwind.example\nCc: Jürgen Weiß <jw@northwind.example>\nDate: Tue, 03 Nov 2026 10:12:00 +0000\n"
        "Attachments: dock.log; service note.pdf; photo.png (not read: OCR found no text); "
        "settings.docx (not read: cannot be parsed as docx)\n\n")
    assert "restores firmware 2.3" in mail.text and "| R4 | 2.4 |" in mail.text  # the HTML body, its table as rows
    body = next(e for e in mail.elements if "reset button" in mail.text[e.start:e.end])
    assert body.heading_path == ("Dock firmware 2.4 stops R4 docks charging",)
    spans = {mail.text[e.start:e.end]: e for e in mail.elements}
    log, note = spans["ATTACHMENT-TEXT-7731: charge controller timeout"], spans[
        "Dock R4 service note Firmware 2.3 is the last that charges."]
    assert log.heading_path == ("Dock firmware 2.4 stops R4 docks charging", "Attachment: dock.log")
    assert (note.page, note.heading_path) == (1, ("Dock firmware 2.4 stops R4 docks charging",
                                                  "Attachment: service note.pdf"))
    assert body.start < log.start < note.start  # the body, then the attachments in their order


def test_an_attached_message_is_read_without_its_attachments_and_body_images_are_left_out():
    from email.message import EmailMessage

    inner = EmailMessage()
    inner["From"], inner["Subject"] = "ops@northwind.example", "Charging incident"
    inner.set_content("The R4 docks stopped charging at 09:00.\n")
    inner.add_attachment(b"INNER-ATTACHMENT-5512", maintype="text", subtype="plain", filename="trace.txt")
    outer = EmailMessage()
    outer["From"], outer["Subject"] = "dana@northwind.example", "Fwd: Charging incident"
    outer.set_content("See the forwarded message.\n")
    outer.add_attachment(inner)
    mail = parse_document(raw("fwd.eml", bytes(outer)))
    assert "Attachments: Charging incident.eml\n" in mail.text
    stopped = next(e for e in mail.elements if "stopped charging at 09:00" in mail.text[e.start:e.end])
    assert stopped.heading_path == ("Fwd: Charging incident", "Attachment: Charging incident.eml", "Charging incident")
    assert "INNER-ATTACHMENT" not in mail.text and "trace.txt" not in mail.text

    # an image the HTML body shows (its Content-ID) is no attachment; one attached is named
    shown = EmailMessage()
    shown["From"], shown["Subject"] = "dana@northwind.example", "New dock"
    shown.set_content("<p>The new dock:</p><img src='cid:dock@northwind'>", subtype="html")
    shown.add_related(png(), maintype="image", subtype="png", cid="<dock@northwind>")
    assert parse_document(raw("shown.eml", bytes(shown))).text == "New dock\n\nFrom: dana@northwind.example\n\nThe new dock:"
    from msgforge import Message

    outlook = Message(subject="New dock", html_body="<p>The new dock:</p><img src='cid:dock'>", sender="dana@northwind.example")
    outlook.attach_bytes("dock.png", png(), content_id="dock").attach_bytes("photo.png", png())
    assert parse_document(raw("shown.msg", outlook.as_bytes())).text == (
        "New dock\n\nFrom: dana@northwind.example\nAttachments: photo.png (not read: OCR found no text)\n\nThe new dock:")


def test_an_attachment_over_a_limit_is_named_and_the_message_still_read():
    from email.message import EmailMessage

    message = EmailMessage()
    message["From"], message["Subject"] = "dana@northwind.example", "Figures"
    message.set_content("The quarterly figures are attached.\n")
    message.add_attachment(expanding_docx(0.1), maintype="application", subtype="octet-stream", filename="figures.docx")
    mail = parse_document(raw("figures.eml", bytes(message)), ParseLimits(max_expanded_mb=0.05))
    assert mail.text == ("Figures\n\nFrom: dana@northwind.example\nAttachments: figures.docx (not read: expands over "
                         "the source's max_expanded_mb)\n\nThe quarterly figures are attached.")
    assert "Quarterly figures, line 499." in parse_document(raw("figures.eml", bytes(message))).text  # 0.1 MB: read


def test_an_outlook_message_reads_as_the_same_message_saved_as_eml():
    mail, outlook = parse_document(raw("dock.eml", email_message())), parse_document(raw("dock.msg", outlook_message()))
    assert (outlook.content_type, outlook.title, outlook.text) == ("email", mail.title, mail.text)
    assert outlook.elements == mail.elements
    plain = parse_document(raw("dock.msg", outlook_message(html=False)))  # no HTML body: the text one
    assert "charges.\n\nAttachment: dock.log" in plain.text and "reset button" not in plain.text
    # told apart by content, not by name: each format read under the other's extension
    assert parse_document(raw("dock.eml", outlook_message())).text == mail.text
    assert parse_document(raw("dock.msg", email_message())).text == mail.text


def plain_text_mails(subject: str, body: str):
    """A message with a plain-text ``body`` only, parsed as .eml and as Outlook's .msg."""
    from email.message import EmailMessage

    from msgforge import Message

    message = EmailMessage()
    message["From"], message["Subject"] = "dana@northwind.example", subject
    message.set_content(body)
    outlook = Message(subject=subject, text_body=body, sender="dana@northwind.example")
    return parse_document(raw("mail.eml", bytes(message))), parse_document(raw("mail.msg", outlook.as_bytes()))


def test_a_plain_text_message_keeps_its_hard_wrapped_paragraphs_whole():
    """A plain-text body wrapped at 72 columns: a paragraph is one element however many lines it
    has (unstructured's own choice, by the share of blank lines, made every line of a body of long
    paragraphs an element of its own), a signature's short lines stay apart."""
    import textwrap

    paragraphs = [" ".join(f"Dock R4 unit {n} of batch {p} restarts its charge cycle after a reset." for n in range(14))
                  for p in range(2)]
    body = "\n\n".join(textwrap.fill(p, 72) for p in paragraphs) + "\n\nDana Lee\nNorthwind Robotics\n"
    assert body.count("\n\n") / body.count("\n") < 0.1  # few blank lines: what made unstructured split lines
    for mail in plain_text_mails("Charge cycles", body):
        texts = [mail.text[e.start:e.end] for e in mail.elements]
        assert texts[-4:] == [*paragraphs, "Dana Lee", "Northwind Robotics"], texts


def test_a_plain_text_reply_reads_its_quoted_messages_without_their_quoting():
    """Each quoted level is a paragraph of its own, its "> " markers taken off, its wrapped lines
    joined (they stood inline: "... restarts, then > install firmware 2.3")."""
    body = ("Sam,\n\nRolling back fixed it on all six R4 docks.\n\nThanks,\nDana\n\n"
            "On Tue, 3 Nov 2026 at 10:12, Sam Ortiz <sam@northwind.example> wrote:\n"
            "> Hold the reset button for ten seconds while the dock restarts, then\n"
            "> install firmware 2.3 from the service menu.\n>\n"
            ">> Our R4 docks stopped charging after the 2.4 update and show a red\n>> light.\n")
    for mail in plain_text_mails("Re: R4 docks", body):
        texts = [mail.text[e.start:e.end] for e in mail.elements]
        assert texts[-6:] == [
            "Rolling back fixed it on all six R4 docks.", "Thanks,", "Dana",
            "On Tue, 3 Nov 2026 at 10:12, Sam Ortiz <sam@northwind.example> wrote:",
            "Hold the reset button for ten seconds while the dock restarts, then install firmware 2.3 from the service menu.",
            "Our R4 docks stopped charging after the 2.4 update and show a red light."], texts


def test_a_quoted_or_forwarded_message_is_under_the_line_that_introduces_it():
    """A reply's quoted history read as the replier's own text, under the subject alone ("Hold the
    reset button" was Dana's words to a reader of its chunk); now each quoted message is a
    section headed by its sender and date, the reply's own text stays under the subject, and
    answers written between quoted lines keep every line under the subject."""
    body = ("Sam,\n\nRolling back fixed it.\n\nDana\n\n"
            "On Tue, 3 Nov 2026 at 10:12, Sam Ortiz <sam@northwind.example> wrote:\n"
            "> Hold the reset button for ten seconds.\n>\n"
            "> On Mon, 2 Nov 2026, Dana Lee <dana@northwind.example> wrote:\n"
            ">> Our R4 docks stopped charging after the 2.4 update.\n")
    sam = "On Tue, 3 Nov 2026 at 10:12, Sam Ortiz <sam@northwind.example> wrote:"
    dana = "On Mon, 2 Nov 2026, Dana Lee <dana@northwind.example> wrote:"
    for mail in plain_text_mails("Re: R4 docks", body):
        paths = heading_paths(mail)
        assert paths["Rolling back fixed it."] == ("Re: R4 docks",)
        assert paths["Hold the reset button for ten seconds."] == ("Re: R4 docks", sam)
        assert paths["Our R4 docks stopped charging after the 2.4 update."] == ("Re: R4 docks", dana)
    inline = "Sam,\n\n> Did the reset help?\nNo, only the rollback.\n\n" + body.split("\n\n", 3)[3]
    for mail in plain_text_mails("Re: R4 docks", inline):  # answers between the quoted lines
        assert {e.heading_path for e in mail.elements} == {("Re: R4 docks",)}
    outlook = ('<p>Approved.</p><div style="border-top:solid #E1E1E1 1.0pt"><p><b>From:</b> Sam Ortiz '
               '&lt;sam@northwind.example&gt;<br><b>Sent:</b> Tuesday, November 3, 2026 10:12 AM<br><b>To:</b> Dana '
               'Lee<br><b>Subject:</b> Dock budget</p></div><p>The dock refit needs 40k.</p>'
               '<div class="gmail_quote"><div class="gmail_attr">---------- Forwarded message ---------<br>From: Ann '
               'Kim &lt;ann@northwind.example&gt;<br>Date: Mon, Nov 2, 2026<br>Subject: Quote</div><br>'
               '<p>Refit quote: 38k.</p></div>')
    mail = parse_document(raw("re.eml", _mail("Content-Type: text/html; charset=utf-8", outlook.encode())))
    paths = heading_paths(mail)
    assert paths["Approved."] == ("Report",)
    assert paths["The dock refit needs 40k."] == ("Report", "From: Sam Ortiz <sam@northwind.example> Sent: Tuesday, "
                                                  "November 3, 2026 10:12 AM")
    assert paths["Refit quote: 38k."] == ("Report", "---------- Forwarded message --------- From: Ann Kim "
                                          "<ann@northwind.example> Date: Mon, Nov 2, 2026")


PNG_PAYLOAD = base64.b64encode(bytes(range(256)) * 200).decode()  # 68 kB of base64


@pytest.mark.parametrize("doc_id, wrap", [
    ("notes/setup.md", lambda uri: f"![diagram]({uri})"),
    ("notes/setup.txt", lambda uri: f"<img src=\"{uri}\" alt=\"diagram\">"),
    ("web/site.css", lambda uri: f"@font-face {{ src: url('{uri}') }}"),
])
def test_a_pasted_pictures_base64_payload_is_elided_and_the_text_around_it_kept(doc_id, wrap):
    uri = f"data:image/png;base64,{PNG_PAYLOAD}"
    doc = parse_document(raw(doc_id, f"# Setup\n\nSee the diagram:\n\n{wrap(uri)}\n\n## Proxy\n\nSet the proxy.\n".encode()))
    assert PNG_PAYLOAD[:100] not in doc.text and wrap("data:image/png;base64,…") in doc.text
    assert doc.text.endswith("## Proxy\n\nSet the proxy.\n") and len(doc.text) < 200
    for el in doc.elements:
        assert 0 <= el.start < el.end <= len(doc.text) and doc.text[el.start : el.end].strip()


def test_short_data_uris_and_base64_outside_a_data_uri_are_kept():
    spacer = "data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"
    text = f"![]({spacer})\n\nkey: {PNG_PAYLOAD[:300]}\n"
    assert parse_document(raw("notes/a.md", text.encode())).text == text


def test_a_notebook_markdown_cell_s_pasted_picture_is_elided():
    cells = [{"cell_type": "markdown", "source": ["# Plot\n", f"![p](data:image/png;base64,{PNG_PAYLOAD})"]}]
    book = parse_document(raw("a.ipynb", json.dumps({"cells": cells, "nbformat": 4}).encode()))
    assert book.text == "# Plot\n![p](data:image/png;base64,…)"


def test_a_notebook_is_its_cells_as_markdown_with_fenced_code_and_what_it_printed():
    book = parse_document(raw("analysis/churn.ipynb", notebook()))
    assert (book.content_type, book.title) == ("notebook", "Churn analysis")
    assert book.text == ("# Churn analysis\n\nWe load the **events** table.\n\n```python\nimport pandas as pd\n"
                         "events = pd.read_parquet('events.parquet')\n```\n\n```text\nOUTPUT-LOG-4417\n```\n\n"
                         "## Findings\n\nChurn is highest in the third month.")  # the picture and its <Figure>: out
    assert [(e.category, e.heading_path) for e in book.elements] == [
        ("Title", ("Churn analysis",)), ("NarrativeText", ("Churn analysis",)), ("CodeSnippet", ("Churn analysis",)),
        ("CodeSnippet", ("Churn analysis",)),
        ("Title", ("Churn analysis", "Findings")), ("NarrativeText", ("Churn analysis", "Findings"))]
    cells = [{"cell_type": "code", "source": "model.aic", "outputs": [
        {"output_type": "stream", "name": "stderr", "text": "WARNING: slow\n"},
        {"output_type": "execute_result", "data": {"text/plain": "1234.5", "text/html": "<b>1234.5</b>"}}]},
        {"cell_type": "code", "source": "train()", "outputs": [
            {"output_type": "stream", "name": "stdout", "text": [f"epoch {i} loss 0.{i:03d}\n" for i in range(500)]}]},
        {"cell_type": "code", "source": "display(top)", "outputs": [  # a displayed table and Markdown were lost
            {"output_type": "display_data", "data": {"text/plain": "   region  churn\n0  north   0.12"}},
            {"output_type": "display_data", "data": {"text/markdown": "**Best month:** May", "text/plain": "<Markdown>"}},
            {"output_type": "display_data", "data": {"application/vnd.jupyter.widget-view+json": {}, "text/plain": "HBox()"}}]}]
    fitted = parse_document(raw("fit.ipynb", json.dumps({"cells": cells, "nbformat": 4}).encode())).text
    assert "```\nmodel.aic\n```\n\n```text\n1234.5\n```" in fitted and "WARNING" not in fitted and "<b>" not in fitted
    assert "epoch 19 loss" in fitted and "epoch 20 loss" not in fitted  # a training log: its first 20 lines
    assert "0  north   0.12\n**Best month:** May\n```" in fitted and "HBox" not in fitted  # a widget: left out


def test_a_workbook_is_its_sheets_as_tables_a_sheet_a_page():
    book = parse_document(raw("inventory/stock.xlsx", workbook()))
    assert (book.content_type, book.title) == ("xlsx", "Parts inventory")
    assert book.text == ("Stock\n\n| Part | Name | Units | Checked |\n| --- | --- | --- | --- |\n"
                         "| NW-BATT-5200 | Battery ｜ 5200 mAh | 40 | 2026-03-31 |\n| NW-BRUSH-1 | Side brush |  |  |\n"
                         "| NW-DOCK-4 | Dock R4 | 7 |  |\n\nPrices\n\n| Part | EUR |\n| --- | --- |\n| NW-DOCK-4 | 129.5 |")
    assert [(e.category, e.page, e.heading_path) for e in book.elements] == [
        ("Title", 1, ("Stock",)), ("Table", 1, ("Stock",)), ("Title", 3, ("Prices",)), ("Table", 3, ("Prices",))]
    with pytest.raises(DocumentError, match="archive expands to"):
        parse_document(raw("stock.xlsx", workbook()), ParseLimits(max_expanded_mb=0.001))


def test_a_workbook_s_numbers_read_as_their_formats_show_them():
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.append(["Campaign", "Used", "Spent", "Spent (EUR)", "Weight", "Ratio", "Units", "Refund"])
    sheet.append(["Spring", 0.95002, 23750.5, 1234.5, 12.5, 0.1 + 0.2, 3.0, -5])
    for column, number_format in zip("BCDEH", ("0.0%", '"$"#,##0.00', "#,##0.00 [$€-407]", '0 "kg"', '"$"#,##0.00')):
        sheet[f"{column}2"].number_format = number_format
    assert parse_document(raw("budget.xlsx", saved(book))).text.endswith(
        "| Spring | 95.0% | $23,750.50 | 1,234.50 € | 13 kg | 0.3 | 3 | -$5.00 |")
    from datetime import timedelta

    from rag_assets.core.parsing.sheets import _cell_text

    accounting = '_("$"* #,##0.00_);_("$"* \\(#,##0.00\\);_("$"* "-"??_);_(@_)'
    for value, number_format, shown in [
            (1234.5, "[$$-409]#,##0.00", "$1,234.50"), (2500, "[$£-809]#,##0", "£2,500"),  # a locale's digits
            (1234567, '#,##0,"K"', "1,235K"), (-5, '"$"#,##0.00;[Red]("$"#,##0.00)', "($5.00)"),
            (-1234.5, accounting, "$(1,234.50)"), (0, accounting, "$-"), (0.015, '0.0"%"', "0.0%"), (7, "\\#0", "#7"),
            (5551234567, "000-000-0000", "555-123-4567"), (21341234, "00000-0000", "02134-1234"),  # templates
            (2134, "00000", "02134"), (7.5, "000.0", "007.5"),  # leading zeros
            (1e30, "0", "1e+30"), (5.0, "0." + "0" * 30, "5"), (float("inf"), "0.00", "inf")]:  # General
        assert _cell_text(value, number_format) == shown, number_format
    # a duration as an [h]:mm:ss cell shows it (calamine reads a binary workbook's as a timedelta)
    assert [_cell_text(timedelta(days=10, hours=15, minutes=10, seconds=10)), _cell_text(timedelta(minutes=-90))] == [
        "255:10:10", "-1:30:00"]


def test_tables_a_blank_row_apart_on_one_sheet_are_tables_of_their_own():
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.title = "Q2"
    for row in (["Region", "Sales"], ["North", 1200], ["South", 800], [], [], ["Returns by product"],
                ["Product", "Units", "Refunded"], ["Dock R4", 3, 387.0], [], ["Side brush", 12, 95.4],
                [], ["Total", 15, 482.4]):
        sheet.append(row)
    sheet["C8"].number_format = sheet["C10"].number_format = '"$"#,##0.00'
    doc = parse_document(raw("q2.xlsx", saved(book)))
    assert [(e.category, doc.text[e.start:e.end].split("\n")[0]) for e in doc.elements] == [
        ("Title", "Q2"), ("Table", "| Region | Sales |"), ("NarrativeText", "Returns by product"),
        ("Table", "| Product | Units | Refunded |")]
    # A blank row between a table's rows (before "Side brush", before "Total") splits nothing.
    assert doc.text.endswith("| Dock R4 | 3 | $387.00 |\n| Side brush | 12 | $95.40 |\n| Total | 15 | 482.4 |")
    from rag_assets.core.parsing.sheets import _sheet_tables

    books = [["Title", "Author", "Published"], ["Dune", "Herbert", "1965"], [], ["Neuromancer", "Gibson", "1984"],
             ["Foundation", "Asimov", "1951"]]  # a row holding a year is data, not a header
    assert _sheet_tables(books) == [books]
    years = [["Revenue", "Q1"], ["North", "10"], [], ["Metric", "2023", "2024"], ["Cost", "5", "6"]]
    assert _sheet_tables(years) == [years[:3], years[3:]]  # columns named by their years are a header


def test_subtitles_read_as_their_transcript_stamped_with_start_times():
    lines = ["Welcome everyone to the all-hands.", "<i>Today we discuss</i> the Nimbus roadmap.", "First, hiring.",
             "We hired 12 engineers."]
    srt = "".join(f"{i + 1}\r\n00:00:{i * 3:02d},000 --> 00:00:{i * 3 + 2:02d},500\r\n{line}\r\n\r\n"
                  for i, line in enumerate(lines))
    srt += "5\n00:00:30,000 --> 00:00:33,000\n{\\an8}After a pause: questions &amp; answers.\n"
    doc = parse_document(raw("media/allhands.srt", srt.encode()))
    assert (doc.content_type, doc.title) == ("subtitles", "allhands")
    # Cue numbers, timings and markup gone; a 2-second pause starts a paragraph.
    assert doc.text == ("[00:00:00] Welcome everyone to the all-hands. Today we discuss the Nimbus roadmap. First, "
                        "hiring. We hired 12 engineers.\n\n[00:00:30] After a pause: questions & answers.\n")
    assert [doc.text[e.start:e.end][:10] for e in doc.elements] == ["[00:00:00]", "[00:00:30]"]
    vtt = ("WEBVTT\nKind: captions\n\nNOTE written by hand\n\n00:01.000 --> 00:03.000 align:start\n"
           "<v Maya>Good morning everyone.\n\n00:03.200 --> 00:05.000\n<v Maya>Let's start with mapping.\n\n"
           "00:05.500 --> 00:08.000\n<v.loud Jonas>The migration is <c.yellow>eighty</c> percent done.\n\n"
           "1:00:08.500 --> 1:00:10.000\n<01:00:08.500>rolling one\nrolling two\n\n"
           "1:00:10.000 --> 1:00:12.000\nrolling two\nrolling three\n")
    # Voices name the turns (chunked as a transcript's), a rolling caption's repeated line is said once.
    assert parse_document(raw("standup.vtt", vtt.encode())).text == (
        "[00:00:01] Maya: Good morning everyone. Let's start with mapping.\n\n"
        "[00:00:05] Jonas: The migration is eighty percent done.\n\n[01:00:08] rolling one rolling two rolling three\n")
    # A line of spaces inside a cue does not end it (auto-captions open with one); each line has its own voice.
    cue = ("WEBVTT\n\n00:00:01.000 --> 00:00:03.000\n \nFirst line\n \nSecond line\n\n"
           "00:00:03.000 --> 00:00:05.000\n<v Bob>Hi</v>\n<v Ann>Hey\n\n00:00:05.000 --> 00:00:06.000\n<v Ann>Again\n\n"
           "00:03:00.000 --> 00:03:01.000\n<v Ann>Again\n")
    assert parse_document(raw("cues.vtt", cue.encode())).text == (
        "[00:00:01] First line Second line\n\n[00:00:03] Bob: Hi\n\n[00:00:03] Ann: Hey Again\n\n"
        "[00:03:00] Ann: Again\n")  # said again minutes later: no rolling caption
    long_talk = "".join(f"00:{i // 60:02d}:{i % 60:02d}.000 --> 00:{i // 60:02d}:{i % 60:02d}.900\nPoint {i}.\n\n"
                        for i in range(0, 150))
    stamps = re.findall(r"^\[(\S+)\]", parse_document(raw("talk.vtt", ("WEBVTT\n\n" + long_talk).encode())).text, re.M)
    assert stamps == ["00:00:00", "00:01:00", "00:02:00"]  # a minute's talk, ended at a sentence's end


@given(st.text(alphabet="<>{}\\ab", max_size=16))
def test_a_subtitle_line_loses_each_tag_up_to_its_first_closer(line):
    """Each ``<`` up to the next ``>`` and each ``{\\`` up to the next ``}`` go, left to right."""
    assert _unmarked(line) == re.sub(r"<[^>]*>|\{\\[^}]*\}", "", line)


def test_a_cue_line_of_unclosed_angle_brackets_is_read_as_its_text():
    """Tags were searched from each ``<`` to the line's end (20 kB of unclosed ``<``: 1.6 s, 200 kB: minutes)."""
    line = "<i>Loud</i> " + "<" * 200_000 + " {\\an8}end"
    text = parse_document(raw("noise.srt", f"1\n00:00:01,000 --> 00:00:02,000\n{line}\n".encode())).text
    assert text == "[00:00:01] Loud " + "<" * 200_000 + " end\n"


def test_json_records_read_as_a_table_and_other_json_pretty_printed():
    records = [{"id": i, "email": f"u{i}@example.com", "balance": 1343.5 + i, "tags": ["vip"], "active": i == 0,
                "notes": None} for i in range(3)]
    export = parse_document(raw("crm/export.json", json.dumps(records, separators=(",", ":")).encode()))
    # A minified export was one line of text, chunked mid-field; now a row a record under the keys.
    assert (export.content_type, export.title) == ("json", "export")
    assert export.text == ("| id | email | balance | tags | active | notes |\n| --- | --- | --- | --- | --- | --- |\n"
                           '| 0 | u0@example.com | 1343.5 | ["vip"] | true |  |\n'
                           '| 1 | u1@example.com | 1344.5 | ["vip"] | false |  |\n'
                           '| 2 | u2@example.com | 1345.5 | ["vip"] | false |  |')
    assert [e.category for e in export.elements] == ["Table"]
    api = parse_document(raw("api.json", json.dumps({"count": 3, "results": records[:1]}).encode()))
    assert api.text.startswith('{\n  "count": 3\n}\n\nresults\n\n| id |')
    assert [(e.category, e.heading_path) for e in api.elements] == [
        ("NarrativeText", ()), ("Title", ("results",)), ("Table", ("results",))]
    config = parse_document(raw("svc.json", b'{"name":"svc","db":{"host":"db.internal","port":5432}}'))
    assert config.text == '{\n  "name": "svc",\n  "db": {\n    "host": "db.internal",\n    "port": 5432\n  }\n}'
    lines = parse_document(raw("events.jsonl", b'{"t": 1, "msg": "start"}\n\n{"t": 2, "msg": "stop | halt"}\n'))
    assert lines.text.endswith("| 1 | start |\n| 2 | stop ｜ halt |")
    commented = b'{\n  // strict mode\n  "compilerOptions": {"strict": true}\n}\n'  # not JSON: read as written
    assert parse_document(raw("tsconfig.json", commented)).text == commented.decode()
    deep = "[" * 5000 + "]" * 5000  # past Python's recursion limit, or indented to millions of characters
    assert parse_document(raw("deep.json", deep.encode())).text == deep
    assert parse_document(raw("nested.json", ("[" * 900 + "]" * 900).encode())).text == "[" * 900 + "]" * 900
    cut = parse_document(raw("cut.json", b'[{"name": "Zo\\ud83d", "id": 1}]'))  # half an emoji's pair
    assert cut.text.endswith("| Zo\ufffd | 1 |")
    keyed = parse_document(raw("orders.json", b'{"\\ud83d orders": [{"id": 1}, {"id": 2}], "n\\udc00": 1}'))
    assert "\ud83d" not in keyed.text and all(  # a key heading records is a title and a heading path too
        "\ud83d" not in part for el in keyed.elements for part in el.heading_path)
    assert any(el.heading_path == ("\ufffd orders",) for el in keyed.elements)
    sparse = [{f"field{i * 5 + j}": j for j in range(3)} for i in range(40)]  # 120 keys, 3 a record
    text = parse_document(raw("sparse.json", json.dumps(sparse).encode())).text
    assert text.startswith("field0: 0\nfield1: 1\nfield2: 2\n\nfield5: 0\n") and "| " not in text


def test_an_excel_97_workbook_reads_as_the_same_sheets_saved_as_xlsx():
    modern, legacy = workbook(), legacy_workbook()
    assert legacy.startswith(b"\xd0\xcf\x11\xe0")  # a compound file, not a zip
    book, old = parse_document(raw("stock.xlsx", modern)), parse_document(raw("inventory/stock.xls", legacy))
    assert (old.content_type, old.title) == ("xlsx", "stock")  # was: text, "file content is binary"
    assert old.text == book.text  # 40 not 40.0, the date as a date, blank rows and cells left out
    assert "Alice Jones" not in old.text  # its hidden sheet too
    assert [(e.category, e.page, e.heading_path) for e in old.elements] == [
        (e.category, e.page, e.heading_path) for e in book.elements]
    assert parse_document(raw("misnamed.xlsx", legacy)).text == book.text  # told apart by content


def test_an_excel_binary_workbook_reads_as_the_same_sheets_saved_as_xlsx():
    """An .xlsb file (Excel's binary workbook, common for large sheets) was refused: "save it as
    .xlsx". It reads as the same workbook saved as .xlsx does, its hidden sheet left out."""
    modern, binary = workbook(), binary_workbook()
    assert zipfile.ZipFile(io.BytesIO(binary)).read("xl/workbook.bin")  # binary records, no workbook.xml
    book, packed = parse_document(raw("stock.xlsx", modern)), parse_document(raw("reports/stock.xlsb", binary))
    assert (packed.content_type, packed.title) == ("xlsx", "stock")
    assert packed.text == book.text  # 40 not 40.0, the date as a date, blank rows and cells left out
    assert "Alice Jones" not in packed.text
    assert [(e.category, e.page, e.heading_path) for e in packed.elements] == [
        (e.category, e.page, e.heading_path) for e in book.elements]
    assert parse_document(raw("misnamed.xlsx", binary)).text == book.text  # told apart by content


GUIDE = """---
title: Expense Guide
---

# Travel

Book trains for trips under 400 km.

## Hotels

The hotel limit in London is 250 GBP & taxes per night.

| City | Limit |
|------|-------|
| London | 250 |
| Paris | 220 |

# Meals

- Breakfast is included.
"""


@pytest.mark.parametrize("kind, content_type, writer", [
    ("odt", "odt", ""), ("rtf", "rtf", ""), ("epub", "epub", ""), ("adoc", "asciidoc", ""), ("tex", "latex", ""),
    ("org", "org", ""), ("xml", "xml", "jats"), ("xml", "xml", "docbook4"), ("dbk", "xml", "docbook5")])
def test_documents_pandoc_reads_come_with_their_title_headings_and_tables(kind, content_type, writer, tmp_path):
    doc = parse_document(raw(f"finance/guide.{kind}", pandoc_document(GUIDE, kind, tmp_path, "Expense Guide", writer)))
    # was: odt, rtf, epub "file content is binary"; the text formats plain text, markup and all
    assert (doc.content_type, doc.title) == (content_type, "Expense Guide")
    spans = {doc.text[e.start:e.end]: e for e in doc.elements}
    hotel = spans["The hotel limit in London is 250 GBP & taxes per night."]
    assert hotel.heading_path[-2:] == ("Travel", "Hotels")
    assert "| City | Limit |\n| --- | --- |\n| London | 250 |\n| Paris | 220 |" in doc.text
    assert spans["Breakfast is included."].heading_path[-1] == "Meals"


@pytest.mark.parametrize("encoding", ["cp1252", "utf-16"])
def test_a_latex_file_is_decoded_as_every_text_file_before_pandoc_reads_it(encoding):
    source = "\\section{Café rules}\nThe café opens at 7 \\textbf{“sharp”}.\n".encode(encoding)
    doc = parse_document(raw("notes.tex", source))
    # pandoc alone reads bytes that are not UTF-8 as Latin-1: cp1252's quotes became control characters
    assert doc.text == "Café rules\n\nThe café opens at 7 “sharp”."


def test_rtf_heading_styles_without_an_outline_level_are_headings():
    # As LibreOffice writes them: named "Heading N" in the stylesheet, no \outlinelevel (Word adds one).
    rtf = (b"{\\rtf1\\ansi{\\stylesheet{\\s0 Normal;}{\\s1\\sbasedon0\\b\\fs28 heading 1;}{\\s2\\b Heading 2;}"
           b"{\\s3\\outlinelevel0 Heading 3;}{\\s4\\b Subheading 1;}}\n"
           b"{\\pard\\s1 Travel\\par}{\\pard\\s0 Book trains.\\par}{\\pard\\s2 Hotels\\par}"
           b"{\\pard\\s0 The limit is 180 EUR \\{per night\\}.\\par}{\\pard\\s3 Meals\\par}"
           b"{\\pard\\s4 Breakfast\\par}{\\pard\\s0 Included.\\par}}")
    doc = parse_document(raw("policy.rtf", rtf))  # was: one paragraph after another, no headings
    paths = {doc.text[e.start:e.end]: (e.category, e.heading_path) for e in doc.elements}
    assert paths["Hotels"] == ("Title", ("Travel", "Hotels"))
    assert paths["The limit is 180 EUR {per night}."] == ("NarrativeText", ("Travel", "Hotels"))
    assert paths["Meals"] == ("Title", ("Meals",))  # its own outline level (0) stands
    assert paths["Breakfast"][0] != "Title" and paths["Included."][1] == ("Meals",)


@pytest.mark.parametrize("made, named", [("deck.pptx", "deck.xlsx"), ("deck.pptx", "deck.docx"), ("stock.xlsx", "stock.pptx")])
def test_an_office_file_under_another_office_format_s_name_is_read_as_what_it_is(made, named):
    data = slide_deck() if made.endswith(".pptx") else workbook()
    assert parse_document(raw(named, data)).text == parse_document(raw(made, data)).text


def test_rtf_and_html_under_office_names_read_as_what_they_are(tmp_path):
    memo = pandoc_document("# Parking\n\nVisitors park on level 2.\n", "rtf", tmp_path, "Parking memo")
    doc = parse_document(raw("facilities/parking.doc", memo))  # Word's "Rich Text" saved as .doc
    assert (doc.title, doc.text) == ("Parking memo", "Parking memo\n\nParking\n\nVisitors park on level 2.")  # was: not a zip
    export = (b"\xef\xbb\xbf<html><body><table><tr><th>Part</th><th>Units</th></tr>"
              b"<tr><td>NW-DOCK-4</td><td>7</td></tr></table></body></html>")
    sheet = parse_document(raw("exports/stock.xls", export))  # a web application's "Excel export"
    assert sheet.text == "| Part | Units |\n| --- | --- |\n| NW-DOCK-4 | 7 |"
    assert parse_document(raw("exports/stock.docx", export)).text == sheet.text


def test_an_opendocument_text_s_boxes_are_read_and_pandoc_s_footnote_links_are_not(tmp_path):
    """pandoc leaves an ODT's frames out (a text box's text was lost), ends every footnote with its
    way back ("See annex.↩︎") and glues a note's mark to the word before it ("here1")."""
    body = ('<text:h text:outline-level="1">Safety</text:h><text:p>Read the rules below.<draw:frame '
            'text:anchor-type="paragraph"><draw:text-box><text:p>Wear a helmet on the dock.</text:p><text:list><text:list-item>'
            "<text:p>Gloves too</text:p></text:list-item></text:list></draw:text-box></draw:frame></text:p>"
            "<text:p>Report every incident.</text:p>")
    styles = f"<office:document-styles {ODF_NAMESPACES}><office:styles/></office:document-styles>"
    doc = parse_document(raw("safety.odt", opendocument("text", "", body, parts={"styles.xml": styles})))
    assert [(doc.text[e.start : e.end], e.category) for e in doc.elements] == [
        ("Safety", "Title"), ("Read the rules below.", "NarrativeText"), ("Wear a helmet on the dock.", "NarrativeText"),
        ("Gloves too", "ListItem"), ("Report every incident.", "NarrativeText")]
    noted = "# Gates\n\nThe east gate opens at 05:30[^1].\n\n[^1]: Weekdays only.\n"
    for to in ("odt", "epub", "latex"):
        doc = parse_document(raw(f"gates.{'tex' if to == 'latex' else to}", pandoc_document(noted, to, tmp_path)))
        assert "opens at 05:30^1." in doc.text and "Weekdays only." in doc.text and "↩" not in doc.text, to


def test_pandoc_s_formats_read_equations_and_an_odt_its_charts_and_spreadsheets(tmp_path):
    """pandoc leaves an ODT's embedded objects out: a formula was lost from its sentence ("Energy
    holds."), a chart's figures and an embedded sheet's rows too. A formula reads in its place, a
    chart's title, subtitle and data table and a sheet's tables after the paragraph it is anchored
    in; an object outside the package or missing is left out. A LaTeX equation pandoc cannot set
    in HTML read as its TeX source ("$$\\frac{a+b}{2}$$")."""
    noted = "# Energy\n\nEnergy $E=mc^2$ holds.\n\n$$\\frac{a+b}{2}=\\sum_i x_i$$\n"
    for to in ("odt", "latex"):
        doc = parse_document(raw(f"energy.{'tex' if to == 'latex' else to}", pandoc_document(noted, to, tmp_path)))
        assert doc.text == "Energy\n\nEnergy E=mc^2 holds.\n\n(a+b)/2=∑_i x_i", to
    def cells(*texts):
        return "<table:table-row>" + "".join(f"<table:table-cell><text:p>{text}</text:p></table:table-cell>"
                                             for text in texts) + "</table:table-row>"

    chart = (f'<office:document-content {ODF_NAMESPACES} xmlns:chart="urn:oasis:names:tc:opendocument:xmlns:chart:1.0">'
             "<office:body><office:chart><chart:chart><chart:title><text:p>Leaks per month</text:p></chart:title>"
             "<chart:subtitle><text:p>Oslo site, 2027</text:p></chart:subtitle><table:table table:name=\"local-table\">"
             "<table:table-header-rows>" + cells("", "Oslo") + "</table:table-header-rows><table:table-rows>"
             + cells("Jan", "3") + "</table:table-rows></table:table></chart:chart></office:chart></office:body>"
             "</office:document-content>")
    sheet = spreadsheet("Spares", [["Part", "Stock"], ["Seal", "40"]])
    def embedded(href):
        return (f'<draw:frame text:anchor-type="paragraph"><draw:object xmlns:xlink="http://www.w3.org/1999/xlink" '
                f'xlink:href="{href}"/></draw:frame>')

    body = ("<text:h text:outline-level=\"1\">Pumps</text:h><text:p>Leaks fell." + embedded("./Object 1")
            + embedded("./Object 2") + embedded("../Object 1") + embedded("./Object 9") + "</text:p><text:p>Order seals.</text:p>")
    styles = f"<office:document-styles {ODF_NAMESPACES}><office:styles/></office:document-styles>"
    parts = {"styles.xml": styles, "Object 1/content.xml": chart,
             "Object 2/content.xml": _zip_member_text(sheet, "content.xml")}
    doc = parse_document(raw("pumps.odt", opendocument("text", "", body, parts=parts)))
    assert [(doc.text[e.start : e.end], e.category) for e in doc.elements] == [
        ("Pumps", "Title"), ("Leaks fell.", "NarrativeText"), ("Leaks per month", "NarrativeText"),
        ("Oslo site, 2027", "NarrativeText"), ("|  | Oslo |\n| --- | --- |\n| Jan | 3 |", "Table"),
        ("| Part | Stock |\n| --- | --- |\n| Seal | 40 |", "Table"), ("Order seals.", "NarrativeText")]


def _zip_member_text(package: bytes, name: str) -> str:
    import zipfile

    return zipfile.ZipFile(io.BytesIO(package)).read(name).decode()


def test_office_opendocument_pdf_and_web_page_keywords_tag_the_document(tmp_path):
    from docx import Document

    word = Document()
    word.core_properties.keywords = "travel; expenses, 2027"  # Word's File > Info > Tags
    word.add_paragraph("Book trains for short trips.")
    assert parse_document(raw("travel.docx", saved(word))).tags == ("travel", "expenses", "2027")
    odt = pandoc_document("---\nkeywords: [gates, night shift]\n---\n\nThe east gate opens at 05:30.\n", "odt", tmp_path)
    assert parse_document(raw("gates.odt", odt)).tags == ("gates", "night shift")
    page = (b'<html><head><meta content="returns,  refunds &amp; credits" name="Keywords"><title>FAQ</title></head>'
            b"<body><p>Refunds take 45 days.</p></body></html>")
    assert parse_document(raw("faq.html", page)).tags == ("returns", "refunds & credits")
    from tests.support.make_sample_binaries import write_pdf

    write_pdf(tmp_path / "dock.pdf", [["Dock Manual", "", "The dock charges the robot."]], keywords="dock; firmware")
    assert parse_document(raw("dock.pdf", (tmp_path / "dock.pdf").read_bytes())).tags == ("dock", "firmware")
    assert parse_document(raw("stock.xlsx", workbook())).tags == ()  # none set
    # 97-2003 files keep theirs in their summary information (UTF-8 in these; see office97/PROVENANCE.md).
    for name in ("keywords.doc", "keywords.ppt", "keywords.xls"):
        assert parse_document(raw(name, (OFFICE97 / name).read_bytes())).tags == ("legacy", "Ünïcode", "tag", "dock")
    assert parse_document(raw("harmless-clean.doc", (OFFICE97 / "harmless-clean.doc").read_bytes())).tags == ()  # empty


def test_a_web_archive_is_read_as_its_page_under_mhtml_and_word_names():
    from email.mime.image import MIMEImage
    from email.mime.multipart import MIMEMultipart
    from email.mime.text import MIMEText

    archive = MIMEMultipart("related")
    archive["Subject"], archive["From"] = "Onboarding checklist", "<Saved by Blink>"
    archive.attach(MIMEText("<html><body><h1>Onboarding</h1><p>Laptops are handed out on day one \u2013 ask IT "
                            "for the VPN token.</p></body></html>", "html", "windows-1252"))  # quoted-printable
    archive.attach(MIMEImage(png(), "png"))
    data = archive.as_bytes()
    for name in ("wiki/onboarding.mhtml", "wiki/onboarding.mht", "wiki/onboarding.doc"):  # .doc: Confluence's export
        doc = parse_document(raw(name, data))  # was: text "From: <Saved by Blink> ...", or "not a zip file"
        assert (doc.title, doc.text) == ("Onboarding checklist",
                                         "Onboarding\n\nLaptops are handed out on day one \u2013 ask IT for the VPN token.")


def test_other_xml_is_read_as_text():
    config = b"<config>\n  <retries>3</retries>\n</config>\n"
    doc = parse_document(raw("settings.xml", config))
    assert (doc.content_type, doc.text, doc.title) == ("xml", config.decode(), "settings")


def test_a_web_pages_title_has_its_entities_decoded():
    page = b"<html><head><title>Returns &amp; refunds\n  FAQ</title></head><body><p>Within 30 days.</p></body></html>"
    assert parse_document(raw("faq.html", page)).title == "Returns & refunds FAQ"  # was "Returns &amp; refunds\n  FAQ"


def test_a_workbook_parses_without_loading_unstructured_or_its_language_model(tmp_path):
    (tmp_path / "stock.xlsx").write_bytes(workbook())
    script = ("import sys; from rag_assets.core.parsing import parse_document; from rag_assets.core.sources import "
              "read_disk; doc = parse_document(read_disk(sys.argv[1], 'stock.xlsx')); "
              "print(doc.content_type, 'spacy' in sys.modules, 'unstructured' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["xlsx", "False", "False"]  # was: 1 s to load spaCy for nothing


def test_web_page_and_word_tables_keep_their_rows():
    page = (b"<html><body><h1>Limits</h1><table><tr><th>City</th><th>Nightly limit</th></tr>"
            b"<tr><td>London</td><td>240 EUR</td></tr><tr><td>Other | cities</td><td>180<br/>EUR</td></tr></table>"
            b"<p>Book early.</p></body></html>")
    html = parse_document(raw("limits.html", page))
    assert html.text == ("Limits\n\n| City | Nightly limit |\n| --- | --- |\n| London | 240 EUR |\n"
                         "| Other ｜ cities | 180 EUR |\n\nBook early.")
    assert [e.category for e in html.elements][:2] == ["Title", "Table"]
    doc = parse_document(raw("limits.docx", _word_table("Hotel limits", [("City", "Limit"), ("Paris", "240 EUR")])))
    assert "| City | Limit |\n| --- | --- |\n| Paris | 240 EUR |" in doc.text


NEWSLETTER = ("<html><body><table width='100%'><tr><td><table width='600'><tr><td><b>Acme HR</b></td></tr>"
              "<tr><td><h1>Open enrollment</h1><p>Dear colleagues,</p><p>Enrollment runs to November 24.</p>"
              "<h2>Dental</h2><p>Orthodontics rise to $2,500.</p></td></tr><tr><td>Unsubscribe | Privacy</td></tr>"
              "</table></td></tr></table></body></html>")


@pytest.mark.parametrize("doc_id, data", [
    ("news.html", NEWSLETTER.encode()),
    ("news.eml", (b"From: HR <hr@example.com>\nSubject: Benefits\nMIME-Version: 1.0\n"
                  b"Content-Type: text/html; charset=utf-8\n\n" + NEWSLETTER.encode())),
])
def test_a_layout_table_is_read_as_its_headings_and_paragraphs(doc_id, data):
    doc = parse_document(raw(doc_id, data))
    assert "Table" not in {e.category for e in doc.elements} and "|" not in doc.text.replace("Unsubscribe | ", "")
    texts = {doc.text[e.start : e.end]: e for e in doc.elements}
    assert texts["Orthodontics rise to $2,500."].heading_path[-2:] == ("Open enrollment", "Dental")
    assert texts["Dear colleagues,"].heading_path[-1] == "Open enrollment"


@pytest.mark.parametrize("table, rows", [
    ("<tr><td>a</td><td>b</td></tr>", None),  # one row of data: a table
    ("<tr><td>Only</td></tr><tr><td>one column</td></tr>", []),
    ("<tr><td><p>One</p></td><td><p>Two</p></td></tr><tr><td>1</td><td>2</td></tr>", ["| One | Two |", "| 1 | 2 |"]),
])
def test_a_table_of_one_column_is_text_and_one_of_cells_holding_paragraphs_stays_a_table(table, rows):
    doc = parse_document(raw("t.html", f"<html><body><h1>T</h1><table>{table}</table></body></html>".encode()))
    lines = [line for line in doc.text.splitlines() if line.startswith("|") and "---" not in line]
    assert lines == (rows if rows is not None else ["| a | b |"])


def test_a_title_row_above_a_table_s_header_is_its_caption_not_its_header():
    from docx import Document
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.title = "Inventory"
    sheet["A1"] = "Warehouse inventory - Q2 2024"
    sheet.merge_cells("A1:C1")
    for row in ([], ["SKU", "Aisle", "Qty"], ["SKU-1", "Aisle 1", 6]):
        sheet.append(row)
    word = Document()
    word.add_heading("Parts", 1)
    table = word.add_table(rows=3, cols=3)
    table.cell(0, 0).merge(table.cell(0, 2)).text = "Warehouse inventory - Q2 2024"
    for r, row in enumerate([("SKU", "Aisle", "Qty"), ("SKU-1", "Aisle 1", "6")], start=1):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    page = ("<html><body><h1>Parts</h1><table><tr><th colspan='3'>Warehouse inventory - Q2 2024</th></tr>"
            "<tr><th>SKU</th><th>Aisle</th><th>Qty</th></tr><tr><td>SKU-1</td><td>Aisle 1</td><td>6</td></tr>"
            "</table></body></html>").encode()
    for name, save in (("inventory.xlsx", book.save), ("parts.docx", word.save), ("parts.html", None)):
        out = io.BytesIO()
        if save:
            save(out)
        doc = parse_document(raw(name, out.getvalue() if save else page))
        assert doc.text.endswith("\n\nWarehouse inventory - Q2 2024\n\n| SKU | Aisle | Qty |\n| --- | --- | --- |\n"
                                 "| SKU-1 | Aisle 1 | 6 |"), name
        assert [e.category for e in doc.elements][-2:] == ["NarrativeText", "Table"]
    corner = ("<h1>Plans</h1><table><tr><th></th><th>Monthly price</th></tr><tr><td>Basic</td><td>$5</td></tr>"
              "<tr><td>Pro</td><td>$10</td></tr></table>")  # a header's empty corner: no caption
    assert parse_document(raw("plans.html", corner.encode())).text.endswith("|  | Monthly price |\n| --- | --- |\n"
                                                                             "| Basic | $5 |\n| Pro | $10 |")


def test_odd_spans_a_nested_table_and_a_span_bomb_keep_a_data_table_readable():
    odd = ("<h1>Prices</h1><table><tr><th>Item</th><th>Price</th></tr><tr><td colspan='²'>Tea</td><td>3</td></tr>"
           "<tr><td rowspan='٣'>Milk</td><td>2</td></tr><tr><td>Jam</td><td>4</td></tr></table>")
    assert parse_document(raw("p.html", odd.encode())).text.endswith("| Tea | 3 |\n| Milk | 2 |\n| Jam | 4 |")
    nested = ("<h1>Support</h1><table><tr><th>OS</th><th>Notes</th></tr><tr><td>Linux</td><td><table><tr><td>Ubuntu"
              "</td><td>22.04</td></tr></table></td></tr><tr><td>macOS</td><td>Planned</td></tr></table>")
    assert parse_document(raw("m.html", nested.encode())).text.endswith("| Linux | Ubuntu 22.04 |\n| macOS | Planned |")
    grouped = ('<h1>T</h1><table><thead><tr><th rowspan="2">Name</th><th>Q1</th><th>Q2</th></tr></thead><tbody><tr>'
               '<td>Ann</td><td>5</td><td>6</td></tr><tr><td>Bob</td><td>7</td><td>8</td></tr></tbody></table>')
    assert parse_document(raw("q.html", grouped.encode())).text.endswith(  # a span ends with its row group
        "| Name | Q1 | Q2 |\n| --- | --- | --- |\n| Ann | 5 | 6 |\n| Bob | 7 | 8 |")
    bomb = "<table><tr>" + "<td colspan=100 rowspan=1000>x</td>" * 20 + "</tr>" + "<tr><td>v</td></tr>" * 1000 + "</table>"
    from rag_assets.core.parsing.html_tables import MAX_EXPANDED_CELLS, readable_tables

    assert len(readable_tables(bomb)) < 2 * len(bomb) and 1000 * 2000 > MAX_EXPANDED_CELLS  # left as it is


def test_merged_cells_are_repeated_in_every_row_and_column_they_span():
    page = ("<html><body><h1>Plans</h1><table><tr><th>Plan</th><th>Feature</th><th>Limit</th></tr>"
            "<tr><td rowspan='2'>Starter</td><td>Storage</td><td>10 GB</td></tr><tr><td>Users</td><td>3</td></tr>"
            "<tr><td>Enterprise</td><td colspan='2'>Contact sales</td></tr>"
            "<tr><td rowspan='x'>Bad span</td><td colspan='0'>kept</td><td>once</td></tr></table></body></html>")
    assert parse_document(raw("plans.html", page.encode())).text.endswith(
        "| Plan | Feature | Limit |\n| --- | --- | --- |\n| Starter | Storage | 10 GB |\n| Starter | Users | 3 |\n"
        "| Enterprise | Contact sales | Contact sales |\n| Bad span | kept | once |")
    from docx import Document

    word = Document()
    word.add_heading("Support matrix", 1)
    table = word.add_table(rows=5, cols=3)
    for r, row in enumerate([["Product", "Platform", "Supported"], ["", "Linux", "Yes"], ["", "Windows", "No"],
                             ["", "Linux", "Yes"], ["", "macOS", "Beta"]]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    table.cell(1, 0).merge(table.cell(2, 0)).text = "Agent"
    table.cell(3, 0).merge(table.cell(4, 0)).text = "Server"
    out = io.BytesIO()
    word.save(out)
    assert ("| Agent | Windows | No |\n| Server | Linux | Yes |\n| Server | macOS | Beta |"
            in parse_document(raw("matrix.docx", out.getvalue())).text)


def test_a_slide_deck_is_held_to_the_archive_limit():
    with pytest.raises(DocumentError, match="archive expands to .* over the source's max_expanded_mb of 0.01"):
        parse_document(raw("deck.pptx", slide_deck()), ParseLimits(max_expanded_mb=0.01))


@pytest.mark.parametrize(
    "doc_id, data, cause",
    [
        ("empty.md", b"", "the file is empty (0 bytes)"),
        ("empty.pdf", b"", "the file is empty (0 bytes)"),  # pdfminer said "No /Root object! - Is this really a PDF?"
        ("cut.docx", slide_deck()[:2000], "cannot parse as docx: the file is damaged or cut short (it is no readable zip archive"),
        ("blank.txt", b"  \n\n \t", "no text"),
        ("image.md", bytes(range(256)) * 40, "binary, not text (NUL/control bytes): if its extension is wrong"),
        ("Thumbs.db", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(range(256)) * 8, "an OLE compound file (Thumbs.db"),
        ("Proposal.pages", b"PK\x03\x04" + bytes(range(256)) * 8, "a ZIP archive or a zip-based package (Apple Pages"),
        ("backup.tar.gz", b"\x1f\x8b\x08\x00" + bytes(range(256)) * 8, "a gzip archive, not text; unpack it"),
        ("tool", b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 8, "an ELF executable, not text; not a document format"),
        ("scan.txt", b"%PDF-1.4\n" + bytes(range(256)) * 8, "a PDF, not text; name it .pdf"),
        ("minutes.txt", slide_deck(), "a PowerPoint deck, not text; name it .pptx to have it read"),
        ("flow.txt", saved_zip({"visio/document.xml": "<VisioDocument/>"}), "a Visio drawing, not text; name it .vsdx"),
        ("sales.txt", saved_zip({"xl/workbook.bin": "\x83\x01"}), "an Excel binary workbook, not text; name it .xlsb"),
        ("sales.xlsb", saved_zip({"xl/workbook.bin": "\x83\x01"}), "a damaged Excel binary workbook (Cannot detect file"),
        ("flow.vsd", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(range(256)) * 8, "save a Visio .vsd as .vsdx in Visio"),
        ("rates.txt", saved_zip({"mimetype": "application/vnd.oasis.opendocument.spreadsheet", "content.xml": "<x/>"}),
         "an OpenDocument spreadsheet, not text; name it .ods to have it read"),  # it said "text; name it .odt"
        ("plan.md", saved_zip({"mimetype": "application/vnd.oasis.opendocument.graphics", "content.xml": "<x/>"}),
         "an OpenDocument graphics, not text; name it .odg to have it read"),
        ("sum.md", saved_zip({"mimetype": "application/vnd.oasis.opendocument.formula", "content.xml": "<x/>"}),
         "an OpenDocument formula, not text; not a document format rag reads"),
        ("broken.pdf", b"%PDF-1.4\nthis is not really a pdf", "cannot parse as pdf: the file is damaged or cut short"),
        ("cut.pdf", b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R", "cannot parse as pdf: the file is damaged"),
        ("broken.docx", b"PK\x03\x04 not a zip", "cannot parse as docx: the file is damaged or cut short"),
        ("broken.pptx", b"PK\x03\x04 not a zip", "cannot parse as pptx: the file is damaged or cut short"),
        ("notes.eml", b"Just some notes, no headers at all.\n", "not an e-mail message"),
        ("notes.srt", b"Just some notes, no cues at all.\n", "no subtitle cues (timings such as"),
        ("damaged.msg", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(600), "a damaged Outlook message"),
        ("garbled.msg", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + random.Random(7).randbytes(4096),
         "reading it); save it again from Outlook"),  # the reader's own text (Python's advice) left out
        ("broken.xlsx", b"PK\x03\x04 not a zip", "cannot parse as xlsx: the file is damaged or cut short"),
        ("broken.ipynb", b'{"cells": [', "cannot parse as notebook: JSONDecodeError"),
        ("data.ipynb", b'{"rows": [1, 2]}', "not a Jupyter notebook"),
        ("minutes.doc", legacy_workbook(), "not a Word 97-2003 file that can be read (StreamNotFound"),
        ("locked.doc", (OFFICE97 / "encrypted.doc").read_bytes(), "encrypted (password protected)"),
        ("deck.ppt", legacy_workbook(), "not a PowerPoint 97-2003 file that can be read (InvalidPpt"),
        ("locked.ppt", (OFFICE97 / "encrypted.ppt").read_bytes(), "encrypted (password protected)"),
        ("salaries.docx", encrypted_docx(), "encrypted (password protected)"),
        ("salaries.xlsx", encrypted_docx(), "encrypted (password protected)"),
        ("broken.odt", b"PK\x03\x04 not a zip", "cannot parse as odt: ValueError: pandoc cannot read it as odt"),
        ("broken.ods", b"PK\x03\x04 not a zip", "cannot parse as ods: the file is damaged or cut short"),
        ("budget.ods", saved_zip({"mimetype": "x"}), "cannot parse as ods: ValueError: the package has no content.xml"),
        ("broken.epub", b"not an epub", "cannot parse as epub"),
        ("loop.tex", b"\\def\\a{\\a}\\a", "pandoc cannot read it as latex (Loop encountered in expanding macro a)"),
    ],
)
def test_bad_documents_fail_with_the_document_and_the_cause(doc_id, data, cause):
    with pytest.raises(DocumentError) as info:
        parse_document(raw(doc_id, data))
    assert info.value.doc_id == doc_id
    assert cause in str(info.value)
    assert str(info.value).startswith(doc_id)


def test_an_opendocument_spreadsheet_reads_as_a_workbook_does():
    """LibreOffice Calc's .ods files were read as text (binary, refused): each visible sheet is a
    page headed by its name, its cells as their formats show them, repeated rows and cells as
    many, a merged cell's text once, a comment and a hidden sheet left out."""
    def cell(text: str, extra: str = "") -> str:
        return f"<table:table-cell {extra}><text:p>{text}</text:p></table:table-cell>"

    def row(*cells: str, extra: str = "") -> str:
        return f"<table:table-row {extra}>{''.join(cells)}</table:table-row>"

    empty = '<table:table-cell table:number-columns-repeated="16380"/>'
    budget = ('<table:table table:name="Budget" table:style-name="ta1"><table:table-header-rows>'
              + row(cell("Item"), cell("Cost"), cell("Share"), empty) + "</table:table-header-rows>"
              + row(cell("Pumps", 'table:number-columns-spanned="1"'),
                    cell("$23,750.50", 'office:value-type="currency" office:value="23750.5"'),
                    cell("95.0%", 'office:value-type="percentage" office:value="0.95"'), empty)
              + row(cell("Valve<text:s text:c=\"2000000000\"/>kits"), "<table:covered-table-cell/>",
                    cell("5.0%<office:annotation><text:p>check with finance</text:p></office:annotation>"), empty,
                    extra='table:number-rows-repeated="2"')
              + row(empty, extra='table:number-rows-repeated="1048570"') + "</table:table>")
    notes = '<table:table table:name="Notes" table:style-name="ta1">' + row(cell("Approved in March.")) + "</table:table>"
    hidden = '<table:table table:name="Rates" table:style-name="ta2">' + row(cell("Secret rate 7%")) + "</table:table>"
    styles = ('<style:style style:name="ta1" style:family="table"><style:table-properties table:display="true"/>'
              '</style:style><style:style style:name="ta2" style:family="table"><style:table-properties '
              'table:display="false"/></style:style>')
    data = opendocument("spreadsheet", styles, budget + hidden + notes,
                         "<dc:title>Pump budget</dc:title><meta:keyword>budget</meta:keyword>")
    doc = parse_document(raw("finance/budget.ods", data))
    assert doc.content_type == "ods" and doc.title == "Pump budget" and doc.tags == ("budget",)
    assert [(doc.text[e.start : e.end], e.category, e.page) for e in doc.elements] == [
        ("Budget", "Title", 1),
        ("| Item | Cost | Share |\n| --- | --- | --- |\n| Pumps | $23,750.50 | 95.0% |\n| Valve kits |  | 5.0% |\n"
         "| Valve kits |  | 5.0% |", "Table", 1),
        ("Notes", "Title", 3), ("| Approved in March. |\n| --- |", "Table", 3)]  # a hidden sheet's number kept


def test_an_opendocument_presentation_reads_as_a_deck_does():
    """LibreOffice Impress's .odp files were refused: a slide is a page headed by its title, its
    text, list items, tables, charts and formulas in order under it, then its connectors joining
    two shapes with text ("From → To: label"), then its notes; its footer and number left out. A
    LibreOffice Draw drawing (.odg) reads alike."""
    def frame(kind: str, inner: str) -> str:
        return f'<draw:frame presentation:class="{kind}"><draw:text-box>{inner}</draw:text-box></draw:frame>'

    table = ('<draw:frame><table:table><table:table-row><table:table-cell><text:p>Site</text:p></table:table-cell>'
             "<table:table-cell><text:p>Pumps</text:p></table:table-cell></table:table-row><table:table-row>"
             "<table:table-cell><text:p>Oslo</text:p></table:table-cell><table:table-cell><text:p>12</text:p>"
             "</table:table-cell></table:table-row></table:table></draw:frame>")
    first = ('<draw:page draw:name="page1">' + frame("outline", "<text:list><text:list-item><text:p>Check the seals"
             "</text:p><text:list><text:list-item><text:p>weekly</text:p></text:list-item></text:list></text:list-item>"
             "</text:list>") + frame("title", "<text:p>Pump care</text:p>")
             + '<draw:g><draw:custom-shape><text:p>Call <text:span>service</text:span> on leaks.</text:p></draw:custom-shape>'
             "</draw:g>" + table + frame("page-number", "<text:p>1</text:p>") + frame("footer", "<text:p>ACME</text:p>")
             + '<presentation:notes><draw:page-thumbnail/>' + frame("notes", "<text:p>Ask who has spares.</text:p>")
             + "</presentation:notes></draw:page>")
    objects = "".join(f'<draw:frame><draw:object xmlns:xlink="http://www.w3.org/1999/xlink" xlink:href="{href}"/></draw:frame>'
                      for href in ("./Object 1", "./Object 2", "../Object 1", "./Object 9"))  # outside, missing: left out
    second = ('<draw:page draw:name="page2"><draw:custom-shape><text:p>Questions?</text:p></draw:custom-shape>'
              + objects + "</draw:page>")
    cells = lambda *texts: "<table:table-row>" + "".join(  # noqa: E731
        f"<table:table-cell><text:p>{text}</text:p></table:table-cell>" for text in texts) + "</table:table-row>"
    chart = (f'<office:document-content {ODF_NAMESPACES} xmlns:chart="urn:oasis:names:tc:opendocument:xmlns:chart:1.0"><office:body>'
             "<office:chart><chart:chart><chart:title><text:p>Leaks per month</text:p></chart:title><table:table "
             'table:name="local-table"><table:table-header-rows>' + cells("", "Oslo", "Bergen") + "</table:table-header-rows>"
             "<table:table-rows>" + cells("Jan", "3", "1") + cells("Feb", "0", "2") + "</table:table-rows></table:table>"
             "</chart:chart></office:chart></office:body></office:document-content>")
    formula = ('<math xmlns="http://www.w3.org/1998/Math/MathML"><semantics><mrow><mi>Q</mi><mo>=</mo><mfrac><mi>V</mi>'
               '<mi>t</mi></mfrac></mrow><annotation encoding="StarMath 5.0">Q = V over t</annotation></semantics></math>')
    doc = parse_document(raw("decks/pumps.odp", opendocument("presentation", "", first + second,
                                                              parts={"Object 1/content.xml": chart,
                                                                     "Object 2/content.xml": formula})))
    assert doc.title == "Pump care"
    assert [(doc.text[e.start : e.end], e.category, e.page, e.heading_path) for e in doc.elements] == [
        ("Pump care", "Title", 1, ("Pump care",)), ("Check the seals", "ListItem", 1, ("Pump care",)),
        ("weekly", "ListItem", 1, ("Pump care",)), ("Call service on leaks.", "NarrativeText", 1, ("Pump care",)),
        ("| Site | Pumps |\n| --- | --- |\n| Oslo | 12 |", "Table", 1, ("Pump care",)),
        ("Ask who has spares.", "NarrativeText", 1, ("Pump care",)), ("Questions?", "NarrativeText", 2, ()),
        ("Leaks per month", "NarrativeText", 2, ()),
        ("|  | Oslo | Bergen |\n| --- | --- | --- |\n| Jan | 3 | 1 |\n| Feb | 0 | 2 |", "Table", 2, ()),
        ("Q=V/t", "NarrativeText", 2, ())]
    shape = lambda key, text: (f'<draw:custom-shape draw:id="{key}"><text:p>{text}</text:p></draw:custom-shape>')  # noqa: E731
    flow = ('<draw:page draw:name="page1">' + shape("a", "Request") + shape("b", "Approve")
            + '<draw:connector draw:start-shape="a" draw:end-shape="b"><text:p>yes</text:p></draw:connector>'
            + '<draw:connector draw:start-shape="a" draw:end-shape="z"><text:p>loose end</text:p></draw:connector></draw:page>')
    drawn = parse_document(raw("flows/approval.odg", opendocument("drawing", "", flow)))  # LibreOffice Draw
    assert drawn.text == "Request\n\nApprove\n\nRequest → Approve: yes\n\nloose end"


def test_a_visio_drawing_reads_as_its_shapes_and_connections_page_by_page():
    """Visio drawings were read as binary text and refused: a process's steps and who hands over
    to whom were lost. A page is headed by its name (none for Visio's own "Page-2"), its shapes'
    texts read in rows top down, each row left to right (a group's text before its members'; a
    shape without text of its own shows its master's; the data set on a shape on lines under
    it), then each connector glued to two shapes with text as "From → To", labelled with its own
    text. A background page (a title block) is not read; the drawing's properties title and tag it."""
    from tests.support.visio import connect, drawing, field, shape

    steps = (shape(1, "Submit expense", x=4, y=10) + shape(2, "Manager approves?", x=4, y=8)
             + shape(3, "Return to employee", x=6, y=6.1) + shape(4, "Pay out", x=2, y=6)  # one row, slightly apart
             + shape(5, "Yes", x=3, y=7) + shape(6, "No", x=5, y=7) + shape(7, "", x=4, y=9)  # connectors
             + shape(8, "Audit may sample it", x=7, y=9))  # a connector glued at one end: read as text
    links = connect(7, 1, 2) + connect(5, 2, 4) + connect(6, 2, 3) + connect(8, 2, None)
    data = field("Owner", "Accounts payable", "Process owner") + field("SLA", "2 days") + field("Cost", "") \
        + field("Internal", "cost centre 4711", hidden=True)
    lane = shape(10, "Finance", x=1, y=3, height=2, inner=shape(11, "Book the payment", y=0.5, data=data)
                 + shape(12, master=2, data=field("System", "SAP")))
    data = drawing([("Expense approval", steps, links), ("Page-2", lane, "")],
                   background=shape(20, "ACME Corp - drawn by J. Doe", x=4, y=0.5),
                   master=shape(5, "Reconcile monthly", data=field("System", "", "Ledger system")), title="Expense process",
                   keywords="finance; approvals")
    doc = parse_document(raw("processes/expenses.vsdx", data))
    assert (doc.title, doc.tags) == ("Expense process", ("finance", "approvals"))
    assert [(doc.text[e.start : e.end], e.category, e.page) for e in doc.elements] == [
        ("Expense approval", "Title", 1), ("Submit expense", "NarrativeText", 1),
        ("Audit may sample it", "NarrativeText", 1), ("Manager approves?", "NarrativeText", 1),
        ("Pay out", "NarrativeText", 1), ("Return to employee", "NarrativeText", 1),
        ("Submit expense → Manager approves?", "ListItem", 1), ("Manager approves? → Pay out: Yes", "ListItem", 1),
        ("Manager approves? → Return to employee: No", "ListItem", 1),
        ("Finance", "NarrativeText", 2), ("Book the payment\nProcess owner: Accounts payable\nSLA: 2 days", "NarrativeText", 2),
        ("Reconcile monthly\nLedger system: SAP", "NarrativeText", 2)]  # labelled as its master labels the field
    assert doc.elements[-1].heading_path == ()  # a page Visio named itself heads nothing
    with pytest.raises(DocumentError, match="no visio/pages/pages.xml"):
        parse_document(raw("processes/empty.vsdx", saved_zip({"visio/document.xml": "<VisioDocument/>"})))


def test_a_drawio_diagram_reads_as_a_visio_drawing_does():
    """draw.io files were read as their XML (a page compressed: base64 of nothing readable). A page
    is headed by its name (none for draw.io's "Page-2"), its shapes' labels (HTML read as text)
    in reading order, a container's before its members', an object's own attributes as data,
    then each edge joining two labelled shapes, labelled with its label or its label cell's."""
    import base64
    import zlib
    from urllib.parse import quote

    def cell(key, value="", parent="1", x=0, y=0, extra=""):
        return (f'<mxCell id="{key}" value="{value}" parent="{parent}" vertex="1"{extra}><mxGeometry x="{x}" y="{y}" '
                'width="120" height="60" as="geometry"/></mxCell>')

    first = ('<mxGraphModel><root><mxCell id="0"/><mxCell id="1" parent="0"/>'
             + cell("a", "New hire&lt;br&gt;signs contract", x=200, y=0) + cell("b", "IT issues laptop", x=100, y=120)
             + cell("c", "&lt;b&gt;Badge&lt;/b&gt; office", x=300, y=125)
             + '<UserObject id="d" label="Buddy assigned" owner="HR" placeholders="1">'
             + cell("", x=200, y=240).replace('id=""', "").replace(' value=""', "") + "</UserObject>"
             + '<mxCell id="e1" value="first day" edge="1" parent="1" source="a" target="b"><mxGeometry relative="1" '
             'as="geometry"/></mxCell><mxCell id="e2" edge="1" parent="1" source="a" target="c"><mxGeometry '
             'relative="1" as="geometry"/></mxCell>' + cell("l2", "week one", parent="e2", extra=' connectable="0"')
             + '<mxCell id="e3" edge="1" parent="1" source="b" target="z"><mxGeometry relative="1" as="geometry"/></mxCell>'
             + "</root></mxGraphModel>")
    second = ('<mxGraphModel><root><mxCell id="0"/><mxCell id="1" parent="0"/>'
              + cell("s", "Finance", x=0, y=0, extra=' style="swimlane"') + cell("t", "Pays the bonus", parent="s", x=10, y=40)
              + "</root></mxGraphModel>")
    packed = base64.b64encode(zlib.compress(quote(second, safe="").encode(), 9)[2:-4]).decode()  # raw deflate
    data = (f'<mxfile host="app.diagrams.net"><diagram id="p1" name="Onboarding">{first}</diagram>'
            f'<diagram id="p2" name="Page-2">{packed}</diagram></mxfile>').encode()
    doc = parse_document(raw("hr/onboarding.drawio", data))
    assert doc.title == "Onboarding"
    assert [(doc.text[e.start : e.end], e.category, e.page) for e in doc.elements] == [
        ("Onboarding", "Title", 1), ("New hire signs contract", "NarrativeText", 1), ("IT issues laptop", "NarrativeText", 1),
        ("Badge office", "NarrativeText", 1), ("Buddy assigned\nowner: HR", "NarrativeText", 1),
        ("New hire signs contract → IT issues laptop: first day", "ListItem", 1),
        ("New hire signs contract → Badge office: week one", "ListItem", 1),
        ("Finance", "NarrativeText", 2), ("Pays the bonus", "NarrativeText", 2)]
    bare = parse_document(raw("hr/bare.drawio", second.encode()))  # a graph without its file
    assert bare.text == "Finance\n\nPays the bonus"
    with pytest.raises(DocumentError, match="not draw.io's <mxfile>"):
        parse_document(raw("hr/other.drawio", b"<svg/>"))
    from rag_assets.core.parsing import diagrams

    bomb = base64.b64encode(zlib.compress(b"a" * (diagrams.MAX_PAGE_BYTES + 10), 9)[2:-4]).decode()  # about 64 kB
    with pytest.raises(DocumentError, match="expands past 64 MB"):
        parse_document(raw("hr/bomb.drawio", f'<mxfile><diagram name="x">{bomb}</diagram></mxfile>'.encode()))


def test_an_svg_picture_reads_as_the_text_it_shows_and_a_drawio_export_as_its_diagram():
    """An SVG was read as its XML: path data and styles were indexed. It reads as the text it draws
    in order (spans joined; a foreignObject's HTML, as draw.io and Mermaid write labels; of a
    switch, the first choice alone, not its fallback copy), its description first; definitions,
    styles and scripts are never drawn. A draw.io export reads as the diagram it carries."""
    import html as html_module

    picture = ('<svg xmlns="http://www.w3.org/2000/svg"><title>Order flow</title><desc>How orders ship</desc>'
               "<defs><text>a glyph template</text></defs><style>.label { fill: red }</style><script>var x = 1;</script>"
               '<g><switch><foreignObject><div xmlns="http://www.w3.org/1999/xhtml"><div>Pick<br/>items</div></div>'
               '</foreignObject><text>Pick it...</text></switch><path d="M0 0 L10 10"/><text x="5"><tspan>Pack the</tspan>'
               '<tspan x="5" dy="1.2em">box</tspan><tspan>es</tspan></text></g></svg>')  # a second line, then a run
    doc = parse_document(raw("docs/flow.svg", picture.encode()))
    assert (doc.title, doc.text) == ("Order flow", "How orders ship\n\nPick items\n\nPack the boxes")
    diagram = ('<mxfile><diagram name="Page-1"><mxGraphModel><root><mxCell id="0"/><mxCell id="1" parent="0"/>'
               '<mxCell id="a" value="Lamp broken?" parent="1" vertex="1"><mxGeometry y="0" as="geometry"/></mxCell>'
               '<mxCell id="b" value="Replace bulb" parent="1" vertex="1"><mxGeometry y="100" as="geometry"/></mxCell>'
               '<mxCell id="e" value="Yes" parent="1" edge="1" source="a" target="b"/></root></mxGraphModel></diagram></mxfile>')
    export = (f'<svg xmlns="http://www.w3.org/2000/svg" content="{html_module.escape(diagram)}"><switch><foreignObject>'
              '<div xmlns="http://www.w3.org/1999/xhtml">Lamp broken?</div></foreignObject></switch></svg>')
    doc = parse_document(raw("docs/lamp.drawio.svg", export.encode()))
    assert doc.text == "Lamp broken?\n\nReplace bulb\n\nLamp broken? → Replace bulb: Yes"
    with pytest.raises(DocumentError, match="not <svg>"):
        parse_document(raw("docs/other.svg", b"<html/>"))


def test_source_files_of_more_languages_are_code_and_an_xhtml_page_a_web_page():
    """A C, Kotlin, shell or TSX file was text (chunked by paragraph, a function cut at its blank
    lines); an .xhtml page was text too, its markup indexed."""
    from rag_assets.core.chunking import chunk_document
    from rag_assets.core.chunking.profile import ChunkingProfile
    from rag_assets.core.tokens import get_token_counter

    source = "int add(int a, int b)\n{\n    int sum = a + b;\n\n    return sum;\n}\n"
    for name in ("src/add.c", "src/Add.kt", "scripts/deploy.sh", "web/App.tsx", "lib/add.HPP"):
        doc = parse_document(raw(name, source.encode()))
        assert (doc.content_type, [e.category for e in doc.elements]) == ("code", ["CodeSnippet"]), name
    chunks = chunk_document(parse_document(raw("src/add.c", source.encode())), ChunkingProfile("d", strategy="auto"),
                            get_token_counter("cl100k_base"), 256).chunks
    assert [c.text.strip() for c in chunks] == [source.strip()]  # whole, not cut at its blank line
    page = b'<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>Gates</title></head>' \
           b"<body><p>The east gate opens at 05:30.</p></body></html>"
    doc = parse_document(raw("site/gates.xhtml", page))
    assert (doc.content_type, doc.title, doc.text) == ("html", "Gates", "The east gate opens at 05:30.")


def test_legacy_encodings_and_line_endings_decode():
    latin = "Café crème, naïve façade.\r\nSecond line.\r".encode("cp1252")
    doc = parse_document(raw("latin.txt", latin))
    assert doc.text == "Café crème, naïve façade.\nSecond line.\n"
    utf16 = "Grüße aus München".encode("utf-16")
    assert parse_document(raw("u16.txt", utf16)).text == "Grüße aus München"
    for encoding in ("utf-16-le", "utf-16-be"):  # no byte-order mark
        assert parse_document(raw("u16.txt", "Grüße aus München\n".encode(encoding))).text == "Grüße aus München\n"
    # UTF-8 with one stray cp1252 byte: the UTF-8 text stays intact, the stray byte reads as cp1252.
    mixed = "Café crème brûlée, ".encode() + b"caf\xe9.\n"
    assert parse_document(raw("mixed.txt", mixed)).text == "Café crème brûlée, café.\n"


def test_symlinks_out_of_the_source_root_are_not_listed_or_read(tmp_path):
    root = tmp_path / "src"
    root.mkdir()
    (root / "ok.md").write_text("# ok\n")
    secret = tmp_path / "secret.md"
    secret.write_text("top secret")
    (root / "leak.md").symlink_to(secret)
    (root / "linked_folder").symlink_to(tmp_path, target_is_directory=True)  # neither entered nor listed
    (root / "dangling.md").symlink_to(tmp_path / "gone.md")  # refused: an indexed file dropped by git annex
    (root / "loop.md").symlink_to(root / "loop.md")  # refused too, never silently deleted
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / "sub" / "deeper" / "a b.md").write_text("# nested\n")
    (root / "sub" / "inside.md").symlink_to(root / "ok.md")  # a link within the root is a document
    refs = list_disk(root, ("**/*",), ())
    assert [(r.doc_id, r.refused is not None) for r in refs] == [
        ("dangling.md", True), ("leak.md", True), ("loop.md", True), ("ok.md", False), ("sub/deeper/a b.md", False),
        ("sub/inside.md", False)]
    assert refs[4].uri == (root / "sub" / "deeper" / "a b.md").as_uri()
    assert [r.doc_id for r in list_disk(root, ("**/*.md",), ("sub/deeper/*",))] == [
        "dangling.md", "leak.md", "loop.md", "ok.md", "sub/inside.md"]
    assert "outside the source root" in refs[1].refused
    assert refs[0].refused == refs[2].refused and "symlink points to nothing" in refs[0].refused
    for doc_id in ("leak.md", "../secret.md", "../src/../secret.md"):
        with pytest.raises(DocumentError, match="outside the source root"):
            read_disk(root, doc_id)


def test_rich_formats_never_run_language_detection(monkeypatch):
    """unstructured's language detection only fills element metadata we drop, and each forked
    parse loaded its profiles anew: it stays off (a detection call fails the parse here)."""
    import unstructured.partition.common.lang as lang

    def detect_langs(text):
        raise AssertionError("language detection ran")

    monkeypatch.setattr(lang, "detect_langs", detect_langs)
    for doc_id in ("support/security_policy.html", "handbook/travel_policy.docx", "handbook/robot_maintenance_guide.pdf"):
        doc = parse_document(read_disk(SAMPLE, doc_id))
        assert len(doc.text) > 200 and doc.elements, doc_id



def test_an_email_is_parsed_again_when_any_format_its_attachments_may_have_changes():
    from rag_assets.core.parsing.parse import FORMAT_REVISIONS, parser_settings

    email = parser_settings(("eng",), "email")
    assert all(f"{name}{revision}" in email for name, revision in FORMAT_REVISIONS.items() if name != "email")


def test_an_asciidoc_include_and_a_docbook_external_entity_are_left_out_not_fatal():
    adoc = parse_document(raw("guide.adoc", b"= Guide\n\n== Intro\n\ninclude::chapters/two.adoc[opts=optional]\n\nBody text.\n"))
    assert "Body text." in adoc.text and "include::" not in adoc.text and adoc.title == "Guide"
    docbook = (b'<?xml version="1.0"?>\n<!DOCTYPE article PUBLIC "-//OASIS//DTD DocBook XML V4.5//EN" '
               b'"http://www.oasis-open.org/docbook/xml/4.5/docbookx.dtd" [\n<!ENTITY chap SYSTEM "chap.xml">\n]>\n'
               b"<article><title>Guide</title><section><title>Start</title><para>Hello there.</para>&chap;</section>"
               b"</article>\n")
    assert "Hello there." in parse_document(raw("guide.xml", docbook)).text


def test_a_table_s_caption_is_read_before_it():
    page = (b"<h1>Prices</h1><table><caption>Table 3: Prices by region</caption><tr><th>Region</th><th>Price</th></tr>"
            b"<tr><td>EU</td><td>5</td></tr></table>")
    doc = parse_document(raw("prices.html", page))
    assert doc.text == "Prices\n\nTable 3: Prices by region\n\n| Region | Price |\n| --- | --- |\n| EU | 5 |"
    latex = parse_document(raw("paper.tex", b"\\section{Results}\n\\begin{table}\n\\caption{Latency by index}\n"
                                            b"\\begin{tabular}{ll}\nIndex & Latency \\\\\nIVF & 4 ms \\\\\n"
                                            b"\\end{tabular}\n\\end{table}\n"))
    assert "Latency by index" in latex.text


def _mail(headers: str, body: bytes) -> bytes:
    return ("From: Ann Lee <ann@example.com>\nTo: bob@example.com\nSubject: Report\nMIME-Version: 1.0\n"
            + headers + "\n\n").encode() + body


def test_an_email_that_is_one_attachment_or_an_invite_is_read():
    csv = parse_document(raw("scan.eml", _mail('Content-Type: text/csv; name="report.csv"\n'
                                               'Content-Disposition: attachment; filename="report.csv"',
                                               b"region,sales\nnorth,100\nsouth,200\n")))
    assert "Attachment: report.csv" in csv.text and "north,100" in csv.text
    invite = parse_document(raw("invite.eml", _mail("Content-Type: text/calendar; method=REQUEST",
                                                    b"BEGIN:VCALENDAR\nBEGIN:VEVENT\nSUMMARY:Budget review\n"
                                                    b"LOCATION:Room 4\nEND:VEVENT\nEND:VCALENDAR\n")))
    assert "Where: Room 4" in invite.text and "LOCATION:" not in invite.text  # an invitation reads as its event


def test_a_plain_text_email_has_no_made_up_headings_and_reads_its_charset_as_mail_clients_do():
    reply = parse_document(raw("reply.eml", _mail("Content-Type: text/plain; charset=utf-8",
                                                  b"Hi Ann,\n\nThe migration starts on Monday.\n\nCheers,\nBob\n")))
    assert [reply.text[e.start : e.end] for e in reply.elements if e.category == "Title"] == ["Report"]
    smart = parse_document(raw("quotes.eml", _mail("Content-Type: text/plain; charset=iso-8859-1\n"
                                                   "Content-Transfer-Encoding: 8bit", b"\x93Quoted\x94 costs \x80 5\x85\n")))
    assert "\u201cQuoted\u201d costs \u20ac 5\u2026" in smart.text  # Outlook's windows-1252 bytes
    unlabelled = parse_document(raw("de.eml", _mail("Content-Type: text/plain\nContent-Transfer-Encoding: 8bit",
                                                    "Grüße aus München.\n".encode())))
    assert "Grüße aus München." in unlabelled.text


def test_markdown_blocks_that_are_only_html_comments_are_left_out_of_the_text():
    """An Apache licence header atop every page of a docs site was embedded with each page's first
    chunk (and, sentence by sentence, answered queries about licences from every page)."""
    page = ("<!--\nLicensed to the Apache Software Foundation (ASF) under one\nor more contributor license "
            "agreements.\n-->\n\n# Install\n\n<!-- TODO: screenshots -->\nRun the installer.\n\n"
            "```html\n<!-- kept: an example -->\n<p>hi</p>\n```\n\nInline <!-- kept --> words.\n"
            "<!-- a --> kept <!-- b -->\n")
    doc = parse_document(raw("docs/install.md", page.encode()))
    assert "Licensed" not in doc.text and "TODO" not in doc.text
    assert all(kept in doc.text for kept in ("<!-- kept: an example -->", "Inline <!-- kept --> words.",
                                              "<!-- a --> kept <!-- b -->", "Run the installer."))
    assert doc.title == "Install" and [doc.text[e.start : e.end] for e in doc.elements][:2] == [
        "# Install", "Run the installer."]
    mdx = ("---\nid: install\n---\nimport Tabs from '@theme/Tabs';\nimport './styles.css';\n\n## Install\n\n"
           "{/* TODO: screenshots */}\n\n{% comment %}\nInternal: ask ops.\n{% endcomment %}\n\n"
           "export const meta = {a: 1};\n\n```js\nimport x from 'y';\n```\n\nimport data from \"a CSV\" files.\n")
    site = parse_document(raw("docs/install.mdx", mdx.encode()))
    assert not any(hidden in site.text for hidden in ("@theme", "styles.css", "TODO", "Internal", "meta ="))
    assert "import x from 'y';" in site.text and 'import data from "a CSV" files.' in site.text


DOCS_SITE_PAGE = """---
title: Install
---
# Install

<Tabs>
  <TabItem value="py" label="Python" default>

Install with pip.

  </TabItem>
</Tabs>

:::note

Needs Python 3.10.

:::

:::tip[Pro tip]
Pin the version.
:::

!!! warning "Data loss"
    Deleting the bucket deletes the index.

=== "Linux"
    Run the script.

> [!IMPORTANT]
> Back up first.

{{< note >}}
Shortcode content.
{{< /note >}}

{% if site.beta %}
Beta only.
{% endif %}

<p align="center"><img src="logo.png" alt="Acme logo"></p>

```xml
<dependency>
  <groupId>x</groupId>
</dependency>
```

    <indented>
    :::

A <kbd>Ctrl</kbd> key and <https://example.com>.
"""


def test_docs_site_markup_lines_read_as_the_labels_their_renderer_shows():
    """Docusaurus, MkDocs, Hugo and Jekyll pages embedded their markup: "<TabItem value=\"py\"
    label=\"Python\" default>", ":::note", "{{< /note >}}" and "{% endif %}" lines were text of the
    chunks, and cited. Code (fenced, or indented four columns) keeps its lines."""
    doc = parse_document(raw("docs/install.mdx", DOCS_SITE_PAGE.encode()))
    lines = doc.text.splitlines()
    for label in ("Python", "Note", "Pro tip", "Data loss", "Linux", "> Important", "Acme logo"):
        assert label in lines, label
    prose = doc.text[: doc.text.index("```xml")]
    for markup in ("<Tabs>", "TabItem", ":::", "!!!", "===", "[!IMPORTANT]", "{{<", "{%", "<p ", "<img"):
        assert markup not in prose, markup
    for kept in ("Install with pip.", "Deleting the bucket", "Shortcode content.", "Beta only.", "<groupId>x</groupId>",
                 "    <indented>\n    :::", "A <kbd>Ctrl</kbd> key and <https://example.com>."):
        assert kept in doc.text, kept
    spans = {doc.text[e.start : e.end]: e for e in doc.elements}
    assert spans["Install with pip."].heading_path == ("Install",) and doc.title == "Install"
    assert spans["Pro tip\nPin the version."].category == "NarrativeText"
    assert all(doc.text[e.start : e.end].strip() for e in doc.elements)
    cells = [{"cell_type": "markdown", "source": '<div class="alert alert-info">\n\nRetrain weekly.\n\n</div>'}]
    book = parse_document(raw("train.ipynb", json.dumps({"cells": cells, "nbformat": 4}).encode()))
    assert book.text.strip() == "Retrain weekly."


@pytest.mark.parametrize("page, text", [
    ('=== "Markdown"\n\n    ``` markdown\n    !!! note "Posuere"\n    <div>\n    ```\n',  # code under an MkDocs tab
     'Markdown\n\n    ``` markdown\n    !!! note "Posuere"\n    <div>\n    ```\n'),
    ("Example:\n\n    > [!NOTE]\n    <Tabs>\n    tabs:\n      === \"x\"\n",  # indented code
     "Example:\n\n    > [!NOTE]\n    <Tabs>\n    tabs:\n      === \"x\"\n"),
    ("!!! Do not use in production builds\n\n!!! danger zone ahead\n",  # exclamations, no admonitions
     "!!! Do not use in production builds\n\n!!! danger zone ahead\n"),
    ("<table>\n  <tr>\n    <th>Name</th>\n  </tr>\n</table>\n",  # an HTML table keeps its rows, as a Markdown table
     "| Name |\n| --- |\n"),
    ('{% include note.html content="Restart the server." %}\n\n<br/>\n\n<TabItem label={"Python"}>\n',
     "Restart the server.\n\n\nPython\n"),
    ('!!! note\n    Body.\n\n    ??? tip inline end "Nested"\n        Inner.\n',
     "Note\n    Body.\n\n    Nested\n        Inner.\n"),
    ("<Tabs\n  groupId=\"os\"\n  values={[\n    {label: 'Windows', value: 'win'},\n    {label: 'macOS', value: 'mac'},\n"
     "  ]}>\n<TabItem value=\"win\">\n\nUse the installer.\n\n</TabItem>\n", "Windows macOS\n\nUse the installer.\n\n"),
    ('<img\n  src="x.png"\n  alt="Diagram"\n/>\nCaption.\n', "Diagram\nCaption.\n"),  # a tag prettier spread over lines
    ("<Ctrl\nstarts no tag: this line is prose ->\n", "<Ctrl\nstarts no tag: this line is prose ->\n"),
    ("<div\n    An indented paragraph of prose\n    closing with an arrow ->\n",  # bare words are no attributes
     "<div\n    An indented paragraph of prose\n    closing with an arrow ->\n"),
    ("<Warning\n> Be careful.\n>\n> Really.\n", "<Warning\n> Be careful.\n>\n> Really.\n"),  # a quote is none either
    ("<table\n  class=\"x\">\n  <tr><td>a</td></tr>\n</table>\n", "| a |\n"),
    ("<Tabs values={[{label: 'Apt', value: 'apt'}, {label: 'Yum', value: 'yum'}]}>\n", "Apt Yum\n"),
    ("```npm i``` installs it.\n\n:::note\nRemember.\n:::\n", "```npm i``` installs it.\n\nNote\nRemember.\n"),
    ('=== "Tab"\n\t!!! note "Title"\n\t\tInside.\n', "Tab\n\tTitle\n\t\tInside.\n"),  # a tab is four columns
    ('=== "A"\n\n    ```\n    x\n\nAfter.\n\n:::tip\nT\n:::\n',  # an unclosed fence ends with its tab
     '=== "A"\n\n    ```\n    x\n\nAfter.\n\nTip\nT\n'.replace('=== "A"', "A")),
])
def test_markup_reading_keeps_code_tables_and_prose_and_reads_tags_over_lines(page, text):
    """Code nested under an MkDocs tab or indented four columns kept its lines only where no marker
    matched in it; "!!! Do not use..." read as "Do"; an HTML table lost its row tags and so its rows;
    a JSX tag prettier spread over lines was embedded attribute by attribute."""
    assert parse_document(raw("docs/page.md", page.encode())).text == text


@pytest.mark.parametrize("line", ["{{< a >}}" * 60 + "x", "{% ab %}" * 60 + "x", "<a>" * 60 + "x", "<a" + " " * 50_000,
                                  "{{< " + " " * 50_000 + "x", "{{< " + "a" * 50_000, "{% " + "a" * 50_000])
def test_a_long_line_of_near_markup_is_read_as_text(line):
    """Each markup tag is matched once to its first end: a line of many tags that is not markup after
    all (its last character) is text, found without trying every way of cutting it into tags
    (2**60 of them for the first)."""
    doc = parse_document(raw("notes.md", f"# Notes\n\n{line}\n".encode()))
    assert line.strip() in doc.text


@pytest.mark.parametrize("line", [".:a" * 40_000, "` " + " " * 100_000 + "<", ".. x:: " + " " * 100_000 + "y"])
def test_a_long_restructuredtext_line_of_near_markup_is_read_in_one_pass(line):
    """Role, reference and directive patterns are anchored or atomic: a 100 kB line is not scanned
    again from each of its characters (minutes, where it is read in milliseconds)."""
    doc = parse_document(raw("notes.rst", f"Notes\n=====\n\n{line}\n".encode()))
    assert line.strip()[-1] in doc.text and doc.text.startswith("Notes\n\n")


def test_asciidoc_reads_as_asciidoctors_preprocessor_leaves_it():
    """pandoc reads no preprocessor directive: an `endif::[]` before a blank line failed the whole
    file, other conditionals and `////` comments were read as text, and `:doctype: book` made every
    section a paragraph."""
    readme = (b"= Widget\n:product: Widget Pro\n\nifdef::env-github[]\n:tip-caption: :bulb:\nendif::[]\n"
              b"ifndef::env-github[]\nRead it on the site.\nendif::[]\n\n////\nInternal: fix the build.\n////\n\n"
              b"ifdef::product[Shipped as {product}.]\nifdef::nope[Never shown.]\n\n== Install\n\nRun it.\n\n"
              b"----\n////\nkept in a listing\n////\n----\n\nText.\n\nifdef::env-github[]\nOn GitHub.\nendif::[]\n")
    doc = parse_document(raw("README.adoc", readme))
    for shown in ("Read it on the site.", "Shipped as", "Run it.", "kept in a listing"):
        assert shown in doc.text, shown
    for hidden in ("ifdef", "endif", "tip-caption", "Internal", "Never shown", "On GitHub"):
        assert hidden not in doc.text, hidden
    book = parse_document(raw("ops.adoc", b"= Ops\n:doctype: book\n\n== Scaling\n\nAdd nodes.\n\n=== Limits\n\nTen.\n"))
    titles = [book.text[e.start : e.end] for e in book.elements if e.category == "Title"]
    assert titles == ["Ops", "Scaling", "Limits"]
    assert next(e for e in book.elements if book.text[e.start : e.end] == "Ten.").heading_path == ("Scaling", "Limits")


def test_restructuredtext_comments_are_left_out():
    page = (".. Copyright 2024 Acme. Licensed under the Apache License,\n   Version 2.0.\n\n..\n   An editor's note.\n\n"
            ".. _install:\n\nInstall\n=======\n\n.. note::\n\n   Needs Python 3.10.\n\n.. |p| replace:: AcmeDB\n\n"
            ".. [1] A footnote.\n\n..\n\n   A quote after an empty comment.\n")
    doc = parse_document(raw("docs/install.rst", page.encode()))
    assert "Licensed" not in doc.text and "editor" not in doc.text and doc.title == "Install"
    for kept in ("Needs Python 3.10.", "\n[1] A footnote.", "A quote after an empty comment."):
        assert kept in doc.text, kept
    assert all(doc.text[e.start : e.end].strip() for e in doc.elements)


SPHINX_PAGE = """.. _install:

=======
Install
=======

.. toctree::
   :maxdepth: 2
   :caption: Contents

   quickstart

.. |product| replace:: AcmeDB

|product| needs Python 3.10. See :ref:`the upgrade guide <upgrade>`, :func:`~acme.client.connect` and :class:`.Client`.
Read `the docs <https://acme.example/docs>`_ first, and `<https://acme.example/faq>`_.

.. csv-table:: Limits
   :header: "Name", "Max"

   rows, 100

.. testsetup::

   import acme_fixtures

.. tabs::

   .. code-tab:: bash

      acme --host :ref:`tabbed`

Text ::

    indented code

A claim [#]_ and another [2]_.

.. [#] Footnotes show as [1] and their text.

.. note:: Back up first.

.. versionadded:: 2.1 The fast flag.

.. code-block:: python
   :caption: Connecting
   :linenos:

   client = acme.connect()  # :ref:`kept`
   -----

.. image:: diagram.png
   :alt: Architecture diagram
   :width: 400

.. py:function:: send(to, body)

   Sends a message.

- Run it::

      make all

  Then check the logs.

.. raw:: html

   <div class="banner"></div>

Usage
=====

Use it.
"""


def test_restructuredtext_reads_as_sphinx_shows_it():
    """A Sphinx page embedded its markup: ".. toctree::" with ":maxdepth: 2" and the pages it lists,
    targets, ":ref:`the upgrade guide <upgrade>`", "|product|" and ".. code-block:: python"."""
    doc = parse_document(raw("docs/install.rst", SPHINX_PAGE.encode()))
    prose = doc.text.replace("client = acme.connect()  # :ref:`kept`", "").replace("acme --host :ref:`tabbed`", "")
    for markup in ("..", "::", ":maxdepth:", "quickstart", "|product|", ":ref:", ":func:", "<upgrade>", "`_",
                   "diagram.png", ":width:", "banner", "Contents", "acme_fixtures", "Text :"):
        assert markup not in prose, markup
    for shown in ("AcmeDB needs Python 3.10. See the upgrade guide, connect and Client.",
                  "Read the docs first, and https://acme.example/faq.", "A claim [#] and another [2].",
                  "\n[#] Footnotes show as [1] and their text.", "Limits\n\n| Name | Max |\n| --- | --- |\n| rows | 100 |\n",
                  "- Run it:",
                  "Note\n   Back up first.", "Added in version 2.1: The fast flag.", "Connecting",
                  "Architecture diagram", "send(to, body)", "Sends a message.", "Then check the logs."):
        assert shown in doc.text, shown
    kinds = {doc.text[e.start : e.end]: (e.category, e.heading_path) for e in doc.elements}
    assert kinds["client = acme.connect()  # :ref:`kept`\n   -----"] == ("CodeSnippet", ("Install",))  # no title
    assert kinds["make all"][0] == "CodeSnippet" and kinds["Then check the logs."][0] == "NarrativeText"
    assert kinds["acme --host :ref:`tabbed`"][0] == kinds["indented code"][0] == "CodeSnippet"
    assert kinds["Use it."] == ("NarrativeText", ("Install", "Usage")) and doc.title == "Install"


@pytest.mark.parametrize("page, text", [
    (":file:`.gitignore`, :kbd:`.`, :doc:`../install`, :class:`.Request`, :meth:`~.A.b`, :func:`!x`\n",
     ".gitignore, ., ../install, Request, b, x\n"),  # only a Python object's leading dots go
    ("Run ``ls [1]_ |x|`` here: |x|, [1]_, a | |x| b.\n\n.. |x| replace:: EX\n",
     "Run ``ls [1]_ |x|`` here: EX, [1], a | EX b.\n\n"),  # literals stay as written
    (".. [TODO: fix this later] a comment\n   still the comment\n\n.. [1] A footnote.\n", "\n[1] A footnote.\n"),
    (".. module:: acme\n\nText.\n", "\nText.\n"),
    (":exc:`py3:StopIteration`, :data:`py2:types.ClassType`, :ref:`python:comparisons`\n",
     "StopIteration, types.ClassType, python:comparisons\n"),  # a resolved link drops a Python target's inventory
])
def test_restructuredtext_inline_markup_reads_as_sphinx_shows_it(page, text):
    """A file role's ".gitignore" read "gitignore"; a footnote reference inside ``literal`` text was
    rewritten; a comment whose text opens with brackets was shown as a footnote."""
    assert parse_document(raw("docs/page.rst", page.encode())).text == text


WRAPPED_RST = """Build
=====

The property is a :ref:`semicolon-separated list <CMake
Language Lists>` of values; see `the guide
   <https://acme.example/guide>`_ and :variable:`CMAKE_X
<CMAKE_X\\<N\\>>`.

* .. versionadded:: 3.6
     The target is cross-compiled.

* An item with `a stray backquote and
  line two
  line three
  line four.

.. parsed-literal::

   string(`FIND`_ <string>)
   string(:ref:`LENGTH <JSONLENGTH>` <s>)

.. cmake-module:: ../../Modules/FindBoost.cmake

.. describe:: /etc/acme.conf
"""


def test_restructuredtext_wrapped_roles_list_directives_and_parsed_literals_read_as_shown():
    """CMake's help: a role wrapped over two lines was embedded whole (":ref:`semicolon-separated list
    <CMake" and "Language Lists>`"), "* .. versionadded:: 3.6" kept its markup, a parsed-literal's
    references their backquotes, and ".. cmake-module:: <path>" made the path a chunk."""
    doc = parse_document(raw("docs/build.rst", WRAPPED_RST.encode()))
    assert "The property is a semicolon-separated list of values; see the guide and CMAKE_X.\n" in doc.text
    assert "* Added in version 3.6\n     The target is cross-compiled." in doc.text
    # a backquote no line within three closes is left as written, its lines unjoined
    assert "* An item with `a stray backquote and\n  line two\n" in doc.text
    code = [doc.text[e.start : e.end] for e in doc.elements if e.category == "CodeSnippet"]
    assert code == ["string(FIND <string>)\n   string(LENGTH <s>)"]
    assert "Modules" not in doc.text and "FindBoost" not in doc.text
    assert doc.text.endswith("\n/etc/acme.conf\n")  # an absolute path is what the directive describes
    with pytest.raises(DocumentError, match="FindBoost.rst: the page shows no text .*includes.* exclude globs"):
        parse_document(raw("module/FindBoost.rst", b".. cmake-module:: ../../Modules/FindBoost.cmake\n"))


def test_many_restructuredtext_substitutions_are_put_in_one_pass():
    """Each definition was searched for in every line holding a bar: 8,000 took 17 s; one pass over
    the text finds every |name|."""
    n = 8000
    page = "".join(f".. |s{i}| replace:: v{i}\n" for i in range(n)) + "".join(f"a |s{i}| c\n" for i in range(n))
    text = parse_document(raw("docs/subs.rst", page.encode())).text
    assert text.split() == [word for i in range(n) for word in ("a", f"v{i}", "c")]


RST_TABLES = """Limits
======

+--------------+---------------------+
| Plan         | Quota               |
|              +----------+----------+
|              | Requests | Storage  |
+==============+==========+==========+
| Free         | 100/day  | 1 GB     |
+--------------+----------+----------+
| Team :sup:`1`| 10,000   | 50 GB,   |
|              |          | pooled   |
+--------------+----------+----------+

=========== =========================
Converter   Accepts
=========== =========================
``string``  any text without a slash
`int`       positive integers, see
            :ref:`converters <conv>`
=========== =========================

.. list-table:: Frozen *Delights*
   :widths: 15 30
   :header-rows: 1

   * - Treat
     - Description
   * - Albatross
     - On a stick! A | bar.
   * - Crunchy Frog
     - If we took the bones out,
       it wouldn't be crunchy.

.. csv-table:: Regions
   :header: "Code", "Name"

   "eu-1", "Frankfurt"
   "us-2", "Ohio, with a
   second line"
After.
"""


def test_restructuredtext_tables_are_markdown_tables():
    """A grid table was embedded with its "+----+" borders and "|" walls, a simple table with its
    "=====" rules, a list table as "* - " items and a CSV table as quoted CSV: no row read under
    its header, and a long one was chunked as prose."""
    doc = parse_document(raw("docs/limits.rst", RST_TABLES.encode()))
    tables = [doc.text[e.start : e.end] for e in doc.elements if e.category == "Table"]
    assert tables == [
        "| Plan | Quota Requests | Quota Storage |\n| --- | --- | --- |\n"  # two header rows merged, spans repeated
        "| Free | 100/day | 1 GB |\n| Team 1 | 10,000 | 50 GB, pooled |",
        "| Converter | Accepts |\n| --- | --- |\n| ``string`` | any text without a slash |\n"
        "| `int` | positive integers, see converters |",
        "| Treat | Description |\n| --- | --- |\n| Albatross | On a stick! A \uff5c bar. |\n"
        "| Crunchy Frog | If we took the bones out, it wouldn't be crunchy. |",
        "| Code | Name |\n| --- | --- |\n| eu-1 | Frankfurt |\n| us-2 | Ohio, with a second line |",
    ]
    assert "Frozen *Delights*\n\n| Treat" in doc.text and "Regions\n\n| Code" in doc.text
    assert "+--" not in doc.text and "=== =" not in doc.text and "* -" not in doc.text  # borders, rules, items
    after = next(e for e in doc.elements if doc.text[e.start : e.end] == "After.")
    assert (after.category, after.heading_path) == ("NarrativeText", ("Limits",))


@pytest.mark.parametrize("table, kept", [
    ("+-----+-----+\n| a   | b   |\n+-----+-----+\n| c   | d  |\n+-----+-----+\n", "| c   | d  |"),  # ragged
    ("+-----+-----+\n| a   | b   |\n| c   | d   |\n", "| c   | d   |"),  # no bottom border
    ("=====  =====\na      b\n=====  =====\nc      d\n", "c      d"),  # no closing rule
    (".. list-table::\n\n   * alpha\n   * beta\n", "* beta"),  # a list of one level
    (".. csv-table:: Sizes\n   :file: sizes.csv\n", "Sizes"),  # read from a file: its title alone
])
def test_a_restructuredtext_table_docutils_cannot_read_stays_text(table, kept):
    doc = parse_document(raw("docs/t.rst", ("Intro.\n\n" + table + "\nAfter.\n").encode()))
    assert kept in doc.text and "After." in doc.text
    assert all(e.category != "Table" for e in doc.elements)


@pytest.mark.parametrize("page, text", [
    # a header cell spanning two columns: a simple table's row lists only its cells, so "Output" was
    # put in the second column
    ("=====  =====  ======\n   Inputs     Output\n------------  ------\nA      B      A or B\n=====  =====  ======\n"
     "False  False  False\n=====  =====  ======\n",
     "| Inputs A | Inputs B | Output A or B |\n| --- | --- | --- |\n| False | False | False |\n"),
    # text right under the closing rule: docutils ends the table at its second rule
    ("=====  =====\nName   Max\n=====  =====\nrows   100\n=====  =====\nThe limits apply.\n",
     "| Name | Max |\n| --- | --- |\n| rows | 100 |\n\nThe limits apply.\n"),
    # an untitled table under a line that shows text: it joined that paragraph
    ("Intro.\n\n.. rubric:: Sizes\n.. csv-table::\n\n   a, b\n\nAfter.\n",
     "Intro.\n\nSizes\n\n| a | b |\n\nAfter.\n"),
    # East Asian wide characters take two columns
    ("+------+------+\n| 名前 | 値   |\n+======+======+\n| 東京 | 1    |\n+------+------+\n",
     "| 名前 | 値 |\n| --- | --- |\n| 東京 | 1 |\n"),
    ("====  ====\n名前  値\n====  ====\n東京  1\n====  ====\n", "| 名前 | 値 |\n| --- | --- |\n| 東京 | 1 |\n"),
    # tabs are 8-column stops
    ("Intro.\n\n\t+---+---+\n\t| a | b |\n\t+---+---+\n", "Intro.\n\n\t| a | b |\n"),
    ("=====\t=====\na\tb\n=====\t=====\n", "| a | b |\n"),
    # a table of empty cells shows nothing; a table right under a section title is one
    ("Intro.\n\n+---+---+\n|   |   |\n+---+---+\n\nAfter.\n", "Intro.\n\n\nAfter.\n"),
    ("Sizes\n=====\n+---+---+\n| a | b |\n+---+---+\n", "Sizes\n\n| a | b |\n"),
    # ... but not under a line too short to underline a title, nor under a paragraph ending in one
    ("Usage\n---\n+-------+\n| a b c |\n+-------+\n", "Usage\n---\n+-------+\n| a b c |\n+-------+\n"),
    ("Some text\nmore text\n---------\n=== ===\na   b\n=== ===\n", "Some text\nmore text\n---------\n=== ===\na   b\n=== ===\n"),
    # a directive table indented by tabs: its content ends where the indentation (8 columns a tab) does
    ("Para.\n\n\t.. csv-table::\n\n\t   a, b\n\n    Quoted.\n", "Para.\n\n\t| a | b |\n\n    Quoted.\n"),
    ("\t.. list-table::\n\n\t   * - a\n\t     - b\n\n  - item\n", "\t| a | b |\n\n  - item\n"),
    # a simple table's first row underlined column by column is its header; one underline across is a span
    ("=====  =====\nName   Old\n-----  -----\na      b\n=====  =====\n", "| Name | Old |\n| --- | --- |\n| a | b |\n"),
    ("=====  =====\nName   Old\n------------\na      b\n=====  =====\n", "| Name Old | Name Old |\n| a | b |\n"),
    # a combining accent makes a line one character longer than it shows: docutils' parser failed on it
    # (IndexError: the page failed); docutils shows the lines as text
    ("+----+\n| e\u0301 |\n+----+\n", "+----+\n| e\u0301 |\n+----+\n"),
])
def test_restructuredtext_tables_read_as_docutils_reads_them(page, text):
    from rag_assets.core.parsing.rst import rst_as_shown

    shown, elements = rst_as_shown(page)
    assert shown == text
    assert [e.category for e in elements if "| --- |" in shown[e.start : e.end]] == ["Table"] * ("| --- |" in shown)


@pytest.mark.parametrize("page", ['Example:\n\n>>> print("=" * 10)\n==========\n\nText.\n', "* star\n******\n",
                                  ":Field: value\n--------------\n", "-v  verbose\n-----------\n", "| line\n------\n"])
def test_a_line_docutils_reads_before_a_title_is_no_title_and_keeps_the_line_under_it(page):
    """A doctest's output line of "=" was read as its input's title underline, and cut from the text
    with the titles' adornment lines."""
    from rag_assets.core.parsing.rst import rst_as_shown

    shown, elements = rst_as_shown(page)
    assert shown == page and all(e.category != "Title" for e in elements)


def test_a_restructuredtext_transition_is_left_out_of_the_text():
    """A transition (a rule between paragraphs) was a chunk of its own: "----------", embedded."""
    from rag_assets.core.parsing.rst import rst_as_shown

    shown, elements = rst_as_shown("Para one.\n\n----------\n\nPara two.\n\n---\n\nShort.\n")
    assert shown == "Para one.\n\n\nPara two.\n\n---\n\nShort.\n"  # three characters make no transition
    assert [shown[e.start : e.end] for e in elements] == ["Para one.", "Para two.", "---", "Short."]


def test_a_list_table_row_whose_bullet_a_tab_follows_has_its_cells():
    from rag_assets.core.parsing.rst import rst_as_shown

    assert rst_as_shown(".. list-table::\n\n   *\t- a\n\t- b\n")[0] == "| a | b |\n"  # was "| a - b |"


def test_restructuredtext_table_borders_never_closed_are_scanned_once():
    """Each simple table's top border (each indented one column further, so no line ends it) was
    scanned to the page's end: 1,400 of them took 4 s; the page's scans are bounded by its length."""
    from rag_assets.core.parsing.rst import rst_as_shown

    page = "".join(" " * i + "=== ===\n\n" for i in range(3000))
    shown, elements = rst_as_shown(page)
    assert shown == page and len(elements) == 3000 and all(e.category == "NarrativeText" for e in elements)


def test_a_long_restructuredtext_table_is_chunked_by_rows_under_its_header():
    from rag_assets.core.chunking import ChunkingProfile, chunk_document
    from rag_assets.core.tokens import MINILM_TOKENIZER, get_token_counter

    rows = "".join(f"NW-{i:05d}  Part number {i} for the dock\n" for i in range(2000))
    page = f"Parts\n=====\n\n========  ================================\nSKU       Name\n========  " \
           f"================================\n{rows}========  ================================\n"
    doc = parse_document(raw("docs/parts.rst", page.encode()))
    chunks = chunk_document(doc, ChunkingProfile("p", strategy="markdown"), get_token_counter(MINILM_TOKENIZER),
                            256).chunks
    assert len(chunks) > 20
    assert "| SKU | Name |\n| --- | --- |\n| NW-00000 |" in chunks[0].text
    for chunk in chunks[1:]:
        assert chunk.text.startswith("| NW-") and chunk.text.endswith(" for the dock |")  # whole rows
        assert "| SKU | Name |\n| --- | --- |" in chunk.embed_text  # the header embedded with every group
    assert "| NW-01999 | Part number 1999 for the dock |" in chunks[-1].text


def _word_table(heading: str, rows: list[tuple[str, ...]]) -> bytes:
    """A Word document of ``heading`` and a table of ``rows``."""
    from docx import Document

    word = Document()
    word.add_heading(heading, 1)
    table = word.add_table(rows=len(rows), cols=len(rows[0]))
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    return saved(word)


def _table_lines(doc_id: str, data: bytes) -> list[str]:
    return [line for line in parse_document(raw(doc_id, data)).text.splitlines() if line.startswith("|")]


def test_a_table_is_headed_by_the_row_its_markup_marks_as_header():
    """Where the format marks header rows (<th> or <thead> on a web page, Org's rule, JATS' <thead>), a
    table without one has no header: a parameter table's first parameter was the header of the rest."""
    params = "<tr><td>ctxt:</td><td>a transformation context</td></tr><tr><td>node:</td><td>the input node</td></tr>"
    page = "<html><body><h1>xsltApply</h1><table>{}</table></body></html>"
    assert _table_lines("api.html", page.format(params).encode()) == [
        "| ctxt: | a transformation context |", "| node: | the input node |"]
    row_headed = "<tr><th>Version</th><td>1.2</td></tr><tr><th>License</th><td>MIT</td></tr>"  # a row header each
    assert _table_lines("about.html", page.format(row_headed).encode()) == ["| Version | 1.2 |", "| License | MIT |"]
    for headed in ("<thead><tr><td>Name</td><td>Meaning</td></tr></thead>", "<tr><td></td><th>Meaning</th></tr>",
                   "<tr><td><b>Name</b></td><td><strong> Meaning </strong></td></tr>"):  # a hand-written header
        assert _table_lines("h.html", page.format(headed + params).encode())[1] == "| --- | --- |", headed
    assert _table_lines("h.html", page.format("<tr><td><b>Name</b> of it</td><td><b>x</b></td></tr>" + params)
                        .encode())[1] != "| --- | --- |"  # bold in part: data
    org = "* Limits\n\n| rows | 100 |\n| cols | 20 |\n\n| Name | Max |\n|------+-----|\n| rows | 100 |\n"
    assert _table_lines("limits.org", org.encode()) == [
        "| rows | 100 |", "| cols | 20 |", "| Name | Max |", "| --- | --- |", "| rows | 100 |"]
    # Word, like ODT, RTF and spreadsheets, rarely marks its header row: the first row is it
    assert _table_lines("limits.docx", _word_table("Limits", [("Name", "Max"), ("rows", "100")])) == [
        "| Name | Max |", "| --- | --- |", "| rows | 100 |"]
    export = b"<html><body><table><tr><td>Name</td><td>Max</td></tr><tr><td>rows</td><td>100</td></tr></table></body></html>"
    assert _table_lines("export.xlsx", export)[1] == "| --- | --- |"  # a web application's Excel export


def test_a_long_table_without_a_header_row_repeats_none_of_its_rows():
    from rag_assets.core.chunking import ChunkingProfile, chunk_document
    from rag_assets.core.tokens import MINILM_TOKENIZER, get_token_counter

    rows = "".join(f"<tr><td>param{i}:</td><td>the value of parameter {i} for the call</td></tr>" for i in range(400))
    headed = "<tr><th>Name</th><th>Meaning</th></tr>" + rows
    counter = get_token_counter(MINILM_TOKENIZER)
    for body, context in ((rows, None), (headed, "| Name | Meaning |\n| --- | --- |\n")):
        doc = parse_document(raw("api.html", f"<html><body><h1>Call</h1><table>{body}</table></body></html>".encode()))
        for strategy in ("markdown", "table", "auto"):
            chunks = chunk_document(doc, ChunkingProfile("p", strategy=strategy), counter, 256).chunks
            later = chunks[next(i for i, chunk in enumerate(chunks) if "| param0: |" in chunk.text) + 1 :]
            assert len(later) > 10 and all(chunk.text.startswith("| param") for chunk in later)  # whole rows
            assert sum(chunk.embed_text.count("| param0: |") for chunk in chunks) == 1, strategy
            assert all(context in chunk.embed_text if context else "Name" not in chunk.embed_text
                       for chunk in later), strategy
        records = "".join(chunk.embed_text for chunk in chunk_document(
            doc, ChunkingProfile("p", strategy="table", table_records=True), counter, 256).chunks)
        assert ("Name: param7:; Meaning: the value" if context else "\nparam7: the value of parameter 7") in records
        assert records.count("param0:") == 1  # no row names the others' columns


@given(st.text(alphabet="ab .:|`_<>=-+*\n", max_size=160))
@settings(max_examples=300, deadline=None)
def test_restructuredtext_read_as_shown_has_ordered_non_empty_elements(text):
    from rag_assets.core.parsing.rst import rst_as_shown

    shown, elements = rst_as_shown(text)
    ends = 0
    for element in elements:
        body = shown[element.start : element.end]
        assert ends <= element.start < element.end <= len(shown) and body.strip() == body
        ends = element.end
