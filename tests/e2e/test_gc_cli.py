"""Stage-store garbage through the pipeline: `rag gc` and the collect_garbage job remove what an
edit, a deletion or a profile switch left behind, and nothing a later ingest needs."""

import json
from pathlib import Path

import dagster as dg

from rag_assets.cli import main
from rag_assets.config import load_project
from rag_assets.core.store import StageStore
from rag_assets.defs.factory import build_definitions
from rag_assets.ingest import ingest_project
from tests.conftest import edit_yaml, env, make_project

STAGES = ("raw", "parsed", "chunks", "vectors")


def _gc(capsys, *args: str) -> dict:
    capsys.readouterr()
    assert main(["gc", "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)["corpora"]["sample"]


def _counts(store: StageStore) -> dict[str, int]:
    return {stage: len(store.listing(f"{stage}/")[0]) for stage in STAGES}


def test_gc_removes_old_versions_and_a_later_ingest_redoes_nothing(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("refunds", "shipping", "warranty"):
        (docs / f"{name}.md").write_text(f"# {name.title()}\n\nOur {name} policy is simple and fair.\n\n"
                                         f"## Details\n\nAsk support about {name} within 30 days.\n")
    with env(**make_project(tmp_path, docs)):
        project = load_project()
        corpus = project.corpus("sample")
        store = StageStore(corpus.stage_store)
        ingest_project(project)
        (docs / "refunds.md").write_text("# Refunds\n\nRefunds for broken widgets are paid in 5 days.\n")
        (docs / "shipping.md").unlink()
        edited = ingest_project(project)["corpora"]["sample"]
        assert (edited["documents_changed"], edited["documents_deleted"]) == (1, 1)
        assert _counts(store) == {"raw": 4, "parsed": 4, "chunks": 4, "vectors": 4}

        kept = _gc(capsys)  # the configured 7 days: all of it was written just now
        assert kept["removed"] == 0 and kept["stages"]["raw"]["recent"] == 2
        dry = _gc(capsys, "--older-than-days", "0", "--dry-run")
        assert {s: dry["stages"][s]["removed"] for s in STAGES} == dict.fromkeys(STAGES, 2)
        assert _counts(store) == dict.fromkeys(STAGES, 4)
        done = _gc(capsys, "--older-than-days", "0")
        assert done["removed"] == 8 and _counts(store) == dict.fromkeys(STAGES, 2)

        again = ingest_project(project)["corpora"]["sample"]
        assert (again["documents_parsed"], again["chunks_embedded"], again["documents_failed"]) == (0, 0, 0)
        capsys.readouterr()
        assert main(["query", "broken widgets", "--json", "--k", "1"]) == 0
        assert "broken widgets" in json.loads(capsys.readouterr().out)[0]["text"]

        # A profile switched away and back: its chunks were collected, its vectors come from the
        # embedding cache (no chunk reaches the model), and the collect_garbage job did it.
        config = tmp_path / "dbt_like_configs" / "rag_project.yml"
        edit_yaml(config, lambda d: d["defaults"].update({"+chunking_profile": "recursive"}))
        ingest_project(load_project())
        edit_yaml(config, lambda d: (d["defaults"].update({"+chunking_profile": "default"}),
                                     d["stage_store_gc"].update({"older_than_days": 0})))
        defs = build_definitions(load_project())
        with dg.DagsterInstance.get() as instance:
            result = defs.resolve_job_def("collect_garbage_sample").execute_in_process(instance=instance)
        output = [e for e in result.all_events if e.event_type_value == "STEP_OUTPUT"][0]
        metadata = output.event_specific_data.metadata
        assert metadata["removed"].value == 4  # default: 2 chunks, 2 vectors
        kept = sum(blob.size for stage in STAGES for blob in store.listing(f"{stage}/")[0])
        assert metadata["kept_mib"].value == round(kept / 2**20, 3) > 0
        assert _counts(store) == {"raw": 2, "parsed": 2, "chunks": 2, "vectors": 2}
        back = ingest_project(load_project())["corpora"]["sample"]
        assert (back["documents_parsed"], back["chunks_embedded"], back["documents_failed"]) == (0, 0, 0)
        assert back["embedding_cache_hits"] > 0 and _counts(store)["chunks"] == 4


def test_gc_refuses_a_negative_age(tmp_path, capsys):
    with env(**make_project(tmp_path)):
        try:
            main(["gc", "--older-than-days", "-1"])
        except SystemExit as exit:
            assert exit.code == 2
        assert "is not a number of days (0 or more)" in capsys.readouterr().err


def test_a_corpus_removed_from_the_config_keeps_its_stage_store_until_named(tmp_path, capsys):
    with env(**make_project(tmp_path)):
        corpus = load_project().corpus("sample")
        old = StageStore(corpus.stage_store.rsplit("/", 1)[0] + "/retired")
        old.set_current("raw", "a.md", key="k")
        old.put_bytes("raw", "k", b"bytes of a document")
        capsys.readouterr()
        assert main(["gc", "--dry-run"]) == 0
        assert ("undeclared: retired (2 files, 0.0 MiB) is no longer in rag_project.yml; its stage store is kept: "
                "`rag gc --drop-undeclared retired` removes it") in capsys.readouterr().out
        assert main(["gc", "--drop-undeclared", "sample"]) == 2  # a declared corpus is never dropped this way
        assert "no stage store of an undeclared corpus of that name" in capsys.readouterr().err
        assert main(["gc", "--json", "--drop-undeclared", "retired", "--dry-run"]) == 0
        pointer = old.blobs.root / old._pointer("raw", "a.md")
        assert json.loads(capsys.readouterr().out)["undeclared"] == [
            {"corpus": "retired", "files": 2, "bytes": pointer.stat().st_size + 19, "dropped": False}]
        assert main(["gc", "--json", "--corpus", "sample", "--drop-undeclared", "retired"]) == 0
        assert json.loads(capsys.readouterr().out)["undeclared"][0]["dropped"] is True
        assert not old.blobs.root.exists() and Path(corpus.stage_store).exists()
