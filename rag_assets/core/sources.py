"""List and read documents of a disk source, confined to its root folder."""

from __future__ import annotations

import errno
import fnmatch
import os
import re
import time
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from urllib.parse import quote_from_bytes

import regex

from rag_assets.core.errors import env_origin
from rag_assets.core.hashing import content_hash
from rag_assets.core.models import RawDocument
from rag_assets.core.parsing import DocumentError


class SourceUnavailable(RuntimeError):
    """The source as a whole cannot be listed or read (server down, access denied): the sweep
    fails and reports nothing, so the next one starts from the same state."""


class SourceFolderUnreadable(SourceUnavailable):
    """A disk source's folder, or one under it the globs may want, cannot be listed (permissions):
    fixed where the source is, not by waiting."""


class SourceFolderMissing(FileNotFoundError):
    """A disk source's folder does not exist: a config mistake, reported before anything is
    planned (so nothing is deleted for it)."""


READ_ATTEMPTS = 3
RACY_SECONDS = 1.0
OUTSIDE_ROOT = "symlink resolves outside the source root; refused (it is never read)"
BROKEN_LINK = ("symlink points to nothing (its target is missing, or the links loop); fix or remove the link "
               "(a git-annex file not present here: git annex get)")


@dataclass(frozen=True)
class DocumentRef:
    """A document as listed by its source, before it is read (``size`` -1: the listing gives none).
    ``refused`` says why the source will not read it (the sweep reports that as the document's
    error instead of reading it). ``revalidates``: the source's ``read(doc_id, known)`` takes the
    version recorded at the last read and returns None when the document has not changed since
    (an HTTP 304), so its bytes are not fetched again."""

    doc_id: str
    uri: str
    size: int
    source_version: str
    refused: str | None = None
    revalidates: bool = False


NO_TENANT = ("lies at the root of a source whose first folder names each document's tenant (tenant_from_path), "
             "so no tenant could query it: move it into its tenant's folder, or exclude it in sources.yml")


def tenant_of(tenant: str | None, tenant_from_path: bool):
    """The tenant of a document id under a source declaring ``tenant`` or ``tenant_from_path`` (its
    first folder; None for a document at the root, which such a source refuses): None where it
    declares neither."""
    if tenant_from_path:
        return lambda doc_id: doc_id.split("/", 1)[0] if "/" in doc_id else None
    return lambda doc_id: tenant


def tenant_folders_only(refs: list[DocumentRef]) -> list[DocumentRef]:
    """``refs`` of a ``tenant_from_path`` source, those at its root refused (they have no tenant)."""
    return [ref if "/" in ref.doc_id or ref.refused else replace(ref, refused=NO_TENANT) for ref in refs]


def matches(doc_id: str, include: tuple[str, ...], exclude: tuple[str, ...]) -> bool:
    """Glob match on the posix relative path; ``**/`` also matches the top level."""
    return _matcher(include, exclude)(doc_id)


@lru_cache(maxsize=64)
def _matcher(include: tuple[str, ...], exclude: tuple[str, ...]):
    """``matches`` for one pair of pattern lists, as two compiled regular expressions."""

    def compile_any(patterns: tuple[str, ...]):
        variants = _variants(patterns)
        return re.compile("|".join(f"(?:{fnmatch.translate(v)})" for v in variants)) if variants else None

    wanted, unwanted = compile_any(include), compile_any(exclude)
    return lambda doc_id: bool(wanted and wanted.match(doc_id)) and not (unwanted and unwanted.match(doc_id))


def _variants(patterns: tuple[str, ...]) -> list[str]:
    return [v for p in patterns for v in ([p, p[3:]] if p.startswith("**/") else [p])]


@lru_cache(maxsize=64)
def _folder_filter(include: tuple[str, ...], exclude: tuple[str, ...]):
    """Whether the globs may want a path under a folder (a prefix ending in "/"): some include
    pattern matches some path that starts with the prefix (``regex``'s partial match), and no
    exclude pattern ending in "*" matches the prefix itself (such a pattern takes every path under
    it, as "*" crosses "/"). Errs towards "may": an exclude that leaves out only part of the folder
    keeps it wanted."""
    includes = [regex.compile(fnmatch.translate(v)) for v in _variants(include)]
    whole = [re.compile(fnmatch.translate(v)) for v in _variants(exclude) if v.endswith("*")]
    return lambda prefix: (any(pattern.fullmatch(prefix, partial=True) for pattern in includes)
                           and not any(pattern.match(prefix) for pattern in whole))


