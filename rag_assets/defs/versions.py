"""What each stage's output depends on: the corpus' chunking profile, its model's fingerprint and
the code versions Dagster compares to mark stages stale."""

from rag_assets.config.profiles import profile_from_config
from rag_assets.config.schema import Corpus
from rag_assets.core.chunking import ChunkingProfile
from rag_assets.core.hashing import settings_hash
from rag_assets.core.parsing import parser_settings


def chunking_profile(corpus: Corpus) -> ChunkingProfile:
    return profile_from_config(corpus.chunking_profile)


def model_fingerprint(corpus: Corpus) -> str:
    return corpus.embedding_model.vectors_fingerprint()


def row_labels(corpus: Corpus) -> str:
    """What the index writes on each row besides its chunk: tenant and tags."""
    return settings_hash({"tenant": corpus.source.tenant, "tenant_from_path": corpus.source.tenant_from_path,
                          "tags": list(corpus.tags)})


def code_versions(corpus: Corpus) -> dict[str, str]:
    """Each stage's code version: what it depends on, including every stage before it, so a
    change marks exactly the stages it will redo (see defs/factory.py's docstring)."""
    profile = chunking_profile(corpus)
    model = corpus.embedding_model
    parsed = parser_settings(corpus.source.ocr_languages)
    chunks = settings_hash({"parser": parsed, "profile": profile.fingerprint(), "tokenizer": model.tokenizer,
                            "limit": model.chunk_token_limit})
    embeddings = settings_hash({"chunks": chunks, "model": model_fingerprint(corpus)})
    # The URI as declared (a relative one is relative to the config folder), never the resolved
    # path: a project moved or cloned elsewhere with its data keeps its index current.
    index = settings_hash({"embeddings": embeddings, "uri": corpus.index.uri, "model": model.name,
                           "labels": row_labels(corpus)})
    return {"parsed_documents": parsed, "chunks": chunks, "embeddings": embeddings, "lancedb_index": index,
            # The table as a whole follows which model's and profile's table the corpus builds: after a
            # switch or rename the UI shows it unsynced until maintenance decides which table serves.
            "lancedb_table": settings_hash({"index": corpus.index.model_dump(), "model": model.name,
                                            "profile": corpus.chunking_profile.name})}
