"""The retrieval_eval asset: golden-set scores, a PNG plot and the recall@5 check, with a
document that cannot be parsed left out and a document questions name but the corpus lacks
reported."""

import base64
import re
from pathlib import Path

import dagster as dg
import pytest

from rag_assets.config import load_project
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
