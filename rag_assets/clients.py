"""Dagster-free constructors of a corpus' clients: its embedding model and its LanceDB. `rag
query`, `rag eval`, `rag restore` and the retrieval_eval asset open what they use here, without
building the Dagster resources of the corpus."""

from __future__ import annotations

import os
from functools import lru_cache
from typing import NamedTuple

from rag_assets.config.schema import ChunkingProfileConfig, Corpus, EmbeddingModelConfig
from rag_assets.core.embedding import Embedder, LocalMiniLMEmbedder, build_embedder, local_embedder
from rag_assets.core.index import LanceIndex
from rag_assets.core.lance_connect import connect, storage_options


class CorpusTable(NamedTuple):
    """A table of a corpus: the embedding model and the chunking profile that build it."""

    model: EmbeddingModelConfig
    profile: ChunkingProfileConfig

    def index(self, db, corpus: str) -> LanceIndex:
        return LanceIndex(db, corpus, self.model.name, self.model.dimensions, self.profile.name)

    @property
    def label(self) -> str:
        return f"{self.model.name} / {self.profile.name}"


def own_table(corpus: Corpus) -> CorpusTable:
    """The table the corpus' configured model and profile build."""
    return CorpusTable(corpus.embedding_model, corpus.chunking_profile)


@lru_cache(maxsize=8)
def open_embedder(model: EmbeddingModelConfig) -> Embedder:
    """The embedder of ``model``, built once per process by the constructor the Dagster resource
    calls (an openai model reads its key from the variable ``api_key_env`` names)."""
    api_key = os.environ.get(model.api_key_env) if model.provider == "openai" else None
    return build_embedder(**model.embedder_settings(), api_key=api_key)


def late_interaction_model() -> LocalMiniLMEmbedder:
    """The bundled MiniLM whose token vectors a profile's ``late_interaction_weight`` scores with:
    the offline default embedder's own session (its settings as embedding_models.yml ships them)."""
    return local_embedder("all-MiniLM-L6-v2", "auto", 32)


def connect_index(corpus: Corpus):
    """The corpus' LanceDB, opened once per process with the options the Dagster resource uses."""
    index = corpus.index
    keys = [os.environ.get(index.access_key_env or "", ""), os.environ.get(index.secret_key_env or "", "")]
    options = storage_options(corpus.index_uri, index.endpoint_url, index.region, *keys,
                              connect_timeout_seconds=index.connect_timeout_seconds,
                              read_timeout_seconds=index.read_timeout_seconds, max_attempts=index.max_attempts)
    return _database(corpus.index_uri, tuple(sorted((options or {}).items())))


@lru_cache(maxsize=8)
def _database(uri: str, options: tuple[tuple[str, str], ...]):
    return connect(uri, dict(options) or None)
