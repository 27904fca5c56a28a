"""LanceDB connection resource."""

from __future__ import annotations

import dagster as dg
import lancedb
from pydantic import Field


class LanceDBResource(dg.ConfigurableResource):
    """A LanceDB database on disk or on S3."""

    uri: str = Field(description="Folder path or s3://bucket/path of the LanceDB database.")
    storage_options: dict[str, str] = Field(default_factory=dict, description="Object-store options (S3 endpoint, region...).")

    def get_connection(self):
        """A LanceDB connection (cheap; opened per call)."""
        return lancedb.connect(self.uri, storage_options=self.storage_options or None)
