"""Web document source: the pages a site's sitemap lists, read over HTTP with one requests session."""

from __future__ import annotations

from typing import Any, NamedTuple

import dagster as dg
import requests
from pydantic import Field, PrivateAttr
from requests.adapters import HTTPAdapter
from urllib3.exceptions import ConnectTimeoutError, NewConnectionError, ReadTimeoutError
from urllib3.util.retry import Retry

from rag_assets.core.hashing import content_hash
from rag_assets.core.models import RawDocument
from rag_assets.core.parsing import DocumentError
from rag_assets.core.parsing.formats import content_type_for
from rag_assets.core.sitemaps import (MAX_SITEMAP_BYTES, SitemapError, conditional_headers, known_fingerprint,
                                      list_site, page_fingerprint, page_refs, page_version, served_type_problem)
from rag_assets.core.sources import DocumentRef, SourceUnavailable, too_large

GONE = {404, 410}
REFUSED = {401, 403}
RETRIED = (429, 500, 502, 503, 504)
USER_AGENT = "rag_assets-sitemap-source"
#: what a page's own address or answer does wrong (a redirect loop, a redirect to ftp:, a body its
#: Content-Encoding cannot decode): the page fails, the sweep goes on
PAGE_FAULTS = (requests.TooManyRedirects, requests.exceptions.InvalidURL, requests.exceptions.InvalidSchema,
               requests.exceptions.MissingSchema, requests.exceptions.ContentDecodingError)
TIMEOUTS = {requests.ConnectTimeout: "connect_timeout_seconds", ConnectTimeoutError: "connect_timeout_seconds",
            requests.ReadTimeout: "read_timeout_seconds", ReadTimeoutError: "read_timeout_seconds"}


class _Answer(NamedTuple):
    status: int
    content_type: str | None
    body: bytes
    etag: str | None
    last_modified: str | None


class _TooLarge(Exception):
    def __init__(self, size: int):
        self.size = size


