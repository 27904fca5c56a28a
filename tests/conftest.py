"""Shared fixtures: temporary config projects over real files, LanceDB on disk, a real Dagster instance."""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from rag_assets.instance import write_instance_config

REPO = Path(__file__).resolve().parents[1]
SAMPLE_DOCS = REPO / "sample_docs"
CONFIGS = REPO / "dbt_like_configs"


@contextmanager
def env(**values: str):
    """Set environment variables for the duration of a block (session fixtures can't monkeypatch)."""
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def edit_yaml(path: Path, change) -> None:
    """Apply ``change`` to the YAML file's data in place."""
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def make_project(root: Path, docs: Path | None = None) -> dict[str, str]:
    """Copy the shipped config project under ``root`` with its documents at ``docs`` (a copy of
    the sample corpus by default); returns the environment that points rag at it."""
    root.mkdir(parents=True, exist_ok=True)
    shutil.copytree(CONFIGS, root / "dbt_like_configs")
    if docs is None:
        docs = root / "docs"
        shutil.copytree(SAMPLE_DOCS, docs)
    home = root / ".dagster_home"
    write_instance_config(home)  # the instance config `rag` writes
    return {
        "RAG_PROJECT_DIR": str(root / "dbt_like_configs"),
        "RAG_SAMPLE_DOCS": str(docs),
        "RAG_LANCEDB_URI": str(root / "lancedb"),
        "RAG_DATA_DIR": str(root / "data"),
        "DAGSTER_HOME": str(home),
    }


@pytest.fixture(scope="session")
def ingested_sample(tmp_path_factory):
    """The sample corpus ingested once into a temporary project: (env, first ingest report)."""
    from rag_assets.config import load_project
    from rag_assets.ingest import ingest_project

    root = tmp_path_factory.mktemp("sample_project")
    values = make_project(root)
    with env(**values):
        report = ingest_project(load_project())
    return values, report
