"""The S3 document source against a real SeaweedFS server: how keys under the source's prefix
map to document ids and back, and how a sweep fails when the endpoint stops answering."""

import time
from pathlib import Path

import boto3
import dagster as dg
import lancedb
import pytest
from dagster_aws.s3 import S3Resource

from rag_assets.config import load_project
from rag_assets.core.index import table_name
from rag_assets.core.sources import SourceUnavailable
from rag_assets.defs.factory import build_definitions
from rag_assets.ingest import ingest_project
from resources import S3SourceResource
from tests.conftest import edit_yaml, env, make_project
from tests.defs.sensor_helpers import tick
from tests.support.seaweed import black_hole

pytestmark = pytest.mark.slow

KEY, SECRET = "rag-test-key", "rag-test-secret"


@pytest.fixture(scope="module")
def s3_server(tmp_path_factory):
    from tests.support.seaweed import seaweed_s3

    with seaweed_s3(tmp_path_factory.mktemp("seaweed"), KEY, SECRET) as endpoint:
        yield endpoint


def client(endpoint: str):
    return boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=KEY, aws_secret_access_key=SECRET,
                        region_name="us-east-1")


def source(endpoint: str, bucket: str, prefix: str = "", **settings) -> S3SourceResource:
    return S3SourceResource(s3=S3Resource(endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id=KEY,
                                          aws_secret_access_key=SECRET), name="s3_docs", bucket=bucket,
                            prefix=prefix, connect_timeout_seconds=5, read_timeout_seconds=15, **settings)


def test_a_prefix_names_a_folder_with_or_without_its_trailing_slash(s3_server):
    s3 = client(s3_server)
    s3.create_bucket(Bucket="prefixes")
    for key in ("handbook/leave.md", "handbook/it/vpn.md", "handbook2/other.md", "handbook.md", "handbookx"):
        s3.put_object(Bucket="prefixes", Key=key, Body=f"# {key}\n\nText of {key}.\n".encode())
    for prefix in ("handbook", "handbook/"):
        docs = source(s3_server, "prefixes", prefix)
        # The siblings that merely start with the same characters are not documents of the folder
        # (they were listed as '2/other.md', '.md' and 'x', then failed as vanished on every sweep).
        assert [r.doc_id for r in docs.list_documents()] == ["it/vpn.md", "leave.md"], prefix
        assert [r.uri for r in docs.list_documents()] == ["s3://prefixes/handbook/it/vpn.md",
                                                          "s3://prefixes/handbook/leave.md"]
        raw = docs.read("it/vpn.md")
        assert raw.data == b"# handbook/it/vpn.md\n\nText of handbook/it/vpn.md.\n"
        assert raw.uri == "s3://prefixes/handbook/it/vpn.md"
    assert [r.doc_id for r in source(s3_server, "prefixes").list_documents()] == [
        "handbook.md", "handbook/it/vpn.md", "handbook/leave.md", "handbook2/other.md", "handbookx"]


def test_a_sweep_builds_one_client_not_one_per_document(s3_server, monkeypatch):
    s3 = client(s3_server)
    s3.create_bucket(Bucket="many-reads")
    for i in range(30):
        s3.put_object(Bucket="many-reads", Key=f"docs/note {i}.md", Body=f"# Note {i}\n\nItem {i}.\n".encode())
    built = []
    real = boto3.session.Session.client
    monkeypatch.setattr(boto3.session.Session, "client", lambda *a, **kw: built.append(1) or real(*a, **kw))
    docs = source(s3_server, "many-reads", "docs/")
    refs = docs.list_documents()
    assert [docs.read(r.doc_id).data for r in refs][:1] == [b"# Note 0\n\nItem 0.\n"]
    # A client per read (a new boto3 session each) cost ~0.25 s a document: 1,050 objects took
    # 4.5 minutes to read, and a sensor tick over a few hundred new ones outlived Dagster's 60 s.
    assert len(refs) == 30 and len(built) == 1


