"""Bounds on what one document may cost to parse, so a hostile file fails alone.

Rich formats run in a forked child process: the parent waits at most ``max_seconds`` and kills
the child after that, and the child's address space may grow by at most ``max_memory_mb`` over
the parent's (``RLIMIT_AS``), so neither a slow nor a memory-hungry parser can stall or sink the
batch. A fork (not a fresh interpreter) keeps the per-document cost at milliseconds: the parser
modules and the spaCy model are loaded once, in the parent, and shared copy-on-write. The parent
may run other threads (Dagster, LanceDB's runtime); the child only parses and exits, and should a
lock held at fork time ever block it, the time limit still ends it. A forkserver would avoid that
at the price of loading the parsers once more per process (seconds per Dagster step). Archives
(DOCX) are checked before any parser sees them: the sum of the members' uncompressed sizes, as
the zip directory declares them, must stay under ``max_expanded_mb``; Python's zipfile never
inflates a member past its declared size (it stops there and fails the CRC check), so the
declared size is a real bound.
"""

from __future__ import annotations

import io
import os
import pickle
import resource
import select
import signal
import time
import warnings
import zipfile
from dataclasses import asdict, dataclass
from typing import Any, Callable

MB = 2**20


class ParseLimitExceeded(ValueError):
    """A document exceeded one of its source's parse limits; the message names the limit and its setting."""


class ParserFailed(ValueError):
    """The parser raised in the bounded child; the message is its exception type and message."""


@dataclass(frozen=True)
class ParseLimits:
    """What parsing one document may expand to and cost. Each field is a source setting in sources.yml."""

    max_seconds: float = 30.0
    max_expanded_mb: float = 32.0
    max_elements: int = 100_000
    max_text_mb: float = 32.0
    max_memory_mb: int = 2048

    def fingerprint(self) -> str:
        """Changes whenever a limit does: a document that failed a limit is retried after it."""
        return ",".join(f"{k}={v}" for k, v in sorted(asdict(self).items()))

    def check_archive(self, data: bytes) -> None:
        """Raise ParseLimitExceeded when the zip's members (media/ images excluded: parsers do not
        read them) declare more than ``max_expanded_mb`` uncompressed. Not a zip: no check (the
        parser reports it)."""
        try:
            members = zipfile.ZipFile(io.BytesIO(data)).infolist()
        except zipfile.BadZipFile:
            return
        parsed = [m for m in members if "/media/" not in f"/{m.filename}"]
        expanded = sum(m.file_size for m in parsed)
        if expanded > self.max_expanded_mb * MB:
            largest = max(parsed, key=lambda m: m.file_size)
            raise ParseLimitExceeded(
                f"archive expands to {expanded / MB:.1f} MB ({largest.filename}: {largest.file_size / MB:.1f} MB "
                f"from {len(data) / 1024:.0f} kB), over the source's max_expanded_mb of {self.max_expanded_mb:g}; "
                "raise max_expanded_mb in sources.yml if the file is genuine, or exclude it")

    def check_output(self, text: str, element_count: int) -> None:
        """Raise ParseLimitExceeded when parsed text or element count exceed their limits."""
        if element_count > self.max_elements:
            raise ParseLimitExceeded(
                f"parsing produced {element_count} elements, over the source's max_elements of {self.max_elements}; "
                "raise max_elements in sources.yml if the file is genuine, or split it")
        if len(text) > self.max_text_mb * MB:
            raise ParseLimitExceeded(
                f"parsed text is {len(text) / MB:.1f} M characters, over the source's max_text_mb of "
                f"{self.max_text_mb:g}; raise max_text_mb in sources.yml if the file is genuine, or split it")


def run_bounded(fn: Callable[..., Any], args: tuple, limits: ParseLimits) -> Any:
    """``fn(*args)`` in a forked child, bounded by ``limits.max_seconds`` and ``limits.max_memory_mb``.

    Returns what ``fn`` returned (it must pickle). Raises ParseLimitExceeded when the child runs
    out of time or memory (the child is killed; nothing of it survives), and ParserFailed (the
    child's exception type and message) when ``fn`` raised. The parent's own interrupts (Ctrl-C,
    SIGTERM) kill the child before they propagate.
    """
    read_fd, write_fd = os.pipe()
    with warnings.catch_warnings():
        # LanceDB warns that a forked child using it could deadlock; the child never uses it.
        warnings.filterwarnings("ignore", message="lancedb fork support", category=RuntimeWarning)
        pid = os.fork()
        if pid == 0:  # the child: never returns into the caller's code
            os.close(read_fd)
            _child(fn, args, limits.max_seconds, limits.max_memory_mb * MB, write_fd)
    os.close(write_fd)
    reaped = False
    try:
        payload = _read_until(read_fd, time.monotonic() + limits.max_seconds)
        if payload is None:
            raise ParseLimitExceeded(
                f"parsing took longer than the source's max_parse_seconds of {limits.max_seconds:g} s and was "
                "stopped; raise max_parse_seconds in sources.yml if the file is genuine, or exclude it")
        _, status = os.waitpid(pid, 0)
        reaped = True
        if not payload:
            raise ParseLimitExceeded(
                f"the parser was killed ({_describe(status)}), most likely over the source's max_parse_memory_mb "
                f"of {limits.max_memory_mb}; raise max_parse_memory_mb in sources.yml if the file is genuine")
        kind, value = pickle.loads(payload)
    finally:
        os.close(read_fd)
        if not reaped:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    if kind == "memory":
        raise ParseLimitExceeded(
            f"parsing needed more than the source's max_parse_memory_mb of {limits.max_memory_mb}; raise "
            "max_parse_memory_mb in sources.yml if the file is genuine, or exclude it")
    if kind == "limit":
        raise ParseLimitExceeded(value)
    if kind == "error":
        raise ParserFailed(value)
    return value


def _child(fn, args, limits_seconds: float, memory_bytes: int, write_fd: int) -> None:
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # the parent handles interrupts and kills us
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)  # and should the parent die, the alarm kills us
        signal.alarm(int(limits_seconds) + 2)
        cap = _address_space() + memory_bytes
        resource.setrlimit(resource.RLIMIT_AS, (cap, resource.RLIM_INFINITY))
        try:
            payload = ("ok", fn(*args))
        except MemoryError:
            payload = ("memory", None)
        except ParseLimitExceeded as exc:
            payload = ("limit", str(exc))
        except Exception as exc:  # parsers raise many types; the parent reports type and message
            # C libraries (lxml) report a failed allocation as their own error: near the cap, it was memory.
            near_cap = _address_space(peak=True) > cap - memory_bytes // 10
            payload = ("memory", None) if near_cap else ("error", f"{type(exc).__name__}: {exc}")
        try:
            data = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
        except MemoryError:
            data = pickle.dumps(("memory", None))
        with os.fdopen(write_fd, "wb") as out:
            out.write(data)
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def _address_space(peak: bool = False) -> int:
    """This process' virtual memory size (or its peak so far), in bytes."""
    field = "VmPeak:" if peak else "VmSize:"
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith(field))


def _read_until(fd: int, deadline: float) -> bytes | None:
    """Everything the child writes until it closes the pipe; None when the deadline passes first."""
    parts = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, MB)
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)


def _describe(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exit status {os.WEXITSTATUS(status)}"
