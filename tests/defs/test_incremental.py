"""What each change redoes, with the real pipeline: profile change, model change, failed re-ingest,
lineage and time travel."""

import json
import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import lancedb
import pytest

from rag_assets.config import load_project
from rag_assets.config.profiles import profile_from_config
from rag_assets.core.chunking import chunk_document
from rag_assets.core.hashing import text_hash
from rag_assets.core.index import table_name
from rag_assets.core.parsing import parse_document
from rag_assets.core.planning import ModelChangedInPlace
from rag_assets.core.sources import list_disk, read_disk
from rag_assets.core.tokens import get_token_counter
from rag_assets.defs.names import asset_key
from rag_assets.ingest import ingest_project, restore_table, status_project
from rag_assets.query import NotIngested, query_corpus, serving
from tests.conftest import edit_yaml, env, make_project

pytestmark = pytest.mark.slow
RAG = str(Path(sys.executable).parent / "rag")


def embed_texts(project) -> set[str]:
    """Embedded-text hashes of every document, chunked directly (independently of the pipeline)."""
    corpus = project.corpus("sample")
    model = corpus.embedding_model
    profile = profile_from_config(corpus.chunking_profile)
    counter = get_token_counter(model.tokenizer)
    out = set()
    for ref in list_disk(corpus.source_root, corpus.source.include, corpus.source.exclude):
        doc = parse_document(read_disk(corpus.source_root, ref.doc_id))
        out.update(text_hash(model.passage_prefix + c.embed_text)
                   for c in chunk_document(doc, profile, counter, model.max_input_tokens).chunks)
    return out


def rows(project):
    corpus = project.corpus("sample")
    db = lancedb.connect(corpus.index_uri)
    return db.open_table(table_name("sample", corpus.embedding_model.name, corpus.chunking_profile.name)).to_arrow().to_pylist()


def test_profile_change_reembeds_only_changed_chunks_and_model_change_never_reparses(tmp_path):
    values = make_project(tmp_path)
    cfg = Path(values["RAG_PROJECT_DIR"])
    with env(**values):
        first = ingest_project(load_project())
        before = embed_texts(load_project())
        assert first["chunks_embedded"] == len(before)

        edit_yaml(cfg / "profiles" / "chunking.yml",
                  lambda d: d["chunking_profiles"][0].update(max_tokens=160))
        after = embed_texts(load_project())
        changed = ingest_project(load_project())
        assert changed["documents_parsed"] == 0
        assert changed["chunks_embedded"] == len(after - before) < len(after)
        assert changed["embedding_cache_hits"] == len(after & before)
        assert changed["rows_in_index"] == len(rows(load_project()))

        def second_model(d):
            m = dict(d["embedding_models"][0], name="minilm_passage", passage_prefix="passage: ")
            d["embedding_models"].append(m)
        edit_yaml(cfg / "profiles" / "embedding_models.yml", second_model)
        edit_yaml(cfg / "rag_project.yml", lambda d: d["corpora"]["sample"].update({"+embedding_model": "minilm_passage"}))
        project = load_project()
        corpus = project.corpus("sample")
        # The new model's table does not exist yet: queries stay on the complete one.
        db = lancedb.connect(corpus.index_uri)
        assert serving(project, corpus, db).model.name == "all_minilm_l6_v2"
        assert query_corpus(project, corpus, "refund policy", k=1)
        switched = ingest_project(project)
        assert switched["documents_parsed"] == 0
        assert switched["chunks_embedded"] == len(after) == switched["rows_in_index"]
        assert serving(project, corpus, db).model.name == "minilm_passage"
        old = db.open_table(table_name("sample", "all_minilm_l6_v2", corpus.chunking_profile.name)).count_rows()
        assert old == changed["rows_in_index"]  # the old index is kept beside the new one

        # The same name with other settings would mix its vectors with the old ones: refused.
        edit_yaml(cfg / "profiles" / "embedding_models.yml",
                  lambda d: d["embedding_models"][-1].update(passage_prefix="doc: "))
        with pytest.raises(ModelChangedInPlace, match="give the changed entry a new name"):
            ingest_project(load_project())
        edit_yaml(cfg / "profiles" / "embedding_models.yml",  # so would another arithmetic
                  lambda d: d["embedding_models"][-1].update(passage_prefix="passage: ", compute="int8"))
        with pytest.raises(ModelChangedInPlace, match="compute"):
            ingest_project(load_project())
        assert db.open_table(table_name("sample", "minilm_passage", corpus.chunking_profile.name)).count_rows() \
            == switched["rows_in_index"]


