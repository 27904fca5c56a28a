"""A web page's landmarks and heading permalinks read as a reader sees the page: what the page marks
as the site's chrome around its content (``role="navigation"``: a menu, a table of contents;
``role="doc-toc"``: docutils' ``.. contents::``; ``role="search"``; ``role="banner"``;
``role="contentinfo"`` or a page-level ``<footer>``: the site's footer; a table summarised as
navigation: DocBook's Prev/Up/Next bar), and a list of nothing but links to the page's own places (a
table of contents no role marks), is left out, as unstructured leaves out ``<nav>``; what it marks
as its main content (``role="main"``) is read alone, as unstructured reads a ``<main>`` alone; a
heading's permalink ("#", "¶", "§") is no part of its text."""

from __future__ import annotations

import re

_LANDMARK = re.compile(r"""\b(?:role\s*=\s*["']?[^"'>]*\b(?:navigation|search|banner|contentinfo|doc-toc|main)|"""
                       r"""summary\s*=\s*["']?navigation)\b|<footer\b""", re.I)
# A link to a place on the same page whose text is a permalink sign alone: Sphinx's and MkDocs' "¶",
# rustdoc's "§", Node.js' "#", Docusaurus' zero-width space.
_PERMALINK = re.compile(r"""<a\b[^<>]*\bhref\s*=\s*["']#[^"'<>]*["'][^<>]*>\s*"""
                        r"""(?:#|¶|§|🔗|\u200b|&(?:para|sect|num|ZeroWidthSpace|#182|#167|#35|#8203|#x200b);)"""
                        r"""\s*</a\s*>""", re.I)
_ANCHOR_LINK = re.compile(r"""<a\b[^<>]*\bhref\s*=\s*["']#""", re.I)  # a link to a place on the page
_WORD = re.compile(r"[^\W_]")  # a letter or a digit
MIN_CONTENTS_ENTRIES = 3  # a list of fewer links to the page's own headings is text ("see Setup and Usage")
_TITLES = ("h2", "h3", "h4", "h5", "h6", "summary", "p")  # what may title a table of contents (a page's h1 never)


def _lower(attribute: str) -> str:
    return f"translate({attribute}, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"


def _has_role(name: str) -> str:
    return f"contains(concat(' ', normalize-space({_lower('@role')}), ' '), ' {name} ')"


# DocBook XSL's (Valgrind's, PostgreSQL's manuals) Prev/Up/Next bar: a table summarised as navigation
_NAVIGATION_TABLE = f"self::table[starts-with(normalize-space({_lower('@summary')}), 'navigation')]"
# A page's own footer (HTML-AAM's contentinfo: a <footer> in no article, aside, main, nav or section)
_PAGE_FOOTER = "self::footer[not(ancestor::article or ancestor::aside or ancestor::main or ancestor::nav " \
               "or ancestor::section)]"
_CHROME = " or ".join([*(_has_role(name) for name in ("navigation", "search", "banner", "contentinfo", "doc-toc")),
                       _NAVIGATION_TABLE, _PAGE_FOOTER])


def _contents_lists(root) -> list:
    """The page's own tables of contents, unmarked (npm's docs, a Confluence "Table of Contents"
    macro, an exported README's): the outermost lists of ``MIN_CONTENTS_ENTRIES`` items or more
    whose every item shows nothing but links to places on the page (and lists nested in it)."""
    found: list = []
    for listing in root.iter("ul", "ol"):
        if any(outer in found for outer in listing.iterancestors("ul", "ol")):
            continue
        items = list(listing.iter("li"))
        if len(items) >= MIN_CONTENTS_ENTRIES and all(_WORD.search(item.text_content()) and not _WORD.search(
                _unlinked(item)) for item in items):
            found.append(listing)
    return [_titled(listing) for listing in found]


def _titled(listing):
    """The block that holds ``listing`` and its title alone (npm's <section> of an h2 "Table of
    contents" and the list, whose heading headed the page's h3 sections after it; never an h1),
    else ``listing``."""
    block = listing
    for _ in range(2):
        parent = block.getparent()
        if parent is None or parent.tag not in ("section", "div", "aside", "details"):
            break
        titles = [child for child in parent if isinstance(child.tag, str) and child is not block]
        if not all(title.tag in _TITLES and len(title.text_content()) <= 40 for title in titles) \
                or _WORD.search((parent.text or "") + "".join(child.tail or "" for child in parent)):
            break
        block = parent
    return block


def _unlinked(element) -> str:
    """``element``'s text but its links to places on the page and its nested lists."""
    out = [element.text or ""]
    for child in element:
        if isinstance(child.tag, str) and child.tag not in ("ul", "ol") and not (
                child.tag == "a" and (child.get("href") or "").startswith("#")):
            out.append(_unlinked(child))
        out.append(child.tail or "")
    return "".join(out)


def readable_landmarks(page: str) -> str:
    """``page`` without its permalinks and, where it marks landmarks, each piece of chrome (see the
    module) a ``<nav>`` (but one holding the main content: a role set on a wrapper), and so its
    unmarked tables of contents (``_contents_lists``), its one main landmark a ``<main>`` where it
    has no ``<main>`` of its own; ``page`` itself where that changes nothing."""
    page = _PERMALINK.sub("", page)
    if not _LANDMARK.search(page) and not _ANCHOR_LINK.search(page):
        return page
    from lxml import html

    root = html.document_fromstring(page.encode("utf-8"), parser=html.HTMLParser(encoding="utf-8", huge_tree=True))
    mains = root.xpath(f"//*[{_has_role('main')}]")
    main_inside = f".//main or .//*[{_has_role('main')}]"
    chrome = [element for element in root.xpath(f"//*[{_CHROME}]") if not element.xpath(main_inside)]
    chrome += _contents_lists(root)
    changed = False
    if len(mains) == 1 and not root.xpath("//main") and mains[0].tag != "main":
        mains[0].tag, changed = "main", True
    for element in chrome:
        if element.tag != "nav":
            element.tag, changed = "nav", True
    return html.tostring(root, encoding="unicode") if changed else page
