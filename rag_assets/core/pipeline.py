"""Per-document stage functions over the stage store: what each asset does, without Dagster.

Each stage finds the current output of the stage before it, derives the key of its own output
from everything that determines it, and reuses a stored artifact with that key instead of
recomputing. A document that fails at one stage is marked failed (with the cause) for the stages
after it, so the index keeps its last good rows and the rest of the batch goes on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from rag_assets.core.chunking import ChunkingProfile, chunk_document
from rag_assets.core.embed_cache import EmbeddingCache
from rag_assets.core.hashing import settings_hash, text_hash
from rag_assets.core.index import LanceIndex
from rag_assets.core.models import ChunkedDocument, EmbeddedDocument, ParsedDocument, RawDocument
from rag_assets.core.parsing import DocumentError, ParseLimits, parse_document, parser_version
from rag_assets.core.store import StageStore
from rag_assets.core.tokens import TokenCounter


@dataclass
class StageResult:
    """What one stage did for one document."""

    doc_id: str
    status: str  # "computed", "reused" or "failed"
    key: str | None = None
    error: str | None = None
    metadata: dict = field(default_factory=dict)


def snapshot_raw(store: StageStore, raw: RawDocument) -> bool:
    """Store the document's bytes (once per content) and make them current; True if changed."""
    current = store.current("raw", raw.doc_id)
    store.put_bytes("raw", raw.content_hash, raw.data)
    store.set_current("raw", raw.doc_id, key=raw.content_hash, uri=raw.uri, size=raw.size,
                      source_version=raw.source_version)
    return current is None or current["key"] != raw.content_hash


def load_raw(store: StageStore, doc_id: str) -> RawDocument:
    current = store.current("raw", doc_id)
    if current is None:
        raise DocumentError(doc_id, "no raw snapshot: the source has not reported this document yet")
    data = store.get_bytes("raw", current["key"])
    return RawDocument(doc_id, current["uri"], current["key"], current["size"], current["source_version"], data)


def _upstream(store: StageStore, stage: str, doc_id: str) -> dict:
    current = store.current(stage, doc_id)
    if current is None:
        raise DocumentError(doc_id, f"no {stage} output yet: materialise the upstream stage first")
    return current


def parse_stage(store: StageStore, doc_id: str, limits: ParseLimits = ParseLimits()) -> StageResult:
    """Parse the current raw snapshot within ``limits`` (the source's parse limits), unless this
    content was parsed by this parser before."""
    raw_ptr = store.current("raw", doc_id)
    if raw_ptr is None:
        return _fail(store, "parsed", doc_id, "no raw snapshot: the source has not reported this document")
    if raw_ptr.get("error"):  # the source refused or could not read it
        return _fail(store, "parsed", doc_id, raw_ptr["error"], content_hash=None)
    # The document id is part of the key: the content type, the title and the ids in every
    # later artifact come from it, so identical bytes under two paths are two parses.
    key = settings_hash({"content": raw_ptr["key"], "parser": parser_version(), "doc_id": doc_id})
    meta = {"content_hash": raw_ptr["key"]}
    if store.has("parsed", key):
        store.set_current("parsed", doc_id, key=key, content_hash=raw_ptr["key"])
        return StageResult(doc_id, "reused", key, metadata=meta)
    try:
        parsed = parse_document(load_raw(store, doc_id), limits)
    except DocumentError as exc:
        return _fail(store, "parsed", doc_id, str(exc), content_hash=raw_ptr["key"])
    store.put("parsed", key, parsed)
    store.set_current("parsed", doc_id, key=key, content_hash=raw_ptr["key"])
    meta.update(title=parsed.title, content_type=parsed.content_type, chars=len(parsed.text),
                elements=len(parsed.elements))
    return StageResult(doc_id, "computed", key, metadata=meta)


def chunk_stage(store: StageStore, doc_id: str, profile: ChunkingProfile, counter: TokenCounter, model_limit: int,
                embed: Callable | None = None) -> StageResult:
    """Chunk the current parsed text, unless these settings chunked this text before."""
    parsed_ptr = _upstream(store, "parsed", doc_id)
    if parsed_ptr.get("error"):
        return _fail(store, "chunks", doc_id, parsed_ptr["error"], content_hash=parsed_ptr.get("content_hash"))
    key = settings_hash({"parsed": parsed_ptr["key"], "profile": profile.fingerprint(), "tokenizer": counter.name,
                         "limit": model_limit})
    if store.has("chunks", key):
        chunked: ChunkedDocument = store.get("chunks", key)
        status = "reused"
    else:
        parsed: ParsedDocument = store.get("parsed", parsed_ptr["key"])
        try:
            chunked = chunk_document(parsed, profile, counter, model_limit, embed=embed)
        except ValueError as exc:
            return _fail(store, "chunks", doc_id, str(exc), content_hash=parsed_ptr["content_hash"])
        store.put("chunks", key, chunked)
        status = "computed"
    store.set_current("chunks", doc_id, key=key, content_hash=parsed_ptr["content_hash"])
    tokens = [c.tokens for c in chunked.chunks] or [0]
    return StageResult(doc_id, status, key, metadata={
        "chunks": len(chunked.chunks), "max_tokens": max(tokens), "mean_tokens": round(sum(tokens) / len(tokens), 1),
        "strategy": chunked.chunks[0].strategy if chunked.chunks else profile.strategy})


