"""The retrieval_eval asset of corpora with a golden set: scores its profiles side by side,
shows recall vs IoU as a PNG, and checks recall@5 against ``+min_recall_at_5``."""

from pathlib import Path

import dagster as dg

from rag_assets.config.profiles import profile_from_config
from rag_assets.config.schema import Corpus, Project
from rag_assets.core.hashing import content_hash, settings_hash
from rag_assets.core.retrieval import RETRIEVAL_REVISION
from rag_assets.defs.names import asset_key, resource_keys
from rag_assets.defs.plots import png_markdown, pyplot
from rag_assets.defs.resources import CorpusResources
from rag_assets.defs.versions import model_fingerprint
from rag_assets.evaluate import evaluate


def _plot(rows: list[dict]) -> str:
    """Markdown image (PNG) of recall vs IoU, one point per profile; of recall@5 vs mean chunk
    tokens where the golden set has no answer spans (token metrics unmeasured)."""
    spans = all(row["iou"] is not None for row in rows)
    x, y = ("iou", "recall") if spans else ("mean_tokens", "recall_at_5")
    fig, ax = pyplot().subplots(figsize=(5, 3.5), dpi=100)
    for row in rows:
        ax.scatter(row[x], row[y], s=40)
        ax.annotate(row["profile"], (row[x], row[y]), textcoords="offset points", xytext=(4, 4), fontsize=8)
    ax.set_xlabel("IoU (%)" if spans else "mean chunk tokens")
    ax.set_ylabel("recall (%)" if spans else "recall@5 (%)")
    ax.set_title("Retrieval quality per chunking profile")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return png_markdown(fig, "recall vs IoU")


# Re-scored once the table (or the scoring's code version) changed, when nothing upstream runs.
# Unlike eager(), which forgets a table change that lands while an evaluation is in flight (the
# evaluation's own materialisation resets it), only the daemon's request of it resets the trigger
# (a run of it from the UI can leave one more re-scoring to do, never one too few).
EVAL_CONDITION = (
    (dg.AutomationCondition.newly_missing() | dg.AutomationCondition.any_deps_updated()
     | dg.AutomationCondition.code_version_changed())
    .since(dg.AutomationCondition.newly_requested() | dg.AutomationCondition.initial_evaluation())
    & ~dg.AutomationCondition.any_deps_missing()
    & ~dg.AutomationCondition.any_deps_in_progress()
    & ~dg.AutomationCondition.in_progress()
).with_label("after the table changed")


def build_eval_asset(project: Project, corpus: Corpus) -> list:
    """The asset and its check, or nothing when the corpus declares no golden set."""
    if not corpus.eval_questions:
        return []
    key = asset_key(corpus.name, "retrieval_eval")
    declared = {p.name: p for p in project.chunking_profiles}
    # The scores change with the questions, the profiles compared (their chunks and their
    # query-time settings), the embedding model, the index's search settings and the query code.
    profiles = [profile_from_config(declared[p]) for p in corpus.eval_profiles]
    version = settings_hash({"questions": content_hash(Path(corpus.eval_questions).read_bytes()),
                             "profiles": [{"chunks": p.fingerprint(), "query": p.query_settings()} for p in profiles],
                             "model": model_fingerprint(corpus), "retrieval": RETRIEVAL_REVISION,
                             "search": {"candidates": corpus.index.search_candidates,
                                        "whole_document_tokens": corpus.index.whole_document_tokens}})

    @dg.asset(key=key, deps=[asset_key(corpus.name, "lancedb_table")], group_name=corpus.name, kinds={"python"},
              code_version=version, automation_condition=EVAL_CONDITION,
              required_resource_keys={resource_keys(corpus.name)[role] for role in ("source", "store")},
              check_specs=[dg.AssetCheckSpec("min_recall_at_5", asset=key,
                                             description=f"recall@5 of {corpus.eval_profiles[0]} >= {corpus.min_recall_at_5}")]
              if corpus.min_recall_at_5 is not None else None)
    def retrieval_eval(context: dg.AssetExecutionContext):
        """Golden-question scores of the corpus' chunking profiles (token-level and recall@k), on
        its documents as the pipeline last parsed them (the source is only listed)."""
        resources = CorpusResources(context.resources, corpus)
        rows = evaluate(project, corpus.eval_questions, list(corpus.eval_profiles), corpus=corpus,
                        source=resources.source, store=resources.store.get_store())
        table = "\n".join(f"| {r['profile']} | {r['chunks']} | {r['mean_tokens']} | {r['recall_at_1']} | "
                          f"{r['recall_at_5']} | {r['mrr']} |" for r in rows)
        metadata = {
            "profiles": dg.MetadataValue.md("| profile | chunks | mean tokens | R@1 | R@5 | MRR |\n|---|---|---|---|---|---|\n"
                                            + table),
            "plot": dg.MetadataValue.md(_plot(rows)),
            "questions": rows[0]["n_questions"],
            "documents_left_out": dg.MetadataValue.text(", ".join(rows[0]["documents_left_out"]) or "none"),
            "documents_not_found": dg.MetadataValue.text(", ".join(rows[0]["documents_not_found"]) or "none"),
            "recall_at_5": rows[0]["recall_at_5"],
        }
        yield dg.MaterializeResult(metadata=metadata)
        if corpus.min_recall_at_5 is not None:
            yield dg.AssetCheckResult(check_name="min_recall_at_5", passed=rows[0]["recall_at_5"] >= corpus.min_recall_at_5,
                                      metadata={"recall_at_5": rows[0]["recall_at_5"], "minimum": corpus.min_recall_at_5,
                                                "profile": rows[0]["profile"]})

    return [retrieval_eval]
