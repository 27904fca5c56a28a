"""Bounds on what one document may cost to parse, so a hostile file fails alone.

Rich formats are parsed in a forked worker process: the parent waits at most ``max_seconds`` for
each document and kills the worker after that (a parse that reports its pages, a PDF's, may take
``max_seconds_per_page`` per page, and ``max_seconds_per_ocr_page`` more per page it reads by OCR,
when that is longer, but no page longer than ``max_seconds``);
the worker leads a process group, so a program it runs (pandoc) is killed with it. While it parses
a document the worker's address space may grow by at most ``max_memory_mb`` (``RLIMIT_AS``, which
a program it runs inherits), so neither a slow nor a memory-hungry parser can stall or sink the
batch. A fork (not a fresh interpreter) shares the parser modules and the spaCy model, loaded once
in the parent, copy-on-write; the worker then parses document after document, since forking and
tearing down a child per document cost 30-50 ms, ten times the parse of a typical page. It retires
after any failure, once it has grown by ``RETIRE_GROWTH``, when the parent has loaded modules
since the fork (a parser for another format: the next worker shares them) or after
``IDLE_SECONDS`` idle, and the next document forks a new one. The parent may run other threads
(Dagster, LanceDB's runtime); the worker only parses, and should a lock held at fork time ever
block it, the time limit still ends it. Archives (DOCX, PPTX, XLSX, ODT, EPUB) are checked before
any parser sees them: the sum of the members' uncompressed sizes, as the zip directory declares
them, must stay under ``max_expanded_mb``; Python's zipfile never inflates a member past its
declared size (it stops there and fails the CRC check), so the declared size is a real bound.
"""

from __future__ import annotations

import io
import os
import pickle
import resource
import select
import signal
import sys
import threading
import time
import warnings
import zipfile
from dataclasses import asdict, dataclass
from typing import Any, Callable

MB = 2**20
IDLE_SECONDS = 60.0  # a worker with nothing to parse for this long exits
RETIRE_GROWTH = 256 * MB  # a worker whose resident memory grew this much since its fork retires


class ParseLimitExceeded(ValueError):
    """A document exceeded one of its source's parse limits; the message names the limit and its setting."""


class ParserFailed(ValueError):
    """The parser raised in the bounded child; the message is its exception type and message."""


@dataclass(frozen=True)
class ParseLimits:
    """What parsing one document may expand to and cost. Each field is a source setting in sources.yml."""

    max_seconds: float = 30.0
    max_seconds_per_page: float = 0.3
    max_seconds_per_ocr_page: float = 10.0
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


_shared: _Worker | None = None  # this process' worker, reused across calls
_shared_lock = threading.Lock()
_PAGES = "pages"  # a worker's progress message: (_PAGES, pages done, pages in all, pages read by OCR)


@dataclass
class _Progress:
    """A worker's progress through its current call: the pages of the call's earlier paged
    documents, of the current one (None: none yet), those done, and those read by OCR."""

    replies: int
    seconds: float
    before: int = 0
    current: int | None = None
    done: int = 0
    ocr: int = 0

    def send(self) -> None:
        _send(self.replies, pickle.dumps((_PAGES, self.before + self.done, self.before + (self.current or 0), self.ocr)))
        signal.alarm(int(self.seconds) + 2)


_reporting: _Progress | None = None  # in a worker, during a call


def report_pages(done: int, total: int) -> None:
    """Called by a bounded function as it parses a paged document: ``done`` of its ``total``
    pages are parsed. In a parse worker the parent then allows the whole call
    ``max(max_seconds, total x max_seconds_per_page + OCR'd pages x max_seconds_per_ocr_page)``
    and the next page ``max_seconds``; elsewhere it does nothing. Paged documents parsed one
    after another in one call (an e-mail's PDF attachments) count together: a report of page 0
    starts the next one."""
    if _reporting is not None:
        if done == 0 and _reporting.current is not None:
            _reporting.before += _reporting.current
        _reporting.current, _reporting.done = total, done
        _reporting.send()


def report_ocr_page() -> None:
    """Called by a bounded function before it reads a page by OCR (see ``report_pages``)."""
    if _reporting is not None:
        _reporting.ocr += 1
        _reporting.send()


def ocr_pages_reported() -> int:
    """The pages and pictures the current call has reported read by OCR (``report_ocr_page``);
    0 outside a parse worker."""
    return _reporting.ocr if _reporting is not None else 0


