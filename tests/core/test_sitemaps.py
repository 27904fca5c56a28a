"""Sitemaps read into pages, and pages into document ids (rag_assets.core.sitemaps, no network)."""

import gzip
import zlib

import pytest

from rag_assets.core import sitemaps
from rag_assets.core.hashing import content_hash
from rag_assets.core.parsing import content_type_for
from rag_assets.core.sitemaps import (Page, SitemapError, conditional_headers, known_fingerprint, list_site,
                                      page_doc_id, page_fingerprint, page_refs, page_version, read_sitemap,
                                      served_type_problem)

SITE = "https://docs.example.com"
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def urlset(*entries: str) -> bytes:
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {NS}>{"".join(entries)}</urlset>'.encode()


def test_a_urlset_gives_its_pages_and_lastmods_in_order():
    data = urlset(f"<url><loc> {SITE}/b </loc><lastmod>2026-11-02</lastmod><priority>0.5</priority></url>",
                  f"<!-- a comment --><url><loc>{SITE}/a</loc></url>", "<url><changefreq>daily</changefreq></url>")
    assert read_sitemap(data, f"{SITE}/sitemap.xml") == ([Page(f"{SITE}/b", "2026-11-02"), Page(f"{SITE}/a")], [])
    # gzip-compressed (sitemap.xml.gz) and plain text (one address a line) read the same pages.
    assert read_sitemap(gzip.compress(data), "x")[0] == [Page(f"{SITE}/b", "2026-11-02"), Page(f"{SITE}/a")]
    assert read_sitemap(f"{SITE}/a\r\n{SITE}/b\n".encode(), "x") == ([Page(f"{SITE}/a"), Page(f"{SITE}/b")], [])


@pytest.mark.parametrize("data, cause", [
    (b'<?xml version="1.0"?><rss><channel/></rss>', "its root element is <rss>, not <urlset> or <sitemapindex>"),
    (b"<urlset><url><loc>x", "not well-formed XML"),
    (b"Welcome to our site", "neither XML nor a list of addresses"),
    (b"\x1f\x8bnot really gzip", "damaged gzip data"),
])
def test_what_is_no_sitemap_is_refused_by_its_address_and_cause(data, cause):
    with pytest.raises(SitemapError, match=f"sitemap {SITE}/sitemap.xml: {cause}"):
        read_sitemap(data, f"{SITE}/sitemap.xml")


