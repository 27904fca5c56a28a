"""The ``rag`` command line: ingest documents through the Dagster asset graph, then query them.

Exit codes: 0 success; 1 the command ran but part of its work failed or found nothing; 2 bad
usage, config or input; 130 interrupted (143 on SIGTERM); 141 output pipe closed. Tables for people by default, ``--json`` for scripts.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import signal
import sys
import warnings
from dataclasses import asdict
from pathlib import Path

ROW_ID = re.compile(r"[0-9a-f]{32}")

EXIT_CODES = """exit codes:
  0    success
  1    the command ran, but part of its work failed or found nothing (a document failed to
       ingest or parse, and the rest were processed; no index row with that id; another ingest
       holds the corpus; the disk is full)
  2    bad usage, config or input (unknown option, key, corpus, profile or filter value; a file
       or source folder that cannot be read; a corpus with tenants queried without --tenant; a
       mass delete refused)
  130  interrupted (Ctrl-C): the running batch is abandoned, nothing after it starts
  143  terminated (SIGTERM): the same
  141  the reader of its output went away (piped into head): stopped quietly
A query that no result matches exits 0. Errors are one line; `rag --debug COMMAND` shows the traceback.
"""

EXAMPLES = """examples:
  rag ingest                      ingest every corpus (only changed documents are processed)
  rag ingest --json               the same, printing one JSON object of counts
  rag query "what is the refund policy?" --k 3
  rag query "error E-217" --json --mode fts
  rag query "reset the robot" --filter section=Troubleshooting --expand 1
  rag query "refund policy" --as-of 3        query table version 3 (LanceDB time travel)
  rag lineage 1f0c...e9 --json              source, versions, profile, model and run of a row
  rag tables --drop-unused                  drop tables and caches of models and profiles no longer declared
  rag gc --dry-run                          what the stage store holds that no document uses any more
  rag eval --questions ../shared/benchmarks/chroma_chunking_eval/questions.csv --profile fixed_200_0 --profile default
  rag chunk sample_docs/support/customer_faq.md --strategy faq --max-tokens 128
  rag chunk notes.txt --tokenizer cl100k_base --max-tokens 400 --overlap 0 --json
  rag serve --port 8000           answer queries over HTTP: POST /query {"query": "refund policy"}

""" + EXIT_CODES

# Per-command examples, shown by `rag COMMAND --help`.
COMMAND_EXAMPLES = {
    "ingest": """examples:
  rag ingest                   every corpus; only new and changed documents are processed
  rag ingest --corpus sample   one corpus (repeatable)
  rag ingest --json | jq .rows_in_index
  rag ingest --dry-run         what would be redone, per document and stage; writes nothing
  RAG_SAMPLE_DOCS=~/docs rag ingest    point the sample corpus at your own folder
""",
    "observe": """examples:
  rag observe                  report new, changed and deleted documents to Dagster (as the sensor does)
  rag observe --json
  rag observe && rag status    then see which partitions are unsynced
""",
    "status": """examples:
  rag status                   fresh / stale / missing / failed partitions per corpus and stage
  rag status --json | jq '.corpora.sample.stages.chunks.stale_partitions'
""",
    "query": """examples:
  rag query "what is the refund policy?" --k 3
  rag query "error E-217" --mode fts --json
  rag query "reset the robot" --filter section=Troubleshooting --expand 1
  rag query "refund" --tenant acme --filter updated_after=2026-01-01
  rag query "refund policy" --as-of 3     table version 3 (LanceDB time travel)
""",
    "lineage": """examples:
  rag query "refund policy" --json | jq -r '.[0].id'    find a row id
  rag lineage 1f0c...e9                                 source, versions, profile, model and run
  rag lineage 1f0c...e9 --json
  rag lineage 1f0c...e9 --corpus sample       where two corpora hold the same file
""",
    "restore": """examples:
  rag restore --corpus sample                 list the table's versions with their row counts
  rag restore --corpus sample --as-of 7       make version 7 the latest again (deleted rows come back)
""",
    "tables": """examples:
  rag tables                                  every corpus' tables (serving, configured, previous, unused)
                                              and embedding caches
  rag tables --corpus sample --json
  rag tables --drop-unused                    drop tables of models and profiles no longer declared
  rag tables --drop-unused --drop-previous    keep only the serving and the configured table
""",
    "gc": """examples:
  rag gc --dry-run                            what each corpus' stage store would free
  rag gc                                      remove unused artifacts older than stage_store_gc.older_than_days
  rag gc --corpus sample --older-than-days 0 --json
  rag gc --drop-undeclared old_corpus         remove the stage store of a corpus no longer declared
""",
    "eval": """examples:
  rag eval --questions dbt_like_configs/evals/sample_questions.yml --profile default --profile recommended
  rag eval --questions questions.csv --corpora corpora/ --profile fixed_200_0 --mode hybrid --json
""",
    "serve": """examples:
  rag serve                                   http://127.0.0.1:8000: POST /query, GET /health
  curl -s 127.0.0.1:8000/query -d '{"query": "refund policy", "k": 3}'
  RAG_SERVE_TOKEN=... rag serve --host 0.0.0.0 --token-env RAG_SERVE_TOKEN    beyond this machine: a token
  RAG_TENANT_TOKENS='{"tok-a": "acme", "tok-g": "globex"}' rag serve --tenant-tokens-env RAG_TENANT_TOKENS
""",
    "chunk": """examples:
  rag chunk sample_docs/support/customer_faq.md --strategy faq --max-tokens 128
  rag chunk notes.txt --tokenizer cl100k_base --max-tokens 400 --overlap 0 --json
  rag chunk report.pdf --profile recommended
