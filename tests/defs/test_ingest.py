"""Materialise the sample corpus through the real asset graph into a temporary LanceDB."""

import json
import shutil
from pathlib import Path

import dagster as dg
import lancedb
import pytest

from rag_assets.config import ConfigError, load_project
from rag_assets.config.profiles import profile_from_config
from rag_assets.cli import main as cli_main
from rag_assets.core.chunking import row_token_limit
from rag_assets.core.index import table_name
from rag_assets.core.keys import partition_key_for
from rag_assets.core.parsing import parse_document
from rag_assets.core.sources import SourceFolderMissing, read_disk
from rag_assets.core.tokens import get_token_counter
from rag_assets.ingest import ingest_project, observe_project, status_project
from rag_assets.instance import write_instance_config
from rag_assets.query import query_corpus
from tests.conftest import CONFIGS, SAMPLE_DOCS, edit_yaml, env, make_project

pytestmark = pytest.mark.slow


def rows(values):
    with env(**values):
        corpus = load_project().corpus("sample")
        table = lancedb.connect(corpus.index_uri).open_table(table_name("sample", corpus.embedding_model.name, corpus.chunking_profile.name))
        return corpus, table.to_arrow().to_pylist()


def test_rows_slice_the_parsed_text_exactly_and_respect_the_limit(ingested_sample):
    values, report = ingested_sample
    assert report["documents_failed"] == 0, report["failures"]
    assert report["documents_seen"] == report["documents_changed"] >= 10
    corpus, index_rows = rows(values)
    assert report["rows_in_index"] == len(index_rows) == report["chunks_embedded"]
    counter = get_token_counter(corpus.embedding_model.tokenizer)
    model = corpus.embedding_model
    limit = row_token_limit(profile_from_config(corpus.chunking_profile), model.tokenizer, model.max_input_tokens)
    parsed = {}
    for row in index_rows:
        if row["doc_id"] not in parsed:
            parsed[row["doc_id"]] = parse_document(read_disk(corpus.source_root, row["doc_id"]))
        doc = parsed[row["doc_id"]]
        assert doc.text[row["start"] : row["end"]] == row["text"]
        assert row["tokens"] <= limit
        assert counter.count(row["text"]) <= limit
        assert len(row["vector"]) == corpus.embedding_model.dimensions
        for key in ("content_hash", "chunk_profile", "profile_hash", "embedding_model", "run_id", "source_uri"):
            assert row[key], key
    assert len({r["id"] for r in index_rows}) == len(index_rows)
    assert len(parsed) == report["documents_seen"]
    # the rows of the scanned notice, and only those, hold text OCR read
    assert {r["doc_id"] for r in index_rows if r["ocr"]} == {"handbook/fire_safety_notice_scan.pdf"}
    assert all(r["ocr"] for r in index_rows if r["doc_id"] == "handbook/fire_safety_notice_scan.pdf")


@pytest.mark.parametrize(
    "question, expected_doc",
    [
        ("How many days of paid vacation do employees get?", "handbook/employee_handbook.md"),
        ("How long do I have to return a robot for a refund?", "support/customer_faq.md"),
        ("Is multi-factor authentication required for production access?", "support/security_policy.html"),
        ("How many charge cycles does the lithium-ion battery last?", "handbook/robot_maintenance_guide.pdf"),
        ("What is the per diem for a full travel day?", "handbook/travel_policy.docx"),
        ("What went wrong with the charging dock firmware rollout?", "engineering/incident review, march 2026.md"),
        ("Which guest Wi-Fi network should visitors use in the Munich office?", "notes/office_wifi.txt"),
        ("How do I reserve spare parts for a repair order?", "engineering/inventory_client.py"),
    ],
)
def test_known_questions_retrieve_the_right_document(ingested_sample, question, expected_doc):
    values, _ = ingested_sample
    with env(**values):
        corpus = load_project().corpus("sample")
        hits = query_corpus(load_project(), corpus, question, k=3)
    assert expected_doc in [h.doc_id for h in hits]
    top = hits[0]
    assert top.source.startswith("file://") and top.end > top.start
    assert not any(h.ocr or "OCR" in h.citation() for h in hits if h.doc_id == expected_doc)


def test_an_answer_from_a_scan_is_cited_as_read_by_ocr(ingested_sample):
    values, _ = ingested_sample
    with env(**values):
        hits = query_corpus(load_project(), load_project().corpus("sample"),
                            "Where do we gather after leaving the building in a fire alarm?", k=3)
    top = hits[0]
    assert top.doc_id == "handbook/fire_safety_notice_scan.pdf" and top.ocr
    assert "| p. 1 | " in top.citation() and "| read by OCR  (file://" in top.citation()


