"""Parse one RawDocument into a ParsedDocument.

Text formats (markdown, text, code, csv) keep the file's text as read (newlines normalised as
Python's text mode does), so chunk offsets index the file itself. Rich formats are parsed with
unstructured (HTML, DOCX, PPTX: a slide is a page; e-mail, .eml or Outlook's .msg: its body, after
its subject and senders, then its attachments; ODT, RTF, EPUB, AsciiDoc, LaTeX, Org, JATS and
DocBook as pandoc writes them in HTML), pdfminer + unstructured (PDF, per page; pdfplumber for its
ruled tables) or openpyxl (XLSX: a sheet is a page, its cells Markdown rows; xlrd for Excel
97-2003; OpenDocument spreadsheets and presentations by ``opendocument``), and their text is the elements' text joined by blank lines, so every element span is
exact by construction. Word and PowerPoint 97-2003 files are converted to DOCX and PPTX first
(msdoc2docx, ppt2pptx). A Jupyter notebook is its cells' sources read as Markdown (code cells
fenced). A scanned PDF page and an image file are read by OCR (``ocr``: Tesseract), then as a
PDF's pages are.

Each format's reader is a module of its own (``formats.READERS``: ``web``, ``word``, ``slides``,
``sheets``, ``mail``, ``pandoc``, ``pdf``, ``notebook``, ``diagrams``; text formats ``text_formats``).
This module bounds each parse in time and memory, names the document in every error, and holds the
revisions that re-parse just the documents a reader's change changes.
"""

from __future__ import annotations

import html
import importlib
import io
import posixpath
import re
from functools import lru_cache
from importlib.metadata import version

from rag_assets.core.models import ParsedDocument, RawDocument
from rag_assets.core.parsing.decode import decode_text
from rag_assets.core.parsing.formats import ARCHIVES, READERS, content_type_for, read_format, reader
from rag_assets.core.parsing.limits import (ParseLimitExceeded, ParseLimits, ParserFailed, ocr_pages_reported,
                                            run_bounded)
from rag_assets.core.parsing.ocr import DEFAULT_LANGUAGES, reading_languages
from rag_assets.core.parsing.packages import OLE_MAGIC, zip_member
from rag_assets.core.parsing.structure import front_matter, tag_names
from rag_assets.core.parsing.text_formats import parse_text