def test_an_endpoint_that_never_answers_fails_the_sweep_in_bounded_time_and_keeps_the_index(tmp_path, s3_server):
    s3 = client(s3_server)
    s3.create_bucket(Bucket="hangs")
    for i in range(3):
        s3.put_object(Bucket="hangs", Key=f"handbook/section {i}.md",
                      Body=f"# Section {i}\n\nDock {i} is red.\n".encode())
    values = make_project(tmp_path / "p", docs=tmp_path / "unused")
    (tmp_path / "unused").mkdir()
    sources = Path(values["RAG_PROJECT_DIR"]) / "sources.yml"
    edit_yaml(sources, lambda d: d["sources"].append({
        "name": "s3_docs", "kind": "s3", "bucket": "hangs", "prefix": "handbook", "endpoint_url": s3_server,
        "region": "us-east-1", "access_key_env": "RAG_TEST_S3_KEY", "secret_key_env": "RAG_TEST_S3_SECRET"}))
    edit_yaml(Path(values["RAG_PROJECT_DIR"]) / "rag_project.yml",
              lambda d: d["corpora"]["sample"].update({"+source": "s3_docs"}))
    with env(**values, RAG_TEST_S3_KEY=KEY, RAG_TEST_S3_SECRET=SECRET), black_hole() as hole:
        corpus = load_project().corpus("sample")
        assert ingest_project(load_project())["rows_in_index"] > 0
        table = lancedb.connect(corpus.index_uri).open_table(
            table_name(corpus.name, corpus.embedding_model.name, corpus.chunking_profile.name))
        indexed = sorted(r["id"] for r in table.to_arrow().to_pylist())

        # botocore's defaults (60 s a read, 6 attempts) hung here for over 6 minutes.
        edit_yaml(sources, lambda d: d["sources"][-1].update(
            endpoint_url=hole, connect_timeout_seconds=1, read_timeout_seconds=1, max_attempts=2))
        project = load_project()
        started = time.monotonic()
        with pytest.raises(SourceUnavailable) as failed:
            ingest_project(project)
        assert time.monotonic() - started < 30
        message = str(failed.value)
        for expected in ("'s3_docs'", "s3://hangs/handbook/", hole, "ReadTimeoutError", "did not answer within 1 s",
                         "check the endpoint_url of source 's3_docs' in sources.yml", "read_timeout_seconds"):
            assert expected in message, (expected, message)
        assert KEY not in message and SECRET not in message
        table.checkout_latest()
        assert sorted(r["id"] for r in table.to_arrow().to_pylist()) == indexed

        # The sensor's tick (Dagster stops one after 60 s) fails the same way: an error, so its cursor stays.
        defs = build_definitions(project)
        with dg.instance_for_test() as instance:
            started = time.monotonic()
            with pytest.raises(SourceUnavailable, match="did not answer within 1 s") as tick_failed:
                tick(defs, "sample_source_sensor", instance, None)
            assert time.monotonic() - started < 30
            assert "s3://hangs/handbook/" in str(tick_failed.value)


def test_a_read_names_the_source_when_the_endpoint_never_answers():
    with black_hole() as hole:
        docs = S3SourceResource(s3=S3Resource(endpoint_url=hole, aws_access_key_id=KEY, aws_secret_access_key=SECRET,
                                              region_name="us-east-1", max_attempts=2), name="s3_docs", bucket="docs",
                                prefix="handbook/", connect_timeout_seconds=1, read_timeout_seconds=0.5)
        started = time.monotonic()
        with pytest.raises(SourceUnavailable, match=r"S3 source 's3_docs' \(s3://docs/handbook/ at http://127\.0\.0"
                                                    r"\.1:\d+\): cannot read handbook/a\.md: ReadTimeoutError"):
            docs.read("a.md")
        assert time.monotonic() - started < 10  # 2 attempts of 0.5 s, and a backoff of at most 1 s


def test_a_key_with_an_empty_folder_is_a_document_of_its_own_read_back_by_its_own_key():
    """'kb//x.md' is another object than 'kb/x.md' (AWS keeps both; SeaweedFS collapses the slashes,
    so a stub plays AWS here): its id keeps the slash, and reading it fetches it, not its neighbour."""
    from botocore.stub import Stubber

    docs = source("http://127.0.0.1:9", "b", "kb")
    s3 = docs._s3()
    with Stubber(s3) as stub:
        stub.add_response("list_objects_v2", {"Contents": [
            {"Key": key, "Size": 3, "ETag": f'"{n}"'} for n, key in enumerate(["kb//x.md", "kb/x.md"])],
            "IsTruncated": False}, {"Bucket": "b", "Prefix": "kb/"})
        assert [(r.doc_id, r.uri) for r in docs.list_documents()] == [("/x.md", "s3://b/kb//x.md"),
                                                                      ("x.md", "s3://b/kb/x.md")]
        stub.add_response("get_object", {"Body": _body(b"two"), "ContentLength": 3, "ETag": '"0"'},
                          {"Bucket": "b", "Key": "kb//x.md"})
        assert docs.read("/x.md").uri == "s3://b/kb//x.md"


