"""Content hashes (xxh3) used for change detection and deterministic ids."""

from __future__ import annotations

import json

import xxhash


def content_hash(data: bytes) -> str:
    """xxh3-128 hex digest of raw bytes: the document's data version."""
    return xxhash.xxh3_128_hexdigest(data)


def text_hash(text: str) -> str:
    """xxh3-64 hex digest of UTF-8 text (chunk and embedded-text keys)."""
    return xxhash.xxh3_64_hexdigest(text.encode("utf-8", "surrogatepass"))


def settings_hash(settings: object) -> str:
    """Stable short hash of a JSON-serialisable settings object (profile, model, index)."""
    payload = json.dumps(settings, sort_keys=True, separators=(",", ":"), default=str)
    return xxhash.xxh3_64_hexdigest(payload.encode("utf-8"))[:12]


def row_id(doc_id: str, chunk_text_hash: str, profile_hash: str, start: int) -> str:
    """Deterministic index row id from the document, the chunk's content, its profile and place."""
    return xxhash.xxh3_128_hexdigest(f"{doc_id}\x1f{chunk_text_hash}\x1f{profile_hash}\x1f{start}".encode())
