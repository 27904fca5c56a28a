"""Generate one asset graph per corpus from the config project:

    raw_documents -> parsed_documents -> chunks -> embeddings -> lancedb_index -> lancedb_table

``raw_documents`` is an external asset: sensors, ``rag observe`` and ``rag ingest`` report each
new or changed document as an *observation* whose data version is the xxh3 hash of its bytes
(the bytes are kept in the stage store, addressed by that hash). The four middle stages are
partitioned per document and run over partition ranges (a batch of documents per run);
``lancedb_table`` is the unpartitioned table, which owns pruning, compaction and the data tests.

Dagster's stale status looks only at an asset's direct inputs and its own code version, so:
every stage declares ``raw_documents`` as an input (an edited document marks its partition
unsynced in all four stages at once), and each stage's code version includes those of the
stages before it (a profile change marks chunks, embeddings and lancedb_index; a model change
embeddings and lancedb_index).
"""

from urllib.parse import quote

import dagster as dg

from rag_assets.clients import CorpusTable, open_embedder, own_table
from rag_assets.config import load_project
from rag_assets.config.profiles import profile_from_config
from rag_assets.config.schema import Corpus, Project
from rag_assets.core import sources
from rag_assets.core.chunking import row_token_limit
from rag_assets.core.embed_cache import EmbeddingCache
from rag_assets.core.hashing import settings_hash
from rag_assets.core.index import ROW_COLUMNS, LanceIndex, chunk_schema, documents_lacking, mark_active
from rag_assets.core.keys import doc_id_for
from rag_assets.core.pipeline import chunk_stage, chunks_with, embed_stage, index_stage, mirror_stage, parse_stage
from rag_assets.core.pipeline import StageResult
from rag_assets.core.report import histogram_markdown, sample_chunks_markdown, token_histogram
from rag_assets.core.tokens import get_token_counter
from rag_assets.defs.checks import build_corpus_checks
from rag_assets.defs.evaluation import build_eval_asset
from rag_assets.defs.executors import build_executor, job_run_config
from rag_assets.defs.housekeeping import build_gc_automation
from rag_assets.defs.names import (MAINTENANCE_TAG, STAGES, asset_key, data_tests_job_name, ingest_job_name,
                                   maintenance_job_name, partitions_name, resource_keys)
from rag_assets.defs.observations import observed_raws
from rag_assets.defs.plots import histogram_png
from rag_assets.defs.promotion import gate, promotion_result, promotion_specs
from rag_assets.defs.resources import CorpusResources, build_corpus_resources
from rag_assets.defs.sensors import build_corpus_automation, observe_source
from rag_assets.defs.storage import current_dynamic_partitions, partitions_snapshot
from rag_assets.defs.versions import chunking_profile, code_versions
from rag_assets.query import serving, unserved
from rag_assets.tables import corpus_tables


def tenant_of(corpus: Corpus):
    """The tenant of a document id under the corpus' source (None where it declares none)."""
    return sources.tenant_of(corpus.source.tenant, corpus.source.tenant_from_path)


def owners_of(corpus: Corpus) -> list[str]:
    """Dagster owners from ``+meta: {owner: ...}``: an e-mail address as is, a team name as ``team:NAME``."""
    owner = corpus.meta.get("owner")
    names = owner if isinstance(owner, list) else [owner] if owner else []
    return [str(o) if "@" in str(o) else f"team:{o}" for o in names]


RUN_TOTALS = {"chunks_embedded", "cache_hits", "embed_tokens", "estimated_cost_usd"}


def _docs(context: dg.AssetExecutionContext) -> list[tuple[str, str]]:
    return [(pk, doc_id_for(pk)) for pk in context.partition_keys]


def _version(result: StageResult, salt: str) -> str:
    """A document's data version at one stage: the key of what it produced (with ``salt``, what
    else determined it), or the cause it failed with."""
    if result.status == "failed":
        return "failed-" + settings_hash(result.error)[:16]
    return settings_hash({"output": result.key, "salt": salt})[:32]


