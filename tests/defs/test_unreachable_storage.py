"""An S3 index or stage store whose endpoint never answers fails a run within the limits its config
declares (connect_timeout_seconds, read_timeout_seconds, max_attempts), with a message that names
the location and the fix, and leaves what is already indexed alone."""

import time
from pathlib import Path

import lancedb
import pytest

from rag_assets.cli import main
from rag_assets.clients import connect_index
from rag_assets.config import load_project
from rag_assets.core.index import table_name
from rag_assets.core.lance_connect import IndexUnavailable
from rag_assets.core.store import StoreUnavailable
from rag_assets.ingest import ingest_project
from tests.conftest import edit_yaml, env, make_project
from tests.support.seaweed import black_hole

pytestmark = pytest.mark.slow

KEY, SECRET = "rag-unreachable-key", "rag-unreachable-secret"
LIMITS = {"connect_timeout_seconds": 1, "read_timeout_seconds": 1, "max_attempts": 1}


def test_an_index_on_s3_that_never_answers_fails_ingest_and_query_within_its_limits(tmp_path):
    values = make_project(tmp_path / "p")
    # The object store's own defaults (30 s a request, 10 retries over up to 3 minutes each) held
    # this ingest for over 10 minutes.
    edit_yaml(Path(values["RAG_PROJECT_DIR"]) / "profiles" / "indexes.yml",
              lambda d: d["indexes"][0].update(LIMITS, access_key_env="RAG_INDEX_KEY", secret_key_env="RAG_INDEX_SECRET"))
    with black_hole() as hole, env(**{**values, "RAG_LANCEDB_URI": "s3://index/db"},
                                   RAG_LANCEDB_ENDPOINT=hole, RAG_INDEX_KEY=KEY, RAG_INDEX_SECRET=SECRET):
        for attempt in (lambda: ingest_project(load_project()), lambda: connect_index(load_project().corpus("sample"))):
            started = time.monotonic()
            with pytest.raises(IndexUnavailable) as failed:
                attempt()
            assert time.monotonic() - started < 60
            message = str(failed.value)
            for expected in (f"LanceDB index s3://index/db at {hole}: cannot open it", "Timeout",
                             "profiles/indexes.yml", "read_timeout_seconds"):
                assert expected in message, (expected, message)
            assert KEY not in message and SECRET not in message


def test_a_stage_store_on_s3_that_never_answers_fails_the_run_within_its_limits_and_keeps_the_index(tmp_path, capsys):
    values = make_project(tmp_path / "p")
    with env(**values):
        corpus = load_project().corpus("sample")
        assert ingest_project(load_project())["rows_in_index"] > 0
    table = lancedb.connect(corpus.index_uri).open_table(
        table_name(corpus.name, corpus.embedding_model.name, corpus.chunking_profile.name))
    indexed = sorted(r["id"] for r in table.to_arrow().to_pylist())

    with black_hole() as hole:
        edit_yaml(Path(values["RAG_PROJECT_DIR"]) / "rag_project.yml", lambda d: d.update(data_dir_s3={
            "endpoint_url": hole, "region": "us-east-1", "access_key_env": "RAG_STAGES_KEY",
            "secret_key_env": "RAG_STAGES_SECRET", **LIMITS}))
        with env(**{**values, "RAG_DATA_DIR": "s3://stages/team-a"}, RAG_STAGES_KEY=KEY, RAG_STAGES_SECRET=SECRET):
            started = time.monotonic()
            with pytest.raises(StoreUnavailable) as failed:
                ingest_project(load_project())
            assert time.monotonic() - started < 60  # botocore's defaults: 60 s a read, retried
            capsys.readouterr()
            assert main(["gc"]) == 1  # collecting garbage removes nothing it cannot first list
            gc_error = capsys.readouterr().err
    assert "stage store s3://stages/team-a/stages at " in gc_error and "cannot list the folders in it" in gc_error
    assert "read_timeout_seconds" in gc_error and KEY not in gc_error and SECRET not in gc_error
    message = str(failed.value)
    for expected in (f"stage store s3://stages/team-a/stages/sample at {hole}: cannot read", "ReadTimeoutError",
                     "data_dir_s3", "rag_project.yml", "read_timeout_seconds"):
        assert expected in message, (expected, message)
    assert KEY not in message and SECRET not in message
    table.checkout_latest()
    assert sorted(r["id"] for r in table.to_arrow().to_pylist()) == indexed