""",
}


def _table(headers: list[str], rows: list[list]) -> str:
    """Aligned columns: numbers right, text left."""
    cells = [[str(c) for c in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    numeric = [all(isinstance(row[i], (int, float)) for row in rows) and bool(rows) for i in range(len(headers))]

    def line(values):
        return "  ".join(v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)).rstrip()

    return "\n".join([line(headers), *(line(r) for r in cells)])


def _checks(results: dict[str, bool]) -> str:
    if not results:
        return "-"
    failed = sorted(name for name, passed in results.items() if not passed)
    return f"{len(results) - len(failed)}/{len(results)} passed" + (f" (failed: {', '.join(failed)})" if failed else "")


def _prepare_instance(dagster_home: str) -> None:
    """Use the project's Dagster instance (shared with `dagster dev`); a new one gets the
    project's instance config (rag_assets.instance)."""
    from rag_assets.instance import write_instance_config

    write_instance_config(os.environ.setdefault("DAGSTER_HOME", dagster_home))


def cmd_ingest(args) -> int:
    from rag_assets.config import load_project
    from rag_assets.ingest import ingest_project

    project = load_project(args.project)
    _prepare_instance(project.dagster_home)
    try:
        report = ingest_project(project, corpora=args.corpus, progress=None if args.json else sys.stderr,
                                dry_run=args.dry_run, allow_mass_delete=args.allow_mass_delete)
    except Exception as exc:
        if getattr(exc, "report", None) and exc.report["corpora"]:  # the corpora that were not stopped
            _print_ingest(exc.report, args)
        raise
    return _print_ingest(report, args)


def _print_ingest(report: dict, args) -> int:
    if args.dry_run:
        if args.json:
            print(json.dumps({"corpora": {name: {"documents": c["documents"], "documents_seen": c["documents_seen"]}
                                          for name, c in report["corpora"].items()},
                              **{k: report[k] for k in ("stopped",) if k in report}}, indent=2, ensure_ascii=False))
            return 0
        for name, c in report["corpora"].items():
            print(f"{name}: {len(c['documents'])} of {c['documents_seen']} documents would be redone")
            rows = [[d["doc_id"], d["reason"], ", ".join(d["stages"]), "yes" if d["observed"] else "not yet",
                     "yes" if d["queued_or_running"] else ""] for d in c["documents"]]
            if rows:
                print(_table(["document", "reason", "stages", "in Dagster", "queued/running"], rows))
            if unseen := sum(not d["observed"] for d in c["documents"]):
                print(f"{name}: {unseen} not yet observed: the UI and `rag status` show them as before until the "
                      "source sensor, `rag observe` or `rag ingest` records the change")
        return 0
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        columns = ["documents_seen", "documents_changed", "documents_new", "documents_deleted", "documents_failed",
                   "chunks_embedded", "embedding_cache_hits", "rows_in_index"]
        headers = ["corpus", "seen", "changed", "new", "deleted", "failed", "embedded", "cached", "rows", "checks"]
        print(_table(headers, [[name, *(c[k] for k in columns), _checks(c["checks"])]
                               for name, c in report["corpora"].items()]))
        for name, c in report["corpora"].items():
            if c["queries_refused"]:
                print(c["queries_refused"])
            elif c["serving_table"] != c["configured_table"]:
                print(f"{name}: queries stay on {c['serving_table']}; {c['configured_table']} is not live yet "
                      "(`rag status` says why)")
            if busy := c["documents_in_flight"]:
                shown = ", ".join(busy[:3]) + (f" and {len(busy) - 3} more" if len(busy) > 3 else "")
                print(f"{name}: left to runs already queued or running (launched from the UI, a sensor or the "
                      f"automation): {shown}; queries find their new text when those runs finish")
        from rag_assets.core.errors import disk_full

        # A full disk stops whole batches: one line with the folders and the fix, not one per document.
        full = [f for f in report["failures"] if disk_full(RuntimeError(f["error"]), str)]
        for failure in sorted(report["failures"], key=lambda f: (f["corpus"], f["doc_id"])):
            if failure not in full:
                since = " (unchanged since it failed in an earlier ingest)" if failure.get("earlier") else ""
                print(f"FAILED {failure['corpus']}/{failure['doc_id']}{since}: {failure['error']}", file=sys.stderr)
        if full:
            message = disk_full(RuntimeError(full[0]["error"]), lambda: _written_folders(args.project))
            print(f"rag: {message} ({len(full)} documents or batches stopped by it)", file=sys.stderr)
        elif report["failures"]:
            print("the documents that did not fail were indexed; a failed document keeps its last good rows. Fix "
                  "the cause and run `rag ingest` again: the documents of a batch that stopped are redone, a document that "
                  "failed alone is retried once it (or the config) changes.", file=sys.stderr)
    return 1 if report["failures"] else 0


def cmd_observe(args) -> int:
    from rag_assets.config import load_project
    from rag_assets.ingest import observe_project

    project = load_project(args.project)
    _prepare_instance(project.dagster_home)
    report = observe_project(project, corpora=args.corpus)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    columns = ["documents_seen", "documents_observed", "documents_new", "documents_deleted"]
    print(_table(["corpus", "seen", "observed", "new", "deleted"],
                 [[name, *(c[k] for k in columns)] for name, c in report["corpora"].items()]))
    return 0


def cmd_status(args) -> int:
    from rag_assets.config import load_project
    from rag_assets.ingest import status_project

    project = load_project(args.project)
    _prepare_instance(project.dagster_home)
    report = status_project(project, corpora=args.corpus)
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
        return 0
    def some(names: list[str]) -> str:
        return ", ".join(names[:5]) + (f" (+{len(names) - 5} more)" if len(names) > 5 else "")

    rows = [[name, stage, s["fresh"], s["stale"], s["missing"], s["failed"], some(s["stale_partitions"])]
            for name, c in report["corpora"].items() for stage, s in c["stages"].items()]
    print(_table(["corpus", "stage", "fresh", "stale", "missing", "failed", "stale partitions"], rows))
    for name, c in report["corpora"].items():
        pending = "" if c["pending_switch"] is None else \
            f" (configured: {c['configured_table']}, not live yet: {c['pending_switch']['reason']})"
        print(c["queries_refused"] or f"{name}: queries use {c['serving_table']}{pending}")
        for failed in c["failed_documents"]:
            print(f"{name}: FAILED {failed['doc_id']} (any earlier rows of it stay): {failed['error']}")
        held = c["deleted_documents_with_rows"]
        if held and not c["partitions"]:  # the index was written with another Dagster instance
            print(f"{name}: the index holds rows of {len(held)} document(s), and this Dagster instance "
                  f"(DAGSTER_HOME) has no partition of the corpus: `rag ingest` records the source's documents "
                  "(their rows are reused) and removes the rows of those it no longer lists")
        elif not c["partitions"]:
            print(f"{name}: no documents recorded yet: run rag ingest (or let the source sensor find them)")
        elif held:
            print(f"{name}: {len(held)} deleted document(s) still have rows in the index "
                  f"({some(held)}): `rag ingest`, or the maintenance run the source "
                  "sensor requests, removes them")
    return 0


