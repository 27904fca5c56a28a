"""Drive the generated asset graph in-process (the same asset code `dagster dev` runs).

For each corpus: list the source, register new documents as dynamic partitions, remove deleted
ones from the index and the partition set, and materialise only documents whose content (xxh3),
chunking profile or embedding model differ from what the index holds.
"""

from __future__ import annotations

from typing import TextIO

import dagster as dg

from rag_assets.config import Corpus, Project
from rag_assets.core.index import LanceIndex
from rag_assets.core.keys import partition_key_for
from rag_assets.defs.factory import (
    build_corpus_resources,
    build_definitions,
    chunking_profile,
    ingest_job_name,
    partitions_name,
    resource_keys,
)

QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def _failure_message(result) -> str:
    for event in result.get_step_failure_events():
        data = event.step_failure_data
        if data.user_failure_data is not None and data.user_failure_data.description:
            return data.user_failure_data.description
        if data.error is not None:
            return data.error.message.strip().splitlines()[-1]
    return "run failed"


def plan_corpus(corpus: Corpus, index: LanceIndex, source) -> tuple[list[str], list[str], list[str]]:
    """(all listed doc ids, doc ids needing work, doc ids to delete) for one corpus."""
    refs = source.list_documents()
    indexed = index.indexed_documents()
    profile_hash = chunking_profile(corpus).fingerprint()
    listed, changed = [], []
    for ref in refs:
        listed.append(ref.doc_id)
        entry = indexed.get(ref.doc_id)
        if entry is None or entry["profile_hash"] != profile_hash or entry["embedding_model"] != corpus.embedding_model.name:
            changed.append(ref.doc_id)
        elif entry["source_version"] != ref.source_version and source.read(ref.doc_id).content_hash != entry["content_hash"]:
            changed.append(ref.doc_id)
    live = set(listed)
    deleted = sorted(doc_id for doc_id in indexed if doc_id not in live)
    return listed, changed, deleted


def ingest_corpus(corpus: Corpus, defs: dg.Definitions, instance: dg.DagsterInstance, progress: TextIO | None) -> dict:
    keys = resource_keys(corpus.name)
    resources = build_corpus_resources(corpus)
    source = resources[keys["source"]]
    db = resources[keys["lancedb"]].get_connection()
    model = corpus.embedding_model
    index = LanceIndex(db, corpus.name, model.name, model.dimensions)
    listed, changed, deleted = plan_corpus(corpus, index, source)

    partitions = partitions_name(corpus.name)
    registered = set(instance.get_dynamic_partitions(partitions))
    new_keys = [partition_key_for(d) for d in listed if partition_key_for(d) not in registered]
    if new_keys:
        instance.add_dynamic_partitions(partitions, new_keys)
    for doc_id in deleted:
        index.delete_document(doc_id)
        if partition_key_for(doc_id) in registered:
            instance.delete_dynamic_partition(partitions, partition_key_for(doc_id))

    job = defs.resolve_job_def(ingest_job_name(corpus.name))
    chunks_embedded = 0
    failures = []
    for n, doc_id in enumerate(changed, start=1):
        if progress:
            print(f"[{corpus.name}] {n}/{len(changed)} {doc_id}", file=progress, flush=True)
        result = job.execute_in_process(
            partition_key=partition_key_for(doc_id), instance=instance, raise_on_error=False, run_config=QUIET
        )
        if not result.success:
            failures.append({"corpus": corpus.name, "doc_id": doc_id, "error": _failure_message(result)})
            continue
        for mat in result.asset_materializations_for_node(f"{corpus.name}__embeddings"):
            chunks_embedded += int(mat.metadata["chunks_embedded"].value)
    return {
        "documents_seen": len(listed),
        "documents_changed": len(changed),
        "documents_deleted": len(deleted),
        "documents_failed": len(failures),
        "chunks_embedded": chunks_embedded,
        "rows_in_index": index.count_rows(),
        "failures": failures,
    }


def ingest_project(project: Project, corpora: list[str] | None = None, progress: TextIO | None = None) -> dict:
    """Ingest the named corpora (default all); returns summed counts plus a per-corpus breakdown."""
    defs = build_definitions(project)
    selected = [project.corpus(name) for name in corpora] if corpora else list(project.corpora)
    total = {"documents_seen": 0, "documents_changed": 0, "documents_deleted": 0, "documents_failed": 0,
             "chunks_embedded": 0, "rows_in_index": 0, "failures": [], "corpora": {}}
    with dg.DagsterInstance.get() as instance:
        for corpus in selected:
            report = ingest_corpus(corpus, defs, instance, progress)
            total["corpora"][corpus.name] = {k: v for k, v in report.items() if k != "failures"}
            total["failures"].extend(report["failures"])
            for key in ("documents_seen", "documents_changed", "documents_deleted", "documents_failed",
                        "chunks_embedded", "rows_in_index"):
                total[key] += report[key]
    return total
