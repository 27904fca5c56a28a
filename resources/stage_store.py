"""Stage store resource: where each stage keeps its per-document outputs (a folder or S3)."""

from __future__ import annotations

import boto3
import dagster as dg
from botocore.config import Config
from pydantic import Field

from rag_assets.core.store import S3Blobs, StageStore


class StageStoreResource(dg.ConfigurableResource):
    """Content-addressed stage outputs shared by every run of a corpus: a folder, or objects
    under s3://bucket/prefix (any S3-compatible server through ``endpoint_url``)."""

    root: str = Field(description="Folder or s3://bucket/prefix of the stage outputs.")
    endpoint_url: str | None = Field(None, description="s3: endpoint of an S3-compatible server (unset: AWS).")
    region: str | None = Field(None, description="s3: region name.")
    aws_access_key_id: str | None = Field(None, description="s3: access key id (set it with dg.EnvVar).")
    aws_secret_access_key: str | None = Field(None, description="s3: secret key (set it with dg.EnvVar).")
    connect_timeout_seconds: float = Field(description="s3: how long one attempt waits to connect.")
    read_timeout_seconds: float = Field(description="s3: how long one attempt waits for each read of the answer.")
    max_attempts: int = Field(description="s3: tries of each request, the first included.")

    def get_store(self) -> StageStore:
        if not self.root.startswith("s3://"):
            return StageStore(self.root)
        bucket, _, prefix = self.root.removeprefix("s3://").partition("/")
        # boto3's default chain applies when the keys are unset; retries cover throttling, 5xx and timeouts.
        client = boto3.session.Session().client(
            "s3", endpoint_url=self.endpoint_url, region_name=self.region,
            aws_access_key_id=self.aws_access_key_id, aws_secret_access_key=self.aws_secret_access_key,
            config=Config(connect_timeout=self.connect_timeout_seconds, read_timeout=self.read_timeout_seconds,
                          retries={"total_max_attempts": self.max_attempts, "mode": "standard"}))
        fix = ("check data_dir_s3's endpoint_url, region and keys in rag_project.yml (RAG_DATA_DIR), or raise its "
               "read_timeout_seconds or max_attempts there for a slow server")
        return StageStore(S3Blobs(client, bucket, prefix, fix))
