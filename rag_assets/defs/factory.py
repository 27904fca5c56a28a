"""Generate one asset graph per corpus: raw -> parsed -> chunks -> embeddings -> LanceDB index."""


import statistics

import dagster as dg

from rag_assets.config.schema import Corpus, Project
from rag_assets.config.profiles import profile_from_config
from rag_assets.core.chunking import ChunkingProfile, chunk_document
from rag_assets.core.hashing import settings_hash
from rag_assets.core.index import LanceIndex
from rag_assets.core.keys import doc_id_for
from rag_assets.core.models import ChunkedDocument, EmbeddedDocument, ParsedDocument, RawDocument
from rag_assets.core.parsing import DocumentError, parse_document, parser_version
from resources import DiskSourceResource, EmbedderResource, LanceDBResource


def partitions_name(corpus: str) -> str:
    return f"{corpus}_documents"


def ingest_job_name(corpus: str) -> str:
    return f"ingest_{corpus}"


def resource_keys(corpus: str) -> dict[str, str]:
    return {"source": f"{corpus}_source", "embedder": f"{corpus}_embedder", "lancedb": f"{corpus}_lancedb"}


def chunking_profile(corpus: Corpus) -> ChunkingProfile:
    return profile_from_config(corpus.chunking_profile)


def model_fingerprint(corpus: Corpus) -> str:
    m = corpus.embedding_model
    return settings_hash({"provider": m.provider, "model": m.model, "dimensions": m.dimensions, "prefix": m.passage_prefix})


def build_corpus_resources(corpus: Corpus) -> dict[str, dg.ConfigurableResource]:
    keys = resource_keys(corpus.name)
    model = corpus.embedding_model
    if corpus.source.kind != "disk":
        raise NotImplementedError(f"corpus {corpus.name}: source kind {corpus.source.kind!r} is not wired yet")
    return {
        keys["source"]: DiskSourceResource(
            root=corpus.source_root or "",
            include=list(corpus.source.include),
            exclude=list(corpus.source.exclude),
            tenant=corpus.source.tenant,
        ),
        keys["embedder"]: EmbedderResource(
            provider=model.provider,
            model=model.model,
            dimensions=model.dimensions,
            max_input_tokens=model.max_input_tokens,
            tokenizer=model.tokenizer,
            base_url=model.base_url,
            api_key=dg.EnvVar(model.api_key_env) if model.provider == "openai" else None,
            batch_size=model.batch_size,
        ),
        keys["lancedb"]: LanceDBResource(uri=corpus.index_uri),
    }


def _doc_id(context: dg.AssetExecutionContext) -> str:
    return doc_id_for(context.partition_key)