def _body(data: bytes):
    from io import BytesIO

    from botocore.response import StreamingBody

    return StreamingBody(BytesIO(data), len(data))


def test_a_missing_bucket_and_refused_credentials_name_the_setting_to_fix(s3_server):
    with pytest.raises(SourceUnavailable) as missing:
        source(s3_server, "no-such-bucket").list_documents()
    assert "check the bucket of source 's3_docs' in sources.yml" in str(missing.value)
    assert "credentials" not in str(missing.value)
    client(s3_server).create_bucket(Bucket="locked")
    wrong = S3SourceResource(s3=S3Resource(endpoint_url=s3_server, region_name="us-east-1", aws_access_key_id=KEY,
                                           aws_secret_access_key="not-the-secret"), name="s3_docs", bucket="locked",
                             credentials="$DOCS_KEY and $DOCS_SECRET", connect_timeout_seconds=5,
                             read_timeout_seconds=15)
    with pytest.raises(SourceUnavailable) as refused:
        wrong.list_documents()
    assert "check the credentials in $DOCS_KEY and $DOCS_SECRET" in str(refused.value)
    assert "not-the-secret" not in str(refused.value)


def test_an_s3_corpus_is_evaluated_from_its_source(tmp_path, s3_server):
    """rag eval and the retrieval_eval asset read the corpus' documents from its folder: on an S3
    source (which has none) both failed with a TypeError."""
    import json
    import subprocess
    import sys

    from tests.conftest import SAMPLE_DOCS

    s3 = client(s3_server)
    s3.create_bucket(Bucket="golden")
    for doc in ("handbook/employee_handbook.md", "support/customer_faq.md"):
        s3.put_object(Bucket="golden", Key=f"kb/{doc}", Body=(SAMPLE_DOCS / doc).read_bytes())
    values = make_project(tmp_path / "p", docs=tmp_path / "unused")
    (tmp_path / "unused").mkdir()
    edit_yaml(Path(values["RAG_PROJECT_DIR"]) / "sources.yml", lambda d: d["sources"].append({
        "name": "s3_docs", "kind": "s3", "bucket": "golden", "prefix": "kb", "endpoint_url": s3_server,
        "region": "us-east-1", "access_key_env": "RAG_TEST_S3_KEY", "secret_key_env": "RAG_TEST_S3_SECRET"}))
    edit_yaml(Path(values["RAG_PROJECT_DIR"]) / "rag_project.yml",
              lambda d: d["corpora"]["sample"].update({"+source": "s3_docs", "+eval_profiles": ["default"]}))
    questions = Path(values["RAG_PROJECT_DIR"]) / "evals" / "sample_questions.yml"
    with env(**values, RAG_TEST_S3_KEY=KEY, RAG_TEST_S3_SECRET=SECRET):
        out = subprocess.run([sys.executable, "-m", "rag_assets", "eval", "--questions", str(questions), "--profile",
                              "default", "--json"], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        scores = json.loads(out.stdout)[0]
        assert scores["recall_at_5"] > 30 and "notes/office_wifi.txt" in scores["documents_not_found"]
        assert "handbook/employee_handbook.md" not in scores["documents_not_found"]
        defs = build_definitions(load_project())
        key = dg.AssetKey(["sample", "retrieval_eval"])
        with dg.instance_for_test() as instance:
            result = dg.materialize([defs.get_assets_def(key)], instance=instance, resources=defs.resources,
                                    selection=[key])
        assert result.success
        metadata = result.asset_materializations_for_node("sample__retrieval_eval")[0].metadata
        assert metadata["recall_at_5"].value == scores["recall_at_5"]
