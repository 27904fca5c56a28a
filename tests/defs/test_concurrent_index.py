"""Index writes that cannot collide: writers on two machines commit batches to one LanceDB table
on a real S3 server (SeaweedFS) at the same instant, through the index stage's own write path
(LanceIndex.write_documents: upsert, stale-row delete, manifest upsert). LanceDB publishes each
table version with a conditional PUT, so a losing writer retries on the new version: every
document ends with its rows exactly once and one manifest entry, and no commit is lost."""

from __future__ import annotations

import multiprocessing as mp

import boto3
import lancedb
import pytest

from rag_assets.core.index import LanceIndex
from rag_assets.core.models import Chunk, ChunkedDocument, EmbeddedDocument

pytestmark = [pytest.mark.distributed, pytest.mark.slow]

KEY, SECRET = "rag-concurrent-key", "rag-concurrent-secret"
DIM, ROUNDS, DOCS_PER_BATCH, CHUNKS = 8, 6, 5, 3


def options(endpoint: str) -> dict[str, str]:
    return {"aws_endpoint": endpoint, "allow_http": "true", "aws_region": "us-east-1",
            "aws_access_key_id": KEY, "aws_secret_access_key": SECRET}


def document(doc_id: str, salt: int) -> EmbeddedDocument:
    chunks = tuple(Chunk(doc_id, i, 0, 5, f"{doc_id} part {i}", f"{doc_id} part {i}", 3) for i in range(CHUNKS))
    chunked = ChunkedDocument(doc_id, f"s3://src/{doc_id}", doc_id, f"hash-{doc_id}", "v1", "text", "p", "ph", chunks)
    vectors = tuple(tuple(float((salt + i + d) % 7) for d in range(DIM)) for i in range(CHUNKS))
    return EmbeddedDocument(chunked, "m", vectors)


def writer(endpoint: str, name: str, barrier) -> None:
    index = LanceIndex(lancedb.connect("s3://index/db", storage_options=options(endpoint)), "c", "m", DIM, "p")
    for round_ in range(ROUNDS):
        batch = [document(f"{name}/r{round_}/d{n}.md", n) for n in range(DOCS_PER_BATCH)]
        barrier.wait(timeout=120)  # both machines commit this round's batch at the same instant
        index.write_documents(batch, tenant=None, run_id=f"{name}-{round_}")


def test_two_writers_commit_batches_to_one_s3_table_at_the_same_time(tmp_path):
    from tests.support.seaweed import seaweed_s3

    with seaweed_s3(tmp_path / "seaweed", KEY, SECRET) as endpoint:
        boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=KEY, aws_secret_access_key=SECRET,
                     region_name="us-east-1").create_bucket(Bucket="index")
        index = LanceIndex(lancedb.connect("s3://index/db", storage_options=options(endpoint)), "c", "m", DIM, "p")
        index.table(), index.manifest()  # created once, as the first ingest does
        ctx = mp.get_context("spawn")
        barrier = ctx.Barrier(2)
        procs = [ctx.Process(target=writer, args=(endpoint, name, barrier)) for name in ("machine1", "machine2")]
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join(timeout=300)
        assert [proc.exitcode for proc in procs] == [0, 0]
        ids = index.table().to_arrow().column("id").to_pylist()
        per_doc = index.rows_per_document()
        manifest = index.manifest().to_arrow().column("doc_id").to_pylist()
        versions = index.table().version

    expected = {f"{m}/r{r}/d{n}.md" for m in ("machine1", "machine2") for r in range(ROUNDS) for n in range(DOCS_PER_BATCH)}
    assert len(ids) == len(set(ids)) == len(expected) * CHUNKS  # nothing duplicated
    assert per_doc == dict.fromkeys(expected, CHUNKS)  # nothing lost
    assert sorted(manifest) == sorted(expected)
    assert versions >= 1 + 2 * ROUNDS  # every upsert became its own table version


def test_a_table_is_listed_and_dropped_with_its_manifest_and_registry_entry_on_s3(tmp_path):
    """`rag tables --drop-*`'s primitives on an S3 LanceDB: a table dropped there is gone with its
    manifest and its registry entry (SeaweedFS still lists the emptied folders: they do not open),
    and the table beside it keeps its rows."""
    from rag_assets.core.index import active_pairs, drop_table, mark_active, open_tables
    from tests.support.seaweed import seaweed_s3

    with seaweed_s3(tmp_path / "seaweed", KEY, SECRET) as endpoint:
        boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=KEY, aws_secret_access_key=SECRET,
                     region_name="us-east-1").create_bucket(Bucket="index")
        db = lancedb.connect("s3://index/db", storage_options=options(endpoint))
        old, new = (LanceIndex(db, "c", "m", DIM, profile) for profile in ("old", "new"))
        for index in (old, new):
            index.write_documents([document("a.md", 1)], tenant=None, run_id="run")
            mark_active(index, "c", "m", index.name.rsplit("__", 1)[1], 1)
        assert {old.name, old.manifest_name, new.name, new.manifest_name} <= set(open_tables(db))
        drop_table(db, "c", old.name)
        assert not {old.name, old.manifest_name} & set(open_tables(db))
        assert active_pairs(db, "c") == [("m", "new")] and new.count_rows() == CHUNKS
        old.write_documents([document("b.md", 2)], tenant=None, run_id="again")  # switching back rebuilds it
        assert old.indexed_documents().keys() == {"b.md"} and old.count_rows() == CHUNKS
