"""Answer a query against a corpus' index (no Dagster run involved)."""

from __future__ import annotations

from rag_assets.config import Corpus
from rag_assets.core.index import LanceIndex
from rag_assets.core.retrieval import Hit, vector_search
from rag_assets.defs.factory import build_corpus_resources, resource_keys


def query_corpus(corpus: Corpus, text: str, k: int = 5) -> list[Hit]:
    """Top ``k`` chunks of ``corpus`` for ``text``; empty when the corpus has no index yet."""
    keys = resource_keys(corpus.name)
    resources = build_corpus_resources(corpus)
    model = corpus.embedding_model
    db = resources[keys["lancedb"]].get_connection()
    index = LanceIndex(db, corpus.name, model.name, model.dimensions)
    if index.count_rows() == 0:
        return []
    vector = resources[keys["embedder"]].get_embedder().embed([model.query_prefix + text])[0]
    return vector_search(index, vector, k=k)