def test_failed_reingest_keeps_the_last_good_rows_and_fails_the_check(tmp_path):
    values = make_project(tmp_path)
    docs = Path(values["RAG_SAMPLE_DOCS"])
    with env(**values):
        ingest_project(load_project())
        good = {r["id"] for r in rows(load_project()) if r["doc_id"] == "notes/office_wifi.txt"}
        (docs / "notes" / "office_wifi.txt").write_bytes(b"\x00\x01binary garbage\xff" * 100)
        report = ingest_project(load_project())
        assert [f["doc_id"] for f in report["failures"]] == ["notes/office_wifi.txt"]
        assert "binary" in report["failures"][0]["error"]
        assert {r["id"] for r in rows(load_project()) if r["doc_id"] == "notes/office_wifi.txt"} == good
        assert report["checks"]["sample.no_failed_documents"] is False
        assert report["checks"]["sample.index_rows_match_live_chunks"] is True
        # Unchanged broken bytes are not retried on every ingest; rag status keeps naming them.
        assert ingest_project(load_project())["documents_changed"] == 0
        failed = status_project(load_project())["corpora"]["sample"]["failed_documents"]
        assert [f["doc_id"] for f in failed] == ["notes/office_wifi.txt"] and "binary" in failed[0]["error"]


def test_a_failed_document_holds_a_profile_switch_and_status_names_it(tmp_path):
    """The new profile's table never gets a document whose re-ingest failed, so queries stay on the
    old table (which keeps its last good rows) until it is fixed; rag status and the table's
    metadata say which document holds the switch, and why."""
    values = make_project(tmp_path)
    docs = Path(values["RAG_SAMPLE_DOCS"])
    wifi = docs / "notes" / "office_wifi.txt"
    good = wifi.read_bytes()
    with env(**values):
        ingest_project(load_project())
        wifi.write_bytes(b"\x00\x01binary garbage\xff" * 100)
        edit_yaml(Path(values["RAG_PROJECT_DIR"]) / "rag_project.yml",
                  lambda d: d["corpora"]["sample"].update({"+chunking_profile": "recursive"}))
        project = load_project()
        corpus = project.corpus("sample")
        out = subprocess.run([RAG, "ingest"], capture_output=True, text=True, env={**os.environ, **values})
        assert out.returncode == 1 and "FAILED sample/notes/office_wifi.txt" in out.stderr
        assert "sample: queries stay on all_minilm_l6_v2 / default; all_minilm_l6_v2 / recursive is not live yet" \
            in out.stdout
        assert serving(project, corpus, lancedb.connect(corpus.index_uri)).profile.name == "default"
        pending = status_project(project)["corpora"]["sample"]["pending_switch"]
        assert pending["state"] == "incomplete" and pending["documents_missing"] == 1
        assert pending["missing_documents"][0]["doc_id"] == "notes/office_wifi.txt"
        assert "binary" in pending["missing_documents"][0]["error"] and "fix or delete" in pending["reason"]
        with dg.DagsterInstance.get() as instance:
            table = instance.get_latest_materialization_event(asset_key("sample", "lancedb_table"))
        meta = table.asset_materialization.metadata
        assert meta["complete"].value is False and meta["documents_missing"].value == 1
        out = subprocess.run([RAG, "status"], capture_output=True, text=True, env={**os.environ, **values}, check=True)
        assert "not live yet: it lacks 1 live document(s): 1 failed to ingest (notes/office_wifi.txt)" in out.stdout

        wifi.write_bytes(good)
        ingest_project(project)
        assert serving(project, corpus, lancedb.connect(corpus.index_uri)).profile.name == "recursive"
        assert status_project(project)["corpora"]["sample"]["pending_switch"] is None


