"""OpenDocument packages as LibreOffice writes them, for tests: a zip of members, a spreadsheet or
presentation of a given body."""

from __future__ import annotations

import io
import zipfile


def saved_zip(members: dict[str, str]) -> bytes:
    """A zip package of ``members`` (name -> text), stored in that order."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        for name, text in members.items():
            package.writestr(name, text)
    return out.getvalue()


ODF_NAMESPACES = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
                  'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
                  'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
                  'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
                  'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" '
                  'xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" '
                  'xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0" xmlns:dc="http://purl.org/dc/elements/1.1/"')


def opendocument(kind: str, styles: str, body: str, meta: str = "", parts: dict[str, str] | None = None) -> bytes:
    """An OpenDocument package (``kind``: spreadsheet or presentation) of ``body``, as LibreOffice
    writes one: the mimetype first, then its content, properties and manifest (and ``parts``: an
    embedded object's)."""
    media = f"application/vnd.oasis.opendocument.{kind}"
    return saved_zip({
        "mimetype": media,
        "content.xml": f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {ODF_NAMESPACES}><office:automatic-styles>'
                       f"{styles}</office:automatic-styles><office:body><office:{kind}>{body}</office:{kind}>"
                       "</office:body></office:document-content>",
        "meta.xml": f'<office:document-meta {ODF_NAMESPACES}><office:meta>{meta}</office:meta></office:document-meta>',
        "META-INF/manifest.xml": '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
                                 f'<manifest:file-entry manifest:full-path="/" manifest:media-type="{media}"/></manifest:manifest>',
        **(parts or {})})


def spreadsheet(name: str, rows: list[list[str]]) -> bytes:
    """A spreadsheet of one sheet ``name`` of ``rows`` of cell texts."""
    cells = "".join("<table:table-row>" + "".join(f"<table:table-cell><text:p>{text}</text:p></table:table-cell>"
                                                   for text in row) + "</table:table-row>" for row in rows)
    return opendocument("spreadsheet", "", f'<table:table table:name="{name}">{cells}</table:table>')
