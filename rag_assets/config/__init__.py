"""The declarative project in ``dbt_like_configs/``: schema and loader (never imports dagster)."""

from rag_assets.config.loader import ConfigError, load_project
from rag_assets.config.schema import Corpus, Project

__all__ = ["ConfigError", "Corpus", "Project", "load_project"]
