"""`rag eval` as a user runs it, on our YAML golden set and on a Chroma-format CSV."""

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CONFIGS, make_project

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
RAG = str(Path(sys.executable).parent / "rag")


def run(values, *args):
    out = subprocess.run([RAG, "eval", *args, "--json"], env={**os.environ, **values}, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


def test_eval_on_the_sample_golden_set_compares_profiles(tmp_path):
    values = make_project(tmp_path)
    rows = run(values, "--questions", str(CONFIGS / "evals" / "sample_questions.yml"),
               "--profile", "default", "--profile", "recommended")
    assert [r["profile"] for r in rows] == ["default", "recommended"]
    for row in rows:
        assert row["n_questions"] >= 30
        for key in ("recall", "precision", "iou", "recall_at_5", "mean_tokens"):
            assert key in row
        assert row["recall_at_5"] >= 80.0  # right document in the top 5 for most questions


def test_eval_on_a_chroma_format_csv(tmp_path):
    corpora = tmp_path / "corpora"
    corpora.mkdir()
    text = "\n\n".join(f"Paragraph {i}: the {w} robot needs {w} maintenance every {i} days." for i, w in
                       enumerate(["brush", "wheel", "battery", "filter", "sensor", "dock"] * 10))
    (corpora / "robots.md").write_text(text)
    target = "the battery robot needs battery maintenance every 14 days"
    start = text.index(target)
    csv_path = tmp_path / "questions.csv"
    refs = json.dumps([{"content": target, "start_index": start, "end_index": start + len(target)}])
    with csv_path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["question", "references", "corpus_id"])
        writer.writerow(["How often does the battery robot need maintenance?", refs, "robots"])
    values = make_project(tmp_path / "p")
    rows = run(values, "--questions", str(csv_path), "--corpora", str(corpora), "--profile", "fixed_200_0")
    row = rows[0]
    assert row["n_questions"] == 1
    assert 0 < row["iou"] <= row["precision_omega"] <= 100
    assert row["recall"] > 0
