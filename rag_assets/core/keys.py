"""Reversible mapping between document ids (any relative path) and Dagster partition keys.

Dagster rejects some characters in partition keys and its UI splits partition selections on
commas and brackets, so those (and '%') are percent-encoded; everything else, unicode and spaces
included, stays readable.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile(r"[%,\[\]|*\x00-\x1f\x7f]|\.\.\.")


def partition_key_for(doc_id: str) -> str:
    """Partition key for a document id; ``doc_id_for(partition_key_for(x)) == x``."""
    return _UNSAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), doc_id)


def doc_id_for(partition_key: str) -> str:
    """Inverse of ``partition_key_for``."""
    return re.sub(
        r"(?:%[0-9A-F]{2})+", lambda m: bytes.fromhex(m.group().replace("%", "")).decode("utf-8"), partition_key
    )
