"""Names every part of the wiring shares: asset keys, partitions, jobs, resource keys and the
run and event tags Dagster reads. A leaf: it imports nothing of the package."""

import dagster as dg

DATA_VERSION = "dagster/data_version"
RANGE_START = "dagster/asset_partition_range_start"
RANGE_END = "dagster/asset_partition_range_end"
PARTITION = "dagster/partition"
STAGES = ("parsed_documents", "chunks", "embeddings", "lancedb_index")  # a corpus' partitioned assets, in order


def partitions_name(corpus: str) -> str:
    return f"{corpus}_documents"


def ingest_job_name(corpus: str) -> str:
    return f"ingest_{corpus}"


MAINTENANCE_TAG = "rag/maintenance"  # the corpus a maintenance job's run maintains (and data-tests)


def maintenance_job_name(corpus: str) -> str:
    return f"maintain_{corpus}"


def gc_job_name(corpus: str) -> str:
    return f"collect_garbage_{corpus}"


def data_tests_job_name(corpus: str) -> str:
    return f"test_{corpus}"


def resource_keys(corpus: str) -> dict[str, str]:
    return {"source": f"{corpus}_source", "embedder": f"{corpus}_embedder", "lancedb": f"{corpus}_lancedb",
            "store": f"{corpus}_stage_store"}


def asset_key(corpus: str, stage: str) -> dg.AssetKey:
    return dg.AssetKey([corpus, stage])
