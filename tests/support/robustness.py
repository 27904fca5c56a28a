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
import resource
import subprocess
import sys
import time
from pathlib import Path

import lancedb
import yaml

from rag_assets.config import load_project
from rag_assets.config.profiles import profile_from_config
from rag_assets.core.chunking import chunk_document
from rag_assets.core.hashing import row_id, text_hash
from rag_assets.core.index import table_name
from rag_assets.core.parsing import DocumentError, parse_document
from rag_assets.core.sources import list_disk, read_disk
from rag_assets.core.tokens import get_token_counter
from tests.conftest import env, make_project
from tests.support.bad_inputs import SECRET, write_corpus, write_large_text

RAG = str(Path(sys.executable).parent / "rag")


def result(case: str, outcome: str, rows_lost: int = 0, rows_duplicated: int = 0, ok: bool = True, **extra) -> dict:
    return {"case": case, "outcome": outcome, "rows_lost": rows_lost, "rows_duplicated": rows_duplicated,
            "ok": bool(ok and rows_lost == 0 and rows_duplicated == 0), **extra}


def edit_yaml(path: Path, change) -> None:
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


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
    db = lancedb.connect(corpus.index_uri)
    name = table_name("sample", corpus.embedding_model.name)
    if name not in db.table_names():
        return []
    return db.open_table(name).search().select(["id", "doc_id", "text", "start", "embed_text_hash"]) \
        .limit(None).to_arrow().to_pylist()


def expected_ids(project, doc_ids=None) -> dict[str, set[str]]:
    """Row ids each readable document of the corpus should have, chunked outside the pipeline."""
    corpus = project.corpus("sample")
    model = corpus.embedding_model
    profile = profile_from_config(corpus.chunking_profile)
    counter = get_token_counter(model.tokenizer)
    out: dict[str, set[str]] = {}
    for ref in list_disk(corpus.source_root, corpus.source.include, corpus.source.exclude):
        if ref.refused or (doc_ids is not None and ref.doc_id not in doc_ids):
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
        report = ingest_project_quiet(project)
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
        again = ingest_project_quiet(load_project())
        kept = {r["id"] for r in index_rows(load_project()) if r["doc_id"] == "good/ordinary.md"}
    error = next((f["error"] for f in again["failures"] if f["doc_id"] == "good/ordinary.md"), "")
    out.append(result("good document turns bad on re-ingest", f"error kept last good rows: {error[:60]}",
                      len(good - kept), len(kept - good), "binary" in error))
    return out


def ingest_project_quiet(project) -> dict:
    from rag_assets.ingest import ingest_project

    return ingest_project(project)


def large_file(tmp: Path, megabytes: int = 50) -> dict:
    """A ``megabytes`` MB text file beside a small one, ingested by ``rag ingest`` in a child
    process: the big one fails alone without being read; peak RSS of the child is reported."""
    docs = tmp / "docs"
    (docs / "small.md").parent.mkdir(parents=True, exist_ok=True)
    (docs / "small.md").write_text("# Small\n\nThe badge office opens at nine.\n")
    size = write_large_text(docs / "big" / "shipments.txt", megabytes)
    values = project_over(tmp / "p", docs)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.monotonic()
    done = subprocess.run([RAG, "ingest", "--json"], env={**os.environ, **values}, capture_output=True, text=True,
                          timeout=600)
    seconds = time.monotonic() - started
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # Linux: kB
    report = json.loads(done.stdout)
    error = next((f["error"] for f in report["failures"] if f["doc_id"] == "big/shipments.txt"), "")
    with env(**values):
        project = load_project()
        rows = index_rows(project)
        lost, dup = compare(rows, expected_ids(project))
    handled = ("exceeds" in error and report["documents_hashed"] == 1 and {r["doc_id"] for r in rows} == {"small.md"}
               and (before == 0 or peak_mb * 1024 >= before))
    return result(f"{size // 2**20} MB text file", f"error: {error.split(': ', 1)[-1][:60]}; peak RSS "
                  f"{peak_mb:.0f} MB", lost, dup, handled, peak_rss_mb=round(peak_mb), file_mb=size // 2**20,
                  seconds=round(seconds, 1))


def changing_file(tmp: Path) -> dict:
    """A file rewritten continuously by another process while the sweep reads it: the index
    holds one complete version of it or the document fails alone ("kept changing")."""
    docs = tmp / "docs"
    docs.mkdir(parents=True)
    (docs / "steady.md").write_text("# Steady\n\nThe parking garage closes at midnight.\n")
    target = docs / "live.log"
    target.write_text("version 0\n" * 20000)
    writer = subprocess.Popen([sys.executable, "-c", (
        "import sys, itertools\n"
        "for n in itertools.count(1):\n"
        "    open(sys.argv[1], 'w').write(f'version {n}\\n' * 20000)\n"), str(target)])
    try:
        values = project_over(tmp / "p", docs)
        with env(**values):
            project = load_project()
            report = ingest_project_quiet(project)
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
    import shutil

    from rag_assets.config import ConfigError
    from tests.config.test_loader import MISTAKES
    from tests.conftest import CONFIGS

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
