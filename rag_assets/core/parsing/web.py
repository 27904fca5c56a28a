"""Web pages (HTML, XHTML, MIME web archives) read with unstructured, after what a reader never
sees is taken out (scripts, a hidden second rendering of an equation, nesting past
``MAX_HTML_DEPTH``); MathML reads as a line of text."""

from __future__ import annotations

import html
import re

from rag_assets.core.parsing.anchors import heading_ids, with_anchors
from rag_assets.core.parsing.api_objects import api_items, marked_api_objects
from rag_assets.core.parsing.decode import decode_text
from rag_assets.core.parsing.html_landmarks import readable_landmarks
from rag_assets.core.parsing.html_tables import readable_tables
from rag_assets.core.parsing.items import NO_LANGUAGE, first_title, join_elements, unstructured_items
from rag_assets.core.parsing.math_text import mathml_text


def parse_html(data: bytes, untitled: str = "", marked_headers: bool = True):
    """An HTML page, or the page of a MIME web archive (``_archived_page``); its title is its
    <title> (entities decoded) unless that is empty or ``untitled``, else the archive's subject,
    else its first heading. A table's header is the row its markup marks (``_table_rows``), its
    first row where not ``marked_headers``. An API reference's objects (Sphinx's) are sections
    under their names (``api_objects``)."""
    return _read_page(data, untitled, marked_headers)[:3]


def parse_web_page(data: bytes):
    """A web page as ``parse_html`` reads it, each heading the page gives an id carrying it as its
    element's ``anchor`` (``anchors``), so a citation links to the section."""
    text, elements, title, page = _read_page(data)
    return text, with_anchors(text, elements, heading_ids(page)), title


def _read_page(data: bytes, untitled: str = "", marked_headers: bool = True):
    """``parse_html``'s text, elements and title, and the page as unstructured was given it
    before the reader's clean-up (API objects marked as headings)."""
    from rag_assets.core.parsing.offline import prepare_unstructured

    prepare_unstructured()
    from unstructured.partition.html import partition_html

    page, subject = _archived_page(data) or (_decode_page(data), "")
    title_match = re.search(r"<title[^>]*>(.*?)</title>", page, re.I | re.S)
    title = " ".join(html.unescape(title_match.group(1)).split()) if title_match else ""
    title = title if title != untitled else ""
    marked = marked_api_objects(page)
    items = unstructured_items(partition_html(text=readable_html(marked), languages=NO_LANGUAGE),
                               marked_headers=marked_headers)
    text, elements = join_elements(api_items(items))
    return text, elements, title or " ".join(subject.split()) or first_title(text, elements), marked


def readable_html(page: str) -> str:
    """A page (or an e-mail's HTML body) as unstructured should read it: no deeper than it can
    (``_shallow_html``), the site's navigation, banner and footer left out and its main content
    read alone where the page marks them, without heading permalinks (``readable_landmarks``), the
    blocks it would drop shown (``_SHOWN_AS``), a superscript or subscript set against the text
    before it opened by "^" or "_" (``_SCRIPT``), layout tables read as their blocks and merged
    cells repeated (``readable_tables``), an equation as a line of text (``_equations_as_text``)."""
    page = readable_landmarks(_shallow_html(_equations_as_text(page)))
    page = _SHOWN_BLOCKS.sub(lambda m: f"<{m.group(1)}{_SHOWN_AS[m.group(2).lower()]}", page)
    page = _SCRIPT.sub(lambda m: m.group(1) + m.group(2) + ("^" if m.group(3).lower() == "sup" else "_"), page)
    return readable_tables(page)


_EQUATION = re.compile(r"<(?:\w+:)?math\b", re.I)  # MathML


def _equations_as_text(page: str) -> str:
    """``page`` with each MathML equation (``<math>``) as a span of its text as a line
    (``mathml_text``: "E=mc^2", "(a+b)/2"), else of its ``alttext``: unstructured read none (each
    equation was lost, a sentence around one read with a gap). The equation's rendering for the
    eye that a page marks hidden from readers beside it (``aria-hidden="true"``: KaTeX's HTML) is
    left out: it read as the equation's characters run together ("E=mc2")."""
    if not _EQUATION.search(page):
        return page
    from lxml import etree
    from lxml import html as lxml_html

    root = lxml_html.document_fromstring(page.encode(), parser=lxml_html.HTMLParser(huge_tree=True, encoding="utf-8"))
    for equation in [e for e in root.iter() if isinstance(e.tag, str) and e.tag.rpartition(":")[2].lower() == "math"]:
        shown, top = equation.text_content().strip(), equation
        while (parent := top.getparent()) is not None and parent.text_content().strip() == shown:
            top = parent  # a wrapper that holds the equation alone
        if (parent := top.getparent()) is not None:
            for twin in [child for child in parent if child is not top and child.get("aria-hidden") == "true"]:
                twin.drop_tree()
        span = etree.Element("span")
        span.text = mathml_text(equation) or " ".join((equation.get("alttext") or "").split())
        span.tail = equation.tail
        equation.getparent().replace(equation, span)
    return lxml_html.tostring(root, encoding="unicode")


