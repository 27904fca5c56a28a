"""Sweep planning: guarded mass deletes."""

import pytest

from rag_assets.core.hashing import content_hash
from rag_assets.core.models import RawDocument
from rag_assets.core.planning import MassDeleteRefused, guard_deletes, plan_sweep
from rag_assets.core.sources import DocumentRef
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
