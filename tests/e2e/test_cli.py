"""The `rag` command as a user runs it: ingest twice, query with citations, helpful errors."""

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import make_project

pytestmark = [pytest.mark.slow, pytest.mark.e2e]
RAG = str(Path(sys.executable).parent / "rag")


def rag(args, values, check=True):
    out = subprocess.run([RAG, *args], env={**os.environ, **values}, capture_output=True, text=True, timeout=600)
    if check:
        assert out.returncode == 0, out.stderr[-3000:]
    return out


def test_ingest_twice_then_query_with_citations(tmp_path):
    values = make_project(tmp_path)
    (Path(values["RAG_SAMPLE_DOCS"]) / "notes" / "escape.md").write_text(
        "# Escape \x1b]0;pwned\x07codes\n\nThe escape code is ESCAPE-ONE. \x1b[2J\x1b[31mRED\x1b[0m done.\n")
    first = json.loads(rag(["ingest", "--json"], values).stdout)
    for key in ("documents_seen", "documents_changed", "chunks_embedded", "rows_in_index"):
        assert key in first
    assert first["chunks_embedded"] == first["rows_in_index"] > 0
    # Without --json: a table, one row per corpus.
    header, row = rag(["ingest"], values).stdout.splitlines()
    second = dict(zip(header.split(), row.split()))
    assert header.split()[:4] == ["corpus", "seen", "changed", "new"]
    assert second["corpus"] == "sample" and second["seen"] == str(first["documents_seen"])
    assert second["embedded"] == second["changed"] == "0"
    assert second["rows"] == str(first["rows_in_index"])

    hits = json.loads(rag(["query", "What does error E-217 mean?", "--k", "3", "--json"], values).stdout)
    assert len(hits) == 3
    for hit in hits:
        assert {"text", "doc_id", "source", "start", "end", "score"} <= hit.keys()
    top = hits[0]
    assert top["doc_id"] == "support/customer_faq.md"
    source_text = (Path(values["RAG_SAMPLE_DOCS"]) / top["doc_id"]).read_text()
    assert source_text[top["start"] : top["end"]] == top["text"]

    text = rag(["query", "parental leave weeks", "--k", "2"], values).stdout
    assert "[1]" in text and "Employee Handbook" in text and "chars " in text and "file://" in text
    # A document's terminal escape sequences are shown, never sent to the terminal.
    shown = rag(["query", "ESCAPE-ONE", "--k", "1", "--mode", "fts"], values).stdout
    assert "\x1b" not in shown and "\x07" not in shown
    assert "\\x1b[2J\\x1b[31mRED" in shown and "Escape \\x1b]0;pwned\\x07codes" in shown
    # A pasted paragraph longer than the model reads is refused as a query, not as a chunk.
    pasted = "how do I get a refund for my robot " * 40
    long = rag(["query", pasted, "--k", "1"], values, check=False)
    assert long.returncode == 2 and long.stderr.startswith("rag: the query is ") and "--mode fts" in long.stderr
    assert "chunk" not in long.stderr
    assert json.loads(rag(["query", pasted, "--k", "1", "--mode", "fts", "--json"], values).stdout)

    # Dagster's own records: the CLI's runs and partitions are in the shared instance.
    runs = list((Path(values["DAGSTER_HOME"]) / "storage").iterdir())
    assert runs


def test_bad_config_exits_2_naming_file_and_key(tmp_path):
    values = make_project(tmp_path)
    path = Path(values["RAG_PROJECT_DIR"]) / "profiles" / "chunking.yml"
    path.write_text(path.read_text().replace("max_tokens: 256", "max_tokens: 256\n    max_token: 5"))
    out = rag(["ingest"], values, check=False)
    assert out.returncode == 2
    assert "chunking.yml: chunking_profiles.0.max_token: unknown key. Fix:" in out.stderr


