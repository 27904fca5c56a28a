"""RSS and Atom feeds (a blog's or a news site's feed, Jira's XML export of issues) as the page a
feed reader shows: the channel's title, then each item under its own title with its date and
author, its content (HTML read as a page is) and its other fields ("status: Resolved", Jira's
comments with their author and date). Built as an HTML page for the web page reader."""

from __future__ import annotations

import html
import re

_MARKUP = re.compile(r"<[A-Za-z/!][^<>]*>")  # an escaped field that holds HTML
_KNOWN = frozenset("title link description pubDate published updated author creator summary content encoded guid "
                   "category id comments source enclosure".split())
_DECLARATION = re.compile(rb"\s*<\?xml\b(?:[^>]*?\bencoding\s*=\s*([\"'])([^\"']*)\1)?[^>]*\?>")
# Labels a browser reads as a wider encoding (WHATWG's Encoding Standard): a feed declaring one may use its extra bytes.
_BROWSER_CODECS = {"iso-8859-1": "cp1252", "latin1": "cp1252", "us-ascii": "cp1252", "ascii": "cp1252",
                   "tis-620": "cp874", "iso-8859-11": "cp874", "iso-8859-9": "cp1254", "gb2312": "gbk",
                   "euc-kr": "cp949", "ks_c_5601-1987": "cp949", "shift_jis": "cp932", "big5": "big5hkscs"}
MAX_FIELD_DEPTH = 4  # an item's own fields nested deeper are not read
_PAGE_LEVEL = frozenset(("html", "body", "main", "header", "footer"))  # read as blocks of the item
_UNSHOWN = frozenset(("head", "title", "meta", "script", "style", "nav"))  # left out


def feed_page(data: bytes) -> str | None:
    """An RSS (0.9x, 1.0, 2.0) or Atom feed as an HTML page (see the module), or None for other XML."""
    from lxml import etree

    head = data[:4096]
    if b"<rss" not in head and b"<feed" not in head and b"<rdf:RDF" not in head:
        return None
    parser = etree.XMLParser(resolve_entities=False, no_network=True, recover=True)
    try:
        root = etree.fromstring(_decoded(data), parser)
    except (etree.XMLSyntaxError, ValueError):
        return None
    if root is None or _local(root) not in ("rss", "feed", "RDF"):
        return None
    atom = _local(root) == "feed"
    channel = root if atom else next((e for e in root.iter() if _local(e) == "channel"), root)
    items = [e for e in root.iter() if _local(e) == ("entry" if atom else "item")]
    if not items:
        return None
    title = _text(_child(channel, "title"))
    parts = [f"<html><head><title>{html.escape(title)}</title></head><body>",
             f"<h1>{html.escape(title)}</h1>" if title else "",
             _shown(_child(channel, "subtitle" if atom else "description"))]
    for item in items:
        parts.append(_item(item, atom))
    return "".join(parts) + "</body></html>"


def _decoded(data: bytes) -> str | bytes:
    """A feed's text, decoded as a browser decodes its declared encoding (a byte it does not map
    replaced: libxml2 stopped at the first, losing the rest of the feed), its declaration left
    out; its bytes where it declares none Python knows (libxml2 then reads them)."""
    data = data.removeprefix(b"\xef\xbb\xbf")  # UTF-8's byte order mark
    declared = _DECLARATION.match(data)
    label = declared.group(2).decode("ascii").lower() if declared and declared.group(2) else "utf-8"
    try:
        return data[declared.end() if declared else 0 :].decode(_BROWSER_CODECS.get(label, label), errors="replace")
    except LookupError:
        return data


