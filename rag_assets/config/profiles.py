"""Config schema -> core value types."""

from __future__ import annotations

from rag_assets.config.schema import ChunkingProfileConfig
from rag_assets.core.chunking import ChunkingProfile
from rag_assets.core.chunking.cleaning import Cleaning


def profile_from_config(config: ChunkingProfileConfig) -> ChunkingProfile:
    """The core ChunkingProfile a config entry declares."""
    return ChunkingProfile(
        name=config.name,
        strategy=config.strategy,
        max_tokens=config.max_tokens,
        overlap=config.overlap,
        contextual_header=config.contextual_header,
        min_tokens=config.min_tokens,
        table_records=config.table_records,
        window=config.window,
        semantic_percentile=config.semantic_percentile,
        semantic_buffer=config.semantic_buffer,
        cleaning=Cleaning(**config.cleaning.model_dump()),
        content_types=tuple(sorted(config.content_types.items())),
        size_tokenizer=config.size_tokenizer,
        embed_window=config.embed_window,
        group_gap=config.group_gap,
        group_candidates=config.group_candidates,
        score_margin=config.score_margin,
        group_context=config.group_context,
        lone_hit_context=config.lone_hit_context,
    )
