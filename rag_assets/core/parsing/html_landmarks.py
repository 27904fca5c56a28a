"""A web page's ARIA landmarks and heading permalinks read as a reader sees the page: what the page
marks as navigation (``role="navigation"``, a site's menu or a table of contents; ``role="search"``)
is left out, as unstructured leaves out ``<nav>``; what it marks as its main content (``role="main"``)
is read alone, as unstructured reads a ``<main>`` alone; a heading's permalink ("#", "¶", "§") is no
part of its text."""

from __future__ import annotations

import re

_LANDMARK = re.compile(r"""\brole\s*=\s*["']?[^"'>]*\b(?:navigation|search|main)\b""", re.I)
# A link to a place on the same page whose text is a permalink sign alone: Sphinx's and MkDocs' "¶",
# rustdoc's "§", Node.js' and Docusaurus' "#".
_PERMALINK = re.compile(r"""<a\b[^<>]*\bhref\s*=\s*["']#[^"'<>]*["'][^<>]*>\s*(?:#|¶|§|🔗|&(?:para|sect|num|#182|#167|#35);)"""
                        r"""\s*</a\s*>""", re.I)


def _has_role(name: str) -> str:
    return f"contains(concat(' ', normalize-space(translate(@role, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', " \
           f"'abcdefghijklmnopqrstuvwxyz')), ' '), ' {name} ')"


def readable_landmarks(page: str) -> str:
    """``page`` with its permalinks left out and, where it marks landmarks with ``role``, each
    navigation or search landmark a ``<nav>`` (one holding the main content excepted: a role set
    on a wrapper) and its one main landmark a ``<main>`` where it has no ``<main>`` of its own;
    ``page`` itself where that changes nothing."""
    page = _PERMALINK.sub("", page)
    if not _LANDMARK.search(page):
        return page
    from lxml import html

    root = html.document_fromstring(page.encode("utf-8"), parser=html.HTMLParser(encoding="utf-8", huge_tree=True))
    mains = root.xpath(f"//*[{_has_role('main')}]")
    main_inside = f".//main or .//*[{_has_role('main')}]"
    navigation = [element for element in root.xpath(f"//*[{_has_role('navigation')} or {_has_role('search')}]")
                  if not element.xpath(main_inside)]
    changed = False
    if len(mains) == 1 and not root.xpath("//main") and mains[0].tag != "main":
        mains[0].tag, changed = "main", True
    for element in navigation:
        if element.tag != "nav":
            element.tag, changed = "nav", True
    return html.tostring(root, encoding="unicode") if changed else page
