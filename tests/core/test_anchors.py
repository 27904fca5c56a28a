"""A web page's headings carry the ids the page gives them, chunks the anchor of their section,
and results a link that opens the cited place (a section's #anchor, a PDF's #page=N)."""

import pytest

from rag_assets.config.profiles import profile_from_config
from rag_assets.config.schema import ChunkingProfileConfig
from rag_assets.core.chunking import chunk_document
from rag_assets.core.parsing.anchors import heading_ids
from rag_assets.core.links import (github_slug, markdown_anchor, mkdocs_slug, place_link, published_link,
                                   template_problem)
from rag_assets.core.tokens import get_token_counter
from tests.support.documents import parsed

PAGE = """<html><head><title>Install</title></head><body>
<nav><h2 id="nav-menu">Menu</h2><a href="/">Home</a></nav>
<main>
<h1 id="install">Installing Northwind <a class="headerlink" href="#install">¶</a></h1>
<p>The installer needs 4 GB of free disk space.</p>
<section id="proxy-setup"><h2>Proxy</h2><p>Behind a proxy, set NORTHWIND_PROXY before you run it.</p>
<h3>Certificates</h3><p>A proxy that inspects TLS needs its certificate in the store.</p></section>
<h2><span class="mw-headline" id="Uninstalling">Uninstalling</span></h2><p>Run the uninstaller from the menu.</p>
<a name="logs"></a><h2>Logs</h2><p>Logs are kept for 30 days.</p>
<h2>Licences</h2><p>Every seat needs a licence key.</p>
<section id="requirements-files"><span id="id1"></span><h2>Requirements Files</h2><p>One package a line.</p></section>
</main></body></html>"""


def test_each_way_a_page_names_a_heading_is_read():
    assert heading_ids(PAGE) == [("menu", "nav-menu"), ("installing northwind", "install"), ("proxy", "proxy-setup"),
                                 ("uninstalling", "Uninstalling"), ("logs", "logs"),
                                 ("requirements files", "requirements-files")]  # past Sphinx's label <span id>
    assert heading_ids("") == [] and heading_ids("<p>no headings</p>") == []


def test_a_pages_headings_carry_their_ids_and_chunks_the_anchor_of_their_section():
    doc = parsed("guide/install.html", PAGE.encode())
    titles = {doc.text[e.start:e.end]: e.anchor for e in doc.elements if e.category == "Title"}
    # The navigation's heading is not read (nor matched); a heading without an id carries none.
    assert titles == {"Installing Northwind": "install", "Proxy": "proxy-setup", "Certificates": None,
                      "Uninstalling": "Uninstalling", "Logs": "logs", "Licences": None,
                      "Requirements Files": "requirements-files"}
    profile = profile_from_config(ChunkingProfileConfig(name="small", strategy="markdown", max_tokens=48,
                                                        contextual_header=False,
                                                        min_tokens=0))
    chunks = chunk_document(doc, profile, get_token_counter("wordpiece:all-minilm-l6-v2"), 256).chunks
    anchors = {" > ".join(c.heading_path): c.anchor for c in chunks}
    # A section without an id of its own links to the one it lies in; one under no id'd heading to none.
    assert anchors["Installing Northwind > Proxy > Certificates"] == "proxy-setup"
    assert anchors["Installing Northwind > Uninstalling"] == "Uninstalling"
    assert anchors["Installing Northwind > Licences"] == "install"


CHANGELOG = (b"# Changelog\n\n## 1.2.0\n\n### Added\n\nThe export button.\n\n### Fixed\n\nThe login loop.\n\n"
             b"## 1.1.0 {#v110}\n\n### Added\n\nDark mode for the dashboard.\n\n## Added\n\nA heading like another.\n")


def test_a_markdown_heading_carries_the_id_github_gives_it_or_its_own():
    doc = parsed("CHANGELOG.md", CHANGELOG)
    assert [e.anchor for e in doc.elements if e.category == "Title"] == [
        "changelog", "120", "added", "fixed", "v110", "added-1", "added-2"]
    profile = profile_from_config(ChunkingProfileConfig(name="small", strategy="markdown", max_tokens=48,
                                                        contextual_header=False, min_tokens=0))
    chunks = chunk_document(doc, profile, get_token_counter("wordpiece:all-minilm-l6-v2"), 256).chunks
    dark = next(c for c in chunks if "Dark mode" in doc.text[c.start:c.end])
    assert dark.heading_path == ("Changelog", "1.1.0", "Added") and dark.anchor == "added-1"  # {#v110} not shown
    github = "https://github.com/acme/app/blob/main/{path}"
    assert published_link(github, "CHANGELOG.md", dark.anchor, "Added", "markdown", None, "github") == \
        "https://github.com/acme/app/blob/main/CHANGELOG.md#added-1"
    # A heading repeated under one parent (the same heading path) links to its own id too.
    notes = parsed("guide.md", b"# Guide\n\n## Notes\n\nFirst notes.\n\n## Setup\n\nSteps.\n\n## Notes\n\nMore.\n")
    counter = get_token_counter("wordpiece:all-minilm-l6-v2")
    second = next(c for c in chunk_document(notes, profile, counter, 256).chunks if "More" in notes.text[c.start:c.end])
    assert second.heading_path == ("Guide", "Notes") and second.anchor == "notes-1"
    # Where the file itself is the source, its headings have no ids: the link is the file.
    assert place_link("file:///docs/CHANGELOG.md", dark.anchor, "markdown", None) == "file:///docs/CHANGELOG.md"
    # Other text formats carry none.
    assert all(e.anchor is None for e in parsed("notes.txt", b"Install\n=======\n\nText.\n").elements)