# 43: a table's empty columns left out; 42: a slide without a title no longer under the slide
# before it; 41: a Markdown or reStructuredText attachment's headings named by their text, not
# their markup ("# Notes"); 40: a Word document's tracked insertions, content controls and custom
# XML read as Word shows them (their text was left out); 39: a web page's <details>/<summary> (an
# FAQ's questions and answers) and <figure>/<figcaption> read (unstructured dropped them), a page
# decoded by the charset its <meta> declares (Shift_JIS, GB2312, windows-1251 pages were read as
# cp1252); 38: Markdown setext headings read as headings (they were text; a title underlined with
# "=" was missed), a fence closed only by a line of its character at least as long (a ```` block
# showing a ``` one was closed by it, the rest read as headings), a front matter one block;
# 37: the elements OCR read marked (``Element.ocr``), so are the chunks and index rows holding them,
# OCR'd words joined as Tesseract spaces them (Japanese and Chinese ones were split by spaces), an
# unsure page turned as orientation detection says (it was read every way, the surest reading kept);
# 36: scanned PDF pages and image files read by OCR (a scan had no text, an image was binary);
# 35: an HTML or Word document's capitalised or verbless paragraphs NarrativeText (spaCy, most of
# their parse, no longer run on them: they were UncategorizedText); 34: a headed PDF's body text
# all NarrativeText (unstructured's narrative test, half the parse, no longer run for it: some was
# UncategorizedText); 33: a plain-text e-mail's quoted replies read
# without their "> " markers, a quoted level a paragraph (they were joined to the line above,
# markers inline); 32: a plain-text e-mail body's hard-wrapped paragraphs read whole (a body of
# long ones was read a line a paragraph); 31: a PDF's box of ten lines or more read as one
# paragraph (each line was one, cutting sentences);
# 30: an RTF file's "Heading N" styles read as headings without an outline level (LibreOffice's);
# 29: a 97-2003 Office file's keywords tag it; 28: a line a PDF's outline (bookmarks) names read as a
# heading of the entry's depth, whatever its font; 27: a PDF's ruled tables read as Markdown rows (their cells were loose lines, a column after
# another); 26: macro-enabled, template and slide show Office files read as their format (they were
# binary text); 25: PowerPoint 97-2003 presentations read (converted to PPTX; they were refused);
# 24: a PDF's running headers, footers and page numbers left out; 23: a PDF's short lines in a
# larger font than its body text read as its headings, nested by size (unstructured's guesses at
# titles kept only in PDFs of one font size); 22: Word 97-2003 documents read (converted to DOCX;
# they were refused), a Word paragraph whose style has an outline level read as a heading of that
# level (a template's own or a translated heading style was body text); 21: web archives (.mht,
# .mhtml; Confluence's Word export) read as their page; 20: JATS and DocBook XML read through pandoc
# (they were text, tags and all); 19: a PDF's Keywords tag it; 18: Office, OpenDocument and web page
# keywords tag the document; 17: an RTF or HTML file under a Word or Excel name read as what it is;
# 16: MDX, Quarto and R Markdown read as Markdown (they were plain text); 15: AsciiDoc, LaTeX and
# Org read through pandoc (they were plain text); 14: a Markdown front matter's tags are the
# document's; 13: OpenDocument text, RTF and EPUB read through pandoc, Excel 97-2003 like XLSX (all
# were binary text), an HTML <title>'s entities decoded; 12: reStructuredText read by section (it
# was plain text); 11: HTML, DOCX and PPTX headings nested by their depth (they were all top-level);
# 10: Jupyter notebooks read by cell (they were JSON text); 9: a Markdown file's front matter title;
# 8: e-mail attachments read, the body's headings under the subject; 7: short table rows padded to
# the widest; 6: .eml read as e-mail (it was text); 5: HTML, DOCX and PPTX tables as Markdown rows;
# 4: UTF-16 without a BOM, stray cp1252 bytes in UTF-8; 3: Markdown headings read as text
PARSER_REVISION = "44"
#: Revisions of some formats' reading, apart from PARSER_REVISION so that a change to them re-parses
#: just those formats' documents (a PDF is not read by OCR again for a Markdown fix). Their history:
#: - Markdown, text, reStructuredText, code, CSV, notebooks 1: an inline base64 data URI's payload is
#:   elided (a picture pasted into Markdown was hundreds of chunks of base64).
#: - Markdown, notebooks (and e-mail, for its Markdown attachments) 2: an HTML comment or <pre> block
#:   is never read for headings, an HTML <h1>-<h6> alone on its line is a heading, a fence opening a
#:   list item or indented further is one.
#: - Web pages, e-mail, Word, PowerPoint and the formats pandoc reads 1: a table laying a page out is
#:   read as its blocks (it was one table cell), merged cells are repeated in each row and column.
#: - PowerPoint 2: a slide's one heading is its title (short bullets and subtitles were headings).
#: - Word 2: a table of contents is left out (its entries were chunks of their own).
#: - Excel 1: hidden sheets are left out (they were indexed, searchable).
#: - Web pages, e-mail, Word, PowerPoint, pandoc's formats 3, Excel 2: a table's first row holding
#:   one value alone above a header is its caption, a paragraph before it (it was every chunk's header).
#: - Excel 3: numbers read as their formats show them (95.0%, $23,750.50; 0.1 + 0.2 was 0.30000000000000004).
#: - Word 4: footnotes and endnotes read after the body, under "Footnotes" and "Endnotes" (they were lost).
#: - Word 5, PowerPoint 4, Excel 4: a package under another of their names is read as what it is (it failed).
#: - Word 6: a document without heading styles was headed by its bold or larger lines; 8: withdrawn (form
#:   labels, defined terms and signatures became headings, and re-reading styles doubled long parses).
#: - Review of the above, Markdown and notebooks 3, web pages, e-mail, Word, PowerPoint, pandoc's formats and
#:   Excel one more: odd or huge merged cells, a data table nesting a table, a header's empty corner, locale
#:   currencies and scaled, negative and zero number sections, two-line slide titles, footnote tabs, a logo
#:   in an <h1>, a fence indented as code. Excel 6, web pages, e-mail, Word, PowerPoint and pandoc's formats
#:   one more: digit templates (000-000-0000) and leading zeros, a row span ending with its row group.
#: - E-mail 7: a message that is one attachment or an invite is read (its body was lost); a plain-text
#:   body has no headings; ISO-8859-1 read as windows-1252, unlabelled 8-bit text as UTF-8 (else cp1252).
#: - Web pages, e-mail and pandoc's formats 6: a table's <caption> read before it (it was dropped); AsciiDoc
#:   and XML 7: an AsciiDoc include or a DocBook external entity is left out (the document failed).
#: - Excel 7: tables a blank row apart on one sheet are read as tables of their own (the second's rows
#:   were named by the first's header).
#: - Subtitles 1: SubRip and WebVTT files read as their transcript (they were text: cue numbers and
#:   timings were a third of it).
#: - JSON 1: records read as a table, a row a record, other JSON pretty-printed (a minified export was one
#:   line of text, cut mid-field). JSON 2: a lone surrogate in a key heading records is replaced in its title
#:   and heading path too (the stored parse kept it: the document failed at chunking, or its rows at storing).
#: - AsciiDoc 8: read as Asciidoctor's preprocessor leaves it (conditionals, `////` comments, `:doctype: book`:
#:   an `endif::[]` failed the file, other directives were read as text, a book's sections as paragraphs).
#: - Notebooks 4: a code cell's printed output and plain result (first 20 lines, 1,000 characters) follow it
#:   (a printed metric, often the answer, was left out with the pictures and logs).
#: - reStructuredText 2: comments (a licence header, a note to editors) left out, as Sphinx shows none.
#: - Markdown 4: a block that is only an HTML comment (an Apache licence header atop every page, a TODO, a
#:   linter directive) is left out of the text, as renderers leave it out (it was embedded with the page);
#:   Jekyll's and Hugo's highlight, raw and code blocks are code (their "# comment" lines were headings);
#:   MDX comments and module lines (import/export) and Liquid comment blocks are left out too.
#: - reStructuredText 3: read as Sphinx shows it (``rst_as_shown``): directives as their labels or arguments,
#:   their options, targets, substitution definitions and toctree/index/meta/raw content left out, roles and
#:   references as their text, substitutions replaced (".. toctree::", ":maxdepth: 2" and ":ref:`x <y>`" were
#:   embedded); a code directive's content is code.
#: - Markdown and notebooks 5: docs-site markup lines (admonition and tab markers, GitHub alerts, lines of
#:   HTML/JSX tags, Hugo shortcodes or Liquid tags alone) read as the label they render, or left out (they
#:   were embedded: "<TabItem value=\"py\" label=\"Python\">"); notebooks' Markdown cells lose comments too.
#: - reStructuredText 4: grid and simple tables, ``list-table`` and ``csv-table`` are Markdown tables (a row a
#:   line under its header, chunked with it; their border lines and list markers were embedded as text); a
#:   title's adornment lines and transitions are left out (MiniLM embedded a 38-character underline as 38
#:   tokens of "-"; a transition was a chunk of its own).
#: - Markdown and notebooks 6: setext underlines ("=====" under a heading) and thematic breaks ("---", "* * *")
#:   are left out of the text, as the page shows a heading's style and a rule ("---" was embedded beside its
#:   paragraph; a heading's element held its underline). Read as CommonMark reads them (markdown-it-py as the
#:   oracle over 2,316 real pages: elements under a wrong heading 92 -> 38, HTML headings and non-breaking-space
#:   lines the rest): a fence line indented 4 columns past its text is code, not the fence's end (the real end
#:   then opened a fence that swallowed the page); a fence indented under a list item opens there; Hugo's
#:   {{< code-toggle />}} is no code block and {{< code >}} ends at its own closing tag only; "## Example in
#:   C#" keeps its "#"; a "#" alone is no heading; a rule starts no paragraph (a title "--- LICENSE"); GFM
#:   tables without outer pipes are tables; a quote or indented code over "---" is no heading; a comment or
#:   import line of indented code is kept; lines end at "\n" only (U+2028 or a form feed made a "# x" heading)
#:   and notebooks' CRLF cells read as lines; a heading's text is its first 1,000 characters (a heading line
#:   of 20,000 spaces took hours, 200 kB of "[" minutes).
#: - Markdown and notebooks 7: indented code blocks are code (they were prose: a "- " or "|" line in one read as
#:   a list item or a table row, each comment line a sentence), a fence in a list item ends with its item
#:   (unclosed, it ran to the page's end), an MkDocs admonition's or tab's content (indented 4 columns) is its
#:   text, not code, and a fence in it is code (a definition's too). markdown-it-py as the oracle over 2,321
#:   real pages (docs repositories, Node.js and npm) and 113 packages' Markdown descriptions: code lines read
#:   otherwise 7,263 -> 3,670 and 226 -> 6, the rest MkDocs blocks, Hugo shortcodes and fences in quotes.
#: - Markdown and notebooks 8: link reference definitions ("[docs]: https://...") are left out, as the page
#:   shows none (mkdocs-material's docs: 8.9% of the indexed characters); over the 2,117 pages, 6,036 lines left
#:   out, each a definition to markdown-it but one "javascript:" link it refuses; of its 6,018, only mdBook's
#:   footnotes ("[^x]:") stay.
#: - Markdown and notebooks 9: a fence in a block quote is code up to its closing line or the quote's end (a
#:   GitHub alert's code was quote text: 192 lines over those pages read otherwise than markdown-it, now 18).
#: - Markdown and notebooks 10: a page's own table of contents (a list of three entries or more, each nothing but
#:   links to places on the page, with a heading that heads it alone) is left out, as a web page's is
#:   (``_contents_lists``): it was a chunk of section names (21 of 404 Markdown files on this machine).
#: - reStructuredText 5: a role or hyperlink reference wrapped over lines is read as its text (":ref:`semicolon-
#:   separated list <CMake\n Language Lists>`" was embedded whole), a role's title ends at its first unescaped "<"
#:   as Sphinx reads it, a directive opening a list item ("* .. versionadded:: 3.6") is read as one, a
#:   ``parsed-literal``'s references are read as their text (it stays code), and a directive whose argument
#:   is a file path (cmake's ".. cmake-module:: ../../Modules/FindBoost.cmake") shows nothing, as an include
#:   (its path was the page's one chunk). Over 8,082 pages (CMake's help, the AWS CLI's examples, docs of
#:   installed packages): 351 read otherwise, each checked.
#: - Web pages, pandoc's formats, XML and e-mail one more, AsciiDoc 9, Word 10, PowerPoint 7, PDF and images 1
#:   (their first revision of their own): a heading is under the headings before it of higher levels only
#:   (a page whose headings start at h2, a Word document at "Heading 2", a PDF whose largest heading comes
#:   late: each h2 was nested under the first, each h3 under the one before it; 31 of 326 pages of the Rust
#:   books and API docs read otherwise, each now as the page's outline). Word 10 also: paragraphs in a code
#:   style ("Code", pandoc's "Source Code", "HTML Preformatted") are code, a run of them one block (they
#:   were prose, cut between lines by the sentence strategies). PDF and images 1 also: a contents or index
#:   line's leader dots (five or more) are one "…" (libtasn1's manual: 30 tokens of "." an entry; 134 -> 119
#:   chunks).
#: - Web pages 8 (and so e-mail): what ARIA roles mark as navigation, a table of contents (doc-toc: docutils'
#:   ".. contents::") or search is left out, as <nav> is, and a page's one role="main" read alone, as its
#:   <main> is (Node.js' API pages: their first chunks were a sidebar of 60 links, a version picker and a
#:   table of contents); so are the site's banner and footer (role="banner", role="contentinfo", a <footer>
#:   in no article, aside, main, nav or section: a copyright line closing every page) and a table summarised
#:   as navigation (DocBook's Prev/Up/Next bar atop and below every page); a heading's permalink ("#", "¶",
#:   "§" linking to the heading) is no part of its text; a list of nothing but links to places on the page
#:   (a table of contents no role marks: npm's docs, a Confluence Table of Contents macro) is left out too.
#:   313 of 732 pages (Node.js, npm, rustdoc, the Rust book, libffi, Valgrind, libxslt) read otherwise,
#:   13.70 -> 13.15 M characters.
#: - Text 2: a plain text that underlines its titles (a line of "=", "-", "~"... as long as the title, as
#:   release notes, specs and READMEs do) has them as its headings, read as reStructuredText reads titles,
#:   the underlines and lone rules left out (it was paragraphs under no heading; 338 of 739 text files here,
#:   git's release notes and dpkg's specs among them). A text without one reads as before.
#: - Web pages 9, LaTeX and Org 8, XML 9 (JATS, DocBook), reStructuredText 6 (and so e-mail): a table is headed by
#:   the row its markup marks as its header (<th> cells or <thead>; a first row written in bold alone, as
#:   hand-written pages mark one; Org's rule; a simple table's "=" rule, or its first row underlined column
#:   by column), and a table without one has none: no "| --- |" row, so no row heads the others when a long
#:   table is chunked (gtk-doc's and libxslt's parameter tables, a row-headed "Version | 1.2" table, a
#:   ".. list-table::" without :header-rows:). Word, ODT, RTF, EPUB, PowerPoint, spreadsheets and PDFs rarely
#:   mark a header row: their tables keep their first row as header. 54 of 732 real web pages and 2 of 8,082
#:   reStructuredText pages read otherwise, a delimiter row fewer each; no other line changes.
#: - Web pages 9 and what is read as one (pandoc's formats: ODT, RTF, EPUB, LaTeX, Org 8, XML 9, AsciiDoc 10;
#:   Word 11 and Excel 8 for an HTML file under their names; e-mail): a superscript or subscript right after
#:   text reads after "^" or "_" ("2<sup>32</sup>" read "232", now "2^32"; a footnote mark "tests.^1"; the
#:   Rust reference's "lifetime_opt"); one opening a block, or of a sign alone (a grammar's "?"), as before.
#:   24 of 732 real pages read otherwise (the Rust reference and books, Node.js, libxslt).
#: - PDF and images 2 (and so e-mail): a word hyphenated over a line break is read whole ("mainte-" over
#:   "nance" was "mainte- nance", a word no keyword search or tokenizer knows), a compound keeps its hyphen
#:   ("self-test" where the document writes it so, "Franco-Prussian", "COVID-19") and a suspended one stays
#:   ("pre- and post-"); ``hyphens.joined_lines``. libtasn1's manual: 28 words, 27 now read as written (a
#:   time format's "hhmm-hh" loses its minus); 99.9% of 8,739 breaks in 700 man pages set justified by groff.
#:   A sentence a page break cuts (prose ending in a word or a comma, the next page's first text in lower
#:   case) is one paragraph, each part an element of its own page (``_page_joint``; a word the break cut,
#:   read whole), and so is a list item whose lines pdfminer reads apart, or a box ending in a cut word; and a line at the top or bottom of pages at most two apart is a running header too (a
#:   book's chapter title over its pages: libtasn1's "Chapter 4: Function reference" over 15 of 36 pages,
#:   "Chapter 3: Utilities" over 2, were read at each page's top, under half of the pages each). Ligature
#:   glyphs (U+FB00-FB06, "ﬁ") read as their letters. A page whose font maps most of its glyphs to no
#:   characters (pdfminer's "(cid:82)(cid:111)...", indexed as the page's text) is read by OCR (``_unmapped``);
#:   a few such glyphs on a readable page (a bullet, an arrow) are left out. A run of smaller characters
#:   raised above a line's baseline or lowered below it reads after "^" or "_" (``_scripted``: "10^6", "CO_2",
#:   a footnote mark "maintenance^3", where they read "106", "CO2", "maintenance3").
#: - PDF 3 (and so e-mail): a page set in columns is read column by column, between the boxes spanning them (a
#:   title, an abstract, a caption), and a paragraph a column break cuts as one (``pdf_columns.reading_order``,
#:   ``_column_goes_on``): pdfminer read a page whose right column is the shorter (a paper's last page, a figure
#:   ending a column) right column first. libtasn1's manual and shared-mime-info's spec read as before. A
#:   sentence a page break cuts reads on past the page's footnotes (text in a smaller font than the body's ending
#:   the page), which follow it: they stood between its parts, which read as two paragraphs. A filled form's
#:   fields read as "label: value" lines after their labels (``_pdf_form_values``): pdfminer reads no field's value.
#: - Excel 9: a sheet's text boxes and shapes read after its cells, in the order of the cells they are anchored at
#:   (``_sheet_drawings``): openpyxl reads no drawing, so a sheet's instructions and notes in boxes were lost.
#: - pandoc's formats (ODT, RTF, EPUB, LaTeX, Org 9, XML 10, AsciiDoc 11): a footnote's way back ("↩︎") is left out
#:   and its mark reads "here^1" (it was "here1"); an ODT's text boxes read after the paragraph each is anchored
#:   in (``_odt_frames_inline``): pandoc leaves frames out, so their text was lost.
#: - Word 12 (and so e-mail): a section's header and footer are under no heading (``_FURNITURE``; the footer was
#:   cited under the section's last heading, the next section's header under the one before it); a text box's
#:   paragraphs follow the paragraph it is anchored in (``_drawn_after``), an equation reads as a line of
#:   text in its place ("CF_t/(1+r)^t", ``math_text.omml_text``) and a simple field as its result (a caption's "Figure 3"):
#:   each was lost. A hyperlink to a target the package lacks keeps its text (the document failed).
#: - PowerPoint 8 (and so e-mail): a slide's number placeholder is left out (the slide is the page; "7" was a
#:   line of every slide), a footer or date placeholder is read once, where a slide first shows it, under no
#:   heading (``_slide_furniture``; "Company confidential" was a line of every slide). A chart reads as its
#:   title and its data as a table, a SmartArt diagram as its nodes (``_slide_graphics``; both were lost).
#: - E-mail 9: a message a reply quotes or forwards is a section headed by the line that introduces it ("On <date>,
#:   <sender> wrote:", Outlook's From/Sent block, "Forwarded message"; ``_quoted_message_title``): it read as
#:   the replier's text, under the subject alone. A plain-text body whose own lines come between quoted ones
#:   (answers under each question) has no such sections.
#: - Word 13: a chart reads as its title and its data as a table, a SmartArt diagram as its nodes, after the
#:   paragraph each is anchored in (``_drawn_after``; both were lost, as a slide's were). PowerPoint 9: a chart
#:   is read from its part's cached data as a Word one is (``chart_rows``): a scatter chart's x values label its
#:   rows (they were blank), a title or series name taken from a cell is read (it was left out).
#: - Web pages 10 (and Word 14 and Excel 10 for an HTML file under their names; e-mail): an equation (MathML) reads as a
#:   line of text in its place ("E=mc^2", "(a+b)/2", ``math_text.mathml_text``), else as its alttext: unstructured
#:   read none, so each was lost. ODT 10: an embedded formula reads in its place, an embedded chart's title, subtitle
#:   and data table and an embedded spreadsheet's tables after the paragraph it is anchored in
#:   (``_odt_frames_inline``): pandoc left objects out. ODP 2: a formula on a slide reads as a line, a chart's
#:   subtitle after its title. Word 14: an equation's script ends before a letter after it ("x_i y", was "x_iy").
#:   pandoc's formats (ODT, RTF, EPUB, LaTeX, Org 10, XML 11, AsciiDoc 12): pandoc writes equations as MathML, read as
#:   a web page's are (a displayed one it could not set read as its TeX source, "$$\frac{a+b}{2}$$"). PowerPoint 10:
#:   a shape PowerPoint wraps for older readers (``mc:AlternateContent``: a text box holding an equation) is read, its
#:   equations as lines of text (``_slides_unwrapped``): python-pptx skips the wrapper, so its text was lost.
#:   PowerPoint 10 and Word 15: an Office 2016 chart (waterfall, histogram, Pareto, box and whisker, funnel, treemap,
#:   sunburst: ``cx:chart``) reads as a chart does, its title and data table (``chartex_rows``); it was lost.
#: - ODP 3: a connector joining two shapes with text reads as "From → To: label" after the slide's shapes, and an
#:   OpenDocument drawing (.odg, LibreOffice Draw; refused as binary before) is read as a presentation.
#: - Visio 1: a drawing's pages, their shapes' texts in reading order and their connections (``diagrams.visio_pages``).
#:   Visio 2: the data set on a shape ("IP address: 10.0.0.1") on lines under its text. draw.io 1: a diagram read as a
#:   Visio drawing is (``diagrams.drawio_pages``); it was read as its XML, a compressed page as base64. SVG 1: a
#:   picture's text in the order it is drawn, a draw.io export as its diagram (``diagrams.svg_pages``); it was read
#:   as its XML (path data indexed).
#: - Word 16, PowerPoint 11: an embedded Excel worksheet (an OLE object, shown as a picture of its cells) reads as
#:   its active sheet's table (``_embedded_object``), after the paragraph it is in or in its place on the slide.
#:   Word 17, PowerPoint 12: an embedded Visio drawing reads as its shapes and connections, a list item each.
#:   Word 18: a chunk imported whole (``w:altChunk``: a web page, RTF or Word document an "export to Word" tool or a
#:   mail merge embeds) is read as its format is, in its place (``_alt_chunks``); python-docx skipped it.
#:   Word 19, PowerPoint 13: a file embedded as an icon ("Insert > Object > Create from file": Object Packager's
#:   ``Ole10Native``, an Acrobat PDF) reads under "Attachment: name" as its format is (``_packaged_file``).
#:   Word 20, PowerPoint 14: so does a Word document or deck embedded whole (Word.Document.12, PowerPoint.Show.12).
#:   PowerPoint 15: a connector (a flowchart's arrow) joining two shapes with text reads as "From → To" after the
#:   slide's graphics (``_slide_connections``).
#: - Markdown and notebooks 11: a block that is an HTML table (Node.js' API docs, READMEs) reads as a Markdown table,
#:   headed where its markup marks a header row; 12: another HTML block (a README's centred banner, a <details> box)
#:   as its text (``_html_blocks_as_markdown``): their tags were read as text. 31 of 1,467 Markdown files here read
#:   otherwise (Node.js' API pages and changelogs; three READMEs' banners and summaries). Markdown 13, notebooks 14:
#:   an HTML heading alone on its line reads as a Markdown one ("# Acme Gate", was '<h1 align="center">Acme
#:   Gate</h1>'); 2 more files here.
#: - Notebooks 13: what a cell displays (``display(df.head())``, a Markdown display) reads as its result does; it was
#:   left out.
#: - Excel 11: a sheet's connector joining two of its text boxes (a process drawn in boxes) reads as "From → To"
#:   after them (``office_graphics.connections``, as a slide's does).
#: - Code 2: C, C++, C#, Kotlin, Swift, Scala, Ruby, PHP, shell, PowerShell, Lua, Perl, Dart, Elixir, Groovy, JSX and TSX
#:   files are code, as Python, JavaScript, Go, Java, Rust and SQL were: chunked at top-level definitions a keyword
#:   opens (``def``, ``function``, ``class``...), else by lines, never at a blank line inside a function (they were
#:   text, chunked by paragraph); an .xhtml page is a web page (it was text: its markup was indexed).
#: - Code 3: Perl modules (.pm), Haskell (.hs), Zig (.zig), Julia (.jl), OCaml (.ml, .mli) and Terraform (.tf,
#:   .tfvars, .hcl) files are code, chunked by their syntax trees as Perl scripts (.pl) now are (they were text,
#:   chunked by paragraph).
#: - Web pages 11, EPUB 11 (its pages may be Sphinx's), reStructuredText 7: an API reference's objects (a function,
#:   a class and its methods, a C macro, an HTTP endpoint, a command-line option: Sphinx's ``<dl>`` objects, the
#:   directives that make them) are sections headed by their signatures and cited by their names
#:   ("Main Interfaces > charset_normalizer.from_bytes()"), one level below the section they are in
#:   (``api_objects``); a function's description was cut from its signature and cited under the page's section.
#:   A glossary's terms (``.. glossary::``, ``<dl class="glossary">``) head their definitions the same way.
#:   reStructuredText 7 also shows nothing for ``moduleauthor``, ``sectionauthor``, ``codeauthor`` and
#:   ``program``, as Sphinx does, reads ``.. class::`` with a description as Python's class (docutils' class
#:   directive, one without, still shows nothing), and a Python role's target without its intersphinx inventory's
#:   name (``:exc:`py3:StopIteration``` shows "StopIteration" where intersphinx resolves it).
#: - Markdown 14, notebooks 15: MyST's directives (```{note}, :::{tip}, ```{code-block} python, ```{toctree}) and
#:   roles ({ref}`the guide <guide>`) read as Sphinx shows them (``text_formats._myst_directives``): a label, a
#:   version note or nothing for the directive's line, its options left out, its content the page's Markdown (it was
#:   a code block, fence and options indexed), a code directive a code block in its language, a toctree nothing; R
#:   Markdown's and Quarto's chunks (```{r}) stay code. 12 of 1,499 Markdown files here read otherwise (pip's docs).
#: - JSON 3: a chat export (Slack's, Discord's, Telegram's, Microsoft Teams' through Graph, role/content messages) reads as its conversation, a
#:   message a turn "[10:15] Alice Smith: text" under its day (``chats.chat_items``); it was a table of its fields
#:   (Slack's block JSON, ids and timestamps indexed, a chunk cut between rows).
#: - XML 12: an RSS or Atom feed (Jira's XML export too) reads as a feed reader shows it (``feeds.feed_page``): each
#:   item a section under its title, its content's HTML read as a web page's, its other fields and comments as
#:   lines; it was its markup as text (escaped HTML, tags and mojibake indexed). 306 of 1,985 XML files here
#:   (chardet's test feeds in 40 encodings) read otherwise; no other.
#: - E-mail 10: an mbox file (``.mbox``, or a message saved with its mailbox "From " line) reads as its messages, each
#:   a section under its subject (``mail._mailbox``); ``.mbox`` was an unknown extension. A message saved with its
#:   "From " line reads as before.
#: - Text 3: a WhatsApp chat exported as text reads as its turns under its days (``chats.whatsapp_items``); it was
#:   text chunked by paragraph (a day's messages one paragraph). 3,001 other text files here read as before.
#:   Text 3 and JSON 3 also read an OpenAPI (3.x) or Swagger (2.0) description, YAML or JSON, as its API reference
#:   (``openapi.openapi_items``): each operation a section under its tag with tables of its parameters and
#:   responses, each schema with a table of its properties; it was YAML text or pretty-printed JSON (a $ref in
#:   place of each type). 3,000 other YAML and 4,000 other JSON files here read as before.
#: - Excel 12: a binary workbook (``.xlsb``) reads as its sheets (``sheets._parse_xlsb``, calamine); it was refused
#:   ("save it as .xlsx"). A sheet's charts read after its cells as a slide's do (title, cached data as a table), a
#:   chart sheet as a page of its own (pages are tabs' numbers: a chart sheet before a worksheet moves its page),
#:   and a duration as [h]:mm:ss (it read "10 days, 15:10:10").
#: - JSON 4: a Slack thread's replies follow the message that started it (``chats._threaded``), as the app shows a
#:   thread; the export lists them in time order among the channel's messages (a question and its answer chunks apart).
#: - Contacts 1 (new): a vCard file (``.vcf``) reads as its contacts (``contacts.contact_items``); it was an unknown
#:   extension, read as text (escaped, folded, quoted-printable property lines, photos' base64).
#: - Calendar 1 (new): an iCalendar file (``.ics``) reads as its events, to-dos and journal entries
#:   (``calendars.calendar_items``); it was text (folded, escaped property lines). An e-mail's invitation too.
#: - Web pages 12: a heading the page gives an id carries it (``Element.anchor``, ``anchors``), so a result links to
#:   its section (``page.html#gnu-make``); the text and elements are as before.
#: - Markdown 15: a heading carries the id GitHub gives it (a repeated one ``-1``, ``-2``...) or its own ``{#id}``
#:   (``anchors.markdown_heading_ids``), so a published result links to a changelog's second "Added", not its first.
#: - Markdown 16: a heading's trailing attribute list (``{#id}``, ``{.unnumbered}``, ``{-}``) is left out of its
#:   text in heading paths, as MkDocs, Pandoc and Quarto render it ("1.1.0", not "1.1.0 {#v110}").
#: - Web pages 13: a Sphinx section whose heading follows a label's empty ``<span id>`` links by the section's id
#:   (``#requirements-files``); it linked to the section above.
FORMAT_REVISIONS = {"code": "3", "csv": "1", "text": "3", "rst": "7", "notebook": "15", "markdown": "16",
                    "html": "13", **dict.fromkeys(("odt", "rtf", "latex", "org"), "10"), "epub": "11",
                    "xml": "12", "email": "10", "asciidoc": "12",
                    "docx": "20", "pptx": "15", "xlsx": "12", "subtitles": "1", "json": "4",
                    "pdf": "3", "image": "2", "ods": "1", "odp": "3", "visio": "2", "drawio": "1", "svg": "1",
                    "calendar": "1", "contacts": "1"}
