"""A chunks table written before a column was added is read without it and gains it, filled,
at its next write; results and citations carry the pages a chunk spans."""

from dataclasses import replace

import lancedb
import pyarrow as pa

from rag_assets.core.index import ADDED_COLUMNS, LanceIndex, chunk_schema, document_rows
from rag_assets.core.retrieval import Hit, merge_overlapping, vector_search
from tests.core.test_index_restore import DIM, embedded


def paged(doc_id: str, pages: list[tuple[int | None, int | None]]):
    doc = embedded(doc_id, len(pages))
    chunks = tuple(replace(c, page=p, page_end=e) for c, (p, e) in zip(doc.chunked.chunks, pages))
    return replace(doc, chunked=replace(doc.chunked, chunks=chunks))


def test_a_table_without_page_end_is_read_as_before_and_gains_it_at_the_next_write(tmp_path):
    db = lancedb.connect(tmp_path / "db")
    index = LanceIndex(db, "sample", "m", DIM, "p")
    old_schema = pa.schema([f for f in chunk_schema(DIM) if f.name not in ADDED_COLUMNS])
    rows = [{k: v for k, v in row.items() if k not in ADDED_COLUMNS}
            for row in document_rows(paged("old.pdf", [(1, 1), (2, 3)]), None, "run0")]
    db.create_table(index.name, data=pa.Table.from_pylist(rows, schema=old_schema))  # as the last release wrote it
    before = db.open_table(index.name).version

    hits = vector_search(index.pinned(), [0.1] * (DIM - 1) + [1.0], k=2)  # was: no field page_end, the query failed
    assert {(h.page, h.page_end) for h in hits} == {(1, 1), (2, 2)}  # the start page: all it knew
    row = index.row(rows[1]["id"])  # what rag lineage reads (it failed the same way)
    assert (row["doc_id"], row["page"], "page_end" in row) == ("old.pdf", 2, False)

    index.write_documents([paged("new.pdf", [(4, 6)])], None, "run1")
    table = db.open_table(index.name)
    assert table.schema.names == chunk_schema(DIM).names
    ends = {(r["doc_id"], r["page"], r["page_end"]) for r in table.to_arrow().to_pylist()}
    assert ends == {("old.pdf", 1, 1), ("old.pdf", 2, 2), ("new.pdf", 4, 6)}
    old = vector_search(index.pinned(), [0.1] * DIM, k=5, version=before)  # time travel to before the column
    assert len(old) == 2 and all(h.page_end == h.page for h in old)
    assert "page_end" not in index.row(rows[1]["id"], version=before) and index.row(rows[1]["id"])["page_end"] == 2
    index.write_documents([paged("old.pdf", [(1, 1), (2, 3)])], None, "run2")  # re-chunked: its real end page
    assert {(r["page"], r["page_end"]) for r in db.open_table(index.name).to_arrow().to_pylist()
            if r["doc_id"] == "old.pdf"} == {(1, 1), (2, 3)}


def test_a_table_without_the_ocr_column_gains_it_and_ocr_read_rows_are_cited_as_such(tmp_path):
    db = lancedb.connect(tmp_path / "db")
    index = LanceIndex(db, "sample", "m", DIM, "p")
    schema = pa.schema([f for f in chunk_schema(DIM) if f.name != "ocr"])  # as release 36 wrote it
    rows = [{k: v for k, v in row.items() if k != "ocr"} for row in document_rows(embedded("typed.md", 2), None, "run0")]
    db.create_table(index.name, data=pa.Table.from_pylist(rows, schema=schema))
    assert not any(h.ocr for h in vector_search(index.pinned(), [0.1] * DIM, k=5))

    doc = embedded("scan.pdf", 2)
    scan = replace(doc, chunked=replace(doc.chunked, chunks=(doc.chunked.chunks[0], replace(doc.chunked.chunks[1], ocr=True))))
    index.write_documents([scan], None, "run1")
    read = {(r["doc_id"], r["chunk_index"]): r["ocr"] for r in db.open_table(index.name).to_arrow().to_pylist()}
    assert read == {("typed.md", 0): False, ("typed.md", 1): False, ("scan.pdf", 0): False, ("scan.pdf", 1): True}
    hits = {(h.doc_id, h.chunk_index): h for h in vector_search(index.pinned(), [0.1] * DIM, k=5)}
    assert hits[("scan.pdf", 1)].ocr and hits[("scan.pdf", 1)].citation().endswith("| read by OCR  (file:///scan.pdf)")
    assert "OCR" not in hits[("scan.pdf", 0)].citation() and hits[("scan.pdf", 1)].to_dict()["ocr"] is True
    # a result joined from pieces is read by OCR where any piece is
    typed, ocr = replace(hit(0, 100, 1, 1), ocr=False), replace(hit(100, 200, 2, 2), ocr=True)
    assert merge_overlapping([typed, ocr])[0].ocr and not merge_overlapping([typed])[0].ocr


def hit(start: int, end: int, page, page_end, score=0.5) -> Hit:
    return Hit(id=f"{start}", doc_id="m.pdf", text="x" * (end - start), source="", title="Manual", heading_path="",
               page=page, start=start, end=end, chunk_index=start, score=score, page_end=page_end)


