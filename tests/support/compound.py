"""OLE compound files (the container of Office 97-2003 files and of objects embedded in Office
documents), written for tests: one stream under the root, as an embedded file's
``\\x01Ole10Native`` stream is stored."""

from __future__ import annotations

import struct

_SECTOR = 512
_FREE, _END, _FAT = 0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFFD


def compound_file(name: str, stream: bytes) -> bytes:
    """A version 3 compound file of one stream ``name`` holding ``stream`` padded with NULs to
    4,096 bytes at least, so it lies in regular sectors (a record in it says its own size)."""
    stream = stream.ljust(4096, b"\0")
    body = stream
    body += b"\0" * (-len(body) % _SECTOR)
    count = len(body) // _SECTOR
    fat = [_FAT, _END] + [3 + n for n in range(count - 1)] + [_END]
    fat += [_FREE] * (_SECTOR // 4 - len(fat))
    header = (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(16) + struct.pack("<HHHHH", 0x3E, 3, 0xFFFE, 9, 6)
              + bytes(6) + struct.pack("<IIIIIIIII", 0, 1, 1, 0, 4096, _END, 0, _END, 0)
              + struct.pack("<I", 0) + struct.pack("<I", _FREE) * 108)
    directory = _entry("Root Entry", 5, child=1, start=_END, size=0) + _entry(name, 2, start=2, size=len(stream))
    directory += (_entry("", 0, start=0, size=0)) * 2
    return header + struct.pack(f"<{_SECTOR // 4}I", *fat) + directory + body


def _entry(name: str, kind: int, start: int, size: int, child: int = _FREE) -> bytes:
    encoded = name.encode("utf-16-le") + b"\0\0" if name else b""
    return (encoded.ljust(64, b"\0") + struct.pack("<HBB", len(encoded), kind, 1)
            + struct.pack("<III", _FREE, _FREE, child) + bytes(16 + 4 + 16) + struct.pack("<III", start, size, 0))


def ole10_native(label: str, data: bytes) -> bytes:
    """An ``\\x01Ole10Native`` stream packaging a file named ``label`` holding ``data``, as Windows'
    Object Packager writes one (label, source path, temporary path, then the bytes)."""
    path = f"C:\\Users\\me\\{label}".encode("latin-1") + b"\0"
    record = (struct.pack("<H", 2) + label.encode("latin-1") + b"\0" + path + struct.pack("<HH", 0, 3)
              + struct.pack("<I", len(path)) + path + struct.pack("<I", len(data)) + data)
    return struct.pack("<I", len(record)) + record
