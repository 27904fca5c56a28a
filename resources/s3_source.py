"""S3 document source: wraps dagster-aws's S3Resource client."""

from __future__ import annotations

import dagster as dg
from dagster_aws.s3 import S3Resource
from pydantic import Field

from rag_assets.core.hashing import content_hash
from rag_assets.core.models import RawDocument
from rag_assets.core.sources import DocumentRef, matches


class S3SourceResource(dg.ConfigurableResource):
    """Objects under ``prefix`` in ``bucket``; a document id is the key relative to the prefix."""

    s3: S3Resource
    bucket: str = Field(description="Bucket holding the documents.")
    prefix: str = Field("", description="Key prefix to list under.")
    include: list[str] = Field(default_factory=lambda: ["**/*"], description="Globs of documents to index.")
    exclude: list[str] = Field(default_factory=list, description="Globs to leave out.")
    tenant: str | None = Field(None, description="Tenant of every document in this source.")

    def list_documents(self) -> list[DocumentRef]:
        """Every matching object; the ETag is the source version (a cheap change prefilter)."""
        client = self.s3.get_client()
        refs = []
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=self.prefix):
            for obj in page.get("Contents", []):
                doc_id = obj["Key"][len(self.prefix):].lstrip("/")
                if doc_id and not doc_id.endswith("/") and matches(doc_id, tuple(self.include), tuple(self.exclude)):
                    refs.append(DocumentRef(doc_id, f"s3://{self.bucket}/{obj['Key']}", int(obj["Size"]),
                                            f"etag:{obj['ETag'].strip(chr(34))}"))
        return sorted(refs, key=lambda r: r.doc_id)

    def read(self, doc_id: str) -> RawDocument:
        key = f"{self.prefix.rstrip('/')}/{doc_id}" if self.prefix else doc_id
        obj = self.s3.get_client().get_object(Bucket=self.bucket, Key=key)
        data = obj["Body"].read()
        return RawDocument(doc_id, f"s3://{self.bucket}/{key}", content_hash(data), len(data),
                           f"etag:{obj['ETag'].strip(chr(34))}", data)