# An e-mail's attachments are read as their formats are: its reading changes with any of theirs.
FORMAT_REVISIONS["email"] += "-" + "".join(f"{name}{revision}" for name, revision in sorted(FORMAT_REVISIONS.items())
                                          if name != "email")


class DocumentError(Exception):
    """A document that cannot be read or parsed; the message names the document and the cause."""

    def __init__(self, doc_id: str, cause: str):
        super().__init__(f"{doc_id}: {cause}")
        self.doc_id = doc_id
        self.cause = cause


@lru_cache(maxsize=1)
def parser_version() -> str:
    """Identifies the parsing code: our revision plus the unstructured and pdfminer versions
    (read once per process: installed versions do not change under a running process)."""
    return f"p{PARSER_REVISION}-unstructured{version('unstructured')}-pdfminer{version('pdfminer.six')}"


def parser_settings(ocr_languages: tuple[str, ...], content_type: str | None = None) -> str:
    """What a parse of ``content_type`` (None: any) depends on besides the document's bytes and
    name: ``parser_version``, the format's ``FORMAT_REVISIONS``, and ``ocr_languages`` where they
    are not the default and the format may be read by OCR (``OCR_FORMATS``), so a change of
    languages re-parses just the documents it may change."""
    revisions = FORMAT_REVISIONS.items() if content_type is None else \
        [(content_type, FORMAT_REVISIONS[content_type])] if content_type in FORMAT_REVISIONS else []
    settings = parser_version() + "".join(f"-{name}{revision}" for name, revision in sorted(revisions))
    if tuple(ocr_languages) == DEFAULT_LANGUAGES or (content_type is not None and content_type not in OCR_FORMATS):
        return settings
    return f"{settings}-ocr-{'+'.join(ocr_languages)}"