@pytest.mark.parametrize("line, heading, anchor", [
    ("## Install {#setup}", "Install", "setup"), ("## Install { #setup .wide }", "Install", "setup"),
    ("## Install {: .wide #setup}", "Install", "setup"), ("## References {.unnumbered}", "References", "references"),
    ("## Preface {-}", "Preface", "preface"), ("## Sets {a, b}", "Sets {a, b}", "sets-a-b"),
    ("## Issue #12", "Issue #12", "issue-12"),
])
def test_a_headings_attribute_list_names_its_id_and_is_not_shown(line, heading, anchor):
    doc = parsed("guide.md", f"{line}\n\nText.\n".encode())
    title = next(e for e in doc.elements if e.category == "Title")
    assert (title.heading_path[-1], title.anchor) == (heading, anchor)


@pytest.mark.parametrize("anchor, heading, slug, expected", [
    ("added-1", "Added", "github", "added-1"), ("added-1", "Added", "mkdocs", "added_1"),
    ("added", "Added", "mkdocs", "added"), ("v110", "1.1.0 {#v110}", "mkdocs", "v110"),
    (None, "Remote Work", "github", "remote-work"), (None, "Café & Bar", "mkdocs", "cafe-bar"),
    ("why-1-1", "Why? 1", "mkdocs", "why-1_1"), ("why-1", "Why? 1", "mkdocs", "why-1"),
])
def test_a_markdown_anchor_is_the_id_each_generator_gives_the_heading(anchor, heading, slug, expected):
    assert markdown_anchor(anchor, heading, slug) == expected


@pytest.mark.parametrize("base, anchor, content_type, page, link", [
    ("https://docs.example.com/guide/install", "proxy-setup", "html", None,
     "https://docs.example.com/guide/install#proxy-setup"),
    ("file:///docs/a.html", "Über uns", "html", None, "file:///docs/a.html#%C3%9Cber%20uns"),
    ("s3://docs/report.pdf", None, "pdf", 7, "s3://docs/report.pdf#page=7"),
    ("file:///docs/plan.docx", None, "docx", None, "file:///docs/plan.docx"),
    ("file:///docs/old.pdf", None, "pdf", None, "file:///docs/old.pdf"),
])
def test_a_results_link_opens_the_cited_place(base, anchor, content_type, page, link):
    assert place_link(base, anchor, content_type, page) == link


@pytest.mark.parametrize("heading, github, mkdocs", [
    ("Remote Work", "remote-work", "remote-work"),
    ("What's new in 2.0?", "whats-new-in-20", "whats-new-in-20"),
    ("Code of Conduct & Ethics", "code-of-conduct--ethics", "code-of-conduct-ethics"),
    ("Über uns", "über-uns", "uber-uns"),
    ("snake_case API", "snake_case-api", "snake_case-api"),
])
def test_heading_ids_as_github_and_mkdocs_write_them(heading, github, mkdocs):
    assert (github_slug(heading), mkdocs_slug(heading)) == (github, mkdocs)


def test_a_published_link_maps_the_document_and_its_section():
    github = "https://github.com/acme/handbook/blob/main/{path}"
    assert published_link(github, "policies/Remote Work.md", None, "Remote Work", "markdown", None, "github") == \
        "https://github.com/acme/handbook/blob/main/policies/Remote%20Work.md#remote-work"
    site = "https://docs.example.com/{stem}/"
    assert published_link(site, "guide/install.md", None, "Proxy", "markdown", None, None) == \
        "https://docs.example.com/guide/install/"
    # A page's own heading id wins over a slug; a PDF opens at its page.
    assert published_link(site, "guide/install.html", "proxy-setup", "Proxy", "html", None, "mkdocs") == \
        "https://docs.example.com/guide/install/#proxy-setup"
    assert published_link(github, "manual.pdf", None, "Cleaning", "pdf", 4, "github") == \
        "https://github.com/acme/handbook/blob/main/manual.pdf#page=4"
    assert template_problem(github) is None and template_problem(site) is None
    assert "names neither {path}" in template_problem("https://docs.example.com/")
    assert "holds {name}" in template_problem("https://docs.example.com/{name}/{path}")
    assert "unmatched brace" in template_problem("https://docs.example.com/{path")
