"""Dagster wiring only: assets, jobs and resources generated from the config project."""