def run_bounded(fn: Callable[..., Any], args: tuple, limits: ParseLimits) -> Any:
    """``fn(*args)`` in a forked parse worker, bounded by ``limits.max_seconds`` and ``limits.max_memory_mb``.

    ``fn`` and ``args`` must pickle (``fn`` a module-level function) and so must its result.
    Returns what ``fn`` returned. Raises ParseLimitExceeded when the call runs out of time or
    memory (the worker is killed; nothing of it survives), and ParserFailed (the exception's type
    and message) when ``fn`` raised. The parent's own interrupts (Ctrl-C, SIGTERM) kill the worker
    before they propagate. A call made while another thread of this process is waiting on the
    worker gets a worker of its own, used once.
    """
    global _shared
    request = pickle.dumps((fn, args, limits.max_seconds, limits.max_memory_mb * MB), protocol=pickle.HIGHEST_PROTOCOL)
    if not _shared_lock.acquire(blocking=False):
        worker = _Worker()
        try:
            return _unpack(_call_once(worker, request, limits), limits)
        finally:
            worker.close()
    try:
        if _shared is not None and not _shared.usable():
            _shared.close()
            _shared = None
        if _shared is None:
            _shared = _Worker()
        worker, reply = _shared, None
        try:
            reply = _call_once(worker, request, limits)
        finally:
            if reply is None or reply[0]:  # killed, or retiring
                worker.close()
                _shared = None
        return _unpack(reply, limits)
    finally:
        _shared_lock.release()


def _unpack(reply: tuple[bool, tuple], limits: ParseLimits) -> Any:
    kind, value = reply[1]
    if kind == "memory":
        raise ParseLimitExceeded(
            f"parsing needed more than the source's max_parse_memory_mb of {limits.max_memory_mb}; raise "
            "max_parse_memory_mb in sources.yml if the file is genuine, or exclude it")
    if kind == "limit":
        raise ParseLimitExceeded(value)
    if kind == "error":
        raise ParserFailed(value)
    return value


def _call_once(worker: "_Worker", request: bytes, limits: ParseLimits) -> tuple[bool, tuple]:
    """Send one request and wait for its reply, (retiring, payload); raises ParseLimitExceeded when
    the reply does not come in time (``max_seconds``, or what the pages the worker reports allow)
    or the worker dies. The caller closes (kills) the worker whenever no reply came."""
    start = time.monotonic()
    whole = deadline = start + limits.max_seconds
    pages = None
    _send(worker.requests, request)
    while True:
        payload = _receive(worker.replies, deadline)
        if payload is None:
            raise ParseLimitExceeded(_overtime(limits, pages, whole - start, stalled=deadline < whole))
        if not payload:
            status = worker.close()
            raise ParseLimitExceeded(
                f"the parser was killed ({_describe(status)}), most likely over the source's max_parse_memory_mb "
                f"of {limits.max_memory_mb}; raise max_parse_memory_mb in sources.yml if the file is genuine")
        reply = pickle.loads(payload)
        if reply[0] != _PAGES:
            worker.last_used = time.monotonic()
            return reply
        pages = reply[1:]
        whole = start + max(limits.max_seconds,
                            pages[1] * limits.max_seconds_per_page + pages[2] * limits.max_seconds_per_ocr_page)
        deadline = min(whole, time.monotonic() + limits.max_seconds)


def _overtime(limits: ParseLimits, pages: tuple[int, int, int] | None, allowed: float, stalled: bool) -> str:
    """Why a parse that gave no reply in time was stopped, naming the setting to raise."""
    fix = "in sources.yml if the file is genuine, or exclude it"
    if pages is not None and stalled:
        return (f"parsing was stopped after page {pages[0]} of {pages[1]}: the next step took longer than the "
                f"source's max_parse_seconds of {limits.max_seconds:g} s; raise max_parse_seconds {fix}")
    if pages is not None and allowed > limits.max_seconds and pages[2]:
        return (f"parsing its {pages[1]} pages, {pages[2]} of them by OCR, took longer than the {allowed:.0f} s "
                f"the source's max_parse_seconds_per_page of {limits.max_seconds_per_page:g} s and "
                f"max_parse_seconds_per_ocr_page of {limits.max_seconds_per_ocr_page:g} s allow them and was "
                f"stopped after {pages[0]} pages; raise max_parse_seconds_per_ocr_page {fix}")
    if pages is not None and allowed > limits.max_seconds:
        return (f"parsing its {pages[1]} pages took longer than the {allowed:.0f} s the source's "
                f"max_parse_seconds_per_page of {limits.max_seconds_per_page:g} s allows them and was stopped "
                f"after {pages[0]} pages; raise max_parse_seconds_per_page {fix}")
    return (f"parsing took longer than the source's max_parse_seconds of {limits.max_seconds:g} s and was "
            f"stopped; raise max_parse_seconds {fix}")


