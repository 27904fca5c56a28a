"""List and read documents of a disk source, confined to its root folder."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from rag_assets.core.hashing import content_hash
from rag_assets.core.models import RawDocument


@dataclass(frozen=True)
class DocumentRef:
    """A document as listed by its source, before it is read."""

    doc_id: str
    uri: str
    size: int
    source_version: str


def matches(doc_id: str, include: tuple[str, ...], exclude: tuple[str, ...]) -> bool:
    """Glob match on the posix relative path; ``**/`` also matches the top level."""

    def hit(pattern: str) -> bool:
        return fnmatch.fnmatchcase(doc_id, pattern) or (
            pattern.startswith("**/") and fnmatch.fnmatchcase(doc_id, pattern[3:])
        )

    return any(hit(p) for p in include) and not any(hit(p) for p in exclude)


def list_disk(root: str | Path, include: tuple[str, ...], exclude: tuple[str, ...]) -> list[DocumentRef]:
    """Regular files under ``root`` matching the globs, sorted by id. Symlinks that resolve
    outside ``root`` are skipped (never followed out of the source)."""
    base = Path(root).resolve()
    if not base.is_dir():
        raise FileNotFoundError(f"source folder {base} does not exist; fix 'path' in sources.yml")
    refs = []
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        dirnames.sort()
        for filename in filenames:
            path = Path(dirpath) / filename
            doc_id = PurePosixPath(path.relative_to(base).as_posix()).as_posix()
            if not matches(doc_id, include, exclude):
                continue
            try:
                resolved = path.resolve(strict=True)
                if not resolved.is_relative_to(base) or not resolved.is_file():
                    continue
                stat = resolved.stat()
            except OSError:
                continue
            refs.append(DocumentRef(doc_id, path.as_uri(), stat.st_size, f"mtime:{stat.st_mtime_ns}"))
    return sorted(refs, key=lambda r: r.doc_id)


def read_disk(root: str | Path, doc_id: str) -> RawDocument:
    """Read one document by id; refuses ids that escape ``root``."""
    base = Path(root).resolve()
    path = (base / doc_id).resolve(strict=True)
    if not path.is_relative_to(base):
        raise PermissionError(f"{doc_id}: resolves outside the source root {base}; refused")
    stat = path.stat()
    data = path.read_bytes()
    return RawDocument(
        doc_id=doc_id,
        uri=(base / doc_id).as_uri(),
        content_hash=content_hash(data),
        size=len(data),
        source_version=f"mtime:{stat.st_mtime_ns}",
        data=data,
    )
