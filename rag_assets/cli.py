"""The ``rag`` command line: ingest documents through the Dagster asset graph, then query them.

Exit codes: 0 success, 1 some documents failed, 2 bad usage or config.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from pathlib import Path

EXAMPLES = """examples:
  rag ingest                      ingest every corpus (only changed documents are processed)
  rag ingest --json               the same, printing one JSON object of counts
  rag query "what is the refund policy?" --k 3
  rag query "error E-217" --json
"""


def _prepare_instance(dagster_home: str) -> None:
    """Use the project's Dagster instance (shared with `dagster dev`), telemetry off."""
    home = Path(os.environ.setdefault("DAGSTER_HOME", dagster_home))
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists():
        config.write_text("telemetry:\n  enabled: false\n")


def cmd_ingest(args) -> int:
    from rag_assets.config import load_project
    from rag_assets.ingest import ingest_project

    project = load_project(args.project)
    _prepare_instance(project.dagster_home)
    report = ingest_project(project, corpora=args.corpus, progress=None if args.json else sys.stderr)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(
            f"documents seen {report['documents_seen']}, changed {report['documents_changed']}, "
            f"deleted {report['documents_deleted']}, failed {report['documents_failed']}; "
            f"chunks embedded {report['chunks_embedded']}; rows in index {report['rows_in_index']}"
        )
        for failure in report["failures"]:
            print(f"  FAILED {failure['corpus']}/{failure['doc_id']}: {failure['error']}", file=sys.stderr)
    return 1 if report["documents_failed"] else 0


def cmd_query(args) -> int:
    from rag_assets.config import load_project
    from rag_assets.query import query_corpus

    project = load_project(args.project)
    corpus = project.corpus(args.corpus) if args.corpus else project.corpora[0]
    hits = query_corpus(corpus, args.text, k=args.k)
    if args.json:
        print(json.dumps([h.to_dict() for h in hits], indent=2, ensure_ascii=False))
        return 0
    if not hits:
        print("no results (has the corpus been ingested? run: rag ingest)")
        return 0
    for rank, hit in enumerate(hits, start=1):
        snippet = " ".join(hit.text.split())
        print(f"[{rank}] score {hit.score:.3f}  {hit.citation()}")
        print(f"    {snippet[:300]}{'...' if len(snippet) > 300 else ''}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rag", description="Ingest documents into a LanceDB index with Dagster, and query it.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--project", help="config project folder (default: $RAG_PROJECT_DIR or dbt_like_configs/)")
    sub = parser.add_subparsers(dest="command", required=True)

    ingest = sub.add_parser("ingest", help="materialise new and changed documents; remove deleted ones")
    ingest.add_argument("--corpus", action="append", help="only this corpus (repeatable)")
    ingest.add_argument("--json", action="store_true", help="print one JSON object of counts")
    ingest.set_defaults(func=cmd_ingest)

    query = sub.add_parser("query", help="top chunks for a question, with citations")
    query.add_argument("text", help="the question")
    query.add_argument("--k", type=int, default=5, help="number of results (default 5)")
    query.add_argument("--corpus", help="corpus to search (default: the first declared)")
    query.add_argument("--json", action="store_true", help="print a JSON list of results")
    query.set_defaults(func=cmd_query)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # Dagster marks data versions as beta; that is not news to a `rag` user on every document.
    warnings.filterwarnings("ignore", message=".*currently in beta.*")
    from rag_assets.config import ConfigError

    try:
        return args.func(args)
    except (ConfigError, KeyError) as exc:
        print(f"rag: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
