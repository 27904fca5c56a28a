"""Answer a query against a corpus' index (no Dagster run involved; resources are built the
Dagster way so EnvVar settings resolve)."""

from __future__ import annotations

import dagster as dg

from rag_assets.config import Corpus
from rag_assets.core.index import LanceIndex
from rag_assets.core.retrieval import Hit, vector_search
from rag_assets.defs.factory import build_corpus_resources, resource_keys


def query_corpus(corpus: Corpus, text: str, k: int = 5) -> list[Hit]:
    """Top ``k`` chunks of ``corpus`` for ``text``; empty when the corpus has no index yet."""
    keys = resource_keys(corpus.name)
    model = corpus.embedding_model
    with dg.build_resources({k: r for k, r in build_corpus_resources(corpus).items()
                             if k in (keys["lancedb"], keys["embedder"])}) as resources:
        db = getattr(resources, keys["lancedb"]).get_connection()
        index = LanceIndex(db, corpus.name, model.name, model.dimensions)
        if index.count_rows() == 0:
            return []
        vector = getattr(resources, keys["embedder"]).get_embedder().embed([model.query_prefix + text])[0]
        return vector_search(index, vector, k=k)
