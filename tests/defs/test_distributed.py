"""The distributed profile: the sample corpus ingested through Dagster's celery executor (a real
Redis broker, two Celery workers started as the README says) with the index on S3 (SeaweedFS)
gives the same rows as a local in-process run to a LanceDB folder."""

from __future__ import annotations

import gc
import os
import time
from contextlib import ExitStack
from pathlib import Path

import boto3
import dagster as dg
import numpy as np
import pytest
import xxhash
import yaml

from rag_assets.config import load_project
from rag_assets.core.index import table_name
from rag_assets.defs.names import resource_keys
from rag_assets.defs.resources import build_corpus_resources
from rag_assets.ingest import ingest_project
from tests.conftest import REPO, env, make_project
from tests.support.distributed import BIN, celery_workers, redis_server
from tests.support.seaweed import seaweed_s3

pytestmark = [pytest.mark.distributed, pytest.mark.slow]

WORKERS = ("worker1", "worker2")
S3_KEY, S3_SECRET = "rag-dist-key", "rag-dist-secret"


def index_rows(values: dict[str, str]) -> dict[str, tuple]:
    """id -> (doc_id, xxh3 of the text, vector) of the sample corpus' table, through the resource
    the assets use (a folder or S3)."""
    with env(**values):
        corpus = load_project().corpus("sample")
        key = resource_keys("sample")["lancedb"]
        with dg.build_resources({key: build_corpus_resources(corpus)[key]}) as resources:
            db = getattr(resources, key).get_connection()
        table = db.open_table(table_name("sample", corpus.embedding_model.name, corpus.chunking_profile.name))
        return {r["id"]: (r["doc_id"], xxhash.xxh3_64_hexdigest(r["text"].encode()), np.asarray(r["vector"]))
                for r in table.to_arrow().to_pylist()}


def workers_per_step(instance: dg.DagsterInstance) -> dict[str, set[str]]:
    """Celery worker hostname(s) that executed each step, from the runs' engine events."""
    seen: dict[str, set[str]] = {}
    for run in instance.get_runs():
        for entry in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ENGINE_EVENT):
            metadata = entry.dagster_event.engine_event_data.metadata
            if "Celery worker" in metadata:
                seen.setdefault(entry.step_key, set()).add(metadata["Celery worker"].value)
    return seen


def test_celery_workers_build_the_same_index_on_s3_as_a_local_run(ingested_sample, tmp_path):
    local_values, local_report = ingested_sample
    values = make_project(tmp_path / "p")
    # The index profile names its own key variables: the workers read them through dg.EnvVar.
    indexes = Path(values["RAG_PROJECT_DIR"]) / "profiles" / "indexes.yml"
    data = yaml.safe_load(indexes.read_text())
    data["indexes"][0].update(access_key_env="RAG_INDEX_S3_KEY", secret_key_env="RAG_INDEX_S3_SECRET")
    indexes.write_text(yaml.safe_dump(data))

    with ExitStack() as stack:
        endpoint = stack.enter_context(seaweed_s3(tmp_path / "seaweed", S3_KEY, S3_SECRET))
        broker = stack.enter_context(redis_server(tmp_path / "redis"))
        s3 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=S3_KEY, aws_secret_access_key=S3_SECRET,
                          region_name="us-east-1")
        s3.create_bucket(Bucket="rag-index")
        values.update(RAG_EXECUTOR="celery", RAG_CELERY_BROKER=f"{broker}/0", RAG_CELERY_BACKEND=f"{broker}/1",
                      RAG_LANCEDB_URI="s3://rag-index/lancedb", RAG_LANCEDB_ENDPOINT=endpoint,
                      RAG_INDEX_S3_KEY=S3_KEY, RAG_INDEX_S3_SECRET=S3_SECRET)
        worker_env = {**os.environ, **values, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
                      "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)}
        with env(**values), dg.DagsterInstance.get():
            pass  # create the instance's storage once, before two workers open it at the same time
        stack.enter_context(celery_workers({name: (worker_env, REPO) for name in WORKERS}, tmp_path))

        started = time.monotonic()
        with env(**values):
            report = ingest_project(load_project())
            with dg.DagsterInstance.get() as instance:
                steps = workers_per_step(instance)
        elapsed = time.monotonic() - started
        # Celery's pending results unsubscribe from the Redis backend when collected: let them
        # do so while Redis is still up, not later while pytest is reporting.
        gc.collect()
        distributed = index_rows(values)
        table_objects = s3.list_objects_v2(Bucket="rag-index", Prefix="lancedb/")["KeyCount"]

    assert report["documents_failed"] == 0, report["failures"]
    assert report["documents_seen"] == local_report["documents_seen"] >= 10
    assert report["checks"] and all(report["checks"].values()), report["checks"]
    # Each stage and the table ran on a worker, and both workers took a share.
    for stage in ("parsed_documents", "chunks", "embeddings", "lancedb_index", "lancedb_table"):
        assert f"sample__{stage}" in steps, steps
    assert {host.split("@")[0] for host in set().union(*steps.values())} == set(WORKERS), steps

    assert table_objects > 0  # the index lives in the bucket, where every worker reads and writes it
    local = index_rows(local_values)
    assert distributed.keys() == local.keys() and len(local) == local_report["rows_in_index"]
    assert {i: r[:2] for i, r in distributed.items()} == {i: r[:2] for i, r in local.items()}
    drift = max(float(np.abs(distributed[i][2] - local[i][2]).max()) for i in local)
    assert drift < 1e-5, drift
    print(f"celery ingest: {len(distributed)} rows identical to the local run (max vector drift {drift:.2e}), "
          f"{elapsed:.1f}s, workers per step: {steps}")
