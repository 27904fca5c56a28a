"""The formats pandoc reads (OpenDocument text, RTF, EPUB, AsciiDoc, LaTeX, Org, JATS and DocBook
XML), written by pandoc as one HTML page and read as a web page is; what pandoc leaves out of an ODT
(its formulas, charts and spreadsheets) is put in first."""

from __future__ import annotations

import re

from rag_assets.core.parsing.decode import decode_text
from rag_assets.core.parsing.feeds import feed_page
from rag_assets.core.parsing.math_text import mathml_text
from rag_assets.core.parsing.opendocument import is_formula, object_items
from rag_assets.core.parsing.packages import embedded_content, package_title, put_after, with_member, zip_member
from rag_assets.core.parsing.text_formats import parse_text
from rag_assets.core.parsing.web import parse_html


def parse_pandoc(content_type: str, data: bytes):
    """An OpenDocument text, RTF, EPUB, AsciiDoc, LaTeX, Org, JATS or DocBook file as pandoc (the
    binary pypandoc_binary ships, sandboxed: it opens no file and no URL the document names, so a
    LaTeX file's \\input, an AsciiDoc include or a DocBook external entity is not followed but left out)
    writes it as one HTML page, read as an HTML page is:
    headings nested by level, tables as rows, markup rendered. A text format is decoded as every
    text file is, then given to pandoc as UTF-8. Titled by the document's own title where it has
    one (ODT's, EPUB's and RTF's properties, AsciiDoc's "= Title", LaTeX's \\title, Org's #+TITLE,
    an article's title), else its first heading."""
    import subprocess

    import pypandoc

    if content_type in _PANDOC_TEXT:
        text = decode_text(data)[0]
        if content_type == "asciidoc":
            text = _asciidoc_for_pandoc(text)
        elif content_type == "docbook":  # nor an external entity's file
            names = {m.group(1) for m in _EXTERNAL_ENTITY.finditer(text)}
            text = _EXTERNAL_ENTITY.sub("", text)
            if names:
                text = re.sub(r"&(" + "|".join(map(re.escape, names)) + r");", "", text)
        data = text.encode("utf-8")
    elif content_type == "rtf":
        data = _rtf_heading_levels(data)
    elif content_type == "odt":
        data = _odt_frames_inline(data)

    done = subprocess.run([pypandoc.get_pandoc_path(), "--sandbox", "--from", content_type, "--to", "html5",
                           "--standalone", "--wrap", "none", "--mathml"], input=data, capture_output=True, check=False)
    if done.returncode != 0:
        cause = (done.stderr.decode("utf-8", "replace").strip().splitlines() or ["no message"])[-1]
        raise ValueError(f"pandoc cannot read it as {content_type} ({cause[:200]}); check the file opens")
    page = _FOOTNOTE_REF.sub(r"\1", _FOOTNOTE_BACK.sub("", done.stdout.decode("utf-8", "replace")))
    text, elements, title = parse_html(page.encode("utf-8"), untitled="-",  # pandoc's <title> when there is none
                                       marked_headers=content_type in _MARKED_HEADERS)
    return text, elements, (package_title(data) if content_type == "odt" else "") or title


# pandoc's footnote links in its HTML: a note's way back ("↩︎", read at every note's end) and a mark's link
# (its <sup> kept, so the mark reads "here^1" as a web page's does, not "here1")
_FOOTNOTE_BACK = re.compile(r'<a\b[^<>]*\bclass="footnote-back"[^<>]*>.*?</a>', re.S)
_FOOTNOTE_REF = re.compile(r'<a\b[^<>]*\bclass="footnote-ref"[^<>]*>(.*?)</a>', re.S)


