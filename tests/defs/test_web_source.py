"""The web source against a real web site on 127.0.0.1: the pages a sitemap lists are a corpus'
documents, re-read when their lastmod (or, without one, their bytes) change, dropped when the
sitemap drops them, and a failing site or page never costs the index what it holds."""

import socket
import time
from pathlib import Path

import lancedb
import pytest

from rag_assets.config import load_project
from rag_assets.config.loader import ConfigError
from rag_assets.core.index import table_name
from rag_assets.core.sources import SourceUnavailable
from rag_assets.ingest import ingest_project
from rag_assets.query import query_corpus
from resources import WebSourceResource
from tests.conftest import edit_yaml, env, make_project
from tests.support.seaweed import black_hole
from tests.support.website import Website

pytestmark = pytest.mark.slow

INSTALL = ("<html><head><title>Installing Northwind</title></head><body><nav><a href='/'>Home</a></nav>"
           "<h1 id='installing'>Installing Northwind</h1><p>The installer needs 4 GB of free disk space.</p>"
           "<h2 id='proxy'>Proxy</h2><p>Behind a proxy, set NORTHWIND_PROXY before you run the installer.</p>"
           "</body></html>")
RELEASES = ("<html><head><title>Releases</title></head><body><h1>Releases</h1>"
            "<p>Version 7 removed the legacy sync agent.</p></body></html>")
FAQ = "<html><head><title>FAQ</title></head><body><h1>FAQ</h1><p>Refunds take 27 days.</p></body></html>"


def with_token(page: str, token: str) -> str:
    """``page`` as a CMS serves it: a comment, a script and a form field that differ in every answer."""
    return page.replace("<body>", f"<body><!-- {token} --><script nonce='{token}'>var t='{token}';</script>"
                                  f"<form><input type='hidden' name='csrf' value='{token}'></form>")


def web_project(tmp_path: Path, site: Website, **settings) -> dict[str, str]:
    """A project whose corpus reads ``site``'s sitemap."""
    values = make_project(tmp_path / "p", docs=tmp_path / "unused")
    (tmp_path / "unused").mkdir()
    edit_yaml(Path(values["RAG_PROJECT_DIR"]) / "sources.yml", lambda d: d["sources"].append({
        "name": "docs_site", "kind": "web", "sitemap": f"{site.url}/sitemap.xml", **settings}))
    edit_yaml(Path(values["RAG_PROJECT_DIR"]) / "rag_project.yml",
              lambda d: d["corpora"]["sample"].update({"+source": "docs_site"}))
    return values


def rows(project) -> list[dict]:
    corpus = project.corpus("sample")
    table = lancedb.connect(corpus.index_uri).open_table(
        table_name(corpus.name, corpus.embedding_model.name, corpus.chunking_profile.name))
    return table.to_arrow().to_pylist()


def test_a_sites_pages_are_indexed_kept_current_and_dropped_with_the_sitemap(tmp_path):
    with Website() as site:
        site.page("/guide/install", INSTALL)
        site.page("/releases/", with_token(RELEASES, "k1"))
        site.page("/faq.html", FAQ)
        site.sitemap({"/guide/install": "2026-11-01", "/releases/": None, "/faq.html": "2026-11-01"})
        with env(**web_project(tmp_path, site)):
            report = ingest_project(load_project())
            assert (report["documents_seen"], report["documents_new"], report["failures"]) == (3, 3, [])
            indexed = rows(load_project())
            assert {r["doc_id"] for r in indexed} == {"guide/install.html", "releases/index.html", "faq.html"}
            assert {r["source_uri"] for r in indexed
                    if r["doc_id"] == "guide/install.html"} == {f"{site.url}/guide/install"}
            # Parsed as the web page it is: the title, the heading path, no navigation links as text.
            install = " ".join(r["text"] for r in indexed if r["doc_id"] == "guide/install.html")
            assert "NORTHWIND_PROXY" in install and "Home" not in install
            project = load_project()
            hit = query_corpus(project, project.corpus("sample"), "how much disk space does the installer need")[0]
            assert hit.doc_id == "guide/install.html" and hit.source == f"{site.url}/guide/install"
            # The link opens the section its heading path names, by the id the page gives that heading.
            assert hit.heading_path == "Installing Northwind > Proxy"
            assert hit.link == f"{site.url}/guide/install#proxy"

            # Unchanged lastmod: the page is not downloaded again; no lastmod: it is, and what its
            # reader sees decides: a new CSRF token, nonce or comment in the answer is no change.
            before = {p: site.reads(p) for p in ("/guide/install", "/releases/", "/faq.html")}
            site.page("/releases/", with_token(RELEASES, "k2"))
            report = ingest_project(load_project())
            assert report["documents_changed"] == 0 and report["documents_hashed"] == 0
            assert {p: site.reads(p) - n for p, n in before.items()} == {
                "/guide/install": 0, "/releases/": 1, "/faq.html": 0}

            # An edit with a new lastmod, and one without any: both re-indexed, nothing else.
            site.page("/guide/install", INSTALL.replace("4 GB", "6 GB"))
            site.page("/releases/", RELEASES.replace("Version 7", "Version 8"))
            site.sitemap({"/guide/install": "2026-11-20", "/releases/": None, "/faq.html": "2026-11-01"})
            report = ingest_project(load_project())
            assert report["documents_changed"] == 2 and report["failures"] == []
            texts = " ".join(r["text"] for r in rows(load_project()))
            assert "6 GB" in texts and "4 GB" not in texts and "Version 8" in texts

            # A page the sitemap no longer lists leaves the index.
            site.sitemap({"/guide/install": "2026-11-20", "/faq.html": "2026-11-01"})
            report = ingest_project(load_project())
            assert report["documents_deleted"] == 1
            assert {r["doc_id"] for r in rows(load_project())} == {"guide/install.html", "faq.html"}


