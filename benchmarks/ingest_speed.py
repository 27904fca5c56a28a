"""How close `rag ingest` runs to the speed of its embedder, and how fast queries answer.

    .venv/bin/python benchmarks/ingest_speed.py --docs 1000 [--format md|html|docx|scan] [--peer] [--model NAME] [--json]

Documents are generated as benchmarks/incremental.py does (seed 7), as Markdown, HTML pages,
Word files or scanned PDFs (``--format html``, ``docx`` or ``scan``: parsed in the bounded parse
worker, as every rich format is, a scan by OCR; ``--peer`` reads Markdown only).
Measured, in this process:

- ``full_s``: the first ``ingest_project`` (sweep, observations, Dagster runs, maintenance);
- ``noop_s``: the same again with nothing changed;
- ``embed_floor_s``: the same embedder object embedding the same (distinct) embedded texts,
  once, with nothing around it; ``ratio_to_floor`` = full_s / embed_floor_s;
- ``events_per_document``: event-log entries Dagster stored during the full ingest, per document;
- ``query_p50_ms``: median of in-process ``query_corpus`` calls per mode, after one warm-up;
- ``query_cli_s``: median wall time of 5 whole ``rag query ... --json`` processes;
- ``peer_full_s`` (``--peer``): a LlamaIndex IngestionPipeline (docstore with upserts, ingestion
  cache, LanceDB vector store) over the same files, chunked by the same chunker, embedding with
  the same embedder object (install the ``bench`` extra).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
warnings.filterwarnings("ignore", message=".*currently in beta.*")

import random  # noqa: E402


from benchmarks.incremental import bench_project  # noqa: E402

QUERIES = ["how do I reset the robot dock firmware", "refund policy for a broken battery",
           "shipping and return of an order", "cleaning schedule for each room", "suction sensor update"]
IN_PROCESS_REPEATS = 20
CLI_REPEATS = 5


def embedded_texts(texts: dict[str, str], project) -> list[str]:
    """The distinct texts the pipeline embeds (passage prefix included), in document order."""
    corpus = project.corpus("bench")
    prefix = corpus.embedding_model.passage_prefix
    from rag_assets.config.profiles import profile_from_config
    from rag_assets.core.chunking import chunk_document
    from rag_assets.core.hashing import content_hash
    from rag_assets.core.models import RawDocument
    from rag_assets.core.parsing import parse_document
    from rag_assets.core.tokens import get_token_counter

    profile = profile_from_config(corpus.chunking_profile)
    counter = get_token_counter(corpus.embedding_model.tokenizer)
    out: dict[str, None] = {}
    for doc_id, text in texts.items():
        data = text if isinstance(text, bytes) else text.encode()
        doc = parse_document(RawDocument(doc_id, "", content_hash(data), len(data), "", data))
        for chunk in chunk_document(doc, profile, counter, corpus.embedding_model.max_input_tokens).chunks:
            out.setdefault(prefix + chunk.embed_text)
    return list(out)


def stored_events() -> int:
    import dagster as dg

    with dg.DagsterInstance.get() as instance:
        return instance.event_log_storage.get_maximum_record_id() or 0


def query_p50s(project) -> dict[str, float]:
    from rag_assets.query import query_corpus

    corpus = project.corpus("bench")
    out = {}
    for mode in ("vector", "fts", "hybrid"):
        query_corpus(project, corpus, QUERIES[0], mode=mode)  # warm-up: opens the table, loads the model
        times = []
        for n in range(IN_PROCESS_REPEATS):
            start = time.perf_counter()
            hits = query_corpus(project, corpus, QUERIES[n % len(QUERIES)], mode=mode)
            times.append(time.perf_counter() - start)
            assert hits, f"{mode} query found nothing"
        out[mode] = round(statistics.median(times) * 1000, 1)
    return out


def query_cli_s() -> float:
    rag = Path(sys.executable).parent / "rag"
    times = []
    for n in range(CLI_REPEATS):
        start = time.perf_counter()
        done = subprocess.run([str(rag), "query", QUERIES[n % len(QUERIES)], "--json"], capture_output=True,
                              text=True, env=os.environ)
        times.append(time.perf_counter() - start)
        if done.returncode != 0 or not json.loads(done.stdout):
            raise SystemExit(f"rag query failed ({done.returncode}): {done.stderr[-2000:]}")
    return round(statistics.median(times), 3)


def peer_full_s(texts: dict[str, str], project, embedder, root: Path) -> float:
    """LlamaIndex's IngestionPipeline over the same files: same chunker, same embedder object."""
    from llama_index.core import SimpleDirectoryReader
    from llama_index.core.embeddings import BaseEmbedding
    from llama_index.core.ingestion import DocstoreStrategy, IngestionCache, IngestionPipeline
    from llama_index.core.schema import TextNode, TransformComponent
    from llama_index.core.storage.docstore import SimpleDocumentStore
    from llama_index.vector_stores.lancedb import LanceDBVectorStore

    from rag_assets.config.profiles import profile_from_config
    from rag_assets.core.chunking import chunk_document
    from rag_assets.core.hashing import content_hash
    from rag_assets.core.models import RawDocument
    from rag_assets.core.parsing import parse_document
    from rag_assets.core.tokens import get_token_counter

    corpus = project.corpus("bench")
    model = corpus.embedding_model
    profile = profile_from_config(corpus.chunking_profile)
    counter = get_token_counter(model.tokenizer)

    class SameChunker(TransformComponent):
        def __call__(self, nodes, **kwargs):
            out = []
            for node in nodes:
                data = node.text.encode()
                doc_id = node.metadata["file_name"]
                doc = parse_document(RawDocument(doc_id, "", content_hash(data), len(data), "", data))
                for chunk in chunk_document(doc, profile, counter, model.max_input_tokens).chunks:
                    out.append(TextNode(text=model.passage_prefix + chunk.embed_text, ref_doc_id=node.id_))
            return out

    class SameEmbedder(BaseEmbedding):
        def _get_text_embeddings(self, batch):
            return embedder.embed(batch)

        def _get_text_embedding(self, text):
            return embedder.embed([text])[0]

        def _get_query_embedding(self, query):
            return embedder.embed([query])[0]

        async def _aget_query_embedding(self, query):
            return self._get_query_embedding(query)

    docs_dir = Path(os.environ["RAG_SAMPLE_DOCS"])
    start = time.perf_counter()
    documents = SimpleDirectoryReader(str(docs_dir), filename_as_id=True).load_data()
    pipeline = IngestionPipeline(
        transformations=[SameChunker(), SameEmbedder(embed_batch_size=model.batch_size)],
        docstore=SimpleDocumentStore(), docstore_strategy=DocstoreStrategy.UPSERTS, cache=IngestionCache(),
        vector_store=LanceDBVectorStore(uri=str(root / "peer_lancedb"), table_name="peer"))
    pipeline.run(documents=documents)
    return round(time.perf_counter() - start, 3)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--format", choices=("md", "html", "docx", "scan"), default="md", help="write the documents as")
    parser.add_argument("--peer", action="store_true", help="also time LlamaIndex's IngestionPipeline")
    parser.add_argument("--model", help="embedding model of profiles/embedding_models.yml (default: the project's)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.peer and args.format != "md":
        parser.error("--peer reads the documents with LlamaIndex's SimpleDirectoryReader: use it with --format md")
    root = Path(tempfile.mkdtemp(prefix="rag-ingest-speed-"))
    try:
        texts = bench_project(root, args.docs, random.Random(args.seed), args.model, args.format)
        from rag_assets.cli import _prepare_instance
        from rag_assets.config import load_project
        from rag_assets.ingest import ingest_project

        project = load_project()
        _prepare_instance(project.dagster_home)  # the instance config `rag` itself writes
        start = time.perf_counter()
        report = ingest_project(project)
        full = time.perf_counter() - start
        if report["documents_failed"]:
            raise SystemExit(f"full ingest failed: {report['failures'][:3]}")
        events = stored_events()
        start = time.perf_counter()
        ingest_project(project)
        noop = time.perf_counter() - start

        from rag_assets.clients import open_embedder

        embedder = open_embedder(project.corpus("bench").embedding_model)
        floor_texts = embedded_texts(texts, project)
        start = time.perf_counter()
        embedder.embed(floor_texts)
        floor = time.perf_counter() - start

        result = {
            "docs": args.docs, "format": args.format, "model": project.corpus("bench").embedding_model.name, "chunks": report["rows_in_index"],
            "full_s": round(full, 3), "noop_s": round(noop, 3),
            "embed_floor_s": round(floor, 3), "ratio_to_floor": round(full / floor, 2),
            "events_per_document": round(events / args.docs, 2),
            "peer_full_s": peer_full_s(texts, project, embedder, root) if args.peer else None,
            "query_p50_ms": query_p50s(project), "query_cli_s": query_cli_s(),
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(result, indent=2 if args.json else None))
    return 0


if __name__ == "__main__":
    sys.exit(main())