def _report(context: dg.AssetExecutionContext, results, extra: dict | None = None, salt: str = "",
            last: dict | None = None) -> dg.MaterializeResult:
    """Per-partition metadata for each document, batch totals for the run, and the data version:
    for a single document the hash of what it produced; for a range the hash over its documents
    (Dagster keeps one data version per run for a partition range). ``last`` (a run's chart) goes
    to the run's last partition only, the asset's latest materialization: Dagster copies a run's
    metadata into every partition's event, 12 KB of PNG a document."""
    counts = {"computed": 0, "reused": 0, "failed": 0}
    failures, versions = [], []
    upstream = (extra or {}).pop("upstream_stage", None)
    with partitions_snapshot(context.instance):  # Dagster checks each key against all partitions
        for n, (pk, result) in enumerate(results, start=1):
            counts[result.status] += 1
            version = _version(result, salt)
            versions.append((pk, version))
            meta = {"status": result.status, "output_version": version, **result.metadata}
            if upstream:
                meta["upstream"] = _partition_link(upstream, pk)
            if result.error:
                meta["error"] = result.error
                failures.append(f"| {result.doc_id} | {result.error.replace('|', '/')[:200]} |")
            context.add_asset_metadata({**meta, **(last or {})} if n == len(results) else meta, partition_key=pk)
    # Run-level totals are prefixed so they never collide with a partition's own metadata.
    total = {"run_documents": len(results), **{f"run_documents_{k}": v for k, v in counts.items()},
             **{f"run_{k}" if k in RUN_TOTALS else k: v for k, v in (extra or {}).items()}}
    if failures:
        total["run_failures"] = dg.MetadataValue.md("| document | cause |\n|---|---|\n" + "\n".join(failures))
    version = versions[0][1] if len(versions) == 1 else settings_hash(versions)[:32]
    return dg.MaterializeResult(metadata=total, data_version=dg.DataVersion(version))


def _partition_link(key: dg.AssetKey, partition_key: str) -> dg.MetadataValue:
    """The same document's partition of another stage, as a link in the UI."""
    return dg.MetadataValue.url(f"/assets/{'/'.join(key.path)}?view=partitions&partition={quote(partition_key, safe='')}")


def _link(corpus: str, stage: str) -> dg.MetadataValue:
    """The stage's asset, rendered by the UI as a link to it."""
    return dg.MetadataValue.asset(asset_key(corpus, stage))


def _cost(tokens: int, model) -> float:
    return round(tokens * model.price_per_million_tokens / 1e6, 6)


def _chunk_views(store, results, limit: int) -> list[int]:
    """Add each chunked document's token histogram and first chunks (markdown) to its metadata;
    returns the token counts of every chunk in the batch."""
    batch = []
    for _, result in results:
        if result.status == "failed":
            continue
        chunked = store.get("chunks", result.key).chunks
        tokens = [c.tokens for c in chunked]
        batch.extend(tokens)
        result.metadata["token_histogram"] = dg.MetadataValue.md(histogram_markdown(token_histogram(tokens, limit)))
        result.metadata["sample_chunks"] = dg.MetadataValue.md(sample_chunks_markdown(chunked))
    return batch


