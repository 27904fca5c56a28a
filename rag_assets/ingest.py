"""Drive the generated asset graph (the same asset code `dagster dev` runs): in this process, or
on the Celery workers when the project's executor is celery.

Per corpus: sweep the source (as its sensor does), report new and changed bytes, add and delete
partitions, run the ingest job over contiguous partition ranges of ``batch_size`` documents, and
prune deleted documents from the table.
"""

from __future__ import annotations

from typing import TextIO

import dagster as dg

from rag_assets.config import Corpus, Project
from rag_assets.core.index import LanceIndex, mark_active
from rag_assets.core.keys import doc_id_for
from rag_assets.defs.factory import (
    build_corpus_resources,
    build_definitions,
    ingest_job_name,
    maintenance_job_name,
    partitions_name,
    resource_keys,
)
from rag_assets.defs.executors import reconstructable_job
from rag_assets.defs.sensors import RANGE_END, RANGE_START, sweep
from rag_assets.progress import Progress

PARTITION = "dagster/partition"
QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
COUNTS = ("documents_seen", "documents_hashed", "documents_changed", "documents_new", "documents_deleted",
          "documents_failed",
          "documents_parsed", "chunks_embedded", "embedding_cache_hits", "rows_in_index", "runs")


def _failure_message(result) -> str:
    """The root cause of a failed run, as the user's code raised it, with the failing step."""
    for event in result.get_step_failure_events():
        data = event.step_failure_data
        if data.user_failure_data is not None and data.user_failure_data.description:
            return f"{event.step_key}: {data.user_failure_data.description}"
        error = data.error
        while error is not None and error.cause is not None:
            error = error.cause
        if error is not None:
            return f"{event.step_key}: {error.message.strip().splitlines()[0][:500]}"
    return "run failed"


def _batch_total(result, node: str, key: str) -> int:
    events = result.asset_materializations_for_node(node)
    return int(events[0].metadata[key].value) if events and key in events[0].metadata else 0


def run_job(project: Project, defs: dg.Definitions, job_name: str, instance: dg.DagsterInstance,
            tags: dict[str, str] | None = None):
    """Run one job of the project and return its result. With the celery executor the steps go
    to the workers (the job is reconstructable, rebuilt from the config project); otherwise the
    run executes in this process, which for a handful of steps beats a process per step."""
    if project.executor.kind == "celery":
        return dg.execute_job(reconstructable_job(project.project_dir, job_name), instance, run_config=QUIET,
                              tags=tags)
    return defs.resolve_job_def(job_name).execute_in_process(instance=instance, tags=tags, raise_on_error=False,
                                                             run_config=QUIET)


def ingest_corpus(project: Project, corpus: Corpus, defs: dg.Definitions, instance: dg.DagsterInstance,
                  progress: TextIO | None) -> dict:
    keys = resource_keys(corpus.name)
    model = corpus.embedding_model
    report = dict.fromkeys(COUNTS, 0)
    failures: list[dict] = []
    with dg.build_resources(build_corpus_resources(corpus)) as resources:
        source = getattr(resources, keys["source"])
        store = getattr(resources, keys["store"]).get_store()
        index = LanceIndex(getattr(resources, keys["lancedb"]).get_connection(), corpus.name, model.name,
                           model.dimensions)
        partitions = partitions_name(corpus.name)
        corpus_sweep = sweep(corpus, source.list_documents(), source.read, store,
                             list(instance.get_dynamic_partitions(partitions)))
        if corpus_sweep.new_keys:
            instance.add_dynamic_partitions(partitions, corpus_sweep.new_keys)
        for event in corpus_sweep.raw_events:
            instance.report_runless_asset_event(event)
        bar = Progress(progress, f"[{corpus.name}] batches", len(corpus_sweep.batches))
        for n, (first, last) in enumerate(corpus_sweep.batches, start=1):
            bar.start(n, f"{first} .. {last}")
            tags = {PARTITION: first} if first == last else {RANGE_START: first, RANGE_END: last}
            result = run_job(project, defs, ingest_job_name(corpus.name), instance, tags)
            report["runs"] += 1
            if not result.success:
                failures.append({"corpus": corpus.name, "doc_id": f"{first} .. {last}", "error": _failure_message(result)})
                continue
            report["documents_parsed"] += _batch_total(result, f"{corpus.name}__parsed_documents", "run_documents_computed")
            report["chunks_embedded"] += _batch_total(result, f"{corpus.name}__embeddings", "run_chunks_embedded")
            report["embedding_cache_hits"] += _batch_total(result, f"{corpus.name}__embeddings", "run_cache_hits")
            for mat in result.asset_materializations_for_node(f"{corpus.name}__lancedb_index"):
                if mat.metadata.get("status") and mat.metadata["status"].value == "failed":
                    failures.append({"corpus": corpus.name, "doc_id": doc_id_for(mat.partition),
                                     "error": mat.metadata["error"].value})
        if corpus_sweep.batches:
            bar.finish()
        for key in corpus_sweep.deleted_keys:
            instance.delete_dynamic_partition(partitions, key)
        checks: dict[str, bool] = {}
        if corpus_sweep.batches or corpus_sweep.deleted_keys:
            # The table: prune deleted documents, compact, run the data tests.
            result = run_job(project, defs, maintenance_job_name(corpus.name), instance)
            report["runs"] += 1
            if not result.success:
                failures.append({"corpus": corpus.name, "doc_id": "(table)", "error": _failure_message(result)})
            checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
        plan = corpus_sweep.plan
        indexed = index.indexed_documents()
        if not failures and all(doc_id in indexed for doc_id in plan.listed):
            mark_active(index.db, corpus.name, model.name, index.name, len(plan.listed))
        report.update(documents_seen=len(plan.listed), documents_hashed=plan.hashed, documents_changed=len(plan.work),
                      documents_new=len(corpus_sweep.new_keys), documents_deleted=len(plan.deleted),
                      documents_failed=len(failures), rows_in_index=index.count_rows())
    report["failures"] = failures
    report["checks"] = checks
    return report


def ingest_project(project: Project, corpora: list[str] | None = None, progress: TextIO | None = None) -> dict:
    """Ingest the named corpora (default all); returns summed counts plus a per-corpus breakdown."""
    defs = build_definitions(project)
    selected = [project.corpus(name) for name in corpora] if corpora else list(project.corpora)
    total: dict = {**dict.fromkeys(COUNTS, 0), "failures": [], "corpora": {}}
    with dg.DagsterInstance.get() as instance:
        for corpus in selected:
            report = ingest_corpus(project, corpus, defs, instance, progress)
            total["corpora"][corpus.name] = {k: v for k, v in report.items() if k != "failures"}
            total.setdefault("checks", {}).update({f"{corpus.name}.{k}": v for k, v in report["checks"].items()})
            total["failures"].extend(report["failures"])
            for key in COUNTS:
                total[key] += report[key]
    return total