_OBJECT_REPR = re.compile(r"<[\w.]+ object at 0x[0-9a-fA-F]+>")  # python-docx names its BytesIO in errors
_NOT_A_ZIP = re.compile(r"BadZipFile|not a ZIP archive|not a zip file", re.I)  # a truncated or damaged package
_DAMAGED_PDF = re.compile(r"PSEOF|Unexpected EOF|No /Root object|PDFSyntaxError|startxref")  # pdfminer's words for it


_SHOWS_NOTHING = ("the page shows no text (only comments, link definitions, includes of other files or markup "
                  "lines; rag reads each file alone); if other pages include it as a snippet, or it only includes "
                  "files indexed on their own, leave it out with the source's exclude globs")


def parse_document(raw: RawDocument, limits: ParseLimits = ParseLimits(),
                   ocr_languages: tuple[str, ...] = DEFAULT_LANGUAGES) -> ParsedDocument:
    """Parse ``raw`` within ``limits``, reading its pictures that OCR reads in ``ocr_languages``
    (Tesseract's language codes); raises DocumentError (never returns partial text) when it
    cannot or when the document exceeds a limit (the cause names the limit and its setting).

    Rich formats (HTML, DOCX, PPTX, e-mail, XLSX, ODS, ODP, notebooks, calendars, PDF, and through pandoc ODT,
    RTF, EPUB, AsciiDoc, LaTeX, Org, JATS, DocBook) are parsed in a child process bounded in time
    and memory (see ``limits.run_bounded``); a zip format (DOCX, PPTX, XLSX, ODT, ODS, ODP, EPUB)
    is first checked for its expanded size. Text formats are decoded in process: their cost is linear in
    the bytes, which the source's size limit bounds.
    """
    content_type = content_type_for(raw.doc_id)
    if not raw.data:
        raise DocumentError(raw.doc_id, "the file is empty (0 bytes): nothing to index")
    try:
        if content_type in READERS:
            if content_type in ARCHIVES:
                limits.check_archive(raw.data)
            _load_parser(content_type)
            args = (content_type, raw.data, limits, tuple(ocr_languages))
            text, elements, title, tags, ocr_pages = run_bounded(_bounded_parse, args, limits)
        else:
            text, elements, title = parse_text(content_type, raw.data)
            limits.check_output(text, len(elements))
            tags, ocr_pages = (), 0
    except DocumentError:
        raise
    except ParseLimitExceeded as exc:
        raise DocumentError(raw.doc_id, str(exc)) from exc
    except ParserFailed as exc:
        if content_type in ARCHIVES and _NOT_A_ZIP.search(str(exc)):
            raise DocumentError(raw.doc_id, f"cannot parse as {content_type}: the file is damaged or cut short (it is no "
                                            "readable zip archive, as that format is); save or copy it again") from exc
        if content_type == "pdf" and _DAMAGED_PDF.search(str(exc)):
            raise DocumentError(raw.doc_id, f"cannot parse as pdf: the file is damaged or cut short ({exc}); save, "
                                            "print to PDF or copy it again") from exc
        raise DocumentError(raw.doc_id, f"cannot parse as {content_type}: {_OBJECT_REPR.sub('the file', str(exc))}") from exc
    except Exception as exc:  # parsers raise many types; all mean this document is unreadable
        raise DocumentError(raw.doc_id, f"cannot parse as {content_type}: {type(exc).__name__}: "
                                        f"{_OBJECT_REPR.sub('the file', str(exc))}") from exc
    if not text.strip():
        raise DocumentError(raw.doc_id, "OCR found no text in the image (a photograph or a drawing?)"
                            if content_type == "image" else _SHOWS_NOTHING
                            if content_type in ("markdown", "rst") and raw.data.strip() else
                            "document has no text (empty, or nothing extractable)")
    matter_title, matter_tags = front_matter(text) if content_type == "markdown" else ("", ())
    return ParsedDocument(
        doc_id=raw.doc_id,
        uri=raw.uri,
        content_hash=raw.content_hash,
        source_version=raw.source_version,
        title=matter_title or title or _title_from_path(raw.doc_id),
        content_type=content_type,
        text=text,
        elements=elements,
        tags=tags or matter_tags,
        ocr_pages=ocr_pages,
    )