def test_merged_results_span_the_pages_of_their_pieces_and_cite_them():
    merged, = merge_overlapping([hit(100, 200, 3, 4, 0.9), hit(0, 100, 2, 3)])
    assert (merged.start, merged.end, merged.page, merged.page_end) == (0, 200, 2, 4)
    assert "| pp. 2-4 |" in merged.citation() and "| p. 3 |" in hit(0, 5, 3, 3).citation()
    body, = merge_overlapping([hit(100, 200, 1, 2), hit(0, 100, None, None)])  # starts before the first page
    assert (body.page, body.page_end) == (None, None)


def test_a_manifest_without_labels_gains_them_and_its_old_entries_are_judged_by_content_and_profile(tmp_path):
    from rag_assets.core.index import MANIFEST_SCHEMA, made_as_recorded

    db = lancedb.connect(tmp_path / "db")
    index = LanceIndex(db, "sample", "m", DIM, "p")
    index.write_documents([embedded("old.md", 2)], "acme", "run0")
    entry = index.indexed_documents()["old.md"]
    record = {"content_hash": entry["content_hash"], "profile_hash": entry["profile_hash"], "labels": entry["labels"]}
    old_schema = pa.schema([f for f in MANIFEST_SCHEMA if f.name != "labels"])  # as the last release wrote it
    db.drop_table(index.manifest_name)
    db.create_table(index.manifest_name, data=pa.Table.from_pylist([entry], schema=old_schema))
    held = index.complete_documents()["old.md"]
    assert held[2] is None and made_as_recorded(held, record)  # unknown labels: content and profile decide
    assert not made_as_recorded(held, {**record, "profile_hash": "other"})

    written = index.write_documents([embedded("new.md", 1)], "globex", "run1")  # the write adds the column
    assert db.open_table(index.manifest_name).schema.names == MANIFEST_SCHEMA.names
    complete = index.complete_documents()
    assert complete["new.md"][2] == written["new.md"].labels and complete["old.md"][2] is None
    rewritten = index.write_documents([embedded("old.md", 2)], "globex", "run2")["old.md"]
    assert not made_as_recorded(index.complete_documents()["old.md"], record)  # acme's labels are not globex's
    assert made_as_recorded(index.complete_documents()["old.md"], {**record, "labels": rewritten.labels})


def test_a_table_without_the_sections_column_is_filtered_by_heading_path_then_gains_it(tmp_path):
    """A chunk that took in a small section after its own is found by that section's name once its
    row records every section it spans; rows written before the column match by heading path."""
    from rag_assets.core.retrieval import Filters, search

    db = lancedb.connect(tmp_path / "db")
    index = LanceIndex(db, "sample", "m", DIM, "p")
    doc = embedded("guide.md", 2)
    spans = (("Guide > Leave", "Guide > Leave > Parental Leave"), ("Guide > Equipment",))
    chunks = tuple(replace(c, heading_path=tuple(s[0].split(" > ")), sections=s) for c, s in zip(doc.chunked.chunks, spans))
    doc = replace(doc, chunked=replace(doc.chunked, chunks=chunks))
    schema = pa.schema([f for f in chunk_schema(DIM) if f.name != "sections"])  # as release 42 wrote it
    rows = [{k: v for k, v in row.items() if k != "sections"} for row in document_rows(doc, None, "run0")]
    db.create_table(index.name, data=pa.Table.from_pylist(rows, schema=schema))
    before = db.open_table(index.name).version

    def found(section: str, version=None) -> set[int]:
        hits = search(index, "leave", [0.1] * DIM, ks=(5,), mode="vector", filters=Filters(section=section),
                      version=version)[5]
        return {h.chunk_index for h in hits}

    assert found("Leave") == {0} and found("Parental Leave") == set()  # only the heading path was recorded
    index.write_documents([embedded("other.md", 1)], None, "run1")  # any write adds the column, filled
    assert found("Leave") == {0} and found("Parental Leave") == set() and found("Guide") == {0, 1}
    index.write_documents([doc], None, "run2")  # re-chunked: every section it spans
    assert found("Parental Leave") == {0} and found("Parent") == set() and found("Equipment") == {1}
    assert found("Parental Leave", version=before) == set()  # time travel reads the table as it was
    (hit,) = search(index, "leave", [0.1] * DIM, ks=(5,), mode="vector", filters=Filters(section="Parental Leave"))[5]
    assert hit.sections == spans[0] and hit.heading_path == "Guide > Leave"
    merged, = merge_overlapping([replace(hit, start=0, end=10, sections=("A",)), replace(hit, start=10, end=20)])
    assert merged.sections == ("A", *spans[0])


def test_a_citation_names_every_section_its_text_spans():
    spanning = replace(hit(0, 50, None, None), heading_path="Handbook > Equipment", sections=(
        "Handbook > Equipment", "Handbook > Equipment > Laptops", "Handbook > Equipment > Home Office Budget"))
    assert "| Handbook > Equipment [Laptops; Home Office Budget] | chars 0-50" in spanning.citation()
    assert hit(0, 5, None, None).citation() == "Manual | chars 0-5  ()"  # no heading: none cited
    under = replace(hit(0, 50, None, None), heading_path="Handbook > Time Off > Vacation",
                    sections=("Handbook > Time Off > Vacation", "Handbook > Time Off"))  # its parent's heading line
    assert "| Handbook > Time Off > Vacation | chars" in under.citation()
