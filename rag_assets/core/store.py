"""The stage store: each pipeline stage's output per document, content-addressed.

An artifact is stored once under a key derived from everything that produced it (content hash,
parser version, profile fingerprint...), so unchanged work is found and reused instead of redone.
A per-stage pointer records which artifact is current for each document. Writes are atomic
(write to a temp file, then rename); a concurrent reader sees the old or the new file, never half.
An entry damaged anyway (a truncated or corrupt file, a disk error) is never trusted: ``load``,
``load_bytes`` and ``current`` treat it as missing and remove it, so its stage recomputes it.
"""

from __future__ import annotations

import json
import os
import pickle
import tempfile
from pathlib import Path
from typing import Any

import xxhash

STAGES = ("raw", "parsed", "chunks", "embeddings", "index")


class StageStore:
    """Artifacts and per-document pointers under one folder."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    def _artifact(self, stage: str, key: str) -> Path:
        return self.root / stage / key[:2] / f"{key}.bin"

    def _pointer(self, stage: str, doc_id: str) -> Path:
        return self.root / "current" / stage / f"{xxhash.xxh3_128_hexdigest(doc_id.encode())}.json"

    @staticmethod
    def _write(path: Path, data: bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def has(self, stage: str, key: str) -> bool:
        return self._artifact(stage, key).exists()

    def put_bytes(self, stage: str, key: str, data: bytes) -> None:
        if not self.has(stage, key):
            self._write(self._artifact(stage, key), data)

    def get_bytes(self, stage: str, key: str) -> bytes:
        return self._artifact(stage, key).read_bytes()

    def put(self, stage: str, key: str, obj: Any) -> None:
        self._write(self._artifact(stage, key), pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))

    def get(self, stage: str, key: str) -> Any:
        with self._artifact(stage, key).open("rb") as f:
            return pickle.load(f)

    def load(self, stage: str, key: str) -> Any | None:
        """The artifact, or None when it is missing or cannot be unpickled (a damaged file is
        removed, so ``has`` is False until it is recomputed)."""
        try:
            return self.get(stage, key)
        except FileNotFoundError:
            return None
        except Exception:  # truncated or corrupt pickles raise many types (EOFError, UnpicklingError...)
            self._artifact(stage, key).unlink(missing_ok=True)
            return None

    def load_bytes(self, stage: str, key: str, digest) -> bytes | None:
        """Stored bytes whose ``digest(data)`` equals ``key`` (content-addressed), or None when
        they are missing or damaged (a damaged file is removed)."""
        try:
            data = self.get_bytes(stage, key)
        except FileNotFoundError:
            return None
        if digest(data) != key:
            self._artifact(stage, key).unlink(missing_ok=True)
            return None
        return data

    def set_current(self, stage: str, doc_id: str, **record: Any) -> None:
        """Make ``record`` (at least ``key``) the current output of ``stage`` for ``doc_id``."""
        self._write(self._pointer(stage, doc_id), json.dumps({"doc_id": doc_id, **record}).encode())

    def current(self, stage: str, doc_id: str) -> dict | None:
        """The current record of ``stage`` for ``doc_id``; None when there is none or it is damaged
        (the document then counts as never processed by that stage)."""
        path = self._pointer(stage, doc_id)
        try:
            record = json.loads(path.read_bytes())
        except FileNotFoundError:
            return None
        except ValueError:  # truncated or corrupt JSON
            path.unlink(missing_ok=True)
            return None
        return record if isinstance(record, dict) and "key" in record else None

    def forget(self, doc_id: str) -> None:
        """Drop every stage's pointer for a deleted document (artifacts stay, shared by content)."""
        for stage in STAGES:
            self._pointer(stage, doc_id).unlink(missing_ok=True)