# A <sup> or <sub> right after text (a character, or a closing tag: "2<sup>32</sup>", "tests.<sup>1</sup>",
# "</code><sup>"), which unstructured ran into it: 2 to the 32nd read "232", a footnote mark "tests.1". One
# opening a block ("<p><sup>Syntax</sup>", the Rust reference's labels) is left as it is, and so is one of
# a sign alone ("Visibility<sup>?</sup>", a grammar's quantifier: it reads as it is).
_SCRIPT = re.compile(r"([^\s>]|</[A-Za-z][\w:-]*\s*>)(<(su[pb])\b[^<>]*>)(?=(?:<[^<>]*>)*[\w(\[\u2212-])", re.I)


# How deep a page's elements may nest for unstructured to read them as elements: lxml's HTML parser
# stops at 255 levels (the rest of the page silently lost) and unstructured walks the tree
# recursively (Python's recursion limit failed a tree of 300 levels).
MAX_HTML_DEPTH = 250
_BLOCK_TAGS = {"p", "div", "br", "li", "tr", "td", "th", "table", "ul", "ol", "dl", "dt", "dd", "section", "article",
               "blockquote", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "header", "footer", "main", "aside"}


def _shallow_html(page: str) -> str:
    """``page`` as it is, or where its elements nest deeper than MAX_HTML_DEPTH (unclosed tags, as
    in old or generated pages), with what lies deeper kept as the text of its ancestor at that
    depth (a line a block). Raises ValueError where even lxml's deep-tree parser cannot read it all."""
    if page.count("<") <= MAX_HTML_DEPTH:
        return page
    from lxml import etree
    from lxml import html as lxml_html

    parser = lxml_html.HTMLParser(huge_tree=True, encoding="utf-8")
    root = lxml_html.document_fromstring(page.encode(), parser=parser)
    if any("Excessive depth" in entry.message for entry in parser.error_log):
        raise ValueError("its elements nest too deep for the HTML parser to read it all (unclosed tags?); "
                         "close its tags or save it again from a browser or editor")
    deep, depth = [], 0
    for event, element in etree.iterwalk(root, events=("start", "end")):
        depth += 1 if event == "start" else -1
        if event == "start" and depth == MAX_HTML_DEPTH:
            deep.append(element)
    if not deep:
        return page
    for element in deep:
        for inner in element.iterdescendants():
            if inner.tag in _BLOCK_TAGS:
                inner.text, inner.tail = "\n" + (inner.text or ""), "\n" + (inner.tail or "")
        etree.strip_tags(element, "*")
    return lxml_html.tostring(root, encoding="unicode")


# Blocks a reader sees that unstructured drops as likely boilerplate: an FAQ's <details> and its
# <summary> question, a <figure> and its <figcaption>; read as the blocks they show as.
_SHOWN_AS = {"details": "div", "summary": "p", "figure": "div", "figcaption": "p"}
_SHOWN_BLOCKS = re.compile(r"<(/?)(details|summary|figure|figcaption)\b", re.I)
_META_CHARSET = re.compile(rb"""<meta[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)


def _decode_page(data: bytes) -> str:
    """An HTML page's text: by its byte order mark, else by the charset its <meta> declares (as
    browsers read it: ISO-8859-1 and ASCII as windows-1252, a UTF-16 declaration in bytes that are
    ASCII-compatible ignored), else as every text file is (UTF-8, else cp1252)."""
    if not data.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        declared = _META_CHARSET.search(data[:4096])
        label = declared.group(1).decode("ascii").lower() if declared else ""
        label = "cp1252" if label in ("iso-8859-1", "latin1", "latin-1", "us-ascii", "ascii") else label
        if label and not label.startswith("utf-16"):
            try:
                return data.decode(label)
            except (LookupError, UnicodeDecodeError):  # a charset Python lacks, or not what it says
                pass
    return decode_text(data)[0]


def _archived_page(data: bytes) -> tuple[str, str] | None:
    """The HTML page of a MIME web archive (.mht/.mhtml as browsers save a page, Word's "Single
    File Web Page", Confluence's "Export to Word" .doc), decoded by its declared charset, and the
    archive's Subject; None when ``data`` is no such archive."""
    if not _MIME_ARCHIVE.search(data[:4096]):
        return None
    import email
    from email import policy

    message = email.message_from_bytes(data, policy=policy.default)
    for part in message.walk():
        if part.get_content_type() == "text/html":
            payload = part.get_payload(decode=True) or b""
            charset = part.get_content_charset()
            try:
                page = payload.decode(charset) if charset else decode_text(payload)[0]
            except (LookupError, UnicodeDecodeError):  # a charset Python lacks, or not what it says
                page = decode_text(payload)[0]
            return page, str(message["Subject"] or "")
    return None


_MIME_ARCHIVE = re.compile(rb"(?im)^content-type:\s*multipart/related")


def text_office_file(data: bytes) -> str | None:
    """The text format ("rtf", or "html": a page or a web archive) an Office-named file really is;
    None for any other."""
    head = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if head.startswith(b"{\\rtf"):
        return "rtf"
    if head.startswith(b"<") and (b"<html" in head or b"<table" in head) or _MIME_ARCHIVE.search(head):
        return "html"  # a page, an exported table, or a web archive (Confluence's Word export)
    return None
