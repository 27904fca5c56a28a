"""Content types and their readers: the content type a file's name gives (``content_type_for``), the
rich formats and the module that reads each (``READERS``), and ``read_format``, the one dispatch a
reader uses to read another format (an e-mail's attachments, a page a Word document imports, a file
embedded in a deck)."""

from __future__ import annotations

import importlib
import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from rag_assets.core.models import Element
from rag_assets.core.parsing.limits import ParseLimits
from rag_assets.core.parsing.packages import OFFICE_MAIN_PARTS, office_package
from rag_assets.core.parsing.text_formats import parse_text


CONTENT_TYPES = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",  # Docusaurus and other MDX sites: Markdown with JSX components
    ".qmd": "markdown",  # Quarto
    ".rmd": "markdown",  # R Markdown
    ".txt": "text",
    ".text": "text",
    ".rst": "rst",
    ".adoc": "asciidoc",
    ".asciidoc": "asciidoc",
    ".tex": "latex",
    ".org": "org",
    ".log": "text",
    ".srt": "subtitles",  # SubRip and WebVTT: read as their transcript
    ".vtt": "subtitles",
    ".ics": "calendar",  # iCalendar: a calendar's export, a meeting invitation
    ".vcf": "contacts",  # vCard: an address book's or a phone's export
    ".vcard": "contacts",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".mht": "html",  # a web archive: its page is read
    ".mhtml": "html",
    ".pdf": "pdf",
    ".png": "image",  # scans, faxes and photographs of pages: read by OCR
    ".jpg": "image",
    ".jpeg": "image",
    ".tif": "image",
    ".tiff": "image",
    ".bmp": "image",
    ".gif": "image",
    ".webp": "image",
    ".docx": "docx",
    ".docm": "docx",  # macro-enabled, templates: the same package, their macros never run
    ".dotx": "docx",
    ".dotm": "docx",
    ".doc": "docx",  # Word 97-2003, told apart by content: converted to DOCX
    ".dot": "docx",
    ".odt": "odt",
    ".ods": "ods",  # OpenDocument spreadsheets and presentations (LibreOffice Calc, Impress)
    ".odp": "odp",
    ".odg": "odp",  # LibreOffice Draw: its pages read as slides
    ".vsdx": "visio",  # Visio drawings (macro-enabled too; macros never run)
    ".vsdm": "visio",
    ".drawio": "drawio",  # draw.io (diagrams.net) diagrams
    ".dio": "drawio",
    ".svg": "svg",  # pictures and diagrams (draw.io's and Mermaid's exports): the text they show
    ".rtf": "rtf",
    ".epub": "epub",
    ".pptx": "pptx",
    ".pptm": "pptx",
    ".ppsx": "pptx",  # slide shows
    ".ppsm": "pptx",
    ".potx": "pptx",
    ".potm": "pptx",
    ".ppt": "pptx",  # PowerPoint 97-2003, told apart by content: converted to PPTX
    ".pps": "pptx",
    ".pot": "pptx",
    ".eml": "email",
    ".mbox": "email",  # a mailbox: its messages (told apart by its "From " lines)
    ".msg": "email",
    ".xlsx": "xlsx",
    ".xlsm": "xlsx",
    ".xltx": "xlsx",
    ".xltm": "xlsx",
    ".xls": "xlsx",  # Excel 97-2003, told apart by content
    ".xlt": "xlsx",
    ".xlsb": "xlsx",  # Excel's binary workbook, told apart by content
    ".ipynb": "notebook",
    ".csv": "csv",
    ".tsv": "csv",
    ".py": "code",
    ".js": "code",
    ".ts": "code",
    ".go": "code",
    ".java": "code",
    ".rs": "code",
    ".sql": "code",
    **dict.fromkeys((".tsx", ".jsx", ".mjs", ".cjs", ".rb", ".php", ".kt", ".kts", ".swift", ".cs", ".scala", ".c", ".h",
                     ".cc", ".cpp", ".cxx", ".hpp", ".sh", ".bash", ".zsh", ".ps1", ".lua", ".pl", ".pm", ".dart", ".ex",
                     ".exs", ".groovy", ".hs", ".zig", ".tf", ".tfvars", ".hcl", ".jl", ".ml", ".mli"),
                    "code"),  # chunked as code, as those above
    ".json": "json",
    ".jsonl": "json",  # JSON Lines: a value a line
    ".ndjson": "json",
    ".yaml": "text",
    ".xml": "xml",  # JATS and DocBook read as articles (told apart by content), other XML as text
    ".dbk": "xml",
    ".yml": "text",
}
#: every content type a document may have (what a profile's ``content_types`` may name)
CONTENT_TYPE_NAMES = tuple(sorted(set(CONTENT_TYPES.values())))


