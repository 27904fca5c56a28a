"""Retrieval quality of the shipped profiles on the shared Chroma corpora (or your own CSV).

    .venv/bin/python benchmarks/retrieval_quality.py [--questions CSV] [--corpora DIR]
        [--profile NAME ...] [--mode vector|hybrid] [--json]

Runs `rag eval` in-process with the offline MiniLM embedder and prints one row per profile; the
report's baselines (fixed_200_0, fixed_250_125, recursive_200_0, recursive_400_0) are the
reference measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from rag_assets.config import load_project  # noqa: E402
from rag_assets.evaluate import evaluate  # noqa: E402

SHARED = REPO.parent / "shared" / "benchmarks" / "chroma_chunking_eval"
BASELINES = ["fixed_200_0", "fixed_250_125", "recursive_200_0", "recursive_400_0"]
OURS = ["recommended", "default", "markdown", "sentence_window", "semantic"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=Path, default=SHARED / "questions.csv")
    parser.add_argument("--corpora", type=Path, default=SHARED / "corpora")
    parser.add_argument("--profile", action="append", help="profiles (default: baselines and ours)")
    parser.add_argument("--mode", choices=["vector", "hybrid"], default="vector")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not args.questions.exists():
        print(f"{args.questions} not found: pass --questions and --corpora", file=sys.stderr)
        return 2
    rows = evaluate(load_project(), args.questions, args.profile or BASELINES + OURS, corpora=args.corpora,
                    mode=args.mode, k=args.k, progress=None if args.json else sys.stderr)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    best_recall = max(r["recall"] for r in rows if r["profile"] in BASELINES) if any(
        r["profile"] in BASELINES for r in rows) else None
    best_iou = max(r["iou"] for r in rows if r["profile"] in BASELINES) if best_recall is not None else None
    print(f"{'profile':<20}{'chunks':>7}{'tokens':>8}{'recall':>8}{'iou':>7}{'prec':>7}{'prec_w':>8}{'R@5':>7}{'MRR':>7}"
          "  vs best baseline (recall, iou)")
    for r in rows:
        delta = "" if best_recall is None else f"  {r['recall'] - best_recall:+.1f}, {r['iou'] - best_iou:+.1f}"
        print(f"{r['profile']:<20}{r['chunks']:>7}{r['mean_tokens']:>8}{r['recall']:>8}{r['iou']:>7}"
              f"{r['precision']:>7}{str(r['precision_omega']):>8}{r['recall_at_5']:>7}{r['mrr']:>7}{delta}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
