"""Dagster entry point: read ``dbt_like_configs/`` and return the generated Definitions."""

from __future__ import annotations

import dagster as dg

from rag_assets.config import Project, load_project
from rag_assets.defs.factory import build_corpus_assets, build_corpus_job, build_corpus_resources


def build_definitions(project: Project) -> dg.Definitions:
    """Assets, jobs and resources for every corpus of ``project``."""
    assets, jobs, resources = [], [], {}
    for corpus in project.corpora:
        assets.extend(build_corpus_assets(corpus))
        jobs.append(build_corpus_job(corpus))
        resources.update(build_corpus_resources(corpus))
    return dg.Definitions(assets=assets, jobs=jobs, resources=resources)


defs = build_definitions(load_project())
