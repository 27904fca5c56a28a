"""Pure logic: parsing, chunking, tokens, hashing, embedding and retrieval. Never imports dagster."""
