"""Answer a query against a corpus' index, and trace index rows back to their source.

Queries use the configured embedding model's table once it holds every live document; while a
new model's table is still being built, they stay on the last complete one (whose model embeds
the query), so a model change never serves a half-built index.
"""

from __future__ import annotations

from typing import Sequence

from rag_assets.clients import connect_index, open_embedder
from rag_assets.config import Corpus, Project
from rag_assets.config.schema import ChunkingProfileConfig, EmbeddingModelConfig, IndexConfig
from rag_assets.core.index import LanceIndex, active_models
from rag_assets.core.retrieval import Filters, Hit, search


def has_tenants(corpus: Corpus) -> bool:
    return bool(corpus.source.tenant or corpus.source.tenant_from_path)


def serving_model(project: Project, corpus: Corpus, db) -> EmbeddingModelConfig:
    """The model whose table queries use (see module docstring)."""
    declared = {m.name: m for m in project.embedding_models}
    complete = [name for name in active_models(db, corpus.name) if name in declared]
    if not complete or corpus.embedding_model.name in complete:
        return corpus.embedding_model
    return declared[complete[0]]


class TenantRequired(ValueError):
    """A query on a corpus with tenants that names none."""


def query_corpus(project: Project, corpus: Corpus, text: str, k: int = 5, as_of: int | None = None,
                 mode: str = "hybrid", filters: Filters = Filters(), rerank: str = "rrf",
                 neighbours: int = 0) -> list[Hit]:
    """Top ``k`` chunks of ``corpus`` for ``text`` (at table version ``as_of`` when given);
    empty when the corpus has no index yet. Raises TenantRequired where the corpus declares
    tenants and ``filters.tenant`` is unset: only that tenant's rows can come back."""
    if has_tenants(corpus) and not filters.tenant:
        raise TenantRequired(f"corpus {corpus.name!r} has tenants: name one with --tenant")
    if corpus.embedding_model.provider == "local" and mode != "fts":
        open_embedder(corpus.embedding_model).start_loading()  # while LanceDB is imported and opened
    db = connect_index(corpus)
    model = serving_model(project, corpus, db)
    embedder = open_embedder(model)
    index = LanceIndex(db, corpus.name, model.name, model.dimensions)
    if index.count_rows() == 0:
        return []
    vector = embedder.embed([model.query_prefix + text])[0] if mode != "fts" else None
    return retrieve(index, text, vector, corpus.chunking_profile, corpus.index, ks=(k,), mode=mode, filters=filters,
                    rerank=rerank, neighbours=neighbours, version=as_of)[k]


def retrieve(index: LanceIndex, text: str, vector: list[float] | None, profile: ChunkingProfileConfig,
             settings: IndexConfig, ks: Sequence[int] = (5,), mode: str = "hybrid", filters: Filters = Filters(),
             rerank: str = "rrf", neighbours: int = 0, version: int | None = None) -> dict[int, list[Hit]]:
    """The results of ``text`` (embedded as ``vector``) from ``index``, chunked with ``profile``,
    under the index settings ``settings``, for each number of results in ``ks`` (by that number):
    the one retrieval path of `rag query`, `rag eval` and the retrieval_eval asset, so evaluation
    scores exactly the spans a user gets."""
    grouped = profile.strategy == "sentence_window" and profile.group_gap > 0
    return search(index, text, vector, ks=ks, mode=mode, filters=filters,
                  candidates=profile.group_candidates if grouped else settings.search_candidates,
                  rerank=rerank, neighbours=neighbours, version=version,
                  whole_document_tokens=settings.whole_document_tokens,
                  group_gap=profile.group_gap if grouped else 0, score_margin=profile.score_margin,
                  group_context=profile.group_context, lone_hit_context=profile.lone_hit_context,
                  group_margin=profile.group_margin, min_result_chars=profile.min_result_chars)


def lineage(project: Project, row_id: str) -> dict | None:
    """Where an index row came from: source, versions, profile, model, run and table version."""
    for corpus in project.corpora:
        db = connect_index(corpus)
        for model in project.embedding_models:
            index = LanceIndex(db, corpus.name, model.name, model.dimensions)
            if index.name not in db.list_tables().tables:
                continue
            row = index.row(row_id)
            if row is None:
                continue
            entry = index.manifest_entry(row["doc_id"]) or {}
            return {
                "row_id": row_id, "corpus": corpus.name, "table": index.name, "doc_id": row["doc_id"],
                "source_uri": row["source_uri"], "source_version": row["source_version"],
                "content_hash": row["content_hash"], "chunk_profile": row["chunk_profile"],
                "profile_hash": row["profile_hash"], "strategy": row["strategy"],
                "embedding_model": row["embedding_model"], "run_id": row["run_id"],
                "ingested_at": row["ingested_at"].isoformat() if row["ingested_at"] else None,
                "table_version": entry.get("table_version") if entry.get("run_id") == row["run_id"] else None,
                "current_table_version": index.version(), "start": row["start"], "end": row["end"],
                "chunk_index": row["chunk_index"], "heading_path": row["heading_path"],
            }
    return None