@dataclass
class EmbedTotals:
    """What one embedding pass over a batch of documents cost."""

    embedded: int = 0
    cached: int = 0
    tokens: int = 0


def embed_stage(store: StageStore, doc_ids: Sequence[str], cache: EmbeddingCache, embed: Callable,
                model_name: str, prefix: str = "") -> tuple[list[StageResult], EmbedTotals]:
    """Embed the chunks of every document whose embedded text the cache has not seen, in one
    pass over the batch; a document's vectors then all come from the cache."""
    results, todo, chunked_by_doc = [], {}, {}
    for doc_id in doc_ids:
        ptr = _upstream(store, "chunks", doc_id)
        if ptr.get("error"):
            results.append(_fail(store, "embeddings", doc_id, ptr["error"], content_hash=ptr.get("content_hash")))
            continue
        chunked: ChunkedDocument = store.get("chunks", ptr["key"])
        keys = [text_hash(prefix + chunk.embed_text) for chunk in chunked.chunks]
        chunked_by_doc[doc_id] = (ptr, chunked, keys)
        for key, chunk in zip(keys, chunked.chunks):
            todo[key] = prefix + chunk.embed_text
    totals = EmbedTotals()
    cached = cache.get_many(list(todo))
    missing = {k: t for k, t in todo.items() if k not in cached}
    totals.cached = len(todo) - len(missing)
    if missing:
        new_keys = list(missing)
        vectors = embed([missing[k] for k in new_keys])
        cache.put_many(dict(zip(new_keys, vectors)))
        totals.embedded = len(new_keys)
    for doc_id, (ptr, chunked, keys) in chunked_by_doc.items():
        new_chunks = [c for key, c in zip(keys, chunked.chunks) if key in missing]
        totals.tokens += sum(c.tokens for c in new_chunks)
        store.set_current("embeddings", doc_id, key=ptr["key"], model=model_name, content_hash=ptr["content_hash"])
        results.append(StageResult(doc_id, "computed", ptr["key"], metadata={
            "chunks": len(chunked.chunks), "chunks_embedded": len(new_chunks),
            "tokens": sum(c.tokens for c in chunked.chunks), "embedded_tokens": sum(c.tokens for c in new_chunks)}))
    return results, totals


def index_stage(store: StageStore, doc_ids: Sequence[str], index: LanceIndex, cache: EmbeddingCache,
                tenant, run_id: str, profile_hash: str, model_name: str,
                prefix: str = "", tags: tuple[str, ...] = ()) -> list[StageResult]:
    """Write the batch's current chunks and vectors to the index in one upsert (new rows first,
    then stale ones removed); ``tenant`` is a string or a function of the document id. A failed
    document keeps its last good rows; its failure is recorded against the content, profile and
    model it failed with, so it is retried only when one changes."""
    results: dict[str, StageResult] = {}
    ready: list[tuple[str, dict, EmbeddedDocument]] = []
    for doc_id in doc_ids:
        ptr = _upstream(store, "embeddings", doc_id)
        if ptr.get("error"):
            store.set_current("index", doc_id, key=None, error=ptr["error"], content_hash=ptr.get("content_hash"),
                              profile_hash=profile_hash, model=model_name)
            results[doc_id] = StageResult(doc_id, "failed", error=ptr["error"],
                                          metadata={"kept_rows": index.count_doc_rows(doc_id)})
            continue
        chunked: ChunkedDocument = store.get("chunks", ptr["key"])
        vectors = cache.get_many([text_hash(prefix + c.embed_text) for c in chunked.chunks])
        embedded = EmbeddedDocument(chunked, ptr["model"], tuple(
            tuple(vectors[text_hash(prefix + c.embed_text)]) for c in chunked.chunks))
        ready.append((doc_id, ptr, embedded))
    written = index.write_documents([e for _, _, e in ready], tenant, run_id, tags)
    for doc_id, ptr, embedded in ready:
        result = written[doc_id]
        store.set_current("index", doc_id, key=ptr["key"], content_hash=embedded.chunked.content_hash,
                          profile_hash=embedded.chunked.profile_hash, model=ptr["model"],
                          table_version=result.table_version)
        results[doc_id] = StageResult(doc_id, "computed", ptr["key"], metadata={
            "rows_written": result.rows_written, "rows_deleted": result.rows_deleted,
            "table_version": result.table_version})
    return [results[d] for d in doc_ids]


def _fail(store: StageStore, stage: str, doc_id: str, error: str, **record) -> StageResult:
    store.set_current(stage, doc_id, key=None, error=error, **record)
    return StageResult(doc_id, "failed", error=error)