def _item(item, atom: bool) -> str:
    title = _text(_child(item, "title")) or "(untitled)"
    when = _text(_first(item, "published", "updated", "issued", "modified", "pubDate", "date"))
    author = _child(item, "author")
    author = _text(_child(author, "name")) if atom and author is not None else _text(author) or \
        _text(_child(item, "creator"))
    link = _child(item, "link")
    href = (link.get("href") if atom else _text(link)) if link is not None else ""
    byline = " · ".join(part for part in (when, author) if part)
    body = _first(item, "encoded", "full-text", "content", "summary" if atom else "description")
    # An RSS item's fields of no namespace (Jira's status, assignee, comments); extensions' (WordPress', Blogger's,
    # Atom's own) are feed plumbing.
    fields = "" if atom else "".join(_field(child, 1) for child in item if isinstance(child.tag, str)
                                     and "}" not in child.tag and (_local(child) not in _KNOWN
                                                                   or _local(child) == "comments" and len(child)))
    return (f"<h2>{html.escape(title)}</h2>" + (f"<p>{html.escape(byline)}</p>" if byline else "")
            + (f"<p>{html.escape(href)}</p>" if href else "") + _shown(body) + fields)


def _field(element, depth: int) -> str:
    """An item's other field: "name: value" (its attributes after its name), or its fields below it."""
    if depth > MAX_FIELD_DEPTH:
        return ""
    name = _local(element)
    attributes = ", ".join(v for k, v in element.attrib.items() if not v.isdigit() and _local_name(k) != "id")
    label = f"{name} ({attributes})" if attributes else name
    children = [child for child in element if isinstance(child.tag, str)]
    if children:
        return "".join(_field(child, depth + 1) for child in children)
    value = _text(element)
    if not value:
        return ""
    if _MARKUP.search(value):
        return f"<p>{html.escape(label)}:</p>{_fragment(value)}"
    return f"<p>{html.escape(label)}: {html.escape(value)}</p>"


def _fragment(markup: str) -> str:
    """An item's HTML as a block of the page: parsed on its own (its unclosed tags closed there), a
    ``<main>`` or other page-level element in it a ``<div>`` (one would make the reader read it alone),
    scripts, styles and navigation left out."""
    from lxml import html as lxml_html

    block = lxml_html.Element("div")
    try:
        parts = lxml_html.fragments_fromstring(markup)
    except (ValueError, TypeError):  # no element at all (lxml's "Document is empty")
        parts = [markup]
    for part in parts:
        if isinstance(part, str):
            last = block[-1] if len(block) else None
            if last is not None:
                last.tail = (last.tail or "") + part
            else:
                block.text = (block.text or "") + part
        else:
            block.append(part)
    for element in list(block.iter()):
        tag = element.tag.lower() if isinstance(element.tag, str) else ""
        if tag in _UNSHOWN:
            element.drop_tree()
        elif tag in _PAGE_LEVEL:
            element.tag = "div"
    return lxml_html.tostring(block, encoding="unicode")


def _shown(element) -> str:
    """A field's content as HTML: escaped HTML (RSS's description) as it is, Atom's XHTML content
    serialised, plain text escaped."""
    if element is None:
        return ""
    if element.get("type") == "xhtml":
        from lxml import etree

        return "".join(etree.tostring(child, encoding="unicode") for child in element)
    value = _text(element)
    return _fragment(value) if element.get("type") == "html" or _MARKUP.search(value) else \
        f"<p>{html.escape(value)}</p>" if value else ""


def _first(element, *names: str):
    """The first of ``names`` that ``element`` has as a child, or None."""
    return next((child for name in names if (child := _child(element, name)) is not None), None)


def _child(element, name: str):
    if element is None:
        return None
    return next((child for child in element if isinstance(child.tag, str) and _local(child) == name), None)


def _text(element) -> str:
    """An element's text: as written where it holds HTML, else its whitespace collapsed."""
    if element is None:
        return ""
    raw = "".join(element.itertext())
    return raw.strip() if _MARKUP.search(raw) else " ".join(raw.split())


def _local(element) -> str:
    return _local_name(element.tag) if isinstance(element.tag, str) else ""


def _local_name(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]