def test_a_page_without_lastmod_is_asked_for_only_if_it_changed_where_the_site_gives_etags(tmp_path):
    with Website(etags=True) as site:
        site.page("/guide/install", INSTALL)
        site.page("/faq.html", FAQ)
        site.sitemap({"/guide/install": None, "/faq.html": None})
        with env(**web_project(tmp_path, site)):
            assert ingest_project(load_project())["documents_new"] == 2
            # Both asked for again, both answered 304 without their bodies: nothing read, nothing redone.
            report = ingest_project(load_project())
            assert (report["documents_hashed"], report["documents_changed"]) == (0, 0)
            assert sorted(site.not_modified) == ["/faq.html", "/guide/install"]
            site.page("/faq.html", FAQ.replace("27 days", "30 days"))
            report = ingest_project(load_project())
            assert (report["documents_hashed"], report["documents_changed"]) == (1, 1)
            assert site.not_modified.count("/guide/install") == 2 and site.not_modified.count("/faq.html") == 1
            assert "30 days" in " ".join(r["text"] for r in rows(load_project()))


def test_a_page_that_writes_a_new_token_into_every_answer_is_not_re_indexed_for_it(tmp_path):
    def answer(token: str, note: str = "Refunds take 27 days.") -> str:
        return (f"<html><head><meta name='csrf-token' content='{token}'><title>FAQ</title>"
                f"<style nonce='{token}'>p{{}}</style></head><body><!-- served by node {token} -->"
                f"<form><input type='hidden' name='authenticity_token' value='{token}'></form>"
                f"<h1>FAQ</h1><p>{note}</p><script nonce='{token}'>window.t = '{token}';</script></body></html>")

    with Website(etags=True) as site:  # an ETag of each answer's bytes: a new one every time
        site.page("/faq.html", answer("a1"))
        site.sitemap({"/faq.html": None})
        with env(**web_project(tmp_path, site)):
            assert ingest_project(load_project())["documents_new"] == 1
            site.page("/faq.html", answer("b2"))
            report = ingest_project(load_project())
            assert (report["documents_hashed"], report["documents_changed"]) == (0, 0)
            assert site.reads("/faq.html") == 2 and site.not_modified == []
            site.page("/faq.html", answer("c3", "Refunds take 30 days."))
            report = ingest_project(load_project())
            assert (report["documents_hashed"], report["documents_changed"]) == (1, 1)
            assert "30 days" in " ".join(r["text"] for r in rows(load_project()))


def test_a_table_of_contents_page_lists_the_pages_it_links_to(tmp_path):
    toc = ("<!DOCTYPE html><html><body><nav><a href='guide/install'>Install</a> <a href='faq.html#refunds'>FAQ</a>"
           "<a href='/blog/'>Blog</a></nav></body></html>")
    with Website(etags=True) as site:
        site.page("/docs/contents.html", toc)
        site.page("/docs/guide/install", INSTALL)
        site.page("/docs/faq.html", FAQ)
        with env(**web_project(tmp_path, site, sitemap=f"{site.url}/docs/contents.html")):
            report = ingest_project(load_project())
            assert (report["documents_new"], report["failures"]) == (2, [])
            assert {r["doc_id"] for r in rows(load_project())} == {"docs/guide/install.html", "docs/faq.html"}
            # The contents page is read on every sweep; a page it no longer links to leaves the index.
            site.page("/docs/contents.html", toc.replace("<a href='faq.html#refunds'>FAQ</a>", ""))
            report = ingest_project(load_project())
            assert report["documents_deleted"] == 1 and site.requests.count(("/docs/contents.html", None)) == 2
            assert {r["doc_id"] for r in rows(load_project())} == {"docs/guide/install.html"}


