"""Errors that end a command with one line an operator can act on: a name the user gave that the
project does not declare, and failures of the machine rather than of a document."""

from __future__ import annotations

import errno
import os
import re
from typing import Callable, Iterator


class UsageError(Exception):
    """A name the user gave that the project does not declare (a corpus, a profile); the message
    lists what is declared. `rag` exits 2 with it."""


def env_origin(names: tuple[str, ...] | list[str]) -> str:
    """How a config value came from the environment variables ``names``, for an error message:
    "from $NAME" for one set now, "the default of $NAME, which is not set" for one that is not;
    "" for none."""
    return ", ".join(f"from ${name}" if name in os.environ else f"the default of ${name}, which is not set"
                     for name in names)


def _chain(exc: BaseException | None) -> Iterator[BaseException]:
    """``exc`` and each exception it was raised from (its cause, else its context), once each."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def disk_full(exc: BaseException, where: Callable[[], str]) -> str | None:
    """The operator's message when ``exc`` (or an exception it was raised from) is "no space
    left on device": an OSError with ENOSPC, or LanceDB's error text carrying it (which names
    its own source file, not the data's: only an OSError's filename is quoted). ``where()``
    names the folders the command writes (data dir, index). None for any other exception."""
    for raised in _chain(exc):
        if (isinstance(raised, OSError) and raised.errno == errno.ENOSPC) or "No space left on device" in str(raised):
            path = getattr(raised, "filename", None)
            return (f"no space left on device{f' writing {path}' if path else ''} (under {where()}); free space "
                    "there or move it to a larger disk, then run `rag ingest` again: documents already indexed "
                    "are kept and only the rest are redone")
    return None


def first_line(exc: BaseException, chars: int = 200) -> str:
    """The first line of ``exc``'s message, without the Rust source location LanceDB appends
    (``, /rustc/.../function.rs:250:5``): it names lance's code, not the data."""
    line = (str(exc).strip().splitlines() or [""])[0]
    return re.sub(r",\s*/\S+\.rs:\d+:\d+$", "", line)[:chars]


def from_lance(exc: BaseException) -> bool:
    """Whether ``exc`` (or an exception it was raised from) is LanceDB's failing to read or write
    its data (its RuntimeError/OSError text opens with "lance error")."""
    return any("lance error" in str(raised).lower() for raised in _chain(exc))
