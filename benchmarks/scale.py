"""Scale of the control plane: N small generated documents registered as partitions, then what
an operator waits for at that size.

    .venv/bin/python benchmarks/scale.py --docs 1000 [--batch-size 1000] [--json] [--profile]

Figures (seconds):
  register      first `rag ingest` of the N documents (partitions added, observations recorded,
                every stage run): registering is part of the measurement
  sensor_first  one source-sensor tick over the N unchanged documents without a cursor (reads each
                document's pointer in the stage store)
  sensor_tick   one tick over the N unchanged documents with the cursor the first tick left (the
                daemon's steady state); the goal is <= 2 s at 20,000 documents
  dry_run       `rag ingest --dry-run` (a new process, as the operator runs it)
  status        `rag status`
  add_1pct / delete_1pct   `rag ingest` after adding / deleting 1% of the documents
  gc            `rag gc --older-than-days 0` after that: every record read, every artifact listed,
                the deleted documents' removed
  ui_partitions the GraphQL query of the UI's asset partitions page (PartitionHealthQuery) for the
                corpus' lancedb_index, answered by a running dagster-webserver
``--profile`` prints where one steady sensor tick spends its time (cProfile, cumulative).
``--instance postgres`` keeps the Dagster instance on a PostgreSQL server started for the run
(deploy/postgres/dagster.yaml; needs Debian postgresql, as the distributed test does) instead of
the SQLite instance `rag` configures for a new home (rag_assets/instance.py).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
import warnings
from contextlib import ExitStack
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
warnings.filterwarnings("ignore", message=".*currently in beta.*")

import dagster as dg  # noqa: E402
import yaml  # noqa: E402

from rag_assets.config import load_project  # noqa: E402
from rag_assets.defs.factory import build_definitions  # noqa: E402
from rag_assets.ingest import ingest_project  # noqa: E402
from rag_assets.instance import write_instance_config  # noqa: E402
from tests.support.seaweed import free_ports  # noqa: E402

BIN = Path(sys.executable).parent
# What the UI's asset partitions page asks first (js_modules: PartitionHealthQuery).
PARTITION_HEALTH_QUERY = """
query PartitionHealthQuery($assetKey: AssetKeyInput!) {
  assetNodeOrError(assetKey: $assetKey) {
    ... on AssetNode {
      id
      partitionKeysByDimension { name type partitionKeys }
      assetPartitionStatuses {
        ... on DefaultPartitionStatuses {
          materializedPartitions materializingPartitions failedPartitions
        }
      }
    }
  }
}
"""


def write_doc(folder: Path, i: int) -> None:
    (folder / f"doc_{i:06d}.txt").write_text(f"Note {i}. Bin BX-{i} sits on shelf {i % 97} in aisle {i % 13}.\n")


def sensor_tick(defs: dg.Definitions, instance: dg.DagsterInstance, cursor: str | None):
    sensor = defs.resolve_sensor_def("bench_source_sensor")
    with dg.build_sensor_context(instance=instance, cursor=cursor, resources=defs.resources,
                                 definitions=defs) as context:
        start = time.perf_counter()
        data = sensor.evaluate_tick(context)
        return time.perf_counter() - start, data


def rag(*args: str) -> float:
    start = time.perf_counter()
    subprocess.run([str(BIN / "rag"), *args], check=True, capture_output=True, timeout=3600)
    return time.perf_counter() - start


def ui_query_seconds(root: Path) -> float:
    """Start dagster-webserver on the workspace, time PartitionHealthQuery once it answers."""
    (port,) = free_ports(1)
    log = (root / "webserver.log").open("wb")
    proc = subprocess.Popen([str(BIN / "dagster-webserver"), "-w", str(REPO / "workspace.yaml"), "-h", "127.0.0.1",
                             "-p", str(port)], stdout=log, stderr=subprocess.STDOUT, cwd=root,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}/graphql"
    body = json.dumps({"query": PARTITION_HEALTH_QUERY,
                       "variables": {"assetKey": {"path": ["bench", "lancedb_index"]}}}).encode()

    def ask() -> dict:
        request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=600) as response:
            return json.loads(response.read())

    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                answer = ask()  # warm-up: the code location has loaded once this answers
                if "AssetNode" in json.dumps(answer) or answer.get("data", {}).get("assetNodeOrError", {}).get("id"):
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"dagster-webserver did not answer: {(root / 'webserver.log').read_text()[-2000:]}")
            time.sleep(1)
        start = time.perf_counter()
        answer = ask()
        seconds = time.perf_counter() - start
        partitions = answer["data"]["assetNodeOrError"]["partitionKeysByDimension"][0]["partitionKeys"]
        if not partitions:
            raise RuntimeError(f"no partitions in the answer: {str(answer)[:500]}")
        return seconds
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        log.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=1000, help="documents per run of the first ingest")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--profile", action="store_true", help="print where a steady sensor tick spends its time")
    parser.add_argument("--skip-ui", action="store_true")
    parser.add_argument("--instance", choices=("sqlite", "postgres"), default="sqlite")
    args = parser.parse_args(argv)
    with ExitStack() as stack:
        pg = {}
        if args.instance == "postgres":
            from tests.support.postgres import postgres_server

            pg = stack.enter_context(postgres_server("rag-scale-bench"))
        return run(args, pg)


def run(args, pg: dict[str, str]) -> int:

    root = Path(tempfile.mkdtemp(prefix="rag-scale-"))
    docs, project_dir = root / "docs", root / "dbt_like_configs"
    docs.mkdir()
    shutil.copytree(REPO / "dbt_like_configs", project_dir)
    project_yml = yaml.safe_load((project_dir / "rag_project.yml").read_text())
    project_yml["corpora"] = {"bench": {"+source": "sample_docs", "+batch_size": args.batch_size}}
    (project_dir / "rag_project.yml").write_text(yaml.safe_dump(project_yml, sort_keys=False))
    home = root / ".dagster_home"
    home.mkdir()
    if pg:
        shutil.copy(REPO / "deploy" / "postgres" / "dagster.yaml", home / "dagster.yaml")
        os.environ.update(pg)
    else:
        write_instance_config(home)  # what `rag` writes for a new home
    os.environ.update(RAG_PROJECT_DIR=str(project_dir), RAG_SAMPLE_DOCS=str(docs), DAGSTER_HOME=str(home),
                      RAG_LANCEDB_URI=str(root / "lancedb"), RAG_DATA_DIR=str(root / "data"))
    for i in range(args.docs):
        write_doc(docs, i)
    out: dict = {"docs": args.docs, "instance": args.instance}

    def note(key: str, value) -> None:
        out[key] = round(value, 3) if isinstance(value, float) else value
        if not args.json:
            print(f"{key}: {out[key]}", flush=True)

    try:
        start = time.perf_counter()
        report = ingest_project(load_project())
        note("register", time.perf_counter() - start)
        assert report["documents_failed"] == 0 and report["rows_in_index"] >= args.docs, report
        defs = build_definitions(load_project())
        with dg.DagsterInstance.get() as instance:
            first, data = sensor_tick(defs, instance, None)
            assert not data.run_requests, data.run_requests
            note("sensor_first", first)
            ticks = []
            for _ in range(3):
                seconds, again = sensor_tick(defs, instance, data.cursor)
                assert not again.run_requests and again.skip_message, again
                ticks.append(seconds)
            note("sensor_tick", min(ticks))
            if args.profile:
                profiler = cProfile.Profile()
                profiler.enable()
                sensor_tick(defs, instance, data.cursor)
                profiler.disable()
                text = io.StringIO()
                pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(25)
                out["sensor_tick_profile"] = text.getvalue()
                if not args.json:
                    print(text.getvalue(), flush=True)
        note("dry_run", rag("ingest", "--dry-run", "--json"))
        note("status", rag("status", "--json"))
        step = max(1, args.docs // 100)
        for i in range(args.docs, args.docs + step):
            write_doc(docs, i)
        note("add_1pct", rag("ingest", "--json"))
        for i in range(step):
            (docs / f"doc_{i:06d}.txt").unlink()
        note("delete_1pct", rag("ingest", "--json"))
        note("gc", rag("gc", "--older-than-days", "0", "--json"))
        if not args.skip_ui:
            note("ui_partitions", ui_query_seconds(root))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if args.json:
        print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
