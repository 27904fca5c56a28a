"""Bytes -> text for text-like documents, refusing binary data with a clear cause."""

from __future__ import annotations

import codecs
import io
import re
import zipfile

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
                raise ValueError(binary_cause(data))
        elif b"\x00" in head or _control_ratio(head) > 0.05:
            raise ValueError(binary_cause(data))
        else:
            try:
                text, encoding = data.decode("utf-8"), "utf-8"
            except UnicodeDecodeError:
                text = data.decode("utf-8", errors="rag-cp1252")
                encoding = "utf-8+cp1252" if any(ord(c) > 0x7F for c in data.decode("utf-8", errors="ignore")) \
                    else "cp1252"
    return text.replace("\r\n", "\n").replace("\r", "\n"), encoding


# Magic bytes of files a shared folder holds beside its documents, by what they are and what to do.
_RENAME = "name it {} to have it read"
_NOT_READ = "not a document format rag reads: export its text (to PDF or Word) or leave it out with an exclude " \
            "glob in sources.yml"
_MAGIC = (
    (b"%PDF-", "a PDF", _RENAME.format(".pdf")),
    (b"\x89PNG\r\n\x1a\n", "a PNG image", _RENAME.format(".png (read by OCR)")),
    (b"\xff\xd8\xff", "a JPEG image", _RENAME.format(".jpg (read by OCR)")),
    (b"II*\x00", "a TIFF image", _RENAME.format(".tiff (read by OCR)")),
    (b"MM\x00*", "a TIFF image", _RENAME.format(".tiff (read by OCR)")),
    (b"GIF8", "a GIF image", _RENAME.format(".gif (read by OCR)")),
    (b"PK\x03\x04", "a ZIP archive or a zip-based package (Apple Pages, Keynote and Numbers files are ones)",
     "unpack it, or export the document to PDF or Word, or leave it out with an exclude glob in sources.yml"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an OLE compound file (Thumbs.db, or a Word, Excel, PowerPoint or "
     "Outlook 97-2003 file, or a Visio 2003-2010 drawing)", "name an Office file .doc, .xls, .ppt or .msg to have it "
     "read; save a Visio .vsd as .vsdx in Visio; leave anything else out with an exclude glob in sources.yml"),
    (b"\x1f\x8b", "a gzip archive", "unpack it, or leave it out with an exclude glob in sources.yml"),
    (b"BZh", "a bzip2 archive", "unpack it, or leave it out with an exclude glob in sources.yml"),
    (b"\xfd7zXZ\x00", "an xz archive", "unpack it, or leave it out with an exclude glob in sources.yml"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive", "unpack it, or leave it out with an exclude glob in sources.yml"),
    (b"Rar!\x1a\x07", "a RAR archive", "unpack it, or leave it out with an exclude glob in sources.yml"),
    (b"\x7fELF", "an ELF executable", _NOT_READ),
    (b"MZ", "a Windows executable", _NOT_READ),
    (b"SQLite format 3\x00", "an SQLite database", _NOT_READ),
)


# Packages a format rag reads, by a member only they hold (an OpenDocument file by its mimetype member).
_PACKAGES = (("word/document.xml", "a Word document", ".docx"), ("ppt/presentation.xml", "a PowerPoint deck", ".pptx"),
             ("xl/workbook.xml", "an Excel workbook", ".xlsx"), ("META-INF/container.xml", "an EPUB book", ".epub"),
             ("visio/document.xml", "a Visio drawing", ".vsdx"), ("xl/workbook.bin", "an Excel binary workbook", ".xlsb"))
_OPENDOCUMENT = {"text": ".odt", "spreadsheet": ".ods", "presentation": ".odp", "graphics": ".odg"}  # the kinds rag reads


def binary_cause(data: bytes) -> str:
    """Why ``data`` (judged binary) is not read as text: what its first bytes (or, for a zip, its
    members) say it is, and the fix."""
    if data.startswith(b"PK\x03\x04"):
        try:
            package = zipfile.ZipFile(io.BytesIO(data))
            names = set(package.namelist())
            media = package.read("mimetype")[:100].decode("ascii", "replace") if "mimetype" in names else ""
        except (zipfile.BadZipFile, ValueError):
            names, media = set(), ""
        for member, kind, extension in _PACKAGES:
            if member in names:
                return f"file content is {kind}, not text; {_RENAME.format(extension)}"
        if media.startswith("application/vnd.oasis.opendocument.") or "content.xml" in names:
            kind = media.removeprefix("application/vnd.oasis.opendocument.").split("-")[0] or "text"
            extension = _OPENDOCUMENT.get(kind)
            return (f"file content is an OpenDocument {kind}, not text; "
                    + (_RENAME.format(extension) if extension else _NOT_READ))
    for magic, kind, fix in _MAGIC:
        if data.startswith(magic):
            return f"file content is {kind}, not text; {fix}"
    return ("file content is binary, not text (NUL/control bytes): if its extension is wrong, correct it; if it is "
            "no document, leave it out with an exclude glob in sources.yml")


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