def test_a_failing_page_or_site_never_costs_the_index_its_rows(tmp_path):
    with Website() as site:
        site.page("/guide/install", INSTALL)
        site.page("/faq.html", FAQ)
        site.page("/files/handbook.pdf", "<html><body><form>Sign in</form></body></html>")
        site.sitemap({"/guide/install": None, "/faq.html": None})
        values = web_project(tmp_path, site)
        with env(**values):
            ingest_project(load_project())
            good = sorted(r["id"] for r in rows(load_project()))

            # A page that is gone, a "PDF" that is a sign-in page and a redirect loop: each fails alone, named
            # with its cause (a loop failed the whole sweep, every time).
            del site.pages["/faq.html"]
            site.redirect("/loop", "/loop")
            site.sitemap({"/guide/install": None, "/faq.html": None, "/files/handbook.pdf": None, "/loop": None})
            report = ingest_project(load_project())
            failures = {f["doc_id"]: f["error"] for f in report["failures"]}
            assert set(failures) == {"faq.html", "files/handbook.pdf", "loop.html"}
            assert "answered HTTP 404 (the page is gone)" in failures["faq.html"]
            assert "sent text/html (read as html) where its address names pdf" in failures["files/handbook.pdf"]
            assert "TooManyRedirects: Exceeded 30 redirects" in failures["loop.html"]
            assert sorted(r["id"] for r in rows(load_project())) == good

            # The site down: the sweep fails, naming the source and the setting to raise; nothing is deleted.
            with black_hole() as hole:
                edit_yaml(Path(values["RAG_PROJECT_DIR"]) / "sources.yml", lambda d: d["sources"][-1].update(
                    sitemap=f"{hole}/sitemap.xml", read_timeout_seconds=1, max_attempts=2))
                started = time.monotonic()
                with pytest.raises(SourceUnavailable) as failed:
                    ingest_project(load_project())
                assert time.monotonic() - started < 30
            for expected in ("web source 'docs_site'", f"{hole}/sitemap.xml", "ReadTimeout",
                             "did not answer within 1 s", "read_timeout_seconds"):
                assert expected in str(failed.value), (expected, str(failed.value))
            assert sorted(r["id"] for r in rows(load_project())) == good


def test_the_authorization_header_comes_from_its_variable_and_goes_to_the_site_alone(tmp_path):
    with Website() as site:
        site.page("/faq.html", FAQ)
        site.sitemap({"/faq.html": None})
        values = web_project(tmp_path, site, auth_header_env="DOCS_SITE_AUTH")
        with env(**values):
            with pytest.raises(ConfigError) as unset:
                ingest_project(load_project())
            assert "docs_site.auth_header_env" in str(unset.value) and "DOCS_SITE_AUTH" in str(unset.value)
        with env(**values, DOCS_SITE_AUTH="Bearer s3cret-token"):
            report = ingest_project(load_project())
            assert report["failures"] == [] and report["documents_new"] == 1
        assert {auth for _, auth in site.requests} == {"Bearer s3cret-token"}

        # A page that moved to another host is read there, without the header.
        with Website() as mirror:
            mirror.page("/faq.html", FAQ.replace("27 days", "30 days"))
            site.redirect("/faq.html", mirror.url.replace("127.0.0.1", "localhost") + "/faq.html")
            with env(**values, DOCS_SITE_AUTH="Bearer s3cret-token"):
                assert ingest_project(load_project())["documents_changed"] == 1
            assert mirror.requests == [("/faq.html", None)]

        # A site that refuses the header says which variable to fix, never its value.
        site.page("/sitemap.xml", b"denied", "text/plain", status=401)
        with env(**values, DOCS_SITE_AUTH="Bearer s3cret-token"), pytest.raises(SourceUnavailable) as refused:
            ingest_project(load_project())
        assert "HTTP 401" in str(refused.value) and "$DOCS_SITE_AUTH" in str(refused.value)
        assert "s3cret" not in str(refused.value)


def test_a_page_over_the_size_limit_is_refused_without_being_downloaded_whole():
    with Website() as site:
        site.page("/big.html", b"<p>" + b"x" * 300_000 + b"</p>")
        site.page("/small.html", FAQ)
        site.sitemap({"/big.html": None, "/small.html": None})
        source = WebSourceResource(name="docs_site", sitemap=f"{site.url}/sitemap.xml", max_document_bytes=100_000,
                                   connect_timeout_seconds=5, read_timeout_seconds=5)
        assert [r.doc_id for r in source.list_documents()] == ["big.html", "small.html"]
        with pytest.raises(Exception, match=r"big\.html: 0\.286 MB exceeds the source's limit of 0\.09537 MB"):
            source.read("big.html")
        assert source.read("small.html").data == FAQ.encode()


def test_a_site_that_refuses_connections_is_reported_down_not_slow():
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}/sitemap.xml"
    source = WebSourceResource(name="docs_site", sitemap=url, connect_timeout_seconds=5, read_timeout_seconds=5,
                               max_attempts=2)
    with pytest.raises(SourceUnavailable) as failed:
        source.list_documents()
    # urllib3 counts a refused connection as a connect timeout too: it was reported as one.
    assert "Connection refused; check the sitemap address of source 'docs_site'" in str(failed.value)
    assert "did not answer" not in str(failed.value)
