"""S3 document source: a boto3 client built from dagster-aws's S3Resource settings."""

from __future__ import annotations

from typing import Any

import boto3
import dagster as dg
from botocore import UNSIGNED
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, ConnectTimeoutError, HTTPClientError, ReadTimeoutError
from botocore.exceptions import ConnectionError as BotoConnectionError
from dagster_aws.s3 import S3Resource
from pydantic import Field, PrivateAttr

from rag_assets.core.hashing import content_hash
from rag_assets.core.models import RawDocument
from rag_assets.core.parsing import DocumentError
from rag_assets.core.sources import DocumentRef, SourceUnavailable, matches, s3_folder, too_large

MISSING = {"NoSuchKey", "404", "NotFound"}
REFUSED = {"InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "403", "InvalidToken", "ExpiredToken"}
TIMEOUTS = {ConnectTimeoutError: "connect_timeout_seconds", ReadTimeoutError: "read_timeout_seconds"}


class S3SourceResource(dg.ConfigurableResource):
    """Objects under ``prefix`` in ``bucket``; a document id is the key relative to the prefix.
    Every request gives up after ``s3.max_attempts`` tries (the first included) of at most
    ``connect_timeout_seconds`` to connect and ``read_timeout_seconds`` a read."""

    s3: S3Resource
    name: str = Field(description="The source's name in sources.yml, which its errors name.")
    bucket: str = Field(description="Bucket holding the documents.")
    prefix: str = Field("", description="Folder of keys to list under (with or without its trailing slash).")
    include: list[str] = Field(default_factory=lambda: ["**/*"], description="Globs of documents to index.")
    exclude: list[str] = Field(default_factory=list, description="Globs to leave out.")
    max_document_bytes: int | None = Field(None, description="Larger objects are refused, never downloaded.")
    credentials: str = Field("", description="Where its credentials come from (environment variable names), "
                                             "which its errors name.")
    connect_timeout_seconds: float = Field(description="How long one attempt waits to connect to the endpoint.")
    read_timeout_seconds: float = Field(description="How long one attempt waits for each read of a response.")
    _client: Any = PrivateAttr(None)

    def _s3(self):
        """One boto3 client for this resource's life (a sweep): building one (a new session) costs
        about 100x a small object's GET, which made a sweep's reads cost ~0.25 s a document.
        Built here rather than by S3Resource.get_client, which takes no timeouts: botocore's
        default of 60 s a read over 6 attempts left a sweep of an unresponsive endpoint hanging
        for minutes."""
        if self._client is None:
            s3 = self.s3
            config = Config(connect_timeout=self.connect_timeout_seconds, read_timeout=self.read_timeout_seconds,
                            retries={"total_max_attempts": s3.max_attempts, "mode": "standard"},
                            signature_version=UNSIGNED if s3.use_unsigned_session else None)
            self._client = boto3.session.Session(profile_name=s3.profile_name).client(
                "s3", region_name=s3.region_name, endpoint_url=s3.endpoint_url, use_ssl=s3.use_ssl, verify=s3.verify,
                aws_access_key_id=s3.aws_access_key_id, aws_secret_access_key=s3.aws_secret_access_key,
                aws_session_token=s3.aws_session_token, config=config)
        return self._client

    def _unavailable(self, action: str, exc: Exception) -> SourceUnavailable:
        # botocore's messages name the endpoint, bucket and error code, never the credentials.
        endpoint = self.s3.endpoint_url or "AWS"
        timeout = next((key for cls, key in TIMEOUTS.items() if isinstance(exc, cls)), None)
        if timeout:
            fix = (f"{endpoint} did not answer within {getattr(self, timeout):g} s (each of up to "
                   f"{self.s3.max_attempts} attempts): check the endpoint_url of source {self.name!r} in "
                   f"sources.yml, or raise its {timeout} (or max_attempts) there for a slow server")
        elif isinstance(exc, (BotoConnectionError, HTTPClientError)):
            fix = f"check the endpoint_url of source {self.name!r} in sources.yml and that the server is running"
        elif isinstance(exc, ClientError) and exc.response.get("Error", {}).get("Code") == "NoSuchBucket":
            fix = f"check the bucket of source {self.name!r} in sources.yml ({endpoint} has no bucket {self.bucket!r})"
        elif isinstance(exc, ClientError) and exc.response.get("Error", {}).get("Code") in REFUSED:
            fix = (f"check the credentials in {self.credentials or 'the environment'} (access_key_env and "
                   f"secret_key_env of source {self.name!r} in sources.yml name them) and that they may list and "
                   "read the bucket")
        else:
            fix = "check the server"
        return SourceUnavailable(f"S3 source {self.name!r} (s3://{self.bucket}/{s3_folder(self.prefix)} at "
                                 f"{endpoint}): cannot {action}: {type(exc).__name__}: {exc}; {fix}; "
                                 "the next sweep retries")

    def list_documents(self) -> list[DocumentRef]:
        """Every matching object; the ETag is the source version (a cheap change prefilter).
        Raises SourceUnavailable rather than returning a partial listing."""
        refs = []
        folder = s3_folder(self.prefix)
        try:
            for page in self._s3().get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=folder):
                for obj in page.get("Contents", []):
                    # The key after the folder, as it is: read() puts the folder back in front.
                    doc_id = obj["Key"][len(folder):]
                    if obj["Key"].startswith(folder) and doc_id and not doc_id.endswith("/") and matches(doc_id, tuple(self.include), tuple(self.exclude)):
                        refs.append(DocumentRef(doc_id, f"s3://{self.bucket}/{obj['Key']}", int(obj["Size"]),
                                                f"etag:{obj['ETag'].strip(chr(34))}"))
        except (BotoCoreError, ClientError) as exc:
            raise self._unavailable("list objects", exc) from exc
        return sorted(refs, key=lambda r: r.doc_id)

    def read(self, doc_id: str) -> RawDocument:
        """One object; DocumentError when it is gone or too large, SourceUnavailable otherwise."""
        key = s3_folder(self.prefix) + doc_id
        try:
            obj = self._s3().get_object(Bucket=self.bucket, Key=key)
            if self.max_document_bytes is not None and obj["ContentLength"] > self.max_document_bytes:
                obj["Body"].close()
                raise DocumentError(doc_id, too_large(obj["ContentLength"], self.max_document_bytes))
            data = obj["Body"].read()
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in MISSING:
                raise DocumentError(doc_id, "object vanished after it was listed; the next sweep drops it") from exc
            raise self._unavailable(f"read {key}", exc) from exc
        except BotoCoreError as exc:
            raise self._unavailable(f"read {key}", exc) from exc
        return RawDocument(doc_id, f"s3://{self.bucket}/{key}", content_hash(data), len(data),
                           f"etag:{obj['ETag'].strip(chr(34))}", data)
