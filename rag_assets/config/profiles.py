"""Config schema -> core value types."""

from __future__ import annotations

from rag_assets.config.schema import ChunkingProfileConfig
from rag_assets.core.chunking import ChunkingProfile
from rag_assets.core.chunking.cleaning import Cleaning


def profile_from_config(config: ChunkingProfileConfig) -> ChunkingProfile:
    """The core ChunkingProfile a config entry declares: every setting but its description (a test
    keeps the two field lists and their defaults the same)."""
    settings = config.model_dump(exclude={"description"})
    return ChunkingProfile(**{**settings, "cleaning": Cleaning(**settings["cleaning"]),
                              "content_types": tuple(sorted(settings["content_types"].items()))})
