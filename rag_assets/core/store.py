"""The stage store: each pipeline stage's output per document, content-addressed.

An artifact is stored once under a key derived from everything that produced it (content hash,
parser version, profile fingerprint...), so unchanged work is found and reused instead of redone.
A per-stage pointer records which artifact is current for each document.

The store keeps named blobs in one of two backends with the same guarantees: a local folder
(``FolderBlobs``: write to a temp file, then rename) or an S3 bucket (``S3Blobs``: one PUT, which
S3 publishes whole or not at all). A concurrent reader sees the old or the new blob, never half;
two writers of one artifact key write the same content, so either one winning is correct.
An entry damaged anyway (a truncated or corrupt blob, a disk error) is never trusted: ``load``,
``load_bytes`` and ``current`` treat it as missing and remove it, so its stage recomputes it.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterator, NamedTuple, Protocol

import xxhash
from botocore.exceptions import BotoCoreError, ClientError

HOST = socket.gethostname()

STAGES = ("raw", "parsed", "chunks", "embeddings", "index")


class Listed(NamedTuple):
    """A blob as a listing shows it: its name, size in bytes and when it was last written (epoch s)."""

    name: str
    size: int
    modified: float


class Blobs(Protocol):
    """Named byte strings (names are relative POSIX paths) with atomic publication."""

    reads_at_once: int  # reads worth having in flight together (a server's round trips overlap; a disk's do not)

    def read(self, name: str) -> bytes:
        """The blob's bytes; FileNotFoundError when there is none."""

    def write(self, name: str, data: bytes) -> None:
        """Publish ``data`` under ``name`` atomically (readers see the old or the new blob)."""

    def exists(self, name: str) -> bool: ...

    def remove(self, name: str) -> None:
        """Remove the blob; a missing one is not an error."""

    def remove_many(self, names: list[str]) -> None:
        """Remove the blobs (missing ones are not an error), in as few requests as the backend allows."""

    def list(self, prefix: str) -> Iterator[Listed]:
        """Every blob whose name starts with ``prefix`` (a folder: ends with "/"), in no set order;
        one removed while it is listed may or may not be listed."""

    def folders(self, prefix: str) -> list[str]:
        """The names of the folders directly inside folder ``prefix`` ("" for the top)."""

    def remove_folder(self, prefix: str) -> None:
        """Remove folder ``prefix`` and everything in it."""


class FolderBlobs:
    """Blobs as files under ``root`` (a local or shared POSIX folder)."""

    reads_at_once = 1

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    def __str__(self) -> str:
        return str(self.root)

    def read(self, name: str) -> bytes:
        return (self.root / name).read_bytes()

    def write(self, name: str, data: bytes) -> None:
        """Publish ``data`` whole or not at all: written to a temporary file of this host, process
        and thread beside ``name``, then renamed over it."""
        path = self.root / name
        tmp = path.parent / f".tmp-{HOST}-{os.getpid()}-{threading.get_ident()}-{path.name}"
        try:
            try:
                f = open(tmp, "wb")
            except FileNotFoundError:  # the folder's first file
                path.parent.mkdir(parents=True, exist_ok=True)
                f = open(tmp, "wb")
            with f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise

    def exists(self, name: str) -> bool:
        return (self.root / name).exists()

    def remove(self, name: str) -> None:
        (self.root / name).unlink(missing_ok=True)

    def remove_many(self, names: list[str]) -> None:
        for name in names:
            self.remove(name)

    def list(self, prefix: str) -> Iterator[Listed]:
        """Files under ``root``/``prefix`` (a folder), temporary files of writers included."""
        for folder, _, files in os.walk(self.root / prefix):
            for file in files:
                path = Path(folder) / file
                try:
                    stat = path.stat()
                except FileNotFoundError:  # removed (or renamed over) since the folder was read
                    continue
                yield Listed(path.relative_to(self.root).as_posix(), stat.st_size, stat.st_mtime)

    def folders(self, prefix: str) -> list[str]:
        try:
            return sorted(entry.name for entry in os.scandir(self.root / prefix) if entry.is_dir())
        except FileNotFoundError:
            return []

    def remove_folder(self, prefix: str) -> None:
        try:
            shutil.rmtree(self.root / prefix)
        except FileNotFoundError:  # never made, or already gone
            pass


class StoreUnavailable(RuntimeError):
    """An S3 stage store refused or never answered a request (names the store, the blob and the fix)."""


