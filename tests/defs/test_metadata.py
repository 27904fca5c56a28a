"""What a materialisation tells a person in the UI: per-document chunk histograms and samples,
costs, the LanceDB table version and links to the stage before, checked against the index."""

import base64
import re
from collections import Counter
from urllib.parse import quote

import dagster as dg
import lancedb
import pytest

from rag_assets.config import load_project
from rag_assets.core.index import table_name
from rag_assets.core.keys import partition_key_for
from rag_assets.defs.names import partitions_name
from tests.conftest import env

pytestmark = pytest.mark.slow
STAGES = ["raw_documents", "parsed_documents", "chunks", "embeddings", "lancedb_index", "lancedb_table"]


def latest(instance, stage, partition=None):
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey(["sample", stage]),
                              asset_partitions=[partition] if partition else None), limit=1).records
    return {k: v.value for k, v in records[0].asset_materialization.metadata.items()}


def md_rows(markdown):
    return [line for line in markdown.splitlines() if line.startswith("| ") and "---" not in line][1:]


def test_metadata_matches_the_index(ingested_sample):
    values, report = ingested_sample
    with env(**values), dg.DagsterInstance.get() as instance:
        corpus = load_project().corpus("sample")
        table = lancedb.connect(corpus.index_uri).open_table(table_name("sample", corpus.embedding_model.name, corpus.chunking_profile.name))
        rows = table.to_arrow().to_pylist()
        per_doc = Counter(r["doc_id"] for r in rows)
        price = corpus.embedding_model.price_per_million_tokens
        embedded_tokens = 0
        for doc_id, n_rows in per_doc.items():
            pk = partition_key_for(doc_id)
            chunks = latest(instance, "chunks", pk)
            assert chunks["chunks"] == n_rows, doc_id
            bins = [int(r.split("|")[2]) for r in md_rows(chunks["token_histogram"])]
            assert sum(bins) == n_rows, doc_id
            first = min((r for r in rows if r["doc_id"] == doc_id), key=lambda r: r["chunk_index"])
            sample = md_rows(chunks["sample_chunks"])
            assert 1 <= len(sample) <= min(5, n_rows) and len(chunks["sample_chunks"]) < 1000  # shown inline
            assert chunks["sample_chunks"].endswith(f"{n_rows - len(sample)} more chunks") == (n_rows > len(sample))
            assert f"| {first['start']}-{first['end']} | {first['tokens']} | " in sample[0]
            assert f"{first['heading_path'][-30:] or '–'} | " in sample[0]
            embeddings = latest(instance, "embeddings", pk)
            assert embeddings["estimated_cost_usd"] == round(embeddings["embedded_tokens"] * price / 1e6, 6)
            embedded_tokens += embeddings["embedded_tokens"]
            assert latest(instance, "parsed_documents", pk)["source_uri"] == first["source_uri"]
        # Which documents OCR read, and how many of their pages: the sample's one scan.
        ocr = {doc_id: latest(instance, "parsed_documents", partition_key_for(doc_id)).get("ocr_pages") for doc_id in per_doc}
        assert {doc_id: pages for doc_id, pages in ocr.items() if pages} == {"handbook/fire_safety_notice_scan.pdf": 1}
        # and which of its rows hold text OCR read: all of them
        ocr = {doc_id: latest(instance, "lancedb_index", partition_key_for(doc_id)).get("ocr_rows") for doc_id in per_doc}
        assert {doc_id: n for doc_id, n in ocr.items() if n} == {
            "handbook/fire_safety_notice_scan.pdf": per_doc["handbook/fire_safety_notice_scan.pdf"]}
        # One batch ingested everything, so the run totals are the sums over the documents.
        assert latest(instance, "embeddings", pk)["run_embed_tokens"] == embedded_tokens
        # The batch's chart is on its last partition (the asset's latest materialization) alone:
        # Dagster would copy a run's metadata into every document's event.
        last = instance.get_dynamic_partitions(partitions_name("sample"))[-1]
        charted = [doc_id for doc_id in per_doc if "run_token_histogram" in latest(instance, "chunks", partition_key_for(doc_id))]
        assert [partition_key_for(doc_id) for doc_id in charted] == [last]
        png = re.search(r"base64,([A-Za-z0-9+/=]+)\)", latest(instance, "chunks", last)["run_token_histogram"]).group(1)
        assert base64.b64decode(png).startswith(b"\x89PNG\r\n\x1a\n")
        assert latest(instance, "lancedb_table")["table_version"] == table.version
        assert latest(instance, "lancedb_index", pk)["table_version"] < table.version  # maintenance wrote after it
        # Each document's stage links to the same document's partition of the stage before it;
        # the whole table links to the index asset.
        for before, stage in zip(STAGES, STAGES[1:]):
            if stage == "lancedb_table":
                assert latest(instance, stage)["upstream"] == dg.AssetKey(["sample", before])
            else:
                assert latest(instance, stage, pk)["upstream"] == \
                    f"/assets/sample/{before}?view=partitions&partition={quote(pk, safe='')}", stage


def test_the_index_and_table_assets_list_the_tables_real_columns(ingested_sample):
    from rag_assets.defs.factory import build_definitions

    values, _ = ingested_sample
    with env(**values):
        project = load_project()
        corpus = project.corpus("sample")
        table = lancedb.connect(corpus.index_uri).open_table(
            table_name("sample", corpus.embedding_model.name, corpus.chunking_profile.name))
        defs = build_definitions(project)
    for stage in ("lancedb_index", "lancedb_table"):
        key = dg.AssetKey(["sample", stage])
        schema = defs.get_assets_def(key).specs_by_key[key].metadata["dagster/column_schema"]
        assert [(c.name, c.type) for c in schema.columns] == [(f.name, str(f.type)) for f in table.schema]
        assert all(c.description for c in schema.columns)
