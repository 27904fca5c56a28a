"""`rag serve`: the retrieval path (``query.query_corpus``, the one `rag query` and `rag eval` use)
over HTTP for applications, with the model and the index kept open between requests.

    POST /query   {"query": "...", "corpus": "...", "k": 5, "mode": "hybrid", "tenant": "...",
                   "filters": {"section": "Travel Policy"}, "rerank": "rrf", "expand": 0, "as_of": 7}
                  -> {"corpus": "...", "results": [<a result as `rag query --json` prints it>, ...]}
    GET  /health  -> {"status": "ok", "corpora": [...], "config_error": null}

An error answers {"error": "..."}: 400 for a bad request (a missing tenant included), 401 without
a bearer token the server was started with, 403 for a tenant's token asking for another tenant,
404 for an unknown corpus, 503 for a corpus not ingested yet. The config project is read again
when one of its files changes; a config that no longer loads keeps the last good one serving and
is named in /health. No Dagster on this path.
"""

from __future__ import annotations

import hmac
import json
import threading
from dataclasses import replace
from pathlib import Path

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from rag_assets.config import ConfigError, Project, load_project
from rag_assets.core.retrieval import FILTER_KEYS, FilterError, Filters
from rag_assets.query import NotIngested, has_tenants, query_corpus

FIELDS = {"query": str, "corpus": str, "k": int, "mode": str, "tenant": str, "filters": dict, "rerank": str,
          "expand": int, "as_of": int}
KINDS = {str: "a string", int: "an integer", dict: "an object"}
MODES, RERANKS = ("hybrid", "vector", "fts"), ("rrf", "mmr", "none")
MAX_BODY_BYTES = 64 * 1024
UNAUTHORISED = "send a token the server was started with as 'Authorization: Bearer <token>'"


class BadRequest(ValueError):
    """A request the server cannot answer as asked (its message says what to send instead)."""


class WatchedProject:
    """The config project at ``root``, read again when a file under it changes (by mtime and size);
    a change that fails to load keeps the last good project and is reported by ``error``."""

    def __init__(self, root: Path):
        self.root, self._lock = root, threading.Lock()
        self._signature = self._files()
        self._project, self.error = load_project(root), None

    def _files(self) -> tuple:
        found = []
        for path in sorted(self.root.rglob("*")):
            if path.suffix in (".yml", ".yaml") and path.is_file():
                stat = path.stat()
                found.append((str(path), stat.st_mtime_ns, stat.st_size))
        return tuple(found)

    def current(self) -> Project:
        with self._lock:
            signature = self._files()
            if signature != self._signature:
                self._signature = signature
                try:
                    self._project, self.error = load_project(self.root), None
                except ConfigError as exc:
                    self.error = f"{exc} (serving the config as it was before that change)"
            return self._project


def parse_request(body: object, project: Project) -> dict:
    """The keyword arguments of ``query_corpus`` (and the corpus' name) from a request's JSON body;
    BadRequest naming the field and what it must be."""
    if not isinstance(body, dict):
        raise BadRequest('send a JSON object, e.g. {"query": "refund policy"}')
    unknown = sorted(set(body) - set(FIELDS))
    if unknown:
        raise BadRequest(f"unknown field {unknown[0]!r}: use {', '.join(FIELDS)}")
    for name, value in body.items():
        if value is not None and (not isinstance(value, FIELDS[name]) or isinstance(value, bool)):
            raise BadRequest(f"{name!r} must be {KINDS[FIELDS[name]]}")
    if not body.get("query"):
        raise BadRequest('"query" is required: the question, e.g. {"query": "refund policy"}')
    mode, rerank = body.get("mode") or "hybrid", body.get("rerank") or "rrf"
    if mode not in MODES or rerank not in RERANKS:
        raise BadRequest(f"'mode' is one of {', '.join(MODES)} and 'rerank' one of {', '.join(RERANKS)}")
    filters = body.get("filters") or {}
    if any(key not in FILTER_KEYS for key in filters):
        raise BadRequest(f"unknown filter {next(k for k in filters if k not in FILTER_KEYS)!r}: use "
                         f"{', '.join(FILTER_KEYS)}")
    if any(not isinstance(v, str) for v in filters.values()):
        raise BadRequest('each filter\'s value is a string, e.g. {"filters": {"section": "Travel Policy"}}')
    try:
        parsed = Filters.parse([f"{key}={value}" for key, value in filters.items()], tenant=body.get("tenant"))
    except FilterError as exc:
        raise BadRequest(str(exc)) from exc
    name = body.get("corpus") or project.corpora[0].name
    given = {key: value for key, value in body.items() if value is not None}
    return {"corpus": name, "text": body["query"], "k": given.get("k", 5), "mode": mode, "filters": parsed,
            "rerank": rerank, "neighbours": given.get("expand", 0), "as_of": given.get("as_of")}