def _odt_frames_inline(data: bytes) -> bytes:
    """An OpenDocument text as pandoc should read it (it leaves frames out: their text was lost):
    a text box's paragraphs, lists and tables (``draw:text-box``: a sidebar, a callout, a flyer
    laid out in boxes) follow the paragraph the box is anchored in (a box anchored to the page: in
    its place), and so do an embedded chart's title and data table and an embedded spreadsheet's
    tables (``opendocument.object_items``); an embedded formula reads as a line of text in its
    place ("E=mc^2"). A package with neither boxes nor objects is returned as it is."""
    import zipfile

    from lxml import etree

    content = zip_member(data, "content.xml")
    if "<draw:text-box" not in content and "<draw:object" not in content:
        return data
    text, draw = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}", "{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}"
    blocks = (f"{text}p", f"{text}h", f"{text}list", f"{_ODF_TABLE}table")
    root = etree.fromstring(content.encode(), etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True))
    last: dict = {}  # an anchoring paragraph -> the last block put after it
    for frame in list(root.iter(f"{draw}frame")):
        box, embedded = frame.find(f"{draw}text-box"), frame.find(f"{draw}object")
        if box is not None:
            moved = [child for child in box if child.tag in blocks]
        elif embedded is not None:
            found = embedded_content(data, embedded.get("{http://www.w3.org/1999/xlink}href", ""))
            if found is None:
                continue
            if is_formula(found):
                span = etree.Element(f"{text}span")
                span.text, span.tail = mathml_text(found), frame.tail
                frame.getparent().replace(frame, span)
                continue
            moved = [_odt_block(kind, value) for kind, value in object_items(found)]
        else:
            continue
        anchor = next(frame.iterancestors(f"{text}p", f"{text}h"), None)
        if anchor is not None:
            put_after(anchor, moved, last)
        else:
            for block in moved:
                frame.addprevious(block)
    return with_member(data, "content.xml", etree.tostring(root, xml_declaration=True, encoding="UTF-8"),
                       zipfile.ZIP_STORED)  # the mimetype member stored, as OpenDocument has it
 

_ODF_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"


def _odt_block(kind: str, value):
    """An OpenDocument text's paragraph (``kind`` "text") or table (``kind`` "table": rows of
    cell texts) of what an embedded object shows."""
    from lxml import etree

    paragraph = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}p"
    if kind != "table":
        block = etree.Element(paragraph)
        block.text = value
        return block
    block = etree.Element(f"{_ODF_TABLE}table")
    for row in value:
        line = etree.SubElement(block, f"{_ODF_TABLE}table-row")
        for cell in row:
            etree.SubElement(etree.SubElement(line, f"{_ODF_TABLE}table-cell"), paragraph).text = cell
    return block


# pandoc's formats whose markup marks a table's header rows (Org's rule under them, LaTeX's rules, JATS' and
# DocBook's <thead>); in the others (ODT, RTF, EPUB) a header row is rarely marked: their first row is it.
_MARKED_HEADERS = ("latex", "org", "jats", "docbook")
_ASCIIDOC_INCLUDE = re.compile(r"(?m)^include::[^\[\n]*\[[^\n]*\][ \t]*$")
_ASCIIDOC_CONDITION = re.compile(r"(ifdef|ifndef|ifeval|endif)::([^\[\n]*)\[(.*)\][ \t]*")
_ASCIIDOC_VERBATIM = re.compile(r"-{4,}|\.{4,}|\+{4,}|```.*")  # listing, literal, passthrough, fenced
_ASCIIDOC_ATTRIBUTE = re.compile(r":(!?)([\w-]+?)(!?):(?:[ \t]|$)")


