"""The ids a web page gives its headings, so a citation can link to the cited section
(``page.html#installation``): a heading's own id, a named anchor inside it (MediaWiki's
``<span id>``, ``<a name>``), an anchor just before it, or the id of the section it opens
(Sphinx's ``<section id>``, also where a label's empty ``<span id>`` comes before the heading).
A Markdown heading's is the id GitHub's rendering gives it, repeats counted, or its own ``{#id}``
(``markdown_heading_ids``)."""

from __future__ import annotations

import re
from dataclasses import replace

import lxml.html

from rag_assets.core.links import github_slug
from rag_assets.core.models import Element
from rag_assets.core.parsing.structure import HEADING_ATTRIBUTES

HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_SECTIONS = {"section", "div", "article"}


def _key(text: str) -> str:
    """Heading text as both sides are compared: words only (a permalink's ¶ or # left out), any case."""
    return " ".join(re.sub(r"[\W_]+", " ", text).split()).casefold()


def _id_of(heading) -> str | None:
    own = heading.get("id")
    if own:
        return own
    for inner in heading.iterdescendants():
        if isinstance(inner.tag, str) and (inner.get("id") or (inner.tag == "a" and inner.get("name"))):
            return inner.get("id") or inner.get("name")
    before = heading.getprevious()
    if before is not None and before.tag == "a" and not (before.text or "").strip() and (
            before.get("id") or before.get("name")):
        return before.get("id") or before.get("name")
    parent = heading.getparent()
    if parent is not None and parent.tag in _SECTIONS and parent.get("id") and next(
            (child for child in parent if isinstance(child.tag, str) and not _empty_target(child)), None) is heading:
        return parent.get("id")
    return None


def _empty_target(element) -> bool:
    """An empty ``<span id>`` or ``<a name>``: a link target a page puts before a heading (Sphinx's
    label ``<span id="id1">`` at the top of a section)."""
    return element.tag in ("a", "span") and not element.text_content().strip()


def heading_ids(page: str) -> list[tuple[str, str]]:
    """(heading text as compared, id) of each heading of ``page`` that has an id, in page order."""
    try:
        root = lxml.html.document_fromstring(page)
    except (ValueError, lxml.etree.ParserError):  # an empty or unparsable page: no anchors
        return []
    found = []
    for heading in root.iter(*HEADINGS):
        anchor = _id_of(heading)
        key = _key(heading.text_content())
        if anchor and key:
            found.append((key, anchor))
    return found


def with_anchors(text: str, elements: list[Element], ids: list[tuple[str, str]]) -> list[Element]:
    """``elements`` with each Title that matches the next unmatched heading of ``ids`` (by its
    text, in page order) carrying that heading's id; a Title that matches none (a bold line read
    as a heading, a heading without an id) carries none."""
    out, position = [], 0
    for element in elements:
        if element.category == "Title" and position < len(ids):
            key = _key(text[element.start:element.end])
            match = next((i for i in range(position, len(ids)) if ids[i][0] == key), None)
            if match is not None:
                element, position = replace(element, anchor=ids[match][1]), match + 1
        out.append(element)
    return out


_OWN_ID = re.compile(r"(?:^|[\s{:])#([\w:.-]+)")  # the id an attribute list names: "{#setup}", "{: .wide #setup}"


def markdown_heading_ids(text: str, elements) -> list[Element]:
    """``elements`` of a Markdown ``text`` with each heading carrying its own ``{#id}``, else the id
    GitHub gives it: ``github_slug`` of its text, with ``-1``, ``-2``... once that id is taken (a
    changelog's second "Added" is ``added-1``), as github-slugger counts."""
    taken: dict[str, int] = {}
    out = []
    for element in elements:
        if element.category == "Title" and element.heading_path:
            attributes = HEADING_ATTRIBUTES.search(text[element.start:element.end])
            own = _OWN_ID.search(attributes.group()) if attributes else None
            anchor = own.group(1) if own else _unique(github_slug(element.heading_path[-1]), taken)
            element = replace(element, anchor=anchor)
        out.append(element)
    return out


def _unique(slug: str, taken: dict[str, int]) -> str:
    found = slug
    while found in taken:
        taken[slug] += 1
        found = f"{slug}-{taken[slug]}"
    taken[found] = 0
    return found
