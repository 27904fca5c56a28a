"""`rag restore`: list a corpus table's versions, restore one (never while `rag ingest` writes the
corpus), clean errors for a bad version."""

import json

import lancedb

from rag_assets.cli import main
from rag_assets.config import load_project
from rag_assets.core.index import LanceIndex, mark_active
from rag_assets.core.locking import ingest_lock
from tests.conftest import env, make_project
from tests.core.test_index_restore import embedded


def test_rag_restore_lists_versions_and_brings_deleted_rows_back(tmp_path, capsys):
    with env(**make_project(tmp_path)):
        corpus = load_project().corpus("sample")
        model = corpus.embedding_model
        index = LanceIndex(lancedb.connect(corpus.index_uri), corpus.name, model.name, model.dimensions,
                           corpus.chunking_profile.name)
        index.write_documents([embedded("a.md", 2, model.dimensions), embedded("b.md", 1, model.dimensions)],
                              None, "run")
        good = index.version()
        index.delete_document("a.md")
        index.delete_document("b.md")
        capsys.readouterr()
        assert main(["restore", "--corpus", "sample", "--json"]) == 0
        listed = json.loads(capsys.readouterr().out)
        assert {"version": good, "rows": 3} == {k: v for k, v in listed[good - 1].items() if k != "timestamp"}
        assert listed[-1]["rows"] == 0
        with ingest_lock(corpus.lock_dir, corpus.name):  # a `rag ingest` writing the corpus
            assert main(["restore", "--corpus", "sample", "--as-of", str(good), "--json"]) == 1
        assert "is being ingested by process" in capsys.readouterr().err and index.count_rows() == 0
        assert main(["restore", "--corpus", "sample", "--as-of", str(good), "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert (out["restored"], out["rows"], out["documents"]) == (good, 3, 2)
        assert index.count_rows() == 3
        assert main(["restore", "--corpus", "sample", "--as-of", "999"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("rag: table sample__all_minilm_l6_v2__default has no version 999") and err.count("\n") == 1


def test_rag_restore_acts_on_the_table_queries_use_during_a_switch(tmp_path, capsys):
    """While the configured profile's table is not complete, queries (and so `rag restore`) use
    the last complete one: restoring must bring that table's rows back, not the new table's."""
    with env(**make_project(tmp_path)):
        corpus = load_project().corpus("sample")
        model = corpus.embedding_model
        db = lancedb.connect(corpus.index_uri)
        live = LanceIndex(db, corpus.name, model.name, model.dimensions, "recursive")
        live.write_documents([embedded("a.md", 2, model.dimensions)], None, "run")
        mark_active(live, corpus.name, model.name, "recursive", documents=1)
        good = live.version()
        live.delete_document("a.md")
        configured = LanceIndex(db, corpus.name, model.name, model.dimensions, corpus.chunking_profile.name)
        configured.write_documents([embedded("b.md", 1, model.dimensions)], None, "run")
        capsys.readouterr()
        assert main(["restore", "--corpus", "sample", "--as-of", str(good), "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert (out["table"], out["rows"]) == (live.name, 2)
        assert live.count_rows() == 2 and configured.count_rows() == 1
