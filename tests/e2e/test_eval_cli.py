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
    assert row["recall_ci"][0] <= row["recall"] <= row["recall_ci"][1]
    assert row["iou_ci"][0] <= row["iou"] <= row["iou_ci"][1]
    table = subprocess.run([RAG, "eval", "--questions", str(csv_path), "--corpora", str(corpora), "--profile",
                            "fixed_200_0"], env={**os.environ, **values}, capture_output=True, text=True, timeout=600)
    assert table.returncode == 0, table.stderr[-2000:]
    header, line = table.stdout.splitlines()[:2]
    assert "95% CI" in header and "R@10" in header
    assert f"[{row['recall_ci'][0]:.1f}, {row['recall_ci'][1]:.1f}]" in line


def test_grouped_profile_is_asked_for_ten_results_whatever_k(tmp_path, monkeypatch):
    """recall@10 of the grouped `recommended` path is not capped at k: three documents each hold
    a copy of the answer sentence (the rest differs: identical files are one document); with k=1
    the token metrics see the one result a user gets, recall@10 the three of asking for ten."""
    from rag_assets.config import load_project
    from rag_assets.evaluate import evaluate

    corpora = tmp_path / "corpora"
    corpora.mkdir()
    refs = {}
    for name in ("north", "south", "east"):
        text = "The battery robot needs maintenance every 14 days. " + f"Filler about {name} weather and tea. " * 30
        (corpora / f"{name}.md").write_text(text)
        refs[name] = text.index("maintenance")
    csv_path = tmp_path / "questions.csv"
    with csv_path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["question", "references", "corpus_id"])
        for name, start in refs.items():  # eval indexes only the corpora its questions are about
            writer.writerow(["How often does the battery robot need maintenance?",
                             json.dumps([{"content": "maintenance", "start_index": start, "end_index": start + 11}]), name])
    for key, value in make_project(tmp_path / "p").items():
        monkeypatch.setenv(key, value)
    seen = []
    rows = evaluate(load_project(), csv_path, ["recommended"], corpora=corpora, k=1,
                    on_question=lambda profile, question, results: seen.append(results[1]))
    assert [len(retrieved) for retrieved in seen] == [1, 1, 1]
    assert {r.corpus_id for retrieved in seen for r in retrieved} <= {"north", "south", "east"}
    assert rows[0]["recall_at_10"] == 100.0 and rows[0]["recall_at_1"] < 100.0


def test_results_asked_beyond_reach_and_spans_past_the_text_are_usage_errors(tmp_path):
    """`--k 1e20` was an OverflowError (exit 1); a reference past its corpus' text scored as a miss."""
    corpora = tmp_path / "corpora"
    corpora.mkdir()
    (corpora / "short.md").write_text("The dock charges the robot overnight.")
    csv_path = tmp_path / "questions.csv"
    with csv_path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["question", "references", "corpus_id"])
        writer.writerow(["When does the robot charge?", json.dumps([{"start_index": 20, "end_index": 400}]), "short"])
    values = make_project(tmp_path / "p")

    def rag_eval(*args):
        return subprocess.run([RAG, "eval", "--questions", str(csv_path), "--corpora", str(corpora), "--profile",
                               "fixed_200_0", *args], env={**os.environ, **values}, capture_output=True, text=True,
                              timeout=600)

    past = rag_eval()
    assert past.returncode == 2 and "references characters 20-400 of 'short', whose text has 37" in past.stderr
    huge = rag_eval("--k", "1" + "0" * 20)
    assert huge.returncode == 2 and "--k must be 1 to 10000" in huge.stderr