def list_disk(root: str | Path, include: tuple[str, ...], exclude: tuple[str, ...],
              root_env: tuple[str, ...] = ()) -> list[DocumentRef]:
    """Regular files under ``root`` matching the globs, sorted by id. A symlink that resolves
    outside ``root`` is listed as refused (never followed out of the source), and so is a file
    whose metadata cannot be read (its cause given), and a dangling or looping link (its rows
    stay until it is fixed or removed); files that vanish while listing are left out. Raises
    SourceFolderUnreadable for a folder that cannot be listed and holds files the globs may want:
    its documents would read as deleted; SourceFolderMissing naming the environment variables
    ``root_env`` the folder's path was read from."""
    base = Path(root).resolve()
    if not base.is_dir():
        what = "is a file, not a folder" if base.exists() else "does not exist"
        origin = f" ({env_origin(root_env)})" if root_env else ""
        fix = " or the environment variable it reads" if root_env else ""
        raise SourceFolderMissing(f"source folder {base}{origin} {what}; fix the source's 'path' in sources.yml{fix}")
    wanted = _matcher(include, exclude)
    refs = []
    for doc_id, entry in _entries(str(base), _folder_filter(include, exclude)):
        if not wanted(doc_id):
            continue
        if not _utf8(doc_id):  # bytes of another encoding (a name a Windows zip wrote in cp1252)
            shown = doc_id.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            refs.append(DocumentRef(shown, _uri(entry.path), 0, "refused", refused=(
                "its file name is not UTF-8; rename it (convmv -f cp1252 -t utf-8, or by hand)")))
            continue
        try:
            if entry.is_symlink():  # the only way out of the root: folders are not followed
                try:
                    resolved = Path(entry.path).resolve(strict=True)
                except (FileNotFoundError, RuntimeError):  # RuntimeError: a loop (Python 3.11)
                    refs.append(DocumentRef(doc_id, _uri(entry.path), 0, "refused", refused=BROKEN_LINK))
                    continue
                if not resolved.is_relative_to(base):
                    refs.append(DocumentRef(doc_id, _uri(entry.path), 0, "refused", refused=OUTSIDE_ROOT))
                    continue
                if not resolved.is_file():
                    continue
                stat = resolved.stat()
            elif entry.is_file(follow_symlinks=False):
                stat = entry.stat(follow_symlinks=False)
            else:
                continue
        except FileNotFoundError:  # vanished while listed
            continue
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                refs.append(DocumentRef(doc_id, _uri(entry.path), 0, "refused", refused=BROKEN_LINK))
                continue
            refs.append(DocumentRef(doc_id, _uri(entry.path), 0, "refused",
                                    refused=f"cannot be read ({exc.strerror}); check its permissions"))
            continue
        refs.append(DocumentRef(doc_id, _uri(entry.path), stat.st_size, f"mtime:{stat.st_mtime_ns}"))
    return sorted(refs, key=lambda r: r.doc_id)


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # os.scandir decodes undecodable bytes to lone surrogates
        return False
    return True


def _entries(base: str, may_want_under):
    """(posix path relative to ``base``, directory entry) of everything under ``base`` that is
    neither a folder nor a link to one (as ``os.walk`` without ``followlinks``). A folder that
    vanishes while listing is skipped; one that cannot be listed raises SourceUnavailable unless
    ``may_want_under`` (the globs) says nothing under it can be wanted."""
    stack = [("", base)]
    while stack:
        prefix, folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except FileNotFoundError:  # vanished while listing
            continue
        except OSError as exc:
            if prefix and not may_want_under(prefix):
                continue  # excluded: nothing in it would be listed
            fix = f", or exclude it in sources.yml (exclude: ['{prefix}**'])" if prefix else \
                " (the user rag and Dagster run as must be able to list it)"
            raise SourceFolderUnreadable(
                f"source folder {folder} cannot be listed ({exc.strerror}): its documents would read as deleted, "
                f"so nothing was swept; fix its permissions{fix}") from None
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                stack.append((f"{prefix}{entry.name}/", entry.path))
                continue
            try:
                to_folder = entry.is_symlink() and entry.is_dir()
            except OSError:  # a symlink loop: listed, then left out as a dangling link is
                to_folder = False
            if not to_folder:  # a link to a folder: neither entered nor listed
                yield prefix + entry.name, entry