def cmd_query(args) -> int:
    from rag_assets.config import load_project
    from rag_assets.query import NotIngested, query_corpus

    from rag_assets.core.retrieval import FilterError, Filters

    project = load_project(args.project)
    corpus = project.corpus(args.corpus) if args.corpus else project.corpora[0]
    try:
        args.text.encode("utf-8")
    except UnicodeEncodeError:  # bytes the terminal's locale could not decode (surrogate escapes)
        print("rag: the query holds bytes that are not UTF-8 (a terminal set to another encoding?): "
              "set a UTF-8 locale, e.g. LANG=C.UTF-8, and ask again", file=sys.stderr)
        return 2
    try:
        filters = Filters.parse(args.filter or [], tenant=args.tenant)
        hits = query_corpus(project, corpus, args.text, k=args.k, as_of=args.as_of, mode=args.mode,
                            filters=filters, rerank=args.rerank, neighbours=args.expand)
    except (FilterError, ValueError) as exc:  # bad filter, missing tenant, no such table version
        print(f"rag: {exc}", file=sys.stderr)
        return 2
    except NotIngested as exc:
        print(f"rag: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps([h.to_dict() for h in hits], indent=2, ensure_ascii=False))
        return 0
    if not hits:
        named = [*(args.filter or []), *([f"tenant={args.tenant}"] if args.tenant else [])]
        if named:
            print(f"no results match the filters ({', '.join(named)}): check their values, or drop one")
        elif args.mode == "fts":
            print("no chunk holds the query's words: try --mode hybrid or --mode vector")
        return 0
    for rank, hit in enumerate(hits, start=1):
        snippet = " ".join(hit.text.split())
        print(f"[{rank}] score {hit.score:.3f}  {hit.citation()}")
        if hit.also_in:
            print(f"    also in: {', '.join(hit.also_in)} (the same file)")
        print(f"    {snippet[:300]}{'...' if len(snippet) > 300 else ''}")
    return 0


_UNSHOWN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


class _Shown(io.TextIOBase):
    """A terminal stream that shows control characters (a document's or a file name's escape
    sequences, which could clear the screen or retitle the window) and bidi overrides (which
    reorder what is shown) as escapes. Newlines and tabs pass; so does the carriage return that
    starts a write (the progress bar redrawing its line)."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> int:
        redraw = "\r" if text.startswith("\r") else ""
        self.stream.write(redraw + _UNSHOWN.sub(lambda m: ascii(m.group())[1:-1], text[len(redraw):]))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    @property
    def encoding(self) -> str:
        return self.stream.encoding


def cmd_eval(args) -> int:
    from contextlib import ExitStack

    from rag_assets.config import load_project
    from rag_assets.core.evaluation import brings_its_texts
    from rag_assets.evaluate import eval_corpus, evaluate

    project = load_project(args.project)
    try:
        corpus = project.corpus(args.corpus) if args.corpus else eval_corpus(project, args.questions)
        with ExitStack() as stack:
            source = None
            if corpus.source.kind != "disk" and not brings_its_texts(args.questions):
                # an S3 source is read through its resource, as an ingest reads it (a CSV set brings its own texts)
                import dagster as dg

                from rag_assets.defs.resources import source_resource

                source = stack.enter_context(dg.build_resources({"source": source_resource(corpus)})).source
            rows = evaluate(project, args.questions, args.profile, corpora=args.corpora, embedder=args.embedder,
                            mode=args.mode, k=args.k, progress=None if args.json else sys.stderr, corpus=corpus,
                            warnings=sys.stderr, source=source)
    except (FileNotFoundError, ValueError) as exc:
        print(f"rag: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    keys = ["profile", "chunks", "mean_tokens", "recall", "recall_ci", "precision", "precision_omega", "iou", "iou_ci",
            "recall_at_1", "recall_at_5", "recall_at_10", "mrr"]

    def cell(value):
        if value is None:
            return "-"
        return f"[{value[0]:.1f}, {value[1]:.1f}]" if isinstance(value, list) else value

    print(_table(["profile", "chunks", "tokens", "recall", "95% CI", "prec", "prec_w", "iou", "95% CI", "R@1", "R@5",
                  "R@10", "MRR"], [[cell(r[k]) for k in keys] for r in rows]))
    return 0


def cmd_lineage(args) -> int:
    from rag_assets.config import load_project
    from rag_assets.query import lineage

    if not ROW_ID.fullmatch(args.row_id):
        print(f"rag: {args.row_id!r} is not a row id: row ids are 32 hex characters, as `rag query --json` "
              "prints them", file=sys.stderr)
        return 2
    found = lineage(load_project(args.project), args.row_id, args.corpus)
    if not found:
        print(f"rag: no index row with id {args.row_id!r}{f' in corpus {args.corpus!r}' if args.corpus else ''}",
              file=sys.stderr)
        return 1
    if len(found) > 1:
        print(f"rag: corpora {', '.join(repr(f['corpus']) for f in found)} each hold a row with id {args.row_id!r} "
              "(the same file with the same text): add --corpus NAME", file=sys.stderr)
        return 2
    found = found[0]
    if args.json:
        print(json.dumps(found, indent=2, ensure_ascii=False))
    else:
        for key, value in found.items():
            print(f"{key:>22}: {value}")
    return 0


def cmd_gc(args) -> int:
    import dagster as dg

    from rag_assets.config import load_project
    from rag_assets.core.errors import UsageError
    from rag_assets.core.garbage import collect_garbage, undeclared_stores
    from rag_assets.core.locking import ingest_lock
    from rag_assets.defs.resources import stage_store_resource

    project = load_project(args.project)
    days = project.stage_store_gc.older_than_days if args.older_than_days is None else args.older_than_days
    corpora = [project.corpus(name) for name in args.corpus] if args.corpus else project.corpora
    resources = {f"corpus_{c.name}": stage_store_resource(c) for c in corpora}
    resources["stages"] = stage_store_resource(project.corpora[0], project.corpora[0].stages_dir)
    reports, undeclared = {}, []
    with dg.build_resources(resources) as built:
        stages = built.stages.get_store().blobs
        if not args.corpus or args.drop_undeclared:
            undeclared = undeclared_stores(stages, {c.name for c in project.corpora})
        found = {old.corpus for old in undeclared}
        if unknown := sorted(set(args.drop_undeclared or []) - found):
            raise UsageError(f"--drop-undeclared {unknown[0]}: no stage store of an undeclared corpus of that name "
                             f"in {stages} (found: {', '.join(sorted(found)) or 'none'})")
        for corpus in corpora:
            with ingest_lock(corpus.lock_dir, corpus.name):  # not while `rag ingest` writes this corpus
                store = getattr(built, f"corpus_{corpus.name}").get_store()
                reports[corpus.name] = collect_garbage(store, days * 86400, dry_run=args.dry_run)
        for old in undeclared:
            if old.corpus in (args.drop_undeclared or []) and not args.dry_run:
                stages.remove_folder(f"{old.corpus}/")
                old.dropped = True
    if args.json:
        print(json.dumps({"corpora": {name: report.to_dict() for name, report in reports.items()},
                          "undeclared": [asdict(old) for old in undeclared]}, indent=2))
        return 0
    rows = [[name, stage, t.artifacts, t.referenced, t.recent, t.removed, f"{t.removed_bytes / 2**20:.1f}",
             f"{(t.bytes - t.removed_bytes) / 2**20:.1f}"]
            for name, report in reports.items() for stage, t in report.stages.items()]
    print(_table(["corpus", "stage", "artifacts", "in use", "recent", "would remove" if args.dry_run else "removed",
                  "MiB", "MiB kept"], rows))
    removed = sum(r.removed for r in reports.values())
    freed = sum(r.removed_bytes for r in reports.values()) / 2**20
    print(f"{'would remove' if args.dry_run else 'removed'} {removed} unused file(s) written over {days:g} days ago "
          f"({freed:.1f} MiB); 'recent' ones are kept until they are that old")
    for old in undeclared:
        size = f"{old.files} files, {old.bytes / 2**20:.1f} MiB"
        print(f"undeclared: {old.corpus}'s stage store ({size}) removed" if old.dropped else
              f"undeclared: {old.corpus} ({size}) is no longer in rag_project.yml; its stage store is kept: "
              f"`rag gc --drop-undeclared {old.corpus}` removes it")
    return 0


def cmd_restore(args) -> int:
    from rag_assets.clients import connect_index
    from rag_assets.config import load_project
    from rag_assets.query import serving

    project = load_project(args.project)
    corpus = project.corpus(args.corpus)
    try:
        if args.as_of is None:
            db = connect_index(corpus)
            versions = serving(project, corpus, db).index(db, corpus.name).versions()  # what `rag query --as-of` reads
        else:
            from rag_assets.ingest import restore_table

            _prepare_instance(project.dagster_home)
            index, restored, checks = restore_table(project, corpus, args.as_of)
    except ValueError as exc:  # no such table or version
        print(f"rag: {exc}", file=sys.stderr)
        return 2
    if args.as_of is None:
        rows = [{"version": v.version, "timestamp": v.timestamp.isoformat(timespec="seconds"), "rows": v.rows}
                for v in versions]
        print(json.dumps(rows, indent=2) if args.json else _table(["version", "written", "rows"],
                                                                   [list(r.values()) for r in rows]))
        return 0
    documents = len(index.indexed_documents())
    if args.json:
        print(json.dumps({"corpus": corpus.name, "table": index.name, "restored": args.as_of,
                          "version": restored.version, "rows": restored.rows, "documents": documents,
                          "checks": checks}))
    else:
        print(f"restored {index.name} to version {args.as_of} (now version {restored.version}): {restored.rows} "
              f"rows of {documents} documents; data tests {_checks(checks)}. The next `rag ingest` follows the "
              "source: documents edited since get their current text back, and documents the source no longer "
              "has are deleted again (fix the source first; a mass delete is refused unless --allow-mass-delete).")
    return 0


def cmd_tables(args) -> int:
    from contextlib import nullcontext

    from rag_assets.clients import connect_index
    from rag_assets.config import load_project
    from rag_assets.core.locking import ingest_lock
    from rag_assets.core.errors import UsageError
    from rag_assets.tables import (cache_tables, corpus_tables, drop_tables, drop_undeclared, drop_unused_caches,
                                   undeclared_tables)

    project = load_project(args.project)
    roles = tuple(r for r, asked in (("unused", args.drop_unused), ("previous", args.drop_previous)) if asked)
    listed = []
    folders = {}  # a damaged table's folder, to move aside

    def listing(corpus, tables, dropped):
        folders.update({t.table: f"{corpus.index_uri.rstrip('/')}/{t.table}.lance" for t in tables if t.damaged})
        return [{**t.to_dict(), "dropped": t.table in dropped} for t in tables]

    corpora = [project.corpus(name) for name in args.corpus] if args.corpus else project.corpora
    for corpus in corpora:
        db = connect_index(corpus)
        # Listed and dropped under the lock, not while `rag ingest` writes this corpus.
        with ingest_lock(corpus.lock_dir, corpus.name) if roles else nullcontext():
            tables = corpus_tables(project, corpus, db)
            dropped = {t.table for t in drop_tables(db, tables, roles)}
        listed += listing(corpus, tables, dropped)
    lancedbs = {c.index_uri: c for c in corpora}.values()
    undeclared = {c.index_uri: undeclared_tables(project, connect_index(c)) for c in lancedbs} \
        if not args.corpus or args.drop_undeclared else {}
    known = {t.corpus for tables in undeclared.values() for t in tables}
    if unknown := sorted(set(args.drop_undeclared or []) - known):
        raise UsageError(f"--drop-undeclared {unknown[0]}: no tables of an undeclared corpus of that name (undeclared "
                         f"corpora with tables: {', '.join(sorted(known)) or 'none'}; a declared corpus' tables are "
                         "dropped with --drop-unused or --drop-previous)")
    for corpus in lancedbs:
        db = connect_index(corpus)
        tables = undeclared.get(corpus.index_uri, [])
        dropped = {t.table for name in args.drop_undeclared or [] for t in drop_undeclared(db, tables, name)}
        listed += listing(corpus, tables, dropped)
    for corpus in lancedbs:  # each LanceDB's caches once
        db = connect_index(corpus)
        caches = cache_tables(project, db)
        dropped = {t.table for t in drop_unused_caches(db, caches)} if args.drop_unused else set()
        listed += listing(corpus, caches, dropped)
    if args.json:
        print(json.dumps(listed, indent=2))
        return 0
    columns = ["corpus", "table", "role", "model", "profile", "rows", "completed_at"] + (
        ["dropped"] if roles or args.drop_undeclared else []) + (["damaged"] if folders else [])

    def shown(value):
        return "-" if value is None else ("yes" if value else "no") if isinstance(value, bool) else value

    print(_table(columns, [[shown(t[c]) for c in columns] for t in listed])
          if listed else "no tables yet: run `rag ingest`")
    if left := sorted({t["corpus"] for t in listed if t["role"] == "undeclared" and not t["dropped"]}):
        print(f"undeclared: {', '.join(left)} (no longer in rag_project.yml; their tables are kept: "
              f"`rag tables --drop-undeclared {left[0]}` drops them)")
    for t in listed:
        if t["damaged"] and not t["dropped"]:
            print(f"damaged: {t['table']} cannot be read (a data file is lost or cut; queries and ingests that read "
                  f"it fail): move it aside (mv {folders[t['table']]} {folders[t['table']]}.damaged): the next "
                  "`rag ingest` recreates it")
    return 0


LOOPBACK = ("127.0.0.1", "::1", "localhost")


def _serve_tokens(token_env: str | None, tenant_tokens_env: str | None) -> dict[str, str | None] | None:
    """Token -> the tenant it may query (None: any) from the variables `rag serve` was told to read;
    None where it was told of none. ValueError naming the variable and the fix."""
    if not token_env and not tenant_tokens_env:
        return None
    tokens: dict[str, str | None] = {}
    if token_env:
        if not os.environ.get(token_env):
            raise ValueError(f"environment variable {token_env} is not set (or empty): export it with the token "
                             "clients must send")
        tokens[os.environ[token_env]] = None
    if tenant_tokens_env:
        example = '{"<token>": "<tenant>", ...}'
        try:
            scoped = json.loads(os.environ.get(tenant_tokens_env) or "null")
        except ValueError:
            scoped = None
        if not isinstance(scoped, dict) or not scoped or not all(
                isinstance(k, str) and k and isinstance(v, str) and v for k, v in scoped.items()):
            raise ValueError(f"environment variable {tenant_tokens_env} must hold a JSON object {example} "
                             "(each token and tenant a non-empty string)")
        if set(scoped) & set(tokens):
            raise ValueError(f"a token in {tenant_tokens_env} is also {token_env}'s: give each its own")
        tokens.update(scoped)
    return tokens


def cmd_serve(args) -> int:
    import uvicorn

    from rag_assets.config.loader import project_dir_from_env
    from rag_assets.serve import create_app

    try:
        tokens = _serve_tokens(args.token_env, args.tenant_tokens_env)
    except ValueError as exc:
        print(f"rag: {exc}", file=sys.stderr)
        return 2
    if tokens is None and args.host not in LOOPBACK:
        print(f"rag: serving on {args.host} would let anyone who reaches it read every corpus: add --token-env "
              "NAME (a variable holding the token clients send as 'Authorization: Bearer ...') or "
              "--tenant-tokens-env NAME, or serve on 127.0.0.1", file=sys.stderr)
        return 2
    app = create_app(Path(args.project).resolve() if args.project else project_dir_from_env(), tokens,
                     tuple(args.allow_origin or ()))
    print(f"rag: serving on http://{args.host}:{args.port} (POST /query, GET /health); Ctrl-C stops it", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


def cmd_chunk(args) -> int:
    from dataclasses import replace

    from rag_assets.config import load_project
    from rag_assets.config.profiles import profile_from_config
    from rag_assets.core.chunking import STRATEGY_NAMES, chunk_document, row_token_limit
    from rag_assets.core.chunking.code import read_as
    from rag_assets.core.chunking.profile import check_overlap
    from rag_assets.core.hashing import content_hash
    from rag_assets.core.models import RawDocument
    from rag_assets.core.parsing import DocumentError, parse_document
    from rag_assets.core.tokens import TokenizerUnavailable, get_token_counter

    project = load_project(args.project)
    path = Path(args.file)
    corpus = project.corpus(args.corpus) if args.corpus else next(
        (c for c in project.corpora if c.source.kind == "disk" and c.source_root
         and path.resolve().is_relative_to(Path(c.source_root).resolve())), project.corpora[0])
    profiles = {p.name: p for p in project.chunking_profiles}
    if args.profile and args.profile not in profiles:
        print(f"rag: unknown profile {args.profile!r}; known: {', '.join(profiles)}", file=sys.stderr)
        return 2
    profile = profile_from_config(profiles[args.profile] if args.profile else corpus.chunking_profile)
    if args.strategy:
        if args.strategy not in STRATEGY_NAMES:
            print(f"rag: unknown strategy {args.strategy!r}; known: {', '.join(STRATEGY_NAMES)}", file=sys.stderr)
            return 2
        profile = replace(profile, strategy=args.strategy, content_types=())
    if args.max_tokens is not None:
        profile = replace(profile, max_tokens=args.max_tokens)
    if args.overlap is not None:
        profile = replace(profile, overlap=args.overlap)
    try:
        check_overlap(profile.overlap, profile.max_tokens)
    except ValueError as exc:
        print(f"rag: {exc}: set --overlap or --max-tokens", file=sys.stderr)
        return 2
    model = corpus.embedding_model
    try:
        counter = get_token_counter(args.tokenizer or model.tokenizer)
    except TokenizerUnavailable as exc:
        print(f"rag: {exc}", file=sys.stderr)
        return 2
    limit = profile.max_tokens if args.tokenizer else model.chunk_token_limit
    try:
        data = path.read_bytes()
    except OSError as exc:
        print(f"rag: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return 2
    raw = RawDocument(path.name, path.as_uri(), content_hash(data), len(data), "cli", data)
    try:
        doc = parse_document(raw, corpus.source.parse_limits, corpus.source.ocr_languages)
    except DocumentError as exc:
        print(f"rag: {exc}", file=sys.stderr)
        return 1
    embed = None
    if profile.strategy_for(doc) == "semantic":
        from rag_assets.clients import open_embedder

        embed = open_embedder(model).embed
    try:
        chunked = chunk_document(doc, profile, counter, limit, embed=embed)
    except ValueError as exc:
        print(f"rag: {exc}", file=sys.stderr)
        return 2
    rows = [
        {"chunk_index": c.chunk_index, "text": c.text, "start": c.start, "end": c.end, "tokens": c.tokens,
         "heading_path": list(c.heading_path), "sections": list(c.sections), "page": c.page,
         "page_end": c.page_end, "ocr": c.ocr, "strategy": c.strategy,
         "element_types": list(c.element_types), "embed_text": c.embed_text,
         "header": c.header, "sentence": c.sentence,
         "window": [c.window_start, c.window_end] if c.window_start is not None else None}
        for c in chunked.chunks
    ]
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    strategy = rows[0]["strategy"] if rows else profile.strategy
    read = f" ({read_as(doc.doc_id)})" if strategy == "code" else ""  # as the chunks materialisation says it
    print(f"{path}: {doc.content_type}, {len(rows)} chunks, strategy {strategy}{read}, "
          f"limit {row_token_limit(profile, args.tokenizer or model.tokenizer, limit)} {counter.name} tokens")
    for row in rows:
        preview = " ".join(row["text"].split())
        section = " > ".join(row["heading_path"])
        print(f"[{row['chunk_index']:>3}] {row['start']}-{row['end']} {row['tokens']:>4} tok  {section}")
        print(f"      {preview[:110]}{'...' if len(preview) > 110 else ''}")
    return 0


def _path(value: str) -> str:
    """A path the user typed, resolved against the working directory: every path argument goes
    through here, so nothing downstream sees a relative path."""
    return str(Path(value).expanduser().resolve())


def _days(value: str) -> float:
    try:
        days = float(value)
    except ValueError:
        days = -1.0
    if not days >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of days (0 or more)")
    return days


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rag", description="Ingest documents into a LanceDB index with Dagster, and query it.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--project", type=_path, help="config project folder (default: $RAG_PROJECT_DIR or dbt_like_configs/)")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error instead of one line")
    sub = parser.add_subparsers(dest="command", required=True)

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help, description=help[0].upper() + help[1:] + ".",
                              epilog=COMMAND_EXAMPLES[name] + "\n" + EXIT_CODES,
                              formatter_class=argparse.RawDescriptionHelpFormatter)

    ingest = command("ingest", "materialise new and changed documents; remove deleted ones")
    ingest.add_argument("--corpus", action="append", help="only this corpus (repeatable)")
    ingest.add_argument("--json", action="store_true", help="print one JSON object of counts")
    ingest.add_argument("--allow-mass-delete", action="store_true",
                        help="let a sweep delete more than +max_delete_fraction of a corpus (or all of it)")
    ingest.add_argument("--dry-run", action="store_true",
                        help="list what would be redone, per document and stage; write nothing")
    ingest.set_defaults(func=cmd_ingest)

    observe = command("observe", "report the sources' current document versions to Dagster; run nothing")
    observe.add_argument("--corpus", action="append", help="only this corpus (repeatable)")
    observe.add_argument("--json", action="store_true", help="print one JSON object of counts")
    observe.set_defaults(func=cmd_observe)

    status = command("status", "per stage, the partitions Dagster reports as fresh, stale (unsynced), missing "
                               "and failed")
    status.add_argument("--corpus", action="append", help="only this corpus (repeatable)")
    status.add_argument("--json", action="store_true", help="print one JSON object")
    status.set_defaults(func=cmd_status)

    query = command("query", "top chunks for a question, with citations")
    query.add_argument("text", help="the question")
    query.add_argument("--k", type=int, default=5, help="number of results (default 5)")
    query.add_argument("--corpus", help="corpus to search (default: the first declared)")
    query.add_argument("--json", action="store_true", help="print a JSON list of results")
    query.add_argument("--as-of", type=int, metavar="VERSION", help="query an older table version (time travel)")
    query.add_argument("--mode", choices=["hybrid", "vector", "fts"], default="hybrid",
                       help="hybrid (vector + full text, reciprocal-rank fusion; default), vector or fts")
    query.add_argument("--tenant", help="only this tenant's rows (required where the corpus has tenants)")
    query.add_argument("--filter", action="append", metavar="KEY=VALUE",
                       help="repeatable; keys: doc_id, section (a section it spans, by whole headings), tag (the "
                            "corpus' or the document's: front matter tags, keywords), content_type, updated_after "
                            "(rows written since: new content, or a tags, tenant, profile or model change); a "
                            "content type must be one the parser assigns (markdown, pdf, ...)")
    query.add_argument("--rerank", choices=["rrf", "mmr", "none"], default="rrf",
                       help="rerank the candidates: rrf (default), mmr for diversity, none")
    query.add_argument("--expand", type=int, default=0, metavar="N",
                       help="add N neighbouring chunks before and after each hit; hits of one document that "
                            "then overlap become one result (not for a profile that groups sentences: it "
                            "widens its results itself)")
    query.set_defaults(func=cmd_query)

    trace = command("lineage", "where an index row came from (source, versions, profile, model, run)")
    trace.add_argument("row_id", help="the row's id (as `rag query --json` prints it)")
    trace.add_argument("--corpus", help="the corpus whose row it is (needed where two corpora hold the same "
                                        "file: the id names no corpus)")
    trace.add_argument("--json", action="store_true", help="print one JSON object")
    trace.set_defaults(func=cmd_lineage)

    restore = command("restore", "list the versions of the table a corpus' queries use, or make an older one "
                                 "the latest again")
    restore.add_argument("--corpus", required=True, help="the corpus whose serving table to restore")
    restore.add_argument("--as-of", type=int, metavar="VERSION", help="the version to restore (omit to list them)")
    restore.add_argument("--json", action="store_true", help="print JSON")
    restore.set_defaults(func=cmd_restore)

    tables = command("tables", "list each corpus' LanceDB tables and what they are for; drop the ones nothing "
                               "reads or builds")
    tables.add_argument("--corpus", action="append", help="only this corpus (repeatable)")
    tables.add_argument("--drop-unused", action="store_true",
                        help="drop tables of models or profiles no longer declared, never completed, or named by "
                             "an earlier version (<corpus>__<model>), and the embedding caches of models no longer "
                             "declared")
    tables.add_argument("--drop-previous", action="store_true",
                        help="drop complete tables of declared models and profiles that neither serve queries nor "
                             "are configured (switching back then rebuilds them from the stage store and the "
                             "embedding cache, re-embedding nothing the cache holds)")
    tables.add_argument("--drop-undeclared", action="append", metavar="CORPUS",
                        help="drop the tables of a corpus no longer declared in rag_project.yml, listed with role "
                             "'undeclared' (repeatable; named, never implied: a LanceDB may be shared)")
    tables.add_argument("--json", action="store_true", help="print a JSON list of tables")
    tables.set_defaults(func=cmd_tables)

    gc = command("gc", "remove stage-store artifacts no document's current version uses (old versions' bytes, "
                       "parses, chunks and vectors) once they are older than stage_store_gc.older_than_days")
    gc.add_argument("--corpus", action="append", help="only this corpus (repeatable)")
    gc.add_argument("--older-than-days", type=_days, metavar="DAYS",
                    help="keep unused artifacts written within DAYS days (default: rag_project.yml "
                         "stage_store_gc.older_than_days)")
    gc.add_argument("--drop-undeclared", action="append", metavar="CORPUS",
                    help="remove the whole stage store of a corpus no longer declared in rag_project.yml, listed as "
                         "undeclared (repeatable; named, never implied: a data dir may be shared)")
    gc.add_argument("--dry-run", action="store_true", help="count what would be removed; remove nothing")
    gc.add_argument("--json", action="store_true", help="print one JSON object: corpora (per corpus, per stage) and "
                                                        "undeclared (stage stores of corpora no longer declared)")
    gc.set_defaults(func=cmd_gc)

    ev = command("eval", "score chunking profiles against golden questions, side by side")
    ev.add_argument("--questions", required=True, type=_path,
                    help="Chroma-format CSV (question, references, corpus_id; a row whose optional scope column is "
                         "'corpus' is searched within its own corpus only) or dbt_like_configs/evals/*.yml")
    ev.add_argument("--corpora", type=_path,
                    help="folder of <corpus_id>.md or .txt files (CSV format; default: beside the CSV)")
    ev.add_argument("--profile", action="append", required=True, help="profile to evaluate (repeatable)")
    ev.add_argument("--corpus", help="corpus whose documents a YAML question set asks about, whose model and search "
                                     "settings are used (default: the set's 'corpus', else the first)")
    ev.add_argument("--embedder", help="embedding model name (default: the corpus')")
    ev.add_argument("--mode", choices=["vector", "hybrid"], default="vector",
                    help="vector (default) or hybrid (vector + full text)")
    ev.add_argument("--k", type=int, default=5, help="chunks retrieved per question (default 5)")
    ev.add_argument("--json", action="store_true", help="print a JSON list, one object per profile")
    ev.set_defaults(func=cmd_eval)

    serve = command("serve", "answer queries over HTTP (POST /query: JSON in, results as `rag query --json` "
                             "prints them out), the model and index kept open between requests")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine "
                                                           "only; any other needs a token)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    serve.add_argument("--token-env", metavar="NAME", help="environment variable holding a token requests may send "
                                                          "as 'Authorization: Bearer <token>' to query any tenant")
    serve.add_argument("--tenant-tokens-env", metavar="NAME",
                       help="environment variable holding a JSON object {token: tenant}: a request with one of "
                            "those tokens queries that tenant's rows only (and corpora without tenants whole)")
    serve.add_argument("--allow-origin", action="append", metavar="URL",
                       help="let web pages served from this origin (https://chat.example.com) call the server from "
                            "a browser (CORS; repeatable)")
    serve.set_defaults(func=cmd_serve)

    chunk = command("chunk", "parse a file like the pipeline does and print its chunks")
    chunk.add_argument("file", type=_path, help="document to chunk (md, mdx, rst, adoc, tex, org, txt, html, pdf, "
                                                "docx, odt, rtf, epub, pptx, eml, msg, xlsx, xls, ipynb, py, csv...)")
    chunk.add_argument("--corpus", help="chunk as this corpus does: its profile, model and parse settings "
                                        "(default: the corpus whose source folder holds the file, else the first)")
    chunk.add_argument("--profile", help="chunking profile from profiles/chunking.yml (default: the corpus')")
    chunk.add_argument("--strategy", help="override the strategy (fixed, sentence, recursive, markdown, code, "
                                          "table, faq, transcript, semantic, sentence_window, auto)")
    chunk.add_argument("--max-tokens", type=int, help="override max tokens per chunk")
    chunk.add_argument("--overlap", type=int, help="override overlap tokens")
    chunk.add_argument("--tokenizer", help="count with cl100k_base, o200k_base or an OpenAI model name "
                                           "(default: the corpus embedding model's tokenizer and limit)")
    chunk.add_argument("--json", action="store_true", help="print a JSON list of chunks")
    chunk.set_defaults(func=cmd_chunk)
    return parser


def _terminate_as_interrupt() -> int:
    """SIGTERM takes the same path as Ctrl-C: a batch being executed is abandoned cleanly and
    nothing after it starts (Dagster maps SIGTERM to its SIGINT handler while a run executes).
    Every handled signal's number is also written to the returned pipe, so the exit code can
    tell SIGTERM (143) from Ctrl-C (130)."""
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    read, write = os.pipe()
    os.set_blocking(read, False)
    os.set_blocking(write, False)
    signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    return read


def _was_terminated(signals: int) -> bool:
    try:
        return signal.SIGTERM in os.read(signals, 4096)
    except BlockingIOError:
        return False


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # Dagster marks data versions as beta; that is not news to a `rag` user on every document.
    warnings.filterwarnings("ignore", message=".*currently in beta.*")
    signals = _terminate_as_interrupt()
    streams = sys.stdout, sys.stderr
    sys.stderr = _Shown(sys.stderr)
    if not getattr(args, "json", False):  # JSON escapes what it must itself; its readers want it verbatim
        sys.stdout = _Shown(sys.stdout)
    try:
        return args.func(args)
    except BrokenPipeError:  # `rag ... | head` closed the pipe: stop quietly, as a shell tool does
        os.dup2(os.open(os.devnull, os.O_WRONLY), streams[0].fileno())  # the exit-time flush fails too
        return 141
    except KeyboardInterrupt:
        print("rag: interrupted; documents of the batch that was running keep their last good rows, and the "
              "next `rag ingest` redoes them", file=sys.stderr)
        return 143 if _was_terminated(signals) else 130
    except Exception as exc:
        if args.debug:
            raise
        message, code = operator_error(exc, args.project)
        print(f"rag: {message}", file=sys.stderr)
        return code
    finally:
        sys.stdout, sys.stderr = streams


def _written_folders(project_dir: str | None) -> str:
    from rag_assets.config import load_project

    try:
        corpora = load_project(project_dir).corpora
    except Exception:  # the config may be what is broken; the message still says where to look
        return "the data dir and the LanceDB folder: rag_project.yml data_dir, profiles/indexes.yml uri"
    return ", ".join(sorted({c.stages_dir for c in corpora} | {c.index_uri for c in corpora}))


def _lance_unreadable(exc: Exception, project_dir: str | None) -> str | None:
    """What to move aside when LanceDB cannot read a table of a local index: the tables its message
    names or that do not read through (each read one column, only on this error path); None where
    none is found (the error is then no damage: a conflict, a schema, a server)."""
    from rag_assets.clients import connect_index
    from rag_assets.config import load_project
    from rag_assets.core.errors import first_line
    from rag_assets.core.index import unreadable_tables

    first = first_line(exc)
    try:
        local = [c for c in load_project(project_dir).corpora if "://" not in c.index_uri]
        by_uri = {c.index_uri: c for c in local}
        named = {f"{uri}/{name}" for uri in by_uri  # lance's object paths may lack the leading slash
                 for name in re.findall("/?" + re.escape(uri.lstrip("/")) + r"/+([^/\s,]+\.lance)\b", str(exc))}
        damaged = sorted(named | {f"{uri}/{name}.lance" for uri, c in by_uri.items()
                                  for name in unreadable_tables(connect_index(c))})
    except Exception:  # the config, or the listing itself, may be what fails
        return None
    if not damaged:
        return None
    many = len(damaged) > 1
    return (f"cannot read the LanceDB table{'s' * many} {', '.join(damaged)} ({first}): damaged; move "
            f"{'each' if many else 'it'} aside (mv {damaged[0]} {damaged[0]}.damaged): the next `rag ingest` "
            f"recreates {'them' if many else 'it'} (a chunks table's rows from the stored chunks and vectors)")


def operator_error(exc: Exception, project_dir: str | None = None) -> tuple[str, int]:
    """One line and the exit code for an error that ends a command (README: 2 config or usage,
    1 the command ran but could not finish its work)."""
    from rag_assets.config import ConfigError
    from rag_assets.core.errors import UsageError, disk_full, first_line, from_lance
    from rag_assets.core.index import IndexUnreadable
    from rag_assets.core.locking import IngestLocked
    from rag_assets.core.planning import MassDeleteRefused, ModelChangedInPlace
    from rag_assets.core.sources import SourceFolderMissing, SourceFolderUnreadable, SourceUnavailable
    from rag_assets.core.store import StoreUnavailable

    if isinstance(exc, (ConfigError, SourceFolderMissing, SourceFolderUnreadable, MassDeleteRefused,
                        ModelChangedInPlace, UsageError)):
        return str(exc), 2
    full = disk_full(exc, lambda: _written_folders(project_dir))  # first: it may hide under IndexUnreadable
    if full:
        return full, 1
    if isinstance(exc, (SourceUnavailable, StoreUnavailable, IngestLocked, IndexUnreadable)):
        return str(exc), 1  # nothing was recorded: the next run starts from the same state
    if from_lance(exc) and (damaged := _lance_unreadable(exc, project_dir)):
        return damaged, 1
    return f"{type(exc).__name__}: {first_line(exc, 300)} (run `rag --debug ...` for the traceback)", 1


if __name__ == "__main__":
    sys.exit(main())
