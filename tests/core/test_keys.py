from hypothesis import given
from hypothesis import strategies as st

from rag_assets.core.keys import doc_id_for, partition_key_for


@given(st.text(min_size=1, max_size=80))
def test_partition_keys_round_trip_and_avoid_reserved_characters(doc_id):
    key = partition_key_for(doc_id)
    assert doc_id_for(key) == doc_id
    assert not any(ch in key for ch in ",[]|*\n\r\t\x00")
    assert "..." not in key


def test_readable_paths_stay_readable():
    assert partition_key_for("handbook/Ünïcode file name.md") == "handbook/Ünïcode file name.md"
    # Where Dagster or its UI needs a substitute, a readable one, not a percent escape.
    assert partition_key_for("engineering/incident review, march 2026.md") == "engineering/incident review， march 2026.md"
    assert partition_key_for("notes [draft] v1...v2.md") == "notes ［draft］ v1…v2.md"
    # A substitute or an escape-like '%' in the id itself is escaped, so the mapping stays reversible.
    assert doc_id_for(partition_key_for("already，wide %2C.md")) == "already，wide %2C.md"
    # Keys registered before the substitutes existed still name the same document.
    assert doc_id_for("engineering/incident review%2C march 2026.md") == "engineering/incident review, march 2026.md"
