"""Two machines simulated on one: every process has its own empty working directory, HOME and
Dagster home (a dagster.yaml pointing at one real PostgreSQL server), and they share only the
deployed code and config project (the image) and the network services: SeaweedFS S3 for the
source, the stage store and the index, Redis for Celery, PostgreSQL for the instance.

1. `rag ingest` through two Celery workers gives the same rows (ids, text hashes, vectors) as a
   local in-process run, and nothing but logs lands in any machine's folders.
2. An edit and a delete in the bucket are picked up by the source sensor under `dagster-daemon`
   (against the same PostgreSQL instance), whose runs execute on the workers.
3. Two batches that the daemon launches on one tick both write the one LanceDB table: nothing is
   lost or duplicated (LanceDB's commit protocol on the S3 server, see README).
"""

from __future__ import annotations

import gc
import os
import shutil
import subprocess
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path

import boto3
import dagster as dg
import numpy as np
import pytest
import yaml

from rag_assets.config import load_project
from rag_assets.core.index import table_name
from rag_assets.defs.names import resource_keys
from rag_assets.defs.resources import build_corpus_resources
from rag_assets.ingest import ingest_project
from tests.conftest import REPO, SAMPLE_DOCS, env, make_project
from tests.defs.test_distributed import index_rows, workers_per_step
from tests.support.distributed import BIN, celery_workers, redis_server
from tests.support.postgres import postgres_server
from tests.support.seaweed import seaweed_s3, stop

pytestmark = [pytest.mark.distributed, pytest.mark.slow]

S3_KEY, S3_SECRET = "rag-machines-key", "rag-machines-secret"
WORKERS = ("machine1", "machine2")
BATCH = 6
NEW_DOCS = 2 * BATCH  # two batches, so two runs launched on one tick
EDITED = "support/customer_faq.md"


def machine(root: Path, name: str) -> dict[str, str]:
    """An empty working directory, HOME and Dagster home (the shipped Postgres dagster.yaml) for one
    simulated machine; returns the variables that point a process at them."""
    base = root / name
    for folder in ("work", "home", "dagster_home"):
        (base / folder).mkdir(parents=True)
    shutil.copy(REPO / "deploy" / "postgres" / "dagster.yaml", base / "dagster_home" / "dagster.yaml")
    return {"HOME": str(base / "home"), "DAGSTER_HOME": str(base / "dagster_home")}


def image(root: Path, endpoint: str) -> dict[str, str]:
    """The deployed config project (identical on every machine): the sample corpus reads the S3
    source, the stage store and the index live in buckets, keys come from RAG_S3_* variables."""
    values = make_project(root, docs=root / "no_local_docs")
    config = Path(values["RAG_PROJECT_DIR"])
    keys = {"access_key_env": "RAG_S3_KEY", "secret_key_env": "RAG_S3_SECRET"}
    sources = yaml.safe_load((config / "sources.yml").read_text())
    shipped = sources["sources"][0]
    sources["sources"].append({"name": "s3_docs", "kind": "s3", "bucket": "rag-source", "prefix": "docs/",
                               "endpoint_url": endpoint, "region": "us-east-1", "include": shipped["include"],
                               "exclude": shipped["exclude"], "sensor_interval_seconds": 5, **keys})
    (config / "sources.yml").write_text(yaml.safe_dump(sources))
    project = yaml.safe_load((config / "rag_project.yml").read_text())
    project["corpora"]["sample"]["+source"] = "s3_docs"
    project["defaults"]["+batch_size"] = BATCH
    project["data_dir_s3"] = {"endpoint_url": endpoint, "region": "us-east-1", **keys}
    (config / "rag_project.yml").write_text(yaml.safe_dump(project))
    indexes = yaml.safe_load((config / "profiles" / "indexes.yml").read_text())
    indexes["indexes"][0].update(keys)
    (config / "profiles" / "indexes.yml").write_text(yaml.safe_dump(indexes))
    (root / "no_local_docs").mkdir()
    values.pop("DAGSTER_HOME")  # each machine has its own
    shutil.rmtree(root / ".dagster_home")
    return {**values, "RAG_DATA_DIR": "s3://rag-stages/data", "RAG_LANCEDB_URI": "s3://rag-index/lancedb",
            "RAG_LANCEDB_ENDPOINT": endpoint, "RAG_S3_KEY": S3_KEY, "RAG_S3_SECRET": S3_SECRET}


