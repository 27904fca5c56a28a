"""Metric fidelity: our token-level recall, precision and IoU against the report's own metric code,
scored on the very same retrieved chunks.

    .venv/bin/python benchmarks/metric_fidelity.py --reference CHECKOUT [--questions CSV]
        [--corpora DIR] [--profile fixed_200_0 ...] [--k 5] [--json]

CHECKOUT is a checkout of github.com/brandonstarxel/chunking_evaluation (the code behind Chroma's
"Evaluating Chunking Strategies for Retrieval"). `rag eval` runs each profile and hands over every
question's ranked results; the same results are then scored by the report's
``BaseEvaluation._scores_from_dataset_and_retrievals`` and its range helpers, read from that
checkout at run time (nothing of it is copied into this project; its chromadb/openai imports are
not needed for the metric and are not executed). Prints both means and the gap in points; the
issue's bar is a gap of at most 1.5 points on recall and IoU for ``fixed_200_0`` on questions the
project has never seen.
"""

from __future__ import annotations

import argparse
import ast
import csv
import json
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from rag_assets.config import load_project  # noqa: E402
from rag_assets.evaluate import evaluate  # noqa: E402

SHARED = REPO.parent / "shared" / "benchmarks" / "chroma_chunking_eval"
METRIC_FILE = "chunking_evaluation/evaluation_framework/base_evaluation.py"
HELPERS = {"sum_of_ranges", "union_ranges", "intersect_two_ranges", "difference"}
SCORER = "_scores_from_dataset_and_retrievals"


def reference_scorer(checkout: Path):
    """The report's scoring function, compiled from its source file with only the range helpers
    it calls; the module's own imports (chromadb, openai) are left out."""
    path = checkout / METRIC_FILE
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    picked = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name in HELPERS]
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "BaseEvaluation":
            picked += [f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == SCORER]
    names = {node.name for node in picked}
    if names != HELPERS | {SCORER}:
        raise SystemExit(f"{path}: expected {sorted(HELPERS | {SCORER})}, found {sorted(names)}")
    namespace: dict = {}
    exec(compile(ast.Module(body=picked, type_ignores=[]), str(path), "exec"), namespace)
    return namespace[SCORER]


class _Rows:
    """The two things the report's scorer reads from its pandas frame: ``iterrows()`` over rows
    with ``question``, ``references`` (parsed JSON) and ``corpus_id``."""

    def __init__(self, rows: list[dict]):
        self.rows = rows

    def iterrows(self):
        return enumerate(self.rows)


class _Evaluation:
    def __init__(self, rows: list[dict]):
        self.questions_df = _Rows(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reference", type=Path, required=True, help="checkout of chunking_evaluation")
    parser.add_argument("--questions", type=Path, default=SHARED / "questions.csv")
    parser.add_argument("--corpora", type=Path, default=None, help="default: beside the CSV")
    parser.add_argument("--profile", action="append", help="profiles (default: fixed_200_0)")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    scorer = reference_scorer(args.reference)
    with args.questions.open(newline="", encoding="utf-8") as f:
        rows = [{**row, "references": json.loads(row["references"])} for row in csv.DictReader(f)]
    retrieved: dict[str, list] = {}

    def keep(profile, question, results):
        retrieved.setdefault(profile, []).append(results[args.k])

    summaries = evaluate(load_project(), args.questions, args.profile or ["fixed_200_0"], corpora=args.corpora,
                         k=args.k, progress=None if args.json else sys.stderr, on_question=keep)
    out = []
    for summary in summaries:
        hits = retrieved[summary["profile"]]
        metadatas = [[{"start_index": h.start, "end_index": h.end, "corpus_id": h.corpus_id} for h in q_hits]
                     for q_hits in hits]
        iou, recall, precision = scorer(_Evaluation(rows), metadatas, [args.k] * len(rows))
        ref = {"recall": 100 * statistics.fmean(recall), "precision": 100 * statistics.fmean(precision),
               "iou": 100 * statistics.fmean(iou)}
        row = {"profile": summary["profile"], "n_questions": len(rows)}
        for metric in ("recall", "precision", "iou"):
            row[f"{metric}_ours"] = summary[metric]
            row[f"{metric}_reference"] = round(ref[metric], 2)
            row[f"{metric}_gap"] = round(abs(summary[metric] - ref[metric]), 2)
        row["within_1_5_points"] = row["recall_gap"] <= 1.5 and row["iou_gap"] <= 1.5
        out.append(row)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"{'profile':<18}{'metric':<11}{'ours':>8}{'report':>8}{'gap':>7}")
    for row in out:
        for metric in ("recall", "precision", "iou"):
            print(f"{row['profile']:<18}{metric:<11}{row[metric + '_ours']:>8}{row[metric + '_reference']:>8}"
                  f"{row[metric + '_gap']:>7}")
        print(f"{'':<18}within 1.5 points on recall and IoU: {row['within_1_5_points']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