def build_corpus_assets(project: Project, corpus: Corpus, observe) -> list:
    """The stages of one corpus (``observe``: the observation function of its raw_documents).
    Each carries a code_version built from what it depends on (parser version, chunk profile and
    tokenizer, embedding model), so Dagster's staleness shows what a config change will redo."""
    name = corpus.name
    keys = resource_keys(name)
    partitions = dg.DynamicPartitionsDefinition(name=partitions_name(name))
    profile = chunking_profile(corpus)
    model = corpus.embedding_model
    versions = code_versions(corpus)
    tags = {f"rag/{t}": "" for t in corpus.tags}
    common = dict(group_name=name, partitions_def=partitions, owners=owners_of(corpus), tags=tags)
    # A backfill or an automation run covers +batch_size documents, as the sensor's runs do (one run
    # a document made a UI backfill of 1,000 documents 1,000 runs of a process each).
    stage = dict(common, automation_condition=STAGE_CONDITION if corpus.automation == "declarative" else None,
                 backfill_policy=dg.BackfillPolicy.multi_run(corpus.batch_size))
    raw_key = asset_key(name, "raw_documents")

    # Observable: "Observe" in the UI runs ``observe`` (the sweep); the sensor, `rag observe` and
    # `rag ingest` report the same observations without a run.
    raw_documents = dg.observable_source_asset(
        key=raw_key, partitions_def=partitions, group_name=name,
        description="Bytes of each source document, observed by the source's sensor, `rag observe` or `rag ingest`; "
                    "the data version is the xxh3 hash of the bytes.",
        tags={**tags, "dagster/kind/file": ""}, required_resource_keys={keys["source"], keys["store"]},
        metadata={"source": corpus.source.name, "source_kind": corpus.source.kind},
    )(observe)

    limit = row_token_limit(profile, model.tokenizer, model.chunk_token_limit)
    sized_by = (f", sized by {profile.max_tokens} {profile.size_tokenizer} tokens"
                if not profile.counts_in(model.tokenizer) else "")

    @dg.asset(key=asset_key(name, "parsed_documents"), deps=[raw_documents], code_version=versions["parsed_documents"],
              kinds={"unstructured"}, required_resource_keys={keys["store"]}, **stage,
              description="Text and structural elements of each document (unstructured; pdfminer for PDF pages; "
                          "msdoc2docx, ppt2pptx for Word, PowerPoint 97-2003; pandoc for ODT, RTF, EPUB, AsciiDoc, "
                          "LaTeX, Org, JATS and DocBook).")
    def parsed_documents(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
        store = CorpusResources(context.resources, corpus).store.get_store()
        limits = corpus.source.parse_limits
        observed = observed_raws(context.instance, corpus, context.partition_keys)
        results = [(pk, parse_stage(store, doc_id, observed[pk], limits, corpus.source.ocr_languages))
                   for pk, doc_id in _docs(context)]
        for _, result in results:
            raw = store.current("raw", result.doc_id)
            if raw and raw.get("uri"):
                result.metadata["source_uri"] = dg.MetadataValue.url(raw["uri"])
        return _report(context, results, {"upstream_stage": raw_key}, versions["parsed_documents"])

    @dg.asset(key=asset_key(name, "chunks"), deps=[raw_documents, parsed_documents],
              code_version=versions["chunks"], kinds={"python"},
              required_resource_keys={keys["store"], keys["embedder"]}, **stage,
              description="Token-bounded chunks with exact char offsets, heading paths and contextual headers: "
                          f"profile {profile.name!r} ({profile.strategy}, at most {limit} {model.tokenizer} tokens"
                          f"{sized_by}, overlap {profile.overlap}).")
    def chunks(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
        resources = CorpusResources(context.resources, corpus)
        store = resources.store.get_store()
        embedder = resources.embedder
        counter = embedder.get_token_counter()
        embed = embedder.get_embedder().embed if "semantic" in (profile.strategy, *dict(profile.content_types).values()) else None
        results = [(pk, chunk_stage(store, doc_id, profile, counter, model.chunk_token_limit, embed))
                   for pk, doc_id in _docs(context)]
        batch_tokens = _chunk_views(store, results, limit)
        # A chart of the run's chunks; for one document its own token_histogram says the same.
        chart = {"run_token_histogram": dg.MetadataValue.md(histogram_png(
            token_histogram(batch_tokens, limit), limit, f"{len(batch_tokens)} chunks in this run"))} if len(results) > 1 else {}
        return _report(context, results, {
            "profile": profile.name, "profile_hash": profile.fingerprint(), "token_limit": limit,
            "upstream_stage": asset_key(name, "parsed_documents")}, versions["chunks"], last=chart)

    @dg.asset(key=asset_key(name, "embeddings"), deps=[raw_documents, chunks], code_version=versions["embeddings"],
              kinds={"onnx" if model.provider == "local" else "openai"},
              required_resource_keys={keys["store"], keys["embedder"], keys["lancedb"]}, **stage,
              description="One vector per chunk; only embedded texts the cache has not seen reach the model "
                          f"({model.provider} {model.model}, {model.dimensions} dimensions).")
    def embeddings(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
        resources = CorpusResources(context.resources, corpus)
        store = resources.store.get_store()
        embedder = resources.embedder.get_embedder()
        cache = EmbeddingCache(resources.lancedb.get_connection(), model.name, model.dimensions)
        docs = _docs(context)
        results, totals = embed_stage(store, [d for _, d in docs], cache, embedder.embed, model.name,
                                      model.passage_prefix,
                                      lambda done, total: context.log.info(f"embedded {done} of {total} new texts"))
        for result in results:
            if "embedded_tokens" in result.metadata:
                result.metadata["estimated_cost_usd"] = _cost(result.metadata["embedded_tokens"], model)
        by_doc = {r.doc_id: r for r in results}
        usage = {"usage_tokens": embedder.usage_tokens} if hasattr(embedder, "usage_tokens") else {}
        return _report(context, [(pk, by_doc[d]) for pk, d in docs], {
            **usage, "chunks_embedded": totals.embedded, "cache_hits": totals.cached, "embed_tokens": totals.tokens,
            "model": model.model, "dimensions": model.dimensions,
            "estimated_cost_usd": _cost(totals.tokens, model), "upstream_stage": asset_key(name, "chunks")},
            versions["embeddings"])

    @dg.asset(key=asset_key(name, "lancedb_index"), deps=[raw_documents, embeddings],
              code_version=versions["lancedb_index"], kinds={"lancedb"},
              required_resource_keys={keys["store"], keys["lancedb"]}, **stage,
              description="Each document's rows in the corpus' LanceDB table (new rows written, then its stale "
                          f"rows removed) at {corpus.index_uri}.",
              metadata={"dagster/column_schema": column_schema(model.dimensions)})
    def lancedb_index(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
        resources = CorpusResources(context.resources, corpus)
        store = resources.store.get_store()
        index = resources.index()
        cache = EmbeddingCache(index.db, model.name, model.dimensions)
        docs = _docs(context)
        try:
            written = index_stage(store, [d for _, d in docs], index, cache, tenant_of(corpus), context.run_id,
                                  profile.fingerprint(), model.name, model.passage_prefix, corpus.tags,
                                  versions["lancedb_index"])
        except (RuntimeError, OSError) as exc:  # a damaged table: its path and the fix, as `rag ingest` says
            if "lance error" in str(exc).lower():
                raise index.unreadable(exc) from exc
            raise
        results = list(zip([pk for pk, _ in docs], written))
        live = serving(project, corpus, index.db)
        if live.label != own_table(corpus).label:  # queries stay on another table: keep it current too
            mirrored = _mirror(store, [d for _, d in docs], live, index.db, corpus, context.run_id)
            for result in written:
                result.metadata["serving_table"] = f"{live.label}: {mirrored[result.doc_id]}"
        return _report(context, results, {
            "table": index.name, "table_version": index.version(), "rows_in_table": index.count_rows(),
            "serving_table": live.label, "lancedb_uri": corpus.index_uri,
            "upstream_stage": asset_key(name, "embeddings")}, versions["lancedb_index"])

    return [raw_documents, parsed_documents, chunks, embeddings, lancedb_index]


# `+automation: declarative`: a stage's partition runs when it is missing, when an input changed (a new
# observation of the document, or the stage before it) or when its code version changed, once per
# change, and not while it runs. Every stage reads the source, so an edit requests all four stages
# of that document in one tick.
# (Unlike eager(), an external input without materialisations, raw_documents, does not count as missing.)
STAGE_CONDITION = (
    (dg.AutomationCondition.newly_missing() | dg.AutomationCondition.any_deps_updated()
     | dg.AutomationCondition.code_version_changed()).since_last_handled()
    & ~dg.AutomationCondition.any_deps_in_progress()
    & ~dg.AutomationCondition.in_progress()
).with_label("unsynced")

# Maintenance (prune, compact, data tests) after any batch, however it was launched (sensor, UI,
# schedule, `rag ingest`): the daemon's automation sensor materialises the table once a document's
# index partition has changed and no batch is still running. Unlike eager(), a document that
# never indexed (a missing partition) does not hold maintenance back. A batch landing during the
# table's run is maintained by that run (see lancedb_table): its own materialisation resets this.
TABLE_CONDITION = (
    dg.AutomationCondition.any_deps_updated().since_last_handled()
    & ~dg.AutomationCondition.any_deps_in_progress()
    & ~dg.AutomationCondition.in_progress()
).with_label("after any index batch")


def _mirror(store, doc_ids: list[str], live: CorpusTable, db, corpus: Corpus, run_id: str) -> dict[str, str]:
    """Write the documents to the table queries use (``live``), chunked and embedded as that table is."""
    model, embed = live.model, open_embedder(live.model).embed
    chunker, counter = profile_from_config(live.profile), get_token_counter(model.tokenizer)
    return mirror_stage(doc_ids, lambda d: chunks_with(store, d, chunker, counter, model.chunk_token_limit, embed),
                        live.index(db, corpus.name), EmbeddingCache(db, model.name, model.dimensions), embed,
                        tenant_of(corpus), run_id, model.name, model.passage_prefix, corpus.tags)


MAINTENANCE_PASSES = 3


def column_schema(dimensions: int) -> dg.TableSchema:
    """The chunks table's columns, as the UI lists them on the index and table assets."""
    return dg.TableSchema(columns=[dg.TableColumn(f.name, str(f.type), description=ROW_COLUMNS[f.name])
                                   for f in chunk_schema(dimensions)])


def _latest_event(instance: dg.DagsterInstance, key: dg.AssetKey) -> int | None:
    """Storage id of the latest materialisation of any partition of ``key``."""
    records = instance.fetch_materializations(key, limit=1).records
    return records[0].storage_id if records else None


def _prune(index: LanceIndex, live: set[str]) -> tuple[list[str], int]:
    """Remove from ``index`` every document not in ``live``: (documents removed, rows removed)."""
    removed = [doc_id for doc_id in index.indexed_documents() if doc_id not in live]
    return removed, sum(index.delete_document(doc_id) for doc_id in removed)


def build_table_asset(project: Project, corpus: Corpus):
    """The unpartitioned table: removes rows of deleted documents, compacts, and marks the table
    active once complete (behind the ``+promote_if`` gate when it switches models)."""
    name = corpus.name
    keys = resource_keys(name)
    model = corpus.embedding_model

    @dg.asset(key=asset_key(name, "lancedb_table"), deps=[asset_key(name, "lancedb_index")], group_name=name,
              kinds={"lancedb"},
              required_resource_keys={keys["store"], keys["lancedb"], *([keys["source"]] if corpus.promote_if else [])},
              code_version=code_versions(corpus)["lancedb_table"], owners=owners_of(corpus),
              tags={f"rag/{t}": "" for t in corpus.tags}, automation_condition=TABLE_CONDITION,
              metadata={"dagster/column_schema": column_schema(model.dimensions)},
              check_specs=promotion_specs(corpus) or None)
    def lancedb_table(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
        """The corpus' LanceDB table as a whole: rows of deleted documents removed, then compacted.
        Maintained again when an index batch lands meanwhile (its materialisation would otherwise
        be forgotten by TABLE_CONDITION once this run materialises), at most MAINTENANCE_PASSES times."""
        resources = CorpusResources(context.resources, corpus)
        store = resources.store.get_store()
        index = resources.index()
        removed_docs, removed_rows, passes = set(), 0, 0
        seen = _latest_event(context.instance, asset_key(name, "lancedb_index"))
        while True:
            passes += 1
            live = {doc_id_for(pk) for pk in current_dynamic_partitions(context.instance, partitions_name(name))}
            # While queries stay on another table (a switch not yet complete, or held back by the
            # gate), a deleted document leaves that table too.
            before = serving(project, corpus, index.db)
            tables = [index] + ([before.index(index.db, name)] if before.label != own_table(corpus).label else [])
            pruned = [_prune(table, live) for table in tables]
            for doc_id in {doc_id for docs, _ in pruned for doc_id in docs} - removed_docs:
                store.forget(doc_id)
                removed_docs.add(doc_id)
            removed_rows += sum(rows for _, rows in pruned)
            for table in tables:
                table.optimize()
            built = index.ensure_search_indexes(corpus.index.ann_min_rows)
            # A document counts as the source holds it now: a table switched back to may hold an older
            # version of one that fails now (the serving table keeps its newer one).
            indexed = index.indexed_documents()
            missing = documents_lacking(indexed, {doc_id: (store.current("raw", doc_id) or {}).get("key") for doc_id in live})
            complete = not missing
            source = resources.source if corpus.promote_if else None
            decision, recorded = (gate(project, corpus, index, before, context.instance, source, store) if complete
                                  else (None, {}))
            if complete and (decision is None or decision.promote):
                mark_active(index, name, model.name, corpus.chunking_profile.name, len(live))
            latest = _latest_event(context.instance, asset_key(name, "lancedb_index"))
            if latest == seen or passes == MAINTENANCE_PASSES:
                break
            context.log.info("an index batch landed during maintenance: maintaining the table again")
            seen = latest
        removed_docs = sorted(removed_docs)
        after = serving(project, corpus, index.db)
        checks = [promotion_result(corpus, decision, missing, after.label)] if corpus.promote_if else None
        rows = index.count_rows()
        tables = corpus_tables(project, corpus, index.db)
        return dg.MaterializeResult(check_results=checks, metadata={
            **recorded, **({"serving_model": "none", "serving_profile": "none", "queries_refused": refused}
                           if (refused := unserved(project, corpus, index.db)) else
                           {"serving_model": after.model.name, "serving_profile": after.profile.name,
                            "queries_refused": "no"}),
            "tables": dg.MetadataValue.md("| table | role | rows |\n|---|---|---|\n" + "\n".join(
                f"| {t.table} | {t.role} | {t.rows} |" for t in tables)),
            "unused_tables": sum(t.role == "unused" for t in tables),
            "complete": complete, "documents_missing": len(missing), "indexes_built": ", ".join(built) or "none",
            "table": index.name, "table_version": index.version(), "rows": rows,
            "documents": len(indexed), "deleted_documents": len(removed_docs),
            "deleted_rows": removed_rows, "passes": passes, "dagster/row_count": rows, "lancedb_uri": corpus.index_uri,
            "upstream": _link(name, "lancedb_index")})

    return lancedb_table


def build_corpus_jobs(corpus: Corpus, run_config: dict) -> list:
    """The corpus' ingest and maintenance jobs, starting from ``run_config``."""
    stages = [asset_key(corpus.name, s) for s in STAGES]
    return [
        dg.define_asset_job(ingest_job_name(corpus.name), selection=dg.AssetSelection.assets(*stages),
                            config=run_config or None,
                            description=f"Parse, chunk, embed and index documents of corpus {corpus.name!r}."),
        dg.define_asset_job(maintenance_job_name(corpus.name),
                            selection=dg.AssetSelection.assets(asset_key(corpus.name, "lancedb_table")),
                            config=run_config or None, tags={MAINTENANCE_TAG: corpus.name}, description=f"Prune deleted documents from corpus {corpus.name!r}'s table and compact it."),
    ] + ([dg.define_asset_job(
        data_tests_job_name(corpus.name), config=run_config or None,
        selection=dg.AssetSelection.checks(*(dg.AssetCheckKey(asset_key(corpus.name, "lancedb_table"), test)
                                             for test in corpus.data_tests)),
        description=f"Run corpus {corpus.name!r}'s data tests on its table as it is now, changing nothing "
                    "(`rag restore` runs it after restoring a version).")] if corpus.data_tests else [])


def build_definitions(project: Project) -> dg.Definitions:
    """Assets, jobs, sensors, schedules and resources for every corpus of ``project``."""
    assets, jobs, resources, sensors, schedules, checks = [], [], {}, [], [], []
    for corpus in project.corpora:
        checks.extend(build_corpus_checks(corpus))
        assets.extend(build_corpus_assets(project, corpus, observe_source(corpus)))
        assets.append(build_table_asset(project, corpus))
        assets.extend(build_eval_asset(project, corpus))
        corpus_jobs = build_corpus_jobs(corpus, job_run_config(project.executor))
        jobs.extend(corpus_jobs)
        resources.update(build_corpus_resources(corpus))
        corpus_sensors, corpus_schedules = build_corpus_automation(corpus, corpus_jobs)
        sensors.extend(corpus_sensors)
        schedules.extend(corpus_schedules)
        gc_job, gc_schedules = build_gc_automation(project, corpus)
        jobs.append(gc_job)
        schedules.extend(gc_schedules)
    # Table maintenance and evaluation after every batch, however it was launched (see TABLE_CONDITION).
    sensors.append(dg.AutomationConditionSensorDefinition(
        "rag_maintenance_automation", target=dg.AssetSelection.assets(*(
            key for a in assets if isinstance(a, dg.AssetsDefinition)
            for key, condition in a.automation_conditions_by_key.items() if condition)),
        default_status=dg.DefaultSensorStatus.RUNNING, minimum_interval_seconds=30,
        description="Runs each corpus' table maintenance (prune, compact, data tests) after index batches, "
                    "and re-scores retrieval_eval when the table changed."))
    return dg.Definitions(assets=assets, asset_checks=checks, jobs=jobs, resources=resources, sensors=sensors,
                          schedules=schedules, executor=build_executor(project.executor))


def project_job(project_dir: str, job_name: str) -> dg.JobDefinition:
    """``job_name`` of the config project at ``project_dir``, rebuilt in the process that runs a step
    (the reconstructor of ``executors.reconstructable_job``). Nothing is cached, so a long-lived
    worker always runs the current config."""
    return build_definitions(load_project(project_dir)).resolve_job_def(job_name)