def test_an_external_entity_is_never_read(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("do-not-read")
    data = (f'<?xml version="1.0"?><!DOCTYPE u [<!ENTITY x SYSTEM "file://{secret}">]>'
            f'<urlset {NS}><url><loc>{SITE}/a&x;</loc></url></urlset>').encode()
    pages, _ = read_sitemap(data, "x")
    assert "do-not-read" not in pages[0].url


def test_a_sitemap_over_the_protocols_size_is_refused_without_inflating_it_whole(monkeypatch):
    monkeypatch.setattr(sitemaps, "MAX_SITEMAP_BYTES", 1000)
    with pytest.raises(SitemapError, match="over the protocol's 50 MB uncompressed"):
        read_sitemap(gzip.compress(urlset(*[f"<url><loc>{SITE}/{i}</loc></url>" for i in range(100)])), "x")


def test_indexes_are_followed_once_each_and_a_page_counts_once():
    files = {
        f"{SITE}/sitemap.xml": f'<sitemapindex {NS}><sitemap><loc>{SITE}/s1.xml</loc></sitemap>'
                               f'<sitemap><loc>{SITE}/s2.xml.gz</loc></sitemap></sitemapindex>'.encode(),
        f"{SITE}/s1.xml": urlset(f"<url><loc>{SITE}/a</loc><lastmod>1</lastmod></url>"),
        f"{SITE}/s2.xml.gz": gzip.compress(
            f'<sitemapindex {NS}><sitemap><loc>{SITE}/sitemap.xml</loc></sitemap></sitemapindex>'.encode()
            .replace(b"</sitemapindex>", b"<sitemap><loc>" + f"{SITE}/s1.xml".encode() + b"</loc></sitemap>"
                     b"</sitemapindex>")),
    }
    fetched = []
    pages = list_site(f"{SITE}/sitemap.xml", lambda url: fetched.append(url) or files[url])
    assert pages == [Page(f"{SITE}/a", "1")]
    assert fetched == [f"{SITE}/sitemap.xml", f"{SITE}/s1.xml", f"{SITE}/s2.xml.gz"]


def test_robots_txt_names_the_sitemaps_to_read():
    robots = (f"User-agent: *\nDisallow: /private/\n\nSitemap: {SITE}/docs.xml\nsitemap:{SITE}/blog.xml\n").encode()
    files = {f"{SITE}/robots.txt": robots, f"{SITE}/docs.xml": urlset(f"<url><loc>{SITE}/a</loc></url>"),
             f"{SITE}/blog.xml": urlset(f"<url><loc>{SITE}/b</loc></url>")}
    assert list_site(f"{SITE}/robots.txt", files.__getitem__) == [Page(f"{SITE}/a"), Page(f"{SITE}/b")]
    with pytest.raises(SitemapError, match="names no sitemap"):
        read_sitemap(b"User-agent: *\nDisallow:\n", f"{SITE}/robots.txt")


def test_llms_txt_lists_the_pages_it_links_to():
    llms = (b"# Northwind\n\n> Docs for the Northwind robots.\n\n## Guides\n\n"
            b"- [Install](/guide/install.md): setting up\n- [Proxy](guide/proxy.html.md \"Proxy\")\n"
            b"- [Install again](https://docs.example.com/guide/install.md)\n\n## Optional\n\n"
            b"- [Changelog](<https://docs.example.com/changes.md>)\n")
    pages, children = read_sitemap(llms, f"{SITE}/docs/llms.txt")
    assert children == [] and [p.url for p in pages] == [
        f"{SITE}/guide/install.md", f"{SITE}/docs/guide/proxy.html.md", f"{SITE}/changes.md"]
    assert [r.doc_id for r in page_refs(pages, f"{SITE}/docs/llms.txt", ("**/*",), ())] == [
        "changes.md", "docs/guide/proxy.html.md", "guide/install.md"]
    with pytest.raises(SitemapError, match="links to no page"):
        read_sitemap(b"# Empty\n\nNothing here.\n", f"{SITE}/llms.txt")


def test_a_web_page_lists_the_pages_it_links_to_on_its_site_under_its_folder():
    page = (b"\xef\xbb\xbf<!-- generated --><!DOCTYPE html><html><body><nav>"
            b'<a href="intro.html">Intro</a> <a href="guide/install.html#step-2">Install</a>'
            b'<a href="/docs/guide/install.html">Install again</a>'
            b' <a href="https://other.example.org/docs/x.html">x</a>'
            b'<a href="/blog/post.html">Blog</a> <a href="search.html?q=robots">Search</a>'
            b'<a href="mailto:docs@example.com">Mail</a> <a href="files/manual.pdf">Manual</a><a>no address</a>'
            b"</nav></body></html>")
    pages, children = read_sitemap(page, f"{SITE}/docs/index.html")
    assert children == [] and [p.url for p in pages] == [
        f"{SITE}/docs/intro.html", f"{SITE}/docs/guide/install.html", f"{SITE}/docs/files/manual.pdf"]
    # Relative addresses follow the page's <base>; an XHTML page reads the same.
    xhtml = (b'<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><base href="/docs/v2/"/></head>'
             b'<body><a href="a.html">A</a></body></html>')
    assert read_sitemap(xhtml, f"{SITE}/docs/toc.html")[0] == [Page(f"{SITE}/docs/v2/a.html")]
    # A page at the site's root (or the root itself) lists the whole site's pages it links to.
    for root in (f"{SITE}/index.html", SITE):
        assert read_sitemap(b'<html><a href="/blog/">Blog</a><a href="docs/a.html">A</a></html>', root)[0] == [
            Page(f"{SITE}/blog/"), Page(f"{SITE}/docs/a.html")]
    # Tags left open 300 deep (past libxml2's default limit of 256) hide no link, before or after them.
    deep = b"<!doctype html><html><body>" + b"<font>" * 300 + b'<a href="deep.html">Deep</a>' + \
        b'</body></html><a href="after.html">After</a>'
    assert read_sitemap(deep, f"{SITE}/docs/index.html")[0] == [Page(f"{SITE}/docs/deep.html"),
                                                                 Page(f"{SITE}/docs/after.html")]
    with pytest.raises(SitemapError, match=f"{SITE}/docs/index.html links to no page of {SITE} under /docs/"):
        read_sitemap(b'<html><body><a href="/blog/">Blog</a></body></html>', f"{SITE}/docs/index.html")


def inventory(*entries: str, header: bytes = b"# Sphinx inventory version 2") -> bytes:
    return (header + b"\n# Project: Northwind\n# Version: 1.0\n# The remainder of this file is compressed using zlib.\n"
            + zlib.compress("".join(f"{e}\n" for e in entries).encode()))


def test_a_sphinx_inventory_lists_the_sites_documents():
    data = inventory("index std:doc -1 index.html Northwind",
                     "usage/install std:doc -1 usage/install.html Installing",
                     "install std:label -1 usage/install.html#install Installing",
                     "northwind.Robot py:class 1 api.html#$ -", "api std:doc -1 reference/$ API reference",
                     "usage/install std:doc -1 usage/install.html Installing")
    pages, children = read_sitemap(data, f"{SITE}/docs/objects.inv")
    assert children == [] and [p.url for p in pages] == [
        f"{SITE}/docs/index.html", f"{SITE}/docs/usage/install.html", f"{SITE}/docs/reference/api"]
    with pytest.raises(SitemapError, match="is not a Sphinx inventory"):
        read_sitemap(inventory("index std:doc -1 index.html x", header=b"# Sphinx inventory version 1"),
                     f"{SITE}/objects.inv")
    with pytest.raises(SitemapError, match="damaged inventory"):
        read_sitemap(inventory()[:-3] + b"xyz" + b"\x00" * 5, f"{SITE}/objects.inv")
    with pytest.raises(SitemapError, match="lists no document"):
        read_sitemap(inventory("northwind.Robot py:class 1 api.html#$ -"), f"{SITE}/objects.inv")


def test_a_child_sitemap_on_another_site_and_an_endless_index_are_refused(monkeypatch):
    index = f'<sitemapindex {NS}><sitemap><loc>https://evil.example.net/s.xml</loc></sitemap></sitemapindex>'
    with pytest.raises(SitemapError, match="lists the sitemap https://evil.example.net/s.xml, which is not on "
                                           "https://docs.example.com"):
        list_site(f"{SITE}/sitemap.xml", lambda url: index.encode())
    monkeypatch.setattr(sitemaps, "MAX_SITEMAPS", 5)

    def endless(url: str) -> bytes:
        return f'<sitemapindex {NS}><sitemap><loc>{url}x</loc></sitemap></sitemapindex>'.encode()

    with pytest.raises(SitemapError, match="its indexes list over 5 sitemaps"):
        list_site(f"{SITE}/s", endless)


@pytest.mark.parametrize("url, doc_id", [
    (f"{SITE}/", "index.html"),
    (SITE, "index.html"),
    (f"{SITE}/guide/", "guide/index.html"),
    (f"{SITE}/guide/install", "guide/install.html"),
    (f"{SITE}/guide/install#proxy", "guide/install.html"),
    (f"{SITE}/guide/install.html", "guide/install.html"),
    (f"{SITE}/files/Annual%20Report.pdf", "files/Annual Report.pdf"),
    (f"{SITE}/notes.md", "notes.md"),
    (f"{SITE}/releases/v1.2", "releases/v1.2.html"),
    (f"{SITE}/shop/item.php", "shop/item.php.html"),
])
def test_a_pages_id_is_its_path_with_the_extension_its_format_needs(url, doc_id):
    assert page_doc_id(url) == doc_id
    assert content_type_for(doc_id) == {"pdf": "pdf", "md": "markdown"}.get(doc_id.rsplit(".", 1)[1], "html")


def test_page_refs_keep_the_wanted_pages_and_refuse_what_is_no_page_of_the_site():
    pages = [Page(f"{SITE}/guide/install", "2026-11-01"), Page(f"{SITE}/guide/install.html"),
             Page(f"{SITE}/blog/post"), Page(f"{SITE}/search?q=vpn"), Page("https://other.example.org/a")]
    refs = page_refs(pages, f"{SITE}/sitemap.xml", ("**/*",), ("blog/**",))
    assert [(r.doc_id, r.uri, r.size, r.source_version) for r in refs] == [
        ("guide/install.html", f"{SITE}/guide/install", -1, "lastmod:2026-11-01"),
        ("other.example.org/a.html", "https://other.example.org/a", -1, ""),
        ("search.html", f"{SITE}/search?q=vpn", -1, ""),
    ]
    refused = {r.doc_id: r.refused for r in refs}
    assert refused["guide/install.html"] is None
    assert "not on https://docs.example.com" in refused["other.example.org/a.html"]
    assert "has a query string" in refused["search.html"]


@pytest.mark.parametrize("doc_id, served, problem", [
    ("guide/install.html", "text/html; charset=utf-8", None),
    ("files/report.pdf", "application/pdf", None),
    ("notes.md", "text/plain", None),
    ("files/report.pdf", "text/html; charset=utf-8", "sent text/html (read as html) where its address names pdf"),
    ("guide/install.html", "application/pdf", "sent application/pdf (read as pdf) where its address names html"),
    ("notes.md", "text/html", "sent text/html (read as html) where its address names markdown"),
    ("data.csv", None, None),
])
def test_a_page_served_as_another_format_than_its_address_names_is_caught(doc_id, served, problem):
    found = served_type_problem(doc_id, served)
    assert (found is None) == (problem is None) and (problem is None or problem in found)


@pytest.mark.parametrize("listed, etag, modified, version, headers", [
    ("lastmod:2026-11-01", '"abc"', None, "lastmod:2026-11-01", {}),
    ("", '"abc"', "Tue, 01 Dec 2026 10:00:00 GMT", 'etag:"abc"', {"If-None-Match": '"abc"'}),
    ("", 'W/"abc"', None, 'etag:W/"abc"', {"If-None-Match": 'W/"abc"'}),
    ("", None, "Tue, 01 Dec 2026 10:00:00 GMT", "modified:Tue, 01 Dec 2026 10:00:00 GMT",
     {"If-Modified-Since": "Tue, 01 Dec 2026 10:00:00 GMT"}),
    ("", None, None, "", {}),
])
def test_a_pages_version_keeps_the_validators_that_ask_for_it_conditionally(listed, etag, modified, version, headers):
    assert page_version(listed, etag, modified) == version
    assert conditional_headers(version) == headers
    # A web page's version leads with its fingerprint, which the validators' headers leave out.
    fingerprinted = page_version(listed, etag, modified, "f" * 32)
    assert conditional_headers(fingerprinted) == headers
    assert known_fingerprint(fingerprinted) == (None if listed else "f" * 32)
    assert known_fingerprint(version) is None


def served(token: str, text: str = "Refunds take 27 days.", extra: str = "") -> bytes:
    return (f"<!DOCTYPE html><html><head><meta name='csrf-token' content='{token}'><meta name='description' "
            f"content='Help'><title>FAQ</title><style nonce='{token}'>p{{color:#{token}}}</style></head><body>"
            f"<!-- rendered in {token} ms --><form><input type='hidden' name='_token' value='{token}'>"
            f"<input name='q' value='search'></form><p>{text}</p>{extra}"
            f"<script nonce='{token}'>window.t = '{token}';</script>tail</body></html>").encode()


def test_a_pages_fingerprint_ignores_what_a_site_writes_anew_into_each_answer():
    assert page_fingerprint(served("111")) == page_fingerprint(served("222"))
    changed = [served("111", "Refunds take 30 days."), served("111", extra="<a href='/b'>More</a>"),
               served("111").replace(b"<title>FAQ", b"<title>Help"), served("111").replace(b"'Help'", b"'Aid'"),
               served("111").replace(b"value='search'", b"value='find'"), served("111").replace(b"tail", b"tale")]
    assert len({page_fingerprint(page) for page in changed} - {page_fingerprint(served("111"))}) == len(changed)
    assert page_fingerprint(b"") == content_hash(b"")  # nothing lxml can read: the bytes decide