class WebSourceResource(dg.ConfigurableResource):
    """The pages the sitemap at ``sitemap`` lists (see rag_assets.core.sitemaps for their ids).
    Every request gives up after ``max_attempts`` tries (the first included) of at most
    ``connect_timeout_seconds`` to connect and ``read_timeout_seconds`` a read; a page is read
    only after the listing that named it, in the same process."""

    name: str = Field(description="The source's name in sources.yml, which its errors name.")
    sitemap: str = Field(description="Address of the site's sitemap (XML, plain text or gzip; an index too), "
                         "a Sphinx objects.inv or a page that links to the pages.")
    include: list[str] = Field(default_factory=lambda: ["**/*"], description="Globs of page ids to index.")
    exclude: list[str] = Field(default_factory=list, description="Globs to leave out.")
    max_document_bytes: int | None = Field(None, description="A larger page is refused, its download stopped "
                                           "(unset: at 50 MB).")
    authorization: str | None = Field(None, description="Authorization header sent to the site (never to another).")
    authorization_env: str = Field("", description="The environment variable it comes from, which errors name.")
    connect_timeout_seconds: float = Field(description="How long one attempt waits to connect to the site.")
    read_timeout_seconds: float = Field(description="How long one attempt waits for each read of a response.")
    max_attempts: int = Field(3, description="Tries of each request, the first included.")
    _session: Any = PrivateAttr(None)
    _listed: dict = PrivateAttr(default_factory=dict)

    def _http(self) -> requests.Session:
        """One session for this resource's life (a sweep): its connections are kept alive."""
        if self._session is None:
            retry = Retry(total=self.max_attempts - 1, status_forcelist=RETRIED, backoff_factor=0.5, backoff_max=4,
                          respect_retry_after_header=False, raise_on_status=False)
            session = requests.Session()
            session.mount("http://", HTTPAdapter(max_retries=retry))
            session.mount("https://", HTTPAdapter(max_retries=retry))
            session.headers["User-Agent"] = USER_AGENT
            if self.authorization:
                session.headers["Authorization"] = self.authorization  # requests drops it on leaving the host
            self._session = session
        return self._session

    def _get(self, url: str, limit: int, headers: dict[str, str] | None = None) -> _Answer:
        """A GET of ``url``, its body read whole (at most ``limit`` bytes, else _TooLarge)."""
        with self._http().get(url, timeout=(self.connect_timeout_seconds, self.read_timeout_seconds),
                              headers=headers, stream=True) as response:
            declared = response.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > limit:
                raise _TooLarge(int(declared))
            body = bytearray()
            for piece in response.iter_content(1 << 16):
                body += piece
                if len(body) > limit:
                    raise _TooLarge(len(body))
            return _Answer(response.status_code, response.headers.get("Content-Type"), bytes(body),
                           response.headers.get("ETag"), response.headers.get("Last-Modified"))

    def _unavailable(self, action: str, problem: str) -> SourceUnavailable:
        return SourceUnavailable(f"web source {self.name!r} (sitemap {self.sitemap}): cannot {action}: {problem}; "
                                 "the next sweep retries")

    def _failure(self, exc: requests.RequestException) -> str:
        # Once retries run out, requests wraps a timeout in a ConnectionError: its cause says which.
        # (urllib3's NewConnectionError, a refused connection, is a ConnectTimeoutError too.)
        cause = getattr(exc.args[0], "reason", None) if exc.args else None
        which = next((key for kind, key in TIMEOUTS.items() if isinstance(exc, kind) or isinstance(cause, kind)), None)
        if which and not isinstance(cause, NewConnectionError):
            return (f"{type(cause or exc).__name__}: the site did not answer within {getattr(self, which):g} s "
                    f"(each of up to {self.max_attempts} attempts): check the sitemap address of source "
                    f"{self.name!r} in sources.yml, or raise its {which} (or max_attempts) for a slow site")
        return (f"{type(cause or exc).__name__}: {cause or exc}; check the sitemap address of source {self.name!r} in "
                "sources.yml and that the site is up")

    def _status(self, status: int) -> str:
        if status in REFUSED:
            held = f"the value of {self.authorization_env}" if self.authorization_env else "no Authorization header"
            return (f"HTTP {status}: the site refused it (sent {held}): set auth_header_env of source "
                    f"{self.name!r} in sources.yml to a variable holding a valid Authorization header")
        return f"HTTP {status}"

    def list_documents(self) -> list[DocumentRef]:
        """Every matching page the sitemap lists; raises SourceUnavailable rather than return a
        partial listing."""

        def fetch(url: str) -> bytes:
            try:
                answer = self._get(url, MAX_SITEMAP_BYTES)
            except _TooLarge as exc:
                raise self._unavailable(f"read the sitemap {url}", "over the protocol's 50 MB; split it into "
                                        "several listed by a sitemap index") from exc
            except requests.RequestException as exc:
                raise self._unavailable(f"read the sitemap {url}", self._failure(exc)) from exc
            if answer.status != 200:
                raise self._unavailable(f"read the sitemap {url}", self._status(answer.status))
            return answer.body

        try:
            pages = list_site(self.sitemap, fetch)
        except SitemapError as exc:
            raise self._unavailable("list pages", str(exc)) from exc
        refs = page_refs(pages, self.sitemap, tuple(self.include), tuple(self.exclude))
        self._listed = {ref.doc_id: ref for ref in refs}
        return refs

    def read(self, doc_id: str, known: str | None = None) -> RawDocument | None:
        """One page the last listing named, or None when ``known`` (the version recorded when it
        was last read) holds the site's validators and the site answers that the page has not
        changed since (HTTP 304), or, for a web page without ``<lastmod>``, when what its reader
        sees is what ``known`` fingerprinted (``page_fingerprint``). DocumentError when it is gone,
        refused, too large or not what its address names, SourceUnavailable when the site fails."""
        ref = self._listed.get(doc_id)
        if ref is None:
            raise DocumentError(doc_id, f"not among the pages the sitemap {self.sitemap} lists now")
        url = ref.uri
        limit = self.max_document_bytes or MAX_SITEMAP_BYTES
        try:
            answer = self._get(url, limit, conditional_headers(known))
        except _TooLarge as exc:
            raise DocumentError(doc_id, too_large(exc.size, limit)) from exc
        except PAGE_FAULTS as exc:  # this page's fault, not the site's: it fails alone
            raise DocumentError(doc_id, f"{url}: {type(exc).__name__}: {exc}; fix the page or exclude it in "
                                        "sources.yml") from exc
        except requests.RequestException as exc:
            raise self._unavailable(f"read {url}", self._failure(exc)) from exc
        status = answer.status
        if status == 304 and known:
            return None
        if status in GONE:
            raise DocumentError(doc_id, f"{url} answered HTTP {status} (the page is gone) though the sitemap lists "
                                        "it; fix the page or the sitemap (its last indexed version is kept until "
                                        "the sitemap no longer lists it)")
        if 400 <= status < 500:
            raise DocumentError(doc_id, f"{url}: {self._status(status)}")
        if status != 200:
            raise self._unavailable(f"read {url}", self._status(status))
        problem = served_type_problem(doc_id, answer.content_type)
        if problem:
            raise DocumentError(doc_id, f"{url}: {problem}")
        fingerprint = page_fingerprint(answer.body) if content_type_for(doc_id) == "html" else None
        if fingerprint and not ref.source_version and fingerprint == known_fingerprint(known):
            return None  # only what no reader sees changed: a new CSRF token, nonce or comment
        version = page_version(ref.source_version, answer.etag, answer.last_modified, fingerprint)
        return RawDocument(doc_id, url, content_hash(answer.body), len(answer.body), version, answer.body)
