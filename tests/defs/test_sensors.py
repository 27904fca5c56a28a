"""The source sensors on a real Dagster instance: disk, and S3 against a real SeaweedFS server."""

import time
from datetime import datetime, timezone
from pathlib import Path

import boto3
import dagster as dg
import lancedb
import pytest
import yaml

from rag_assets.config import load_project
from rag_assets.core.garbage import collect_garbage
from rag_assets.core.store import StageStore
from rag_assets.core.index import table_name
from rag_assets.core.keys import partition_key_for
from rag_assets.defs.factory import build_definitions
from tests.conftest import edit_yaml, env, make_project
from tests.defs.sensor_helpers import apply, tick

pytestmark = pytest.mark.slow


def table_rows(corpus) -> list[dict]:
    db = lancedb.connect(corpus.index_uri)
    return db.open_table(table_name(corpus.name, corpus.embedding_model.name, corpus.chunking_profile.name)).to_arrow().to_pylist()


def write_docs(folder: Path, count: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        (folder / f"note {i}, v1.md").write_text(f"# Note {i}\n\nThe refund window for product {i} is {i + 10} days.\n")


def test_disk_sensor_adds_changes_and_deletes_documents_in_batches(tmp_path):
    docs = tmp_path / "docs"
    write_docs(docs, 7)
    values = make_project(tmp_path / "p", docs=docs)
    edit_yaml(Path(values["RAG_PROJECT_DIR"]) / "rag_project.yml", lambda d: d["defaults"].update({"+batch_size": 3}))
    with env(**values), dg.instance_for_test() as instance:
        project = load_project()
        corpus = project.corpus("sample")
        defs = build_definitions(project)
        name = "sample_source_sensor"

        result, cursor = tick(defs, name, instance, None)
        assert not result.skip_message
        # 7 new documents in contiguous ranges of at most 3: 3 runs, not 7.
        assert len(result.run_requests) == 3
        assert len(result.asset_events) == 7
        assert all(e.tags["dagster/data_version"] for e in result.asset_events)
        apply(defs, instance, result)
        assert len({r["doc_id"] for r in table_rows(corpus)}) == 7

        again, cursor = tick(defs, name, instance, cursor)
        assert again.skip_message and not again.run_requests

        (docs / "note 2, v1.md").write_text("# Note 2\n\nThe refund window for product 2 is now 60 days.\n")
        (docs / "note 4, v1.md").touch()  # new mtime, same bytes: hashed, not re-run
        changed, cursor = tick(defs, name, instance, cursor)
        assert [r.partition_key for r in changed.run_requests] == [partition_key_for("note 2, v1.md")]
        apply(defs, instance, changed)
        rows = table_rows(corpus)
        assert any("60 days" in r["text"] for r in rows if r["doc_id"] == "note 2, v1.md")
        # A run the sensor launched names the version read as a sweep does (it took the observation's
        # readable, millisecond time, and the next sweep read the bytes again for it).
        assert {r["source_version"] for r in rows if r["doc_id"] == "note 2, v1.md"} == {
            f"mtime:{(docs / 'note 2, v1.md').stat().st_mtime_ns}"}
        assert not any("12 days" in r["text"] for r in rows)

        # Listings collected as garbage after an hour but the newest; the one the cursor names
        # damaged: the next tick reads the raw records instead, finds nothing changed and writes
        # the listing again.
        store = StageStore(corpus.stage_store)
        assert len(store.listing("listing/")[0]) > 1
        assert collect_garbage(store, 7 * 86400, now=time.time() + 7200).stages["listing"].referenced == 1
        [newest] = store.listing("listing/")[0]
        store.blobs.write(newest.name, store.blobs.read(newest.name)[:-40])
        quiet, cursor = tick(defs, name, instance, cursor)
        assert quiet.skip_message and not quiet.run_requests
        assert store.load("listing", store.key_of(newest)) is not None

        (docs / "note 5, v1.md").unlink()
        removed, cursor = tick(defs, name, instance, cursor)
        assert any(isinstance(r, dg.DeleteDynamicPartitionsRequest) for r in removed.dynamic_partitions_requests)
        assert [r.job_name for r in removed.run_requests] == ["maintain_sample"]
        apply(defs, instance, removed)
        assert "note 5, v1.md" not in {r["doc_id"] for r in table_rows(corpus)}
        assert partition_key_for("note 5, v1.md") not in instance.get_dynamic_partitions("sample_documents")

        # A deletion another sweep recorded (`rag observe`, the scheduled sweep: the partition is gone,
        # the rows are not): the sensor has the table pruned, once.
        (docs / "note 6, v1.md").unlink()
        instance.delete_dynamic_partition("sample_documents", partition_key_for("note 6, v1.md"))
        pruned, cursor = tick(defs, name, instance, cursor)
        assert [r.job_name for r in pruned.run_requests] == ["maintain_sample"] and not pruned.skip_message
        apply(defs, instance, pruned)
        assert "note 6, v1.md" not in {r["doc_id"] for r in table_rows(corpus)}
        after, cursor = tick(defs, name, instance, cursor)
        assert after.skip_message and not after.run_requests


@pytest.fixture(scope="module")
def s3_server(tmp_path_factory):
    from tests.support.seaweed import seaweed_s3

    with seaweed_s3(tmp_path_factory.mktemp("seaweed"), "rag-test-key", "rag-test-secret") as endpoint:
        yield endpoint


def test_s3_sensor_drives_a_real_ingest(tmp_path, s3_server):
    client = boto3.client("s3", endpoint_url=s3_server, aws_access_key_id="rag-test-key",
                          aws_secret_access_key="rag-test-secret", region_name="us-east-1")
    client.create_bucket(Bucket="company-docs")
    for i in range(4):
        client.put_object(Bucket="company-docs", Key=f"handbook/section {i}.md",
                          Body=f"# Section {i}\n\nError code NW-{4000 + i} means the dock lost power.\n".encode())
    client.put_object(Bucket="company-docs", Key="other/skip.md", Body=b"# not under the prefix\n")

    values = make_project(tmp_path / "p", docs=tmp_path / "unused")
    (tmp_path / "unused").mkdir()
    sources = Path(values["RAG_PROJECT_DIR"]) / "sources.yml"
    data = yaml.safe_load(sources.read_text())
    data["sources"].append({"name": "s3_docs", "kind": "s3", "bucket": "company-docs", "prefix": "handbook/",
                            "endpoint_url": s3_server, "region": "us-east-1", "include": ["**/*.md"],
                            "access_key_env": "RAG_TEST_S3_KEY", "secret_key_env": "RAG_TEST_S3_SECRET"})
    sources.write_text(yaml.safe_dump(data))
    project_yml = Path(values["RAG_PROJECT_DIR"]) / "rag_project.yml"
    pdata = yaml.safe_load(project_yml.read_text())
    pdata["corpora"]["sample"]["+source"] = "s3_docs"
    project_yml.write_text(yaml.safe_dump(pdata))

    with env(**values, RAG_TEST_S3_KEY="rag-test-key", RAG_TEST_S3_SECRET="rag-test-secret"), \
            dg.instance_for_test() as instance:
        project = load_project()
        corpus = project.corpus("sample")
        defs = build_definitions(project)
        result, cursor = tick(defs, "sample_source_sensor", instance, None)
        assert sorted(e.partition for e in result.asset_events) == [f"section {i}.md" for i in range(4)]
        apply(defs, instance, result)
        rows = table_rows(corpus)
        assert {r["doc_id"] for r in rows} == {f"section {i}.md" for i in range(4)}
        assert all(r["source_uri"].startswith("s3://company-docs/handbook/") for r in rows)
        assert all(r["source_version"].startswith("etag:") for r in rows)

        client.put_object(Bucket="company-docs", Key="handbook/section 1.md",
                          Body=b"# Section 1\n\nError code NW-4001 now means the brush is blocked.\n")
        client.delete_object(Bucket="company-docs", Key="handbook/section 3.md")
        changed, cursor = tick(defs, "sample_source_sensor", instance, cursor)
        ingest_runs = [r for r in changed.run_requests if r.job_name == "ingest_sample"]
        assert [r.partition_key for r in ingest_runs] == ["section 1.md"]
        apply(defs, instance, changed)
        rows = table_rows(corpus)
        assert {r["doc_id"] for r in rows} == {"section 0.md", "section 1.md", "section 2.md"}
        assert any("brush is blocked" in r["text"] for r in rows)

        idle, cursor = tick(defs, "sample_source_sensor", instance, cursor)
        assert idle.skip_message and not idle.run_requests


def test_scheduled_sweep_records_the_sweep_and_leaves_rows_to_maintenance(tmp_path):
    docs = tmp_path / "docs"
    write_docs(docs, 3)
    values = make_project(tmp_path / "p", docs=docs)
    edit_yaml(Path(values["RAG_PROJECT_DIR"]) / "sources.yml", lambda d: d["sources"][0].update(schedule="*/15 * * * *"))
    with env(**values), dg.instance_for_test() as instance:
        project = load_project()
        corpus = project.corpus("sample")
        defs = build_definitions(project)
        schedule = defs.resolve_schedule_def("sample_scheduled_sweep")

        def evaluate():
            with dg.build_schedule_context(instance=instance, resources=defs.resources,
                                           scheduled_execution_time=datetime.now(timezone.utc)) as context:
                return schedule.evaluate_tick(context)

        first = evaluate()
        assert len(instance.get_dynamic_partitions("sample_documents")) == 3
        for run in first.run_requests:
            defs.resolve_job_def(run.job_name).execute_in_process(instance=instance, partition_key=run.partition_key,
                                                                  tags=dict(run.tags))
        assert len({r["doc_id"] for r in table_rows(corpus)}) == 3

        (docs / "note 1, v1.md").unlink()
        # The UI's "Test schedule" (scheduleDryRun: no log key, so the context makes one of its time)
        # changes nothing: it deleted the partition and recorded observations.
        with dg.ScheduleEvaluationContext(instance.get_ref(), datetime.now(timezone.utc), None, "__repository__",
                                          schedule.name, resources=defs.resources) as context:
            preview = schedule.evaluate_tick(context)
        assert preview.skip_message == "2 documents: 1 deleted would be recorded (preview: nothing is); the " \
                                       "deleted documents' rows wait for the table's maintenance run"
        assert partition_key_for("note 1, v1.md") in instance.get_dynamic_partitions("sample_documents")
        with dg.ScheduleEvaluationContext(instance.get_ref(), datetime.now(timezone.utc),
                                          ["__repository__", schedule.name, "17"], "__repository__",
                                          schedule.name, resources=defs.resources) as context:
            removed = schedule.evaluate_tick(context)  # as the daemon's tick 17 evaluates it
        assert not removed.run_requests and removed.skip_message.startswith("2 documents: 1 deleted recorded;")
        assert partition_key_for("note 1, v1.md") not in instance.get_dynamic_partitions("sample_documents")
        assert "note 1, v1.md" in {r["doc_id"] for r in table_rows(corpus)}  # no rows deleted in an evaluation
        defs.resolve_job_def("maintain_sample").execute_in_process(instance=instance)
        assert "note 1, v1.md" not in {r["doc_id"] for r in table_rows(corpus)}
