"""LanceDB connection resource."""

from __future__ import annotations

import dagster as dg
from pydantic import Field

from rag_assets.core.lance_connect import connect, storage_options


class LanceDBResource(dg.ConfigurableResource):
    """A LanceDB database on disk or on S3 (any S3-compatible server through ``endpoint_url``)."""

    uri: str = Field(description="Folder path or s3://bucket/path of the LanceDB database.")
    endpoint_url: str | None = Field(None, description="s3: endpoint of an S3-compatible server (unset: AWS).")
    region: str | None = Field(None, description="s3: region name.")
    aws_access_key_id: str | None = Field(None, description="s3: access key id (set it with dg.EnvVar).")
    aws_secret_access_key: str | None = Field(None, description="s3: secret key (set it with dg.EnvVar).")
    connect_timeout_seconds: float = Field(description="s3: how long one attempt waits to connect.")
    read_timeout_seconds: float = Field(description="s3: how long one attempt waits for the answer.")
    max_attempts: int = Field(description="s3: tries of each request, the first included.")

    def get_connection(self):
        """A LanceDB connection (cheap; opened per call)."""
        return connect(self.uri, storage_options(
            self.uri, self.endpoint_url, self.region, self.aws_access_key_id, self.aws_secret_access_key,
            connect_timeout_seconds=self.connect_timeout_seconds, read_timeout_seconds=self.read_timeout_seconds,
            max_attempts=self.max_attempts))
