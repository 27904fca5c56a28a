"""Drive the generated asset graph (the same asset code `dagster dev` runs) through real Dagster
runs: created with the code location's origin, executed in this process or on the Celery workers
when the project's executor is celery.

Per corpus: sweep the source (as its sensor does), report new and changed documents as
observations, add and delete partitions, run the ingest job over contiguous partition ranges of
``batch_size`` documents, and prune deleted documents from the table.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Callable, TextIO

import dagster as dg

from rag_assets.clients import connect_index, own_table
from rag_assets.config import ConfigError, Corpus, Project
from rag_assets.core.index import LanceIndex, documents_lacking, open_tables
from rag_assets.core.keys import doc_id_for, partition_key_for
from rag_assets.core.locking import ingest_lock
from rag_assets.core.planning import MassDeleteRefused, ModelChangedInPlace, SnapshotSeen, StoreSeen
from rag_assets.core.sources import SourceFolderMissing, SourceUnavailable
from rag_assets.defs.factory import build_definitions
from rag_assets.defs.failures import failed_keys, failed_partitions, failure_message
from rag_assets.defs.names import (
    PARTITION,
    RANGE_END,
    RANGE_START,
    STAGES,
    asset_key,
    data_tests_job_name,
    ingest_job_name,
    maintenance_job_name,
    partitions_name,
)
from rag_assets.defs.promotion import held_back
from rag_assets.defs.resources import CorpusResources, build_corpus_resources
from rag_assets.defs.runs import fail_abandoned_runs, run_job
from rag_assets.defs.sensors import Sweep, apply_sweep, in_flight, materialized, record, sweep
from rag_assets.defs.staleness import stale_status
from rag_assets.defs.versions import chunking_profile, code_versions
from rag_assets.progress import Progress
from rag_assets.query import serving, unserved

COUNTS = ("documents_seen", "documents_hashed", "documents_changed", "documents_new", "documents_deleted",
          "documents_failed",
          "documents_parsed", "chunks_embedded", "embedding_cache_hits", "rows_in_index", "runs")
LOCK_WAIT_SECONDS = 600.0  # a second ingest of a corpus waits this long for the first, then stops


def _batch_total(result, node: str, key: str) -> int:
    events = result.asset_materializations_for_node(node)
    return int(events[0].metadata[key].value) if events and key in events[0].metadata else 0


def _sweep(corpus: Corpus, resources: CorpusResources, index: LanceIndex, instance: dg.DagsterInstance,
           dry_run: bool, allow_mass_delete: bool = False) -> Sweep:
    """The corpus' sweep, against the stage store and the live ``index``; a dry run reads what was
    seen but records nothing, not even bytes."""
    source, store = resources.source, resources.store.get_store()
    partition_keys = list(instance.get_dynamic_partitions(partitions_name(corpus.name)))
    seen = SnapshotSeen(fallback=StoreSeen(store)) if dry_run else None
    return sweep(corpus, source.list_documents(), source.read, store, partition_keys, seen=seen,
                 keep_bytes=not dry_run, busy=in_flight(instance, corpus, partition_keys),
                 complete=index.complete_documents(), allow_mass_delete=allow_mass_delete,
                 materialized=materialized(instance, corpus))


def _maintenance_unfinished(instance: dg.DagsterInstance, job_name: str) -> bool:
    """Whether the corpus' last maintenance run failed or was cancelled (killed with its `rag
    ingest`, say): its prune, compaction and data tests are still to do."""
    last = instance.get_runs(dg.RunsFilter(job_name=job_name), limit=1)
    return bool(last) and last[0].status in (dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED)


SETTINGS_OF = {"parsed_documents": "parser settings", "chunks": "tokenizer or model input limit",
               "embeddings": "model settings", "lancedb_index": "index URI, model name, tenant or tags"}


def _redo(corpus: Corpus, store, corpus_sweep: Sweep, orphans: list[str],
          unsynced: Callable[[str], list[str]]) -> list[dict]:
    """What an ingest would redo, per document: why, which stages, and whether Dagster has observed
    what makes the work (``observed``: false until the sensor, `rag observe` or the ingest records
    it; until then the UI and `rag status` show the partition as before); ``orphans`` are documents
    no longer live whose rows the table still holds (maintenance prunes them). For a settings
    change the stages are those Dagster shows unsynced (``unsynced``: doc id -> its stages)."""
    plan = corpus_sweep.plan
    unobserved = set(map(doc_id_for, [o.partition for o in corpus_sweep.observations]
                         + corpus_sweep.new_keys + corpus_sweep.deleted_keys))
    changed = {raw.doc_id for raw in plan.snapshots} | {u["doc_id"] for u in plan.unreadable}
    new = {doc_id_for(pk) for pk in corpus_sweep.new_keys}
    profile_hash = chunking_profile(corpus).fingerprint()
    out = []
    planned = set(plan.work)
    busy = {doc_id_for(pk) for pk in corpus_sweep.busy}
    work = plan.work + [d for d in map(doc_id_for, corpus_sweep.wanted) if d not in planned]
    for doc_id in work:
        indexed = store.current("index", doc_id) or {}
        if doc_id in new:
            reason, stages = "new", list(STAGES)
        elif doc_id in changed and indexed.get("key") and not indexed.get("error") and \
                indexed.get("content_hash") == plan.versions.get(doc_id):
            reason, stages = "moved: the same bytes at a new address, which its rows take", ["lancedb_index"]
        elif doc_id in changed or indexed.get("content_hash") not in (None, plan.versions.get(doc_id)):
            reason, stages = "content changed", list(STAGES)
        elif indexed.get("profile_hash") not in (None, profile_hash):
            reason, stages = "chunk profile changed", unsynced(doc_id) or list(STAGES[1:])
        elif indexed.get("model") not in (None, corpus.embedding_model.name):
            # chunks too where the new model reads another tokenizer or fewer tokens: as Dagster marks them
            reason, stages = "embedding model changed", unsynced(doc_id) or list(STAGES[2:])
        elif indexed.get("index_version") not in (None, code_versions(corpus)["lancedb_index"]):
            stages = unsynced(doc_id) or list(STAGES)
            reason = f"{SETTINGS_OF[stages[0]]} changed"
        elif doc_id in plan.work and indexed.get("key") and not indexed.get("error"):
            reason, stages = "its rows in the index are missing or of an older version (lost or restored)", list(STAGES)
        elif doc_id in plan.work:
            reason, stages = "not indexed yet", list(STAGES)
        else:
            reason, stages = "not materialised in Dagster", list(STAGES)
        out.append({"doc_id": doc_id, "reason": reason, "stages": stages,
                    "queued_or_running": doc_id in busy, "observed": doc_id not in unobserved})
    out.extend({"doc_id": doc_id, "reason": "deleted from the source", "stages": ["lancedb_table"],
                "queued_or_running": False, "observed": doc_id not in unobserved}
               for doc_id in sorted({*plan.deleted, *orphans}))
    return out


def ingest_corpus(project: Project, corpus: Corpus, defs: dg.Definitions, instance: dg.DagsterInstance,
                  progress: TextIO | None, dry_run: bool = False, allow_mass_delete: bool = False) -> dict:
    """Ingest one corpus, holding its ingest lock (a second ingest of the corpus waits, then
    stops with IngestLocked) unless it is a dry run."""
    if dry_run:
        return _ingest_corpus(project, corpus, defs, instance, progress, True, allow_mass_delete)
    def waiting(holder: str) -> None:
        print(f"[{corpus.name}] process {holder} is ingesting this corpus: waiting up to "
              f"{LOCK_WAIT_SECONDS / 60:g} min for it to finish", file=sys.stderr, flush=True)

    with ingest_lock(corpus.lock_dir, corpus.name, wait_seconds=LOCK_WAIT_SECONDS, on_wait=waiting):
        fail_abandoned_runs(instance, [ingest_job_name(corpus.name), maintenance_job_name(corpus.name)])
        return _ingest_corpus(project, corpus, defs, instance, progress, False, allow_mass_delete)


def _require_env(project: Project, corpus: Corpus, runs: bool = True) -> None:
    """Raise ConfigError naming the file, the key and the variable when an environment variable
    the corpus' config names for a secret (and, for ``runs``, the executor's URLs) is unset:
    Dagster only says its resource config failed."""
    model, source, index = corpus.embedding_model, corpus.source, corpus.index
    named = [("profiles/embedding_models.yml", f"{model.name}.api_key_env", model.api_key_env)] \
        if model.provider == "openai" else []
    if source.kind == "s3":
        named += [("sources.yml", f"{source.name}.{k}", getattr(source, k)) for k in ("access_key_env", "secret_key_env")]
    if source.auth_header_env:
        named.append(("sources.yml", f"{source.name}.auth_header_env", source.auth_header_env))
    named += [("profiles/indexes.yml", f"{index.name}.{k}", getattr(index, k))
              for k in ("access_key_env", "secret_key_env") if getattr(index, k)]
    if runs and project.executor.kind == "celery":
        named += [("rag_project.yml", f"executor.{k}", getattr(project.executor, k)) for k in ("broker_env", "backend_env")]
    for file, key, variable in named:
        if not os.environ.get(variable):
            raise ConfigError(Path(project.project_dir) / file, key, f"environment variable {variable} is not set (or empty)",
                              f"export {variable}=... where rag and Dagster run (the secret never goes in the config)")


def _ingest_corpus(project: Project, corpus: Corpus, defs: dg.Definitions, instance: dg.DagsterInstance,
                   progress: TextIO | None, dry_run: bool, allow_mass_delete: bool) -> dict:
    _require_env(project, corpus)
    report = dict.fromkeys(COUNTS, 0)
    failures: list[dict] = []
    checks: dict[str, bool] = {}
    with dg.build_resources(build_corpus_resources(corpus)) as built:
        resources = CorpusResources(built, corpus)
        store, index = resources.store.get_store(), resources.index()
        corpus_sweep = _sweep(corpus, resources, index, instance, dry_run, allow_mass_delete)
        plan = corpus_sweep.plan
        report.update(documents_seen=len(plan.listed), documents_hashed=plan.hashed,
                      documents_changed=len(corpus_sweep.wanted),
                      documents_new=len(corpus_sweep.new_keys), documents_deleted=len(plan.deleted))
        if dry_run:
            live = set(plan.listed)
            orphans = [d for d in index.indexed_documents() if d not in live]
            report.update(rows_in_index=index.count_rows(), documents_deleted=len({*plan.deleted, *orphans}))
            stale: dict[str, set[str]] = {}  # stage -> unsynced partitions of the work, read once

            def unsynced(doc_id: str) -> list[str]:
                if not stale:
                    keys = sorted({partition_key_for(d) for d in plan.work} | set(corpus_sweep.wanted))
                    stale.update((stage, set(stale_status(defs, instance, asset_key(corpus.name, stage), keys)["stale"]))
                                 for stage in STAGES)
                return [stage for stage in STAGES if partition_key_for(doc_id) in stale[stage]]

            return {**report, "failures": [], "checks": {},
                    "documents": _redo(corpus, store, corpus_sweep, orphans, unsynced)}
        record(instance, apply_sweep(corpus, corpus_sweep, "", ingest_runs=False))  # runs below, in this process
        corpus_sweep.commit()
        bar = Progress(progress, f"[{corpus.name}] batches", len(corpus_sweep.batches))
        for n, ((first, last), versions) in enumerate(zip(corpus_sweep.batches, corpus_sweep.batch_versions),
                                                      start=1):
            bar.start(n, f"{first} .. {last}")
            tags = {PARTITION: first} if first == last else {RANGE_START: first, RANGE_END: last}
            # An interrupted run raises KeyboardInterrupt: no further batch, no maintenance.
            result = run_job(project, defs, ingest_job_name(corpus.name), instance, tags)
            report["runs"] += 1
            if not result.success:  # the whole batch stopped: none of its documents was indexed
                error = failure_message(result.get_step_failure_events())
                failures += [{"corpus": corpus.name, "doc_id": doc_id_for(pk), "error": error} for pk, _ in versions]
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
        live = set(plan.listed)
        indexed = index.indexed_documents()
        orphans = [d for d in indexed if d not in live]
        # A complete table held back by +promote_if: decided again under the current rule and questions.
        held_back = live <= set(indexed) and serving(project, corpus, index.db).label != own_table(corpus).label
        if corpus_sweep.batches or corpus_sweep.deleted_keys or orphans or held_back or \
                _maintenance_unfinished(instance, maintenance_job_name(corpus.name)):
            # The table: prune deleted documents, compact, run the data tests.
            result = run_job(project, defs, maintenance_job_name(corpus.name), instance)
            report["runs"] += 1
            if not result.success:
                failures.append({"corpus": corpus.name, "doc_id": "(table)",
                                 "error": failure_message(result.get_step_failure_events())})
            checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
            if result.success:  # pruned: documents deleted now, and those a sensor or observe removed earlier
                report["documents_deleted"] = len({*plan.deleted, *orphans})
        # Documents that failed before and were not tried again (unchanged): still failed, still listed.
        reported = {f["doc_id"] for f in failures}
        failures += [{"corpus": corpus.name, "doc_id": doc_id, "error": error, "earlier": True}
                     for doc_id, error in plan.failing.items()
                     if doc_id not in reported and doc_id not in plan.work and doc_id in live]
        report.update(documents_failed=sum(f["doc_id"] != "(table)" for f in failures),
                      documents_in_flight=sorted(doc_id_for(pk) for pk in corpus_sweep.busy),
                      rows_in_index=index.count_rows(), configured_table=own_table(corpus).label,
                      queries_refused=unserved(project, corpus, index.db))
        report["serving_table"] = None if report["queries_refused"] else serving(project, corpus, index.db).label
    report["failures"] = failures
    report["checks"] = checks
    return report


def restore_table(project: Project, corpus: Corpus, version: int) -> tuple[LanceIndex, object, dict[str, bool]]:
    """Make ``version`` of the table the corpus' queries use the latest again (not while `rag
    ingest` writes the corpus), then run the corpus' data tests on it in Dagster, so the UI and
    `rag status` show what the restore left (rows of versions the source no longer has fail
    index_rows_match_live_chunks until the next ingest). Returns the index, the restored
    TableVersion and check name -> passed. Raises ValueError naming the versions there are."""
    index = serving(project, corpus, connect_index(corpus)).index(connect_index(corpus), corpus.name)
    with ingest_lock(corpus.lock_dir, corpus.name):
        restored = index.restore(version)
        checks: dict[str, bool] = {}
        if corpus.data_tests:
            with dg.DagsterInstance.get() as instance:
                result = run_job(project, build_definitions(project), data_tests_job_name(corpus.name), instance,
                                 launched_by="rag restore")
                checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    return index, restored, checks


def observe_project(project: Project, corpora: list[str] | None = None) -> dict:
    """Report each corpus' current document versions to Dagster (observations, new and deleted
    partitions), as its sensor does; runs nothing. Returns counts per corpus."""
    out = {}
    with dg.DagsterInstance.get() as instance:
        for corpus in _selected(project, corpora):
            _require_env(project, corpus, runs=False)
            with dg.build_resources(build_corpus_resources(corpus)) as built:
                resources = CorpusResources(built, corpus)
                corpus_sweep = _sweep(corpus, resources, resources.index(), instance, dry_run=False)
            record(instance, apply_sweep(corpus, corpus_sweep, "", ingest_runs=False))
            corpus_sweep.commit()
            out[corpus.name] = {"documents_seen": len(corpus_sweep.plan.listed),
                                "documents_observed": len(corpus_sweep.observations),
                                "documents_new": len(corpus_sweep.new_keys),
                                "documents_deleted": len(corpus_sweep.deleted_keys)}
    return {"corpora": out}


def status_project(project: Project, corpora: list[str] | None = None) -> dict:
    """Per corpus and stage, the partitions Dagster itself reports as fresh, stale and missing (and, of
    those, failed: the Partitions tab's Failed, their latest run failed); and
    per corpus the table queries use (``serving_table``, model / profile) and the one its config
    builds (``configured_table``): they differ while a switch is incomplete or held back; and the
    live documents whose latest ingest failed (``failed_documents``: doc id and cause; a document
    that failed alone Dagster counts materialised, with ``status: failed``; one whose whole batch
    failed, Failed, with the run's id; their last good rows stay); while the
    two tables differ, ``pending_switch`` says why (else null); ``queries_refused``: why no table
    can answer queries until the next ingest completes the configured one (``query.unserved``; then
    ``serving_table`` is null and ``pending_switch`` says what the configured table lacks), or while
    the table queries use holds no rows (never ingested; deleted, moved or emptied), or null."""
    defs = build_definitions(project)
    out = {}
    with dg.DagsterInstance.get() as instance:
        for corpus in _selected(project, corpora):
            partition_keys = list(instance.get_dynamic_partitions(partitions_name(corpus.name)))
            stages, failed_by_stage = {}, {}
            for stage in STAGES:
                status = stale_status(defs, instance, asset_key(corpus.name, stage), partition_keys)
                failed = failed_by_stage[stage] = failed_keys(instance, corpus.name, stage, partition_keys)
                stages[stage] = {"fresh": len(status["fresh"]), "stale": len(status["stale"]),
                                 "missing": len(status["missing"]), "failed": len(failed),
                                 "stale_partitions": status["stale"], "missing_partitions": status["missing"],
                                 "failed_partitions": failed}
            _require_env(project, corpus, runs=False)
            db = connect_index(corpus)
            live, configured = serving(project, corpus, db), own_table(corpus)
            refused = unserved(project, corpus, db)
            # its table is not live yet (before any partition is observed there is nothing to switch to)
            switching = bool(partition_keys) and (live.label != configured.label or refused is not None)
            with dg.build_resources(build_corpus_resources(corpus)) as built:
                store = CorpusResources(built, corpus).store.get_store()
                records = {doc_id_for(pk): store.current("index", doc_id_for(pk)) or {} for pk in partition_keys}
                # the content each holds now, against which a switch's table is judged
                sources = {doc_id: (store.current("raw", doc_id) or {}).get("key") for doc_id in records} \
                    if switching else {}
            failed = [{"doc_id": d, "error": r["error"]} for d, r in records.items() if r.get("error")]
            recorded = {f["doc_id"] for f in failed}
            failed = sorted(failed + [{"doc_id": doc_id_for(pk), "error": why} for pk, why in
                                      failed_partitions(instance, corpus.name, partition_keys, failed_by_stage).items()
                                      if doc_id_for(pk) not in recorded], key=lambda f: f["doc_id"])
            served = live.index(db, corpus.name)
            held = served.indexed_documents() if served.manifest_name in open_tables(db, served.manifest_name) else {}
            out[corpus.name] = {"partitions": len(partition_keys), "stages": stages,
                                "serving_table": None if refused else live.label,
                                "configured_table": configured.label, "queries_refused": refused,
                                "failed_documents": failed,
                                "deleted_documents_with_rows": sorted(set(held) - set(records)),
                                "pending_switch": None if not switching
                                else _pending_switch(instance, corpus, configured.index(db, corpus.name), records,
                                                     sources)}
    return {"corpora": out}


SHOWN_MISSING = 20


def _pending_switch(instance: dg.DagsterInstance, corpus: Corpus, index: LanceIndex, records: dict[str, dict],
                    sources: dict[str, str | None]) -> dict:
    """Why the corpus' configured table ``index`` is not the serving one, given the live documents'
    index records and the content hash of each as the source holds it (``sources``): ``state``
    ``incomplete`` (it lacks ``documents_missing`` live documents, or holds another version of them; the first
    ``missing_documents``, those whose ingest failed first, with their error: a failed document
    holds the switch until it is fixed or deleted), ``held_back`` (the +promote_if decision the last
    maintenance recorded, in ``reason``) or ``waiting`` (complete; the next maintenance decides)."""
    opened = index.manifest_name in open_tables(index.db, index.manifest_name)
    indexed = index.indexed_documents() if opened else {}
    missing = sorted(documents_lacking(indexed, sources), key=lambda d: (not records[d].get("error"), d))
    if missing:
        failed = [d for d in missing if records[d].get("error")]
        reason = f"it lacks {len(missing)} live document(s): " + (
            f"{len(failed)} failed to ingest ({', '.join(failed[:5])}); fix or delete them, then run rag ingest"
            if failed else "rag ingest adds them")
        return {"state": "incomplete", "reason": reason, "documents_missing": len(missing),
                "missing_documents": [{"doc_id": d, "error": records[d].get("error")} for d in missing[:SHOWN_MISSING]]}
    reason = held_back(instance, corpus)
    if reason is not None:
        return {"state": "held_back", "reason": f"held back by +promote_if: {reason}",
                "documents_missing": 0, "missing_documents": []}
    then = "applies +promote_if to it" if corpus.promote_if else "makes it live"
    return {"state": "waiting", "reason": f"complete: the next rag ingest (or {maintenance_job_name(corpus.name)} "
                                          f"run) {then}", "documents_missing": 0, "missing_documents": []}


def _selected(project: Project, corpora: list[str] | None) -> list[Corpus]:
    return [project.corpus(name) for name in corpora] if corpora else list(project.corpora)


def ingest_project(project: Project, corpora: list[str] | None = None, progress: TextIO | None = None,
                   dry_run: bool = False, allow_mass_delete: bool = False) -> dict:
    """Ingest the named corpora (default all); returns summed counts plus a per-corpus breakdown.
    A dry run only lists, per corpus, what would be redone (``documents``), and writes nothing.
    A corpus whose sweep is stopped as a whole (a refused mass delete, a source missing or down, a
    model changed in place) stops only itself: the others are ingested, then its error is raised
    with their report as its ``report`` (``stopped`` names each stopped corpus and its error)."""
    defs = build_definitions(project)
    total: dict = {**dict.fromkeys(COUNTS, 0), "failures": [], "corpora": {}}
    stopped: dict[str, Exception] = {}
    with dg.DagsterInstance.get() as instance:
        for corpus in _selected(project, corpora):
            try:
                report = ingest_corpus(project, corpus, defs, instance, progress, dry_run, allow_mass_delete)
            except (MassDeleteRefused, ModelChangedInPlace, SourceFolderMissing, SourceUnavailable) as exc:
                stopped[corpus.name] = exc
                continue
            total["corpora"][corpus.name] = {k: v for k, v in report.items() if k != "failures"}
            total.setdefault("checks", {}).update({f"{corpus.name}.{k}": v for k, v in report["checks"].items()})
            total["failures"].extend(report["failures"])
            for key in COUNTS:
                total[key] += report[key]
    if stopped:
        first = next(iter(stopped.values()))
        first.report = {**total, "stopped": {name: str(exc) for name, exc in stopped.items()}}
        raise first
    return total