def test_a_moved_source_gives_the_serving_table_its_new_addresses_during_an_incomplete_switch(tmp_path):
    """While queries stay on the old table, the documents' rows there took the old file:// path
    (the mirror wrote the chunks' address, not the source's)."""
    values = make_project(tmp_path)
    docs = Path(values["RAG_SAMPLE_DOCS"])
    with env(**values):
        ingest_project(load_project())
        (docs / "notes" / "office_wifi.txt").write_bytes(b"\x00\x01binary garbage\xff" * 100)  # holds the switch
        edit_yaml(Path(values["RAG_PROJECT_DIR"]) / "rag_project.yml",
                  lambda d: d["corpora"]["sample"].update({"+chunking_profile": "recursive"}))
        ingest_project(load_project())
    moved = tmp_path / "moved_docs"
    docs.rename(moved)
    with env(**{**values, "RAG_SAMPLE_DOCS": str(moved)}):
        project = load_project()
        corpus = project.corpus("sample")
        report = ingest_project(project)
        assert (report["documents_parsed"], report["chunks_embedded"]) == (0, 0)
        db = lancedb.connect(corpus.index_uri)
        live = serving(project, corpus, db)
        assert live.profile.name == "default"  # the switch is still held by the failing document
        served = db.open_table(live.index(db, corpus.name).name).to_arrow().to_pylist()
        assert {r["source_uri"].startswith(moved.as_uri() + "/") for r in served
                if r["doc_id"] != "notes/office_wifi.txt"} == {True}  # it failed: its last good rows stay


def test_a_table_switched_back_to_never_serves_an_older_version_of_a_failing_document(tmp_path):
    """recursive's table holds the Wi-Fi note as it was when recursive last served; the note was
    edited since (default's table has that), then broke: switching back to recursive is held, so
    queries keep the edited text rather than going back to the old one."""
    values = make_project(tmp_path)
    wifi = Path(values["RAG_SAMPLE_DOCS"]) / "notes" / "office_wifi.txt"
    project_yml = Path(values["RAG_PROJECT_DIR"]) / "rag_project.yml"

    def use(profile):
        edit_yaml(project_yml, lambda d: d["corpora"]["sample"].update({"+chunking_profile": profile}))
        return load_project()

    with env(**values):
        ingest_project(use("recursive"))
        ingest_project(use("default"))  # recursive's table stays as it was
        wifi.write_text(wifi.read_text().replace("NW-Guest", "NW-Visitors"))
        ingest_project(load_project())
        wifi.write_bytes(b"\x00\x01binary garbage\xff" * 100)
        ingest_project(load_project())  # fails; default's table keeps NW-Visitors
        project = use("recursive")
        report = ingest_project(project)
        corpus = project.corpus("sample")
        assert [f["doc_id"] for f in report["failures"]] == ["notes/office_wifi.txt"]
        assert serving(project, corpus, lancedb.connect(corpus.index_uri)).profile.name == "default"
        assert "NW-Visitors" in query_corpus(project, corpus, "guest Wi-Fi password", k=1)[0].text
        pending = status_project(project)["corpora"]["sample"]["pending_switch"]
        assert pending["state"] == "incomplete" and [d["doc_id"] for d in pending["missing_documents"]] == [
            "notes/office_wifi.txt"]


