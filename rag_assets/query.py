"""Answer a query against a corpus' index, and trace index rows back to their source.

Queries use the table of the corpus' configured embedding model and chunking profile once it holds
every live document (and passed the ``+promote_if`` gate); while a new model's or profile's table
is still being built or is held back, they stay on the last complete one (whose model embeds the
query and whose profile's query-time settings apply), so a switch never serves a half-built index.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Sequence

from rag_assets.clients import CorpusTable, connect_index, late_interaction_model, open_embedder, own_table
from rag_assets.config import Corpus, Project
from rag_assets.config.schema import ChunkingProfileConfig, IndexConfig
from rag_assets.core.embedding import InputTooLong
from rag_assets.core.index import LanceIndex, TableMissing, active_entries, active_pairs, open_tables, table_prefix
from rag_assets.core.links import published_link
from rag_assets.core.retrieval import MAX_RESULTS, Filters, Grouping, Hit, LateInteraction, search
from rag_assets.core.tokens import get_token_counter


def has_tenants(corpus: Corpus) -> bool:
    return bool(corpus.source.tenant or corpus.source.tenant_from_path)


def serving(project: Project, corpus: Corpus, db) -> CorpusTable:
    """The table queries use (see module docstring): the most recently complete one while its model
    and profile are still declared, else the corpus' own. Only that table is kept current: a table
    that served before another went live lacks what changed since (new, edited and deleted
    documents), so switching back to it serves it again only once it is complete again."""
    return _serving(project, corpus, active_pairs(db, corpus.name))


def _serving(project: Project, corpus: Corpus, entries: list[tuple[str, str]]) -> CorpusTable:
    """``serving``, given the registry's (model, profile) entries, most recently complete first."""
    own = own_table(corpus)
    if not entries or entries[0] == (own.model.name, own.profile.name):
        return own
    models = {m.name: m for m in project.embedding_models}
    profiles = {p.name: p for p in project.chunking_profiles}
    model, profile = entries[0]
    return CorpusTable(models[model], profiles[profile]) if model in models and profile in profiles else own


def unserved(project: Project, corpus: Corpus, db, rows: bool = True) -> str | None:
    """Why no table can answer the corpus' queries until the next ingest, or None: the table
    completed last has a model or profile no longer declared (renamed or removed), so it cannot be
    queried, and every older table lacks what changed since it went live; or (with ``rows``) the
    table queries use holds no rows (``no_rows``)."""
    registered = active_entries(db, corpus.name)
    entries = [(entry["model"], entry["profile"]) for entry in registered]
    own = own_table(corpus)
    if entries and entries[0] != (own.model.name, own.profile.name):
        model, profile = entries[0]
        declared = model in {m.name for m in project.embedding_models}
        if not (declared and profile in {p.name for p in project.chunking_profiles}):  # else it serves meanwhile
            gone = f"profile {profile!r} (profiles/chunking.yml)" if declared \
                else f"embedding model {model!r} (profiles/embedding_models.yml)"
            return (f"corpus {corpus.name!r}: the table that served its queries ({model} / {profile}) is no longer "
                    f"declared and the configured one ({own.label}) is not live yet: run rag ingest, which makes it "
                    f"live once it holds every document (or declare {gone} again). Older tables are not served: they "
                    "lack what changed since.")
    if not rows:
        return None
    served = _serving(project, corpus, entries)  # the registry as read above, not read again
    try:
        if served.index(db, corpus.name).pinned().count_rows():
            return None
    except TableMissing:
        pass
    if registered and registered[0]["documents"] == 0:  # completed, and the source listed nothing
        return (f"corpus {corpus.name!r} holds no documents: its source listed none at the last ingest; add "
                "documents there (or fix the source's path, include and exclude in sources.yml), then run rag ingest")
    return no_rows(corpus, served)


def no_rows(corpus: Corpus, served: CorpusTable) -> str:
    """Why queries find nothing where the table they use holds no rows."""
    return (f"corpus {corpus.name!r}: the table queries use ({served.label}) holds no rows (nothing ingested yet, or "
            f"its LanceDB folder {corpus.index_uri} was deleted, moved or emptied): run rag ingest")


