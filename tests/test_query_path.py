"""The query path pays for no orchestrator: no Dagster, no boto3, no LanceDB REST client."""

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import make_project

UNWANTED = ("dagster", "dagster_aws", "boto3", "botocore", "lance_namespace_urllib3_client.api")


def test_query_imports_no_dagster_boto3_or_rest_client(tmp_path):
    # A whole query in a fresh interpreter, as `rag query` runs it (the corpus has no index yet,
    # so it is refused as not ingested, having opened LanceDB and built the query embedder).
    code = (
        "import json, sys\n"
        "from rag_assets.config import load_project\n"
        "from rag_assets.clients import open_embedder\n"
        "from rag_assets.query import NotIngested, query_corpus\n"
        "project = load_project()\n"
        "corpus = project.corpora[0]\n"
        "try:\n"
        "    query_corpus(project, corpus, 'refund policy', mode='vector')\n"
        "except NotIngested:\n"
        "    pass\n"
        "assert open_embedder(corpus.embedding_model) is open_embedder(corpus.embedding_model)\n"
        f"print(json.dumps([m for m in {UNWANTED!r} if m in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, **make_project(tmp_path)})
    assert out.returncode == 0, out.stderr[-4000:]
    assert json.loads(out.stdout) == []


def test_the_code_location_defers_the_rest_client_too(tmp_path):
    # `rag ingest`, the code server and each run worker import the ingest and evaluation modules:
    # an `import lancedb` among them loaded the REST client (0.9 s of a 3.4 s no-op ingest).
    code = ("import sys, tempfile\n"
            "import rag_assets.ingest, rag_assets.definitions\n"
            "from rag_assets.core.lance_connect import connect\n"
            "connect(tempfile.mkdtemp())\n"
            "print('lance_namespace_urllib3_client.api' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, **make_project(tmp_path)})
    assert out.returncode == 0, out.stderr[-4000:]
    assert out.stdout.split()[-1] == "False"


def test_rest_client_still_loads_when_used():
    # The REST client is deferred, not removed: a REST namespace user still finds every name.
    code = ("from rag_assets.core.lance_connect import connect\n"
            "import tempfile; connect(tempfile.mkdtemp())\n"
            "import lancedb.namespace, lance_namespace_urllib3_client as client\n"
            "print(client.ApiClient.__name__, client.TableApi.__name__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["ApiClient", "TableApi"]


def test_reads_of_a_corpus_never_ingested_create_nothing(tmp_path):
    # A query, the table listing and lineage only read: before any ingest they answer "nothing
    # yet" and leave the index folder as they found it (no empty table, registry or lock file).
    from rag_assets.clients import connect_index
    from rag_assets.config import load_project
    from rag_assets.query import NotIngested, lineage, query_corpus
    from rag_assets.tables import corpus_tables
    from tests.conftest import env

    values = make_project(tmp_path)
    with env(**values):
        project = load_project()
        corpus = project.corpus("sample")
        for mode in ("vector", "fts", "hybrid"):
            with pytest.raises(NotIngested):
                query_corpus(project, corpus, "refund policy", mode=mode)
        assert corpus_tables(project, corpus, connect_index(corpus)) == []
        assert lineage(project, "0" * 32) == []
    index = tmp_path / "lancedb"
    assert not index.exists() or not any(index.iterdir()), sorted(p.name for p in index.iterdir())