def test_removing_the_serving_profile_never_serves_an_older_table_holding_deleted_documents(tmp_path):
    """markdown served after recursive; the Wi-Fi note was deleted since (recursive's table still holds
    it). Switching back to recursive while removing markdown from chunking.yml leaves no declared
    table that is current: queries are refused (not answered from recursive's old rows) until the
    next ingest completes recursive's table, and markdown's is kept until then."""
    from rag_assets.cli import main

    values = make_project(tmp_path)
    cfg = Path(values["RAG_PROJECT_DIR"])

    def use(profile):
        edit_yaml(cfg / "rag_project.yml", lambda d: d["corpora"]["sample"].update({"+chunking_profile": profile}))
        return load_project()

    with env(**values):
        ingest_project(use("recursive"))
        ingest_project(use("markdown"))
        (Path(values["RAG_SAMPLE_DOCS"]) / "notes" / "office_wifi.txt").unlink()
        ingest_project(load_project())
        edit_yaml(cfg / "profiles" / "chunking.yml",
                  lambda d: d.update(chunking_profiles=[p for p in d["chunking_profiles"] if p["name"] != "markdown"]))
        project = use("recursive")
        corpus = project.corpus("sample")
        with pytest.raises(NotIngested, match="markdown.*no longer declared.*run rag ingest"):
            query_corpus(project, corpus, "guest Wi-Fi password", k=5)
        assert "no longer declared" in status_project(project)["corpora"]["sample"]["queries_refused"]
        assert main(["tables", "--drop-unused", "--json"]) == 0
        kept = table_name("sample", "all_minilm_l6_v2", "markdown")
        assert kept in set(lancedb.connect(corpus.index_uri).table_names())

        broken = Path(values["RAG_SAMPLE_DOCS"]) / "notes" / "broken.txt"
        broken.write_bytes(b"\x00\x01binary garbage\xff" * 100)
        held = ingest_project(project)  # recursive's table lacks a document: still no table to serve
        assert [f["doc_id"] for f in held["failures"]] == ["notes/broken.txt"]
        assert "no longer declared" in held["corpora"]["sample"]["queries_refused"]
        status = status_project(project)["corpora"]["sample"]  # no table serves; what the configured one lacks
        assert status["serving_table"] is None and status["configured_table"] == "all_minilm_l6_v2 / recursive"
        assert [d["doc_id"] for d in status["pending_switch"]["missing_documents"]] == ["notes/broken.txt"]
        with dg.DagsterInstance.get() as instance:  # the UI says so too
            event = instance.get_latest_materialization_event(asset_key("sample", "lancedb_table"))
        assert "no longer declared" in event.asset_materialization.metadata["queries_refused"].value
        assert event.asset_materialization.metadata["serving_profile"].value == "none"
        broken.unlink()
        report = ingest_project(project)
        assert report["corpora"]["sample"]["queries_refused"] is None and report["chunks_embedded"] == 0
        hits = query_corpus(project, corpus, "guest Wi-Fi password", k=5)
        assert hits and all(h.doc_id != "notes/office_wifi.txt" for h in hits)


def test_document_failing_on_its_first_ingest_fails_only_no_failed_documents(tmp_path):
    values = make_project(tmp_path)
    (Path(values["RAG_SAMPLE_DOCS"]) / "notes" / "scan.txt").write_bytes(b"\x00\x01binary garbage\xff" * 100)
    with env(**values):
        report = ingest_project(load_project())
    assert [f["doc_id"] for f in report["failures"]] == ["notes/scan.txt"]
    assert {name: passed for name, passed in report["checks"].items() if not passed} == {
        "sample.no_failed_documents": False}