def _asciidoc_for_pandoc(text: str) -> str:
    """AsciiDoc as Asciidoctor's preprocessor leaves it, for pandoc, which reads none of it (an
    ``endif::[]`` before a blank line failed the file; other conditionals were read as text):
    includes left out (the sandbox opens no file), ``ifdef``/``ifndef`` blocks kept where the
    attributes set above them (``:name:``) say so (``a,b``: any, ``a+b``: all; a GitHub-only
    ``env-github`` block is left out), ``ifeval`` blocks kept, ``////`` comment blocks left out,
    and ``:doctype: book`` dropped (pandoc then read every section as a paragraph)."""
    defined: set[str] = set()
    kept: list[bool] = []  # one entry per open conditional: whether its lines are kept
    lines, comment, verbatim = [], None, None
    for line in text.splitlines(keepends=True):
        bare = line.rstrip()
        if comment is not None:
            comment = None if bare == comment else comment
            continue
        if verbatim is not None or _ASCIIDOC_VERBATIM.fullmatch(bare):  # a listing keeps its lines
            if verbatim is None:
                verbatim = bare[:3] if bare.startswith("```") else bare
            elif bare == verbatim:
                verbatim = None
            if all(kept):
                lines.append(line)
            continue
        if re.fullmatch(r"/{4,}", bare) and all(kept):
            comment = bare
            continue
        condition = _ASCIIDOC_CONDITION.fullmatch(bare)
        if condition:
            kind, names, inline = condition.groups()
            if kind == "endif":
                if kept:
                    kept.pop()
                continue
            wanted = [n for n in re.split(r"[,+]", names) if n]
            hit = (all if "+" in names else any)(n in defined for n in wanted) if wanted else True
            keep = True if kind == "ifeval" else hit if kind == "ifdef" else not hit
            if inline and kind != "ifeval":  # the one-line form: its content, when kept
                if keep and all(kept):
                    lines.append(inline + "\n")
            else:
                kept.append(keep)
            continue
        if not all(kept):
            continue
        attribute = _ASCIIDOC_ATTRIBUTE.match(line)
        if attribute:
            name = attribute.group(2)
            if attribute.group(1) or attribute.group(3):
                defined.discard(name)
            else:
                defined.add(name)
            if name == "doctype" and "book" in line:
                continue
        lines.append(line)
    return _ASCIIDOC_INCLUDE.sub("", "".join(lines))


_EXTERNAL_ENTITY = re.compile(r"<!ENTITY\s+([\w.-]+)\s+(?:SYSTEM|PUBLIC)\b[^>]*>")


def parse_xml(data: bytes):
    """A JATS article (the XML PubMed Central and journals publish) or a DocBook document, told
    apart by its DOCTYPE or namespace, read through pandoc; an RSS or Atom feed (Jira's export of
    issues among them) as the page a feed reader shows (``feeds.feed_page``); any other XML as text."""
    if (page := feed_page(data)) is not None:
        return parse_html(page.encode("utf-8"))
    head = data[:8192]
    if _JATS.search(head):
        return parse_pandoc("jats", data)
    if _DOCBOOK.search(head):
        return parse_pandoc("docbook", data)
    return parse_text("text", data)


_JATS = re.compile(rb'<!DOCTYPE\s+article\s+PUBLIC\s+"-//NLM//DTD')
_DOCBOOK = re.compile(rb'http://docbook\.org/ns/docbook|<!DOCTYPE\s+\w+\s+PUBLIC\s+"-//OASIS//DTD DocBook')


def _rtf_heading_levels(data: bytes) -> bytes:
    """An RTF file whose stylesheet's "Heading 1" ... "Heading 9" styles carry their outline level
    (0-8), as Word writes them: pandoc makes a heading only of a paragraph whose style has one, and
    LibreOffice, among others, writes the styles without. Other bytes are unchanged."""
    start = data.find(b"{\\stylesheet")
    if start < 0:
        return data
    depth, end = 0, start
    while end < len(data):
        byte = data[end:end + 1]
        if byte == b"\\":
            end += 2  # an escaped brace or backslash, or a control word's first letter
            continue
        depth += {b"{": 1, b"}": -1}.get(byte, 0)
        end += 1
        if depth == 0:
            break
    sheet = _RTF_HEADING_STYLE.sub(lambda m: m.group(0) if b"\\outlinelevel" in m.group(0) else
                                   m.group(1) + b"\\outlinelevel%d" % (int(m.group(3)) - 1) + m.group(2),
                                   data[start:end])
    return data[:start] + sheet + data[end:]


#: a paragraph style of an RTF stylesheet named "Heading N" (any case): its opening and style number,
#: the rest of its definition, N
_RTF_HEADING_STYLE = re.compile(rb"(\{\\s\d+)([^{};]*?[\s\\](?i:heading) ([1-9]);\})")
_PANDOC_TEXT = ("asciidoc", "latex", "org", "jats", "docbook")
