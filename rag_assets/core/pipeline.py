"""Per-document stage functions over the stage store: what each asset does, without Dagster.

Each stage finds the current output of the stage before it, derives the key of its own output
from everything that determines it, and reuses a stored artifact with that key instead of
recomputing. A document that fails at one stage is marked failed (with the cause) for the stages
after it, so the index keeps its last good rows and the rest of the batch goes on.

Stored artifacts are checked before they are reused: one that is missing or damaged (a truncated
pickle, raw bytes whose hash is not their key) is recomputed, or, where the stage cannot redo it,
fails the document with ``retry`` set so the next sweep plans it again. Each document's vectors
are stored beside its chunks, so the index can be rebuilt without the model even when the
LanceDB folder, and the embedding cache in it, is lost.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from rag_assets.core.chunking import ChunkingProfile, chunk_document
from rag_assets.core.chunking.code import read_as
from rag_assets.core.embed_cache import EmbeddingCache
from rag_assets.core.embedding import InputTooLong, chunk_inputs, chunk_vectors
from rag_assets.core.hashing import content_hash, settings_hash, text_hash
from rag_assets.core.index import LanceIndex
from rag_assets.core.models import ChunkedDocument, EmbeddedDocument, ParsedDocument, RawDocument
from rag_assets.core.parsing import (DocumentError, ParseLimitExceeded, ParseLimits, content_type_for, parse_document,
                                     parser_settings)
from rag_assets.core.parsing.ocr import DEFAULT_LANGUAGES
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


class StoreDamaged(DocumentError):
    """An artifact a stage needs is missing or damaged in the stage store (it was removed); the
    document fails with ``retry`` set, so the next sweep plans it again and it is recomputed."""

    def __init__(self, doc_id: str, what: str):
        super().__init__(doc_id, f"{what} is missing or damaged in the stage store (it was removed); the next "
                                 "`rag ingest` recomputes it")


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
    data = store.load_bytes("raw", current["key"], content_hash)
    if data is None:
        raise StoreDamaged(doc_id, "its raw snapshot")
    return RawDocument(doc_id, current["uri"], current["key"], current["size"], current["source_version"], data)


def _upstream(store: StageStore, stage: str, doc_id: str) -> dict:
    current = store.current(stage, doc_id)
    if current is None:
        raise DocumentError(doc_id, f"no {stage} output yet: materialise the upstream stage first")
    return current


def parse_stage(store: StageStore, doc_id: str, observed: dict | None = None,
                limits: ParseLimits = ParseLimits(), ocr_languages: tuple[str, ...] = DEFAULT_LANGUAGES) -> StageResult:
    """Parse the raw snapshot ``observed`` (the version the orchestrator recorded for the
    document: ``{key, uri, size, source_version}`` or ``{error}``; default: the store's current
    one) within ``limits`` (the source's parse limits), OCR reading ``ocr_languages``, unless
    this content was parsed with these settings before (``parser_settings``). ``observed`` becomes current. A failure over a limit records the limits, so
    planning retries the document once they change."""
    current = store.current("raw", doc_id)
    if observed is not None and (current is None or (current["key"], current.get("error"), current.get("uri")) != (
            observed["key"], observed.get("error"), observed.get("uri"))):
        store.set_current("raw", doc_id, **{k: v for k, v in observed.items() if k != "doc_id"})
    raw_ptr = store.current("raw", doc_id)
    if raw_ptr is None:
        return _fail(store, "parsed", doc_id, "no raw snapshot: the source has not reported this document")
    if raw_ptr.get("error"):  # the source refused or could not read it
        return _fail(store, "parsed", doc_id, raw_ptr["error"], content_hash=None)
    # The document id is part of the key: the content type, the title and the ids in every
    # later artifact come from it, so identical bytes under two paths are two parses.
    key = settings_hash({"content": raw_ptr["key"], "parser": parser_settings(ocr_languages, content_type_for(doc_id)),
                         "doc_id": doc_id})
    meta = {"content_hash": raw_ptr["key"]}
    if (parsed := store.load("parsed", key)) is not None:
        store.set_current("parsed", doc_id, key=key, content_hash=raw_ptr["key"])
        return StageResult(doc_id, "reused", key, metadata={**meta, **_parsed_metadata(parsed)})
    try:
        parsed = parse_document(load_raw(store, doc_id), limits, ocr_languages)
    except DocumentError as exc:
        over_limit = isinstance(exc.__cause__, ParseLimitExceeded)
        return _fail(store, "parsed", doc_id, str(exc), content_hash=raw_ptr["key"],
                     retry=isinstance(exc, StoreDamaged), parsed_as=content_type_for(doc_id),
                     limits=limits.fingerprint() if over_limit else None)
    store.put("parsed", key, parsed)
    store.set_current("parsed", doc_id, key=key, content_hash=raw_ptr["key"])
    return StageResult(doc_id, "computed", key, metadata={**meta, **_parsed_metadata(parsed)})


def _parsed_metadata(parsed: ParsedDocument) -> dict:
    """What a parse's materialisation shows, whether it was computed or reused."""
    return {"title": parsed.title, "content_type": parsed.content_type, "chars": len(parsed.text),
            "elements": len(parsed.elements), **({"tags": ", ".join(parsed.tags)} if parsed.tags else {}),
            **({"ocr_pages": parsed.ocr_pages} if parsed.ocr_pages else {})}


def chunk_stage(store: StageStore, doc_id: str, profile: ChunkingProfile, counter: TokenCounter, model_limit: int,
                embed: Callable | None = None) -> StageResult:
    """Chunk the current parsed text, unless these settings chunked this text before."""
    parsed_ptr = _upstream(store, "parsed", doc_id)
    if parsed_ptr.get("error"):
        return _fail(store, "chunks", doc_id, parsed_ptr["error"], content_hash=parsed_ptr.get("content_hash"),
                     retry=parsed_ptr.get("retry", False))
    try:
        key, chunked, status = _chunked(store, doc_id, parsed_ptr, profile, counter, model_limit, embed)
    except StoreDamaged as exc:
        return _fail(store, "chunks", doc_id, str(exc), content_hash=parsed_ptr["content_hash"], retry=True)
    except (DocumentError, ValueError) as exc:
        return _fail(store, "chunks", doc_id, str(exc), content_hash=parsed_ptr["content_hash"])
    store.set_current("chunks", doc_id, key=key, content_hash=parsed_ptr["content_hash"])
    tokens = [c.tokens for c in chunked.chunks] or [0]
    strategy = chunked.chunks[0].strategy if chunked.chunks else profile.strategy
    return StageResult(doc_id, status, key, metadata={
        "chunks": len(chunked.chunks), "max_tokens": max(tokens), "mean_tokens": round(sum(tokens) / len(tokens), 1),
        "strategy": strategy, **({"language": read_as(doc_id)} if strategy == "code" else {})})


def chunks_with(store: StageStore, doc_id: str, profile: ChunkingProfile, counter: TokenCounter, model_limit: int,
                embed: Callable | None = None) -> ChunkedDocument:
    """The document's current parsed text chunked with ``profile`` for a model with ``counter``
    and ``model_limit``, stored under the key chunk_stage uses (each reuses the other's work),
    without becoming the document's current chunks. Raises DocumentError (or ValueError) with
    the cause when its text failed to parse or cannot be chunked. Its ``uri`` is where the source
    holds it now (``at_its_address``)."""
    return keyed_chunks(store, doc_id, profile, counter, model_limit, embed)[1]


def keyed_chunks(store: StageStore, doc_id: str, profile: ChunkingProfile, counter: TokenCounter, model_limit: int,
                 embed: Callable | None = None) -> tuple[str, ChunkedDocument]:
    """``chunks_with``'s chunks and the key they are stored under (``stored_vectors`` reads the
    vectors an ingest gave them)."""
    parsed_ptr = _upstream(store, "parsed", doc_id)
    if parsed_ptr.get("error"):
        raise DocumentError(doc_id, parsed_ptr["error"])
    key, chunked, _ = _chunked(store, doc_id, parsed_ptr, profile, counter, model_limit, embed)
    return key, at_its_address(store, chunked)


def _vectors_key(chunks_key: str, model_name: str, prefix: str) -> str:
    return settings_hash({"chunks": chunks_key, "model": model_name, "prefix": prefix})


def stored_vectors(store: StageStore, chunks_key: str, chunks: int, model_name: str,
                   prefix: str = "") -> np.ndarray | None:
    """The vectors ``embed_stage`` stored for the ``chunks`` chunks under ``chunks_key``, embedded
    by ``model_name`` with passage ``prefix``; None when there are none (or not one a chunk)."""
    vectors = store.load("vectors", _vectors_key(chunks_key, model_name, prefix))
    return vectors if vectors is not None and len(vectors) == chunks else None


def at_its_address(store: StageStore, chunked: ChunkedDocument) -> ChunkedDocument:
    """``chunked`` citing where the source holds its document now (the raw pointer's uri), and,
    where the pointer holds these bytes, the version read of them: the same bytes moved, or read
    again (an edit undone), keep their parse and chunks, not their address or version."""
    raw = store.current("raw", chunked.doc_id) or {}
    uri = raw.get("uri") or chunked.uri
    version = raw["source_version"] if raw.get("key") == chunked.content_hash and raw.get("source_version") \
        else chunked.source_version
    return chunked if (uri, version) == (chunked.uri, chunked.source_version) else \
        replace(chunked, uri=uri, source_version=version)


def _chunked(store: StageStore, doc_id: str, parsed_ptr: dict, profile: ChunkingProfile, counter: TokenCounter,
             model_limit: int, embed: Callable | None) -> tuple[str, ChunkedDocument, str]:
    """(key, chunks, "reused" or "computed") of the parsed text ``parsed_ptr`` points at. Raises
    ValueError for text the profile cannot chunk, and DocumentError naming the document, the
    exception and where it was raised for any other failure of the chunker."""
    key = settings_hash({"parsed": parsed_ptr["key"], "profile": profile.fingerprint(), "tokenizer": counter.name,
                         "limit": model_limit})
    chunked: ChunkedDocument | None = store.load("chunks", key)
    if chunked is not None:
        return key, chunked, "reused"
    parsed: ParsedDocument | None = store.load("parsed", parsed_ptr["key"])
    if parsed is None:
        raise StoreDamaged(doc_id, "its parsed text")
    try:
        chunked = chunk_document(parsed, profile, counter, model_limit, embed=embed)
    except ValueError:
        raise
    except Exception as exc:  # a chunker bug: this document fails with its cause, the batch goes on
        where = traceback.extract_tb(exc.__traceback__)[-1]
        raise DocumentError(doc_id, f"cannot chunk with profile {profile.name!r}: {type(exc).__name__}: {exc} "
                                    f"(at {Path(where.filename).name}:{where.lineno} in {where.name}); a bug in "
                                    f"the chunker: report it, or set another strategy for {parsed.content_type} "
                                    "documents in the profile's content_types") from exc
    store.put("chunks", key, chunked)
    return key, chunked, "computed"


@dataclass
class EmbedTotals:
    """What one embedding pass over a batch of documents cost."""

    embedded: int = 0
    cached: int = 0
    tokens: int = 0


def embed_stage(store: StageStore, doc_ids: Sequence[str], cache: EmbeddingCache, embed: Callable,
                model_name: str, prefix: str = "",
                progress: Callable[[int, int], None] | None = None) -> tuple[list[StageResult], EmbedTotals]:
    """Give every document's current chunks their vectors, stored beside the chunks (key: chunks
    key, model, prefix). A document whose stored vectors are intact costs nothing; the others'
    chunks are looked up in the cache, and only embedded texts it has not seen reach the model,
    in one pass over the batch (cached slice by slice: ``EmbeddingCache.embed_missing``, which
    calls ``progress``). A document with a text over the model's input limit (InputTooLong) fails
    alone."""
    results, todo, pending, stored = [], {}, {}, {}
    for doc_id in doc_ids:
        ptr = _upstream(store, "chunks", doc_id)
        if ptr.get("error"):
            results.append(_fail(store, "embeddings", doc_id, ptr["error"], content_hash=ptr.get("content_hash"),
                                 retry=ptr.get("retry", False)))
            continue
        chunked: ChunkedDocument | None = store.load("chunks", ptr["key"])
        if chunked is None:
            results.append(_fail(store, "embeddings", doc_id, str(StoreDamaged(doc_id, "its chunks")),
                                 content_hash=ptr["content_hash"], retry=True))
            continue
        vectors_key = _vectors_key(ptr["key"], model_name, prefix)
        if stored_vectors(store, ptr["key"], len(chunked.chunks), model_name, prefix) is not None:
            stored[doc_id] = (ptr, chunked, vectors_key)
            continue
        hashes = {text: text_hash(text) for text in chunk_inputs(chunked, prefix)}
        pending[doc_id] = (ptr, chunked, hashes, vectors_key)
        todo.update((key, text) for text, key in hashes.items())
    totals = EmbedTotals(cached=sum(len(chunked.chunks) for _, chunked, _ in stored.values()))
    found = cache.get_many(list(todo))
    missing: dict = {}  # embedded now: kept through an InputTooLong, slices done before it included
    try:
        cache.embed_missing(todo, found, embed, into=missing, progress=progress)
    except InputTooLong:  # the documents whose chunks the model refuses fail alone; the rest are embedded
        for doc_id, (ptr, _, hashes, _) in list(pending.items()):
            try:
                cache.embed_missing({k: t for t, k in hashes.items()}, found, embed, into=missing)
            except InputTooLong as exc:
                del pending[doc_id]
                results.append(_fail(store, "embeddings", doc_id, str(exc), content_hash=ptr["content_hash"]))
    found.update(missing)
    totals.cached += len({k for _, _, hashes, _ in pending.values() for k in hashes.values()} - set(missing))
    totals.embedded = len(missing)
    for doc_id, (ptr, chunked, hashes, vectors_key) in pending.items():
        vectors = chunk_vectors(chunked, {text: found[key] for text, key in hashes.items()}, prefix)
        store.put("vectors", vectors_key, np.asarray(vectors, dtype=np.float32))
        stored[doc_id] = (ptr, chunked, vectors_key)
    for doc_id, (ptr, chunked, vectors_key) in stored.items():
        hashes = pending[doc_id][2] if doc_id in pending else None
        new_chunks = [c for c in chunked.chunks if hashes[prefix + c.embed_text] in missing] if hashes else []
        totals.tokens += sum(c.tokens for c in new_chunks)
        store.set_current("embeddings", doc_id, key=ptr["key"], vectors=vectors_key, model=model_name,
                          content_hash=ptr["content_hash"])
        results.append(StageResult(doc_id, "computed", ptr["key"], metadata={
            "chunks": len(chunked.chunks), "chunks_embedded": len(new_chunks),
            "tokens": sum(c.tokens for c in chunked.chunks), "embedded_tokens": sum(c.tokens for c in new_chunks)}))
    return results, totals


def index_stage(store: StageStore, doc_ids: Sequence[str], index: LanceIndex, cache: EmbeddingCache,
                tenant, run_id: str, profile_hash: str, model_name: str,
                prefix: str = "", tags: tuple[str, ...] = (), index_version: str = "") -> list[StageResult]:
    """Write the batch's current chunks and vectors to the index in one upsert (new rows first,
    then stale ones removed); ``tenant`` is a string or a function of the document id, and
    ``index_version`` the stage's code version (recorded, so a change redoes it). A failed
    document keeps its last good rows; its failure is recorded against the content, profile and
    model it failed with, so it is retried only when one changes (or at once, with ``retry``,
    when the cause was a damaged stage store)."""
    results: dict[str, StageResult] = {}
    ready: list[tuple[str, dict, EmbeddedDocument]] = []
    for doc_id in doc_ids:
        ptr = _upstream(store, "embeddings", doc_id)
        error, retry = ptr.get("error"), ptr.get("retry", False)
        if not error:
            chunked: ChunkedDocument | None = store.load("chunks", ptr["key"])
            vectors = _vectors(store, ptr, chunked, cache, prefix)
            if vectors is None:
                error, retry = str(StoreDamaged(doc_id, "its chunks or vectors")), True
        if error:
            store.set_current("index", doc_id, key=None, error=error, content_hash=ptr.get("content_hash"),
                              profile_hash=profile_hash, model=model_name, retry=retry,
                              index_version=index_version)
            results[doc_id] = StageResult(doc_id, "failed", error=error,
                                          metadata={"kept_rows": index.count_doc_rows(doc_id)})
            continue
        embedded = EmbeddedDocument(at_its_address(store, chunked), ptr["model"], tuple(tuple(v) for v in vectors))
        ready.append((doc_id, ptr, embedded))
    written = index.write_documents([e for _, _, e in ready], tenant, run_id, tags)
    for doc_id, ptr, embedded in ready:
        result = written[doc_id]
        store.set_current("index", doc_id, key=ptr["key"], content_hash=embedded.chunked.content_hash,
                          profile_hash=embedded.chunked.profile_hash, model=ptr["model"],
                          table_version=result.table_version, index_version=index_version, labels=result.labels)
        ocr_rows = sum(chunk.ocr for chunk in embedded.chunked.chunks)
        results[doc_id] = StageResult(doc_id, "computed", ptr["key"], metadata={
            "rows_written": result.rows_written, "rows_deleted": result.rows_deleted,
            "table_version": result.table_version, **({"ocr_rows": ocr_rows} if ocr_rows else {})})
    return [results[d] for d in doc_ids]


def mirror_stage(doc_ids: Sequence[str], chunks: Callable[[str], ChunkedDocument], index: LanceIndex,
                 cache: EmbeddingCache, embed: Callable, tenant, run_id: str, model_name: str, prefix: str = "",
                 tags: tuple[str, ...] = ()) -> dict[str, str]:
    """Keep the table queries stay on (``index``: another model's or profile's) current while the
    corpus' own table is built or held back: each document's chunks for that table
    (``chunks(doc_id)``), embedded by ``model_name`` (vectors from ``cache``, the rest from
    ``embed``), replace its rows there. Returns doc id -> "written", or why the document keeps
    its last good rows in that table (it cannot be chunked, or a chunk exceeds that model's input
    limit: never truncated)."""
    outcome: dict[str, str] = {}
    ready: list[tuple[ChunkedDocument, list[str]]] = []
    for doc_id in doc_ids:
        try:
            chunked = chunks(doc_id)
        except (DocumentError, ValueError) as exc:
            outcome[doc_id] = f"kept: {exc}"
            continue
        ready.append((chunked, chunk_inputs(chunked, prefix)))
    texts = {text_hash(text): text for _, inputs in ready for text in inputs}
    found = cache.get_many(list(texts))
    try:
        cache.embed_missing(texts, found, embed, into=found)
    except InputTooLong:  # find the documents whose chunks the model refuses; embed the rest
        for chunked, inputs in ready:
            try:
                cache.embed_missing({text_hash(t): t for t in inputs}, found, embed, into=found)
            except InputTooLong as exc:
                outcome[chunked.doc_id] = f"kept: {exc}"
    docs = [EmbeddedDocument(chunked, model_name, tuple(
                tuple(v) for v in chunk_vectors(chunked, {t: found[text_hash(t)] for t in inputs}, prefix)))
            for chunked, inputs in ready if chunked.doc_id not in outcome]
    index.write_documents(docs, tenant, run_id, tags)
    outcome.update({doc.chunked.doc_id: "written" for doc in docs})
    return outcome


def _vectors(store: StageStore, ptr: dict, chunked: ChunkedDocument | None, cache: EmbeddingCache,
             prefix: str) -> list | None:
    """The document's vectors, one per chunk: stored beside its chunks, else (a record written
    before vectors were stored, or damaged ones) from the embedding cache; None when neither
    holds them all."""
    if chunked is None:
        return None
    vectors = store.load("vectors", ptr["vectors"]) if ptr.get("vectors") else None
    if vectors is not None and len(vectors) == len(chunked.chunks):
        return vectors.tolist()
    keys = {text: text_hash(text) for text in chunk_inputs(chunked, prefix)}
    cached = cache.get_many(list(keys.values()))
    if not all(key in cached for key in keys.values()):
        return None
    return chunk_vectors(chunked, {text: cached[key] for text, key in keys.items()}, prefix)


def _fail(store: StageStore, stage: str, doc_id: str, error: str, **record) -> StageResult:
    store.set_current(stage, doc_id, key=None, error=error, **record)
    return StageResult(doc_id, "failed", error=error)
