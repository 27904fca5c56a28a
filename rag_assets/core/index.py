"""The LanceDB index: one chunks table per (corpus, embedding model, chunking profile) and a
documents manifest beside it; a registry of the tables that were complete, which queries choose from.

Writes are idempotent (row ids derive from content) and ordered so a document is never missing:
new rows are upserted first, then the document's stale rows are deleted. Every filter is built
from escaped or validated values only (``sql_str``/``sql_ids``).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Iterable

import pyarrow as pa

from rag_assets.core.errors import first_line
from rag_assets.core.hashing import row_id, settings_hash, text_hash
from rag_assets.core.keys import safe_name
from rag_assets.core.locking import table_creation_lock
from rag_assets.core.models import Chunk, EmbeddedDocument

MANIFEST_SUFFIX = "__documents"
_HEX = re.compile(r"^[0-9a-f]{1,64}$")


def sql_str(value: str) -> str:
    """A SQL string literal for a LanceDB filter: quotes doubled, NUL refused."""
    if not isinstance(value, str) or "\x00" in value:
        raise ValueError(f"invalid filter value {value!r}")
    return "'" + value.replace("'", "''") + "'"


def sql_ids(ids: Iterable[str]) -> str:
    """A SQL list of row ids, each validated as lowercase hex."""
    ids = list(ids)
    for value in ids:
        if not _HEX.match(value):
            raise ValueError(f"invalid row id {value!r}")
    return "(" + ", ".join(f"'{v}'" for v in ids) + ")"


def table_prefix(corpus: str) -> str:
    """What every table name of ``corpus`` starts with: ``<corpus>__``."""
    return safe_name(corpus) + "__"


def table_name(corpus: str, model_name: str, profile_name: str) -> str:
    """Chunks table of a corpus for one model and chunking profile: a model or profile switch
    builds a new table beside the one queries use, which can go live once it is complete."""
    return table_prefix(corpus) + safe_name(f"{model_name}__{profile_name}")


# What each column of a chunks table holds (the Dagster UI shows them as the table's columns).
ROW_COLUMNS = {
    "id": "Row id: xxh3 of the document id, chunk text hash, profile hash and start offset.",
    "doc_id": "Document id: its path under the source (the Dagster partition's document).",
    "chunk_index": "Position of the chunk in its document.",
    "text": "The chunk's text, exactly parsed_text[start:end].",
    "vector": "Embedding of the chunk (with its contextual header, or its sentence window).",
    "start": "Character offset where the chunk starts in the document's parsed text.",
    "end": "Character offset where the chunk ends (exclusive).",
    "tokens": "Model tokens embedded for the row (header included), at most the model's input limit.",
    "title": "Document title, for citations.",
    "source_uri": "Where the document lives (file://, s3:// or a web page's address).",
    "source_version": "Source version read: the file's mtime on disk, the object's ETag on S3, a web page's sitemap "
                      "lastmod or the ETag or Last-Modified the site sent.",
    "heading_path": "Headings above the chunk, joined with ' > '.",
    "page": "Page (PDF page, slide, sheet) where the chunk starts, if any.",
    "page_end": "Page where the chunk ends: its start page when it lies on one.",
    "ocr": "Whether OCR read (some of) the chunk's text from a scan or a picture: it may hold misreadings.",
    "sections": "Every heading path the chunk's text lies under (heading_path first), newline-delimited on both ends.",
    "anchor": "A web page's chunk: the id of its section's heading, which a link to the section ends with (#anchor).",
    "element_types": "Structural elements the chunk holds (Title, NarrativeText, Table, ...).",
    "strategy": "Chunking strategy that cut the chunk.",
    "window_start": "sentence_window: start of the text embedded around the sentence.",
    "window_end": "sentence_window: end of the text embedded around the sentence.",
    "content_type": "Content type the document was parsed as.",
    "content_hash": "xxh3 of the document's bytes (raw_documents' data version).",
    "chunk_profile": "Chunking profile name.",
    "profile_hash": "Fingerprint of the profile's settings (a change re-chunks).",
    "embedding_model": "Embedding model name.",
    "embed_text_hash": "xxh3 of what the vector was made from (an unchanged one is never re-embedded).",
    "tenant": "Tenant of the document (queries are always filtered by it where the source declares one).",
    "tags": "Corpus tags, then the document's own (front matter, keywords), comma-delimited on both ends.",
    "run_id": "Dagster run that wrote the row.",
    "ingested_at": "When the row was written (UTC).",
}


def chunk_schema(dimensions: int) -> pa.Schema:
    return pa.schema(
        [
            pa.field("id", pa.string(), nullable=False),
            pa.field("doc_id", pa.string(), nullable=False),
            pa.field("chunk_index", pa.int32()),
            pa.field("text", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), dimensions)),
            pa.field("start", pa.int64()),
            pa.field("end", pa.int64()),
            pa.field("tokens", pa.int32()),
            pa.field("title", pa.string()),
            pa.field("source_uri", pa.string()),
            pa.field("source_version", pa.string()),
            pa.field("heading_path", pa.string()),
            pa.field("page", pa.int32()),
            pa.field("element_types", pa.string()),
            pa.field("strategy", pa.string()),
            pa.field("window_start", pa.int64()),
            pa.field("window_end", pa.int64()),
            pa.field("content_type", pa.string()),
            pa.field("content_hash", pa.string()),
            pa.field("chunk_profile", pa.string()),
            pa.field("profile_hash", pa.string()),
            pa.field("embedding_model", pa.string()),
            pa.field("embed_text_hash", pa.string()),
            pa.field("tenant", pa.string()),
            pa.field("tags", pa.string()),
            pa.field("run_id", pa.string()),
            pa.field("ingested_at", pa.timestamp("us", tz="UTC")),
            # Columns added since tables were first written, last (``ADDED_COLUMNS``).
            pa.field("page_end", pa.int32()),
            pa.field("ocr", pa.bool_()),
            pa.field("sections", pa.string()),
            pa.field("anchor", pa.string()),
        ]
    )


# Columns of ``chunk_schema`` that a table written before them lacks, with the SQL expression that
# fills them in its rows when the next write adds them (``LanceIndex.upgrade``).
ADDED_COLUMNS = {"page_end": "page", "ocr": "false", "sections": "concat(chr(10), heading_path, chr(10))",
                 "anchor": "CAST(NULL AS STRING)"}


MANIFEST_SCHEMA = pa.schema(
    [
        pa.field("doc_id", pa.string(), nullable=False),
        pa.field("content_hash", pa.string()),
        pa.field("source_version", pa.string()),
        pa.field("source_uri", pa.string()),
        pa.field("profile_hash", pa.string()),
        pa.field("embedding_model", pa.string()),
        pa.field("chunks", pa.int32()),
        pa.field("run_id", pa.string()),
        pa.field("table_version", pa.int64()),
        pa.field("updated_at", pa.timestamp("us", tz="UTC")),
        # Added since manifests were first written (null in their entries): ``row_labels`` of the rows.
        pa.field("labels", pa.string()),
    ]
)

ACTIVE_SCHEMA = pa.schema(
    [
        pa.field("table", pa.string(), nullable=False),
        pa.field("model", pa.string()),
        pa.field("profile", pa.string()),
        pa.field("documents", pa.int64()),
        pa.field("completed_at", pa.timestamp("us", tz="UTC")),
    ]
)


def row_labels(tenant: str | None, tags: str, source_uri: str) -> str:
    """What a document's rows carry besides its chunks (their ``tenant``, ``tags`` and
    ``source_uri`` columns), as one hash: rows of the same content and profile labelled otherwise
    (a table restored to before a tenant rule, tags or the source's address changed) are not the
    rows the config makes."""
    return settings_hash([tenant, tags, source_uri])


def tags_column(chunked_tags: Iterable[str], tags: tuple[str, ...]) -> str:
    """The ``tags`` column of a document's rows: the corpus' ``tags`` and the document's own."""
    both = tuple(dict.fromkeys((*tags, *chunked_tags)))
    return "," + ",".join(both) + "," if both else ""


def document_rows(doc: EmbeddedDocument, tenant: str | None, run_id: str, tags: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Index rows of one embedded document (deterministic ids, full lineage on each row); their
    tags are the corpus' ``tags`` and the document's own."""
    chunked = doc.chunked
    now = datetime.now(timezone.utc)
    tags_value = tags_column(chunked.tags, tags)
    rows = []
    for chunk, vector in zip(chunked.chunks, doc.vectors, strict=True):
        rows.append(
            {
                "id": row_id(chunked.doc_id, text_hash(chunk.text), chunked.profile_hash, chunk.start),
                "doc_id": chunked.doc_id,
                "chunk_index": chunk.chunk_index,
                "text": chunk.text,
                "vector": list(vector),
                "start": chunk.start,
                "end": chunk.end,
                "tokens": chunk.tokens,
                "title": chunked.title,
                "source_uri": chunked.uri,
                "source_version": chunked.source_version,
                "heading_path": " > ".join(chunk.heading_path),
                "page": chunk.page,
                "page_end": chunk.page_end,
                "ocr": chunk.ocr,
                "sections": "\n" + "\n".join(chunk.sections or [" > ".join(chunk.heading_path)]) + "\n",
                "anchor": chunk.anchor,
                "element_types": ",".join(chunk.element_types),
                "strategy": chunk.strategy,
                "window_start": chunk.window_start,
                "window_end": chunk.window_end,
                "content_type": chunked.content_type,
                "content_hash": chunked.content_hash,
                "chunk_profile": chunked.profile,
                "profile_hash": chunked.profile_hash,
                "embedding_model": doc.model,
                # what the vector was made from: the text, and a header and sentence embedded apart
                "embed_text_hash": text_hash(embedded_from(chunk)),
                "tenant": tenant,
                "tags": tags_value,
                "run_id": run_id,
                "ingested_at": now,
            }
        )
    return rows


def embedded_from(chunk: Chunk) -> str:
    """What a row's vector was made from, as one string: the embedded text, and the header and
    sentence embedded apart when there are any (unchanged for rows that have neither)."""
    if not (chunk.header or chunk.sentence):
        return chunk.embed_text
    return "\0".join([chunk.header, chunk.embed_text, *([chunk.sentence] if chunk.sentence else [])])


@dataclass(frozen=True)
class TableVersion:
    """One version of a LanceDB table: what ``rag restore --as-of`` can go back to."""

    version: int
    timestamp: datetime
    rows: int


@dataclass(frozen=True)
class WriteResult:
    rows_written: int
    rows_deleted: int
    table_version: int
    labels: str  # row_labels of the document's rows


class TableMissing(LookupError):
    """A table that a read asked for does not exist (nothing was written to it yet)."""


def open_existing(db, name: str):
    """Table ``name`` of ``db``, for reads: never created; raises TableMissing when absent."""
    try:
        return db.open_table(name)
    except ValueError as exc:
        if "not found" not in str(exc):
            raise
        raise TableMissing(f"no table {name} in the LanceDB at {db.uri}") from exc


def open_or_create(db, name: str, schema: pa.Schema):
    """Table ``name`` of ``db``, created empty with ``schema`` when missing: under
    ``table_creation_lock``, so concurrent first writers share one table instead of one emptying
    the other's."""
    try:
        return open_existing(db, name)
    except TableMissing:
        with table_creation_lock(db.uri, name):
            return db.create_table(name, schema=schema, exist_ok=True)


class LanceIndex:
    """One corpus' chunks table (for one model and profile) and its documents manifest, in one LanceDB."""

    def __init__(self, db, corpus: str, model_name: str, dimensions: int, profile_name: str):
        self.db = db
        self.name = table_name(corpus, model_name, profile_name)
        self.manifest_name = self.name + MANIFEST_SUFFIX
        self.dimensions = dimensions
        self._opened = None

    def table(self):
        if self._opened is not None:
            return self._opened
        return open_or_create(self.db, self.name, chunk_schema(self.dimensions))

    def pinned(self) -> LanceIndex:
        """This index with its chunks table opened once, now, for reads: every read through it sees
        that table version (one query's searches agree with each other), and none opens it again.
        Creates nothing: raises TableMissing where the table was never written."""
        view = copy.copy(self)
        view._opened = self._opened if self._opened is not None else open_existing(self.db, self.name)
        return view

    def manifest(self):
        return open_or_create(self.db, self.manifest_name, MANIFEST_SCHEMA)

    def _manifest_for_writing(self):
        """The manifest with every column of MANIFEST_SCHEMA (``labels`` is added, null, to one
        written before it), under the table's creation lock so that concurrent writers add it once."""
        manifest = self.manifest()
        if "labels" in manifest.schema.names:
            return manifest
        with table_creation_lock(self.db.uri, self.manifest_name):
            manifest = self.db.open_table(self.manifest_name)
            if "labels" not in manifest.schema.names:
                manifest.add_columns({"labels": "CAST(NULL AS STRING)"})
        return manifest

    def ensure_search_indexes(self, ann_min_rows: int) -> list[str]:
        """Full-text index on the chunk text; a B-tree on ``doc_id``, which every per-document read
        filters on (a result's sentences, section or whole document; upserts and deletes); an ANN
        vector index once the table has ``ann_min_rows`` rows (exact search below that). Returns
        what was built."""
        from lancedb.index import FTS, BTree, IvfPq

        table = self.table()
        existing = {tuple(i.columns) for i in table.list_indices()}
        built = []
        rows = table.count_rows()
        if rows and ("text",) not in existing:
            table.create_index("text", config=FTS())
            built.append("fts:text")
        if rows and ("doc_id",) not in existing:
            table.create_index("doc_id", config=BTree())
            built.append("btree:doc_id")
        if rows >= ann_min_rows and ("vector",) not in existing:
            partitions = max(1, int(rows ** 0.5) // 4)
            table.create_index("vector", config=IvfPq(distance_type="cosine", num_partitions=partitions,
                                                      num_sub_vectors=max(1, self.dimensions // 16)))
            built.append("ivf_pq:vector")
        return built

    def write_documents(self, docs: list[EmbeddedDocument], tenant, run_id: str,
                        tags: tuple[str, ...] = ()) -> dict[str, WriteResult]:
        """Write a batch of documents in one commit that inserts their new rows, updates the kept
        ones and deletes their stale ones (a reader sees each document's old rows or its new ones,
        never both), then record the documents in the manifest. Never the reverse order: a crash
        between the steps leaves an unrecorded write (redone on the next run), never a document
        without rows."""
        if not docs:
            return {}
        table = self.upgrade()
        doc_ids = [d.chunked.doc_id for d in docs]
        old: dict[str, set[str]] = {d: set() for d in doc_ids}
        for i in range(0, len(doc_ids), 200):
            where = "doc_id IN (" + ", ".join(sql_str(d) for d in doc_ids[i : i + 200]) + ")"
            for row in table.search().where(where).select(["doc_id", "id"]).limit(None).to_arrow().to_pylist():
                old.setdefault(row["doc_id"], set()).add(row["id"])
        tenants = {d.chunked.doc_id: tenant(d.chunked.doc_id) if callable(tenant) else tenant for d in docs}
        rows_by_doc = {d.chunked.doc_id: document_rows(d, tenants[d.chunked.doc_id], run_id, tags) for d in docs}
        labels = {d.chunked.doc_id: row_labels(tenants[d.chunked.doc_id], tags_column(d.chunked.tags, tags),
                                               d.chunked.uri) for d in docs}
        rows = [r for doc_rows in rows_by_doc.values() for r in doc_rows]
        data = pa.Table.from_pylist(rows, schema=chunk_schema(self.dimensions))
        # The batch's rows not in ``data`` are its stale rows: deleted in the same commit.
        batch = "doc_id IN (" + ", ".join(sql_str(d) for d in doc_ids) + ")"
        for attempt in range(3):
            try:
                table.merge_insert("id").when_matched_update_all().when_not_matched_insert_all() \
                    .when_not_matched_by_source_delete(batch).execute(data)
                break
            except RuntimeError as error:  # another process created the table under us (unlocked store)
                if "concurrent transaction Overwrite" not in str(error) or attempt == 2:
                    raise
                table = self.table()
        version = table.version
        self._record(docs, run_id, version, labels)
        return {
            doc_id: WriteResult(len(rows_by_doc[doc_id]), len(old[doc_id] - {r["id"] for r in rows_by_doc[doc_id]}),
                                version, labels[doc_id])
            for doc_id in doc_ids
        }

    def upgrade(self):
        """The chunks table for writing, with every column of ``chunk_schema``: one written
        before a column was added gets it (``ADDED_COLUMNS``' expression fills its rows), under
        the table's creation lock so that concurrent writers add it once."""
        table = self.table()
        if set(ADDED_COLUMNS) <= set(table.schema.names):
            return table
        with table_creation_lock(self.db.uri, self.name):
            table = self.db.open_table(self.name)  # as the last writer left it
            missing = {name: fill for name, fill in ADDED_COLUMNS.items() if name not in table.schema.names}
            if missing:
                table.add_columns(missing)
        return table

    def _record(self, docs: list[EmbeddedDocument], run_id: str, table_version: int, labels: dict[str, str]) -> None:
        now = datetime.now(timezone.utc)
        entries = [
            {
                "doc_id": doc.chunked.doc_id,
                "content_hash": doc.chunked.content_hash,
                "source_version": doc.chunked.source_version,
                "source_uri": doc.chunked.uri,
                "profile_hash": doc.chunked.profile_hash,
                "embedding_model": doc.model,
                "chunks": len(doc.chunked.chunks),
                "run_id": run_id,
                "table_version": table_version,
                "updated_at": now,
                "labels": labels[doc.chunked.doc_id],
            }
            for doc in docs
        ]
        self._manifest_for_writing().merge_insert("doc_id").when_matched_update_all().when_not_matched_insert_all().execute(
            pa.Table.from_pylist(entries, schema=MANIFEST_SCHEMA)
        )

    def delete_document(self, doc_id: str) -> int:
        """Remove a deleted document's rows and manifest entry; returns rows removed."""
        where = f"doc_id = {sql_str(doc_id)}"
        table = self.table()
        removed = table.count_rows(where)
        table.delete(where)
        self.manifest().delete(where)
        return removed

    def indexed_documents(self) -> dict[str, dict[str, Any]]:
        """Manifest entries by doc id: what the index holds and from which content."""
        rows = self.manifest().to_arrow().to_pylist()
        return {row["doc_id"]: row for row in rows}

    def row(self, row_id: str, version: int | None = None) -> dict[str, Any] | None:
        """One row by id (at table ``version`` when given), without its vector: the columns that
        version has (one written before a column was added lacks it)."""
        table = self.table()
        if version is not None:
            table.checkout(version)
        columns = [name for name in table.schema.names if name != "vector"]
        rows = table.search().where(f"id IN {sql_ids([row_id])}").select(columns).limit(1).to_list()
        return rows[0] if rows else None

    def manifest_entry(self, doc_id: str) -> dict[str, Any] | None:
        rows = self.manifest().search().where(f"doc_id = {sql_str(doc_id)}").limit(1).to_list()
        return rows[0] if rows else None

    def rows_per_document(self) -> dict[str, int]:
        """Rows in the live chunks table, by doc id (one scan of the doc_id column)."""
        rows = self.table().search().select(["doc_id"]).limit(None).to_arrow()
        return {r["doc_id"]: r["doc_id_count"] for r in rows.group_by("doc_id").aggregate(
            [("doc_id", "count")]).to_pylist()}

    def complete_documents(self) -> dict[str, tuple[str, str, str | None]]:
        """Documents whose rows are all in the live table, with the content and profile hashes and
        the labels (``row_labels``) of those rows: the manifest records them and the table holds exactly as many rows as the
        manifest's chunk count. A table or manifest
        that is missing (its folder lost) is recreated empty, so nothing is complete; one that
        cannot be read raises IndexUnreadable."""
        try:
            manifest, rows = self.indexed_documents(), self.rows_per_document()
        except Exception as exc:  # lance raises RuntimeError/OSError/ValueError for damaged data
            raise self.unreadable(exc) from exc
        return complete_documents(manifest, rows)

    def unreadable(self, exc: Exception) -> "IndexUnreadable":
        """The error for ``exc``, raised reading or writing this table: its path and the fix."""
        return IndexUnreadable(
            f"cannot read the LanceDB table {self.name} or its manifest at {self.db.uri} "
            f"({type(exc).__name__}: {first_line(exc)}); if the disk is full, free space; "
            f"if the table is damaged, move {self.db.uri}/{self.name}.lance aside: the next `rag ingest` "
            "rebuilds it from the stored chunks and vectors")

    def optimize(self) -> None:
        """Compact small fragments and drop old versions' unreferenced files (LanceDB optimize)."""
        self.table().optimize()

    def versions(self) -> list[TableVersion]:
        """Every version of the chunks table still on disk (``optimize`` removes those older than
        LanceDB's cleanup age, 7 days by default), oldest first."""
        return [TableVersion(v["version"], v["timestamp"], int(v["metadata"].get("total_rows", 0)))
                for v in self._existing(self.name).list_versions()]

    def require_version(self, version: int) -> None:
        """Raise ValueError naming the versions there are when ``version`` of the chunks table is
        not on disk (never written, or removed by ``optimize``)."""
        versions = [v.version for v in self.versions()]
        if version not in versions:
            raise ValueError(f"table {self.name} has no version {version}; it has versions {min(versions)} to "
                             f"{max(versions)} (`rag restore --corpus CORPUS` lists them with their row counts)")

    def restore(self, version: int) -> TableVersion:
        """Make ``version`` of the chunks table the latest again (LanceDB's own restore: a new
        version with that version's rows, nothing copied), then rebuild the documents manifest
        from the restored rows, so rows deleted since come back with their manifest entries.
        Returns the new latest version. Raises ValueError naming the versions there are when
        ``version`` is not one of them (``require_version``)."""
        self.require_version(version)
        self._existing(self.name).restore(version)
        self.rebuild_manifest()
        return self.versions()[-1]

    def rebuild_manifest(self) -> int:
        """Replace the documents manifest with what the chunks table holds (one entry per doc id,
        ``chunks`` = its row count, lineage from its rows); returns the documents recorded."""
        table = self.table()
        columns = ["doc_id", "content_hash", "source_version", "source_uri", "profile_hash", "embedding_model",
                   "run_id", "tenant", "tags"]
        rows = table.search().select(columns).limit(None).to_arrow()
        counts = {r["doc_id"]: r["doc_id_count"] for r in rows.group_by("doc_id").aggregate(
            [("doc_id", "count")]).to_pylist()}
        now = datetime.now(timezone.utc)
        entries = {}
        for row in rows.to_pylist():
            entries[row["doc_id"]] = {**row, "chunks": counts[row["doc_id"]], "table_version": table.version,
                                      "updated_at": now,
                                      "labels": row_labels(row["tenant"], row["tags"], row["source_uri"])}
        manifest = self._manifest_for_writing()
        manifest.delete("true")
        if entries:
            manifest.add(pa.Table.from_pylist(list(entries.values()), schema=MANIFEST_SCHEMA))
        return len(entries)

    def _existing(self, name: str):
        try:
            return self.db.open_table(name)
        except ValueError as exc:
            raise ValueError(f"no table {name} in the LanceDB at {self.db.uri}: nothing to restore (has this "
                             "corpus been ingested with this embedding model and chunking profile?)") from exc

    def count_doc_rows(self, doc_id: str) -> int:
        return self.table().count_rows(f"doc_id = {sql_str(doc_id)}")

    def count_rows(self) -> int:
        return self.table().count_rows()

    def version(self) -> int:
        return self.table().version


class IndexUnreadable(RuntimeError):
    """The corpus' table exists but cannot be read; the message names it and the fix."""


def complete_documents(manifest: dict[str, dict[str, Any]],
                       rows: dict[str, int]) -> dict[str, tuple[str, str, str | None]]:
    """The documents of ``manifest`` (doc id -> entry with ``chunks``, ``content_hash``,
    ``profile_hash`` and ``labels``) whose row count in ``rows`` (doc id -> rows in the table)
    equals their recorded chunk count, each with what its rows were made from: (content hash,
    profile hash, labels; None in an entry written before labels were recorded).
    The one rule for "this document's rows are all there", used by planning and by the data tests
    (which also compare it with the stage store's record, ``made_as_recorded``: rows of an older
    version of the document, of the profile or of their labels, after ``rag restore``, are not the
    document's)."""
    return {doc_id: (entry["content_hash"], entry["profile_hash"], entry.get("labels"))
            for doc_id, entry in manifest.items() if rows.get(doc_id, 0) == entry["chunks"]}


def made_as_recorded(held: tuple[str, str, str | None] | None, record: dict[str, Any]) -> bool:
    """Whether a document's rows in a table (``held``, from ``complete_documents``; None: not
    all there) are the ones the stage store's ``index`` ``record`` says were written: the same
    content, profile and labels (labels compared where both sides recorded them)."""
    if held is None:
        return False
    made = (record.get("content_hash"), record.get("profile_hash"), record.get("labels"))
    return held == made if None not in (held[2], made[2]) else held[:2] == made[:2]


def documents_lacking(manifest: dict[str, dict[str, Any]], current: dict[str, str | None]) -> list[str]:
    """The documents of ``current`` (doc id -> content hash the source holds now) that
    ``manifest`` (a table's, ``indexed_documents``) lacks, or holds another version of: a table
    switched back to may hold an older version of a document. Sorted."""
    return sorted(doc_id for doc_id, key in current.items()
                  if doc_id not in manifest or manifest[doc_id]["content_hash"] != key)


def active_table(db, corpus: str) -> str:
    return table_prefix(corpus) + "live_tables"


def _registry(db, corpus: str):
    """The corpus' registry of complete tables, created empty if it does not exist yet."""
    return open_or_create(db, active_table(db, corpus), ACTIVE_SCHEMA)


def mark_active(index: LanceIndex, corpus: str, model_name: str, profile_name: str, documents: int) -> None:
    """Record that ``index`` (``model_name`` with ``profile_name``) holds every live document:
    queries may switch to it."""
    entry = {"table": index.name, "model": model_name, "profile": profile_name, "documents": documents,
             "completed_at": datetime.now(timezone.utc)}
    _registry(index.db, corpus).merge_insert("table").when_matched_update_all().when_not_matched_insert_all().execute(
        pa.Table.from_pylist([entry], schema=ACTIVE_SCHEMA))


def active_entries(db, corpus: str) -> list[dict[str, Any]]:
    """The registry's entries (table, model, profile, documents, completed_at) of the tables that
    were complete, most recently completed first."""
    try:
        registry = open_existing(db, active_table(db, corpus))
    except TableMissing:  # no table was ever complete; a read creates nothing
        return []
    return sorted(registry.to_arrow().to_pylist(), key=lambda r: r["completed_at"], reverse=True)


def active_pairs(db, corpus: str) -> list[tuple[str, str]]:
    """(model, profile) of the tables that were complete, most recently completed first."""
    return [(r["model"], r["profile"]) for r in active_entries(db, corpus)]


def drop_table(db, corpus: str, name: str) -> None:
    """Drop the chunks table ``name`` of ``corpus``, its documents manifest and its registry entry,
    the entry first: queries never choose a table that is being dropped."""
    _registry(db, corpus).delete(f"table = {sql_str(name)}")
    for table in (name, name + MANIFEST_SUFFIX):
        db.drop_table(table, ignore_missing=True)


def _table_names(db) -> list[str]:
    names, token = [], None
    while True:
        page = db.list_tables(page_token=token)
        names.extend(page.tables)
        token = page.page_token
        if not token or not page.tables:
            return names


def open_tables(db, prefix: str = "") -> dict[str, Any]:
    """The tables of ``db`` whose names start with ``prefix``, by name, opened. An object store that
    keeps empty folders (SeaweedFS) still lists a dropped table's folder: a name that does not open
    is no table."""
    tables = {}
    for name in (n for n in _table_names(db) if n.startswith(prefix)):
        try:
            tables[name] = db.open_table(name)
        except ValueError:
            continue
    return tables


def unreadable_tables(db) -> list[str]:
    """The tables of ``db`` that cannot be opened or read through (a damaged or cut manifest or
    data file), by name: each is read one column, every fragment, so this costs a scan of that
    column; for naming what to move aside after an error, not for a run's hot path."""
    bad = []
    for name in _table_names(db):
        try:
            table = db.open_table(name)
        except ValueError:  # a dropped table's folder an object store still lists
            continue
        except Exception:  # lance raises RuntimeError/OSError for damaged data
            bad.append(name)
            continue
        if not reads_through(table):
            bad.append(name)
    return bad


def reads_through(table) -> bool:
    """Whether every fragment of ``table`` reads (its first column, scanned) and each of its search
    indexes answers a one-row query: a data or index file lost or cut fails it, though the manifest
    still opens and counts the rows."""
    try:
        table.search().select(table.schema.names[:1]).limit(None).to_arrow()
        for index in table.list_indices():
            column = index.columns[0]
            if index.index_type == "FTS":
                query = table.search("index", query_type="fts", fts_columns=column)
            elif index.index_type in ("BTree", "Bitmap", "LabelList"):
                if column != "doc_id":  # the one scalar index the product builds
                    continue
                query = table.search().where("doc_id IS NOT NULL")
            else:  # a vector index
                query = table.search([0.0] * table.schema.field(column).type.list_size, vector_column_name=column)
            query.select([column]).limit(1).to_arrow()
    except Exception:  # lance raises RuntimeError/OSError for damaged data
        return False
    return True