class S3Blobs:
    """Blobs as objects under ``prefix`` in ``bucket``, through a boto3 S3 client.

    A PUT is published whole or not at all, and the client sends a checksum of the body so the
    server refuses a cut-off upload: no temp object or rename is needed for atomicity. A request
    that fails for any reason but a missing object raises StoreUnavailable ending with ``fix``.
    """

    MISSING = {"NoSuchKey", "404", "NotFound"}
    reads_at_once = 16

    def __init__(self, client, bucket: str, prefix: str = "", fix: str = ""):
        self.client = client
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self.fix = fix

    def __str__(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}"

    def _key(self, name: str) -> str:
        return f"{self.prefix}/{name}" if self.prefix else name

    def _missing(self, exc: Exception) -> bool:
        response = getattr(exc, "response", None) or {}
        return response.get("Error", {}).get("Code") in self.MISSING

    def _unavailable(self, action: str, name: str, exc: Exception) -> StoreUnavailable:
        where = f"{self} at {self.client.meta.endpoint_url}"
        return StoreUnavailable(f"stage store {where}: cannot {action} {name}: {type(exc).__name__}: {exc}"
                                + (f"; {self.fix}" if self.fix else ""))

    def read(self, name: str) -> bytes:
        try:
            return self.client.get_object(Bucket=self.bucket, Key=self._key(name))["Body"].read()
        except (BotoCoreError, ClientError) as exc:
            if self._missing(exc):
                raise FileNotFoundError(f"{self}/{name}") from exc
            raise self._unavailable("read", name, exc) from exc

    def write(self, name: str, data: bytes) -> None:
        try:
            self.client.put_object(Bucket=self.bucket, Key=self._key(name), Body=data)
        except (BotoCoreError, ClientError) as exc:
            raise self._unavailable("write", name, exc) from exc

    def exists(self, name: str) -> bool:
        try:
            self.client.head_object(Bucket=self.bucket, Key=self._key(name))
        except (BotoCoreError, ClientError) as exc:
            if self._missing(exc):
                return False
            raise self._unavailable("look up", name, exc) from exc
        return True

    def remove(self, name: str) -> None:
        try:
            self.client.delete_object(Bucket=self.bucket, Key=self._key(name))  # idempotent in S3
        except (BotoCoreError, ClientError) as exc:
            raise self._unavailable("remove", name, exc) from exc

    def remove_many(self, names: list[str]) -> None:
        """DeleteObjects, 1,000 keys a request (its limit)."""
        for start in range(0, len(names), 1000):
            batch = names[start : start + 1000]
            try:
                answer = self.client.delete_objects(Bucket=self.bucket, Delete={
                    "Objects": [{"Key": self._key(name)} for name in batch], "Quiet": True})
            except (BotoCoreError, ClientError) as exc:
                raise self._unavailable("remove", f"{batch[0]} and {len(batch) - 1} more", exc) from exc
            if errors := answer.get("Errors"):
                error = errors[0]
                raise StoreUnavailable(f"stage store {self}: cannot remove {error.get('Key')} (and {len(errors) - 1} "
                                       f"more): {error.get('Code')}: {error.get('Message')}"
                                       + (f"; {self.fix}" if self.fix else ""))

    def list(self, prefix: str) -> Iterator[Listed]:
        start = self._key(prefix)
        try:
            for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=start):
                for item in page.get("Contents", []):
                    name = item["Key"][len(self.prefix) + 1:] if self.prefix else item["Key"]
                    yield Listed(name, item["Size"], item["LastModified"].timestamp())
        except (BotoCoreError, ClientError) as exc:
            raise self._unavailable("list", prefix, exc) from exc

    def folders(self, prefix: str) -> list[str]:
        start = self._key(prefix) if prefix else (f"{self.prefix}/" if self.prefix else "")
        try:
            pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=start,
                                                                          Delimiter="/")
            return sorted(common["Prefix"][len(start):].rstrip("/") for page in pages
                          for common in page.get("CommonPrefixes", []))
        except (BotoCoreError, ClientError) as exc:
            raise self._unavailable("list the folders in", prefix or "it", exc) from exc

    def remove_folder(self, prefix: str) -> None:
        self.remove_many([blob.name for blob in self.list(prefix)])


def _temporary(name: str) -> bool:
    return name.rsplit("/", 1)[-1].startswith(".tmp-")