def content_type_for(doc_id: str) -> str:
    """Content type from the file extension; unknown extensions are read as text."""
    return CONTENT_TYPES.get(posixpath.splitext(doc_id.lower())[1], "text")


#: zip formats: checked for their expanded size before parsing
ARCHIVES = ("docx", "pptx", "xlsx", "odt", "ods", "odp", "epub", "visio")
#: content types read through pandoc
PANDOC_FORMATS = ("odt", "rtf", "epub", "asciidoc", "latex", "org")


@dataclass(frozen=True)
class Reader:
    """Where a rich format's reader is: ``function`` of the parsing module ``module``, called with
    ``args`` and then the document's bytes; ``uses`` names the third-party modules it imports."""

    module: str
    function: str
    uses: tuple[str, ...]
    args: tuple[str, ...] = ()


_PANDOC_USES = ("pypandoc", "unstructured.partition.html")
#: the rich formats: read in a bounded child process (``parse_document``), each by its module's reader; the
#: other content types are text (``parse_text``)
READERS = {"html": Reader("web", "parse_web_page", ("unstructured.partition.html",)),
           "docx": Reader("word", "parse_docx", ("unstructured.partition.docx", "doc2docx", "olefile")),
           "pptx": Reader("slides", "parse_pptx", ("pptx", "unstructured.partition.pptx", "ppt2pptx", "olefile")),
           "email": Reader("mail", "parse_email", ("oxmsg", "unstructured.partition.email")),
           "xlsx": Reader("sheets", "parse_xlsx", ("openpyxl", "xlrd", "olefile", "python_calamine")),
           "ods": Reader("sheets", "parse_ods", ("lxml.etree",)),
           "odp": Reader("slides", "parse_odp", ("lxml.etree",)),
           "visio": Reader("diagrams", "parse_visio", ("lxml.etree",)),
           "drawio": Reader("diagrams", "parse_drawio", ("lxml.etree",)),
           "svg": Reader("diagrams", "parse_svg", ("lxml.etree",)),
           "notebook": Reader("notebook", "parse_notebook", ("json",)),
           "calendar": Reader("calendars", "parse_calendar", ("icalendar",)),
           "pdf": Reader("pdf", "parse_pdf", ("pdfplumber", "unstructured.partition.text")),  # pdfplumber imports pdfminer's
           "image": Reader("pdf", "parse_image", ("PIL.Image", "tesserocr", "unstructured.partition.text")),
           "xml": Reader("pandoc", "parse_xml", _PANDOC_USES),
           **{name: Reader("pandoc", "parse_pandoc", _PANDOC_USES, (name,)) for name in PANDOC_FORMATS}}


def reader(content_type: str) -> Callable[[bytes], tuple[str, tuple[Element, ...], str]]:
    """The rich format's reader (``READERS``), its module imported on first use: readers read each
    other's formats (an e-mail's attachments, a web page a Word document imports), so none imports
    another's module to dispatch."""
    found = READERS[content_type]
    read = getattr(importlib.import_module(f"rag_assets.core.parsing.{found.module}"), found.function)
    return partial(read, *found.args) if found.args else read


def read_format(content_type: str, data: bytes, attachment_limits: ParseLimits | None = None):
    """``data`` parsed in this process as ``content_type`` says (an Office package under another
    Office format's name as what it is: a deck saved as .xlsx is read as a deck); an e-mail's
    attachments are read within ``attachment_limits`` (none: not read)."""
    if content_type == "email":
        return reader("email")(data, attachment_limits)
    if content_type in OFFICE_MAIN_PARTS:
        content_type = office_package(data) or content_type
    if content_type in READERS:
        return reader(content_type)(data)
    return parse_text(content_type, data)