def _bounded_parse(content_type: str, data: bytes, limits: ParseLimits, ocr_languages: tuple[str, ...]):
    """Runs in the bounded child: parse (OCR reading ``ocr_languages``), then check the output
    there, so an oversized result is never sent back; the document's tags from its own properties
    (``_property_tags``) and how many pages or pictures OCR read (as the call reported them for its
    time allowance)."""
    with reading_languages(ocr_languages):
        text, elements, title = read_format(content_type, data, limits)
    limits.check_output(text, len(elements))
    return text, elements, title, _property_tags(content_type, data), ocr_pages_reported()


def _property_tags(content_type: str, data: bytes) -> tuple[str, ...]:
    """The tags a document's own properties give it: an Office file's Tags (its keywords, as
    Word, PowerPoint, Excel and Explorer show them), an OpenDocument file's keywords, a PDF's
    Keywords, a web page's <meta name="keywords">; () for other formats and documents without.
    A 97-2003 Office file's keywords are those of its summary information."""
    if content_type in ("docx", "pptx", "xlsx") and data.startswith(OLE_MAGIC):
        found = _ole_keywords(data)
    elif content_type in ("docx", "pptx", "xlsx", "odt", "ods", "odp", "visio"):
        meta = zip_member(data, "meta.xml" if content_type.startswith("od") else "docProps/core.xml")
        found = re.findall(r"<(?:cp:keywords|meta:keyword)>([^<]*)</", meta)
    elif content_type == "pdf":
        found = _pdf_keywords(data)
    elif content_type == "html":
        head = decode_text(data[:65_536])[0]  # the head: where a page declares its keywords
        found = [match.group(2) for tag in re.findall(r"<meta\b[^>]*>", head, re.I)
                 if re.search(r"""\bname\s*=\s*["']?keywords\b""", tag, re.I)
                 and (match := re.search(r"""\bcontent\s*=\s*(["'])(.*?)\1""", tag, re.I | re.S))]
    else:
        return ()
    return tag_names(html.unescape(value) for value in found)


