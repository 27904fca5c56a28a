"""The retrieval_eval asset: golden-set scores, a PNG plot and the recall@5 check, with a
document that cannot be parsed left out and a document questions name but the corpus lacks
reported."""

import base64
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import dagster as dg
import pytest

from rag_assets.config import load_project
from rag_assets.core.store import StageStore
from rag_assets.defs.factory import build_definitions
from tests.conftest import env, make_project

pytestmark = pytest.mark.slow


def materialise_eval(values: dict[str, str]) -> dg.ExecuteInProcessResult:
    """The sample's retrieval_eval asset materialised alone, in the project ``values`` point at."""
    with env(**values), dg.instance_for_test() as instance:
        defs = build_definitions(load_project())
        key = dg.AssetKey(["sample", "retrieval_eval"])
        return dg.materialize([defs.get_assets_def(key)], instance=instance, resources=defs.resources,
                              selection=[key])


def test_retrieval_eval_materialises_scores_plot_and_check(tmp_path):
    values = make_project(tmp_path)
    # A document that cannot be parsed is left out of the scores, as an ingest leaves it out.
    (Path(values["RAG_SAMPLE_DOCS"]) / "notes" / "broken.pdf").write_bytes(b"%PDF-1.4 not a pdf at all")
    # Two golden questions are about this note: deleted, they can only miss, and the asset says why.
    (Path(values["RAG_SAMPLE_DOCS"]) / "notes" / "office_wifi.txt").unlink()
    result = materialise_eval(values)
    assert result.success
    metadata = result.asset_materializations_for_node("sample__retrieval_eval")[0].metadata
    assert metadata["questions"].value >= 30
    assert metadata["documents_left_out"].value == "notes/broken.pdf"
    assert metadata["documents_not_found"].value == "notes/office_wifi.txt"
    png = re.search(r"base64,([A-Za-z0-9+/=]+)\)", metadata["plot"].value).group(1)
    assert base64.b64decode(png)[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| recommended |" in metadata["profiles"].value
    checks = result.get_asset_check_evaluations()
    assert [c.check_name for c in checks] == ["min_recall_at_5"]
    assert checks[0].passed == (metadata["recall_at_5"].value >= 80)


def test_retrieval_eval_scores_the_documents_as_ingested(ingested_sample, monkeypatch):
    """After an ingest, each document comes from the stage store as the pipeline parsed it: the
    source is only listed, nothing is read or parsed again (a rich corpus' parse, an S3 read per
    document, after every table update)."""
    import rag_assets.evaluate as evaluation

    values, _ = ingested_sample
    parsed, parse = [], evaluation.parse_document
    monkeypatch.setattr(evaluation, "parse_document", lambda raw, *a, **kw: parsed.append(raw.doc_id) or parse(raw, *a, **kw))
    result = materialise_eval(values)
    assert result.success
    assert parsed == []
    metadata = result.asset_materializations_for_node("sample__retrieval_eval")[0].metadata
    assert metadata["documents_left_out"].value == metadata["documents_not_found"].value == "none"
    assert metadata["questions"].value >= 30 and metadata["recall_at_5"].value >= 80


def test_retrieval_eval_reuses_the_ingests_chunks_and_vectors(tmp_path, monkeypatch):
    """Scoring the corpus' own profile and model after an ingest embeds the questions alone: the
    chunks and vectors are the ones the ingest stored (it embedded the whole corpus once already)."""
    import rag_assets.evaluate as evaluation
    from rag_assets.ingest import ingest_project

    values = make_project(tmp_path)
    config = Path(values["RAG_PROJECT_DIR"]) / "rag_project.yml"
    config.write_text(re.sub(r"\+eval_profiles: \[.*\]", "+eval_profiles: [default]", config.read_text()))
    with env(**values):
        project = load_project()
        ingest_project(project)
    shutil.rmtree(Path(project.local_dir) / "eval_cache", ignore_errors=True)
    embedded, open_embedder = [], evaluation.open_embedder

    def counting(model):
        embedder = open_embedder(model)
        return SimpleNamespace(embed=lambda texts: embedded.extend(texts) or embedder.embed(texts))

    monkeypatch.setattr(evaluation, "open_embedder", counting)
    result = materialise_eval(values)
    assert result.success
    metadata = result.asset_materializations_for_node("sample__retrieval_eval")[0].metadata
    assert len(embedded) == metadata["questions"].value >= 30
    assert metadata["recall_at_5"].value >= 80

    # Vectors stored under the model's name by other settings (the ingest refuses such a change) are
    # not this model's: the chunks are embedded again.
    model = project.corpus("sample").embedding_model
    store = StageStore(project.corpus("sample").stage_store)
    store.set_current("model", model.name, key=None, fingerprint="other settings")
    shutil.rmtree(Path(project.local_dir) / "eval_cache")
    embedded.clear()
    again = materialise_eval(values).asset_materializations_for_node("sample__retrieval_eval")[0].metadata
    assert len(embedded) > again["questions"].value
    assert again["recall_at_5"].value == metadata["recall_at_5"].value