def test_failed_document_exits_1_names_it_and_the_rest_are_indexed(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("# Good\n\nThe refund window is 45 days.\n")
    (docs / "image.md").write_bytes(bytes(range(256)) * 4)
    (docs / "title\x1b]0;pwned\x07.md").write_bytes(bytes(range(256)) * 4)
    values = make_project(tmp_path / "project", docs)
    out = rag(["ingest"], values, check=False)
    assert out.returncode == 1
    assert "FAILED sample/image.md" in out.stderr and "binary" in out.stderr and "run `rag ingest` again" in out.stderr
    header, row = out.stdout.splitlines()
    assert dict(zip(header.split(), row.split()))["failed"] == "2"
    # A file name's escape sequence is shown, never sent to the terminal, wherever the name is printed.
    status = rag(["status"], values).stdout
    assert "FAILED sample/title\\x1b]0;pwned\\x07.md: " in out.stderr
    assert "sample: FAILED title\\x1b]0;pwned\\x07.md " in status
    assert not {"\x1b", "\x07"} & set(out.stderr + status)
    hits = json.loads(rag(["query", "refund window", "--json"], values).stdout)
    assert {h["doc_id"] for h in hits} == {"good.md"}


def test_unknown_corpus_exits_2_naming_the_declared_ones(tmp_path):
    out = rag(["ingest", "--corpus", "nope"], make_project(tmp_path), check=False)
    assert out.returncode == 2
    assert out.stderr.strip() == "rag: no corpus 'nope'; declared: ['sample']"


@pytest.mark.parametrize("command", ["", "ingest", "query", "chunk", "eval", "lineage", "restore", "tables", "gc", "serve"])
def test_help_shows_examples_and_exit_codes(command):
    out = subprocess.run([RAG, *command.split(), "--help"], capture_output=True, text=True, check=True)
    assert "examples:\n" in out.stdout and f"rag {command}".strip() in out.stdout.split("examples:")[1]
    assert "exit codes:" in out.stdout and "130  interrupted" in out.stdout and "141  the reader" in out.stdout


def test_ingest_from_an_unreachable_s3_source_exits_1_with_the_cause_and_no_secret(tmp_path):
    from tests.support.seaweed import free_ports

    values = make_project(tmp_path)
    (port,) = free_ports(1)  # nothing listens there
    sources = Path(values["RAG_PROJECT_DIR"]) / "sources.yml"
    data = yaml.safe_load(sources.read_text())
    data["sources"].append({"name": "s3_docs", "kind": "s3", "bucket": "company-docs", "region": "us-east-1",
                            "endpoint_url": f"http://127.0.0.1:{port}", "access_key_env": "RAG_TEST_S3_KEY",
                            "secret_key_env": "RAG_TEST_S3_SECRET", "max_attempts": 1})
    sources.write_text(yaml.safe_dump(data))
    project_yml = Path(values["RAG_PROJECT_DIR"]) / "rag_project.yml"
    pdata = yaml.safe_load(project_yml.read_text())
    pdata["corpora"]["sample"]["+source"] = "s3_docs"
    project_yml.write_text(yaml.safe_dump(pdata))
    secret = "planted-secret-5f2e91"
    out = rag(["ingest"], {**values, "RAG_TEST_S3_KEY": "AKIATESTKEY", "RAG_TEST_S3_SECRET": secret}, check=False)
    assert out.returncode == 1, out.stderr[-3000:]
    assert "Traceback" not in out.stderr
    assert f"127.0.0.1:{port}" in out.stderr and "S3 source 's3_docs' (s3://company-docs/" in out.stderr
    assert "check the endpoint_url of source 's3_docs' in sources.yml" in out.stderr
    assert secret not in out.stderr + out.stdout


def test_every_command_takes_paths_relative_to_the_working_directory(tmp_path):
    values = make_project(tmp_path / "p")
    del values["RAG_PROJECT_DIR"]
    project = ["--project", os.path.join("p", "dbt_like_configs")]
    corpora = tmp_path / "corpora"
    corpora.mkdir()
    (corpora / "robots.md").write_text("The battery robot needs maintenance every 14 days. " * 5)
    with (tmp_path / "questions.csv").open("w", newline="") as f:
        csv.writer(f).writerows([["question", "references", "corpus_id"], [
            "How often does the robot need maintenance?",
            json.dumps([{"content": "maintenance", "start_index": 25, "end_index": 36}]), "robots"]])

    def run(*args):
        out = subprocess.run([RAG, *project, *args], env={**os.environ, **values}, cwd=tmp_path,
                             capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, (args, out.stderr[-3000:])
        return out.stdout

    assert json.loads(run("ingest", "--json"))["rows_in_index"] > 0
    run("observe", "--json")
    run("status", "--json")
    hit = json.loads(run("query", "What does error E-217 mean?", "--json"))[0]
    assert json.loads(run("lineage", hit["id"], "--json"))["doc_id"] == hit["doc_id"]
    run("restore", "--corpus", "sample", "--json")
    assert json.loads(run("eval", "--questions", "questions.csv", "--corpora", "corpora", "--profile",
                          "fixed_200_0", "--json"))[0]["n_questions"] == 1
    assert json.loads(run("chunk", os.path.join("corpora", "robots.md"), "--json"))
