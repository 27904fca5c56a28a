"""LanceDB connection resource."""

from __future__ import annotations

import dagster as dg
import lancedb
from pydantic import Field


class LanceDBResource(dg.ConfigurableResource):
    """A LanceDB database on disk or on S3 (any S3-compatible server through ``endpoint_url``)."""

    uri: str = Field(description="Folder path or s3://bucket/path of the LanceDB database.")
    storage_options: dict[str, str] = Field(default_factory=dict, description="Object-store options (S3 endpoint, region...).")
    endpoint_url: str | None = Field(None, description="s3: endpoint of an S3-compatible server (unset: AWS).")
    region: str | None = Field(None, description="s3: region name.")
    aws_access_key_id: str | None = Field(None, description="s3: access key id (set it with dg.EnvVar).")
    aws_secret_access_key: str | None = Field(None, description="s3: secret key (set it with dg.EnvVar).")

    def _options(self) -> dict[str, str] | None:
        options = dict(self.storage_options)
        if self.uri.startswith("s3://"):
            if self.endpoint_url:
                options["aws_endpoint"] = self.endpoint_url
                options["allow_http"] = str(self.endpoint_url.startswith("http://")).lower()
            if self.region:
                options["aws_region"] = self.region
            if self.aws_access_key_id and self.aws_secret_access_key:
                options["aws_access_key_id"] = self.aws_access_key_id
                options["aws_secret_access_key"] = self.aws_secret_access_key
        return options or None

    def get_connection(self):
        """A LanceDB connection (cheap; opened per call)."""
        return lancedb.connect(self.uri, storage_options=self._options())