class _Worker:
    """A child forked from this process that runs requests one at a time until it is killed,
    retires (after a failure, or once it has grown by ``RETIRE_GROWTH``) or sits idle for
    ``IDLE_SECONDS``; it shares the parent's loaded parsers copy-on-write, as forked."""

    def __init__(self) -> None:
        self.owner, self.modules, self.last_used, self.status = os.getpid(), len(sys.modules), time.monotonic(), None
        request_read, self.requests = os.pipe()
        self.replies, reply_write = os.pipe()
        with warnings.catch_warnings():
            # LanceDB warns that a forked child using it could deadlock; the worker never uses it.
            warnings.filterwarnings("ignore", message="lancedb fork support", category=RuntimeWarning)
            self.pid = os.fork()
        if self.pid == 0:  # the worker: never returns into the caller's code
            os.setpgid(0, 0)  # its own process group: killing it kills what it started (pandoc)
            # Keep nothing of the parent's open but the standard streams: an inherited lock file
            # (the corpus' ingest lock) or pipe would otherwise stay held while the worker lives.
            # A thread a library restarts in a forked child (LanceDB's event loop) loses its files
            # with them and fails: the worker runs no threads of its own, so that is not reported.
            threading.excepthook = lambda args: None
            low, high = sorted((request_read, reply_write))
            for first, last in ((3, low), (low + 1, high), (high + 1, os.sysconf("SC_OPEN_MAX"))):
                os.closerange(first, last)
            _serve(request_read, reply_write)
        try:
            os.setpgid(self.pid, self.pid)  # set here too, so close() never finds it unset
        except (ProcessLookupError, PermissionError):  # the worker already exited, or set it itself
            pass
        os.close(request_read)
        os.close(reply_write)

    def usable(self) -> bool:
        """Still this process' worker, forked after everything the process has loaded, and not
        near its idle exit."""
        return (self.owner == os.getpid() and self.modules == len(sys.modules)
                and time.monotonic() - self.last_used < IDLE_SECONDS / 2)

    def close(self) -> int:
        """Kill the worker (if still running), reap it and close the pipes, once; its wait status."""
        if self.status is None:
            os.close(self.requests)
            os.close(self.replies)
            if self.owner != os.getpid():  # inherited through a fork of the parent: not ours to reap
                self.status = 0
            else:
                try:
                    os.killpg(self.pid, signal.SIGKILL)  # the worker and any program it runs
                except ProcessLookupError:
                    pass
                self.status = os.waitpid(self.pid, 0)[1]
        return self.status


def _serve(requests: int, replies: int) -> None:
    global _reporting
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # the parent handles interrupts and kills us
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)  # should the parent stop reading, the alarm kills us
        born = _status("VmRSS:")
        while select.select([requests], [], [], IDLE_SECONDS)[0]:
            message = _receive(requests, None)
            if not message:  # the parent closed the pipe or exited
                break
            fn, args, seconds, memory_bytes = pickle.loads(message)
            signal.alarm(int(seconds) + 2)
            start = _status("VmSize:")
            resource.setrlimit(resource.RLIMIT_AS, (start + memory_bytes, resource.RLIM_INFINITY))
            _reporting = _Progress(replies, seconds)
            payload = _run(fn, args, start, memory_bytes)
            _reporting = None
            resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
            # A failure may leave a parser's state behind, a large document the heap grown: start afresh.
            retire = (payload[0] != "ok" or _status("VmPeak:") > start + memory_bytes // 4
                      or _status("VmRSS:") > born + RETIRE_GROWTH)
            try:
                data = pickle.dumps((retire, payload), protocol=pickle.HIGHEST_PROTOCOL)
            except MemoryError:
                data, retire = pickle.dumps((True, ("memory", None))), True
            _send(replies, data)
            signal.alarm(0)
            if retire:
                break
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def _run(fn, args, start: int, memory_bytes: int) -> tuple:
    try:
        return ("ok", fn(*args))
    except MemoryError:
        return ("memory", None)
    except ParseLimitExceeded as exc:
        return ("limit", str(exc))
    except Exception as exc:  # parsers raise many types; the parent reports type and message
        # C libraries (lxml) report a failed allocation as their own error: near the cap, it was memory.
        near_cap = _status("VmPeak:") > start + memory_bytes - memory_bytes // 10
        return ("memory", None) if near_cap else ("error", f"{type(exc).__name__}: {exc}")


def _send(fd: int, data: bytes) -> None:
    """One message: its length, then its bytes."""
    view = memoryview(len(data).to_bytes(8, "little") + data)
    while view:
        view = view[os.write(fd, view):]


def _receive(fd: int, deadline: float | None) -> bytes | None:
    """The next message on ``fd``; b"" when the writer closed the pipe first; None when
    ``deadline`` (monotonic) passes first."""
    header = _read_exactly(fd, 8, deadline)
    if not header:
        return header
    return _read_exactly(fd, int.from_bytes(header, "little"), deadline)


def _read_exactly(fd: int, size: int, deadline: float | None) -> bytes | None:
    parts, left = [], size
    while left:
        wait = None if deadline is None else deadline - time.monotonic()
        if wait is not None and (wait <= 0 or not select.select([fd], [], [], wait)[0]):
            return None
        chunk = os.read(fd, min(left, MB))
        if not chunk:
            return b""
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def _status(field: str) -> int:
    """A size from /proc/self/status (``VmSize:``, ``VmPeak:``, ``VmRSS:``), in bytes."""
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith(field))


def _describe(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exit status {os.WEXITSTATUS(status)}"