def create_app(project_dir: Path, tokens: dict[str, str | None] | None = None,
               origins: tuple[str, ...] = ()) -> Starlette:
    """The HTTP app over the config project at ``project_dir``. With ``tokens`` (token -> the
    tenant it may query, None for any), every request must carry ``Authorization: Bearer <token>``
    of one of them, and a tenant's token queries that tenant's rows alone (corpora without tenants,
    shared by all, it queries whole). Web pages served from ``origins`` may call it from a browser
    (CORS)."""
    watched = WatchedProject(project_dir)
    keys = [(f"Bearer {token}".encode(), tenant) for token, tenant in (tokens or {}).items()]

    def scope(request: Request) -> tuple[bool, str | None]:
        """Whether the request may be answered, and the one tenant its token limits it to."""
        if tokens is None:
            return True, None
        sent = request.headers.get("authorization", "").encode()
        matched = [tenant for key, tenant in keys if hmac.compare_digest(sent, key)]  # every key compared
        return bool(matched), matched[0] if matched else None

    async def query(request: Request) -> JSONResponse:
        allowed, tenant = scope(request)
        if not allowed:
            return JSONResponse({"error": UNAUTHORISED}, 401)
        body = await request.body()
        if len(body) > MAX_BODY_BYTES:
            return JSONResponse({"error": f"the request is over {MAX_BODY_BYTES // 1024} kB"}, 413)
        project = watched.current()
        try:
            asked = parse_request(json.loads(body or b"null"), project)
        except (BadRequest, ValueError) as exc:  # json's errors are ValueErrors
            return JSONResponse({"error": str(exc) if isinstance(exc, BadRequest) else f"not JSON: {exc}"}, 400)
        names = [c.name for c in project.corpora]
        if asked["corpus"] not in names:
            return JSONResponse({"error": f"no corpus {asked['corpus']!r}: use one of {', '.join(names)}"}, 404)
        corpus = project.corpus(asked.pop("corpus"))
        if tenant is not None:
            if asked["filters"].tenant not in (None, tenant):
                return JSONResponse({"error": f"this token queries tenant {tenant!r} only"}, 403)
            asked["filters"] = replace(asked["filters"], tenant=tenant if has_tenants(corpus) else None)
        try:
            hits = await run_in_threadpool(query_corpus, project, corpus, **asked)
        except NotIngested as exc:
            return JSONResponse({"error": str(exc)}, 503)
        except ValueError as exc:  # a missing tenant, an empty query, k out of range, an unknown version
            return JSONResponse({"error": str(exc)}, 400)
        return JSONResponse({"corpus": corpus.name, "results": [hit.to_dict() for hit in hits]})

    async def health(request: Request) -> JSONResponse:
        if not scope(request)[0]:
            return JSONResponse({"error": UNAUTHORISED}, 401)
        project = watched.current()
        return JSONResponse({"status": "ok", "corpora": [c.name for c in project.corpora],
                             "config_error": watched.error})

    cors = [Middleware(CORSMiddleware, allow_origins=list(origins), allow_methods=["GET", "POST"],
                       allow_headers=["Authorization", "Content-Type"])] if origins else []
    return Starlette(routes=[Route("/query", query, methods=["POST"]), Route("/health", health, methods=["GET"])],
                     middleware=cors)