class TenantRequired(ValueError):
    """A query on a corpus with tenants that names none."""


class NotIngested(LookupError):
    """A query on a corpus whose serving table holds no rows yet (or that ``unserved`` names)."""


def query_corpus(project: Project, corpus: Corpus, text: str, k: int = 5, as_of: int | None = None,
                 mode: str = "hybrid", filters: Filters = Filters(), rerank: str = "rrf",
                 neighbours: int = 0) -> list[Hit]:
    """Top ``k`` chunks of ``corpus`` for ``text`` (at table version ``as_of`` when given).
    Raises NotIngested where the corpus has no rows yet; TenantRequired where the corpus declares
    tenants and ``filters.tenant`` is unset: only that tenant's rows can come back; ValueError for
    an empty ``text``, ``k`` < 1, ``neighbours`` < 0, either over MAX_RESULTS, an ``as_of``
    version the table lacks, and for ``neighbours`` where the serving profile groups sentences
    (it widens its results itself)."""
    if not text.strip():
        raise ValueError('the query is empty: ask a question, e.g. rag query "refund policy"')
    if not (1 <= k <= MAX_RESULTS and 0 <= neighbours <= MAX_RESULTS):
        raise ValueError(f"ask for 1 to {MAX_RESULTS} results and an expansion of 0 to {MAX_RESULTS} chunks "
                         f"(got k={k}, expand={neighbours})")
    if has_tenants(corpus) and not filters.tenant:
        raise TenantRequired(f"corpus {corpus.name!r} has tenants: name one with --tenant")
    if filters.tenant and not has_tenants(corpus):
        raise ValueError(f"corpus {corpus.name!r} declares no tenants: drop --tenant (or declare tenant or "
                         "tenant_from_path on its source in sources.yml)")
    if corpus.embedding_model.provider == "local" and mode != "fts":
        open_embedder(corpus.embedding_model).start_loading()  # while LanceDB is imported and opened
    if corpus.chunking_profile.late_interaction_weight:
        late_interaction_model().start_loading()  # the reranker's session, likewise
    db = connect_index(corpus)
    live = serving(project, corpus, db)
    if (reason := unserved(project, corpus, db, rows=False)) is not None:
        raise NotIngested(reason)
    if neighbours and live.profile.strategy == "sentence_window" and live.profile.group_gap > 0:
        raise ValueError(f"--expand adds neighbouring chunks, and profile {live.profile.name!r} returns groups of "
                         "sentences widened by its own group_context, paragraph_chars and section_chars: "
                         "drop --expand (or raise those settings in profiles/chunking.yml)")
    model = live.model
    embedder = open_embedder(model)
    try:  # a query creates nothing, and its search reads the version checked here
        index = live.index(db, corpus.name).pinned()
    except TableMissing:
        index = None
    if index is None or index.count_rows() == 0:
        raise NotIngested(unserved(project, corpus, db) or no_rows(corpus, live))
    if as_of is not None:
        index.require_version(as_of)
    try:
        vector = embedder.embed([model.query_prefix + text])[0] if mode != "fts" else None
    except InputTooLong as exc:
        tokens = get_token_counter(model.tokenizer).count(model.query_prefix + text)
        raise ValueError(f"the query is {tokens} tokens; {model.model} reads at most {model.max_input_tokens}: "
                         "shorten it, or search its words alone with --mode fts") from exc
    hits = retrieve(index, text, vector, live.profile, corpus.index, get_token_counter(model.tokenizer).count,
                    ks=(k,), mode=mode, filters=filters, rerank=rerank, neighbours=neighbours, version=as_of)[k]
    template = corpus.source.link_template
    if template is None:
        return hits
    return [replace(hit, link=published_link(template, hit.doc_id, hit.anchor, hit.heading_path.rsplit(" > ", 1)[-1],
                                             hit.content_type, hit.page, corpus.source.heading_anchors))
            for hit in hits]