def _uri(path: str) -> str:
    """``Path(path).as_uri()`` of an absolute path, without building a Path."""
    return "file://" + quote_from_bytes(os.fsencode(path))


def read_disk(root: str | Path, doc_id: str, max_bytes: int | None = None) -> RawDocument:
    """Read one document by id, as one consistent version of the file.

    Raises DocumentError (naming the document and the cause) for an id that escapes ``root``, a
    file that vanished, one larger than ``max_bytes``, or one that kept changing while it was
    read (size, mtime or inode differ before and after, over ``READ_ATTEMPTS`` tries). File
    times tick coarsely (a few ms), so a file modified within ``RACY_SECONDS`` is read twice and
    kept only if both reads agree (git's "racy" rule).
    """
    base = Path(root).resolve()
    try:
        path = (base / doc_id).resolve(strict=True)
    except FileNotFoundError:
        raise DocumentError(doc_id, "file vanished after it was listed; the next sweep drops it") from None
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop
        raise DocumentError(doc_id, f"cannot be resolved ({getattr(exc, 'strerror', None) or exc})") from None
    if not path.is_relative_to(base):
        raise DocumentError(doc_id, f"resolves outside the source root {base}; refused")
    for attempt in range(READ_ATTEMPTS):
        try:
            before = path.stat()
            if max_bytes is not None and before.st_size > max_bytes:
                raise DocumentError(doc_id, too_large(before.st_size, max_bytes))
            data = path.read_bytes()
            after = path.stat()
        except FileNotFoundError:
            raise DocumentError(doc_id, "file vanished after it was listed; the next sweep drops it") from None
        except OSError as exc:
            raise DocumentError(doc_id, f"cannot be read ({exc.strerror}); check its permissions") from None
        if _same(before, after) and len(data) == after.st_size and (
                not _racy(after) or (path.read_bytes() == data and _same(after, path.stat()))):
            return RawDocument(
                doc_id=doc_id,
                uri=(base / doc_id).as_uri(),
                content_hash=content_hash(data),
                size=len(data),
                source_version=f"mtime:{after.st_mtime_ns}",
                data=data,
            )
        time.sleep(0.05 * (attempt + 1))
    raise DocumentError(doc_id, f"file kept changing while it was read ({READ_ATTEMPTS} attempts); "
                                "it is read again once it changes no more")


def s3_folder(prefix: str) -> str:
    """The folder an S3 source's ``prefix`` names, as the start of its documents' keys ("" for the
    whole bucket): ``handbook`` and ``handbook/`` both list ``handbook/...`` only, never the
    siblings ``handbook2/...`` or ``handbook.md`` that a bare string prefix would also match (their
    ids could not be read back under the folder)."""
    return prefix.rstrip("/") + "/" if prefix.strip("/") else ""


def too_large(size: int, max_bytes: int) -> str:
    """The error of a document over the size limit."""
    return (f"{_megabytes(size)} exceeds the source's limit of {max_bytes / 2**20:.4g} MB; raise "
            "max_document_mb in sources.yml or split the file")


def _megabytes(size: int) -> str:
    return f"{size / 2**20:.1f} MB" if size >= 2**20 else f"{size / 2**20:.3g} MB"


def _racy(stat: os.stat_result) -> bool:
    return time.time_ns() - stat.st_mtime_ns < RACY_SECONDS * 1e9


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_size, a.st_mtime_ns, a.st_ino) == (b.st_size, b.st_mtime_ns, b.st_ino)


def describe_source_version(source_version: str | None) -> str | None:
    """A source version as a person reads it: a file's mtime as an ISO-8601 UTC time, an ETag as is."""
    if source_version and source_version.startswith("mtime:"):
        seconds = int(source_version[6:]) / 1e9
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{int(seconds % 1 * 1000):03d}Z"
    return source_version
