"""`rag eval`: chunk, embed into a temporary index and score each profile side by side.

Embeddings go through a persistent cache (``<data_dir>/eval_cache``, or the Dagster home's when
data_dir is on S3; keyed by embedded text and by the model's name and vector settings), so
comparing profiles re-embeds only the chunks that differ between them.
"""

from __future__ import annotations

import codecs
import statistics
import tempfile
from contextlib import contextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Callable, Iterator, TextIO

from rag_assets.clients import open_embedder
from rag_assets.config import Corpus, Project
from rag_assets.config.profiles import profile_from_config
from rag_assets.core.chunking import chunk_document
from rag_assets.core.embed_cache import SLICE, EmbeddingCache
from rag_assets.core.embedding import chunk_inputs, chunk_vectors
from rag_assets.core.errors import UsageError
from rag_assets.core.evaluation import (RECALL_AT, Question, Retrieved, Scores, brings_its_texts, in_shown_text,
                                        load_questions, precision_omega, question_set_corpus, shown_offsets)
from rag_assets.core.hashing import content_hash, text_hash
from rag_assets.core.index import LanceIndex
from rag_assets.core.lance_connect import connect
from rag_assets.core.models import EmbeddedDocument, RawDocument
from rag_assets.core.parsing import DocumentError, parse_document
from rag_assets.core.parsing.decode import decode_text
from rag_assets.core.pipeline import keyed_chunks, stored_vectors
from rag_assets.core.retrieval import MAX_RESULTS, Filters
from rag_assets.core.sources import list_disk, read_disk, tenant_folders_only, tenant_of
from rag_assets.core.store import StageStore
from rag_assets.core.tokens import get_token_counter
from rag_assets.progress import Progress
from rag_assets.query import retrieve


def _documents(corpus: Corpus, questions: list[Question], questions_path: Path,
               corpora: Path | None, source=None, store: StageStore | None = None
               ) -> tuple[dict, dict[str, str], list[Question], set[str]]:
    """doc id -> parsed document, for the corpora the questions are about; doc id -> cause for the
    corpus' documents that cannot be parsed (left out, as an ingest leaves them out); and the
    questions, a Chroma-format set's references moved from its corpus files' text into their parsed
    text (which leaves out what a page does not show: a Markdown rule, a comment); and the ids of
    the documents taken from the corpus' ``store``: a listed document is taken as the pipeline last
    parsed it (its current parse, or the failure it recorded), read and parsed only where the store
    has neither."""
    if brings_its_texts(questions_path):
        folder = corpora or questions_path.parent / "corpora"
        docs = {}
        for corpus_id in sorted({q.corpus_id for q in questions}):
            path = next((p for p in (folder / f"{corpus_id}.md", folder / f"{corpus_id}.txt") if p.exists()), None)
            if path is None:
                raise FileNotFoundError(f"no {corpus_id}.md or .txt in {folder}: pass --corpora DIR")
            data = path.read_bytes()
            # parsed by its file name (a .md corpus as Markdown, as an ingest reads it), cited by corpus id
            parsed = parse_document(RawDocument(path.name, path.resolve().as_uri(), content_hash(data), len(data), "eval",
                                                 data))
            docs[corpus_id] = replace(parsed, doc_id=corpus_id)
            # the spans index the file's text as Python reads it: its UTF-8 BOM is a character there
            text = "\ufeff" * data.startswith(codecs.BOM_UTF8) + decode_text(data)[0]
            for question in questions:  # a span past the text would score as a miss, silently
                for ref in question.references if question.corpus_id == corpus_id else ():
                    if ref.end > len(text):
                        raise ValueError(f"{questions_path}: question {question.question[:80]!r} references characters "
                                         f"{ref.start}-{ref.end} of {corpus_id!r}, whose text has {len(text)}: the "
                                         "spans must index that corpus file's text (is it the right file?)")
            questions = in_shown_text(questions, corpus_id, shown_offsets(text, parsed.text))
        return docs, {}, questions, set()
    if source is not None:
        refs, read = source.list_documents(), source.read
    elif corpus.source.kind == "disk":
        refs = list_disk(corpus.source_root, corpus.source.include, corpus.source.exclude, corpus.source_env)
        read = partial(read_disk, corpus.source_root)
    else:
        raise UsageError(f"corpus {corpus.name!r} reads {corpus.source.kind}: pass its source resource to evaluate")
    if corpus.source.tenant_from_path:  # a document at the root has no tenant: ingest refuses it
        refs = tenant_folders_only(refs)
    docs, failed, stored = {}, {}, set()
    for ref in refs:
        if ref.refused:
            continue
        record = store.current("parsed", ref.doc_id) if store is not None else None
        if record is not None and record.get("error"):
            failed[ref.doc_id] = record["error"]
            continue
        parsed = store.load("parsed", record["key"]) if record is not None else None
        if parsed is not None:
            docs[ref.doc_id] = parsed
            stored.add(ref.doc_id)
            continue
        try:
            docs[ref.doc_id] = parse_document(read(ref.doc_id))
        except DocumentError as exc:
            failed[ref.doc_id] = exc.cause
    return docs, failed, questions, stored


