"""Links that open a result's place: its source (or the page a site generator or a Git host
publishes it as, a source's ``link_template``) with the cited section's anchor or a PDF's page."""

from __future__ import annotations

import posixpath
import re
import unicodedata
from urllib.parse import quote

FRAGMENT_SAFE = "!$&'()*+,;=:@/?-._~%"  # what a URL's fragment may hold as it is (RFC 3986)
PLACEHOLDERS = ("path", "stem")
SLUGS = ("github", "mkdocs")


def place_link(base: str, anchor: str | None, content_type: str, page: int | None) -> str:
    """``base`` with ``#anchor`` (a section), or ``#page=N`` for a PDF's page (which browsers' PDF
    viewers open at), or as it is. A Markdown file's headings have ids only where a site renders
    it: its anchor is used by ``published_link`` alone."""
    if anchor and content_type != "markdown":
        return _at(base, anchor)
    if content_type == "pdf" and page:
        return f"{base}#page={page}"
    return base


def template_problem(template: str) -> str | None:
    """Why ``template`` cannot make a link for each document, or None."""
    if re.search(r"[{}]", re.sub(r"\{\w*\}", "", template)):
        return "holds an unmatched brace: write {path} or {stem}"
    named = set(re.findall(r"\{(\w*)\}", template))
    unknown = sorted(named - set(PLACEHOLDERS))
    if unknown:
        return f"holds {{{unknown[0]}}}: use {{path}} (the document's path) or {{stem}} (without its extension)"
    if not named:
        return "names neither {path} (the document's path) nor {stem} (its path without the extension)"
    return None


def published_link(template: str, doc_id: str, anchor: str | None, heading: str, content_type: str,
                   page: int | None, slug: str | None) -> str:
    """The link to where ``doc_id`` is published (``template`` with its path or stem, each part
    percent-encoded) at the cited place: the page's own heading id (``anchor``), or, for a Markdown
    document, the id the site generator ``slug`` (github or mkdocs) gives its ``heading``
    (``markdown_anchor``)."""
    stem = posixpath.splitext(doc_id)[0]
    base = template.format(path=quote(doc_id), stem=quote(stem))
    if content_type == "markdown":
        anchor = markdown_anchor(anchor, heading, slug) if slug and heading else None
        return _at(base, anchor) if anchor else base
    return place_link(base, anchor, content_type, page)


def _at(base: str, anchor: str) -> str:
    """``base`` at the element whose id is ``anchor``."""
    return f"{base}#{quote(anchor, safe=FRAGMENT_SAFE)}"


def markdown_anchor(anchor: str | None, heading: str, slug: str) -> str:
    """The id generator ``slug`` gives a Markdown ``heading`` whose parsed ``anchor`` is the one
    GitHub gives it (``-N`` after its slug for the N-th repeat) or its own ``{#id}``; a row written
    before anchors were parsed (None) gets the heading's slug. MkDocs writes a repeat ``_N``."""
    base = github_slug(heading)
    anchor = anchor or base
    if slug == "github":
        return anchor
    repeat = re.fullmatch(re.escape(base) + r"-(\d+)", anchor)
    if anchor == base or repeat:
        return mkdocs_slug(heading) + (f"_{repeat.group(1)}" if repeat else "")
    return anchor


def github_slug(heading: str) -> str:
    """A heading's id as GitHub (and github-slugger, Docusaurus) writes it: lower case, punctuation
    removed, each space a hyphen."""
    kept = "".join(c for c in heading.lower() if c in " -_" or unicodedata.category(c)[0] in "LMN")
    return kept.replace(" ", "-")


def mkdocs_slug(heading: str) -> str:
    """A heading's id as MkDocs (Python-Markdown's toc) writes it: ASCII only, punctuation removed,
    runs of spaces and hyphens one hyphen, lower case."""
    ascii_text = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode()
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", ascii_text).strip().lower())