def _pdf_keywords(data: bytes) -> list[str]:
    """The Keywords of a PDF's document information (text strings decoded as PDF defines them)."""
    from pdfminer.pdfdocument import PDFDocument
    from pdfminer.pdfparser import PDFParser
    from pdfminer.pdftypes import resolve1
    from pdfminer.utils import decode_text as decode_pdf_text

    found = []
    for info in PDFDocument(PDFParser(io.BytesIO(data))).info:
        value = resolve1(info.get("Keywords"))
        if isinstance(value, bytes):
            found.append(decode_pdf_text(value))
        elif isinstance(value, str):
            found.append(value)
    return found


def _ole_keywords(data: bytes) -> list[str]:
    """The Keywords of a compound file's summary information, decoded by its code page; [] when it
    has none or cannot be read (the parse reports a damaged file)."""
    import olefile

    try:
        meta = olefile.OleFileIO(data).get_metadata()
    except Exception:  # noqa: BLE001 - olefile raises many types for damaged files; tags are optional
        return []
    value, codepage = meta.keywords, (meta.codepage or 1252) & 0xFFFF  # stored as a signed 16-bit number
    if isinstance(value, bytes):
        encoding = {65001: "utf-8", 1200: "utf-16-le"}.get(codepage, f"cp{codepage}")
        try:
            value = value.decode(encoding, "replace")
        except LookupError:  # a code page Python does not know
            value = value.decode("cp1252", "replace")
    return [value] if isinstance(value, str) else []


def _load_parser(content_type: str) -> None:
    """Import the format's reader and the modules it uses, and the spaCy model where unstructured
    parses the format, in this process once, so each bounded child starts with them (copy-on-write)
    instead of loading them per document."""
    if content_type not in _LOADED:
        modules = READERS[content_type].uses
        if any(module.startswith("unstructured.") for module in modules):
            from rag_assets.core.parsing.offline import prepare_unstructured

            prepare_unstructured()
            from unstructured.nlp.tokenize import sent_tokenize

            sent_tokenize("Load the sentence model.")
        for module in modules:
            importlib.import_module(module)
        reader(content_type)
        _LOADED.add(content_type)


def _title_from_path(doc_id: str) -> str:
    stem = posixpath.splitext(posixpath.basename(doc_id))[0]
    return re.sub(r"[_-]+", " ", stem).strip() or doc_id


_LOADED: set[str] = set()
OCR_FORMATS = ("pdf", "image", "docx", "pptx", "email")  # content types with pictures OCR may read