class StageStore:
    """Artifacts and per-document pointers in one blob store (a folder path means FolderBlobs)."""

    def __init__(self, blobs: Blobs | str | os.PathLike):
        self.blobs = FolderBlobs(blobs) if isinstance(blobs, (str, os.PathLike)) else blobs

    def __str__(self) -> str:
        return str(self.blobs)

    @staticmethod
    def _artifact(stage: str, key: str) -> str:
        return f"{stage}/{key[:2]}/{key}.bin"

    @staticmethod
    def _pointer(stage: str, doc_id: str) -> str:
        return f"current/{stage}/{xxhash.xxh3_128_hexdigest(doc_id.encode())}.json"

    def has(self, stage: str, key: str) -> bool:
        return self.blobs.exists(self._artifact(stage, key))

    def put_bytes(self, stage: str, key: str, data: bytes) -> None:
        if not self.has(stage, key):
            self.blobs.write(self._artifact(stage, key), data)

    def get_bytes(self, stage: str, key: str) -> bytes:
        return self.blobs.read(self._artifact(stage, key))

    def put(self, stage: str, key: str, obj: Any) -> None:
        self.blobs.write(self._artifact(stage, key), pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))

    def get(self, stage: str, key: str) -> Any:
        return pickle.loads(self.get_bytes(stage, key))

    def load(self, stage: str, key: str) -> Any | None:
        """The artifact, or None when it is missing or cannot be unpickled (a damaged blob is
        removed, so ``has`` is False until it is recomputed)."""
        try:
            data = self.get_bytes(stage, key)
        except FileNotFoundError:
            return None
        except OSError:  # a local disk error; S3 outages are not OSErrors and propagate
            self.blobs.remove(self._artifact(stage, key))
            return None
        try:
            return pickle.loads(data)
        except Exception:  # truncated or corrupt pickles raise many types (EOFError, UnpicklingError...)
            self.blobs.remove(self._artifact(stage, key))
            return None

    def load_bytes(self, stage: str, key: str, digest) -> bytes | None:
        """Stored bytes whose ``digest(data)`` equals ``key`` (content-addressed), or None when
        they are missing or damaged (a damaged blob is removed)."""
        try:
            data = self.get_bytes(stage, key)
        except FileNotFoundError:
            return None
        if digest(data) != key:
            self.blobs.remove(self._artifact(stage, key))
            return None
        return data

    def set_current(self, stage: str, doc_id: str, **record: Any) -> None:
        """Make ``record`` (at least ``key``) the current output of ``stage`` for ``doc_id``."""
        self.blobs.write(self._pointer(stage, doc_id), json.dumps({"doc_id": doc_id, **record}).encode())

    def current(self, stage: str, doc_id: str) -> dict | None:
        """The current record of ``stage`` for ``doc_id``; None when there is none or it is damaged
        (the document then counts as never processed by that stage)."""
        name = self._pointer(stage, doc_id)
        try:
            record = json.loads(self.blobs.read(name))
        except FileNotFoundError:
            return None
        except ValueError:  # truncated or corrupt JSON
            self.blobs.remove(name)
            return None
        return record if isinstance(record, dict) and "key" in record else None

    def listing(self, prefix: str) -> tuple[list[Listed], list[Listed]]:
        """The blobs under folder ``prefix``: those the store published, and the temporary files
        writers left there (``FolderBlobs.write``'s, of a killed writer)."""
        published: list[Listed] = []
        temporary: list[Listed] = []
        for blob in self.blobs.list(prefix):
            (temporary if _temporary(blob.name) else published).append(blob)
        return published, temporary

    @staticmethod
    def key_of(artifact: Listed) -> str:
        """The key of an artifact as ``listing`` shows it."""
        return artifact.name.rsplit("/", 1)[-1].removesuffix(".bin")

    def read_records(self, pointers: list[Listed]) -> list[dict]:
        """The records of these pointers (as ``listing`` shows them) that read as one (a damaged
        one is left out, as ``current`` leaves it out), ``blobs.reads_at_once`` at a time."""
        def read(name: str) -> dict | None:
            try:
                record = json.loads(self.blobs.read(name))
            except (FileNotFoundError, ValueError):  # removed meanwhile, or damaged
                return None
            return record if isinstance(record, dict) else None

        with ThreadPoolExecutor(self.blobs.reads_at_once) as pool:
            return [record for record in pool.map(read, [p.name for p in pointers]) if record is not None]

    def forget(self, doc_id: str) -> None:
        """Drop every stage's pointer for a deleted document (artifacts stay, shared by content)."""
        for stage in STAGES:
            self.blobs.remove(self._pointer(stage, doc_id))
