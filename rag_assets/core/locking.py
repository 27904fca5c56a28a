"""One ingest at a time per corpus, and one creator at a time per table: advisory locks that the OS
releases when their holder dies.

``fcntl.flock`` locks belong to the open file description, so a crashed, killed (SIGKILL) or
interrupted holder never leaves a stale lock behind: there is nothing to clean up by hand. The
holder's pid is written into the lock file for the message a second ingest gets. flock works on
local file systems; a data dir on NFS needs a shared lock service instead.
"""

from __future__ import annotations

import fcntl
import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

LOCK_FILE = ".ingest.lock"


class IngestLocked(RuntimeError):
    """Another process is ingesting this corpus; the message names its pid and the lock file."""


def _flock(fd: int, wait_seconds: float) -> bool:
    """Take an exclusive flock on ``fd``, trying every 0.05 s for up to ``wait_seconds``; whether it
    was taken."""
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)


@contextmanager
def ingest_lock(folder: str | os.PathLike, corpus: str, wait_seconds: float = 0.0,
                on_wait: Callable[[str], None] | None = None) -> Iterator[Path]:
    """Hold the corpus' ingest lock (``folder``/.ingest.lock, created if needed) for the block.

    Waits up to ``wait_seconds`` for a running ingest to finish (0: do not wait; ``on_wait`` is
    told the holder's pid once when it starts waiting), then raises IngestLocked naming the
    holder's pid. Yields the lock file's path. Released when the block ends or the process dies,
    whichever comes first.
    """
    path = Path(folder) / LOCK_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if wait_seconds > 0 and on_wait is not None and not _flock(fd, 0):
            on_wait(os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown")
        if not _flock(fd, wait_seconds):
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            raise IngestLocked(
                f"corpus {corpus!r} is being ingested by process {holder} (lock {path}); wait for it to "
                "finish and run again. The lock goes away with that process, even if it crashes.")
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield path
    finally:
        os.close(fd)  # closing the last descriptor releases the lock


CREATE_WAIT_SECONDS = 60.0


@contextmanager
def table_creation_lock(uri: str, name: str, wait_seconds: float = CREATE_WAIT_SECONDS) -> Iterator[None]:
    """Serialise creating LanceDB table ``name`` in the database at ``uri`` across processes.

    Two processes that create one table at once both commit: the later create lands as an
    Overwrite that empties the table, so a write committed in between is lost or fails. A local
    database takes an flock beside its tables (``.NAME.create.lock``); an object store has no
    file locks, so there the block runs unguarded. Raises TimeoutError after ``wait_seconds``."""
    folder = Path(uri[len("file://"):]) if uri.startswith("file://") else None if "://" in uri else Path(uri)
    if folder is None:
        yield
        return
    path = folder / f".{name}.create.lock"
    for attempt in range(3):  # a reader's connect removes the folder it found missing: make it again
        folder.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            break
        except FileNotFoundError:
            if attempt == 2:
                raise
    try:
        if not _flock(fd, wait_seconds):
            raise TimeoutError(f"another process has held {path} for {wait_seconds:.0f} s while creating "
                               f"table {name!r}; stop it (the lock goes with it) and run again")
        yield
    finally:
        os.close(fd)

