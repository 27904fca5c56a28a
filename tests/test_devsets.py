"""The development question sets kept in the repo: every reference span is the text it claims,
every set names its source and licence."""

import csv
import json
from pathlib import Path

import pytest

DEVSETS = Path(__file__).resolve().parents[1] / "benchmarks" / "devsets"
SETS = sorted(p.parent for p in DEVSETS.glob("*/questions.csv"))


def test_there_are_at_least_two_sets():
    assert len(SETS) >= 2


@pytest.mark.parametrize("folder", SETS, ids=[s.name for s in SETS])
def test_every_span_is_its_content_and_provenance_is_stated(folder):
    provenance = (folder / "PROVENANCE.md").read_text()
    assert "Licence" in provenance and "commit" in provenance
    texts = {p.stem: p.read_text(encoding="utf-8") for p in (folder / "corpora").iterdir() if p.suffix in (".md", ".txt")}
    with (folder / "questions.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert 40 <= len(rows) <= 400  # aws_docs has 46: few enough that its intervals are wide, read them
    for row in rows:
        text = texts[row["corpus_id"]]
        refs = json.loads(row["references"])
        assert row["question"].strip() and refs
        for ref in refs:
            assert text[ref["start_index"]:ref["end_index"]] == ref["content"]
