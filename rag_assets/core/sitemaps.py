"""A web site's pages as documents, listed by its sitemap (sitemaps.org protocol: XML or plain text,
gzip-compressed or not, sitemap indexes; or its robots.txt, or its llms.txt), by a Sphinx site's
``objects.inv`` (its documents), or by a web page (the pages it links to under its folder: a
table of contents). Pure: the caller supplies the HTTP fetch.

A page's document id is its path on the site, readable and stable: ``/guide/install`` is
``guide/install.html``, ``/guide/`` is ``guide/index.html`` and ``/files/report.pdf`` stays
``files/report.pdf``, so the id's extension names the format the page is parsed as (a path whose
last part has no extension the parser knows is read as a web page).
"""

from __future__ import annotations

import posixpath
import re
import zlib
from dataclasses import dataclass
from typing import Callable
from urllib.parse import unquote, urljoin, urlsplit

from lxml import etree, html

from rag_assets.core.hashing import content_hash
from rag_assets.core.parsing.formats import CONTENT_TYPES, content_type_for
from rag_assets.core.sources import DocumentRef, matches

#: the protocol's limit on one sitemap file, uncompressed
MAX_SITEMAP_BYTES = 50 * 2**20
#: most sitemap files one listing reads (an index of indexes that never ends is cut short here)
MAX_SITEMAPS = 1000
#: reads a page nested past libxml2's 256 levels (unclosed tags pile them up) whole, where the
#: default parser stops there and loses the rest of the page
_HTML_PARSER = html.HTMLParser(huge_tree=True)
#: meta tags whose content a site writes anew into each answer (Rails' csrf-token, Django's, Laravel's)
_PER_ANSWER = re.compile(r"csrf|xsrf|token|nonce", re.I)
_XML = etree.XMLParser(resolve_entities=False, no_network=True, remove_comments=True, remove_pis=True)
#: extensions of pages a server program writes: web pages whatever the extension means on disk
_SERVER_PAGES = {".php", ".asp", ".aspx", ".jsp", ".jspx", ".cfm", ".cgi", ".shtml", ".do", ".action"}
_MARKDOWN_LINK = re.compile(r"\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
#: how a web page (HTML or XHTML) begins, where a sitemap would begin
_WEB_PAGE = re.compile(rb"(?:<\?xml[^>]*>\s*)?(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html)[\s>]",
                       re.IGNORECASE | re.DOTALL)
_SERVED_AS = {"text/html": "html", "application/xhtml+xml": "html", "application/pdf": "pdf"}


class SitemapError(ValueError):
    """A sitemap cannot be read as one (damaged, not a sitemap, on another site, too many)."""


@dataclass(frozen=True)
class Page:
    """A page a sitemap lists, with its ``<lastmod>`` where the sitemap gives one."""

    url: str
    lastmod: str | None = None


def site_of(url: str) -> str:
    """``scheme://host[:port]`` of an http(s) URL; ValueError for any other."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r} is not an http(s) address")
    return f"{parts.scheme}://{parts.netloc.lower()}"


def read_sitemap(data: bytes, url: str) -> tuple[list[Page], list[str]]:
    """The pages and the child sitemaps one sitemap file lists, in its order; for a site's
    ``/robots.txt``, the sitemaps its ``Sitemap:`` lines name; for an ``llms.txt`` (llmstxt.org: a
    Markdown list of a site's pages for language models), the pages it links to."""
    if data[:2] == b"\x1f\x8b":
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            data = inflate.decompress(data, MAX_SITEMAP_BYTES + 1)
        except zlib.error as exc:
            raise SitemapError(f"sitemap {url}: damaged gzip data ({exc})") from exc
        if len(data) > MAX_SITEMAP_BYTES or inflate.unconsumed_tail:
            raise SitemapError(f"sitemap {url}: over the protocol's 50 MB uncompressed; split it into several "
                               "listed by a sitemap index")
    path = urlsplit(url).path
    if path == "/robots.txt":
        named = re.findall(r"(?im)^\s*sitemap\s*:\s*(\S+)", data.decode("utf-8", "replace"))
        if not named:
            raise SitemapError(f"{url} names no sitemap (no 'Sitemap:' line); give the sitemap's own address")
        return [], named
    if path.endswith("/llms.txt"):
        links = [urljoin(url, target) for target in _MARKDOWN_LINK.findall(data.decode("utf-8", "replace"))]
        if not links:
            raise SitemapError(f"{url} links to no page (no [title](address) line); give the sitemap's address")
        return [Page(link) for link in dict.fromkeys(links)], []
    if path.endswith("/objects.inv"):
        return _inventory_pages(data, url), []
    head = data.lstrip(b"\xef\xbb\xbf \t\r\n")[:4096]
    if _WEB_PAGE.match(head):
        return _linked_pages(data, url), []
    if not head.startswith(b"<"):
        lines = data.decode("utf-8", "replace").split()
        if lines and all(re.match(r"https?://", line) for line in lines):
            return [Page(line) for line in lines], []
        raise SitemapError(f"sitemap {url}: neither XML nor a list of addresses (one per line)")
    try:
        root = etree.fromstring(data, _XML)
    except etree.XMLSyntaxError as exc:
        raise SitemapError(f"sitemap {url}: not well-formed XML ({exc})") from exc
    kind = etree.QName(root).localname
    if kind not in ("urlset", "sitemapindex"):
        raise SitemapError(f"sitemap {url}: its root element is <{kind}>, not <urlset> or <sitemapindex> "
                           "(is the address a web page rather than the sitemap?)")
    entries = [{etree.QName(field).localname: (field.text or "").strip() for field in entry
                if isinstance(field.tag, str)} for entry in root if isinstance(entry.tag, str)]
    if kind == "sitemapindex":
        return [], [e["loc"] for e in entries if e.get("loc")]
    return [Page(e["loc"], e.get("lastmod") or None) for e in entries if e.get("loc")], []


def _inventory_pages(data: bytes, url: str) -> list[Page]:
    """The documents (``std:doc`` entries) a Sphinx inventory (version 2: four header lines, then
    zlib-compressed ``name domain:role priority uri display-name`` lines) lists, at their addresses."""
    parts = data.split(b"\n", 4)
    if len(parts) < 5 or parts[0].strip() != b"# Sphinx inventory version 2":
        raise SitemapError(f"{url} is not a Sphinx inventory (version 2); give the site's sitemap or a page "
                           "that links to its pages")
    inflate = zlib.decompressobj()
    try:
        text = inflate.decompress(parts[4], MAX_SITEMAP_BYTES + 1)
    except zlib.error as exc:
        raise SitemapError(f"{url}: damaged inventory ({exc})") from exc
    if len(text) > MAX_SITEMAP_BYTES or inflate.unconsumed_tail:
        raise SitemapError(f"{url}: its inventory is over 50 MB uncompressed")
    pages = []
    for line in text.decode("utf-8", "replace").splitlines():
        entry = re.match(r"(.+?)\s+std:doc\s+-?\d+\s+(\S*)\s", line + " ")
        if entry:
            name, uri = entry.groups()
            pages.append(Page(urljoin(url, uri[:-1] + name if uri.endswith("$") else uri).split("#")[0]))
    if not pages:
        raise SitemapError(f"{url} lists no document (no std:doc entry); give the site's sitemap")
    return list(dict.fromkeys(pages))


def _linked_pages(data: bytes, url: str) -> list[Page]:
    """The pages a web page links to on its own site, under its own folder, without a query
    string, each once in the page's order (fragments dropped): a table of contents' pages."""
    try:
        root = html.document_fromstring(data, parser=_HTML_PARSER)
    except (etree.ParserError, ValueError) as exc:
        raise SitemapError(f"{url}: not a readable web page ({exc})") from exc
    base = urljoin(url, next(iter(root.xpath("//base/@href")), url))
    path = urlsplit(url).path
    site, folder = site_of(url), path[:path.rfind("/") + 1]
    links = []
    for href in root.xpath("//a/@href"):
        target = urlsplit(urljoin(base, href.strip()))
        if (target.scheme in ("http", "https") and _site_or_none(target.geturl()) == site and not target.query
                and target.path.startswith(folder)):
            links.append(target._replace(fragment="").geturl())
    if not links:
        raise SitemapError(f"{url} links to no page of {site} under {folder}; give the site's sitemap, or a page "
                           "that links to its pages")
    return [Page(link) for link in dict.fromkeys(links)]


def list_site(sitemap: str, fetch: Callable[[str], bytes]) -> list[Page]:
    """Every page the sitemap at ``sitemap`` lists, through its indexes, each address once (the
    first ``<lastmod>`` wins). A child sitemap on another site is refused (the protocol allows
    only the sitemap's own), as is a listing of more than MAX_SITEMAPS files."""
    site = site_of(sitemap)
    pages: dict[str, Page] = {}
    queue, visited = [sitemap.strip()], set()
    while queue:
        url = queue.pop(0)
        if url in visited:
            continue
        if len(visited) == MAX_SITEMAPS:
            raise SitemapError(f"sitemap {sitemap}: its indexes list over {MAX_SITEMAPS} sitemaps")
        visited.add(url)
        found, children = read_sitemap(fetch(url), url)
        for child in children:
            if _site_or_none(child) != site:
                raise SitemapError(f"sitemap {url} lists the sitemap {child}, which is not on {site}: a sitemap "
                                   "index lists its own site's sitemaps (add a source for the other site)")
        queue += children
        for page in found:
            pages.setdefault(page.url, page)
    return list(pages.values())


def _site_or_none(url: str) -> str | None:
    try:
        return site_of(url)
    except ValueError:
        return None


def page_doc_id(url: str) -> str:
    """The document id of a page's address: its path, unquoted, without the leading '/', with
    ``index.html`` for a folder and ``.html`` after a last part whose extension the parser does
    not know or names a server program's page (``item.php``)."""
    path = unquote(urlsplit(url.strip()).path).lstrip("/")
    if not path or path.endswith("/"):
        return path + "index.html"
    extension = posixpath.splitext(path.lower())[1]
    return path if extension in CONTENT_TYPES and extension not in _SERVER_PAGES else path + ".html"


def page_refs(pages: list[Page], sitemap: str, include: tuple[str, ...],
              exclude: tuple[str, ...]) -> list[DocumentRef]:
    """The pages the globs want as documents, sorted by id (``uri``: the address). A page has no
    size before it is read (-1); its ``<lastmod>`` is its source version, and one without is asked
    for on every sweep, conditionally where the site gave validators (``page_version``), its
    content hash deciding whether anything changed. A page on another site or
    with a query string is listed as refused; of two addresses with one id (``/a`` and
    ``/a.html``) the first listed is the document."""
    site = site_of(sitemap)
    refs: dict[str, DocumentRef] = {}
    for page in pages:
        parts = urlsplit(page.url.strip())
        doc_id = page_doc_id(page.url)
        refused = None
        if _site_or_none(page.url) != site:
            doc_id = f"{parts.netloc or parts.scheme or 'no-site'}/{doc_id}"
            refused = (f"the sitemap lists {page.url}, which is not on {site}: a sitemap lists its own site's "
                       "pages (add a source for that site's sitemap)")
        elif parts.query:
            refused = (f"its address {page.url} has a query string: pages are documents by their path; publish "
                       "it under a path of its own, or exclude it in sources.yml")
        if doc_id in refs or not matches(doc_id, include, exclude):
            continue
        refs[doc_id] = DocumentRef(doc_id, page.url.strip(), -1, f"lastmod:{page.lastmod}" if page.lastmod else "",
                                   refused, revalidates=True)
    return sorted(refs.values(), key=lambda r: r.doc_id)


def served_type_problem(doc_id: str, media_type: str | None) -> str | None:
    """Why a page served as ``media_type`` (a Content-Type header) cannot be parsed by its id's
    format, or None: a web page where its address names a PDF (a login or error page) and the
    other way round."""
    served = _SERVED_AS.get((media_type or "").split(";")[0].strip().lower())
    expected = content_type_for(doc_id)
    if served is None or served == expected:
        return None
    return (f"the server sent {media_type.split(';')[0].strip()} (read as {served}) where its address names "
            f"{expected}: a login or error page in its place? Check the page in a browser, or exclude it in "
            "sources.yml")


def page_fingerprint(body: bytes) -> str:
    """The xxh3 of what a web page's reader can see: its markup without comments, scripts, styles,
    ``nonce`` attributes, hidden form fields' values and the content of CSRF/token meta tags, which
    a site may write anew into every answer (the parser reads none of them). Any other difference
    changes it; a page lxml cannot read is fingerprinted by its bytes."""
    try:
        root = html.document_fromstring(body, parser=_HTML_PARSER)
    except (etree.ParserError, ValueError):
        return content_hash(body)
    etree.strip_elements(root, etree.Comment, "script", "style", with_tail=False)
    for element in root.iter():
        element.attrib.pop("nonce", None)
        if element.tag == "input" and element.get("type", "").lower() == "hidden":
            element.attrib.pop("value", None)
        elif element.tag == "meta" and _PER_ANSWER.search(element.get("name", "") + element.get("http-equiv", "")):
            element.attrib.pop("content", None)
    return content_hash(etree.tostring(root, encoding="utf-8"))


def page_version(listed: str, etag: str | None, last_modified: str | None, fingerprint: str | None = None) -> str:
    """A page's source version once read: its sitemap ``<lastmod>`` where it has one (``listed``),
    else its ``page_fingerprint`` (for a web page: ``page:<fingerprint>``) and the validators the
    site answered with (a strong or weak ETag first, else Last-Modified), else none ("")."""
    if listed:
        return listed
    validator = f"etag:{etag}" if etag else f"modified:{last_modified}" if last_modified else ""
    return " ".join(part for part in (f"page:{fingerprint}" if fingerprint else "", validator) if part)


def known_fingerprint(known: str | None) -> str | None:
    """The ``page_fingerprint`` a version of ``page_version``'s holds, or None."""
    return known[5:].split(" ", 1)[0] if known and known.startswith("page:") else None


def conditional_headers(known: str | None) -> dict[str, str]:
    """The headers that ask a site for a page only if it changed since the version ``known``
    (``page_version``'s), none where that holds no validator."""
    if known and known.startswith("page:"):
        known = known.partition(" ")[2]
    if known and known.startswith("etag:"):
        return {"If-None-Match": known[5:]}
    if known and known.startswith("modified:"):
        return {"If-Modified-Since": known[9:]}
    return {}
