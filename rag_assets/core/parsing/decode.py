"""Bytes -> text for text-like documents, refusing binary data with a clear cause."""

from __future__ import annotations

import codecs

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def decode_text(data: bytes) -> tuple[str, str]:
    """Decode ``data`` and normalise newlines the way Python's text mode reads a file.

    Returns ``(text, encoding)``. A BOM decides the encoding; otherwise UTF-8, then cp1252 for
    legacy 8-bit text. Raises ``ValueError`` for data that looks binary (NUL or control bytes).
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            text = data.decode(encoding)
            break
    else:
        head = data[:65536]
        if b"\x00" in head or _control_ratio(head) > 0.05:
            raise ValueError("file content is binary, not text (NUL/control bytes); check its extension")
        try:
            text, encoding = data.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:
            text, encoding = data.decode("cp1252", errors="replace"), "cp1252"
    return text.replace("\r\n", "\n").replace("\r", "\n"), encoding


def _control_ratio(data: bytes) -> float:
    if not data:
        return 0.0
    allowed = {9, 10, 12, 13, 27}
    bad = sum(1 for b in data if b < 32 and b not in allowed)
    return bad / len(data)
