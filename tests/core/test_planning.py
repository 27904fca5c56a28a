"""Sweep planning: guarded mass deletes."""

import pytest

from rag_assets.core.hashing import content_hash
from rag_assets.core.models import RawDocument
from rag_assets.core.planning import MassDeleteRefused, SnapshotSeen, StoreSeen, guard_deletes, plan_sweep
from rag_assets.core.sources import DocumentRef, tenant_folders_only
from rag_assets.core.store import StageStore


def ref(doc_id: str) -> DocumentRef:
    return DocumentRef(doc_id, f"file:///{doc_id}", 10, "v1")


def read(doc_id: str) -> RawDocument:
    data = f"# {doc_id}\n".encode()
    return RawDocument(doc_id, f"file:///{doc_id}", content_hash(data), 10, "v1", data)


def plan_for(tmp_path, listed: list[str], known: list[str]):
    return plan_sweep([ref(d) for d in listed], read, StageStore(tmp_path), known, "profile", "model")


def test_an_empty_listing_deletes_nothing_and_names_count_corpus_and_source(tmp_path):
    known = [f"doc{i:03d}.md" for i in range(120)]
    plan = plan_for(tmp_path, [], known)
    assert (len(plan.deleted), plan.known) == (120, 120)
    with pytest.raises(MassDeleteRefused) as info:
        guard_deletes(plan, 0.5, "sample", "'docs' (/data/empty)")
    message = str(info.value)
    assert "refusing to delete 120 of the 120 documents of corpus 'sample' (100%, all of them)" in message
    assert "source 'docs' (/data/empty) lists 0 documents" in message and "--allow-mass-delete" in message
    guard_deletes(plan, 0.5, "sample", "docs", allow=True)


@pytest.mark.parametrize("deleted, fraction, refused", [
    (5, 0.5, False), (6, 0.5, True), (1, 0.1, False), (2, 0.1, True), (9, 1.0, False), (10, 1.0, True),
    (0, 0.1, False),
])
def test_deletes_over_the_fraction_or_of_everything_are_refused(tmp_path, deleted, fraction, refused):
    known = [f"d{i}.md" for i in range(10)]
    plan = plan_for(tmp_path, known[deleted:], known)
    assert len(plan.deleted) == deleted
    if refused:
        with pytest.raises(MassDeleteRefused, match=f"refusing to delete {deleted} of the 10 documents"):
            guard_deletes(plan, fraction, "c", "s")
    else:
        guard_deletes(plan, fraction, "c", "s")


def test_new_documents_do_not_count_toward_the_corpus_size(tmp_path):
    plan = plan_for(tmp_path, ["new1.md", "new2.md", "new3.md"], ["old.md"])
    with pytest.raises(MassDeleteRefused, match="1 of the 1 documents"):
        guard_deletes(plan, 0.5, "c", "s")


def test_a_sweep_from_a_snapshot_reads_no_pointers_and_skips_what_another_sweep_reported(tmp_path, monkeypatch):
    store = StageStore(tmp_path)
    docs = {d: f"# {d}\n".encode() for d in ("a.md", "b.md", "c.md")}

    def listing(versions):
        return [DocumentRef(d, f"file:///{d}", len(docs[d]), versions.get(d, "v1")) for d in sorted(docs)]

    def read_now(doc_id):
        return RawDocument(doc_id, f"file:///{doc_id}", content_hash(docs[doc_id]), len(docs[doc_id]), "v1", docs[doc_id])

    plan_sweep(listing({}), read_now, store, [], "profile", "model")  # `rag ingest` saw all three
    first = SnapshotSeen(fallback=StoreSeen(store))
    plan_sweep(listing({}), read_now, store, list(docs), "profile", "model", seen=first)
    assert sorted(first.records) == sorted(docs)  # the snapshot holds every listed document

    # Another sweep (`rag ingest`) reports an edit of b.md; c.md is deleted.
    docs["b.md"] = b"# b, edited\n"
    plan_sweep(listing({"b.md": "v2"}), read_now, store, list(docs), "profile", "model")
    del docs["c.md"]
    pointer_reads = []
    store_current = StageStore.current
    monkeypatch.setattr(StageStore, "current", lambda self, stage, doc_id: pointer_reads.append((stage, doc_id))
                        or store_current(self, stage, doc_id))
    second = SnapshotSeen(first.records, fallback=StoreSeen(store))
    plan = plan_sweep(listing({"b.md": "v2"}), read_now, store, ["a.md", "b.md", "c.md"], "profile", "model", seen=second)
    assert plan.snapshots == [] and plan.deleted == ["c.md"]  # b.md's new version is not reported twice
    assert ("raw", "a.md") not in pointer_reads  # unchanged: decided from the snapshot
    assert sorted(second.records) == ["a.md", "b.md"]
    assert second.records["b.md"]["key"] == content_hash(docs["b.md"])
    # Without the other sweep's report, the same edit is a change to report.
    docs["a.md"] = b"# a, edited\n"
    third = SnapshotSeen(second.records, fallback=StoreSeen(store))
    plan = plan_sweep(listing({"b.md": "v2", "a.md": "v3"}), read_now, store, ["a.md", "b.md"], "profile", "model",
                      seen=third)
    assert [d.doc_id for d in plan.snapshots] == ["a.md"] and "a.md" in plan.work


def test_a_document_refused_since_it_was_read_is_refused_though_unchanged(tmp_path):
    """tenant_from_path turned on refuses the documents at the source's root: unchanged ones too."""
    store = StageStore(tmp_path)
    listing = [ref("root.md"), ref("acme/a.md")]
    plan_sweep(listing, read, store, [], "profile", "model")
    plan = plan_sweep(tenant_folders_only(listing), read, store, ["root.md", "acme/a.md"], "profile", "model")
    assert [(u["doc_id"], "tenant's folder" in u["error"]) for u in plan.unreadable] == [("root.md", True)]
    assert "root.md" in plan.work and plan.snapshots == []  # its stages fail, its last rows stay