def test_second_ingest_embeds_nothing_and_edits_reembed_only_that_file(tmp_path):
    values = make_project(tmp_path)
    docs = Path(values["RAG_SAMPLE_DOCS"])
    with env(**values):
        project = load_project()
        first = ingest_project(project)
        assert first["chunks_embedded"] > 0
        second = ingest_project(project)
        assert second["documents_changed"] == 0
        assert second["documents_hashed"] == 0  # size and mtime unchanged: nothing is even read
        assert second["chunks_embedded"] == 0
        assert second["rows_in_index"] == first["rows_in_index"]

        corpus, before = rows(values)
        wifi = docs / "notes" / "office_wifi.txt"
        wifi.write_text(wifi.read_text() + "\nThe third floor has a quiet room for phone calls.\n")
        third = ingest_project(project)
        assert third["documents_changed"] == 1
        _, after = rows(values)
        wifi_chunks = [r for r in after if r["doc_id"] == "notes/office_wifi.txt"]
        assert third["chunks_embedded"] == len(wifi_chunks)
        assert any("quiet room" in r["text"] for r in wifi_chunks)
        untouched = {r["id"]: r["run_id"] for r in before if r["doc_id"] != "notes/office_wifi.txt"}
        assert {r["id"]: r["run_id"] for r in after if r["doc_id"] != "notes/office_wifi.txt"} == untouched

        # Touching a file without changing its bytes does not count as a change.
        faq = docs / "support" / "customer_faq.md"
        faq.write_bytes(faq.read_bytes())
        touched = ingest_project(project)
        assert touched["documents_hashed"] == 1 and touched["documents_changed"] == 0

        # A deleted document leaves the index and its partition is removed.
        shutil.rmtree(docs / "meetings")
        fourth = ingest_project(project)
        assert fourth["documents_deleted"] == 1
        _, final = rows(values)
        assert not [r for r in final if r["doc_id"].startswith("meetings/")]
        with dg.DagsterInstance.get() as instance:
            keys = instance.get_dynamic_partitions("sample_documents")
        assert partition_key_for("meetings/2026-04-02_standup_transcript.txt") not in keys
        assert partition_key_for("engineering/incident review, march 2026.md") in keys


