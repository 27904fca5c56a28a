"""A real web site for tests: an HTTP server on 127.0.0.1 serving pages a test sets and changes,
recording every request (path and Authorization header) it answers."""

from __future__ import annotations

import hashlib
import threading
from http.server import BaseHTTPRequestHandler

from tests.support.seaweed import ThreadedServer


class Website(ThreadedServer):
    """``pages``: path -> (status, content type, body; a redirect's address); a missing path answers 404. ``requests``:
    (path, Authorization header or None) of each request, in order. With ``etags`` a page carries an
    ETag and a request whose If-None-Match holds it is answered 304 (its path in ``not_modified``)."""

    def __init__(self, etags: bool = False):
        self.pages: dict[str, tuple[int, str, bytes]] = {}
        self.requests: list[tuple[str, str | None]] = []
        self.not_modified: list[str] = []
        site, lock = self, threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                with lock:
                    site.requests.append((self.path, self.headers.get("Authorization")))
                    status, kind, body = site.pages.get(self.path, (404, "text/html", b"<h1>Not found</h1>"))
                    tag = f'"{hashlib.sha1(body).hexdigest()[:16]}"' if etags and status == 200 else None
                    if tag and self.headers.get("If-None-Match") == tag:
                        site.not_modified.append(self.path)
                        status, body = 304, b""
                self.send_response(status)
                if tag:
                    self.send_header("ETag", tag)
                if 300 <= status < 400:
                    self.send_header("Location", body.decode())
                    body = b""
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.url = f"http://127.0.0.1:{self._listen(Handler)}"

    def page(self, path: str, body: str | bytes, kind: str = "text/html; charset=utf-8", status: int = 200) -> None:
        self.pages[path] = (status, kind, body.encode() if isinstance(body, str) else body)

    def redirect(self, path: str, to: str) -> None:
        self.page(path, to, status=302)

    def sitemap(self, paths: dict[str, str | None], at: str = "/sitemap.xml") -> None:
        """A sitemap listing ``paths`` (path -> lastmod or None) on this site."""
        entries = "".join(f"<url><loc>{self.url}{p}</loc>{f'<lastmod>{m}</lastmod>' if m else ''}</url>"
                          for p, m in paths.items())
        self.page(at, '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/'
                      f'sitemap/0.9">{entries}</urlset>', "application/xml")

    def reads(self, path: str) -> int:
        """How many requests asked for ``path``."""
        return sum(1 for p, _ in self.requests if p == path)
