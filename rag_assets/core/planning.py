"""Decide what an ingest must do: which documents are new, changed, unchanged or deleted."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Protocol

from rag_assets.core.index import made_as_recorded
from rag_assets.core.models import RawDocument
from rag_assets.core.parsing import DocumentError, ParseLimits, content_type_for
from rag_assets.core.sources import DocumentRef, too_large
from rag_assets.core.store import StageStore


class SeenRecords(Protocol):
    """What the last sweep saw of each document: ``{key, uri, size, source_version}`` and, for an
    unreadable one, ``error`` with ``key`` None."""

    def get(self, doc_id: str) -> dict | None: ...

    def set(self, doc_id: str, record: dict) -> None: ...

    def reported_elsewhere(self, doc_id: str, record: dict) -> bool:
        """Whether another sweep already reported ``record`` (its content ``key`` at its ``uri``)."""

    def retain(self, doc_ids: set[str]) -> None:
        """Forget what was seen of documents outside ``doc_ids`` (no longer listed)."""


class StoreSeen:
    """Seen records kept as the stage store's ``raw`` pointers (what ``rag ingest`` and
    ``rag observe`` use)."""

    def __init__(self, store: StageStore):
        self.store = store

    def get(self, doc_id: str) -> dict | None:
        return self.store.current("raw", doc_id)

    def set(self, doc_id: str, record: dict) -> None:
        self.store.set_current("raw", doc_id, **{k: v for k, v in record.items() if k != "doc_id"})

    def reported_elsewhere(self, doc_id: str, record: dict) -> bool:
        return False  # these pointers are the record every sweep of the store compares with

    def retain(self, doc_ids: set[str]) -> None:
        pass  # a deleted document's pointers go when the table's maintenance forgets it


class SnapshotSeen:
    """Seen records in memory, read from an earlier snapshot (the sensor's cursor) or, for a
    document the snapshot lacks, once from a fallback; written nowhere: ``records`` is the new
    snapshot for the caller to keep, holding every document it was asked about (so the next
    sweep from it reads no fallback for unchanged documents), and ``commit`` writes the records
    the sweep set to the fallback."""

    def __init__(self, records: dict[str, dict] | None = None, fallback: SeenRecords | None = None):
        self.records = dict(records or {})
        self.fallback = fallback
        self.changed: set[str] = set()

    def get(self, doc_id: str) -> dict | None:
        if doc_id not in self.records and self.fallback is not None:
            record = self.fallback.get(doc_id)
            if record is not None:
                self.records[doc_id] = {k: v for k, v in record.items() if k != "doc_id"}
        return self.records.get(doc_id)

    def set(self, doc_id: str, record: dict) -> None:
        self.records[doc_id] = {k: v for k, v in record.items() if k != "doc_id"}
        self.changed.add(doc_id)

    def commit(self) -> None:
        for doc_id in sorted(self.changed & self.records.keys()):
            self.fallback.set(doc_id, self.records[doc_id])
        self.changed.clear()

    def reported_elsewhere(self, doc_id: str, record: dict) -> bool:
        """True when the fallback (the store's pointers, which `rag ingest` and runs keep) already
        holds ``record``'s content and address: another sweep reported it since the snapshot was taken."""
        held = self.fallback.get(doc_id) if self.fallback is not None else None
        return held is not None and (held.get("key"), held.get("uri")) == (record["key"], record["uri"])

    def retain(self, doc_ids: set[str]) -> None:
        self.records = {d: r for d, r in self.records.items() if d in doc_ids}


@dataclass
class Plan:
    """The documents a sweep found, and what each needs."""

    listed: list[str] = field(default_factory=list)
    snapshots: list[RawDocument] = field(default_factory=list)  # new or changed bytes to report
    unreadable: list[dict] = field(default_factory=list)  # seen records of newly unreadable documents
    work: list[str] = field(default_factory=list)  # documents whose downstream stages must run
    deleted: list[str] = field(default_factory=list)
    hashed: int = 0  # documents whose bytes were read and hashed
    versions: dict[str, str | None] = field(default_factory=dict)  # content hash of each listed document
    known: int = 0  # documents the corpus held before the sweep
    failing: dict[str, str] = field(default_factory=dict)  # documents whose last attempt failed, and why


class MassDeleteRefused(Exception):
    """A sweep would delete more of the corpus than its ``+max_delete_fraction`` allows, or all of it."""


class ModelChangedInPlace(Exception):
    """An embedding model's settings changed under the same name, whose vectors are cached and stored."""


def guard_model(store: StageStore, name: str, fingerprint: str, record: bool = True) -> None:
    """Raise ModelChangedInPlace when the corpus' chunks and vectors of model ``name`` were made
    with other settings (``fingerprint``: provider, model, dimensions, passage prefix, compute, tokenizer, input
    limit): they are keyed by the model's name, so they would be mixed or kept. Records the
    fingerprint the first time (``record``)."""
    seen = store.current("model", name)
    if seen is None:
        if record:
            store.set_current("model", name, key=None, fingerprint=fingerprint)
    elif seen.get("fingerprint") != fingerprint:
        raise ModelChangedInPlace(
            f"embedding model {name!r} has other settings (model, dimensions, passage_prefix, provider, compute, tokenizer or "
            "max_input_tokens) than the one that made this corpus' chunks and vectors, kept under its name: give the changed entry a new name in "
            "profiles/embedding_models.yml and point +embedding_model at it (its own table is built beside the "
            "live one), or restore the old settings")


def guard_deletes(plan: Plan, max_fraction: float, corpus: str, source: str, allow: bool = False) -> None:
    """Raise MassDeleteRefused when ``plan`` deletes more than ``max_fraction`` of the documents
    the corpus held, or every one of them (a source pointed at an empty or wrong folder lists
    nothing, which reads as "delete everything"). ``allow`` (``--allow-mass-delete``) lets it
    through. The message names the count, the corpus size, the source and both ways out.
    """
    deleted, known = len(plan.deleted), plan.known
    if allow or not deleted or (deleted < known and deleted <= max_fraction * known):
        return
    reason = "all of them" if deleted == known else f"over +max_delete_fraction {max_fraction:g}"
    raise MassDeleteRefused(
        f"refusing to delete {deleted} of the {known} documents of corpus {corpus!r} ({deleted / known:.0%}, "
        f"{reason}): source {source} lists {len(plan.listed)} documents. If the source is wrong, fix its location "
        "in sources.yml or the environment variable it reads; if the deletions are intended, run `rag ingest "
        "--allow-mass-delete`. Nothing was deleted.")


def plan_sweep(
    refs: Iterable[DocumentRef],
    read: Callable[..., RawDocument | None],
    store: StageStore,
    known: Iterable[str],
    profile_hash: str,
    model_name: str,
    max_bytes: int | None = None,
    seen: SeenRecords | None = None,
    keep_bytes: bool = True,
    complete: dict[str, str] | None = None,
    limits: ParseLimits | None = None,
    index_version: str | None = None,
) -> Plan:
    """Compare a listing with what the store holds and, given ``complete``, with what the index holds.

    Size and source version (mtime, ETag or a sitemap's lastmod) are a prefilter: a document whose
    source version is unchanged is not read (a listing without sizes, -1, compares the version
    alone, and one without either is read every time, or, for a ref that ``revalidates``, asked
    whether it changed since the recorded version). Otherwise its xxh3 content hash decides. A
    document also needs work when its index entry was built with another chunk profile or
    embedding model, or (given ``index_version``: the index stage's code version, which the
    orchestrator compares too) under another one: a new parser, tokenizer, input limit, index URI,
    tenant rule or tags. A document that failed with the same content, profile and model is not
    retried until one of them changes, unless its failure was a damaged stage store (``retry``), a
    parse limit that ``limits`` (the source's current parse limits) no longer sets, or a parse as
    another content type than its name now means (a format supported since). A document whose raw
    snapshot is missing from the store is read again.

    ``complete`` (from ``LanceIndex.complete_documents``: doc id -> content and profile hashes, labels)
    holds the documents whose rows in the live table are all there: a document the store records as
    indexed but that is not in it (rows deleted or lost, the table or its folder gone), or whose rows
    there hold another content or profile version or other labels (a table restored to an older
    version, from before the document, the profile, the tenant rule or tags were edited), needs work
    too, which re-writes
    its rows from the stored chunks and vectors. None skips that comparison.

    A document the source refuses, one over ``max_bytes`` (known from the listing, so it is never
    read) and one whose read raises DocumentError get an unreadable raw snapshot that carries the
    error: the stages after it fail for that document alone and its last good rows stay. Any
    other read error (the source is down) propagates: nothing of the sweep is reported.

    What was seen of each document is read from and recorded in ``seen`` (default: the store's
    ``raw`` pointers). The bytes of new and changed documents go into the store, addressed by
    their content hash (harmless to repeat), unless ``keep_bytes`` is False (a dry run).
    """
    plan = Plan()
    seen = StoreSeen(store) if seen is None else seen
    for ref in refs:
        plan.listed.append(ref.doc_id)
        raw = seen.get(ref.doc_id)
        unsized = ref.size < 0  # a listing that gives no size (a web page): its version alone decides
        if raw is None or raw["source_version"] != ref.source_version or (not unsized and raw["size"] != ref.size) or (
                unsized and not ref.source_version) or (  # no version either: read on every sweep, the hash decides
                raw.get("uri") != ref.uri) or (  # the source moved: its documents are read where they are now
                raw["key"] is None and not raw.get("too_large")) or (  # unreadable: a fix (chmod) need not touch it
                raw["key"] is not None and ref.refused) or (  # refused since it was read (a source setting)
                raw["key"] is not None and not store.has("raw", raw["key"])) or (
                raw.get("too_large") and (max_bytes is None or ref.size <= max_bytes)):  # the limit was raised
            oversize = not ref.refused and max_bytes is not None and ref.size > max_bytes
            error = ref.refused or (too_large(ref.size, max_bytes) if oversize else None)
            document, unchanged = None, False
            if error is None:
                try:
                    if ref.revalidates and raw is not None and raw["key"] is not None and raw.get("uri") == ref.uri \
                            and store.has("raw", raw["key"]):
                        document = read(ref.doc_id, raw["source_version"])
                        unchanged = document is None  # the source says the recorded bytes are current
                    else:
                        document = read(ref.doc_id)
                except DocumentError as exc:
                    error = exc.cause
                plan.hashed += not unchanged
            if document is None and not unchanged:
                record = {"key": None, "error": str(DocumentError(ref.doc_id, error)), "uri": ref.uri,
                          "size": ref.size, "source_version": ref.source_version, **({"too_large": True} if oversize else {})}
                if raw is None or raw.get("key") is not None or raw.get("error") != record["error"]:
                    plan.unreadable.append({"doc_id": ref.doc_id, **record})
                raw = record
                seen.set(ref.doc_id, raw)
            elif document is not None and (raw is None or raw["key"] != document.content_hash or not store.has(
                    "raw", raw["key"]) or raw.get("uri") != document.uri):  # reported again: rows, citations take it
                if keep_bytes:
                    store.put_bytes("raw", document.content_hash, document.data)
                record = {"key": document.content_hash, "uri": document.uri, "size": document.size,
                          "source_version": document.source_version}
                seen.set(ref.doc_id, record)
                if not seen.reported_elsewhere(ref.doc_id, record):
                    plan.snapshots.append(document)
                    plan.work.append(ref.doc_id)
                    plan.versions[ref.doc_id] = document.content_hash
                    continue
                raw = record  # reported by another sweep: the index decides, as for an unchanged document
            elif document is not None:
                raw = {**raw, "source_version": document.source_version}
                seen.set(ref.doc_id, raw)
        plan.versions[ref.doc_id] = raw["key"]
        indexed = store.current("index", ref.doc_id)
        if indexed is not None and indexed.get("error"):
            plan.failing[ref.doc_id] = indexed["error"]
        current = indexed is not None and (indexed.get("content_hash"), indexed.get("profile_hash"),
                                           indexed.get("model")) == (raw["key"], profile_hash, model_name) and (
            index_version is None or indexed.get("index_version") == index_version)
        if not current or indexed.get("retry") or (  # never indexed, or with other content/profile/model
                complete is not None and not indexed.get("error") and not made_as_recorded(complete.get(ref.doc_id), indexed)) or (
                indexed.get("error") and _parse_failed_otherwise(store, ref.doc_id, limits)):
            plan.work.append(ref.doc_id)
    live = set(plan.listed)
    seen.retain(live)
    known = list(known)
    plan.known = len(known)
    plan.deleted = sorted(d for d in known if d not in live)
    return plan


def _parse_failed_otherwise(store: StageStore, doc_id: str, limits: ParseLimits | None) -> bool:
    """True when the document's parse failed in a way a new attempt may not: over a limit other
    than ``limits`` set, or read as another content type than its name now means (a format added
    since; a failure recorded before parses recorded their type counts as one)."""
    failed = store.current("parsed", doc_id) or {}
    if not failed.get("error"):
        return False
    recorded = failed.get("limits")
    return (limits is not None and recorded is not None and recorded != limits.fingerprint()) or (
        failed.get("parsed_as") != content_type_for(doc_id) and failed.get("content_hash") is not None)


def contiguous_batches(order: list[str], wanted: Iterable[str], batch_size: int) -> list[tuple[str, str]]:
    """(first, last) partition keys of runs covering ``wanted``: each run a contiguous range of
    ``order`` holding only wanted keys, at most ``batch_size`` long."""
    wanted = set(wanted)
    batches: list[tuple[str, str]] = []
    run: list[str] = []
    for key in order:
        if key in wanted and len(run) < batch_size:
            run.append(key)
            continue
        if run:
            batches.append((run[0], run[-1]))
        run = [key] if key in wanted else []
    if run:
        batches.append((run[0], run[-1]))
    return batches
