"""The Dagster resources of a corpus, built from its config."""

import dagster as dg
from dagster_aws.s3 import S3Resource

from rag_assets.clients import own_table
from rag_assets.config.schema import Corpus
from rag_assets.core.index import LanceIndex
from rag_assets.defs.names import resource_keys
from resources import (DiskSourceResource, EmbedderResource, LanceDBResource, S3SourceResource, StageStoreResource,
                       WebSourceResource)


class CorpusResources:
    """A corpus' resources by role, typed: Dagster holds them under per-corpus keys
    (``names.resource_keys``) of a context's ``resources``."""

    def __init__(self, resources, corpus: Corpus):
        self._resources, self._keys, self._corpus = resources, resource_keys(corpus.name), corpus

    @property
    def source(self) -> DiskSourceResource | S3SourceResource | WebSourceResource:
        return getattr(self._resources, self._keys["source"])

    @property
    def embedder(self) -> EmbedderResource:
        return getattr(self._resources, self._keys["embedder"])

    @property
    def lancedb(self) -> LanceDBResource:
        return getattr(self._resources, self._keys["lancedb"])

    @property
    def store(self) -> StageStoreResource:
        return getattr(self._resources, self._keys["store"])

    def index(self) -> LanceIndex:
        """The corpus' table for its embedding model and chunking profile, on the lancedb resource's connection."""
        return own_table(self._corpus).index(self.lancedb.get_connection(), self._corpus.name)


def _s3_settings(location) -> dict:
    """Endpoint, region, limits and, where the config names their variables, keys via dg.EnvVar."""
    keys = {}
    if location.access_key_env and location.secret_key_env:
        keys = {"aws_access_key_id": dg.EnvVar(location.access_key_env),
                "aws_secret_access_key": dg.EnvVar(location.secret_key_env)}
    return {"endpoint_url": location.endpoint_url, "region": location.region,
            "connect_timeout_seconds": location.connect_timeout_seconds,
            "read_timeout_seconds": location.read_timeout_seconds, "max_attempts": location.max_attempts, **keys}


def lancedb_resource(corpus: Corpus) -> LanceDBResource:
    """The corpus' index (on disk, or on S3 with the index profile's settings)."""
    return LanceDBResource(uri=corpus.index_uri, **_s3_settings(corpus.index))


def stage_store_resource(corpus: Corpus, root: str | None = None) -> StageStoreResource:
    """The corpus' stage store (a folder, or on S3 with data_dir_s3's settings); with ``root``,
    that folder or prefix of the same data dir instead."""
    return StageStoreResource(root=root or corpus.stage_store, **_s3_settings(corpus.stage_store_s3))


def source_resource(corpus: Corpus) -> DiskSourceResource | S3SourceResource | WebSourceResource:
    """The resource that lists and reads the corpus' documents (its keys, or a site's Authorization
    header, from the environment variables sources.yml names, through dg.EnvVar)."""
    source = corpus.source
    if source.kind == "disk":
        return DiskSourceResource(root=corpus.source_root or "", include=list(source.include),
                                  exclude=list(source.exclude), max_document_bytes=source.max_document_bytes,
                                  root_env=list(corpus.source_env))
    if source.kind == "web":
        return WebSourceResource(
            name=source.name, sitemap=source.sitemap or "", include=list(source.include),
            exclude=list(source.exclude), max_document_bytes=source.max_document_bytes,
            authorization=dg.EnvVar(source.auth_header_env) if source.auth_header_env else None,
            authorization_env=f"${source.auth_header_env}" if source.auth_header_env else "",
            connect_timeout_seconds=source.connect_timeout_seconds, read_timeout_seconds=source.read_timeout_seconds,
            max_attempts=source.max_attempts)
    return S3SourceResource(
        s3=S3Resource(endpoint_url=source.endpoint_url, region_name=source.region,
                      aws_access_key_id=dg.EnvVar(source.access_key_env),
                      aws_secret_access_key=dg.EnvVar(source.secret_key_env), max_attempts=source.max_attempts),
        name=source.name, bucket=source.bucket or "", prefix=source.prefix, include=list(source.include),
        exclude=list(source.exclude), max_document_bytes=source.max_document_bytes,
        credentials=f"${source.access_key_env} and ${source.secret_key_env}",
        connect_timeout_seconds=source.connect_timeout_seconds, read_timeout_seconds=source.read_timeout_seconds,
    )


def build_corpus_resources(corpus: Corpus) -> dict[str, dg.ConfigurableResource]:
    keys = resource_keys(corpus.name)
    model = corpus.embedding_model
    return {
        keys["source"]: source_resource(corpus),
        keys["embedder"]: EmbedderResource(
            **model.embedder_settings(), api_key=dg.EnvVar(model.api_key_env) if model.provider == "openai" else None),
        keys["lancedb"]: lancedb_resource(corpus),
        keys["store"]: stage_store_resource(corpus),
    }
