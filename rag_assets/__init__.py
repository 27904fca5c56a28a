"""rag_assets: documents -> parsed text -> chunks -> embeddings -> LanceDB, as Dagster assets."""
