"""Chunking speed against the floor of one tiktoken pass over the same text.

    .venv/bin/python benchmarks/chunk_speed.py [--corpus DIR] [--max-tokens 400] [--runs 15] [--json]

For each chunker: median seconds over --runs passes over all corpus files, the ratio to the floor
(one ``encode_ordinary`` pass over the same text, timed in the same process), the chunk count and
the chunks over the limit (recounted with cl100k_base). chonkie, semchunk and
langchain-text-splitters are timed too where installed (``pip install -e '.[bench]'``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
DEFAULT_CORPUS = REPO.parent / "shared" / "benchmarks" / "chroma_chunking_eval" / "corpora"

from rag_assets.core.chunking.text import FixedTokenChunker, RecursiveChunker  # noqa: E402
from rag_assets.core.tokens import get_token_counter  # noqa: E402


def median_seconds(fn, runs: int) -> float:
    fn()  # warm caches (vocabulary tables, regexes) outside the timing
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def peers(max_tokens: int, counter):
    """Chunk functions of installed peer libraries: name -> fn(text) -> list[str]. Each call
    builds a fresh chunker with memoisation off, so repeated runs cannot replay cached counts."""
    enc = counter._enc
    found = {}
    try:
        from chonkie import RecursiveChunker as ChonkieRecursive, TokenChunker as ChonkieToken

        found["chonkie.recursive"] = lambda t: [c.text for c in ChonkieRecursive(tokenizer=enc, chunk_size=max_tokens).chunk(t)]
        found["chonkie.token"] = lambda t: [c.text for c in ChonkieToken(tokenizer=enc, chunk_size=max_tokens, chunk_overlap=0).chunk(t)]
    except Exception:  # not installed, or an API it no longer has
        pass
    try:
        import semchunk

        found["semchunk"] = lambda t: semchunk.chunkerify(lambda x: len(enc.encode_ordinary(x)), max_tokens, memoize=False)(t)
    except Exception:
        pass
    try:
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        found["langchain.recursive"] = lambda t: RecursiveCharacterTextSplitter.from_tiktoken_encoder(
            encoding_name="cl100k_base", chunk_size=max_tokens, chunk_overlap=0
        ).split_text(t)
    except Exception:
        pass
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="folder of .md/.txt files")
    parser.add_argument("--max-tokens", type=int, default=400)
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    files = sorted([*args.corpus.glob("*.md"), *args.corpus.glob("*.txt")])
    if not files:
        print(f"no .md or .txt files in {args.corpus} (pass --corpus DIR)", file=sys.stderr)
        return 2
    texts = [f.read_text(encoding="utf-8") for f in files]
    counter = get_token_counter("cl100k_base")
    enc = counter._enc
    floor = median_seconds(lambda: [enc.encode_ordinary(t) for t in texts], args.runs)

    ours = {
        "rag_assets.fixed": FixedTokenChunker(args.max_tokens, 0, counter),
        "rag_assets.recursive": RecursiveChunker(args.max_tokens, 0, counter),
    }
    rows = [{"name": "floor.encode_ordinary", "median_s": floor, "ratio_to_floor": 1.0, "chunks": None, "over_limit": None}]
    # Ours are timed before any peer library is imported (their imports can start threads).
    candidates = {name: (lambda t, c=chunker: [t[s.start : s.end] for s in c.chunk(t)]) for name, chunker in ours.items()}
    measure(candidates, texts, args, enc, floor, rows)
    measure(peers(args.max_tokens, counter), texts, args, enc, floor, rows)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{len(files)} files, {sum(map(len, texts)):,} chars, {args.max_tokens} cl100k tokens per chunk, "
          f"median of {args.runs} runs")
    print(f"{'chunker':<24}{'median s':>10}{'x floor':>9}{'chunks':>8}{'over':>6}")
    for row in rows:
        chunks = "" if row["chunks"] is None else row["chunks"]
        over = "" if row["over_limit"] is None else row["over_limit"]
        print(f"{row['name']:<24}{row['median_s']:>10.4f}{row['ratio_to_floor']:>9.2f}{chunks:>8}{over:>6}")
    return 0


def measure(candidates, texts, args, enc, floor, rows) -> None:
    """Time each candidate interleaved with the floor (floor, candidate, floor, ...), so drift in
    the machine's speed hits both alike; the ratio is median(candidate) / median(floor)."""
    floor_fn = lambda: [enc.encode_ordinary(t) for t in texts]  # noqa: E731
    for name, fn in candidates.items():
        run = lambda: [fn(t) for t in texts]  # noqa: E731
        run()
        floor_times, times = [], []
        for _ in range(args.runs):
            for bucket, f in ((floor_times, floor_fn), (times, run)):
                start = time.perf_counter()
                f()
                bucket.append(time.perf_counter() - start)
        seconds = statistics.median(times)
        chunks = [c for t in texts for c in fn(t)]
        over = sum(1 for c in chunks if len(enc.encode_ordinary(c)) > args.max_tokens)
        rows.append({"name": name, "median_s": seconds, "ratio_to_floor": seconds / statistics.median(floor_times),
                     "chunks": len(chunks), "over_limit": over})


if __name__ == "__main__":
    sys.exit(main())
