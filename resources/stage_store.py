"""Stage store resource: where each stage keeps its per-document outputs."""

from __future__ import annotations

import dagster as dg
from pydantic import Field

from rag_assets.core.store import StageStore


class StageStoreResource(dg.ConfigurableResource):
    """A folder of content-addressed stage outputs (shared by every run of a corpus)."""

    root: str = Field(description="Folder of the stage outputs.")

    def get_store(self) -> StageStore:
        return StageStore(self.root)
