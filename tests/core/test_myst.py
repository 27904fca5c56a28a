"""MyST's directives and roles (Sphinx pages written in Markdown: pip's docs, Jupyter Book) read as
Sphinx shows them; R Markdown's and Quarto's code chunks stay code."""

from hypothesis import given, settings
from hypothesis import strategies as st

from rag_assets.core.hashing import content_hash
from rag_assets.core.models import RawDocument
from rag_assets.core.parsing import parse_document


def parsed(text: str, doc_id: str = "docs/page.md"):
    data = text.encode()
    return parse_document(RawDocument(doc_id, f"file:///{doc_id}", content_hash(data), len(data), "v1", data))


def blocks(doc) -> list[tuple[str, str]]:
    return [(e.category, doc.text[e.start : e.end]) for e in doc.elements]


PAGE = """# Install

See {ref}`the upgrade guide <upgrade>`, {py:func}`~acme.send` and {pypi}`requests`.

````{note}
:class: tip

Back up first:

```bash
acme backup
```

```{warning}
Never on a live system.
```
````

```{code-block} python
:caption: demo.py
:linenos:

acme.send("hi")
```

```{toctree}
:maxdepth: 2

intro
usage
```

```{versionadded} 2.1 The --force flag.
```

```{figure} img/arch.png
:alt: Architecture

The system's parts.
```

```{dropdown} Proxy settings
---
open: true
---
Set HTTPS_PROXY.
```

:::{tip}
:class: dropdown
Pin your versions.
:::
"""


def test_myst_directives_read_as_sphinx_shows_them():
    doc = parsed(PAGE)
    assert blocks(doc) == [
        ("Title", "# Install"),
        ("NarrativeText", "See the upgrade guide, send and requests."),
        ("NarrativeText", "Note"),  # the admonition's label; its options left out
        ("NarrativeText", "Back up first:"),  # its content is the page's Markdown, not code
        ("CodeSnippet", "```bash\nacme backup\n```\n"),
        ("NarrativeText", "Warning"),  # a directive in a directive
        ("NarrativeText", "Never on a live system."),
        ("CodeSnippet", '```python\nacme.send("hi")\n```\n'),  # code in its language, no options
        ("NarrativeText", "Added in version 2.1: The --force flag."),  # the toctree shows nothing
        ("NarrativeText", "The system's parts."),  # a figure: its caption, not its path
        ("NarrativeText", "Proxy settings"),
        ("NarrativeText", "Set HTTPS_PROXY."),
        ("NarrativeText", "Tip"),
        ("NarrativeText", "Pin your versions."),
    ]
    for markup in ("{note}", ":class:", "maxdepth", "intro", "img/arch.png", "open: true", "```{", "{ref}", ":::"):
        assert markup not in doc.text, markup


def test_code_chunks_and_braces_in_code_stay_as_written():
    """R Markdown's and Quarto's chunks (```{r}, ```{python}) are code, not directives; inline code
    holding braces (`{venv}`, `${pid}`) is no role."""
    text = ("# Analysis\n\nThe prompt is `({venv})` and the file `${pid}.log`; run `{r}`.\n\n"
            "```{r}\nsummary(cars)\n```\n\n```{python}\nprint(1)\n```\n\n```\n```{note}\nin code\n```\n")
    doc = parsed(text, "report.qmd")
    assert blocks(doc) == [("Title", "# Analysis"),
                           ("NarrativeText", "The prompt is `({venv})` and the file `${pid}.log`; run `{r}`."),
                           ("CodeSnippet", "```{r}\nsummary(cars)\n```\n"),
                           ("CodeSnippet", "```{python}\nprint(1)\n```\n"),
                           ("CodeSnippet", "```\n```{note}\nin code\n```\n")]


MYST_LINES = ["```{note}", "````{warning}", "```{code-block} python", "```{toctree}", ":::{tip}", "::::{dropdown} T",
              "```", "````", ":::", "::::", ":class: x", "---", "open: true", "", "text {ref}`a <b>`", "# Title",
              "- item", "    indented", "`{x}` and ``{y}`z`` here", "```{py:function} f(x)", "```{r}"]


@given(st.lists(st.sampled_from(MYST_LINES), max_size=14))
@settings(max_examples=300, deadline=None)
def test_markdown_with_myst_markup_has_ordered_non_empty_elements(lines):
    from rag_assets.core.parsing.text_formats import markdown_as_shown

    shown, elements = markdown_as_shown("\n".join(lines))
    ends = 0
    for element in elements:
        body = shown[element.start : element.end]
        assert ends <= element.start < element.end <= len(shown) and body.strip()
        ends = element.end