def test_a_broken_document_fails_alone_and_keeps_nothing_half_written(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("# Good\n\nThe cafeteria opens at eight.\n")
    (docs / "fake.md").write_bytes(bytes(range(256)) * 10)
    values = make_project(tmp_path / "p", docs=docs)
    with env(**values):
        report = ingest_project(load_project())
    assert report["documents_failed"] == 1
    failure = report["failures"][0]
    assert failure["doc_id"] == "fake.md" and "binary" in failure["error"]
    _, index_rows = rows(values)
    assert {r["doc_id"] for r in index_rows} == {"good.md"}


def test_a_profile_sized_in_cl100k_tokens_passes_every_data_test_with_minilm(tmp_path):
    """fixed_200_0 counts 200 cl100k tokens, more than 200 MiniLM wordpieces: its rows are held
    to the model's input limit, and a fresh corpus passes all its data tests."""
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(SAMPLE_DOCS / "handbook" / "employee_handbook.md", docs)
    values = make_project(tmp_path, docs)
    project_yml = Path(values["RAG_PROJECT_DIR"]) / "rag_project.yml"
    project_yml.write_text(project_yml.read_text().replace("+chunking_profile: default", "+chunking_profile: fixed_200_0"))
    with env(**values):
        report = ingest_project(load_project())
    corpus, index_rows = rows(values)
    assert corpus.chunking_profile.name == "fixed_200_0"
    assert max(r["tokens"] for r in index_rows) > 200
    assert report["checks"] and all(report["checks"].values()), report["checks"]
    assert set(report["checks"]) == {f"sample.{test}" for test in corpus.data_tests}


def test_an_unset_secret_variable_is_named_with_its_file_and_key(tmp_path, monkeypatch):
    values = make_project(tmp_path)
    edit_yaml(Path(values["RAG_PROJECT_DIR"]) / "rag_project.yml",
              lambda d: d["corpora"]["sample"].update({"+embedding_model": "openai_text_embedding_3_small"}))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with env(**values), pytest.raises(ConfigError) as info:
        ingest_project(load_project())
    assert info.value.file.endswith("embedding_models.yml")
    assert info.value.key == "openai_text_embedding_3_small.api_key_env"
    assert "environment variable OPENAI_API_KEY is not set" in str(info.value)
    for command in (status_project, observe_project):  # the same line, not Dagster's "Error in config for resources"
        with env(**values), pytest.raises(ConfigError, match="environment variable OPENAI_API_KEY is not set"):
            command(load_project())
    monkeypatch.setenv("RAG_EXECUTOR", "celery")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.delenv("RAG_CELERY_BROKER", raising=False)
    with env(**values), pytest.raises(ConfigError) as info:
        ingest_project(load_project())
    assert (info.value.key, "environment variable RAG_CELERY_BROKER is not set" in str(info.value)) == (
        "executor.broker_env", True)


def test_a_project_moved_with_its_data_stays_current(tmp_path, monkeypatch):
    # Every path relative, as shipped: the documents, stage outputs and index move with the folder.
    for name in ("RAG_SAMPLE_DOCS", "RAG_LANCEDB_URI", "RAG_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    shutil.copytree(CONFIGS, old / "dbt_like_configs")
    shutil.copytree(SAMPLE_DOCS, old / "sample_docs")

    def located(root):
        return {"RAG_PROJECT_DIR": str(root / "dbt_like_configs"), "DAGSTER_HOME": str(root / ".dagster_home")}

    write_instance_config(old / ".dagster_home")
    with env(**located(old)):
        first = ingest_project(load_project())
    assert first["documents_new"] == 12 and first["rows_in_index"] > 0
    old.rename(new)
    with env(**located(new)):
        project = load_project()
        assert project.corpus("sample").index_uri.startswith(str(new))
        stages = status_project(project)["corpora"]["sample"]["stages"]
        assert {stage: (s["fresh"], s["stale"]) for stage, s in stages.items()} == {
            stage: (12, 0) for stage in stages}
        # Its rows cite the documents where they are now: rewritten, nothing parsed or embedded.
        planned = ingest_project(project, dry_run=True)["corpora"]["sample"]["documents"]
        assert {(d["reason"], tuple(d["stages"])) for d in planned} == {
            ("moved: the same bytes at a new address, which its rows take", ("lancedb_index",))}
        moved = ingest_project(project)
        assert (moved["documents_parsed"], moved["chunks_embedded"]) == (0, 0)
        again = ingest_project(project)
    assert (again["documents_changed"], again["chunks_embedded"]) == (0, 0)
    assert again["rows_in_index"] == first["rows_in_index"]


def test_an_ingest_lists_and_exits_1_for_a_document_still_failing_from_an_earlier_one(tmp_path, capsys):
    from rag_assets.cli import main

    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(SAMPLE_DOCS / "handbook" / "employee_handbook.md", docs)
    (docs / "bad.md").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    values = make_project(tmp_path, docs)
    with env(**values):
        first = ingest_project(load_project())
        again = ingest_project(load_project())  # nothing changed: the bad file is not tried again...
        assert [(f["doc_id"], f.get("earlier", False)) for f in first["failures"]] == [("bad.md", False)]
        assert [(f["doc_id"], f["earlier"]) for f in again["failures"]] == [("bad.md", True)]  # ...but still failed
        assert again["documents_failed"] == 1 and again["failures"][0]["error"] == first["failures"][0]["error"]
        capsys.readouterr()
        assert main(["ingest"]) == 1
        assert "FAILED sample/bad.md (unchanged since it failed in an earlier ingest): bad.md:" in capsys.readouterr().err
        (docs / "bad.md").unlink()
        assert main(["ingest"]) == 0  # gone: nothing fails


def test_status_names_deleted_documents_whose_rows_a_sweep_left_for_maintenance(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("employee_handbook.md", "travel_policy.docx"):
        shutil.copy(SAMPLE_DOCS / "handbook" / name, docs)
    values = make_project(tmp_path, docs)
    with env(**values):
        assert cli_main(["status"]) == 0
        assert "sample: no documents recorded yet: run rag ingest" in capsys.readouterr().out
        ingest_project(load_project())
        (docs / "travel_policy.docx").unlink()
        assert observe_project(load_project())["corpora"]["sample"]["documents_deleted"] == 1  # `rag observe`
        report = status_project(load_project())["corpora"]["sample"]
        assert report["deleted_documents_with_rows"] == ["travel_policy.docx"]  # rows still served: said so
        assert report["stages"]["lancedb_index"]["fresh"] == 1
        ingest_project(load_project())
        assert status_project(load_project())["corpora"]["sample"]["deleted_documents_with_rows"] == []
    # Another Dagster instance (a new DAGSTER_HOME) over the same index: its documents are not deleted.
    with env(**{**values, "DAGSTER_HOME": str(tmp_path / "another_home")}):
        (tmp_path / "another_home").mkdir()
        assert cli_main(["status"]) == 0
        out = capsys.readouterr().out
        assert "deleted" not in out and "has no partition of the corpus: `rag ingest` records" in out


def test_a_corpus_whose_sweep_is_stopped_stops_only_itself(tmp_path, capsys):
    """A missing source folder (or a refused mass delete) in one corpus left every corpus declared
    after it unindexed: the others are ingested, then its error is raised."""
    import yaml

    values = make_project(tmp_path)
    cfg = Path(values["RAG_PROJECT_DIR"])
    sources = yaml.safe_load((cfg / "sources.yml").read_text())
    sources["sources"].append({**sources["sources"][0], "name": "team_docs", "path": str(tmp_path / "moved_away")})
    (cfg / "sources.yml").write_text(yaml.safe_dump(sources))
    project_yml = yaml.safe_load((cfg / "rag_project.yml").read_text())
    project_yml["corpora"] = {"team": {"+source": "team_docs"}, **project_yml["corpora"]}  # declared first
    (cfg / "rag_project.yml").write_text(yaml.safe_dump(project_yml, sort_keys=False))
    with env(**values):
        project = load_project()
        assert [c.name for c in project.corpora] == ["team", "sample"]
        with pytest.raises(SourceFolderMissing, match="moved_away does not exist") as stopped:
            ingest_project(project)
        assert status_project(project, ["sample"])["corpora"]["sample"]["stages"]["lancedb_index"]["fresh"] == 12
        assert stopped.value.report["corpora"]["sample"]["documents_new"] == 12
        assert "moved_away does not exist" in stopped.value.report["stopped"]["team"]
        # The command prints the report of the corpora that ran, then the error with its exit code.
        assert cli_main(["ingest"]) == 2
        out, err = capsys.readouterr()
        assert out.splitlines()[1].split()[:2] == ["sample", "12"] and "moved_away does not exist" in err
        assert cli_main(["ingest", "--json"]) == 2
        report = json.loads(capsys.readouterr().out)
        assert report["corpora"]["sample"]["documents_seen"] == 12 and list(report["stopped"]) == ["team"]


def test_chunks_leave_room_for_the_passage_prefix_the_model_reads_before_them(tmp_path):
    """A model with a passage_prefix ("passage: " for e5) read chunks cut to its whole input limit:
    prefix and chunk together exceeded it, and the document failed to embed."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "long.txt").write_text(" ".join(f"ticket {i} update schedule for robot dock" for i in range(400)))
    (docs / "short.md").write_text("# Short\n\nRefunds take 45 days.\n")
    values = make_project(tmp_path, docs)
    cfg = Path(values["RAG_PROJECT_DIR"])

    def prefixed(d):
        base = next(m for m in d["embedding_models"] if m["name"] == "all_minilm_l6_v2")
        d["embedding_models"].append({**base, "name": "minilm_passages", "passage_prefix": "passage: "})

    edit_yaml(cfg / "profiles" / "embedding_models.yml", prefixed)
    edit_yaml(cfg / "profiles" / "chunking.yml", lambda d: d["chunking_profiles"].append(
        {"name": "packed", "strategy": "recursive", "max_tokens": 256, "overlap": 0, "min_tokens": 0,
         "contextual_header": False}))  # chunks filled to the limit
    edit_yaml(cfg / "rag_project.yml", lambda d: d["corpora"]["sample"].update(
        {"+embedding_model": "minilm_passages", "+chunking_profile": "packed"}))
    with env(**values):
        project = load_project()
        model = project.corpus("sample").embedding_model
        report = ingest_project(project)
        assert (report["documents_failed"], report["failures"]) == (0, [])
        assert all(report["checks"].values())
        counter = get_token_counter(model.tokenizer)
        corpus = project.corpus("sample")
        table = lancedb.connect(corpus.index_uri).open_table(table_name("sample", model.name, "packed"))
        longest = max(counter.count("passage: " + r["text"]) for r in table.to_arrow().to_pylist())
        assert longest == model.max_input_tokens == 256
