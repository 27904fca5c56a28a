"""Reversible mapping between document ids (any relative path) and Dagster partition keys.

Dagster rejects some substrings in partition keys ("...", control characters) and its UI splits
partition selections on commas, brackets, pipes and asterisks. Those get a readable substitute
(the full-width form, or an ellipsis for "..."), so `report, march 2026.md` reads as
`report， march 2026.md`; control characters, a substitute that occurs in the id itself and a
'%' that would read as an escape are percent-encoded. Everything else, unicode and spaces
included, stays as it is.
"""

from __future__ import annotations

import re

SUBSTITUTES = {",": "，", "[": "［", "]": "］", "|": "｜", "*": "＊", "...": "…"}
_ORIGINALS = {v: k for k, v in SUBSTITUTES.items()}
_ENCODE = re.compile(r"\.\.\.|[,\[\]|*]|[\x00-\x1f\x7f]|%(?=[0-9A-Fa-f]{2})|[" + "".join(_ORIGINALS) + "]")
_DECODE = re.compile(r"(?:%[0-9A-F]{2})+|[" + "".join(_ORIGINALS) + "]")


def _encode(match: re.Match) -> str:
    text = match.group()
    return SUBSTITUTES.get(text) or "".join(f"%{b:02X}" for b in text.encode())


def _decode(match: re.Match) -> str:
    text = match.group()
    return _ORIGINALS.get(text) or bytes.fromhex(text.replace("%", "")).decode("utf-8")


def partition_key_for(doc_id: str) -> str:
    """Partition key for a document id; ``doc_id_for(partition_key_for(x)) == x``."""
    return _ENCODE.sub(_encode, doc_id)


def doc_id_for(partition_key: str) -> str:
    """Inverse of ``partition_key_for`` (also reads keys written with percent escapes only)."""
    return _DECODE.sub(_decode, partition_key)


def safe_name(value: str) -> str:
    """``value`` as part of a LanceDB table name: letters, digits and ``_`` only."""
    return re.sub(r"[^A-Za-z0-9_]", "_", value)