def test_lineage_and_time_travel_from_the_command_line(tmp_path):
    values = make_project(tmp_path)
    environ = {**os.environ, **values}
    run = lambda *a: subprocess.run([RAG, *a], env=environ, capture_output=True, text=True, timeout=300)  # noqa: E731
    assert run("ingest").returncode == 0
    hit = json.loads(run("query", "guest Wi-Fi password", "--k", "1", "--json").stdout)[0]
    version_before = json.loads(run("lineage", hit["id"], "--json").stdout)["current_table_version"]
    wifi = Path(values["RAG_SAMPLE_DOCS"]) / "notes" / "office_wifi.txt"
    wifi.write_text(wifi.read_text().replace("NW-Guest", "NW-Visitors"))
    assert run("ingest").returncode == 0
    trace = json.loads(run("lineage", hit["id"], "--json").stdout) if run("lineage", hit["id"]).returncode == 0 else None
    assert trace is None  # the old row left the index with its document's old version
    new_hit = json.loads(run("query", "guest Wi-Fi password", "--k", "1", "--json").stdout)[0]
    assert "NW-Visitors" in new_hit["text"]
    new_trace = json.loads(run("lineage", new_hit["id"], "--json").stdout)
    for key in ("source_uri", "source_version", "content_hash", "chunk_profile", "embedding_model", "run_id",
                "table_version"):
        assert new_trace[key] is not None, key
    assert (new_trace["content_type"], new_trace["ocr"]) == ("text", False)
    scan = json.loads(run("query", "fire alarm assembly point", "--k", "1", "--json").stdout)[0]
    assert scan["doc_id"] == "handbook/fire_safety_notice_scan.pdf"
    assert {k: v for k, v in json.loads(run("lineage", scan["id"], "--json").stdout).items()
            if k in ("content_type", "ocr")} == {"content_type": "pdf", "ocr": True}  # an audit finds OCR'd rows
    old = json.loads(run("query", "guest Wi-Fi password", "--k", "1", "--json", "--as-of", str(version_before)).stdout)
    assert "NW-Guest" in old[0]["text"]


def _table_checks(project, instance) -> dict:
    """The lancedb_table asset's data tests, run as the UI runs them: check name -> evaluation."""
    from rag_assets.defs.factory import build_definitions

    defs = build_definitions(project)
    key = dg.AssetKey(["sample", "lancedb_table"])
    checks = [c for c in defs.asset_checks if any(k.asset_key == key for k in c.check_keys)]
    result = dg.materialize([defs.get_assets_def(key), *checks], instance=instance, resources=defs.resources,
                            selection=dg.AssetSelection.assets(key) | dg.AssetSelection.checks_for_assets(key))
    return {e.check_name: e for e in result.get_asset_check_evaluations()}


def _ingested(project):
    """Ingest ``project``; its sample corpus and the table its queries use."""
    ingest_project(project)
    corpus = project.corpus("sample")
    db = lancedb.connect(corpus.index_uri)
    return corpus, serving(project, corpus, db).index(db, corpus.name)


def test_status_says_queries_have_no_table_before_the_first_ingest_and_after_the_table_is_lost(tmp_path):
    import shutil

    values = make_project(tmp_path)
    values["RAG_LANCEDB_URI"] = "../lancedb"  # as declared: relative to dbt_like_configs/
    with env(**values):
        project = load_project()
        before = status_project(project)["corpora"]["sample"]
        assert before["serving_table"] is None and "holds no rows (nothing ingested yet" in before["queries_refused"]
        assert f"its LanceDB folder {tmp_path / 'lancedb'} was" in before["queries_refused"]  # where it is
        assert before["pending_switch"] is None  # nothing to switch to yet (it read "complete")
        corpus, index = _ingested(project)
        assert status_project(project)["corpora"]["sample"]["queries_refused"] is None
        shutil.rmtree(corpus.index_uri)  # a LanceDB folder deleted or moved away
        lost = status_project(project)["corpora"]["sample"]
        assert lost["serving_table"] is None and "was deleted, moved or emptied" in lost["queries_refused"]
        with dg.DagsterInstance.get() as instance:  # a maintenance run meanwhile, as the UI launches it
            assert _table_checks(project, instance)["index_rows_match_live_chunks"].passed is False
            table = instance.get_latest_materialization_event(dg.AssetKey(["sample", "lancedb_table"]))
            assert "holds no rows" in table.asset_materialization.metadata["queries_refused"].value
        emptied = status_project(project)["corpora"]["sample"]
        assert emptied["serving_table"] is None and "holds no rows" in emptied["queries_refused"]
        ingest_project(project)
        assert status_project(project)["corpora"]["sample"]["queries_refused"] is None
        for path in Path(values["RAG_SAMPLE_DOCS"]).rglob("*.*"):  # every document removed from the source
            path.unlink()
        report = ingest_project(load_project(), allow_mass_delete=True)
        said = report["corpora"]["sample"]["queries_refused"]
        assert "its source listed none at the last ingest" in said
        assert status_project(load_project())["corpora"]["sample"]["queries_refused"] == said
        with pytest.raises(NotIngested, match="its source listed none"):
            query_corpus(load_project(), load_project().corpus("sample"), "vacation")


