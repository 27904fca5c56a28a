"""Document source resources."""

from __future__ import annotations

import dagster as dg
from pydantic import Field

from rag_assets.core.models import RawDocument
from rag_assets.core.sources import DocumentRef, list_disk, read_disk


class DiskSourceResource(dg.ConfigurableResource):
    """A local folder of documents; nothing outside ``root`` is ever read."""

    root: str = Field(description="Absolute folder of the source.")
    include: list[str] = Field(default_factory=lambda: ["**/*"], description="Globs of documents to index.")
    exclude: list[str] = Field(default_factory=list, description="Globs to leave out.")
    max_document_bytes: int | None = Field(None, description="Larger documents are refused, never read.")
    root_env: list[str] = Field(default_factory=list, description="Environment variables sources.yml reads the "
                                "root from (named when the folder is missing).")

    def list_documents(self) -> list[DocumentRef]:
        return list_disk(self.root, tuple(self.include), tuple(self.exclude), tuple(self.root_env))

    def read(self, doc_id: str) -> RawDocument:
        return read_disk(self.root, doc_id, self.max_document_bytes)
