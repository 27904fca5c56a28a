"""Bytes -> text for text-like documents, refusing binary data with a clear cause."""

from __future__ import annotations

import codecs
import re

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def _legacy_bytes(exc: UnicodeDecodeError) -> tuple[str, int]:
    """Codec error handler: bytes that are not UTF-8 read as cp1252."""
    return exc.object[exc.start:exc.end].decode("cp1252", errors="replace"), exc.end


codecs.register_error("rag-cp1252", _legacy_bytes)


def decode_text(data: bytes) -> tuple[str, str]:
    """Decode ``data`` and normalise newlines the way Python's text mode reads a file.

    Returns ``(text, encoding)``. A BOM decides the encoding; otherwise UTF-16 when every other
    byte of the start is NUL, else UTF-8, with any bytes that are not UTF-8 read as cp1252 (legacy
    8-bit text, or a UTF-8 file with a few such bytes pasted in: its UTF-8 text stays intact).
    Raises ``ValueError`` for data that looks binary (NUL or control bytes).
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            text = data.decode(encoding)
            break
    else:
        head = data[:65536]
        encoding = _utf16_without_bom(head, len(data))
        if encoding:
            text = data.decode(encoding)
            if _control_ratio(text[:32768].encode("utf-8")) > 0.05:
                raise ValueError("file content is binary, not text (NUL/control bytes); check its extension")
        elif b"\x00" in head or _control_ratio(head) > 0.05:
            raise ValueError("file content is binary, not text (NUL/control bytes); check its extension")
        else:
            try:
                text, encoding = data.decode("utf-8"), "utf-8"
            except UnicodeDecodeError:
                text = data.decode("utf-8", errors="rag-cp1252")
                encoding = "utf-8+cp1252" if any(ord(c) > 0x7F for c in data.decode("utf-8", errors="ignore")) \
                    else "cp1252"
    return text.replace("\r\n", "\n").replace("\r", "\n"), encoding


# An inline base64 data URI (a picture pasted into Markdown, a font in CSS): its payload is bytes, not
# text. Shorter payloads (a 1x1 spacer) are left as written.
_DATA_URI = re.compile(r"(data:[\w.+-]+/[\w.+-]+(?:;[\w.+-]+=[\w.+%-]+)*;base64,)[A-Za-z0-9+/]{100,}={0,2}")


def elide_inline_data(text: str) -> str:
    """``text`` with each inline base64 data URI's payload (100 chars or more) replaced by "…",
    its media type kept (``data:image/png;base64,…``): a pasted picture is no text to search,
    and read as text it made hundreds of chunks of base64."""
    return _DATA_URI.sub(r"\1…", text) if "base64," in text else text


def _utf16_without_bom(head: bytes, size: int) -> str | None:
    """"utf-16-le" or "utf-16-be" for text whose bytes at one parity are nearly all NUL (mostly
    Latin text in UTF-16 without a byte-order mark), and that decodes as such; else None."""
    if size % 2 or len(head) < 4:
        return None
    even, odd = head[0::2], head[1::2]
    for encoding, zeros, other in (("utf-16-le", odd, even), ("utf-16-be", even, odd)):
        if zeros.count(0) > 0.9 * len(zeros) and other.count(0) < 0.05 * len(other):
            try:
                head.decode(encoding)
            except UnicodeDecodeError:
                return None
            return encoding
    return None


def _control_ratio(data: bytes) -> float:
    if not data:
        return 0.0
    allowed = {9, 10, 12, 13, 27}
    bad = sum(1 for b in data if b < 32 and b not in allowed)
    return bad / len(data)
