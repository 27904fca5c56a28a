"""The `rag` command as a user runs it: ingest twice, query with citations, helpful errors."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

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
    first = json.loads(rag(["ingest", "--json"], values).stdout)
    for key in ("documents_seen", "documents_changed", "chunks_embedded", "rows_in_index"):
        assert key in first
    assert first["chunks_embedded"] == first["rows_in_index"] > 0
    second = json.loads(rag(["ingest", "--json"], values).stdout)
    assert second["chunks_embedded"] == 0 and second["documents_changed"] == 0
    assert second["rows_in_index"] == first["rows_in_index"]

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


def test_help_lists_examples():
    out = subprocess.run([RAG, "--help"], capture_output=True, text=True, check=True)
    assert "rag ingest --json" in out.stdout and "rag query" in out.stdout
