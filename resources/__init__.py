"""Dagster resources: each wraps one client and hands core a plain protocol object."""

from resources.embedder import EmbedderResource
from resources.lancedb import LanceDBResource
from resources.sources import DiskSourceResource

__all__ = ["DiskSourceResource", "EmbedderResource", "LanceDBResource"]
