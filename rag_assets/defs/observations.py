"""``raw_documents`` observations: how a sweep reports a document's bytes to Dagster, and how a
run reads back the version Dagster last observed."""

import dagster as dg

from rag_assets.config.schema import Corpus
from rag_assets.core.hashing import settings_hash
from rag_assets.core.keys import partition_key_for
from rag_assets.core.models import RawDocument
from rag_assets.core.sources import describe_source_version
from rag_assets.defs.names import DATA_VERSION, asset_key


def raw_observation(corpus: Corpus, raw: RawDocument | None = None, unreadable: dict | None = None) -> dg.AssetObservation:
    """The runless observation that reports a document's bytes (data version = their xxh3 hash),
    or, with ``unreadable`` (a seen record with ``error``), that it cannot be read."""
    if raw is not None:
        version, meta = raw.content_hash, {"uri": raw.uri, "bytes": raw.size, "content_hash": raw.content_hash,
                                           "modified": describe_source_version(raw.source_version),
                                           "source_version": raw.source_version}
        doc_id = raw.doc_id
    else:
        doc_id = unreadable["doc_id"]
        version = "unreadable-" + settings_hash(unreadable["error"])[:16]
        meta = {"uri": unreadable["uri"], "bytes": unreadable["size"], "error": unreadable["error"],
                "modified": describe_source_version(unreadable["source_version"]),
                "source_version": unreadable["source_version"]}
    return dg.AssetObservation(asset_key=asset_key(corpus.name, "raw_documents"), partition=partition_key_for(doc_id),
                               tags={DATA_VERSION: version}, metadata=meta)


OBSERVATION_PAGE = 1000  # observation records read per query


def observed_raws(instance: dg.DagsterInstance, corpus: Corpus, partition_keys: list[str]) -> dict[str, dict | None]:
    """The document version Dagster last observed for each partition, as a stage-store raw record
    (None when it was never observed); newest first, a page of records per query."""
    out: dict[str, dict | None] = dict.fromkeys(partition_keys)
    wanted, cursor = set(partition_keys), None
    records_filter = dg.AssetRecordsFilter(asset_key=asset_key(corpus.name, "raw_documents"),
                                           asset_partitions=list(partition_keys))
    while wanted:
        page = instance.fetch_observations(records_filter, limit=OBSERVATION_PAGE, cursor=cursor, ascending=False)
        for record in page.records:
            if record.partition_key in wanted:
                wanted.discard(record.partition_key)
                out[record.partition_key] = _raw_record(record.asset_observation)
        if not page.has_more:
            break
        cursor = page.cursor
    return out


def _raw_record(observation: dg.AssetObservation) -> dict | None:
    meta = {k: v.value for k, v in observation.metadata.items()}
    if "uri" not in meta:  # observed by the UI's "Observe" run, which recorded the document itself
        return None
    # The version as the source gave it (mtime:<ns>, an ETag); "modified" is its readable form, all an
    # observation recorded before had (the next sweep re-reads that document's bytes once).
    base = {"uri": meta.get("uri"), "size": meta.get("bytes"),
            "source_version": meta.get("source_version", meta.get("modified"))}
    if "error" in meta:
        return {"key": None, "error": meta["error"], **base}
    return {"key": observation.tags[DATA_VERSION], **base}
