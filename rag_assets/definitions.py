"""Dagster entry point: read ``dbt_like_configs/`` (or $RAG_PROJECT_DIR) and build the Definitions."""

from rag_assets.config import load_project
from rag_assets.defs.factory import build_definitions

defs = build_definitions(load_project())
