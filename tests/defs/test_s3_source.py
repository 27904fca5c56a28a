"""The S3 document source against a real SeaweedFS server: how keys under the source's prefix
map to document ids and back."""

import boto3
import pytest
from dagster_aws.s3 import S3Resource

from resources import S3SourceResource

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
                            prefix=prefix, **settings)


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
    real = S3Resource.get_client
    monkeypatch.setattr(S3Resource, "get_client", lambda self: built.append(1) or real(self))
    docs = source(s3_server, "many-reads", "docs/")
    refs = docs.list_documents()
    assert [docs.read(r.doc_id).data for r in refs][:1] == [b"# Note 0\n\nItem 0.\n"]
    # A client per read (a new boto3 session each) cost ~0.25 s a document: 1,050 objects took
    # 4.5 minutes to read, and a sensor tick over a few hundred new ones outlived Dagster's 60 s.
    assert len(refs) == 30 and len(built) == 1