@contextmanager
def _cache_dir(folder: Path, warnings: TextIO | None) -> Iterator[Path]:
    """``folder`` where it can be written; else a temporary folder, removed when the block ends:
    a read-only data dir costs the cache, not the evaluation."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError as exc:
        if warnings:
            print(f"[eval] warning: cannot write the embedding cache {folder} ({exc.strerror}): every text is "
                  "embedded anew", file=warnings, flush=True)
        with tempfile.TemporaryDirectory(prefix="rag-eval-cache-") as scratch:
            yield Path(scratch)
        return
    yield folder


def eval_corpus(project: Project, questions_path: str | Path) -> Corpus:
    """The corpus a question set is asked of by default: the one a YAML set names, else the first."""
    named = question_set_corpus(Path(questions_path))
    return project.corpus(named) if named else project.corpora[0]


def evaluate(project: Project, questions_path: str | Path, profiles: list[str], corpora: str | Path | None = None,
             embedder: str | None = None, mode: str = "vector", k: int = 5, progress: TextIO | None = None,
             on_question: Callable[[str, Question, dict[int, list[Retrieved]]], None] | None = None,
             corpus: Corpus | None = None, warnings: TextIO | None = None, source=None,
             store: StageStore | None = None) -> list[dict]:
    """One summary per profile: token-level recall/precision/precision-omega/IoU at ``k`` with
    bootstrap 95% intervals, recall@n for n in 1/3/5/10 (each from asking the retrieval path for n
    results, so recall@10 is not capped at ``k``), MRR over 10 results, chunk count and mean chunk
    tokens, the documents left out because they cannot be parsed (``documents_left_out``) and the
    documents questions name that the corpus does not hold (``documents_not_found``): a question
    about either scores as a miss. ``on_question(profile, question, results)`` sees every question's results by number
    asked (``results[k]`` as scored, and one list per n of RECALL_AT). ``corpus`` (default: the one
    a YAML question set names, else the project's first) gives the documents of a YAML question
    set, the default model and the search settings; its documents are read from ``source`` (its
    source resource: anything with ``list_documents()`` and ``read(doc_id)``, which an S3 source
    needs), else from its folder; with its stage ``store``, as the pipeline last parsed them
    (``_documents``), each chunked once per profile there and, where the ingest embedded those
    chunks with ``model`` as it is now, with the vectors it stored. Warnings (documents left out
    or not found, no writable cache) go to ``warnings``, else to ``progress``."""
    questions_path = Path(questions_path)
    warnings = warnings or progress
    if not 1 <= k <= MAX_RESULTS:
        raise ValueError(f"--k must be 1 to {MAX_RESULTS}, got {k}")
    questions = load_questions(questions_path)
    declared = {p.name: p for p in project.chunking_profiles}
    unknown = [p for p in profiles if p not in declared]
    if unknown:
        raise UsageError(f"unknown profile(s) {unknown}; declared: {sorted(declared)}")
    corpus = corpus or eval_corpus(project, questions_path)
    models = {m.name: m for m in project.embedding_models}
    if embedder and embedder not in models:
        raise UsageError(f"unknown embedding model {embedder!r}; declared: {sorted(models)}")
    model = models[embedder] if embedder else corpus.embedding_model
    asked = len(questions)
    docs, failed, questions, stored = _documents(corpus, questions, questions_path, Path(corpora) if corpora else None,
                                                 source, store)
    if warnings and len(questions) < asked:
        print(f"[eval] left out {asked - len(questions)} question(s) whose references lie wholly in text the parsed "
              "page does not show (a comment, a rule, a title's underline)", file=warnings, flush=True)
    # A question about a document the corpus no longer has (renamed, deleted) scores as a miss.
    not_found = sorted({q.corpus_id for q in questions} - set(docs) - set(failed))
    if warnings:
        for doc_id, cause in failed.items():
            print(f"[eval] left out {doc_id}: {cause}", file=warnings, flush=True)
        for doc_id in not_found:
            asked = sum(q.corpus_id == doc_id for q in questions)
            print(f"[eval] warning: {asked} question(s) name {doc_id!r}, which {corpus.name!r} does not hold: they "
                  f"score as misses (fix the question set's 'document')", file=warnings, flush=True)
    settings = corpus.index  # the search settings `rag query` uses on that corpus
    counter = get_token_counter(model.tokenizer)
    with _cache_dir(Path(project.local_dir) / "eval_cache", warnings) as cache_dir:
        # Keyed by the entry's settings too: an entry changed under its name never reads its old vectors.
        cache = EmbeddingCache(connect(str(cache_dir)), f"{model.name}_{model.vectors_fingerprint()}",
                               model.dimensions)
        results = []
        embed = open_embedder(model).embed

        def vectors_for(texts: list[str], label: str) -> list[list[float]]:
            wanted = {text_hash(t): t for t in texts}
            found = cache.get_many(list(wanted))
            missing = [h for h in wanted if h not in found]
            if missing:
                bar = Progress(progress, f"[eval] {label}: embedding {len(missing)} new texts",
                               -(-len(missing) // SLICE), every=5)

                def next_slice(done: int, total: int) -> None:
                    if done < total:
                        bar.start(done // SLICE + 1)

                bar.start(1)
                cache.embed_missing(wanted, found, embed, into=found, progress=next_slice)  # embeds what is not found
                bar.finish()
            return [found[text_hash(t)] for t in texts]

        question_vectors = vectors_for([model.query_prefix + q.question for q in questions], "questions")
        # The ingest's vectors are keyed by the model's name: they are this model's while the store
        # records its settings (planning.guard_model), and the ingest refuses the name otherwise.
        same_model = store is not None and (store.current("model", model.name) or {}).get(
            "fingerprint") == model.stores_fingerprint()
        # A CSV set's texts belong to no tenant.
        tenant = tenant_of(corpus.source.tenant, corpus.source.tenant_from_path) \
            if not brings_its_texts(questions_path) else tenant_of(None, False)
        for name in profiles:
            profile = profile_from_config(declared[name])
            if progress:
                print(f"[eval] {name}: chunking {len(docs)} documents", file=progress, flush=True)
            # Semantic breakpoints embed sentences through the same cache as the chunks.
            breakpoints = partial(vectors_for, label=name)
            chunked, ingested = {}, {}
            for d, doc in docs.items():
                if d not in stored:
                    chunked[d] = chunk_document(doc, profile, counter, model.chunk_token_limit, embed=breakpoints)
                    continue
                key, chunked[d] = keyed_chunks(store, d, profile, counter, model.chunk_token_limit, embed=breakpoints)
                vectors = stored_vectors(store, key, len(chunked[d].chunks), model.name, model.passage_prefix) \
                    if same_model else None
                if vectors is not None:
                    ingested[d] = vectors.tolist()
            all_chunks = [c for ch in chunked.values() for c in ch.chunks]
            inputs = list(dict.fromkeys(t for d, ch in chunked.items() if d not in ingested
                                        for t in chunk_inputs(ch, model.passage_prefix)))
            vector_of = dict(zip(inputs, vectors_for(inputs, name)))
            with tempfile.TemporaryDirectory() as tmp:
                index = LanceIndex(connect(tmp), "eval", model.name, model.dimensions, name)
                index.write_documents([EmbeddedDocument(ch, model.name, tuple(tuple(v) for v in (
                    ingested[d] if d in ingested else chunk_vectors(ch, vector_of, model.passage_prefix))))
                    for d, ch in chunked.items()], tenant, "eval")
                if mode == "hybrid":
                    index.ensure_search_indexes(ann_min_rows=10**9)
                spans = {d: [Retrieved(d, c.start, c.end) for c in ch.chunks] for d, ch in chunked.items()}
                scores = Scores()
                wholes: dict = {}  # each document judged short or long once: the table stays as written
                bar = Progress(progress, f"[eval] {name}: questions", len(questions), every=50)
                for n, (question, vector) in enumerate(zip(questions, question_vectors), start=1):
                    bar.start(n)
                    # What a user asking for each number of results gets (merging depends on it).
                    # A tenant's user searches that tenant's documents only: the question's document's.
                    filters = Filters(doc_id=question.corpus_id if question.scoped else None,
                                      tenant=tenant(question.corpus_id))
                    # A copy's result counts for the question's document when it is that copy (also_in).
                    asked = {depth: [Retrieved(question.corpus_id if question.corpus_id in h.also_in else h.doc_id,
                                               h.start, h.end, h.sections) for h in hits]
                             for depth, hits in retrieve(index, question.question, vector, declared[name], settings,
                                                         counter.count, ks=(k, *RECALL_AT), mode=mode,
                                                         filters=filters, wholes=wholes).items()}
                    omega = (precision_omega(question, spans.get(question.corpus_id, []))
                             if question.references else None)
                    scores.add(question, asked, k, omega)
                    if on_question:
                        on_question(name, question, asked)
                bar.finish()
            tokens = [c.tokens for c in all_chunks] or [0]
            results.append({"profile": name, "mode": mode, "k": k, "model": model.name, "chunks": len(all_chunks),
                            "mean_tokens": round(statistics.fmean(tokens), 1), **scores.summary(),
                            "documents_left_out": sorted(failed), "documents_not_found": not_found})
        return results
