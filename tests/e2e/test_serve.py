"""`rag serve` as an application uses it: a real server process on 127.0.0.1 answering the same
results as `rag query --json`, with errors an application can act on, a token where one is set,
the config followed as it changes, and Ctrl-C stopping it."""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from rag_assets.config import load_project
from rag_assets.serve import WatchedProject
from tests.conftest import edit_yaml, make_project
from tests.support.robustness import project_over
from tests.support.seaweed import free_ports

pytestmark = [pytest.mark.slow, pytest.mark.e2e]
RAG = str(Path(sys.executable).parent / "rag")


@contextmanager
def served(values: dict, *args: str, env: dict | None = None):
    """The base URL of a `rag serve` started with ``args``, once /health answers; stopped with SIGINT."""
    (port,) = free_ports(1)
    process = subprocess.Popen([RAG, "serve", "--port", str(port), *args], env={**os.environ, **values, **(env or {})},
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(f"{base}/health", timeout=5)
                break
            except urllib.error.HTTPError:  # 401: up, but wants a token
                break
            except OSError:
                assert process.poll() is None, process.stdout.read()
                time.sleep(0.1)
        yield base, process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            process.wait(timeout=30)


def post(base: str, body, token: str | None = None) -> tuple[int, dict]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(f"{base}/query", data, {"Content-Type": "application/json",
                                                             **({"Authorization": f"Bearer {token}"} if token else {})})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_the_server_answers_what_rag_query_answers_and_names_each_mistake(ingested_sample):
    values, _ = ingested_sample
    question = "how many days does a refund take?"
    cli = json.loads(subprocess.run([RAG, "query", question, "--json", "--k", "3"], env={**os.environ, **values},
                                    capture_output=True, text=True, timeout=300, check=True).stdout)
    with served(values) as (base, process):
        status, answer = post(base, {"query": question, "k": 3})
        assert status == 200 and answer["corpus"] == "sample"
        assert [(r["id"], r["start"], r["end"], r["text"]) for r in answer["results"]] == [
            (r["id"], r["start"], r["end"], r["text"]) for r in cli]
        filtered = post(base, {"query": question, "filters": {"content_type": "pdf"}})[1]["results"]
        assert filtered and {r["doc_id"].rsplit(".", 1)[1] for r in filtered} == {"pdf"}

        for body, code, error in [
            ({"k": 3}, 400, '"query" is required'),
            ({"query": question, "k": "3"}, 400, "'k' must be an integer"),
            ({"query": question, "k": True}, 400, "'k' must be an integer"),
            ({"query": question, "k": 0}, 400, "ask for 1 to"),
            ({"query": question, "corpus": "nope"}, 404, "no corpus 'nope': use one of sample"),
            ({"query": question, "filters": {"colour": "red"}}, 400, "unknown filter 'colour'"),
            ({"query": question, "filters": {"content_type": "pdff"}}, 400, "no content type 'pdff'"),
            ({"query": question, "tenant": "acme"}, 400, "declares no tenants"),
            ({"query": question, "mode": "semantic"}, 400, "'mode' is one of hybrid, vector, fts"),
            ({"query": question, "limit": 3}, 400, "unknown field 'limit'"),
            ([question], 400, "send a JSON object"),
            (b"{not json", 400, "not JSON"),
        ]:
            status, answer = post(base, body)
            assert (status, error in answer.get("error", "")) == (code, True), (body, status, answer)
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0


def test_a_token_is_required_where_set_and_beyond_this_machine(ingested_sample, tmp_path):
    values, _ = ingested_sample
    refused = subprocess.run([RAG, "serve", "--host", "0.0.0.0", "--port", "1"], env={**os.environ, **values},
                             capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "add --token-env NAME" in refused.stderr
    unset = subprocess.run([RAG, "serve", "--token-env", "RAG_TEST_NO_SUCH_TOKEN"], env={**os.environ, **values},
                           capture_output=True, text=True, timeout=120)
    assert unset.returncode == 2 and "RAG_TEST_NO_SUCH_TOKEN is not set" in unset.stderr
    with served(values, "--token-env", "RAG_TEST_SERVE_TOKEN", "--allow-origin", "https://chat.example.com",
                env={"RAG_TEST_SERVE_TOKEN": "t0ken-42"}) as (base, _):
        # A browser page of the allowed origin may send the token (CORS preflight); another origin may not.
        chat = "https://chat.example.com"
        for origin, allowed in ((chat, chat), ("https://evil.example", None)):
            preflight = urllib.request.Request(f"{base}/query", method="OPTIONS", headers={
                "Origin": origin, "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type"})
            try:
                with urllib.request.urlopen(preflight, timeout=10) as answer:
                    headers = answer.headers
            except urllib.error.HTTPError as refused:
                headers = refused.headers
            assert headers.get("Access-Control-Allow-Origin") == allowed, origin
        assert post(base, {"query": "refund"})[0] == 401
        assert post(base, {"query": "refund"}, token="wrong")[0] == 401
        status, answer = post(base, {"query": "refund"}, token="t0ken-42")
        assert status == 200 and answer["results"]


def test_the_config_is_followed_as_it_changes_and_a_broken_edit_keeps_the_last_good_one(tmp_path):
    values = make_project(tmp_path)
    root = Path(values["RAG_PROJECT_DIR"])
    os.environ.update(values)  # the config reads its paths from these, as the server's environment gives them
    try:
        watched = WatchedProject(root)
        assert [c.name for c in watched.current().corpora] == ["sample"]
        edit_yaml(root / "rag_project.yml", lambda d: d["corpora"].update(
            {"handbook": {**d["corpora"]["sample"], "+eval_questions": None}}))
        assert [c.name for c in watched.current().corpora] == ["sample", "handbook"] and watched.error is None
        edit_yaml(root / "profiles" / "chunking.yml", lambda d: d["chunking_profiles"][0].update({"max_tokens": "x"}))
        assert [c.name for c in watched.current().corpora] == ["sample", "handbook"]
        assert "chunking_profiles.0.max_tokens" in watched.error and "serving the config as it was" in watched.error
        edit_yaml(root / "profiles" / "chunking.yml", lambda d: d["chunking_profiles"][0].update({"max_tokens": 256}))
        assert watched.current() == load_project(root) and watched.error is None
    finally:
        for key in values:
            os.environ.pop(key, None)


def test_a_corpus_not_ingested_yet_answers_503_with_what_to_run(tmp_path):
    with served(make_project(tmp_path)) as (base, _):
        status, answer = post(base, {"query": "refund policy"})
        assert status == 503 and "run rag ingest" in answer["error"]
        health = json.loads(urllib.request.urlopen(f"{base}/health", timeout=10).read())
        assert health == {"status": "ok", "corpora": ["sample"], "config_error": None}


def test_a_tenants_token_queries_that_tenants_rows_alone(tmp_path):
    docs = tmp_path / "docs"
    for tenant, secret in (("acme", "ACME-7781 launch code is 4242"), ("globex", "GLOBEX-9911 launch code is 7777")):
        (docs / tenant).mkdir(parents=True)
        (docs / tenant / "plans.md").write_text(f"# Plans\n\nThe {secret}. Refunds take 45 days.\n")
    values = project_over(tmp_path / "p", docs, tenant_from_path=True)
    ingest = subprocess.run([RAG, "ingest"], env={**os.environ, **values}, capture_output=True, timeout=600)
    assert ingest.returncode == 0, ingest.stderr[-2000:]
    bad = subprocess.run([RAG, "serve", "--tenant-tokens-env", "RAG_TEST_TENANT_TOKENS"], capture_output=True,
                         text=True, timeout=120, env={**os.environ, **values, "RAG_TEST_TENANT_TOKENS": '["tok-a"]'})
    assert bad.returncode == 2 and 'must hold a JSON object {"<token>": "<tenant>", ...}' in bad.stderr
    tokens = {"RAG_TEST_TENANT_TOKENS": json.dumps({"tok-a": "acme", "tok-g": "globex"}),
              "RAG_TEST_SERVE_TOKEN": "admin-1"}
    with served(values, "--tenant-tokens-env", "RAG_TEST_TENANT_TOKENS", "--token-env", "RAG_TEST_SERVE_TOKEN",
                env=tokens) as (base, _):
        for token, tenant in (("tok-a", "acme"), ("tok-g", "globex")):
            status, answer = post(base, {"query": "launch code", "mode": "vector"}, token=token)
            assert status == 200 and {r["doc_id"] for r in answer["results"]} == {f"{tenant}/plans.md"}
            assert post(base, {"query": "launch code", "tenant": tenant}, token=token)[0] == 200
        status, answer = post(base, {"query": "launch code", "tenant": "globex"}, token="tok-a")
        assert status == 403 and answer["error"] == "this token queries tenant 'acme' only"
        # The any-tenant token must name one, as rag query must.
        status, answer = post(base, {"query": "launch code"}, token="admin-1")
        assert status == 400 and "has tenants" in answer["error"]
        status, answer = post(base, {"query": "launch code", "tenant": "globex", "mode": "fts"}, token="admin-1")
        assert status == 200 and {r["doc_id"] for r in answer["results"]} == {"globex/plans.md"}
        assert post(base, {"query": "launch code"}, token="tok-x")[0] == 401
