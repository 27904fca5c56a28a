"""The Dagster UI as a person sees it: `dagster dev` on loopback, the sample corpus ingested by
`rag ingest` into the same instance, and headless Chromium reading the rendered asset graph and
one document's latest materialisation. Screenshots go to the test's tmp folder and to
tests/output/ui/ (gitignored) for a person to look at."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import dagster as dg
import lancedb
import pytest

from rag_assets.config import load_project
from rag_assets.core.index import table_name
from rag_assets.core.keys import partition_key_for
from rag_assets.defs.factory import build_definitions
from rag_assets.defs.names import partitions_name
from tests.conftest import REPO, env, make_project
from tests.support.browser import Chromium
from tests.support.seaweed import free_ports, stop

pytestmark = [pytest.mark.ui, pytest.mark.e2e, pytest.mark.slow]
BIN = Path(sys.executable).parent
OUTPUT = REPO / "tests" / "output" / "ui"
DOC = "support/customer_faq.md"
STAGES = ["raw_documents", "parsed_documents", "chunks", "embeddings", "lancedb_index", "lancedb_table"]
LOCATION_QUERY = "{ workspaceOrError { ... on Workspace { locationEntries { name loadStatus " \
                 "locationOrLoadError { __typename ... on PythonError { message } } } } } }"


def _restore_sigint() -> None:
    # A shell that starts pytest in the background ignores SIGINT, and children inherit that;
    # dagster dev stops only on SIGINT, so give it the default back.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextmanager
def dagster_dev(values: dict, port: int, log: Path):
    """`dagster dev -w workspace.yaml` on 127.0.0.1:port, stopped with SIGINT to its process
    group (it ignores SIGTERM), killed if it has not exited 30 s later."""
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [str(BIN / "dagster"), "dev", "-w", str(REPO / "workspace.yaml"), "-h", "127.0.0.1", "-p", str(port)],
            cwd=REPO, env={**os.environ, **values}, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True, preexec_fn=_restore_sigint)
        try:
            yield proc
        finally:
            stop(proc, signal.SIGINT, timeout=30)


def wait_for_location(base: str, proc: subprocess.Popen, log: Path, timeout: float = 120.0) -> None:
    """Poll the GraphQL API until the rag_assets code location has loaded (or say why not)."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"dagster dev exited {proc.returncode}: {log.read_text()[-3000:]}"
        try:
            request = urllib.request.Request(f"{base}/graphql", data=json.dumps({"query": LOCATION_QUERY}).encode(),
                                             headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=10) as resp:
                entries = json.load(resp)["data"]["workspaceOrError"]["locationEntries"]
            last = entries
            location = next(e for e in entries if e["name"] == "rag_assets")
            loaded = location["locationOrLoadError"]
            if location["loadStatus"] == "LOADED" and loaded:
                assert loaded["__typename"] == "RepositoryLocation", loaded
                return
        except (urllib.error.URLError, ConnectionError, StopIteration, KeyError, TypeError):
            pass
        time.sleep(0.5)
    raise TimeoutError(f"code location not loaded in {timeout}s (last answer {last}); log: {log.read_text()[-3000:]}")


RUNS_QUERY = "{ runsOrError { ... on Runs { results { runId pipelineName status " \
             "repositoryOrigin { repositoryLocationName } } } } }"
REEXECUTE = "mutation($parentRunId: String!) { launchPipelineReexecution(reexecutionParams: " \
            "{parentRunId: $parentRunId, strategy: ALL_STEPS}) { __typename ... on LaunchRunSuccess { run { runId } } " \
            "... on PythonError { message } } }"
RUN_STATUS = "query($id: ID!) { runOrError(runId: $id) { ... on Run { status } } }"


def graphql(base: str, query: str, variables: dict | None = None) -> dict:
    request = urllib.request.Request(f"{base}/graphql", headers={"Content-Type": "application/json"},
                                     data=json.dumps({"query": query, "variables": variables or {}}).encode())
    with urllib.request.urlopen(request, timeout=30) as resp:
        answer = json.load(resp)
    assert "errors" not in answer, answer
    return answer["data"]