def table_ids(values: dict[str, str]) -> list[str]:
    """Every row id of the sample corpus' table, duplicates included."""
    with env(**values):
        corpus = load_project().corpus("sample")
        key = resource_keys("sample")["lancedb"]
        with dg.build_resources({key: build_corpus_resources(corpus)[key]}) as resources:
            db = getattr(resources, key).get_connection()
        return db.open_table(table_name("sample", corpus.embedding_model.name, corpus.chunking_profile.name)).to_arrow().column("id").to_pylist()


def files_under(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


@contextmanager
def daemon(daemon_env: dict[str, str], cwd: Path, log: Path):
    """`dagster sensor start` for the corpus' source sensor, then `dagster-daemon run` on the
    workspace until the block ends."""
    workspace = str(REPO / "workspace.yaml")
    subprocess.run([str(BIN / "dagster"), "sensor", "start", "sample_source_sensor", "-w", workspace],
                   env=daemon_env, cwd=cwd, check=True, capture_output=True, timeout=180)
    with log.open("wb") as out:
        proc = subprocess.Popen([str(BIN / "dagster-daemon"), "run", "-w", workspace], env=daemon_env, cwd=cwd,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield proc
    finally:
        stop(proc)


def wait_for_runs(instance: dg.DagsterInstance, after: set[str], count: int, proc, log: Path,
                  timeout_s: float = 300.0) -> list[dg.DagsterRun]:
    """The ``count`` ingest runs created since ``after`` (run ids), once all have finished."""
    deadline = time.monotonic() + timeout_s
    while True:
        runs = [r for r in instance.get_runs(dg.RunsFilter(job_name="ingest_sample")) if r.run_id not in after]
        if len(runs) >= count and all(r.is_finished for r in runs):
            return runs
        if proc.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"{len(runs)} of {count} runs, states {[r.status.value for r in runs]}; "
                                 f"daemon log: {log.read_text(errors='replace')[-3000:]}")
        time.sleep(1.0)


def step_window(instance: dg.DagsterInstance, run_id: str, step: str) -> tuple[float, float]:
    times = [e.timestamp for e in instance.all_logs(run_id) if e.step_key == step and e.dagster_event
             and e.dagster_event.event_type in (dg.DagsterEventType.STEP_START, dg.DagsterEventType.STEP_SUCCESS)]
    return min(times), max(times)


def test_two_machines_share_only_postgres_s3_and_redis(ingested_sample, tmp_path):
    local_values, local_report = ingested_sample
    with ExitStack() as stack:
        pg = stack.enter_context(postgres_server("rag-machines-pg"))
        endpoint = stack.enter_context(seaweed_s3(tmp_path / "seaweed", S3_KEY, S3_SECRET))
        broker = stack.enter_context(redis_server(tmp_path / "redis"))
        s3 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=S3_KEY, aws_secret_access_key=S3_SECRET,
                          region_name="us-east-1")
        for bucket in ("rag-source", "rag-stages", "rag-index"):
            s3.create_bucket(Bucket=bucket)
        for path in sorted(SAMPLE_DOCS.rglob("*")):
            if path.is_file():
                s3.put_object(Bucket="rag-source", Key=f"docs/{path.relative_to(SAMPLE_DOCS)}", Body=path.read_bytes())

        shared = {**image(tmp_path / "image", endpoint), **pg, "RAG_EXECUTOR": "celery",
                  "RAG_CELERY_BROKER": f"{broker}/0", "RAG_CELERY_BACKEND": f"{broker}/1"}
        image_before = files_under(tmp_path / "image")
        machines = tmp_path / "machines"
        base_env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "DAGSTER_", "AWS_"))}
        base_env.update(shared, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
                        PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p))
        workers = {name: ({**base_env, **machine(machines, name)}, machines / name / "work") for name in WORKERS}
        driver = {**shared, **machine(machines, "driver")}
        with env(**driver), dg.DagsterInstance.get():
            pass  # create the instance's tables once, before the workers open it
        stack.enter_context(celery_workers(workers, tmp_path))

        # 1. rag ingest from the driver machine, steps on the two worker machines.
        with env(**driver):
            report = ingest_project(load_project())
            with dg.DagsterInstance.get() as instance:
                steps = workers_per_step(instance)
                first_runs = {r.run_id for r in instance.get_runs()}
        gc.collect()
        assert report["documents_failed"] == 0, report["failures"]
        assert report["documents_seen"] == local_report["documents_seen"] >= 10 and report["runs"] >= 3
        assert {host.split("@")[0] for host in set().union(*steps.values())} == set(WORKERS), steps
        distributed, local = index_rows(driver), index_rows(local_values)
        assert distributed.keys() == local.keys() and len(local) == local_report["rows_in_index"]
        assert {i: r[:2] for i, r in distributed.items()} == {i: r[:2] for i, r in local.items()}
        assert max(float(np.abs(distributed[i][2] - local[i][2]).max()) for i in local) < 1e-5
        stage_objects = s3.list_objects_v2(Bucket="rag-stages", Prefix="data/stages/sample/current/raw/")["KeyCount"]
        assert stage_objects == report["documents_seen"]

        # 2. An edit and a delete, picked up by the source sensor under the daemon.
        s3.put_object(Bucket="rag-source", Key=f"docs/{EDITED}",
                      Body=b"# FAQ\n\nQ: What colour is the loading dock door?\nA: Ultramarine, since the refit.\n")
        deleted = "notes/office_wifi.txt"
        s3.delete_object(Bucket="rag-source", Key=f"docs/{deleted}")
        daemon_log = tmp_path / "daemon.log"
        proc = stack.enter_context(daemon({**base_env, **driver}, machines / "driver" / "work", daemon_log))
        with env(**driver), dg.DagsterInstance.get() as instance:
            edited_runs = wait_for_runs(instance, first_runs, 1, proc, daemon_log)
            assert all(r.status == dg.DagsterRunStatus.SUCCESS for r in edited_runs), edited_runs
            rows = index_rows(driver)
            deadline = time.monotonic() + 120
            while any(doc == deleted for doc, _, _ in rows.values()) and time.monotonic() < deadline:
                time.sleep(2)  # the prune run follows the ingest run
                rows = index_rows(driver)
        assert {doc for doc, _, _ in rows.values()} == {doc for doc, _, _ in local.values()} - {deleted}
        unchanged = {i: r[:2] for i, r in local.items() if r[0] not in (EDITED, deleted)}
        assert {i: r[:2] for i, r in rows.items() if r[0] != EDITED} == unchanged
        assert {i for i, r in rows.items() if r[0] == EDITED}.isdisjoint(local)  # new text, new row ids

        # 3. Two batches on one tick: two runs write the one table at the same time.
        for n in range(NEW_DOCS):
            s3.put_object(Bucket="rag-source", Key=f"docs/batch/part {n:02d}.md",
                          Body=f"# Part {n}\n\nShelf {n} in aisle {n % 4} holds bin code BX-{7000 + n}.\n".encode())
        with env(**driver), dg.DagsterInstance.get() as instance:
            seen = {r.run_id for r in instance.get_runs()}
            batch_runs = wait_for_runs(instance, seen, 2, proc, daemon_log)
            assert all(r.status == dg.DagsterRunStatus.SUCCESS for r in batch_runs), batch_runs
            windows = [step_window(instance, r.run_id, "sample__lancedb_index") for r in batch_runs]
            steps = workers_per_step(instance)
        gc.collect()
        final = index_rows(driver)
        all_ids = table_ids(driver)
    assert len(all_ids) == len(set(all_ids)) == len(final)  # nothing duplicated
    batch_docs = {doc for doc, _, _ in final.values() if doc.startswith("batch/")}
    assert batch_docs == {f"batch/part {n:02d}.md" for n in range(NEW_DOCS)}  # nothing lost
    assert {i: r[:2] for i, r in final.items() if not r[0].startswith("batch/")} == {i: r[:2] for i, r in rows.items()}
    # Whether the two index steps overlap depends on how Celery hands out the steps (measured: not
    # always); tests/defs/test_concurrent_index.py makes two writers commit at the same instant.
    gap = max(w[0] for w in windows) - min(w[1] for w in windows)
    print(f"two machines: {len(distributed)} rows identical to the local run; edit+delete by the daemon's sensor; "
          f"two batch runs' index steps {'overlapped' if gap < 0 else 'were apart'} by {abs(gap):.2f}s; "
          f"workers per step: {steps}")
    for name in (*WORKERS, "driver"):  # no machine kept stage outputs or index files locally
        # (retrieval_eval's embedding cache is each machine's own, in its Dagster home: see evaluate.py)
        kept = {f for f in files_under(machines / name) if "/local/eval_cache/" not in f
                and (f.endswith(".bin") or ".lance" in f or "/stages/" in f or "/current/" in f)}
        assert not kept, (name, sorted(kept)[:10])
    assert files_under(tmp_path / "image") == image_before  # the deployed project is read, never written