def test_a_document_the_store_indexed_but_the_table_lost_fails_the_row_check(tmp_path):
    values = make_project(tmp_path)
    with env(**values), dg.DagsterInstance.get() as instance:
        project = load_project()
        corpus, index = _ingested(project)
        index.delete_document("notes/office_wifi.txt")  # as a restore to an older version can do
        verdicts = _table_checks(project, instance)
        assert verdicts["index_rows_match_live_chunks"].passed is False
        assert "notes/office_wifi.txt" in verdicts["index_rows_match_live_chunks"].metadata["examples"].value
        assert verdicts["no_rows_of_deleted_documents"].passed is True


def test_an_edit_undone_by_a_restore_is_redone_by_the_next_ingest_and_fails_the_row_check_meanwhile(tmp_path):
    values = make_project(tmp_path)
    wifi = Path(values["RAG_SAMPLE_DOCS"]) / "notes" / "office_wifi.txt"
    with env(**values), dg.DagsterInstance.get() as instance:
        project = load_project()
        corpus, index = _ingested(project)
        before = index.version()
        wifi.write_text(wifi.read_text().replace("NW-Guest", "NW-Visitors"))
        ingest_project(project)
        # `rag restore --as-of`: the table holds the file's old text again, and the data tests it runs in
        # Dagster say so (before, the check kept its last result, passed, until the next ingest).
        _, _, checks = restore_table(project, corpus, before)
        assert "NW-Guest" in query_corpus(project, corpus, "guest Wi-Fi password", k=1)[0].text
        assert checks == {**dict.fromkeys(corpus.data_tests, True), "index_rows_match_live_chunks": False}
        run = instance.get_runs(dg.RunsFilter(tags={"rag/launched_by": "rag restore"}))[0]
        record = instance.event_log_storage.get_latest_asset_check_execution_by_key(
            [dg.AssetCheckKey(dg.AssetKey(["sample", "lancedb_table"]), "index_rows_match_live_chunks")])
        evaluation = next(iter(record.values())).event.dagster_event.event_specific_data
        assert (next(iter(record.values())).run_id, evaluation.passed) == (run.run_id, False)
        assert evaluation.metadata["examples"].value == "notes/office_wifi.txt"
        planned = ingest_project(project, dry_run=True)["corpora"]["sample"]["documents"]
        assert [(d["doc_id"], d["reason"]) for d in planned] == [  # the file still says NW-Visitors
            ("notes/office_wifi.txt", "its rows in the index are missing or of an older version (lost or restored)")]
        report = ingest_project(project)  # its rows are written again from the stored chunks and vectors
        assert (report["documents_changed"], report["documents_parsed"], report["chunks_embedded"]) == (1, 0, 0)
        assert all(report["checks"].values())
        assert "NW-Visitors" in query_corpus(project, corpus, "guest Wi-Fi password", k=1)[0].text
        assert ingest_project(project)["documents_changed"] == 0  # and then nothing is left to do


def test_rows_of_a_profile_edited_since_a_restored_version_are_redone_and_fail_the_row_check_meanwhile(tmp_path):
    """A profile edited in place keeps its table's name: restoring a version from before the edit
    brings back rows chunked the old way, which the next ingest rewrites (it took them as current:
    their content was)."""
    values = make_project(tmp_path)
    cfg = Path(values["RAG_PROJECT_DIR"])
    with env(**values), dg.DagsterInstance.get() as instance:
        corpus, index = _ingested(load_project())
        before = index.version()
        old = {r["profile_hash"] for r in rows(load_project())}
        edit_yaml(cfg / "profiles" / "chunking.yml",
                  lambda d: d["chunking_profiles"][0].update({"max_tokens": 128, "overlap": 16}))
        project = load_project()
        ingest_project(project)
        new = {r["profile_hash"] for r in rows(project)}
        assert new != old and len(new) == 1
        index.restore(before)
        assert {r["profile_hash"] for r in rows(project)} == old
        verdicts = _table_checks(project, instance)
        assert verdicts["index_rows_match_live_chunks"].passed is False
        report = ingest_project(project)  # rewritten from the stored chunks and vectors
        assert (report["documents_parsed"], report["chunks_embedded"]) == (0, 0) and report["documents_changed"] > 0
        assert all(report["checks"].values())
        assert {r["profile_hash"] for r in rows(project)} == new
        assert ingest_project(project)["documents_changed"] == 0


