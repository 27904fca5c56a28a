"""Office and OpenDocument packages (zip) and compound files (OLE): members read and rewritten,
relationship targets, a package's title, the Office format a package really is, Office 97-2003 files
converted to their modern formats."""

from __future__ import annotations

import html
import io
import posixpath
import re


def zip_member(data: bytes, name: str) -> str:
    """A zip member's text; "" when the data is no zip or has no such member."""
    import zipfile

    try:
        return zipfile.ZipFile(io.BytesIO(data)).read(name).decode("utf-8", "replace")
    except (zipfile.BadZipFile, KeyError):
        return ""


#: each Office format's main parts (a binary workbook's too: .xlsb)
OFFICE_MAIN_PARTS = {"docx": ("word/document.xml",), "pptx": ("ppt/presentation.xml",),
                     "xlsx": ("xl/workbook.xml", "xl/workbook.bin")}


def office_package(data: bytes) -> str | None:
    """The Office format whose main part a zip package holds, or None (not a zip, or none of them)."""
    import zipfile

    try:
        names = set(zipfile.ZipFile(io.BytesIO(data)).namelist())
    except zipfile.BadZipFile:
        return None
    return next((kind for kind, parts in OFFICE_MAIN_PARTS.items() if names.intersection(parts)), None)


def package_title(data: bytes, part: str = "meta.xml") -> str:
    """A package's own title: its properties' dc:title in ``part`` (an OpenDocument file's
    meta.xml, which pandoc does not read; an Open Packaging file's docProps/core.xml); "" when it
    has none."""
    match = re.search(r"<dc:title>([^<]*)</dc:title>", zip_member(data, part))
    return " ".join(html.unescape(match.group(1)).split())[:200] if match else ""


RELATIONSHIP = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"


def rel_targets(rels: str, parser) -> dict[str, str]:
    """A relationships part's (its XML, "" for none) targets inside the package by relationship id."""
    from lxml import etree

    return {rel.get("Id"): rel.get("Target", "") for rel in etree.fromstring(rels.encode(), parser)
            if rel.get("TargetMode") != "External"} if rels else {}


def with_member(data: bytes, name: str, body: bytes | str, compression: int) -> bytes:
    """The zip package ``data`` with its member ``name`` replaced by ``body`` (``with_members``)."""
    return with_members(data, {name: body}, compression)


def with_members(data: bytes, bodies: dict[str, bytes | str], compression: int) -> bytes:
    """The zip package ``data`` with each member ``bodies`` names replaced by its body, every
    member written with ``compression`` (``zipfile.ZIP_STORED`` or ``ZIP_DEFLATED``), in the
    order they were."""
    import zipfile

    source, out = zipfile.ZipFile(io.BytesIO(data)), io.BytesIO()
    with zipfile.ZipFile(out, "w", compression) as package:
        for item in source.infolist():
            package.writestr(item.filename, bodies[item.filename] if item.filename in bodies else source.read(item))
    return out.getvalue()


def package_path(folder: str, target: str) -> str:
    """The package member a relationship's ``target`` names, from a part in ``folder``."""
    return target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join(folder, target))


MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
DRAWING = "{http://schemas.openxmlformats.org/drawingml/2006/main}"


def put_after(anchor, blocks: list, last: dict) -> None:
    """Put ``blocks`` (lxml elements) after the element ``anchor``, after those put there before
    (``last``: an anchor -> the last block put after it, updated), so boxes read in their order."""
    for block in blocks:
        last.get(anchor, anchor).addnext(block)
        last[anchor] = block


def as_modern_office(data: bytes, convert, legacy: str, modern: str, program: str, failed: type, encrypted: type) -> bytes:
    """An Office 97-2003 file converted by ``convert`` (a pure-Python converter: no Office, no
    LibreOffice) to its modern format, in a temporary folder; an encrypted file is refused, and so
    is a compound file the converter cannot read (the cause named)."""
    import tempfile
    from pathlib import Path

    if is_encrypted(data):  # an encrypted modern Office file is a compound file too
        raise ValueError(ENCRYPTED)
    with tempfile.TemporaryDirectory(prefix="rag-office97-") as folder:
        source, target = Path(folder, f"file.{legacy}"), Path(folder, f"file.{modern}")
        source.write_bytes(data)
        try:
            convert(source, target)
        except encrypted:
            raise ValueError(ENCRYPTED) from None
        except failed as exc:
            raise ValueError(f"not a {program} 97-2003 file that can be read ({type(exc).__name__}: {exc}); "
                             f"open it in {program} and save it as .{modern}") from exc
        return target.read_bytes()


def plain_package(data: bytes, kind: str) -> bytes:
    """An Office package whose main part is a macro-enabled document, a template or a slide show,
    declared as the plain ``kind`` ("wordprocessingml.document", "presentationml.presentation"),
    which python-docx and python-pptx insist on: the parts are the same, and nothing runs macros.
    Any other package is returned as it is."""
    import zipfile

    types = zip_member(data, "[Content_Types].xml")
    plain = f"application/vnd.openxmlformats-officedocument.{kind}.main+xml"
    declared = _VARIANT_MAIN.sub(plain, types)
    if declared == types:
        return data
    return with_member(data, "[Content_Types].xml", declared, zipfile.ZIP_STORED)


# the main part types of Word's and PowerPoint's macro-enabled, template and slide show packages
_VARIANT_MAIN = re.compile(r"application/vnd\.(?:ms-word\.(?:document|template)\.macroEnabled"
                           r"|openxmlformats-officedocument\.wordprocessingml\.template"
                           r"|ms-powerpoint\.(?:presentation|slideshow|template)\.macroEnabled"
                           r"|openxmlformats-officedocument\.presentationml\.(?:slideshow|template))\.main\+xml")


# a compound file: Outlook's .msg, an Office 97-2003 document, an encrypted Office document
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def opendocument_content(data: bytes, part: str = "content.xml"):
    """An OpenDocument package's content part (``content.xml``, or an embedded object's ``part``)
    as an lxml root."""
    import zipfile

    from lxml import etree

    package = zipfile.ZipFile(io.BytesIO(data))  # a damaged one raises BadZipFile: see parse_document
    if part not in package.namelist():
        raise ValueError("the package has no content.xml: it is no OpenDocument file (save it again from its application)")
    return etree.fromstring(package.read(part), etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True))


def embedded_content(data: bytes, href: str):
    """The content part of the object an OpenDocument file embeds at ``href`` ("./Object 1");
    None where it has none or it cannot be read (the object is then left out)."""
    part = posixpath.normpath(posixpath.join(href.removeprefix("./"), "content.xml"))
    if href.startswith(("/", "../")) or "://" in href or part.startswith(".."):  # outside the package: never read
        return None
    try:
        return opendocument_content(data, part)
    except Exception:  # noqa: BLE001 - a missing or damaged object: zipfile and lxml raise many types
        return None


def member_reader(package):
    """A function reading a zip ``package``'s member by name: its bytes, None where it has none."""
    names = set(package.namelist())
    return lambda name: package.read(name) if name in names else None


ENCRYPTED = "the file is encrypted (password protected); save an unprotected copy or exclude it"


def is_encrypted(data: bytes) -> bool:
    """Whether a compound file is an encrypted Office document (its package stored encrypted)."""
    import olefile

    return olefile.OleFileIO(data).exists("EncryptedPackage")
