"""Are concurrent LanceDB commits to one table on an S3-compatible server safe? Several processes
upsert disjoint batches (merge_insert, as the index stage does) into one table on a real SeaweedFS
server at the same time; the table must end with every row exactly once and one version per commit.

    .venv/bin/python benchmarks/lance_concurrent_commits.py [--writers 3] [--commits 30] [--rows 50] [--json]

Lance commits a new manifest with a conditional PUT (put-if-absent); a server that ignored the
condition would let two writers claim one version and silently drop a batch (fewer rows, fewer
versions than commits).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

KEY, SECRET = "bench-key", "bench-secret"


def _options(endpoint: str) -> dict[str, str]:
    return {"aws_endpoint": endpoint, "allow_http": "true", "aws_region": "us-east-1",
            "aws_access_key_id": KEY, "aws_secret_access_key": SECRET}


def _writer(endpoint: str, writer: int, commits: int, rows: int, barrier, errors) -> None:
    import lancedb
    import pyarrow as pa

    table = lancedb.connect("s3://bench/db", storage_options=_options(endpoint)).open_table("t")
    barrier.wait()
    for commit in range(commits):
        data = pa.Table.from_pylist([{"id": f"w{writer}-c{commit}-{i}", "v": float(i)} for i in range(rows)])
        try:
            table.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(data)
        except Exception as exc:  # a refused commit is an error the caller sees, not a silent loss
            errors.put(f"writer {writer} commit {commit}: {type(exc).__name__}: {exc}"[:300])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=3)
    parser.add_argument("--commits", type=int, default=30, help="commits per writer")
    parser.add_argument("--rows", type=int, default=50, help="rows per commit")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    import boto3
    import lancedb
    import pyarrow as pa

    from tests.support.seaweed import seaweed_s3

    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory() as tmp, seaweed_s3(Path(tmp) / "seaweed", KEY, SECRET) as endpoint:
        boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=KEY, aws_secret_access_key=SECRET,
                     region_name="us-east-1").create_bucket(Bucket="bench")
        db = lancedb.connect("s3://bench/db", storage_options=_options(endpoint))
        db.create_table("t", schema=pa.schema([("id", pa.string()), ("v", pa.float64())]))
        barrier, errors = ctx.Barrier(args.writers), ctx.Queue()
        procs = [ctx.Process(target=_writer, args=(endpoint, w, args.commits, args.rows, barrier, errors))
                 for w in range(args.writers)]
        started = time.perf_counter()
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join(600)
        seconds = time.perf_counter() - started
        table = db.open_table("t")
        ids = table.to_arrow().column("id").to_pylist()
        failed = []
        while not errors.empty():
            failed.append(errors.get())
        result = {"writers": args.writers, "commits": args.writers * args.commits,
                  "rows_expected": args.writers * args.commits * args.rows, "rows": len(ids),
                  "unique_rows": len(set(ids)), "table_versions": table.version - 1, "errors": failed,
                  "seconds": round(seconds, 1)}
    safe = (result["rows"] == result["unique_rows"] == result["rows_expected"]
            and result["table_versions"] == result["commits"] and not failed)
    result["safe"] = safe
    print(json.dumps(result) if args.json else
          f"{result['writers']} writers, {result['commits']} commits: {result['rows']} rows "
          f"({result['unique_rows']} unique) of {result['rows_expected']}, {result['table_versions']} versions, "
          f"{len(failed)} errors, {result['seconds']}s: {'safe' if safe else 'NOT SAFE'}")
    return 0 if safe else 1


if __name__ == "__main__":
    sys.exit(main())