def test_a_moved_source_folder_gives_every_row_its_new_address_without_parsing_or_embedding(tmp_path):
    """The same bytes at a new address (the folder moved, or the project cloned with its data):
    rows and citations took the old file:// path for good."""
    values = make_project(tmp_path)
    with env(**values):
        ingest_project(load_project())
        moved = tmp_path / "moved_docs"
        Path(values["RAG_SAMPLE_DOCS"]).rename(moved)
    with env(**{**values, "RAG_SAMPLE_DOCS": str(moved)}):
        project = load_project()
        planned = ingest_project(project, dry_run=True)["corpora"]["sample"]["documents"]
        assert {d["reason"] for d in planned} == {"moved: the same bytes at a new address, which its rows take"}
        report = ingest_project(project)
        assert (report["documents_parsed"], report["chunks_embedded"], report["documents_failed"]) == (0, 0, 0)
        assert {r["source_uri"].startswith(moved.as_uri() + "/") for r in rows(project)} == {True}
        hit = query_corpus(project, project.corpus("sample"), "guest Wi-Fi password", k=1)[0]
        assert hit.source == (moved / hit.doc_id).as_uri()
        assert ingest_project(project)["documents_changed"] == 0
        stages = status_project(project)["corpora"]["sample"]["stages"]
        assert all(s["stale"] == s["missing"] == 0 for s in stages.values())


def test_rows_labelled_for_another_tenant_in_a_restored_version_are_relabelled(tmp_path):
    """Restoring a version from before the source's tenant changed brought back rows that the old
    tenant could query and the configured one could not, with every data test passing."""
    values = make_project(tmp_path)
    cfg = Path(values["RAG_PROJECT_DIR"])
    edit_yaml(cfg / "sources.yml", lambda d: d["sources"][0].update({"tenant": "acme"}))
    with env(**values), dg.DagsterInstance.get() as instance:
        corpus, index = _ingested(load_project())
        before = index.version()
        edit_yaml(cfg / "sources.yml", lambda d: d["sources"][0].update({"tenant": "globex"}))
        project = load_project()
        report = ingest_project(project)
        assert report["chunks_embedded"] == 0 and {r["tenant"] for r in rows(project)} == {"globex"}
        index.restore(before)
        assert {r["tenant"] for r in rows(project)} == {"acme"}
        assert _table_checks(project, instance)["index_rows_match_live_chunks"].passed is False
        report = ingest_project(project)  # relabelled: nothing parsed or embedded
        assert (report["documents_parsed"], report["chunks_embedded"]) == (0, 0) and report["documents_changed"] == 12
        assert all(report["checks"].values()) and {r["tenant"] for r in rows(project)} == {"globex"}
        assert ingest_project(project)["documents_changed"] == 0


@pytest.fixture()
def fresh_parser_version():
    from rag_assets.core.parsing import parse

    yield
    parse.parser_version.cache_clear()  # after monkeypatch restored the revision (fixtures end last-in first-out)


def test_a_new_parser_revision_is_redone_by_the_next_ingest_as_dagster_marks_it(tmp_path, fresh_parser_version,
                                                                                 monkeypatch):
    from rag_assets.core.parsing import parse

    values = make_project(tmp_path)
    with env(**values):
        first = ingest_project(load_project())
        monkeypatch.setattr(parse, "PARSER_REVISION", parse.PARSER_REVISION + "-next")
        parse.parser_version.cache_clear()  # read once per process: as a new process reads it
        stages = status_project(load_project())["corpora"]["sample"]["stages"]
        assert stages["parsed_documents"]["stale"] == first["documents_seen"]
        again = ingest_project(load_project())
        assert again["documents_parsed"] == first["documents_seen"] and again["chunks_embedded"] == 0
        stages = status_project(load_project())["corpora"]["sample"]["stages"]
        assert all(s["stale"] == 0 for s in stages.values()), stages


