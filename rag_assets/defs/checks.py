"""Asset checks declared as ``+data_tests`` in rag_project.yml (dbt style), on each corpus'
whole LanceDB table."""

import dagster as dg
import pyarrow.compute as pc

from rag_assets.config.schema import Corpus
from rag_assets.core.chunking import row_token_limit
from rag_assets.core.index import complete_documents, made_as_recorded
from rag_assets.core.keys import doc_id_for
from rag_assets.defs.failures import failed_partitions
from rag_assets.defs.names import MAINTENANCE_TAG, asset_key, partitions_name, resource_keys
from rag_assets.defs.resources import CorpusResources
from rag_assets.defs.versions import chunking_profile

DESCRIPTIONS = {
    "max_tokens_per_chunk": "No row's embedded text (contextual header included) exceeds the row token limit in "
                            "the model's tokenizer: min(profile max_tokens, model input limit), or the model's "
                            "input limit alone when the profile sizes chunks with another size_tokenizer.",
    "no_empty_chunks": "No row has empty or whitespace-only text.",
    "embedding_dimension_matches": "Every vector has the model's configured dimensions.",
    "index_rows_match_live_chunks": "Rows per document equal the chunks recorded for it, for every live document "
                                    "the index holds, and every live document the stage store records as indexed "
                                    "is in the index, with the content it indexed last (not an older version "
                                    "restored by `rag restore`; a document that never indexed fails no_failed_documents).",
    "no_rows_of_deleted_documents": "Every row belongs to a document that is still a live partition.",
    "no_failed_documents": "No live document's latest ingest failed (its previous rows are kept meanwhile).",
}


# Each data test runs with the table wherever the daemon requests the table (without a condition
# of their own they were left out of a run that also asked for retrieval_eval), and on its own when
# the table changed in a run that left it out: not after a maintenance job's run, which ran them all
# (its runs select no checks by name, so Dagster's any_deps_updated took them for runs without them).
CHECK_CONDITION = dg.AutomationCondition.any_deps_match(
    (dg.AutomationCondition.newly_updated() & ~dg.AutomationCondition.executed_with_root_target()
     & ~dg.AutomationCondition.executed_with_tags(tag_keys={MAINTENANCE_TAG}))
    | dg.AutomationCondition.will_be_requested()).with_label("with the table")


def build_corpus_checks(corpus: Corpus) -> list:
    keys = resource_keys(corpus.name)
    model = corpus.embedding_model
    limit = row_token_limit(chunking_profile(corpus), model.tokenizer, model.chunk_token_limit)
    target = asset_key(corpus.name, "lancedb_table")

    def load(context):
        index = CorpusResources(context.resources, corpus).index()
        rows = index.table().search().select(["doc_id", "text", "tokens", "vector"]).limit(None).to_arrow()
        live = {doc_id_for(pk) for pk in context.instance.get_dynamic_partitions(partitions_name(corpus.name))}
        return index, rows, live

    def max_tokens_per_chunk(context, index, rows, live):
        worst = pc.max(rows["tokens"]).as_py() if rows.num_rows else 0
        return dg.AssetCheckResult(passed=worst is None or worst <= limit,
                                   metadata={"max_tokens": worst or 0, "limit": limit})

    def no_empty_chunks(context, index, rows, live):
        empty = pc.sum(pc.equal(pc.utf8_trim_whitespace(rows["text"]), "")).as_py() if rows.num_rows else 0
        return dg.AssetCheckResult(passed=not empty, metadata={"empty_rows": empty or 0})

    def embedding_dimension_matches(context, index, rows, live):
        sizes = set(pc.list_value_length(rows["vector"]).to_pylist()) if rows.num_rows else set()
        return dg.AssetCheckResult(passed=sizes <= {model.dimensions},
                                   metadata={"dimensions_found": str(sorted(s for s in sizes if s is not None)),
                                             "expected": model.dimensions})

    def index_rows_match_live_chunks(context, index, rows, live):
        # Only documents the index holds count: a live document that failed before its first
        # write has no rows to match, and no_failed_documents reports it.
        counts: dict[str, int] = {}
        for doc_id in rows["doc_id"].to_pylist():
            counts[doc_id] = counts.get(doc_id, 0) + 1
        manifest = {d: e for d, e in index.indexed_documents().items() if d in live}
        unrecorded = {d for d in live if counts.get(d) and d not in manifest}
        store = CorpusResources(context.resources, corpus).store.get_store()
        # Indexed by the stage store's account, but its rows are not all in the table or hold another
        # version (rolled back, rows lost, or a table restored to an older version).
        complete = complete_documents(manifest, counts)
        indexed = {d: r for d in live if (r := store.current("index", d)) and r.get("key") and not r.get("error")}
        behind = {d for d, record in indexed.items() if not made_as_recorded(complete.get(d), record)}
        wrong = sorted(set(manifest) - set(complete) | unrecorded | behind)
        return dg.AssetCheckResult(passed=not wrong, metadata={
            "rows": sum(counts.get(d, 0) for d in manifest), "live_chunks": sum(e["chunks"] for e in manifest.values()),
            "documents_with_wrong_rows": len(wrong), "live_documents_not_indexed": len(live - set(manifest)),
            "examples": ", ".join(wrong[:10])})

    def no_rows_of_deleted_documents(context, index, rows, live):
        orphans = sorted({d for d in rows["doc_id"].to_pylist()} - live)
        return dg.AssetCheckResult(passed=not orphans, metadata={"documents": len(orphans),
                                                                 "examples": ", ".join(orphans[:10])})

    def no_failed_documents(context, index, rows, live):
        store = CorpusResources(context.resources, corpus).store.get_store()
        causes = {d: error for d in live if (error := (store.current("index", d) or {}).get("error"))}
        keys = list(context.instance.get_dynamic_partitions(partitions_name(corpus.name)))
        causes |= {doc_id_for(pk): why for pk, why in failed_partitions(context.instance, corpus.name, keys).items()
                   if doc_id_for(pk) not in causes}  # a whole batch failed: Dagster shows them Failed
        failed = sorted(causes)
        table = "\n".join(f"| {d} | {causes[d][:200]} |" for d in failed[:20])
        return dg.AssetCheckResult(passed=not failed, metadata={
            "failed_documents": len(failed),
            "failures": dg.MetadataValue.md("| document | cause |\n|---|---|\n" + table) if failed else ""})

    implementations = {f.__name__: f for f in (max_tokens_per_chunk, no_empty_chunks, embedding_dimension_matches,
                                                index_rows_match_live_chunks, no_rows_of_deleted_documents,
                                                no_failed_documents)}
    def make(test: str):
        impl = implementations[test]

        @dg.asset_check(asset=target, name=test, description=DESCRIPTIONS[test],
                        required_resource_keys={keys["lancedb"], keys["store"]},
                        automation_condition=CHECK_CONDITION)
        def check(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
            return impl(context, *load(context))

        return check

    return [make(test) for test in corpus.data_tests]