def retrieve(index: LanceIndex, text: str, vector: list[float] | None, profile: ChunkingProfileConfig,
             settings: IndexConfig, count_tokens: Callable[[str], int], ks: Sequence[int] = (5,),
             mode: str = "hybrid", filters: Filters = Filters(), rerank: str = "rrf", neighbours: int = 0,
             version: int | None = None, wholes: dict[str, Hit | None] | None = None) -> dict[int, list[Hit]]:
    """The results of ``text`` (embedded as ``vector``) from ``index``, chunked with ``profile``,
    under the index settings ``settings`` (documents' tokens counted by ``count_tokens``, the
    model's tokenizer), for each number of results in ``ks`` (by that number):
    the one retrieval path of `rag query`, `rag eval` and the retrieval_eval asset, so evaluation
    scores exactly the spans a user gets. ``wholes``: see ``search``."""
    grouped = profile.strategy == "sentence_window" and profile.group_gap > 0
    grouping = Grouping(gap=profile.group_gap, context=profile.group_context, lone_context=profile.lone_hit_context,
                        margin=profile.group_margin, min_chars=profile.min_result_chars,
                        section_chars=profile.section_chars, paragraph_chars=profile.paragraph_chars) \
        if grouped else None
    late = LateInteraction(weight=profile.late_interaction_weight,
                           token_vectors=late_interaction_model().token_vectors,
                           margin=profile.late_interaction_margin,
                           closed_question_margin=profile.closed_question_margin) \
        if profile.late_interaction_weight else None
    return search(index, text, vector, ks=ks, mode=mode, filters=filters,
                  candidates=profile.group_candidates if grouped else settings.search_candidates,
                  rerank=rerank, neighbours=neighbours, version=version, score_margin=profile.score_margin,
                  grouping=grouping, late=late, whole_document_tokens=settings.whole_document_tokens,
                  count_tokens=count_tokens, wholes=wholes)


def lineage(project: Project, row_id: str, corpus_name: str | None = None) -> list[dict]:
    """Where an index row came from, one entry per corpus holding it (only ``corpus_name``'s when
    given): source, tenant, versions, content type, whether OCR read its text (None: a table written before
    that was recorded), profile, model, run and table version. A row id names neither the corpus
    (two corpora holding the same file write the same ids) nor the model (a switch of model, or of
    profile to one of the same settings, writes the same ids to the new table), so in each corpus
    the table queries use is searched first, then the configured one, then the others."""
    found = []
    for corpus in [project.corpus(corpus_name)] if corpus_name else project.corpora:
        db = connect_index(corpus)
        tables = set(open_tables(db, table_prefix(corpus.name)))
        first = [serving(project, corpus, db), own_table(corpus)]
        for table in first + [CorpusTable(m, p) for m in project.embedding_models for p in project.chunking_profiles]:
            index = table.index(db, corpus.name)
            if index.name not in tables:
                continue
            tables.discard(index.name)  # each table is searched once
            row = index.row(row_id)
            if row is None:
                continue
            entry = index.manifest_entry(row["doc_id"]) or {}
            found.append({
                "row_id": row_id, "corpus": corpus.name, "table": index.name, "doc_id": row["doc_id"],
                "tenant": row.get("tenant"),
                "source_uri": row["source_uri"], "source_version": row["source_version"],
                "content_hash": row["content_hash"], "content_type": row["content_type"], "ocr": row.get("ocr"),
                "chunk_profile": row["chunk_profile"],
                "profile_hash": row["profile_hash"], "strategy": row["strategy"],
                "embedding_model": row["embedding_model"], "run_id": row["run_id"],
                "ingested_at": row["ingested_at"].isoformat() if row["ingested_at"] else None,
                "table_version": entry.get("table_version") if entry.get("run_id") == row["run_id"] else None,
                "current_table_version": index.version(), "start": row["start"], "end": row["end"],
                "chunk_index": row["chunk_index"], "heading_path": row["heading_path"],
            })
            break
    return found