def test_a_format_s_new_revision_re_parses_only_that_format_s_documents(tmp_path, monkeypatch):
    from rag_assets.core.parsing import parse

    values = make_project(tmp_path)
    with env(**values):
        first = ingest_project(load_project())
        monkeypatch.setitem(parse.FORMAT_REVISIONS, "markdown", parse.FORMAT_REVISIONS["markdown"] + "-next")
        stages = status_project(load_project())["corpora"]["sample"]["stages"]
        assert stages["parsed_documents"]["stale"] == first["documents_seen"]  # one code version per stage
        again = ingest_project(load_project())
        source = load_project().corpus("sample")
        markdown = [ref.doc_id for ref in list_disk(source.source_root, source.source.include, source.source.exclude)
                    if parse.content_type_for(ref.doc_id) == "markdown"]
        assert again["documents_parsed"] == len(markdown) >= 3 and again["chunks_embedded"] == 0
        with dg.DagsterInstance.get() as instance:  # a reused parse shows what it holds, as a computed one does
            records = instance.fetch_materializations(dg.AssetRecordsFilter(
                asset_key("sample", "parsed_documents"), asset_partitions=["notes/office_wifi.txt"]), limit=1).records
            shown = records[0].event_log_entry.asset_materialization
            assert shown.metadata["status"].value == "reused" and shown.metadata["title"].value
            assert {"content_type", "chars", "elements"} <= shown.metadata.keys()
        stages = status_project(load_project())["corpora"]["sample"]["stages"]
        assert all(s["stale"] == 0 for s in stages.values()), stages


def test_new_ocr_languages_re_parse_only_the_formats_ocr_reads_as_dagster_marks_them(tmp_path):
    from rag_assets.core.parsing.formats import content_type_for
    from rag_assets.core.parsing.parse import OCR_FORMATS
    from tests.support.make_sample_binaries import GERMAN_PAGES, scanned, write_pdf

    values = make_project(tmp_path)
    scan = Path(values["RAG_SAMPLE_DOCS"]) / "handbook" / "brandschutz_scan.pdf"
    write_pdf(scan, GERMAN_PAGES, latin1=True)
    scan.write_bytes(scanned(scan.read_bytes()))
    with env(**values):
        first = ingest_project(load_project())
        german = [r["text"] for r in rows(load_project()) if r["doc_id"] == "handbook/brandschutz_scan.pdf"]
        assert german and "Räume geräumt" not in " ".join(german)  # English reads "Raume geraumt"
        edit_yaml(Path(values["RAG_PROJECT_DIR"]) / "sources.yml",
                  lambda d: d["sources"][0].update(ocr_languages="deu+eng"))
        stages = status_project(load_project())["corpora"]["sample"]["stages"]
        assert stages["parsed_documents"]["stale"] == first["documents_seen"] == 13
        again = ingest_project(load_project())
        source = load_project().corpus("sample")
        readable = [ref.doc_id for ref in list_disk(source.source_root, source.source.include, source.source.exclude)
                    if content_type_for(ref.doc_id) in OCR_FORMATS]
        # the PDFs and the Word document are parsed again; Markdown, text, code, CSV and HTML are not
        assert again["documents_parsed"] == len(readable) == 4
        assert again["chunks_embedded"] < first["chunks_embedded"]
        german = [r["text"] for r in rows(load_project()) if r["doc_id"] == "handbook/brandschutz_scan.pdf"]
        assert "Räume geräumt" in " ".join(german)
        stages = status_project(load_project())["corpora"]["sample"]["stages"]
        assert all(s["stale"] == 0 for s in stages.values()), stages
