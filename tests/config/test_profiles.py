"""The chunking profile schema and the core profile and strategy registry it is read into."""

from dataclasses import fields
from typing import get_args

from rag_assets.config.profiles import profile_from_config
from rag_assets.config.schema import ChunkingProfileConfig
from rag_assets.core.chunking import STRATEGIES, ChunkingProfile
from rag_assets.core.parsing import CONTENT_TYPE_NAMES, content_type_for


def test_a_profile_entry_and_the_core_profile_have_the_same_fields_and_defaults():
    assert set(ChunkingProfileConfig.model_fields) - {"description"} == {f.name for f in fields(ChunkingProfile)}
    assert profile_from_config(ChunkingProfileConfig(name="p")) == ChunkingProfile("p")


def test_the_schema_accepts_exactly_the_registered_strategies_and_parsed_content_types():
    strategy = ChunkingProfileConfig.model_fields["strategy"].annotation
    assert set(get_args(strategy)) == set(STRATEGIES) | {"auto"}
    content_types = get_args(ChunkingProfileConfig.model_fields["content_types"].annotation)[0]
    assert set(get_args(content_types)) == set(CONTENT_TYPE_NAMES)
    assert content_type_for("notes.unknown") in CONTENT_TYPE_NAMES