def build_corpus_assets(corpus: Corpus) -> list[dg.AssetsDefinition]:
    """The five per-document stages of one corpus, each with a code_version built from what it
    depends on, so Dagster's staleness reflects parser, profile and model changes."""
    name = corpus.name
    keys = resource_keys(name)
    partitions = dg.DynamicPartitionsDefinition(name=partitions_name(name))
    profile = chunking_profile(corpus)
    model = corpus.embedding_model
    common = dict(key_prefix=[name], group_name=name, partitions_def=partitions)
    meta_tags = {f"rag/{t}": "" for t in corpus.tags}

    @dg.asset(
        name="raw_documents",
        code_version="raw-1",
        kinds={"file"},
        required_resource_keys={keys["source"]},
        tags=meta_tags,
        **common,
    )
    def raw_documents(context: dg.AssetExecutionContext) -> dg.Output[RawDocument]:
        """Bytes of one source document; its data version is the xxh3 hash of those bytes."""
        source: DiskSourceResource = getattr(context.resources, keys["source"])
        raw = source.read(_doc_id(context))
        return dg.Output(
            raw,
            data_version=dg.DataVersion(raw.content_hash),
            metadata={"uri": dg.MetadataValue.url(raw.uri), "bytes": raw.size, "content_hash": raw.content_hash,
                      "source_version": raw.source_version},
        )

    @dg.asset(name="parsed_documents", code_version=parser_version(), kinds={"python"}, **common,
              ins={"raw": dg.AssetIn(key=[name, "raw_documents"])})
    def parsed_documents(context: dg.AssetExecutionContext, raw: RawDocument) -> dg.Output[ParsedDocument]:
        """Text and structural elements of one document (unstructured; pdfminer for PDF pages)."""
        try:
            parsed = parse_document(raw)
        except DocumentError as exc:
            raise dg.Failure(description=str(exc), metadata={"doc_id": raw.doc_id, "cause": exc.cause}) from exc
        categories: dict[str, int] = {}
        for el in parsed.elements:
            categories[el.category] = categories.get(el.category, 0) + 1
        return dg.Output(parsed, metadata={"title": parsed.title, "content_type": parsed.content_type,
                                           "chars": len(parsed.text), "elements": dg.MetadataValue.json(categories)})

    @dg.asset(name="chunks", code_version=f"{profile.fingerprint()}-{model.tokenizer}-{model.max_input_tokens}",
              kinds={"python"}, required_resource_keys={keys["embedder"]}, **common,
              ins={"parsed": dg.AssetIn(key=[name, "parsed_documents"])})
    def chunks(context: dg.AssetExecutionContext, parsed: ParsedDocument) -> dg.Output[ChunkedDocument]:
        """Token-bounded chunks with exact char offsets, heading paths and contextual headers."""
        embedder: EmbedderResource = getattr(context.resources, keys["embedder"])
        embed = embedder.get_embedder().embed if profile.strategy == "semantic" else None
        chunked = chunk_document(parsed, profile, embedder.get_token_counter(), model.max_input_tokens, embed=embed)
        tokens = [c.tokens for c in chunked.chunks] or [0]
        sample = "\n".join(
            f"| {c.chunk_index} | {c.start}:{c.end} | {c.tokens} | {' > '.join(c.heading_path)} | "
            f"{c.text[:80].replace('|', '/').replace(chr(10), ' ')} |" for c in chunked.chunks[:5]
        )
        return dg.Output(chunked, metadata={
            "chunks": len(chunked.chunks), "profile": profile.name, "profile_hash": chunked.profile_hash,
            "strategy": chunked.chunks[0].strategy if chunked.chunks else profile.strategy,
            "max_tokens": max(tokens), "mean_tokens": round(statistics.fmean(tokens), 1),
            "token_limit": min(profile.max_tokens, model.max_input_tokens),
            "sample": dg.MetadataValue.md("| # | span | tokens | section | text |\n|---|---|---|---|---|\n" + sample),
        })

    @dg.asset(name="embeddings", code_version=model_fingerprint(corpus), kinds={"python"},
              required_resource_keys={keys["embedder"]}, **common,
              ins={"chunked": dg.AssetIn(key=[name, "chunks"])})
    def embeddings(context: dg.AssetExecutionContext, chunked: ChunkedDocument) -> dg.Output[EmbeddedDocument]:
        """One vector per chunk from the corpus' embedding model (inputs over its limit are refused)."""
        embedder = getattr(context.resources, keys["embedder"]).get_embedder()
        texts = [model.passage_prefix + c.embed_text for c in chunked.chunks]
        vectors = embedder.embed(texts)
        tokens = sum(c.tokens for c in chunked.chunks)
        return dg.Output(
            EmbeddedDocument(chunked, model.name, tuple(tuple(v) for v in vectors), len(texts), 0, tokens),
            metadata={"chunks_embedded": len(texts), "model": model.model, "dimensions": model.dimensions,
                      "embed_tokens": tokens,
                      "estimated_cost_usd": round(tokens * model.price_per_million_tokens / 1e6, 6)},
        )

    @dg.asset(name="lancedb_index", code_version=settings_hash(corpus.index.model_dump()), kinds={"lancedb"},
              required_resource_keys={keys["lancedb"]}, **common,
              ins={"embedded": dg.AssetIn(key=[name, "embeddings"])})
    def lancedb_index(context: dg.AssetExecutionContext, embedded: EmbeddedDocument) -> dg.MaterializeResult:
        """The document's rows in the corpus' LanceDB table: new rows written, then stale ones removed."""
        db = getattr(context.resources, keys["lancedb"]).get_connection()
        index = LanceIndex(db, name, model.name, model.dimensions)
        result = index.write_document(embedded, corpus.source.tenant, context.run_id)
        return dg.MaterializeResult(metadata={
            "table": index.name, "rows_written": result.rows_written, "rows_deleted": result.rows_deleted,
            "table_version": result.table_version, "dagster/row_count": result.rows_written,
            "content_hash": embedded.chunked.content_hash,
        })

    return [raw_documents, parsed_documents, chunks, embeddings, lancedb_index]


def build_corpus_job(corpus: Corpus):
    return dg.define_asset_job(
        ingest_job_name(corpus.name),
        selection=dg.AssetSelection.groups(corpus.name),
        partitions_def=dg.DynamicPartitionsDefinition(name=partitions_name(corpus.name)),
        description=f"Ingest documents of corpus {corpus.name!r} into LanceDB.",
    )


def build_definitions(project: Project) -> dg.Definitions:
    """Assets, jobs and resources for every corpus of ``project``."""
    assets, jobs, resources = [], [], {}
    for corpus in project.corpora:
        assets.extend(build_corpus_assets(corpus))
        jobs.append(build_corpus_job(corpus))
        resources.update(build_corpus_resources(corpus))
    return dg.Definitions(assets=assets, jobs=jobs, resources=resources)
