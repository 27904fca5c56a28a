"""Dagster resources: each wraps one client and hands core a plain protocol object."""

from resources.embedder import EmbedderResource
from resources.lancedb import LanceDBResource
from resources.s3_source import S3SourceResource
from resources.sources import DiskSourceResource
from resources.stage_store import StageStoreResource
from resources.web_source import WebSourceResource

__all__ = ["DiskSourceResource", "S3SourceResource", "EmbedderResource", "LanceDBResource", "StageStoreResource",
           "WebSourceResource"]