def wait_for_run(base: str, run_id: str, timeout: float) -> str:
    """Poll a run until it finishes; returns its status."""
    deadline = time.monotonic() + timeout
    status = None
    while time.monotonic() < deadline:
        status = graphql(base, RUN_STATUS, {"id": run_id})["runOrError"]["status"]
        if status in ("SUCCESS", "FAILURE", "CANCELED"):
            return status
        time.sleep(1)
    raise TimeoutError(f"run {run_id} still {status} after {timeout}s")


def save(shot: Path) -> Path:
    OUTPUT.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(shot, OUTPUT / shot.name))


def test_asset_graph_and_latest_materialisation_render(tmp_path):
    values = make_project(tmp_path / "project")
    # make_project writes the instance config `rag` writes: nux off, so the community sign-up
    # dialog does not cover the graph in a fresh browser.
    (port,) = free_ports(1)
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "dagster_dev.log"
    started = time.monotonic()
    with dagster_dev(values, port, log) as dev:
        # `rag ingest` writes to the instance the running UI reads, as a user would run it.
        ingest = subprocess.run([str(BIN / "rag"), "ingest", "--json"], env={**os.environ, **values},
                                capture_output=True, text=True, timeout=300)
        assert ingest.returncode == 0, ingest.stderr[-3000:]
        report = json.loads(ingest.stdout)
        assert report["documents_failed"] == 0 and report["checks"] and all(report["checks"].values())
        ingested = time.monotonic()
        wait_for_location(base, dev, log)
        loaded = time.monotonic()

        with env(**values):
            project = load_project()
        corpus = project.corpus("sample")
        chunks_def = build_definitions(project).resolve_asset_graph().get(dg.AssetKey(["sample", "chunks"]))
        all_rows = lancedb.connect(corpus.index_uri).open_table(
            table_name("sample", corpus.embedding_model.name, corpus.chunking_profile.name)).to_arrow().to_pylist()
        rows = sorted((r for r in all_rows if r["doc_id"] == DOC), key=lambda r: r["chunk_index"])
        n_checks = len(report["checks"])

        with Chromium(tmp_path / "chromium", width=2400, height=900) as browser:
            browser.goto(f"{base}/locations/rag_assets/asset-groups/sample")
            browser.wait_for_text(*STAGES, "retrieval_eval", f"{report['documents_seen']} partitions",
                                          f"{n_checks} / {n_checks} Passed", "Materialized", "onnx", "lancedb",
                                          "unstructured", timeout=90)
            time.sleep(0.5)  # let the edges finish drawing
            graph_png = save(browser.screenshot(tmp_path / "asset_graph.png"))

            # The asset's own page: its description, group, kind, job and sensor, and (under
            # "Compute details") the code version that staleness is judged by.
            browser.viewport(1600, 1200)
            browser.goto(f"{base}/assets/sample/chunks")
            browser.wait_for_text(chunks_def.description, "Group\nsample", "Python", "ingest_sample",
                                  "sample_source_sensor", "Compute details", timeout=30)
            for attempt in range(2):  # a click the page swallows while it re-renders (seen under load) is repeated
                browser.evaluate("[...document.querySelectorAll('span')]"
                                 ".find(e => e.textContent.trim() === 'Compute details').click()")
                try:
                    browser.wait_for_text(f"Code version\n{chunks_def.code_version}", timeout=15)
                    break
                except AssertionError:
                    if attempt:
                        raise

            browser.viewport(1600, 1800)
            partition = quote(partition_key_for(DOC), safe="")
            browser.goto(f"{base}/assets/sample/chunks?view=partitions&partition={partition}")
            # The per-document values, as the index holds them, rendered inline: the sample
            # chunks' spans, tokens and heading paths, and the histogram's rows (markdown tables).
            cells = [text for r in rows[:2]
                     for text in (f"{r['start']}-{r['end']}\t{r['tokens']}\t", r["heading_path"][-30:])]
            page = browser.wait_for_text("Latest materialization",
                                         f"/assets/sample/parsed_documents?view=partitions&partition={partition}",
                                         "tokens\tchunks", "heading path\ttext", *cells, timeout=60)
            assert f"chunks\n\t\n{len(rows)}\n" in page
            histogram = [int(count) for count in re.findall(r"^\d+-\d+\t(\d+)\t█*$", page, re.M)]
            assert len(histogram) == 8 and sum(histogram) == len(rows)
            assert browser.evaluate("document.querySelectorAll('td table').length") >= 2
            materialisation_png = save(browser.screenshot(tmp_path / "materialization.png"))

            # The batch's token histogram is a PNG behind "[Show Markdown]" on its last partition
            # (the asset's latest materialization): open it, and the browser must have decoded a
            # real image.
            with env(**values), dg.DagsterInstance.get() as instance:
                last = instance.get_dynamic_partitions(partitions_name("sample"))[-1]
            browser.goto(f"{base}/assets/sample/chunks?view=partitions&partition={quote(last, safe='')}")
            browser.wait_for_text("Latest materialization", "run_token_histogram", timeout=60)
            browser.evaluate("[...document.querySelectorAll('a')]"
                             ".find(e => e.textContent.trim() === '[Show Markdown]').click()")
            size = browser.wait_for("(() => { const i = [...document.images].find(i => "
                                    "i.src.startsWith('data:image/png') && i.complete && i.naturalWidth > 0);"
                                    " return i && [i.naturalWidth, i.naturalHeight]; })()", timeout=20)
            assert size[0] > 100 and size[1] > 50
            time.sleep(0.5)  # the dialog fades in (300 ms) before the screenshot
            save(browser.screenshot(tmp_path / "token_histogram.png"))

            # The table's page lists the corpus' tables and their roles, as `rag tables` does.
            browser.goto(f"{base}/assets/sample/lancedb_table")
            served = table_name("sample", corpus.embedding_model.name, corpus.chunking_profile.name)
            browser.wait_for_text("Latest materialization", "unused_tables", f"{served}\tserving\t{len(all_rows)}",
                                  timeout=60)

            # Every run `rag ingest` created carries the code location's origin, and the UI's
            # re-execute (the same GraphQL mutation its button sends) runs it again to success.
            runs = graphql(base, RUNS_QUERY)["runsOrError"]["results"]
            assert runs and all(r["repositoryOrigin"]["repositoryLocationName"] == "rag_assets" for r in runs)
            parent = next(r["runId"] for r in runs if r["pipelineName"] == "ingest_sample")
            launched = graphql(base, REEXECUTE, {"parentRunId": parent})["launchPipelineReexecution"]
            assert launched["__typename"] == "LaunchRunSuccess", launched
            assert wait_for_run(base, launched["run"]["runId"], timeout=240) == "SUCCESS"

            # An edited document, once observed, is unsynced on its partition page.
            doc = Path(values["RAG_SAMPLE_DOCS"]) / DOC
            doc.write_text(doc.read_text() + "\nQ: Do you ship to Mars?\nA: Not yet.\n")
            observe = subprocess.run([str(BIN / "rag"), "observe"], env={**os.environ, **values},
                                     capture_output=True, text=True, timeout=120)
            assert observe.returncode == 0, observe.stderr[-2000:]
            browser.goto(f"{base}/assets/sample/chunks?view=partitions&partition={partition}")
            browser.wait_for_text("Unsynced", timeout=60)
            save(browser.screenshot(tmp_path / "unsynced_partition.png"))
        print(f"ingest {ingested - started:.1f}s, location loaded +{loaded - ingested:.1f}s, "
              f"browser {time.monotonic() - loaded:.1f}s")

    assert dev.returncode != -signal.SIGKILL, "dagster dev did not stop on SIGINT within 30 s"
    for shot in (graph_png, materialisation_png):
        assert shot.stat().st_size > 20_000  # a rendered page, not a blank one
