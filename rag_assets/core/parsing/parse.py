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
"""

from __future__ import annotations

import html
import importlib
import io
import json
import math
import mimetypes
import posixpath
import re
import unicodedata
from dataclasses import replace
from datetime import datetime, time
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from functools import lru_cache, partial
from importlib.metadata import version

from rag_assets.core.models import Element, ParsedDocument, RawDocument
from rag_assets.core.parsing.decode import decode_text, elide_inline_data
from rag_assets.core.parsing.diagrams import drawio_pages, svg_pages, visio_pages
from rag_assets.core.parsing.html_landmarks import MIN_CONTENTS_ENTRIES, readable_landmarks
from rag_assets.core.parsing.html_tables import expand_spans, is_header_row, readable_tables, table_rows
from rag_assets.core.parsing.hyphens import Hyphens, joined_lines
from rag_assets.core.parsing.limits import (ParseLimitExceeded, ParseLimits, ParserFailed, ocr_pages_reported,
                                            report_ocr_page, report_pages, run_bounded)
from rag_assets.core.parsing.ocr import DEFAULT_LANGUAGES, reading_languages
from rag_assets.core.parsing.math_text import OMML, mathml_text, omml_text
from rag_assets.core.parsing.office_graphics import (chart_rows, chartex_rows, connections, diagram_lines,
                                                     drawing_texts)
from rag_assets.core.parsing.opendocument import is_formula, object_items, presentation_slides, spreadsheet_sheets
from rag_assets.core.parsing.pdf_columns import Box, reading_order
from rag_assets.core.parsing.rst import rst_as_shown
from rag_assets.core.parsing.structure import (front_matter, html_heading_as_atx, indent_width, markdown_blocks,
                                              markdown_table, paragraph_elements, rst_elements, tag_names,
                                              without_lines, without_site_markup)
from rag_assets.core.parsing.subtitles import subtitle_transcript

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
FORMAT_REVISIONS = {"code": "2", "csv": "1", "text": "2", "rst": "6", "notebook": "14", "markdown": "13",
                    "html": "10", **dict.fromkeys(("odt", "rtf", "epub", "latex", "org"), "10"),
                    "xml": "11", "email": "9", "asciidoc": "12",
                    "docx": "20", "pptx": "15", "xlsx": "11", "subtitles": "1", "json": "2",
                    "pdf": "3", "image": "2", "ods": "1", "odp": "3", "visio": "2", "drawio": "1", "svg": "1"}
# An e-mail's attachments are read as their formats are: its reading changes with any of theirs.
FORMAT_REVISIONS["email"] += "-" + "".join(f"{name}{revision}" for name, revision in sorted(FORMAT_REVISIONS.items())
                                          if name != "email")

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
    ".msg": "email",
    ".xlsx": "xlsx",
    ".xlsm": "xlsx",
    ".xltx": "xlsx",
    ".xltm": "xlsx",
    ".xls": "xlsx",  # Excel 97-2003, told apart by content
    ".xlt": "xlsx",
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
                     ".cc", ".cpp", ".cxx", ".hpp", ".sh", ".bash", ".zsh", ".ps1", ".lua", ".pl", ".dart", ".ex", ".exs",
                     ".groovy"), "code"),  # chunked as code, as the languages above
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


def content_type_for(doc_id: str) -> str:
    """Content type from the file extension; unknown extensions are read as text."""
    return CONTENT_TYPES.get(posixpath.splitext(doc_id.lower())[1], "text")


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

    Rich formats (HTML, DOCX, PPTX, e-mail, XLSX, ODS, ODP, notebooks, PDF, and through pandoc ODT,
    RTF, EPUB, AsciiDoc, LaTeX, Org, JATS, DocBook) are parsed in a child process bounded in time
    and memory (see ``limits.run_bounded``); a zip format (DOCX, PPTX, XLSX, ODT, ODS, ODP, EPUB)
    is first checked for its expanded size. Text formats are decoded in process: their cost is linear in
    the bytes, which the source's size limit bounds.
    """
    content_type = content_type_for(raw.doc_id)
    if not raw.data:
        raise DocumentError(raw.doc_id, "the file is empty (0 bytes): nothing to index")
    try:
        if content_type in _PARSERS:
            if content_type in _ARCHIVES:
                limits.check_archive(raw.data)
            _load_parser(content_type)
            args = (content_type, raw.data, limits, tuple(ocr_languages))
            text, elements, title, tags, ocr_pages = run_bounded(_bounded_parse, args, limits)
        else:
            text, elements, title = _parse_text(content_type, raw.data)
            limits.check_output(text, len(elements))
            tags, ocr_pages = (), 0
    except DocumentError:
        raise
    except ParseLimitExceeded as exc:
        raise DocumentError(raw.doc_id, str(exc)) from exc
    except ParserFailed as exc:
        if content_type in _ARCHIVES and _NOT_A_ZIP.search(str(exc)):
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
        text, elements, title = _parse_format(content_type, data, limits)
    limits.check_output(text, len(elements))
    return text, elements, title, _property_tags(content_type, data), ocr_pages_reported()


def _property_tags(content_type: str, data: bytes) -> tuple[str, ...]:
    """The tags a document's own properties give it: an Office file's Tags (its keywords, as
    Word, PowerPoint, Excel and Explorer show them), an OpenDocument file's keywords, a PDF's
    Keywords, a web page's <meta name="keywords">; () for other formats and documents without.
    A 97-2003 Office file's keywords are those of its summary information."""
    if content_type in ("docx", "pptx", "xlsx") and data.startswith(_OLE_MAGIC):
        found = _ole_keywords(data)
    elif content_type in ("docx", "pptx", "xlsx", "odt", "ods", "odp", "visio"):
        meta = _zip_member(data, "meta.xml" if content_type.startswith("od") else "docProps/core.xml")
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


def _zip_member(data: bytes, name: str) -> str:
    """A zip member's text; "" when the data is no zip or has no such member."""
    import zipfile

    try:
        return zipfile.ZipFile(io.BytesIO(data)).read(name).decode("utf-8", "replace")
    except (zipfile.BadZipFile, KeyError):
        return ""


def _parse_format(content_type: str, data: bytes, attachment_limits: ParseLimits | None = None):
    """``data`` parsed in this process as ``content_type`` says (an Office package under another
    Office format's name as what it is: a deck saved as .xlsx is read as a deck); an e-mail's
    attachments are read within ``attachment_limits`` (none: not read)."""
    if content_type == "email":
        return _parse_email(data, attachment_limits)
    if content_type in _OFFICE_MAIN_PARTS:
        content_type = _office_package(data) or content_type
    if content_type in _PARSERS:
        return _PARSERS[content_type](data)
    return _parse_text(content_type, data)


_OFFICE_MAIN_PARTS = {"docx": "word/document.xml", "pptx": "ppt/presentation.xml", "xlsx": "xl/workbook.xml"}


def _office_package(data: bytes) -> str | None:
    """The Office format whose main part a zip package holds, or None (not a zip, or none of them)."""
    import zipfile

    try:
        names = set(zipfile.ZipFile(io.BytesIO(data)).namelist())
    except zipfile.BadZipFile:
        return None
    return next((kind for kind, part in _OFFICE_MAIN_PARTS.items() if part in names), None)


# A Markdown block that no renderer shows, left out of the text: only an HTML comment (a licence
# header, a TODO, a linter directive), an MDX comment {/* */}, a Liquid {% comment %} block, or MDX's
# ES module lines (import ... from '...'; export const x = ...;). One inside a fence is code and stays.
_COMMENT_BLOCK = re.compile(
    r"[ \t]*(?:<!--(?:(?!-->).)*-->|\{/\*(?:(?!\*/\}).)*\*/\}"
    r"|\{%-?\s*comment\s*-?%\}(?:(?!\{%-?\s*endcomment).)*\{%-?\s*endcomment\s*-?%\})[ \t]*"
    r"|(?:[ \t]*(?:import\s[^\n]*?\bfrom\s+['\"][^'\"\n]+['\"];?[ \t]*|import\s+['\"][^'\"\n]+['\"];?[ \t]*"
    r"|export\s+(?:const|let|default|function)\b[^\n]*)(?:\n|$))+", re.S)  # (an export line's tail read one way only)


def _parse_text(content_type: str, data: bytes):
    """A text format's decoded text, its elements and title (a Markdown file's sole top-level
    heading, a reStructuredText file's sole top-level title; a front matter's title, which names
    a Markdown file before it, is read by ``parse_document``). Markdown is read as its rendered page
    shows it (``_markdown_as_shown``)."""
    text = elide_inline_data(decode_text(data)[0])
    if content_type == "subtitles":
        text = subtitle_transcript(text)
    if content_type == "json" and (read := _parse_json(text)) is not None:
        return read
    if content_type == "markdown":
        text, elements = _markdown_as_shown(text)
    elif content_type == "rst":
        text, elements = rst_as_shown(text)
    elif content_type == "csv":
        elements = (Element(0, len(text.rstrip()), "Table"),) if text.strip() else ()
    elif content_type == "code":
        elements = (Element(0, len(text.rstrip()), "CodeSnippet"),) if text.strip() else ()
    elif content_type == "text" and (titled := _underlined_titles(text)):
        text, elements = titled
    else:
        elements = paragraph_elements(text)
    return text, elements, _sole_top_heading(text, elements)


def _underlined_titles(text: str) -> tuple[str, tuple[Element, ...]] | None:
    """A plain text's blocks where it underlines (or over- and underlines) its titles with a line of
    "=", "-", "~"... as long as the title, as release notes, specs and READMEs do: read as
    reStructuredText reads titles (``rst_elements``: each style a level in the order the text first
    uses it, the adornment lines and lone rules left out of the text), but a shorter line is no
    underline (a one-line paragraph over a "-----" rule); None for a text without."""
    elements, adornments = rst_elements(text, whole=True)
    if not any(e.category == "Title" for e in elements):
        return None
    return without_lines(text, elements, adornments)


# A link reference definition ('[docs]: https://example.com "Title"'), which no renderer shows (a link
# using it shows its own text); "[^1]: ..." is a footnote, which the page shows.
_LINK_DEFINITION = re.compile(r" {0,3}\[(?!\^)(?:[^\[\]\\\n]|\\.){1,999}\]:[ \t]*(?:<[^<>\n]*>|[^\s<]\S*)"
                              r"(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*(?:\n|$)")


def _markdown_as_shown(text: str) -> tuple[str, tuple[Element, ...]]:
    """Markdown text as a reader of its rendered page sees it, and its elements: what no renderer
    shows (``_unshown``) and the page's own tables of contents (``_contents_lists``) left out,
    docs-site markup lines replaced by their labels (``without_site_markup``), an HTML table block
    written as a Markdown table and another HTML block as its text (``_html_blocks_as_markdown``), setext underlines and thematic
    breaks left out (``markdown_blocks``)."""
    blocks = markdown_blocks(text)
    if cuts := sorted(_unshown(text, blocks[0]) + _contents_lists(text, blocks[0])):
        text = without_lines(text, (), tuple(cuts))[0]
        blocks = markdown_blocks(text)
    shown, containers = without_site_markup(text, blocks[0])
    if shown != text:
        text, blocks = shown, markdown_blocks(shown, containers)
    if (rendered := _html_blocks_as_markdown(text, blocks[0])) != text:
        text, blocks = rendered, markdown_blocks(rendered, containers)
    return without_lines(text, *blocks)


_HTML_TABLE_BLOCK = re.compile(r" {0,3}<table\b.*</table>[ \t]*", re.I | re.S)
# A block of HTML a README writes (a centred banner, a <details> box): what it shows is its text.
_HTML_TEXT_BLOCK = re.compile(r" {0,3}<(p|div|center|details|summary|section|article|aside|figure|figcaption|blockquote|"
                              r"ul|ol|dl)(?:[\s>]).*</\1>[ \t]*", re.I | re.S)
_HTML_LINE_BREAKS = ("br", "p", "div", "li", "dt", "dd", "summary", "figcaption", "blockquote", "center", "section")


def _html_blocks_as_markdown(text: str, elements: tuple[Element, ...]) -> str:
    """``text`` with each block that is an HTML table (as READMEs embed one) written as a Markdown
    table (``html_tables.table_rows``: headed where its markup marks a header row), so it is cited
    and chunked row by row as one, each block that is other HTML (a centred banner, a <details>
    box, opening and closing with the same tag) as the text it shows, a line a block and a picture
    its alt text (``_html_block_text``), and an HTML heading as a Markdown one ("# Acme Gate"):
    their tags were read as text."""
    out, kept_to = [], 0
    for element in elements:
        block = text[element.start : element.end]
        if element.category == "Title":
            shown = html_heading_as_atx(block)
        elif element.category != "NarrativeText":
            continue
        elif _HTML_TABLE_BLOCK.fullmatch(block):
            read = table_rows(block)
            shown = markdown_table(*read) if read else None
        else:
            shown = _html_block_text(block) if _HTML_TEXT_BLOCK.fullmatch(block) else None
        if shown is not None:
            out += [text[kept_to : element.start], shown]
            kept_to = element.end
    return "".join(out) + text[kept_to:] if out else text


def _html_block_text(block: str) -> str | None:
    """The text an HTML block shows: a line a block element or line break, a picture its alt
    text; None where it holds preformatted text (kept as written), what a page shows as no text
    (a script, a style, a form), a table, or what lxml cannot read."""
    from lxml import html as lxml_html

    try:
        root = lxml_html.fragment_fromstring(block, create_parent="div")
    except Exception:  # noqa: BLE001 - markup lxml cannot read: left as written
        return None
    if any(True for _ in root.iter("pre", "script", "style", "form", "textarea", "iframe", "table")):
        return None
    for image in root.iter("img"):
        image.tail = (image.get("alt") or "") + (image.tail or "")
    for element in root.iter(*_HTML_LINE_BREAKS):
        element.tail = "\n" + (element.tail or "")
        if element.tag != "br":
            element.text = "\n" + (element.text or "")
    lines = (" ".join(line.split()) for line in root.text_content().split("\n"))
    return "\n".join(line for line in lines if line)


# A list line showing nothing but links to places on the page ("- [Install](#install)", "1. [A](#a), [B](#b)")
_CONTENTS_ENTRY = re.compile(r"[ \t]*(?:[-+*]|\d{1,9}[.)])[ \t]+(?:\[(?:[^\[\]\\\n]|\\.)*[^\W_](?:[^\[\]\\\n]|\\.)*\]"
                             r"\(#[^()\s]*\)[^\w\n\[]*)+")


def _contents_lists(text: str, elements: tuple[Element, ...]) -> list[tuple[int, int]]:
    """The spans of a Markdown page's own tables of contents, as a web page's are found
    (``html_landmarks``): a list of ``MIN_CONTENTS_ENTRIES`` items or more, nested ones counted, each
    a line showing nothing but links to places on the page, with its heading where that heads it
    alone ("## Contents", at most 40 characters; never a level 1 title). A list of fewer is text
    ("see Setup and Usage"), as is one whose items say more."""
    cuts = []
    for n, el in enumerate(elements):
        lines = text[el.start : el.end].split("\n")
        if el.category != "ListItem" or len(lines) < MIN_CONTENTS_ENTRIES \
                or not all(_CONTENTS_ENTRY.fullmatch(line) for line in lines):
            continue
        start, heading = el.start, elements[n - 1] if n else None
        after = elements[n + 1] if n + 1 < len(elements) else None
        heads_more = after is not None and (after.category != "Title" or len(after.heading_path) > len(el.heading_path))
        if heading is not None and heading.category == "Title" and len(heading.heading_path) > 1 \
                and heading.heading_path == el.heading_path and heading.end - heading.start <= 40 and not heads_more:
            start = heading.start
        cuts.append((start, el.end))
    return cuts


def _unshown(text: str, elements: tuple[Element, ...]) -> list[tuple[int, int]]:
    """The spans of ``text`` that no renderer shows, in order: blocks of comments or module lines
    alone (``_COMMENT_BLOCK``; not lines of indented code), and the link reference definitions
    that open a paragraph (one inside a paragraph is its text, as CommonMark reads it)."""
    cuts = []
    for el in elements:
        block = text[el.start : el.end]
        if _COMMENT_BLOCK.fullmatch(block) and indent_width(block.expandtabs(4)) < 4:
            cuts.append((el.start, el.end))
        elif el.category == "NarrativeText":
            pos = el.start
            while pos < el.end and (definition := _LINK_DEFINITION.match(text, pos, el.end)):
                pos = definition.end()
            if pos > el.start:
                cuts.append((el.start, min(pos, el.end)))
    return cuts


def _parse_json(text: str):
    """A JSON file (or JSON Lines, a value a line) as text to search: records (an array of objects,
    also under a top-level key, which heads them) as a table, a row a record under their keys
    (nested values as compact JSON; records whose keys differ much, as "key: value" lines a record),
    the rest pretty-printed, two spaces an indent, so a minified export reads line by line (it was
    one line, cut mid-field); None for text that is not JSON (a file with comments is read as text)
    or nests so deep that indenting would multiply it."""
    try:
        value = json.loads(text)
    except ValueError:
        try:
            value = [json.loads(line) for line in text.splitlines() if line.strip()]
        except (ValueError, RecursionError):
            return None
        if len(value) < 2:
            return None
    except RecursionError:
        return None
    try:
        if _records(value):
            joined, elements = _join_elements(_whole_chars(_record_items(value)))
        elif isinstance(value, dict) and any(_records(v) for v in value.values()):
            rest = {key: v for key, v in value.items() if not _records(v)}
            items = [("NarrativeText", json.dumps(rest, indent=2, ensure_ascii=False), None)] if rest else []
            for key, v in value.items():
                if _records(v):
                    items += [("Title", key, None), *_record_items(v)]
            joined, elements = _join_elements(_whole_chars(items))
        else:
            joined = json.dumps(value, indent=2, ensure_ascii=False)
            if len(joined) > 4 * len(text) + 4096:  # deep nesting: each level indents every line below it
                return None
            joined = _LONE_SURROGATE.sub("\ufffd", joined)
            elements = paragraph_elements(joined)
    except RecursionError:
        return None
    return joined, elements, ""


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # a JSON escape of half a pair (an export cut mid-emoji)


def _whole_chars(items: list[tuple[str, str, None]]) -> list[tuple[str, str, None]]:
    """Items with each lone surrogate replaced (one character for one), before their text
    becomes the document's, its titles and heading paths (which no tokenizer or Arrow column takes)."""
    return [(category, _LONE_SURROGATE.sub("\ufffd", item), extra) for category, item, extra in items]


def _records(value) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) and v for v in value)


def _json_cell(value) -> str:
    return "" if value is None else value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _record_items(records: list[dict]) -> list[tuple[str, str, None]]:
    """Records as one table under the union of their keys (in the order first seen), or, where that
    union is over twice as wide as a record is on average (sparse records: mostly empty cells), as a
    paragraph of "key: value" lines a record."""
    keys = list(dict.fromkeys(key for record in records for key in record))
    if len(keys) > 2 * sum(map(len, records)) / len(records):
        return [("NarrativeText", "\n".join(f"{key}: {' '.join(_json_cell(v).split())}" for key, v in record.items()
                                            if v is not None), None) for record in records]
    return [("Table", markdown_table([keys, *([_json_cell(record.get(key)) for key in keys] for record in records)]),
             None)]


def _load_parser(content_type: str) -> None:
    """Import the format's parser modules, and the spaCy model where unstructured parses the format,
    in this process once, so each bounded child starts with them (copy-on-write) instead of loading
    them per document."""
    if content_type not in _LOADED:
        modules = _PARSER_MODULES[content_type]
        if any(module.startswith("unstructured.") for module in modules):
            from rag_assets.core.parsing.offline import prepare_unstructured

            prepare_unstructured()
            from unstructured.nlp.tokenize import sent_tokenize

            sent_tokenize("Load the sentence model.")
        for module in modules:
            importlib.import_module(module)
        _LOADED.add(content_type)


def _sole_top_heading(text: str, elements: tuple[Element, ...]) -> str:
    """A Markdown document's title: its top-level heading when it has exactly one ("" otherwise,
    so the file name is used). A file of several top-level sections (a manual, a collection of
    articles) is not titled by its first section: the title goes into every chunk's header."""
    tops = [e for e in elements if e.category == "Title" and len(e.heading_path) == 1]
    return tops[0].heading_path[0] if len(tops) == 1 else ""


def _title_from_path(doc_id: str) -> str:
    stem = posixpath.splitext(posixpath.basename(doc_id))[0]
    return re.sub(r"[_-]+", " ", stem).strip() or doc_id


_UNTITLED = "Untitled"  # the category of an item that ends the heading path before it (no text)
_CONTINUED = "Continued"  # the category of an item whose text joins the next item to the one before


#: what a page or a section carries whatever heading it is under: a Word section's header and footer, a deck's
#: footer
_FURNITURE = frozenset({"Header", "Footer"})


def _join_elements(items: list[tuple]) -> tuple[str, tuple[Element, ...]]:
    """Join (category, text, page) items with blank lines. A Title item starts the heading path
    of the items after it, under the titles before it of smaller level numbers only (an h2 under an
    h1; an h2 after an h2 is its sibling where the page has no h1): its level is a fourth field, 1
    when absent (top level); a fifth, True, marks an item OCR read (``Element.ocr``); a sixth names
    a Title's heading where its text is markup (a Markdown attachment's "# Notes"). An
    ``_UNTITLED`` item ends the heading path (a slide without a title is not under the slide
    before it); a ``_CONTINUED`` item's text (" " or "") joins the items around it in place of the
    blank lines (a paragraph that a page break cuts mid-sentence). A header or footer is under no
    heading (``_FURNITURE``)."""
    parts: list[str] = []
    elements: list[Element] = []
    pos = 0
    heading: tuple[str, ...] = ()
    levels: list[int] = []  # each heading's level: a title closes those at its level or below
    joint = "\n\n"  # what joins the next item to the one before
    for category, item_text, page, *more in items:
        if category == _UNTITLED:  # a part without a heading: nothing before it heads it
            heading = ()
            levels.clear()
            continue
        if category == _CONTINUED:
            joint = item_text
            continue
        item_text = item_text.strip()
        if not item_text:
            continue
        if parts:
            parts.append(joint)
            pos += len(joint)
        joint = "\n\n"
        if category == "Title":  # under the headings of higher levels only, however many levels it skips
            level = more[0] if more else 1
            while levels and levels[-1] >= level:
                levels.pop()
            heading = heading[: len(levels)] + ((len(more) > 2 and more[2]) or item_text[:200],)
            levels.append(level)
        elements.append(Element(pos, pos + len(item_text), category, page=page,
                                heading_path=() if category in _FURNITURE else heading, ocr=len(more) > 1 and more[1]))
        parts.append(item_text)
        pos += len(item_text)
    return "".join(parts), tuple(elements)


def _unstructured_items(elements, page: int | None = None, under: int = 0, outline: dict[str, int] | None = None,
                        code: re.Pattern | None = None,
                        marked_headers: bool = False) -> list[tuple[str, str, int | None, int]]:
    """unstructured's elements as items for ``_join_elements``: a title at the level its depth
    gives (an HTML h2 or a Word "Heading 2" under the h1 before it), ``under`` levels down; a
    paragraph whose style ``outline`` names (style name -> 0-based level) is a title of that level,
    one whose style ``code`` matches a CodeSnippet; tables as ``_table_rows`` reads them."""
    items = []
    for el in elements:
        if el.category in ("PageBreak", "Image"):
            continue
        category, depth = el.category, el.metadata.category_depth or 0
        if outline and category != "Table" and (level := outline.get(el.metadata.style_name or "")) is not None:
            category, depth = "Title", level
        elif code and category != "Table" and code.fullmatch(el.metadata.style_name or ""):
            category = "CodeSnippet"
        where = (page if page is not None else el.metadata.page_number, under + depth + 1)
        if category != "Table":
            items.append((category, str(el), *where))
            continue
        caption, table = _table_rows(el, marked_headers)
        items += [*([("NarrativeText", caption, *where)] if caption else []), ("Table", table, *where)]
    return items


def _table_rows(table, marked_headers: bool = False) -> tuple[str, str]:
    """An unstructured table's caption (``_caption``) and Markdown rows (``markdown_table``); its
    flat text where unstructured kept no structure. Its first row is the header unless
    ``marked_headers`` (a format whose markup marks header rows: a web page, LaTeX, Org, JATS,
    DocBook) and that row is no header row (``is_header_row``): a table of parameters or of a row
    header and its value has none, and each chunk of a long one repeated its first row."""
    from lxml import html

    rows, headers = [], []
    root = html.fromstring(table.metadata.text_as_html or "<table></table>")
    for element in root.iter("table"):
        expand_spans(element)  # a Word table's merged cells
    for tr in root.iter("tr"):
        for br in tr.iter("br"):
            br.tail = "\n" + (br.tail or "")
        rows.append([cell.text_content() for cell in tr if cell.tag in ("td", "th")])
        headers.append(is_header_row(tr))
    caption, kept = _caption(rows)
    first = next((i for i in range(len(rows) - len(kept), len(rows)) if any(c.strip() for c in rows[i])), None)
    header = not marked_headers or (first is not None and headers[first])
    return caption, markdown_table(kept, header=header) or str(table)


def _caption(rows: list[list[str]]) -> tuple[str, list[list[str]]]:
    """A table's caption and the rows after it: its first row where that holds one value alone (a
    title merged across the table, a sheet's title in A1) above a header of two values or more and a
    row below, else ("", ``rows``): read as the header, such a title named every column of every
    chunk after the first, and the real column names were lost."""
    filled = [i for i, row in enumerate(rows) if any(cell.strip() for cell in row)]
    if len(filled) < 3:
        return "", rows
    first, second = ([" ".join(cell.split()) for cell in rows[i]] for i in filled[:2])
    title = first[0]  # a merged cell's text is its first column's (a header's empty corner is no title)
    if title and all(cell in ("", title) for cell in first) and len(set(second) - {""}) >= 2:
        return title, rows[filled[0] + 1 :]
    return "", rows


# unstructured detects each document's language (langdetect, whose 55 profiles a forked child
# loaded anew per document: ~0.4 s) only for element metadata we never read; [""] turns it off.
NO_LANGUAGE = [""]


def _parse_html(data: bytes, untitled: str = "", marked_headers: bool = True):
    """An HTML page, or the page of a MIME web archive (``_archived_page``); its title is its
    <title> (entities decoded) unless that is empty or ``untitled``, else the archive's subject,
    else its first heading. A table's header is the row its markup marks (``_table_rows``), its
    first row where not ``marked_headers``."""
    from rag_assets.core.parsing.offline import prepare_unstructured

    prepare_unstructured()
    from unstructured.partition.html import partition_html

    page, subject = _archived_page(data) or (_decode_page(data), "")
    title_match = re.search(r"<title[^>]*>(.*?)</title>", page, re.I | re.S)
    title = " ".join(html.unescape(title_match.group(1)).split()) if title_match else ""
    title = title if title != untitled else ""
    text, elements = _join_elements(_unstructured_items(partition_html(text=_readable_html(page), languages=NO_LANGUAGE),
                                                        marked_headers=marked_headers))
    return text, elements, title or " ".join(subject.split()) or _first_title(text, elements)


def _readable_html(page: str) -> str:
    """A page (or an e-mail's HTML body) as unstructured should read it: no deeper than it can
    (``_shallow_html``), the site's navigation, banner and footer left out and its main content
    read alone where the page marks them, without heading permalinks (``readable_landmarks``), the
    blocks it would drop shown (``_SHOWN_AS``), a superscript or subscript set against the text
    before it opened by "^" or "_" (``_SCRIPT``), layout tables read as their blocks and merged
    cells repeated (``readable_tables``), an equation as a line of text (``_equations_as_text``)."""
    page = readable_landmarks(_shallow_html(_equations_as_text(page)))
    page = _SHOWN_BLOCKS.sub(lambda m: f"<{m.group(1)}{_SHOWN_AS[m.group(2).lower()]}", page)
    page = _SCRIPT.sub(lambda m: m.group(1) + m.group(2) + ("^" if m.group(3).lower() == "sup" else "_"), page)
    return readable_tables(page)


_EQUATION = re.compile(r"<(?:\w+:)?math\b", re.I)  # MathML


def _equations_as_text(page: str) -> str:
    """``page`` with each MathML equation (``<math>``) as a span of its text as a line
    (``mathml_text``: "E=mc^2", "(a+b)/2"), else of its ``alttext``: unstructured read none (each
    equation was lost, a sentence around one read with a gap). The equation's rendering for the
    eye that a page marks hidden from readers beside it (``aria-hidden="true"``: KaTeX's HTML) is
    left out: it read as the equation's characters run together ("E=mc2")."""
    if not _EQUATION.search(page):
        return page
    from lxml import etree
    from lxml import html as lxml_html

    root = lxml_html.document_fromstring(page.encode(), parser=lxml_html.HTMLParser(huge_tree=True, encoding="utf-8"))
    for equation in [e for e in root.iter() if isinstance(e.tag, str) and e.tag.rpartition(":")[2].lower() == "math"]:
        shown, top = equation.text_content().strip(), equation
        while (parent := top.getparent()) is not None and parent.text_content().strip() == shown:
            top = parent  # a wrapper that holds the equation alone
        if (parent := top.getparent()) is not None:
            for twin in [child for child in parent if child is not top and child.get("aria-hidden") == "true"]:
                twin.drop_tree()
        span = etree.Element("span")
        span.text = mathml_text(equation) or " ".join((equation.get("alttext") or "").split())
        span.tail = equation.tail
        equation.getparent().replace(equation, span)
    return lxml_html.tostring(root, encoding="unicode")


# A <sup> or <sub> right after text (a character, or a closing tag: "2<sup>32</sup>", "tests.<sup>1</sup>",
# "</code><sup>"), which unstructured ran into it: 2 to the 32nd read "232", a footnote mark "tests.1". One
# opening a block ("<p><sup>Syntax</sup>", the Rust reference's labels) is left as it is, and so is one of
# a sign alone ("Visibility<sup>?</sup>", a grammar's quantifier: it reads as it is).
_SCRIPT = re.compile(r"([^\s>]|</[A-Za-z][\w:-]*\s*>)(<(su[pb])\b[^<>]*>)(?=(?:<[^<>]*>)*[\w(\[\u2212-])", re.I)


# How deep a page's elements may nest for unstructured to read them as elements: lxml's HTML parser
# stops at 255 levels (the rest of the page silently lost) and unstructured walks the tree
# recursively (Python's recursion limit failed a tree of 300 levels).
MAX_HTML_DEPTH = 250
_BLOCK_TAGS = {"p", "div", "br", "li", "tr", "td", "th", "table", "ul", "ol", "dl", "dt", "dd", "section", "article",
               "blockquote", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "header", "footer", "main", "aside"}


def _shallow_html(page: str) -> str:
    """``page`` as it is, or where its elements nest deeper than MAX_HTML_DEPTH (unclosed tags, as
    in old or generated pages), with what lies deeper kept as the text of its ancestor at that
    depth (a line a block). Raises ValueError where even lxml's deep-tree parser cannot read it all."""
    if page.count("<") <= MAX_HTML_DEPTH:
        return page
    from lxml import etree
    from lxml import html as lxml_html

    parser = lxml_html.HTMLParser(huge_tree=True, encoding="utf-8")
    root = lxml_html.document_fromstring(page.encode(), parser=parser)
    if any("Excessive depth" in entry.message for entry in parser.error_log):
        raise ValueError("its elements nest too deep for the HTML parser to read it all (unclosed tags?); "
                         "close its tags or save it again from a browser or editor")
    deep, depth = [], 0
    for event, element in etree.iterwalk(root, events=("start", "end")):
        depth += 1 if event == "start" else -1
        if event == "start" and depth == MAX_HTML_DEPTH:
            deep.append(element)
    if not deep:
        return page
    for element in deep:
        for inner in element.iterdescendants():
            if inner.tag in _BLOCK_TAGS:
                inner.text, inner.tail = "\n" + (inner.text or ""), "\n" + (inner.tail or "")
        etree.strip_tags(element, "*")
    return lxml_html.tostring(root, encoding="unicode")


# Blocks a reader sees that unstructured drops as likely boilerplate: an FAQ's <details> and its
# <summary> question, a <figure> and its <figcaption>; read as the blocks they show as.
_SHOWN_AS = {"details": "div", "summary": "p", "figure": "div", "figcaption": "p"}
_SHOWN_BLOCKS = re.compile(r"<(/?)(details|summary|figure|figcaption)\b", re.I)
_META_CHARSET = re.compile(rb"""<meta[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)


def _decode_page(data: bytes) -> str:
    """An HTML page's text: by its byte order mark, else by the charset its <meta> declares (as
    browsers read it: ISO-8859-1 and ASCII as windows-1252, a UTF-16 declaration in bytes that are
    ASCII-compatible ignored), else as every text file is (UTF-8, else cp1252)."""
    if not data.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        declared = _META_CHARSET.search(data[:4096])
        label = declared.group(1).decode("ascii").lower() if declared else ""
        label = "cp1252" if label in ("iso-8859-1", "latin1", "latin-1", "us-ascii", "ascii") else label
        if label and not label.startswith("utf-16"):
            try:
                return data.decode(label)
            except (LookupError, UnicodeDecodeError):  # a charset Python lacks, or not what it says
                pass
    return decode_text(data)[0]


def _archived_page(data: bytes) -> tuple[str, str] | None:
    """The HTML page of a MIME web archive (.mht/.mhtml as browsers save a page, Word's "Single
    File Web Page", Confluence's "Export to Word" .doc), decoded by its declared charset, and the
    archive's Subject; None when ``data`` is no such archive."""
    if not _MIME_ARCHIVE.search(data[:4096]):
        return None
    import email
    from email import policy

    message = email.message_from_bytes(data, policy=policy.default)
    for part in message.walk():
        if part.get_content_type() == "text/html":
            payload = part.get_payload(decode=True) or b""
            charset = part.get_content_charset()
            try:
                page = payload.decode(charset) if charset else decode_text(payload)[0]
            except (LookupError, UnicodeDecodeError):  # a charset Python lacks, or not what it says
                page = decode_text(payload)[0]
            return page, str(message["Subject"] or "")
    return None


_MIME_ARCHIVE = re.compile(rb"(?im)^content-type:\s*multipart/related")


def _parse_pandoc(content_type: str, data: bytes):
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
    text, elements, title = _parse_html(page.encode("utf-8"), untitled="-",  # pandoc's <title> when there is none
                                        marked_headers=content_type in _MARKED_HEADERS)
    return text, elements, (_package_title(data) if content_type == "odt" else "") or title


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

    content = _zip_member(data, "content.xml")
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
            found = _embedded_content(data, embedded.get("{http://www.w3.org/1999/xlink}href", ""))
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
            _put_after(anchor, moved, last)
        else:
            for block in moved:
                frame.addprevious(block)
    return _with_member(data, "content.xml", etree.tostring(root, xml_declaration=True, encoding="UTF-8"),
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


def _parse_xml(data: bytes):
    """A JATS article (the XML PubMed Central and journals publish) or a DocBook document, told
    apart by its DOCTYPE or namespace, read through pandoc; any other XML as text."""
    head = data[:8192]
    if _JATS.search(head):
        return _parse_pandoc("jats", data)
    if _DOCBOOK.search(head):
        return _parse_pandoc("docbook", data)
    return _parse_text("text", data)


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


def _package_title(data: bytes, part: str = "meta.xml") -> str:
    """A package's own title: its properties' dc:title in ``part`` (an OpenDocument file's
    meta.xml, which pandoc does not read; an Open Packaging file's docProps/core.xml); "" when it
    has none."""
    match = re.search(r"<dc:title>([^<]*)</dc:title>", _zip_member(data, part))
    return " ".join(html.unescape(match.group(1)).split())[:200] if match else ""


def _parse_docx(data: bytes):
    """A Word document; a Word 97-2003 one (a compound file, told apart by content) converted to
    DOCX first (``_word97_as_docx``); an RTF or HTML file under a Word name (what "Save as" in older
    tools and web exports write) is read as what it is. A paragraph is a heading when its style
    has an outline level, as in Word's navigation pane: the built-in Heading styles, a template's
    own heading styles, a translated "Überschrift 1". A table of contents (its entries' styles) is
    left out. A document whose text is next to nothing
    (``SCANNED_MAX_CHARS``) is followed by what OCR reads in its pictures (``_word_pictures``:
    pages scanned into Word)."""
    if kind := _text_office_file(data):
        return _parse_pandoc("rtf", data) if kind == "rtf" else _parse_html(data, marked_headers=False)
    from rag_assets.core.parsing.offline import prepare_word

    prepare_word()
    from unstructured.partition.docx import STYLE_TO_ELEMENT_MAPPING, partition_docx

    data = _word97_as_docx(data) if data.startswith(_OLE_MAGIC) else _plain_package(data, "wordprocessingml.document")
    data, chunks = _alt_chunks(_unwrapped_body(data))
    elements = [el for el in partition_docx(file=io.BytesIO(data), languages=NO_LANGUAGE)
                if not _TOC_STYLE.match(el.metadata.style_name or "")]
    # Word's own style names unstructured reads itself; any other may be a heading style (its styles
    # part can be 350 kB: read only then)
    own = {"Normal", *STYLE_TO_ELEMENT_MAPPING}
    outline = _outline_levels(data) if any((el.metadata.style_name or "Normal") not in own for el in elements) else {}
    items = _code_blocks(_unstructured_items(elements, outline=outline, code=_CODE_STYLE))
    if chunks:  # each marker paragraph stands for a chunk's items (one inside a table: for nothing)
        items = [chunk_item for item in items for chunk_item in chunks.get(item[1].strip(), [
            (item[0], _ALT_CHUNK_MARKER.sub("", item[1]), *item[2:])])]
    if sum(len(item[1].strip()) for item in items) <= SCANNED_MAX_CHARS:  # pictures of pages ("Scan to Word")
        items += _pictures_text(_word_pictures(data), None)
    title = next((item[1].strip()[:200] for item in items if item[0] == "Title" and item[1].strip()), "")
    for heading, notes in _word_notes(data):  # after the body: never the document's title
        items += [("Title", heading, None, 1), *(("NarrativeText", note, None) for note in notes)]
    text, spans = _join_elements(items)
    return text, spans, title


_NOTES = (("word/footnotes.xml", "footnote", "Footnotes"), ("word/endnotes.xml", "endnote", "Endnotes"))
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_RELATIONSHIP = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_SHOWN = {f"{_W}tab": " ", f"{_W}br": " ", f"{_W}cr": " "}  # what a note's tabs and line breaks read as


def _word_notes(data: bytes) -> list[tuple[str, list[str]]]:
    """A Word document's footnotes and endnotes (unstructured reads neither), each kind under its
    heading, in the order the document holds them; kinds without notes are left out."""
    from lxml import etree

    found = []
    for member, tag, heading in _NOTES:
        if not (xml := _zip_member(data, member)):
            continue
        try:
            root = etree.fromstring(xml.encode(), parser=etree.XMLParser(resolve_entities=False, huge_tree=True))
        except etree.XMLSyntaxError:  # a damaged notes part: the body is still read
            continue
        notes = []
        for note in root.iter(f"{_W}{tag}"):
            if note.get(f"{_W}type") in (None, "normal"):  # not the separator lines
                paragraphs = ("".join((el.text or "") if el.tag == f"{_W}t" else _SHOWN.get(el.tag, "")
                                      for el in p.iter()) for p in note.iter(f"{_W}p"))
                if text := "\n".join(" ".join(p.split()) for p in paragraphs if p.strip()):
                    notes.append(text)
        if notes:
            found.append((heading, notes))
    return found


# A table of contents' entries and heading (Word stores built-in style names in English, whatever the
# language it shows them in): page numbers of the headings the document holds anyway, left out
_TOC_STYLE = re.compile(r"toc (?:\d|heading)", re.I)
# Code's paragraph styles: pandoc's "Source Code", Word's "HTML Preformatted" and "Macro Text", a
# template's "Code", "Code Block", "Listing" or "Preformatted Text"
_CODE_STYLE = re.compile(r"(?:source )?code(?: block)?|html preformatted|macro text|preformatted(?: text)?|"
                         r"listing|verbatim", re.I)


def _code_blocks(items: list[tuple]) -> list[tuple]:
    """``items`` with each run of CodeSnippet items on one page (a code block written a paragraph a
    line, as Word users write one) one item, a line under the other as the page shows them."""
    out: list[tuple] = []
    for item in items:
        if item[0] == "CodeSnippet" and out and out[-1][0] == "CodeSnippet" and out[-1][2:] == item[2:]:
            out[-1] = (item[0], out[-1][1].rstrip("\n") + "\n" + item[1].strip("\n"), *item[2:])
        else:
            out.append(item)
    return out


_WRAPPERS = ("ins", "moveTo", "sdt", "customXml", "smartTag", "fldSimple")  # w: elements whose text python-docx skips


def _unwrapped_body(data: bytes) -> bytes:
    """A Word package whose body's text inside tracked insertions and moves (``w:ins``,
    ``w:moveTo``: a document circulated with Track Changes on), content controls (``w:sdt``, a
    template's or form's fields and blocks), simple fields (``w:fldSimple``: a caption's "Figure
    1", a document property) and custom XML or smart tags stands where they wrap it, as Word shows
    it (python-docx, so unstructured, skips it); deletions stay out. An equation reads as a line
    of text in its place (``math_text.omml_text``). A text box's paragraphs (a sidebar, a callout, a flyer
    laid out in boxes), a chart's data and a SmartArt diagram's nodes follow the paragraph they are
    anchored in (``_drawn_after``). Each of these was lost. A hyperlink whose target is missing
    from the package keeps its text, without the link (the document failed). A package without
    any of them is returned as it is."""
    import zipfile

    from lxml import etree

    xml = _zip_member(data, "word/document.xml")
    rels = _zip_member(data, "word/_rels/document.xml.rels")
    unlinked = set(re.findall(r'<w:hyperlink\b[^>]*\br:id="([^"]*)"', xml)) - set(re.findall(r'\bId="([^"]*)"', rels))
    if not unlinked and not re.search(r"<w:(?:ins|moveTo|sdt|customXml|smartTag|fldSimple|txbxContent|object)\b|<m:oMath\b|"
                                      r'graphicData uri="http://schemas\.(?:openxmlformats\.org/drawingml/2006/'
                                      r'(?:chart|diagram)|microsoft\.com/office/drawing/2014/chartex)"', xml):
        return data
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
    root = etree.fromstring(xml.encode(), parser)
    for hyperlink in root.iter(f"{_W}hyperlink"):  # a link to no target: its text kept (python-docx failed on it)
        if hyperlink.get(f"{_RELATIONSHIP}id") in unlinked:
            del hyperlink.attrib[f"{_RELATIONSHIP}id"]
    for wrapper in list(root.iter(*(_W + tag for tag in _WRAPPERS))):
        content = wrapper.find(f"{_W}sdtContent") if wrapper.tag == f"{_W}sdt" else wrapper
        parent = wrapper.getparent()
        if parent is None:
            continue
        at = parent.index(wrapper)
        kept = [] if content is None else [child for child in content if child.tag not in (f"{_W}sdtPr", f"{_W}customXmlPr",
                                                                                            f"{_W}smartTagPr", f"{_W}sdtEndPr")]
        parent[at:at + 1] = kept
    for equations in [*root.iter(f"{OMML}oMathPara"), *root.iter(f"{OMML}oMath")]:  # displayed, then in a line
        if next(equations.iterancestors(f"{OMML}oMathPara"), None) is not None:  # read with its display
            continue
        run = etree.Element(f"{_W}r")
        etree.SubElement(run, f"{_W}t").text = (omml_text(equations) if equations.tag == f"{OMML}oMath" else
                                               " ".join(omml_text(e) for e in equations.iter(f"{OMML}oMath")))
        equations.getparent().replace(equations, run)
    source = zipfile.ZipFile(io.BytesIO(data))
    targets = _rel_targets(rels, parser)
    _drawn_after(root, lambda rid: source.read(_package_path("word", targets[rid])))
    body = etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)
    return _with_member(data, "word/document.xml", body, zipfile.ZIP_DEFLATED)


_ALT_CHUNK_MARKER = re.compile("\u2063altChunk-\\d+\u2063")
_ALT_CHUNK_READERS = {".htm": "html", ".html": "html", ".mht": "html", ".mhtml": "html", ".xhtml": "html",
                      ".rtf": "rtf", ".docx": "docx", ".txt": "text"}


def _alt_chunks(data: bytes) -> tuple[bytes, dict[str, list[tuple]]]:
    """A Word package whose imported chunks (``w:altChunk``: a web page, RTF or Word document that
    "export to Word" tools and mail merges embed whole, which python-docx skips, so a document of
    them read empty) each stand as a paragraph of a marker of its own, and each marker's items: the
    chunk read as its format is (a part of another format as text), its headings kept; a missing or
    unreadable chunk stands for nothing. A package without chunks is returned as it is, with none."""
    import zipfile

    from lxml import etree

    xml = _zip_member(data, "word/document.xml")
    if "altChunk" not in xml:
        return data, {}
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
    targets = _rel_targets(_zip_member(data, "word/_rels/document.xml.rels"), parser)
    package, root = zipfile.ZipFile(io.BytesIO(data)), etree.fromstring(xml.encode(), parser)
    chunks: dict[str, list[tuple]] = {}
    for n, chunk in enumerate(list(root.iter(f"{_W}altChunk")), start=1):
        marker = f"\u2063altChunk-{n}\u2063"  # invisible separators: no document's own text
        paragraph = etree.Element(f"{_W}p")
        etree.SubElement(etree.SubElement(paragraph, f"{_W}r"), f"{_W}t").text = marker
        chunk.getparent().replace(chunk, paragraph)
        target = targets.get(chunk.get(f"{_RELATIONSHIP}id"), "")
        kind = _ALT_CHUNK_READERS.get(posixpath.splitext(target)[1].lower(), "text")
        try:
            text, elements, _ = _parse_format(kind, package.read(_package_path("word", target)))
        except Exception:  # noqa: BLE001 - a missing or damaged chunk: the rest of the document is read
            chunks[marker] = []
            continue
        chunks[marker] = [(e.category, text[e.start : e.end], e.page, max(len(e.heading_path), 1)) for e in elements]
    body = etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)
    return _with_member(data, "word/document.xml", body, zipfile.ZIP_DEFLATED), chunks


def _rel_targets(rels: str, parser) -> dict[str, str]:
    """A relationships part's (its XML, "" for none) targets inside the package by relationship id."""
    from lxml import etree

    return {rel.get("Id"): rel.get("Target", "") for rel in etree.fromstring(rels.encode(), parser)
            if rel.get("TargetMode") != "External"} if rels else {}


def _with_member(data: bytes, name: str, body: bytes | str, compression: int) -> bytes:
    """The zip package ``data`` with its member ``name`` replaced by ``body`` (``_with_members``)."""
    return _with_members(data, {name: body}, compression)


def _with_members(data: bytes, bodies: dict[str, bytes | str], compression: int) -> bytes:
    """The zip package ``data`` with each member ``bodies`` names replaced by its body, every
    member written with ``compression`` (``zipfile.ZIP_STORED`` or ``ZIP_DEFLATED``), in the
    order they were."""
    import zipfile

    source, out = zipfile.ZipFile(io.BytesIO(data)), io.BytesIO()
    with zipfile.ZipFile(out, "w", compression) as package:
        for item in source.infolist():
            package.writestr(item.filename, bodies[item.filename] if item.filename in bodies else source.read(item))
    return out.getvalue()


def _package_path(folder: str, target: str) -> str:
    """The package member a relationship's ``target`` names, from a part in ``folder``."""
    return target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join(folder, target))


_MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
_P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
_DRAWING = "{http://schemas.openxmlformats.org/drawingml/2006/main}"


def _drawn_after(root, part) -> None:
    """Put what a Word body ``root`` draws after the paragraph each drawing is anchored in, in the
    order they are written: a text box's paragraphs and tables (``w:txbxContent``) moved there, a
    chart's title and a table of its data, a SmartArt diagram's nodes as list items, an embedded
    Excel worksheet's cells as a table (``_graphic_content``, reading the part ``part(relationship
    id)`` returns). A drawing's fallback copy for older readers (in ``mc:Fallback``) is left where
    it is, unread; a chart, diagram or worksheet whose part is missing or damaged is left out."""
    fallback = f"{_MC}Fallback"
    last: dict = {}  # an anchoring paragraph -> the last block put after it
    for drawn in list(root.iter(f"{_W}txbxContent", f"{_DRAWING}graphic", f"{_W}object")):
        anchor = next(drawn.iterancestors(f"{_W}p"), None)
        if anchor is None or next(drawn.iterancestors(fallback), None) is not None:
            continue
        if drawn.tag == f"{_W}txbxContent":
            blocks = [child for child in drawn if child.tag in (f"{_W}p", f"{_W}tbl")]
        else:
            try:
                title, rows, nodes, shown = _graphic_content(drawn, part) or ("", [], [], [])
            except Exception:  # noqa: BLE001 - a missing or damaged part: zipfile and lxml raise many types
                continue
            blocks = ([_word_paragraph(title)] if title else []) + ([_word_table(rows)] if rows else []) \
                + [_word_paragraph(text, listed=True) for text in nodes] \
                + [_word_table(_markdown_rows(text)) if kind == "Table" else _word_paragraph(text, kind == "ListItem")
                   for kind, text in shown]
        _put_after(anchor, blocks, last)


def _put_after(anchor, blocks: list, last: dict) -> None:
    """Put ``blocks`` (lxml elements) after the element ``anchor``, after those put there before
    (``last``: an anchor -> the last block put after it, updated), so boxes read in their order."""
    for block in blocks:
        last.get(anchor, anchor).addnext(block)
        last[anchor] = block


def _word_paragraph(text: str, listed: bool = False):
    """A Word paragraph (``w:p``) of ``text``; a list item (numbered by no list) where ``listed``."""
    from lxml import etree

    paragraph = etree.Element(f"{_W}p")
    if listed:
        numbering = etree.SubElement(etree.SubElement(paragraph, f"{_W}pPr"), f"{_W}numPr")
        etree.SubElement(numbering, f"{_W}ilvl", {f"{_W}val": "0"})
        etree.SubElement(numbering, f"{_W}numId", {f"{_W}val": "0"})
    etree.SubElement(etree.SubElement(paragraph, f"{_W}r"), f"{_W}t").text = text
    return paragraph


def _word_table(rows: list[list[str]]):
    """A Word table (``w:tbl``) of ``rows``, all as wide as the first."""
    from lxml import etree

    table = etree.Element(f"{_W}tbl")
    etree.SubElement(table, f"{_W}tblPr")
    grid = etree.SubElement(table, f"{_W}tblGrid")
    for _ in rows[0]:
        etree.SubElement(grid, f"{_W}gridCol")
    for row in rows:
        line = etree.SubElement(table, f"{_W}tr")
        for cell in row:
            paragraph = etree.SubElement(etree.SubElement(line, f"{_W}tc"), f"{_W}p")
            if cell:
                etree.SubElement(etree.SubElement(paragraph, f"{_W}r"), f"{_W}t").text = cell
    return table


def _word_pictures(data: bytes) -> list[bytes]:
    """The pictures of a Word document's body, inline or floating, in the order it shows them."""
    from docx import Document

    document = Document(io.BytesIO(data))
    rels = document.part.rels
    ids = re.findall(r'<a:blip\b[^>]*\br:embed="([^"]+)"', document.element.xml)
    return [rels[rid].target_part.blob for rid in dict.fromkeys(ids) if rid in rels and not rels[rid].is_external]


def _word97_as_docx(data: bytes) -> bytes:
    """A Word 97-2003 document as DOCX, converted by msdoc2docx (``_converted``)."""
    from doc2docx import convert
    from doc2docx.errors import Doc2DocxError, EncryptedDocumentError

    return _converted(data, convert, "doc", "docx", "Word", Doc2DocxError, EncryptedDocumentError)


def _ppt97_as_pptx(data: bytes) -> bytes:
    """A PowerPoint 97-2003 presentation as PPTX, converted by ppt2pptx (``_converted``)."""
    from ppt2pptx import convert
    from ppt2pptx.errors import EncryptedPresentationError, Ppt2PptxError

    return _converted(data, convert, "ppt", "pptx", "PowerPoint", Ppt2PptxError, EncryptedPresentationError)


def _converted(data: bytes, convert, legacy: str, modern: str, program: str, failed: type, encrypted: type) -> bytes:
    """An Office 97-2003 file converted by ``convert`` (a pure-Python converter: no Office, no
    LibreOffice) to its modern format, in a temporary folder; an encrypted file is refused, and so
    is a compound file the converter cannot read (the cause named)."""
    import tempfile
    from pathlib import Path

    if _encrypted(data):  # an encrypted modern Office file is a compound file too
        raise ValueError(_ENCRYPTED)
    with tempfile.TemporaryDirectory(prefix="rag-office97-") as folder:
        source, target = Path(folder, f"file.{legacy}"), Path(folder, f"file.{modern}")
        source.write_bytes(data)
        try:
            convert(source, target)
        except encrypted:
            raise ValueError(_ENCRYPTED) from None
        except failed as exc:
            raise ValueError(f"not a {program} 97-2003 file that can be read ({type(exc).__name__}: {exc}); "
                             f"open it in {program} and save it as .{modern}") from exc
        return target.read_bytes()


def _plain_package(data: bytes, kind: str) -> bytes:
    """An Office package whose main part is a macro-enabled document, a template or a slide show,
    declared as the plain ``kind`` ("wordprocessingml.document", "presentationml.presentation"),
    which python-docx and python-pptx insist on: the parts are the same, and nothing runs macros.
    Any other package is returned as it is."""
    import zipfile

    types = _zip_member(data, "[Content_Types].xml")
    plain = f"application/vnd.openxmlformats-officedocument.{kind}.main+xml"
    declared = _VARIANT_MAIN.sub(plain, types)
    if declared == types:
        return data
    return _with_member(data, "[Content_Types].xml", declared, zipfile.ZIP_STORED)


# the main part types of Word's and PowerPoint's macro-enabled, template and slide show packages
_VARIANT_MAIN = re.compile(r"application/vnd\.(?:ms-word\.(?:document|template)\.macroEnabled"
                           r"|openxmlformats-officedocument\.wordprocessingml\.template"
                           r"|ms-powerpoint\.(?:presentation|slideshow|template)\.macroEnabled"
                           r"|openxmlformats-officedocument\.presentationml\.(?:slideshow|template))\.main\+xml")


def _outline_levels(data: bytes) -> dict[str, int]:
    """A Word document's paragraph styles that have an outline level (0-8), by the name unstructured
    reports (python-docx's: "Heading 1" for "heading 1"), the level inherited through ``basedOn``
    unless a style sets its own (9 is body text); the default paragraph style is never a heading."""
    from docx.styles import BabelFish
    from lxml import etree

    xml = _zip_member(data, "word/styles.xml")
    if not xml:
        return {}
    w = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
    root = etree.fromstring(xml.encode(), etree.XMLParser(resolve_entities=False, no_network=True))
    styles = {}  # style id -> (name, own level or None, based on, default)
    for style in root.iter(f"{w}style"):
        if style.get(f"{w}type") != "paragraph":
            continue
        name, level, based = style.find(f"{w}name"), style.find(f"{w}pPr/{w}outlineLvl"), style.find(f"{w}basedOn")
        styles[style.get(f"{w}styleId")] = (
            BabelFish.internal2ui(name.get(f"{w}val", "")) if name is not None else "",
            _int_or_none(level.get(f"{w}val")) if level is not None else None,
            based.get(f"{w}val") if based is not None else None,
            style.get(f"{w}default") in ("1", "true", "on"))
    levels = {}
    for style_id, (name, _, _, default) in styles.items():
        seen, current, level = set(), style_id, None
        while current in styles and current not in seen and level is None:  # a cycle ends the walk
            seen.add(current)
            _, level, current, _ = styles[current]
        if name and not default and level is not None and 0 <= level <= 8:
            levels[name] = level
    return levels


def _int_or_none(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _parse_pptx(data: bytes):
    """Each slide's title, text and tables (unstructured), its charts' data and SmartArt's text
    (``_slide_graphics``), what OCR reads in its pictures where they are most of the slide and its
    own text is next to nothing (``_slide_pictures``), then its speaker notes (python-pptx:
    unstructured would put them before the slide's title); a slide's number is its page. A
    PowerPoint 97-2003 presentation (a compound file, told apart by content) is converted to PPTX
    first (``_ppt97_as_pptx``)."""
    from pptx import Presentation

    from rag_assets.core.parsing.offline import prepare_unstructured

    prepare_unstructured()
    from unstructured.partition.pptx import partition_pptx

    data = _ppt97_as_pptx(data) if data.startswith(_OLE_MAGIC) else _plain_package(data, "presentationml.presentation")
    data = _slides_unwrapped(data)
    by_slide: dict[int, list[tuple[str, str, int | None]]] = {}
    for item in _unstructured_items(partition_pptx(file=io.BytesIO(data), languages=NO_LANGUAGE)):
        by_slide.setdefault(item[2], []).append(item)
    items = []
    shown: set[str] = set()
    deck = Presentation(io.BytesIO(data))
    for number, slide in enumerate(deck.slides, start=1):
        slide_items = _slide_furniture(_one_slide_title(by_slide.get(number, []), slide.shapes.title), slide, shown)
        slide_items += _slide_graphics(slide, number) + _slide_connections(slide, number)
        if not any(item[0] == "Title" for item in slide_items):
            items.append((_UNTITLED, "", number))
        items += slide_items
        if sum(len(item[1].strip()) for item in slide_items) <= SCANNED_MAX_CHARS:
            items += _pictures_text(_slide_pictures(slide, deck.slide_width * deck.slide_height), number)
        notes = slide.notes_slide.notes_text_frame if slide.has_notes_slide else None
        if notes is not None and notes.text.strip():
            items.append(("NarrativeText", notes.text.replace("\v", "\n"), number))
    text, spans = _join_elements(items)
    return text, spans, _first_title(text, spans)


_SHAPE_TAGS = {f"{_P}{tag}" for tag in ("sp", "grpSp", "graphicFrame", "cxnSp", "pic")}
_SLIDE_PART = re.compile(r"ppt/slides/slide\d+\.xml")


def _slides_unwrapped(data: bytes) -> bytes:
    """A deck whose slides hold each shape PowerPoint wraps in markup compatibility
    (``mc:AlternateContent``: a text box holding an equation, with a picture of it for older
    readers) as the shape itself, its equations (``a14:m``) as runs of their text
    (``omml_text``): python-pptx and unstructured skip the wrapper, so the shape's text was lost.
    A wrapper's choice is read where it holds shapes, else its fallback. A deck without one is
    returned as it is."""
    import zipfile

    from lxml import etree

    package = zipfile.ZipFile(io.BytesIO(data))
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
    bodies = {}
    for name in package.namelist():
        if not _SLIDE_PART.fullmatch(name) or b"AlternateContent" not in (xml := package.read(name)):
            continue
        root = etree.fromstring(xml, parser)
        for wrapper in list(root.iter(f"{_MC}AlternateContent")):
            parent = wrapper.getparent()
            if parent is None or parent.tag not in (f"{_P}spTree", f"{_P}grpSp"):
                continue
            choice = next((c for c in wrapper.iterchildren(f"{_MC}Choice") if any(s.tag in _SHAPE_TAGS for s in c)),
                          wrapper.find(f"{_MC}Fallback"))
            shapes = [s for s in choice if s.tag in _SHAPE_TAGS] if choice is not None else []
            at = parent.index(wrapper)
            parent[at:at + 1] = shapes
        for equation in list(root.iter("{http://schemas.microsoft.com/office/drawing/2010/main}m")):
            run = etree.Element(f"{_DRAWING}r")
            etree.SubElement(run, f"{_DRAWING}t").text = " ".join(omml_text(e) for e in equation.iter(f"{OMML}oMath"))
            equation.getparent().replace(equation, run)
        bodies[name] = etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)
    return _with_members(data, bodies, zipfile.ZIP_DEFLATED) if bodies else data


def _one_slide_title(items: list[tuple], title_shape) -> list[tuple]:
    """A slide's items with one heading: its title placeholder's text, or its first line where it
    has several (an empty placeholder: none; no placeholder: the first title unstructured found);
    unstructured's other titles, short bullets, a subtitle or a grouped shape's label, read as text
    under it (they nested every later bullet and the notes)."""
    lines = None
    if title_shape is not None and title_shape.has_text_frame:
        frame = title_shape.text_frame
        lines = {" ".join(frame.text.split())} | {" ".join(p.text.split()) for p in frame.paragraphs}
        lines.discard("")
    kept, out = False, []
    for category, text, *rest in items:
        if category == "Title":
            if not kept and (lines is None or " ".join(text.split()) in lines):
                kept = True
            else:
                category = "NarrativeText"
        out.append((category, text, *rest))
    return out


_CHART = "{http://schemas.openxmlformats.org/drawingml/2006/chart}chart"
_CHARTEX = "{http://schemas.microsoft.com/office/drawing/2014/chartex}chart"  # Office 2016's kinds: a waterfall...
_DIAGRAM_DATA = "{http://schemas.openxmlformats.org/drawingml/2006/diagram}relIds"
_OLE_WORD = "{urn:schemas-microsoft-com:office:office}OLEObject"  # an embedded object in a Word document
_OLE_SLIDE = "{http://schemas.openxmlformats.org/presentationml/2006/main}oleObj"  # ... on a slide


def _graphic_content(graphic, part) -> tuple[str, list[list[str]], list[str], list[tuple[str, str]]] | None:
    """What a DrawingML graphic or embedded object (an lxml element holding a ``c:chart``,
    ``cx:chart``, ``dgm:relIds``, ``o:OLEObject`` or ``p:oleObj`` reference) shows, read from the
    part ``part(relationship id)`` returns (its bytes): a chart's title and rows (``chart_rows``,
    an Office 2016 chart's ``chartex_rows``), an embedded Excel worksheet's rows or Visio drawing's
    shapes and connections (``_embedded_object``; another object: None), or a SmartArt diagram's
    nodes (``diagram_lines``); None for another graphic (a picture, a shape)."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    if (chart := graphic.find(f".//{_CHART}")) is not None:
        title, rows = chart_rows(etree.fromstring(part(chart.get(f"{_RELATIONSHIP}id")), parser))
        return title, rows, [], []
    if (chart := graphic.find(f".//{_CHARTEX}")) is not None:
        title, rows = chartex_rows(etree.fromstring(part(chart.get(f"{_RELATIONSHIP}id")), parser))
        return title, rows, [], []
    if (embedded := graphic.find(f".//{_OLE_WORD}")) is not None or (embedded := graphic.find(f".//{_OLE_SLIDE}")) is not None:
        blob = part(embedded.get(f"{_RELATIONSHIP}id"))
        rows, nodes = _embedded_object(blob)
        if rows or nodes:
            return "", rows, nodes, []
        packaged = _packaged_file(blob)
        return (f"Attachment: {packaged[0]}", [], [], packaged[1]) if packaged and packaged[1] else None
    if (diagram := graphic.find(f".//{_DIAGRAM_DATA}")) is not None:
        return "", [], diagram_lines(etree.fromstring(part(diagram.get(f"{_RELATIONSHIP}dm")), parser)), []
    return None


def _packaged_file(data: bytes) -> tuple[str, list[tuple[str, str]]] | None:
    """The name of the file an embedded object packages and what it shows, as (category, text) of
    its elements (a heading as a paragraph of its text: it heads nothing in the document around
    it), read as an e-mail's attachment is (``_attachment_items``) within the default parse limits:
    a file Windows' Object Packager wrapped (``\x01Ole10Native``: "Insert > Object > Create from file", shown as an
    icon), an Acrobat document's PDF (``CONTENTS``), a Word document or deck embedded whole; None
    for another object, and for a file of another kind (a picture) or one that cannot be read."""
    import olefile

    if kind := _office_package(data):  # a Word document or deck embedded whole (Word.Document.12, PowerPoint.Show.12)
        name, payload = f"document.{kind}", data
    elif not data.startswith(_OLE_MAGIC):
        return None
    else:
        with olefile.OleFileIO(io.BytesIO(data)) as package:
            if package.exists("\x01Ole10Native"):
                name, payload = _ole10_native(package.openstream("\x01Ole10Native").read())
            elif package.exists("CONTENTS") and (payload := package.openstream("CONTENTS").read()).startswith(b"%PDF"):
                name = "document.pdf"
            else:
                return None
    if not payload or content_type_for(name) == "image":  # a picture: not read by OCR here
        return None
    try:
        items = _attachment_items(name, payload, ParseLimits(), 0)
    except Exception:  # noqa: BLE001 - a damaged, oversized or unread file: the document around it is read
        return None
    return name, [("NarrativeText", item[5]) if item[0] == "Title" and item[5] else item[:2]
                  for item in items]  # its headings head nothing here


def _ole10_native(record: bytes) -> tuple[str, bytes]:
    """The file name and bytes an Object Packager record (``\x01Ole10Native``) holds: after its
    size and flags, a label, the source path, two reserved words, a temporary path and the data,
    each length-prefixed or NUL-ended (MS-OLEDS); ("", b"") where it is no such record."""
    size = int.from_bytes(record[:4], "little")
    body = record[4 : 4 + size]
    if body[:2] != b"\x02\x00" or body.count(b"\0", 2) < 2:
        return "", b""
    label, rest = body[2:].split(b"\0", 1)
    source, rest = rest.split(b"\0", 1)
    rest = rest[4:]  # two reserved words
    temporary = int.from_bytes(rest[:4], "little")
    rest = rest[4 + temporary :]
    length = int.from_bytes(rest[:4], "little")
    named = source.decode("cp1252", "replace").replace("\\", "/").rsplit("/", 1)[-1]
    name = named if "." in named else label.decode("cp1252", "replace")
    return name, rest[4 : 4 + length]


def _markdown_rows(table: str) -> list[list[str]]:
    """The rows of a Markdown table as ``markdown_table`` writes one (its delimiter row left out)."""
    return [[cell.strip() for cell in line.strip()[1:-1].split(" | ")] for line in table.splitlines()
            if line.strip() and not re.fullmatch(r"\|(?: --- \|)+", line.strip())]


def _slide_graphics(slide, page: int) -> list[tuple]:
    """A slide's charts (a chart's title, then its data as a table) and SmartArt diagrams (a list
    item a node), in the slide's shape order, groups included (``_graphic_content``); unstructured
    reads neither. One whose part is missing or damaged is left out."""
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    items: list[tuple] = []
    shapes = list(slide.shapes)
    while shapes:
        shape = shapes.pop(0)
        if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
            shapes[:0] = list(shape.shapes)
            continue
        try:
            content = _graphic_content(shape.element, lambda rid: slide.part.related_part(rid).blob)
        except Exception:  # noqa: BLE001 - a missing or damaged part: python-pptx and lxml raise many types
            continue
        if content:
            title, rows, nodes, shown = content
            items += [("NarrativeText", title, page)] if title else []
            items += [("Table", markdown_table(rows), page)] if rows else []
            items += [("ListItem", text, page) for text in nodes]
            items += [(kind, text, page) for kind, text in shown]
    return items


def _slide_connections(slide, page: int) -> list[tuple]:
    """A slide's connectors (a flowchart's arrows) joining two shapes with text, each a list item
    "From → To" (``office_graphics.connections``); unstructured reads shapes' text but not what
    joins them."""
    return [("ListItem", text, page) for text in connections(slide.element, _P)]


def _slide_furniture(items: list[tuple], slide, shown: set[str]) -> list[tuple]:
    """A slide's items without its slide number (the slide is the page) and without the text of a
    footer or date placeholder that an earlier slide showed (``shown``, updated): a deck's footer,
    on every slide, is read once, under no heading, as a Word section's footer is."""
    from pptx.enum.shapes import PP_PLACEHOLDER

    kinds = {" ".join(shape.text_frame.text.split()): shape.placeholder_format.type for shape in slide.placeholders
             if shape.placeholder_format.type in (PP_PLACEHOLDER.FOOTER, PP_PLACEHOLDER.DATE, PP_PLACEHOLDER.SLIDE_NUMBER)
             and shape.has_text_frame}
    out = []
    for category, text, *rest in items:
        key = " ".join(text.split())
        kind = kinds.get(key)
        if kind is None:
            out.append((category, text, *rest))
        elif kind != PP_PLACEHOLDER.SLIDE_NUMBER and key not in shown:
            shown.add(key)
            out.append(("Footer", text, *rest))
    return out


def _slide_pictures(slide, area: int) -> list[bytes]:
    """A slide's pictures where together they cover half its ``area`` (a slide that is a picture
    of a page or of a slide), else none."""
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    pictures = [shape for shape in slide.shapes
                if shape.shape_type == MSO_SHAPE_TYPE.PICTURE or (shape.is_placeholder and hasattr(shape, "image"))]
    if sum((shape.width or 0) * (shape.height or 0) for shape in pictures) < 0.5 * area:
        return []
    return [shape.image.blob for shape in pictures]


def _parse_email(data: bytes, limits: ParseLimits | None = None):
    """An e-mail message, Internet (.eml) or Outlook (.msg, told apart by content, so a misnamed
    one reads too): its subject (the title), a line each of From, To, Cc and Date, its body as
    unstructured reads it (the HTML body where there is one; a message it quotes or forwards under
    the line introducing it, ``_quoted_message_title``), then, given ``limits``, each
    attachment under a heading "Attachment: <name>", parsed as its name's format (an attached
    message without its own attachments). An "Attachments" line names them, with the cause for
    each one not read (an image without text, audio, an unreadable file). Of the images the HTML
    body shows, what OCR reads in those of a screenshot's size (``MIN_SCREENSHOT_PIXELS``) follows
    the body."""
    from rag_assets.core.parsing.offline import prepare_unstructured

    prepare_unstructured()
    subject, fields, body, attachments, shown, plain = \
        (_outlook_parts if data.startswith(_OLE_MAGIC) else _internet_parts)(data)
    subject = " ".join(subject.split())
    fields = [(name, " ".join(value.split())) for name, value in fields if value.strip()]
    if not fields and not subject:
        raise ValueError("no e-mail headers (From, To, Date, Subject): not an e-mail message; check its extension")
    level = 2 if subject else 1  # the body's headings and each attachment's: under the subject
    read: list[tuple] = []
    names = []
    for name, payload in attachments if limits is not None else ():
        try:
            parsed = _attachment_items(name, payload, limits, level)
        except _Unread as exc:
            names.append(f"{name} (not read: {exc})")
            continue
        except Exception:  # the parser's own failure; its message may vary by run (object addresses)
            names.append(f"{name} (not read: cannot be parsed as {content_type_for(name)})")
            continue
        names.append(name)
        read += [("Title", f"Attachment: {name}", None, level), *parsed]
    if names:
        fields.append(("Attachments", "; ".join(names)))
    items = [("Title", subject, None)] if subject else []
    items.append(("UncategorizedText", "\n".join(f"{name}: {value}" for name, value in fields), None))
    pictured = _pictures_text([image for image in shown if _screenshot_sized(image)], None) if limits is not None else []
    body_items = _unstructured_items(body, under=level - 1)
    if plain is not None:  # a plain-text body has no headings: unstructured's short-line guesses ("Cheers,", "Bob") are text
        body_items = [("NarrativeText", *rest) if category == "Title" else (category, *rest)
                      for category, *rest in body_items]
    if plain is None or _top_posted(plain):
        body_items = [_quoted_message_title(item, level) for item in body_items]
    text, spans = _join_elements(items + body_items + pictured + read)
    return text, spans, subject


#: the lines a mail client writes above a message it quotes or forwards: Gmail's, Apple Mail's and
#: Thunderbird's "On <date>, <sender> wrote:" (and as German, French, Spanish, Dutch, Italian and
#: Portuguese clients write it), Outlook's "-----Original Message-----" or its From/Sent/To/Subject
#: block, Gmail's "---------- Forwarded message ---------"
_QUOTE_HEADER = re.compile(
    r"(?:On|Am|Le|El|Op|Il|Em)\s.{4,250}?\s(?:wrote|schrieb|a écrit|escribió|schreef|ha scritto|escreveu)\s?:"
    r"|-{2,}\s*(?:Original Message|Forwarded message|Ursprüngliche Nachricht|Message d'origine|Mensaje original)"
    r"\s*-{2,}.{0,600}"
    r"|(?:From|Von|De)\s?:.{1,300}?\s(?:Sent|Date|Gesendet|Datum|Envoyé)\s?:.{1,300}?\s(?:Subject|Betreff|Objet)\s?:.{0,300}",
    re.S | re.I)


def _quoted_message_title(item: tuple, level: int) -> tuple:
    """A body's item as a heading of ``level`` where it is the line above a quoted or forwarded
    message (``_QUOTE_HEADER``; Outlook's block named by its sender and date): the message it
    quotes is under it, not under the reply's own text (a reply's "Approved" and the request it
    answers read as one author's); else the item."""
    category, text, page, *_ = item
    if category == "Table" or not _QUOTE_HEADER.fullmatch(text.strip()):
        return item
    return ("Title", text, page, level, False, " ".join(_RECIPIENTS.split(text, 1)[0].split())[:200])


#: where the recipients and the subject start in Outlook's block above a quoted message: its
#: heading names the sender and the date only (every chunk under it embeds the heading)
_RECIPIENTS = re.compile(r"\s(?:To|An|À|Cc|Subject|Betreff|Objet)\s?:", re.I)


def _top_posted(text: str) -> bool:
    """Whether a plain-text body's quoted lines ("> "), once they start, run to its end: a reply
    written above the message it quotes. Where the reply's lines come between them (answers
    written under each quoted question), no quoted message is a section of its own."""
    quoted = False
    for line in text.splitlines():
        if _QUOTING.match(line):
            quoted = True
        elif quoted and line.strip():
            return False
    return True


#: the least width and height, in pixels, of a picture in an e-mail's body that OCR reads (a
#: screenshot; not an icon, a logo in a signature or a tracking pixel)
MIN_SCREENSHOT_PIXELS = (300, 100)


def _screenshot_sized(image: bytes) -> bool:
    """Whether an image (an e-mail body's picture) is at least ``MIN_SCREENSHOT_PIXELS``; False
    where Pillow cannot tell."""
    from PIL import Image

    try:
        width, height = Image.open(io.BytesIO(image)).size
    except Exception:  # noqa: BLE001 - Pillow raises many types for what is no image it reads
        return False
    return width >= MIN_SCREENSHOT_PIXELS[0] and height >= MIN_SCREENSHOT_PIXELS[1]


class _Unread(Exception):
    """Why an attachment is not read, as the "Attachments" line says it."""


def _attachment_items(name: str, data: bytes, limits: ParseLimits, level: int) -> list[tuple]:
    """An attachment's elements as items, its headings under the attachment's ``level``."""
    content_type = content_type_for(name)
    media = (mimetypes.guess_type(name)[0] or "").split("/")[0]
    if media in ("audio", "video") or (media == "image" and content_type != "image"):
        raise _Unread(f"{'an' if media[0] in 'aeiou' else 'a'} {media} file")
    if content_type in _ARCHIVES:
        try:
            limits.check_archive(data)
        except ParseLimitExceeded:
            raise _Unread("expands over the source's max_expanded_mb") from None
    text, elements, _ = _parse_format(content_type, data)  # an attached message: without its attachments
    if not text.strip():
        raise _Unread("OCR found no text" if content_type == "image" else "no text")
    return [(e.category, text[e.start : e.end], e.page, level + max(len(e.heading_path), 1), e.ocr,
             e.heading_path[-1] if e.category == "Title" and e.heading_path else None) for e in elements]


# a compound file: Outlook's .msg, an Office 97-2003 document, an encrypted Office document
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def _internet_parts(data: bytes):
    import email
    from email import policy

    from unstructured.partition.html import partition_html
    from unstructured.partition.text import partition_text

    message = email.message_from_bytes(data, policy=policy.default)
    fields = [(name, str(message[name] or "")) for name in ("From", "To", "Cc", "Date")]
    shown_body = message.get_body(preferencelist=("html", "plain"))  # the body a mail client shows
    plain = "" if shown_body is None else None if shown_body.get_content_type() == "text/html" else _part_text(shown_body)
    if shown_body is None:
        body = []
    elif plain is None:
        body = partition_html(text=_readable_html(_part_text(shown_body)), languages=NO_LANGUAGE)
    else:
        body = partition_text(text=plain, languages=NO_LANGUAGE, paragraph_grouper=_plain_body_paragraphs)
    attachments, shown = [], []
    if shown_body is None and not message.is_multipart() and (payload := message.get_payload(decode=True)):
        # a message that is one attachment (a scanner's CSV, a meeting invite): read as one
        extension = mimetypes.guess_extension(message.get_content_type()) or ""
        attachments.append((_attachment_name(message.get_filename() or f"attachment 1{extension}"), payload))
    for number, part in enumerate(message.iter_attachments(), start=1):
        if part["Content-ID"] and part.get_content_maintype() == "image":
            shown.append(part.get_payload(decode=True) or b"")  # in the HTML body (a logo, a screenshot)
            continue
        if part.get_content_type() == "message/rfc822":
            inner = part.get_payload()[0]  # the attached message: named by its subject
            name = part.get_filename() or f"{str(inner['Subject'] or '').strip() or f'message {number}'}.eml"
            payload = inner.as_bytes()
        else:
            extension = mimetypes.guess_extension(part.get_content_type()) or ""
            name, payload = part.get_filename() or f"attachment {number}{extension}", part.get_payload(decode=True)
        attachments.append((_attachment_name(name), payload or b""))
    return str(message["Subject"] or ""), fields, body, attachments, shown, plain


#: charsets mail clients read as windows-1252, its superset (quotes, dashes and € that Outlook writes)
_READ_AS_CP1252 = {"iso-8859-1", "iso8859-1", "latin-1", "latin1", "l1", "cp819"}


def _part_text(part) -> str:
    """A MIME text part's text: by its declared charset (ISO-8859-1 read as windows-1252, as mail
    clients do); without one, or with one Python does not know, as every text file is (UTF-8,
    else cp1252)."""
    payload = part.get_payload(decode=True) or b""
    charset = (part.get_content_charset() or "").lower()
    if charset and charset not in ("us-ascii", "ascii"):
        try:
            return payload.decode("cp1252" if charset in _READ_AS_CP1252 else charset, errors="replace")
        except LookupError:
            pass
    try:
        return decode_text(payload)[0]
    except ValueError:  # control bytes: shown as they decode
        return payload.decode("utf-8", errors="replace")


def _outlook_parts(data: bytes):
    """An Outlook message read with python-oxmsg; its body partitioned as unstructured's
    partition_msg does (without loading the file twice), a plain-text one's paragraphs as
    ``_plain_body_paragraphs`` reads them."""
    from email.utils import format_datetime, getaddresses

    from oxmsg import Message
    from oxmsg.domain.constants import PID_ATTACH_CONTENT_ID, PID_RECIPIENT_TYPE
    from unstructured.partition.html import partition_html
    from unstructured.partition.text import partition_text

    try:
        message = Message.load(data)
        recipients = [(r.properties.int_prop_value(PID_RECIPIENT_TYPE), _address(r.name, r.email_address))
                      for r in message.recipients]
        subject, sender, sent, html_body, body = (message.subject, message.sender, message.sent_date,
                                                  message.html_body, message.body)
        inline = [bool(a.properties.str_prop_value(PID_ATTACH_CONTENT_ID)) and (a.mime_type or "").startswith("image/")
                  for a in message.attachments]  # shown in the HTML body
        attachments = [(_attachment_name(a.file_name or f"attachment {number}"), a.file_bytes or b"")
                       for number, (a, shown) in enumerate(zip(message.attachments, inline), start=1) if not shown]
        shown = [a.file_bytes or b"" for a, shown in zip(message.attachments, inline) if shown]
    except Exception as exc:  # olefile and oxmsg raise many types for a damaged file
        # The cause's type only: its text is a reader's internals (Python's own advice among them).
        raise ValueError(f"a damaged Outlook message ({type(exc).__name__} reading it); save it again from "
                         "Outlook") from exc
    fields = [("From", ", ".join(_address(name, address) for name, address in getaddresses([sender or ""]))),
              ("To", ", ".join(a for kind, a in recipients if kind == 1)),
              ("Cc", ", ".join(a for kind, a in recipients if kind == 2)),
              ("Date", format_datetime(sent) if sent else "")]
    if html_body:
        elements = partition_html(text=_readable_html(html_body), languages=NO_LANGUAGE)
    else:
        elements = partition_text(text=body, languages=NO_LANGUAGE, paragraph_grouper=_plain_body_paragraphs) if body else []
    return subject, fields, elements, attachments, shown, None if html_body else body or ""


#: a line's reply quoting: one or more ">" (each perhaps followed by a space) at its start
_QUOTING = re.compile(r"[ \t]*(?:>[ \t]?)+")


def _plain_body_paragraphs(text: str) -> str:
    """A plain-text e-mail body's paragraphs, separated by blank lines as unstructured's
    partition_text takes them: reply quoting ("> ") taken off each line, a change of quoting
    depth starting a paragraph, then each blank-line block one paragraph, its lines joined (a
    block of short lines, such as a signature, kept apart). Left to choose by the share of blank
    lines, unstructured made every line of a body of long hard-wrapped paragraphs a paragraph
    of its own, cutting sentences at line ends."""
    from unstructured.cleaners.core import blank_line_grouper

    lines: list[str] = []
    depth_above = 0
    for line in text.splitlines():
        quoting = _QUOTING.match(line)
        depth = quoting.group().count(">") if quoting else 0
        if depth != depth_above and lines and lines[-1].strip():
            lines.append("")
        lines.append(line[quoting.end():] if quoting else line)
        depth_above = depth
    return blank_line_grouper("\n".join(lines))


def _attachment_name(name: str) -> str:
    """An attachment's file name without folders, its whitespace collapsed."""
    return " ".join(name.replace("\\", "/").rsplit("/", 1)[-1].split()) or "attachment"


def _address(name: str, address: str) -> str:
    """``Name <address>`` as a reader writes it (no RFC 2047 encoding), or whichever is known."""
    name, address = name.strip().strip('"'), address.strip()
    return f"{name} <{address}>" if name and address and name != address else name or address


def _text_office_file(data: bytes) -> str | None:
    """The text format ("rtf", or "html": a page or a web archive) an Office-named file really is;
    None for any other."""
    head = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if head.startswith(b"{\\rtf"):
        return "rtf"
    if head.startswith(b"<") and (b"<html" in head or b"<table" in head) or _MIME_ARCHIVE.search(head):
        return "html"  # a page, an exported table, or a web archive (Confluence's Word export)
    return None


def _parse_xlsx(data: bytes):
    """An Excel workbook: each visible sheet's name (a title) and its cells as Markdown rows (values
    as last saved, shown in their number formats; a date at midnight as its date, trailing empty
    cells dropped), then its text boxes' and shapes' texts (``_sheet_drawings``: openpyxl reads
    none); a sheet's number is its page. Hidden sheets are left out: a workbook's author
    keeps them from its readers. Its title is the workbook's own, if it has one. An Excel 97-2003
    workbook (.xls, a compound file, told apart by content) is read the same way with xlrd, an HTML
    table under an Excel name as a web page."""
    from openpyxl import load_workbook

    if data.startswith(_OLE_MAGIC):
        return _parse_xls(data)
    if _text_office_file(data) == "html":  # a web application's "Excel export": an HTML table, headed by its first row
        return _parse_html(data, marked_headers=False)
    book = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    drawings = _sheet_drawings(data)
    items: list[tuple[str, str, int | None]] = []
    try:
        for number, sheet in enumerate(book.worksheets, start=1):
            if sheet.sheet_state != "visible":  # hidden (or very hidden) from whoever opens the workbook
                continue
            sheet_items = _sheet_items(sheet.title, _sheet_rows(sheet), number)
            if boxes := drawings.get(sheet.title):  # after its cells, under its name
                sheet_items = (sheet_items or [("Title", sheet.title, number)]) + [
                    (kind, text, number) for kind, text in boxes]
            items += sheet_items
        title = (book.properties.title or "").strip()
    finally:
        book.close()
    text, spans = _join_elements(items)
    return text, spans, title


def _sheet_rows(sheet) -> list[list[str]]:
    """An openpyxl sheet's rows of cell texts as last saved, in their number formats
    (``_cell_text``), trailing empty cells dropped."""
    rows = []
    for row in sheet.iter_rows():
        cells = [_cell_text(cell.value, getattr(cell, "number_format", None)) for cell in row]
        while cells and not cells[-1].strip():
            cells.pop()
        rows.append(cells)
    return rows


def _embedded_object(data: bytes) -> tuple[list[list[str]], list[str]]:
    """What an object embedded in a document or slide shows, as (rows, nodes): an Excel workbook
    its active sheet's rows (``_sheet_rows``; empty rows left out, each as wide as the widest), a
    Visio drawing its shapes' texts and connections, page after page (``diagrams.visio_pages``);
    neither for another object (a Word document, a 97-2003 object) or a package over the default
    parse limits' expanded size."""
    import zipfile

    from openpyxl import load_workbook

    try:
        package = zipfile.ZipFile(io.BytesIO(data))
        ParseLimits().check_archive(data)
    except (zipfile.BadZipFile, ParseLimitExceeded):
        return [], []
    names = set(package.namelist())
    if "visio/pages/pages.xml" in names:
        return [], [text for _, shown in visio_pages(_member_reader(package)) for _, text in shown]
    if "xl/workbook.xml" not in names:
        return [], []
    book = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    try:
        rows = [row for row in _sheet_rows(book.active) if any(cell.strip() for cell in row)]
    finally:
        book.close()
    width = max(map(len, rows), default=0)
    return [row + [""] * (width - len(row)) for row in rows], []


def _opendocument_content(data: bytes, part: str = "content.xml"):
    """An OpenDocument package's content part (``content.xml``, or an embedded object's ``part``)
    as an lxml root."""
    import zipfile

    from lxml import etree

    package = zipfile.ZipFile(io.BytesIO(data))  # a damaged one raises BadZipFile: see parse_document
    if part not in package.namelist():
        raise ValueError("the package has no content.xml: it is no OpenDocument file (save it again from its application)")
    return etree.fromstring(package.read(part), etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True))


def _embedded_content(data: bytes, href: str):
    """The content part of the object an OpenDocument file embeds at ``href`` ("./Object 1");
    None where it has none or it cannot be read (the object is then left out)."""
    part = posixpath.normpath(posixpath.join(href.removeprefix("./"), "content.xml"))
    if href.startswith(("/", "../")) or "://" in href or part.startswith(".."):  # outside the package: never read
        return None
    try:
        return _opendocument_content(data, part)
    except Exception:  # noqa: BLE001 - a missing or damaged object: zipfile and lxml raise many types
        return None


def _parse_ods(data: bytes):
    """An OpenDocument spreadsheet (LibreOffice Calc), read as an Excel workbook is: each visible
    sheet's name (a title) and its cells as Markdown rows (``opendocument.spreadsheet_sheets``:
    values as their formats show them, as the file keeps them); a sheet's number is its page; its
    title is its properties' own."""
    items: list[tuple[str, str, int | None]] = []
    for number, name, rows in spreadsheet_sheets(_opendocument_content(data)):
        items += _sheet_items(name, rows, number)
    text, spans = _join_elements(items)
    return text, spans, _package_title(data)


def _parse_odp(data: bytes):
    """An OpenDocument presentation (LibreOffice Impress), read as a PowerPoint deck is: a slide is
    a page headed by its title alone, its text, list items and tables under it (an embedded chart
    as its title and data table, an embedded spreadsheet as its tables: ``_embedded_content``),
    then its speaker notes (``opendocument.presentation_slides``); its title is its first slide's,
    as a deck's is."""
    items: list[tuple] = []
    slides = presentation_slides(_opendocument_content(data), partial(_embedded_content, data))
    for number, (title, shown, notes) in enumerate(slides, start=1):
        items.append(("Title", title, number, 1) if title else (_UNTITLED, "", number))
        for kind, value in shown:
            if kind == "table":
                items += _table_items(value, number)
            else:
                items.append(("ListItem" if kind == "item" else "NarrativeText", value, number))
        if notes:
            items.append(("NarrativeText", notes, number))
    text, spans = _join_elements(items)
    return text, spans, _first_title(text, spans)


def _parse_drawio(data: bytes):
    """A draw.io diagram, read as a Visio drawing is (``diagrams.drawio_pages``): each page headed
    by its name (none for draw.io's own "Page-1"), its shapes' labels in reading order, then its
    connections as list items; its title is its first page's name."""
    return _diagram_document(drawio_pages(data), "")


def _parse_svg(data: bytes):
    """An SVG picture: the text it shows, in the order it is drawn, or the diagram draw.io exported
    into it (``diagrams.svg_pages``); its title is its own ``<title>``."""
    title, pages = svg_pages(data)
    return _diagram_document(pages, title)


def _diagram_document(pages: list[tuple[str, list[tuple[str, str]]]], title: str):
    """A diagram's ``pages`` (name, what it shows) as a document: a page a page, headed by its name
    where it has one, a shape's text a paragraph, a connection a list item; titled ``title``, else
    by its first page's name."""
    items: list[tuple] = []
    for number, (name, shown) in enumerate(pages, start=1):
        items.append(("Title", name, number, 1) if name else (_UNTITLED, "", number))
        items += [("ListItem" if kind == "connection" else "NarrativeText", text, number) for kind, text in shown]
    text, spans = _join_elements(items)
    return text, spans, title or _first_title(text, spans)


def _parse_visio(data: bytes):
    """A Visio drawing: each foreground page a page headed by its name (none where Visio named it,
    "Page-1"), its shapes' texts in reading order, then its connections as list items ("Submit →
    Approve: Yes"; ``diagrams.visio_pages``); its title is its properties' own, else its first
    page's name."""
    import zipfile

    package = zipfile.ZipFile(io.BytesIO(data))  # a damaged one raises BadZipFile: see parse_document
    return _diagram_document(visio_pages(_member_reader(package)), _package_title(data, "docProps/core.xml"))


def _member_reader(package):
    """A function reading a zip ``package``'s member by name: its bytes, None where it has none."""
    names = set(package.namelist())
    return lambda name: package.read(name) if name in names else None


_SPREADSHEET = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_XDR = "{http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing}"


def _sheet_drawings(data: bytes) -> dict[str, list[tuple[str, str]]]:
    """An XLSX package's text boxes and shapes by sheet name, each sheet's in the order of the cells
    they are anchored at (``office_graphics.drawing_texts``), then its connectors joining two of
    them as list items "From → To" (``office_graphics.connections``), as (category, text); {}
    where it has none or they cannot be read (they are then left out: the cells are the workbook's
    content)."""
    import zipfile

    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    try:
        package = zipfile.ZipFile(io.BytesIO(data))
        members = set(package.namelist())
        if not any(name.startswith("xl/drawings/") for name in members):
            return {}

        def related(part: str) -> list[tuple[str, str, str]]:  # (id, type, member) of a part's relationships
            folder, name = posixpath.split(part)
            rels = posixpath.join(folder, "_rels", f"{name}.rels")
            if rels not in members:
                return []
            return [(rel.get("Id", ""), rel.get("Type", ""), _package_path(folder, rel.get("Target", "")))
                    for rel in etree.fromstring(package.read(rels), parser) if rel.get("TargetMode") != "External"]

        sheet_parts = {rid: member for rid, _, member in related("xl/workbook.xml")}
        found: dict[str, list[str]] = {}
        for sheet in etree.fromstring(package.read("xl/workbook.xml"), parser).iter(f"{_SPREADSHEET}sheet"):
            part = sheet_parts.get(sheet.get(f"{_RELATIONSHIP}id"))
            drawings = [etree.fromstring(package.read(member), parser) for _, kind, member in
                        (related(part) if part else []) if kind.endswith("/drawing") and member in members]
            shown = [("NarrativeText", text) for drawing in drawings for text in drawing_texts(drawing)] + [
                ("ListItem", text) for drawing in drawings for text in connections(drawing, _XDR)]
            if shown:
                found[sheet.get("name", "")] = shown
        return found
    except Exception:  # noqa: BLE001 - drawings are optional: damaged ones must not fail the workbook
        return {}


def _sheet_items(name: str, rows: list[list[str]], page: int) -> list[tuple[str, str, int]]:
    """A sheet's items: its name (a title), then each of its tables (``_sheet_tables``) as its
    caption (``_caption``) and its rows; none when it has no cells."""
    items = [item for block in _sheet_tables(rows) for item in _table_items(block, page)]
    return [("Title", name, page), *items] if items else []


def _table_items(rows: list[list[str]], page: int | None) -> list[tuple[str, str, int | None]]:
    """A table's items: its caption (``_caption``) where it has one, then its rows as a Markdown
    table; none for a table without cells."""
    caption, rows = _caption(rows)
    if not (table := markdown_table(rows)):
        return []
    return [*([("NarrativeText", caption, page)] if caption else []), ("Table", table, page)]


_NUMBER_CELL = re.compile(r"[-+(]?\s*[$€£¥]?\s*[-+(]?\d[\d,.\s]*(?:[eE][-+]?\d+)?\s*[%)]?(?:\s*[$€£¥KMB])?|"
                          r"\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?")


_YEAR = re.compile(r"(?:19|20)\d\d")  # columns named by their years (Metric | 2023 | 2024): a header's


def _sheet_tables(rows: list[list[str]]) -> list[list[list[str]]]:
    """A sheet's rows split into its tables: a blank row followed by a header (two values or more, no
    number among them but years, two or more of them, above a row with a number under one of its
    values), or by one value alone above such a header (its title), starts a new table. Read as one, a second table's rows were
    named by the first's header and its own header was a data row; a blank row inside one table
    (a gap between groups of rows) is followed by data, not by a header, and splits nothing, nor
    does one under a title alone (the title stays its table's caption)."""
    filled = [i for i, row in enumerate(rows) if any(cell.strip() for cell in row)]
    starts = [0]
    for n, i in enumerate(filled[1:], start=1):
        title_alone = _values(rows[filled[n - 1]]) == 1 and (n < 2 or filled[n - 2] < starts[-1])
        if i - filled[n - 1] > 1 and not title_alone and (
                _header_over(rows, filled[n:n + 2])
                or (_values(rows[i]) == 1 and _header_over(rows, filled[n + 1:n + 3]))):
            starts.append(i)
    return [rows[a:b] for a, b in zip(starts, starts[1:] + [len(rows)])]


def _values(row: list[str]) -> int:
    return sum(1 for cell in row if cell.strip())


def _header_over(rows: list[list[str]], pair: list[int]) -> bool:
    """Whether ``rows[pair[0]]`` reads as a header over the row ``rows[pair[1]]``."""
    if len(pair) < 2:
        return False
    header, below = rows[pair[0]], rows[pair[1]]
    values = [cell.strip() for cell in header if cell.strip()]
    years = sum(bool(_YEAR.fullmatch(value)) for value in values)
    if len(values) < 2 or any(_NUMBER_CELL.fullmatch(value) and not (years >= 2 and _YEAR.fullmatch(value))
                              for value in values):
        return False
    return any(name.strip() and i < len(below) and _NUMBER_CELL.fullmatch(below[i].strip())
               for i, name in enumerate(header))


NOTEBOOK_OUTPUT_LINES, NOTEBOOK_OUTPUT_CHARS = 20, 1000  # of a code cell's printed output kept


def _notebook_output(cell: dict) -> str:
    """What a code cell printed (stdout) and the text of its result and of what it displayed
    (``display(df.head())``; Markdown where it shows Markdown, else plain text), as a reader sees
    it under the cell (a metric, a value, a small table), cut to its first ``NOTEBOOK_OUTPUT_LINES``
    lines and ``NOTEBOOK_OUTPUT_CHARS`` characters (at a line's end); stderr, pictures and their
    captions (<Figure ...>), widgets and HTML are left out."""
    texts = []
    for output in cell.get("outputs") or []:
        kind, data = output.get("output_type"), output.get("data") or {}
        if kind == "stream" and output.get("name") == "stdout":
            text = output.get("text", "")
        elif kind in ("execute_result", "pyout", "display_data") and not any(
                k.startswith(("image/", "application/vnd.jupyter.widget")) for k in data):
            text = data.get("text/markdown", data.get("text/plain", output.get("text", "")))
        else:
            continue
        texts.append(("".join(text) if isinstance(text, list) else str(text)).strip("\n"))
    lines = "\n".join(t for t in texts if t.strip()).splitlines()[:NOTEBOOK_OUTPUT_LINES]
    kept = elide_inline_data("\n".join(lines))
    if len(kept) > NOTEBOOK_OUTPUT_CHARS:
        cut = kept.rfind("\n", 0, NOTEBOOK_OUTPUT_CHARS)
        kept = kept[:cut] if cut > 0 else kept[:NOTEBOOK_OUTPUT_CHARS]
    return kept


def _parse_notebook(data: bytes):
    """A Jupyter notebook (.ipynb, nbformat 3 or 4): its cells' sources in order, Markdown cells as
    written and code cells fenced in the kernel's language, each followed by what it printed
    (``_notebook_output``, fenced as text), read as Markdown; pictures, stderr and HTML outputs are
    left out. Its title is its sole top-level heading."""
    import json

    notebook = json.loads(decode_text(data)[0])
    if not isinstance(notebook, dict) or not ("cells" in notebook or "worksheets" in notebook):
        raise ValueError("no cells: not a Jupyter notebook; check its extension")
    cells = notebook.get("cells") or [c for sheet in notebook.get("worksheets") or [] for c in sheet.get("cells") or []]
    metadata = notebook.get("metadata") or {}
    language = str((metadata.get("kernelspec") or {}).get("language") or (metadata.get("language_info") or {}).get("name")
                   or "")
    parts = []
    for cell in cells:
        source = cell.get("source", cell.get("input", ""))
        source = "".join(source) if isinstance(source, list) else str(source)
        source = elide_inline_data(source.replace("\r\n", "\n").replace("\r", "\n").strip("\n"))
        if not source.strip():
            continue
        if cell.get("cell_type") == "code":
            fence = "~~~~" if "```" in source else "```"
            source = f"{fence}{language}\n{source}\n{fence}"
            if printed := _notebook_output(cell):
                fence = "~~~~" if "```" in printed else "```"
                source += f"\n\n{fence}text\n{printed}\n{fence}"
        parts.append(source)
    text, elements = _markdown_as_shown("\n\n".join(parts))
    return text, elements, _sole_top_heading(text, elements)


def _parse_xls(data: bytes):
    """An Excel 97-2003 workbook, as ``_parse_xlsx`` reads one: numbers as Excel shows a whole
    one (3, not 3.0), dates as dates, booleans and errors as their words."""
    import xlrd

    if _encrypted(data):  # an encrypted .xlsx is a compound file too
        raise ValueError(_ENCRYPTED)
    book = xlrd.open_workbook(file_contents=data, on_demand=True)
    items: list[tuple[str, str, int | None]] = []
    try:
        for number in range(book.nsheets):
            sheet = book.sheet_by_index(number)
            if sheet.visibility:  # 1 hidden, 2 very hidden
                book.unload_sheet(number)
                continue
            rows = []
            for index in range(sheet.nrows):
                cells = [_xls_cell_text(cell, book.datemode) for cell in sheet.row(index)]
                while cells and not cells[-1].strip():
                    cells.pop()
                rows.append(cells)
            items += _sheet_items(sheet.name, rows, number + 1)
            book.unload_sheet(number)
    finally:
        book.release_resources()
    text, spans = _join_elements(items)
    return text, spans, ""


_ENCRYPTED = "the file is encrypted (password protected); save an unprotected copy or exclude it"


def _encrypted(data: bytes) -> bool:
    """Whether a compound file is an encrypted Office document (its package stored encrypted)."""
    import olefile

    return olefile.OleFileIO(data).exists("EncryptedPackage")


def _xls_cell_text(cell, datemode: int) -> str:
    import xlrd

    if cell.ctype == xlrd.XL_CELL_DATE:
        return _cell_text(xlrd.xldate.xldate_as_datetime(cell.value, datemode))
    if cell.ctype == xlrd.XL_CELL_NUMBER:
        return str(int(cell.value)) if float(cell.value).is_integer() else repr(cell.value)
    if cell.ctype == xlrd.XL_CELL_BOOLEAN:
        return str(bool(cell.value))
    if cell.ctype == xlrd.XL_CELL_ERROR:
        return xlrd.error_text_from_code.get(cell.value, "#ERROR")
    return _cell_text(cell.value or None)


def _cell_text(value, number_format: str = "General") -> str:
    """A cell's value as Excel shows it: a date at midnight as its date, a number in its
    ``number_format`` (``_number_text``)."""
    if value is None:
        return ""
    if isinstance(value, datetime) and value.time() == time():
        return value.date().isoformat()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _number_text(value, number_format)
    return str(value)


# A number format's pieces: a quoted text, a [$€-407] currency, another [...] (a colour, a locale, a
# condition), an escaped char, a padding or fill char, a run of digit placeholders, any other char.
_FORMAT_PIECE = re.compile(r'"([^"]*)"|\[\$([^\]-]*)[^\]]*\]|(\[[^\]]*\])|\\(.)|([_*].)|([#0?][#0?,.]*|\.[#0?][#0?,.]*)|(.)')


def _number_text(value: float, number_format: str) -> str:
    """A number as Excel's format shows it, for the formats a sheet's reader meets: a percentage
    (``0.0%``: 95.0%), decimals and thousands separators (``#,##0.00``), thousands by a trailing
    comma (``#,##0,"K"``), a currency or a unit (``"$"#,##0.00``, ``[$€-407] #,##0``, ``0 "kg"``),
    a negative or zero section (``#,##0;(#,##0)``); else as Excel's General shows it, 15
    significant digits (0.1 + 0.2 is 0.3, 3.0 is 3). Scientific, fraction and conditional formats,
    and numbers they cannot show, read as General."""
    general = f"{value:.15g}" if isinstance(value, float) else str(value)
    sections = (number_format or "General").split(";")
    section, sign = sections[0], "-" if value < 0 else ""
    if value < 0 and len(sections) > 1:
        section, sign = sections[1], ""  # the negative section shows the sign itself, or brackets
    elif value == 0 and len(sections) > 2:
        section = sections[2]
    if section.strip().lower() in ("general", "") or re.search(r"[eE][+-]|\?/|\[[<>=]", section) \
            or not math.isfinite(value):
        return general
    pieces, runs, percent = [], [], False  # runs: the digit placeholders' runs, each a None in pieces
    for text, currency, _, escaped, _, digits, other in _FORMAT_PIECE.findall(section):
        if digits:
            runs.append(digits)
            pieces.append(None)
        else:
            percent |= other == "%"
            pieces.append(text or currency or escaped or (other if other not in "#0?" else ""))
    if not runs:
        return general
    if len(runs) > 1:  # a template of digits: a phone number 000-000-0000, a ZIP+4 00000-0000
        return _digit_template(value, runs, pieces) or general
    number = runs[0]
    scale = len(number) - len(number.rstrip(","))  # each trailing comma: thousands
    decimals = len(number.rstrip(",").split(".")[1]) if "." in number else 0
    try:
        shown = (Decimal(repr(abs(value))) * (100 if percent else 1) / 1000 ** scale).quantize(
            Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)  # as Excel rounds
    except InvalidOperation:  # more digits than Decimal holds: 1e30 in "0"
        return general
    grouped = "," in number.rstrip(",")
    digits_text = f"{shown:{',' if grouped else ''}.{decimals}f}"
    if not grouped:  # a zero placeholder shows a leading zero: 00000 is a ZIP code's 02134
        whole, point, fraction = digits_text.partition(".")
        digits_text = whole.zfill(number.split(".")[0].count("0")) + point + fraction
    if not shown and "0" not in number:
        digits_text = ""  # "#" and "?" show no insignificant zero: an accounting zero is "$ -"
    return sign + "".join(digits_text if piece is None else piece for piece in pieces)


def _digit_template(value: float, runs: list[str], pieces: list[str | None]) -> str | None:
    """``value`` written into a template of digit runs (000-000-0000), filled from the right, the
    first run taking any digits left over; None where the template has decimals or separators."""
    if any(ch in run for run in runs for ch in ".,") or not float(value).is_integer():
        return None
    digits = str(int(abs(value))).zfill(sum(run.count("0") for run in runs))
    filled, end = [], len(digits)
    for k, run in enumerate(reversed(runs)):
        start = 0 if k == len(runs) - 1 else max(0, end - len(run))
        filled.append(digits[start:end])
        end = start
    values = iter(reversed(filled))
    return ("-" if value < 0 else "") + "".join(next(values) if piece is None else piece for piece in pieces)


def _parse_pdf(data: bytes):
    """pdfminer extracts each page's text (the 'fast' strategy) line by line with its font size,
    and ``_paged_text`` reads it; a ruled table (pdfplumber finds it by its lines) is its rows as
    Markdown, in place of its cells' text. A line that an entry of the PDF's outline (its
    bookmarks) names on the entry's page is a heading, whatever its font (``_pdf_outline``,
    ``_outline_lines``). A page whose text layer holds next to nothing while an image covers most
    of it (a scan, ``_scanned``) is read by OCR instead (``ocr.read_image`` on the page rendered by
    pdfium; the next scanned pages read in threads meanwhile: ``ocr.read_in_order``). The pages are
    counted first and each one reported done (``report_pages``, an OCR'd
    one also ``report_ocr_page``): a long PDF's time limit grows with its pages."""
    import pdfplumber
    from pdfminer.pdfdocument import PDFEncryptionError, PDFPasswordIncorrect
    from pdfplumber.utils.exceptions import PdfminerException

    from rag_assets.core.parsing.ocr import read_in_order

    try:
        with pdfplumber.open(io.BytesIO(data), laparams={}) as pdf, _PdfRenderer(data) as render:
            pages = pdf.pages
            report_pages(0, len(pages))
            outline = _pdf_outline(pdf.doc, {page.page_obj.pageid: n for n, page in enumerate(pages, start=1)})
            fields = _pdf_form_values(pdf.doc, _widget_pages(pages))
            sizes: list[float] = []  # the font sizes OCR measured so far
            scans: set[int] = set()  # the pages OCR read

            def laid_out():  # each page's lines, or its picture to read
                for page_number, page in enumerate(pages, start=1):
                    lines, page_edges = _pdf_lines(page.layout, page_number, _pdf_tables(page), fields.get(page_number, ()))
                    picture = None
                    if _scanned(page, lines) or _unmapped(lines):
                        report_ocr_page()
                        scans.add(page_number)
                        picture = render(page_number - 1)
                    page.close()  # its objects' cache
                    yield (page_number, lines, page_edges, picture and picture[1]), picture
                    report_pages(page_number, len(pages))

            def read():
                for (page_number, lines, page_edges, dpi), paragraphs in read_in_order(laid_out()):
                    if paragraphs is not None:  # OCR read the page: its filled form fields after its text
                        lines, page_edges = _scanned_lines(paragraphs, dpi, page_number, sizes)
                        lines += _pdf_lines((), page_number, (), fields.get(page_number, ()))[0]
                    yield lines, page_edges, outline.get(page_number, [])

            text, elements, title = _paged_text(read())
            return text, tuple(replace(e, ocr=True) if e.page in scans else e for e in elements), title
    except (PdfminerException, PDFEncryptionError, PDFPasswordIncorrect) as exc:
        cause = exc.args[0] if isinstance(exc, PdfminerException) and exc.args else exc
        if isinstance(cause, (PDFEncryptionError, PDFPasswordIncorrect)):
            raise ValueError("the PDF is encrypted (password protected); save an unprotected copy or exclude it") from exc
        raise cause if isinstance(cause, Exception) else exc


def _parse_image(data: bytes):
    """An image file read by OCR (``ocr.read_image``), each page of a multi-page TIFF a page (of
    other formats the first frame: an animation's frames repeat it), then read as a PDF's pages
    are (``_paged_text``)."""
    from PIL import Image, ImageSequence

    from rag_assets.core.parsing.ocr import read_in_order

    try:
        image = Image.open(io.BytesIO(data))
    except Image.DecompressionBombError as exc:
        raise ValueError(f"{str(exc).rstrip('.')}; scale the image down or exclude it") from exc
    total = getattr(image, "n_frames", 1) if image.format == "TIFF" else 1
    dpi = _image_dpi(image)

    def frames():
        report_pages(0, total)
        for page_number, frame in enumerate(ImageSequence.Iterator(image), start=1):
            if page_number > total:
                break
            report_ocr_page()
            yield page_number, (frame.convert("L"), dpi)  # a copy: the next frame is read into ``frame``
            report_pages(page_number, total)

    def read():
        sizes: list[float] = []  # the font sizes OCR measured so far
        for page_number, paragraphs in read_in_order(frames()):
            yield (*_scanned_lines(paragraphs, dpi, page_number, sizes), [])

    text, elements, title = _paged_text(read())
    return text, tuple(replace(e, ocr=True) for e in elements), title


def _image_dpi(image) -> float:
    """The resolution a PIL image was scanned at, where it says one (70-1200 dpi), else
    ``ocr.OCR_DPI`` (Tesseract's best guess)."""
    from rag_assets.core.parsing.ocr import OCR_DPI

    dpi = image.info.get("dpi", (0,))[0]
    return dpi if 70 <= dpi <= 1200 else OCR_DPI


def _pictures_text(pictures: list[bytes], page: int | None) -> list[tuple]:
    """What OCR reads in ``pictures`` (image files' bytes, in order; read in threads as a scan's
    pages are: ``ocr.read_in_order``), a paragraph an item on ``page``; a picture Pillow cannot
    open or decode (a Windows metafile, a damaged image) is skipped: the document's other text
    stands."""
    from PIL import Image

    from rag_assets.core.parsing.ocr import read_in_order

    def opened():
        for blob in pictures:
            try:
                image = Image.open(io.BytesIO(blob))
                image.load()
            except (OSError, ValueError, Image.DecompressionBombError):
                continue
            report_ocr_page()
            yield None, (image, _image_dpi(image))

    return [("NarrativeText", " ".join(p.lines), page, 1, True)
            for _, paragraphs in read_in_order(opened()) for p in paragraphs]


def _paged_text(pages) -> tuple[str, tuple[Element, ...], str]:
    """A paged document's text, elements and title from its ``pages``: per page, its lines (box
    number, text with the line end, font size: ``_pdf_lines``), the keys of its top and bottom
    lines and its outline entries. unstructured classifies the text a page at a time, split
    where the font size changes. Where the document sets short lines in a font larger than its
    body text, those are its headings, nested by size (``_pdf_heading_levels``), and
    unstructured's guesses at titles (short lines: running headers, code, captions) are not:
    once the pages so far show such headings, the text is read without the test behind those
    guesses (``plainly``), and read again with it where a later page proves the document to be
    in one size. A document in one font size keeps unstructured's titles. Lines the outline
    names are headings of its depth (levels by ``_outline_levels_by_depth``). Running headers and
    footers (``_running_lines``) and page numbers are left out. A sentence a page break cuts is
    read on (``_page_joint``), past the page's footnotes (text in a smaller font than the body's
    that ends the page), which follow it."""
    from collections import Counter

    from rag_assets.core.parsing.offline import prepare_unstructured

    prepare_unstructured()
    from unstructured.cleaners.core import blank_line_grouper, clean_bullets
    from unstructured.nlp.patterns import UNICODE_BULLETS_RE
    from unstructured.partition.text import partition_text
    from unstructured.partition.text_type import (is_bulleted_text, is_email_address, is_possible_numbered_list,
                                                  is_us_city_state_zip)

    def classified(boxes: list[list[str]], page: int) -> list[tuple]:
        # A box is a paragraph: its lines are joined (unstructured's blank-line grouping; left to
        # choose, it takes every line of a run of long boxes for a paragraph of its own).
        body = "\n".join("".join(box) for box in boxes)  # as pdfminer joins a page's boxes
        return _unstructured_items(partition_text(text=body, languages=NO_LANGUAGE, paragraph_grouper=blank_line_grouper),
                                   page=page) if body.strip() else []

    def plainly(boxes: list[list[str]], page: int) -> list[tuple]:
        # The paragraphs and list items ``classified`` gives, without unstructured's narrative-text
        # test (spaCy's tagger on every paragraph: half a PDF's parse), which only tells narrative
        # from other text and titles: a PDF headed by sizes or its outline drops those titles.
        items = []
        for text in re.split(r"\s*\n\s*", blank_line_grouper("\n".join("".join(box) for box in boxes)).strip()):
            if not text or (len(text) == 1 and UNICODE_BULLETS_RE.match(text)):
                continue
            bulleted = is_bulleted_text(text)
            category = ("ListItem" if bulleted else "EmailAddress" if is_email_address(text)
                        else "Address" if is_us_city_state_zip(text) else "ListItem" if is_possible_numbered_list(text)
                        else "NarrativeText")
            items.append((category, clean_bullets(text) if bulleted else text, page, 1))
        return items

    # page, size, the run's lines by box, unstructured's items (None: not classified yet), whether
    # it could be a heading (a few short lines a box), the outline depth that makes it a heading (0: none)
    runs: list[tuple[int, float, list[list[str]], list[tuple] | None, bool, int]] = []
    chars: Counter = Counter()  # characters by font size
    short_sizes: set[float] = set()  # the sizes of the runs that could be headings so far
    outlined = False  # whether a line so far is a heading the outline names
    plain_runs: list[int] = []  # the runs classified ``plainly``, the document looking headed so far
    edges: list[set[str]] = []  # per page, the keys (``_line_keys``) of its top and bottom lines
    hyphens = Hyphens()  # the words of the pages so far, to read a word hyphenated over a line break
    for page_number, (lines, page_edges, entries) in enumerate(pages, start=1):
        lines = joined_lines([(box, _CID.sub("", line).translate(_LIGATURES), size) for box, line, size in lines],
                             hyphens)
        edges.append(page_edges)
        page_runs = _size_runs(lines, _outline_lines(lines, entries, page_edges, page_number))
        page_chars: Counter = Counter()
        for size, boxes, _ in page_runs:
            if size != _TABLE:
                page_chars[size] += sum(len(line.strip()) for box in boxes for line in box)
        chars.update(page_chars)
        common = page_chars.most_common(1)[0][0] if page_chars else 0.0
        shorts = [size != _TABLE and all(len(box) <= 3 and all(map(_heading_like, box)) for box in boxes)
                  for size, boxes, _ in page_runs]
        short_sizes.update(size for (size, _, _), short in zip(page_runs, shorts) if short)
        outlined = outlined or any(depth for _, _, depth in page_runs)
        # headed as far as the pages so far tell (checked at the end: see below)
        classify = plainly if outlined or _pdf_heading_levels(chars, short_sizes) else classified
        for (size, boxes, depth), short in zip(page_runs, shorts):
            if size == _TABLE:
                tables = [("Table", table, page_number) for box in boxes for table in box]  # adjacent ones too
                runs.append((page_number, size, boxes, tables, False, 0))
                continue
            # a run in a larger font than most of its page's text waits to be judged a heading
            found = None if depth or (short and size > common) else classify(boxes, page_number)
            if found is not None and classify is plainly:
                plain_runs.append(len(runs))
            runs.append((page_number, size, boxes, found, short, depth))
    levels = _pdf_heading_levels(chars, {size for _, size, _, _, short, _ in runs if short})
    by_depth = _outline_levels_by_depth([(depth, levels.get(size)) for _, size, _, _, _, depth in runs if depth])
    running = _running_lines(edges)
    headed = levels or by_depth  # unstructured's guesses at titles give way to these headings
    if not headed:  # a later page's text set the body size larger: the early guess was wrong
        for n in plain_runs:
            runs[n] = (*runs[n][:3], None, *runs[n][4:])
    classify = plainly if headed else classified
    body_size = chars.most_common(1)[0][0] if chars else 0.0
    items: list[tuple] = []
    notes: int | None = None  # where the items in a smaller font than the body that end the items so far start
    for page_number, size, boxes, found, short, depth in runs:
        if depth or (short and size in levels):  # a heading a box
            level = by_depth[depth] if depth else levels[size]
            items += [("Title", " ".join(line.strip() for line in box), page_number, level) for box in boxes]
            notes = None
            continue
        for item in classify(boxes, page_number) if found is None else found:
            if _line_keys(item[1], page_number) & edges[page_number - 1] & running:
                continue
            item = ("UncategorizedText", *item[1:]) if headed and item[0] == "Title" else item
            held: list[tuple] = []
            joint = _page_joint(items[-1], item, items[-1][2] != page_number, hyphens) if items else None
            if joint is None and notes and items[-1][2] != page_number \
                    and (joint := _page_joint(items[notes - 1], item, True, hyphens)) is not None:
                held, items[notes:] = items[notes:], []  # a page's footnotes: read after the sentence they cut
            if joint is not None:
                items[-1], joiner = joint
                items.append((_CONTINUED, joiner, page_number))
                item = ("NarrativeText", *item[1:]) if item[0] == "Title" else item  # no title goes on a sentence
            if 0 < size < body_size and not held:
                notes = len(items) if notes is None else notes
            else:
                notes = None
            items += [item, *held]
    text, elements = _join_elements([(category, _without_leaders(item_text), *rest)
                                     for category, item_text, *rest in items])
    return text, elements, _first_title(text, elements)


# Typographic ligatures as their letters: many PDFs (LaTeX's among them) map their glyphs to U+FB01 "ﬁ" and
# the like, which no keyword search matches to "fi" and MiniLM reads apart ("ﬁle" as "ﬁ", "##le"; "ﬃ" unknown).
_LIGATURES = str.maketrans({"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl",
                            "\ufb05": "st", "\ufb06": "st"})
_PROSE = ("NarrativeText", "UncategorizedText", "ListItem")
_CUT_SENTENCE = re.compile(r"(?:[^\W_]|[,;(\u2010-])\Z")  # a paragraph's end that is no sentence's end


def _page_joint(before: tuple, after: tuple, new_page: bool, hyphens: Hyphens) -> tuple[tuple, str] | None:
    """Where the item ``after`` goes on with the sentence the item ``before`` leaves unfinished
    (prose that ends in a word or a comma, then text in lower case that is no list item:
    unstructured takes a short one for a title), after a page break (``new_page``), a list item's
    lines read apart or a box ending in a cut word: ``before`` (its hyphen dropped where the break
    cut a word, ``Hyphens.cut``) and what joins them (" ", or "" for a cut word, or the hyphen
    kept). None where they are apart."""
    text, first = before[1].rstrip(), after[1].lstrip()
    cut = hyphens.cut(text, first)
    if not (new_page or before[0] == "ListItem" or cut) or before[0] not in _PROSE \
            or after[0] not in ("NarrativeText", "UncategorizedText", "Title") \
            or not first[:1].islower() or not _CUT_SENTENCE.search(text):
        return None
    return ((before[0], cut[0], *before[2:]), cut[1]) if cut else (before, " ")


_LEADER = re.compile(r"[ \t]*(?:\.[ \t]?){5,}")  # a contents or index line's dots: "Setup . . . . . . 12"


def _without_leaders(text: str) -> str:
    """``text`` with each run of five dots or more (a leader to a page number in a table of contents
    or an index: MiniLM embedded each dot as a token, 30 to an entry) one "…"."""
    return _LEADER.sub(lambda m: " …" if m.end() == len(text) or text[m.end()] == "\n" else " … ", text)


class _PdfRenderer:
    """Renders a PDF's pages for OCR with pdfium (opened on the first page asked for): called with
    a page index, returns the page as a grayscale PIL image and its dots per inch
    (``ocr.render_scale``)."""

    def __init__(self, data: bytes):
        self.data, self.pdf = data, None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        if self.pdf is not None:
            self.pdf.close()

    def __call__(self, index: int):
        import pypdfium2

        from rag_assets.core.parsing.ocr import render_scale

        if self.pdf is None:
            self.pdf = pypdfium2.PdfDocument(self.data)
        page = self.pdf[index]
        try:
            scale = render_scale(*page.get_size())
            return page.render(scale=scale, grayscale=True).to_pil(), scale * 72
        finally:
            page.close()


#: a PDF page, a slide or a Word document is read by OCR when its own text has at most this many characters
SCANNED_MAX_CHARS = 100


def _scanned(page, lines: list[tuple[int, str, float]]) -> bool:
    """Whether a pdfplumber page is a scan: at most ``SCANNED_MAX_CHARS`` characters in its text
    layer (a stamped page number, a scanner's footer) while its images cover half the page."""
    if sum(len(line.strip()) for _, line, _ in lines) > SCANNED_MAX_CHARS or not page.images:
        return False
    x0, top, x1, bottom = page.bbox
    covered = sum(max(0.0, min(im["x1"], x1) - max(im["x0"], x0)) * max(0.0, min(im["bottom"], bottom) - max(im["top"], top))
                  for im in page.images)
    return covered >= 0.5 * (x1 - x0) * (bottom - top)


_CID = re.compile(r"\(cid:\d+\)")  # pdfminer's text for a glyph its font maps to no character


def _unmapped(lines: list[tuple[int, str, float]]) -> bool:
    """Whether most of a page's glyphs map to no character (a font without its ToUnicode map:
    pdfminer reads each as "(cid:82)"): such a page is read by OCR, as a scan is."""
    glyphs = sum(line.count("(cid:") for _, line, _ in lines)
    return glyphs > 0 and glyphs > sum(len(_CID.sub("", line).replace(" ", "").strip()) for _, line, _ in lines)


def _scanned_lines(paragraphs, dpi: float, page: int, sizes: list[float]) -> tuple[list[tuple[int, str, float]], set[str]]:
    """OCR'd ``paragraphs`` (``ocr.Paragraph``, read at ``dpi``) as ``_pdf_lines`` gives a page's
    lines: a paragraph a box, a line's font size its height in points, the paragraph's median
    height for the lines within ``SCANNED_SIZE_SPREAD`` of it (a heading read into the paragraph
    below keeps its own); each size taken as the first of the document's ``sizes`` so far within
    ``SCANNED_SIZE_SPREAD`` of it (a new one, to the half point, is added): OCR measures a font's
    size up to 10% apart from line to line. Also the keys of the one-line paragraphs
    within 5 points of the highest top or lowest bottom (``_edge_keys``)."""
    from statistics import median

    lines = []
    for n, paragraph in enumerate(paragraphs):
        middle = median(paragraph.heights)
        for line, height in zip(paragraph.lines, paragraph.heights):
            points = (middle if abs(height - middle) <= SCANNED_SIZE_SPREAD * middle else height) * 72 / dpi
            size = next((s for s in sizes if abs(points - s) <= SCANNED_SIZE_SPREAD * s), None)
            if size is None:
                size = round(points * 2) / 2
                sizes.append(size)
            lines.append((n, line + "\n", size))
    # image rows count down the page: negated, they are heights as a PDF's
    return lines, _edge_keys([("\n".join(p.lines), -p.top, -p.bottom) for p in paragraphs], 5 * dpi / 72, page)


#: how far apart (a fraction) OCR'd line heights may be and still be one font size
SCANNED_SIZE_SPREAD = 0.1


_TABLE = -1.0  # the "font size" of a ruled table's run of one line: its Markdown rows


def _pdf_tables(page) -> list[tuple[tuple[float, float, float, float], str]]:
    """A pdfplumber page's ruled tables of two rows and two columns or more (its "lines" strategy:
    cells bounded by drawn lines), each as its box in pdfminer's coordinates (x0, y0, x1, y1) and
    its rows as Markdown; none are searched for on a page whose drawings cannot bound two rows of
    two cells (``_may_bound_cells``): finding them converts every character of the page."""
    if not _may_bound_cells(page.layout):
        return []
    found = []
    mb_top = page.mediabox[1]
    for table in page.find_tables():
        rows = [[cell or "" for cell in row] for row in table.extract()]
        if len(rows) < 2 or max(len(row) for row in rows) < 2 or not (markdown := markdown_table(rows)):
            continue
        x0, top, x1, bottom = table.bbox
        found.append(((x0, page.height + mb_top - bottom, x1, page.height + mb_top - top), markdown))
    return found


def _may_bound_cells(layout) -> bool:
    """Whether a page's drawings could be a ruled table's: a rectangle, a path of more than one
    segment, or straight lines of which at least two are horizontal and two vertical."""
    from pdfminer.layout import LTCurve, LTLine, LTRect

    horizontal = vertical = 0
    for el in layout:
        if isinstance(el, LTRect) or (isinstance(el, LTCurve) and not isinstance(el, LTLine)):
            return True
        if isinstance(el, LTLine):
            horizontal += el.height < 1
            vertical += el.width < 1
    return horizontal >= 2 and vertical >= 2


def _size_runs(lines: list[tuple[int, str, float]], headings: dict[int, tuple[int, int]]
               ) -> list[tuple[float, list[list[str]], int]]:
    """A page's lines (``_pdf_lines``) in runs of one font size: (size, the run's lines by box, 0);
    the lines ``headings`` marks (line number -> (outline entry, depth); ``_outline_lines``) are a
    run of their own per entry: (size, [its lines], depth)."""
    runs: list[tuple[float, list[list[str]], int]] = []
    last = None  # the previous line's box, entry and size
    for number, (box, line, size) in enumerate(lines):
        entry, depth = headings.get(number, (None, 0))
        if not runs or last[1:] != (entry, size) or (entry is not None and box != last[0]):
            runs.append((size, [[]], depth))
        elif box != last[0]:
            runs[-1][1].append([])
        runs[-1][1][-1].append(line)
        last = (box, entry, size)
    return runs


def _pdf_lines(layout, page: int, tables=(), fields=()) -> tuple[list[tuple[int, str, float]], set[str]]:
    """A page's text lines in reading order (pdfminer's, column by column on a page set in columns:
    ``reading_order``): (its box's number, its text with the line end, its font size: the size
    most of its characters have, to the half point); the lines of a box joined, and the boxes
    joined by a line end, are the page's text as pdfminer gives it. A box inside one of the
    ``tables`` (``_pdf_tables``) is left out, the table's Markdown rows standing as one line (size
    ``_TABLE``) where its first box was. Each of the form's filled ``fields`` on the page
    (``_pdf_form_values``) is a line of its own, in the body's size, before the first box whose
    top is below the field's middle (after its label on its row). Also the keys (``_line_keys``)
    of the one-line boxes at the top and at the bottom of the page (within 5 points of the
    highest top or lowest bottom), where running headers and footers are. A box that goes on with
    the sentence the column before it leaves unfinished is part of that box (``_column_goes_on``)."""
    from collections import Counter

    from pdfminer.layout import LTChar, LTText, LTTextContainer, LTTextLine

    boxes = [el for el in layout if isinstance(el, LTTextContainer)]
    boxes = [boxes[i] for i in reading_order([Box(box.x0, box.y0, box.x1, box.y1,
                                                  sum(isinstance(line, LTTextLine) for line in box) or 1)
                                              for box in boxes])]
    edges = _edge_keys([(box, box.y1, box.y0) for box in boxes], 5, page, lambda box: box.get_text().strip())
    sequence: list = list(boxes)
    for middle, _, entry in fields:
        at = next((i for i, item in enumerate(sequence) if not isinstance(item, str) and item.y1 < middle), len(sequence))
        sequence.insert(at, entry)
    lines: list[tuple[int, str, float | None]] = []
    placed: set[int] = set()  # the tables already written
    number = -1
    for n, box in enumerate(sequence):
        if isinstance(box, str):  # a form field's label and value
            lines.append((n, box + "\n", None))
            continue
        number = number if n and not isinstance(sequence[n - 1], str) and _column_goes_on(sequence[n - 1], box) else n
        x, y = (box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2
        inside = next((i for i, ((x0, y0, x1, y1), _) in enumerate(tables) if x0 <= x <= x1 and y0 <= y <= y1), None)
        if inside is not None:
            if inside not in placed:
                placed.add(inside)
                lines.append((number, tables[inside][1], _TABLE))
            continue
        for line in box:
            if not isinstance(line, LTText):
                continue
            glyphs = line if isinstance(line, LTTextContainer) else ()
            sizes = Counter(round(ch.size * 2) / 2 for ch in glyphs if isinstance(ch, LTChar) and not ch.get_text().isspace())
            size = sizes.most_common(1)[0][0] if sizes else 0.0
            lines.append((number, _scripted(line, size) if len(sizes) > 1 else line.get_text(), size))
    body = Counter(size for _, text, size in lines for _ in text if size is not None and size > 0).most_common(1)
    return [(n, text, (body[0][0] if body else 0.0) if size is None else size) for n, text, size in lines], edges


def _column_goes_on(before, box) -> bool:
    """Whether pdfminer text ``box`` opens a column (it stands right of the box ``before`` it and
    starts higher) with the sentence that ``before`` leaves unfinished: it ends in a word, a
    comma or a hyphen, and ``box`` starts in lower case. A paragraph a column break cut read as two."""
    return box.x0 >= before.x1 - 1 and box.y1 > before.y1 and bool(_CUT_SENTENCE.search(before.get_text().rstrip())) \
        and box.get_text().lstrip()[:1].islower()


def _scripted(line, size: float) -> str:
    """A pdfminer text line's text, each run of characters set smaller than its ``size`` and raised
    above its baseline opened by "^", lowered below it by "_": "10^6", "m^2", "CO_2", "maintenance^3"
    (a footnote's mark), where they read "106", "m2", "CO2" and "maintenance3"."""
    from statistics import median

    from pdfminer.layout import LTChar

    glyphs = [ch for ch in line if isinstance(ch, LTChar)]
    body = [ch.y0 for ch in glyphs if round(ch.size * 2) / 2 == size]
    if not body:
        return line.get_text()
    base, out, mode = median(body), [], ""
    for ch in line:
        now = ""
        if isinstance(ch, LTChar) and ch.size <= 0.85 * size and not ch.get_text().isspace():
            now = "^" if ch.y0 - base >= 0.15 * size else "_" if base - ch.y0 >= 0.1 * size else ""
        if now and now != mode:
            out.append(now)
        if not (isinstance(ch, LTChar) and ch.get_text().isspace() and mode):  # a space inside a run stays in it
            mode = now
        out.append(ch.get_text())
    return "".join(out)


MAX_OUTLINE_ENTRIES = 10_000


def _pdf_outline(doc, page_numbers: dict[int, int]) -> dict[int, list[tuple[int, str]]]:
    """A PDF's outline (bookmarks) by page: page number -> [(depth, title as ``_outline_key``)],
    in outline order, for the entries whose destination is a page of ``page_numbers`` (page
    object id -> page number). Read without recursion, each entry once (a cycle ends the walk),
    at most ``MAX_OUTLINE_ENTRIES``; a damaged outline is no outline."""
    from pdfminer.pdftypes import PDFObjRef, resolve1
    from pdfminer.psparser import PSLiteral
    from pdfminer.utils import decode_text as decode_pdf_text

    def page_of(entry: dict) -> int | None:
        dest = entry.get("Dest")
        action = resolve1(entry.get("A"))
        if dest is None and isinstance(action, dict) and getattr(resolve1(action.get("S")), "name", None) == "GoTo":
            dest = action.get("D")
        dest = resolve1(dest)
        if isinstance(dest, (bytes, str, PSLiteral)):  # a named destination
            dest = resolve1(doc.get_dest(dest.name if isinstance(dest, PSLiteral) else dest))
        if isinstance(dest, dict):
            dest = resolve1(dest.get("D"))
        if isinstance(dest, list) and dest and isinstance(dest[0], PDFObjRef):
            return page_numbers.get(dest[0].objid)
        return None

    found: dict[int, list[tuple[int, str]]] = {}
    try:
        root = resolve1(doc.catalog.get("Outlines"))
        stack = [(root.get("First"), 1)] if isinstance(root, dict) else []
        seen: set[int] = set()  # the entries' object numbers
        while stack and len(seen) < MAX_OUTLINE_ENTRIES:
            ref, depth = stack.pop()
            entry = resolve1(ref)
            if not isinstance(ref, PDFObjRef) or ref.objid in seen or not isinstance(entry, dict):
                continue
            seen.add(ref.objid)
            stack.append((entry.get("Next"), depth))  # after this entry's children
            stack.append((entry.get("First"), depth + 1))
            title = resolve1(entry.get("Title"))
            if isinstance(title, bytes) and (page := page_of(entry)) is not None:
                found.setdefault(page, []).append((depth, _outline_key(decode_pdf_text(title))))
    except Exception:  # noqa: BLE001 - bookmarks are optional: damaged ones must not fail the parse
        return {}
    return found


MAX_FORM_FIELDS = 10_000


def _widget_pages(pages) -> dict[int, int]:
    """The object id of each annotation a PDF's ``pages`` (pdfplumber's) list -> its page number:
    where a form field's widget shows (its own /P is optional, often missing)."""
    from pdfminer.pdftypes import PDFObjRef, resolve1

    found = {}
    for number, page in enumerate(pages, start=1):
        annotations = resolve1(page.page_obj.attrs.get("Annots"))
        for ref in annotations if isinstance(annotations, list) else []:
            if isinstance(ref, PDFObjRef):
                found.setdefault(ref.objid, number)
    return found


def _pdf_form_values(doc, widget_pages: dict[int, int]) -> dict[int, list[tuple[float, float, str]]]:
    """A PDF form's filled fields by the page that shows them (``widget_pages``: a widget
    annotation's object id -> the number of the page listing it): page number -> [(middle, left,
    "label: value")] top down (a widget's middle height and left edge), a field's
    label its tooltip (``/TU``, what a reader sees named) else its name, its value as the form
    shows it: a text or a choice, a ticked box's or chosen button's name ("Yes", "Female"); empty
    fields and unticked boxes left out. pdfminer reads no field's value (it is no page text), so a
    filled form was read blank. Read without recursion, each field once, at most
    ``MAX_FORM_FIELDS``; a damaged form is no form."""
    from pdfminer.pdftypes import PDFObjRef, resolve1
    from pdfminer.psparser import PSLiteral
    from pdfminer.utils import decode_text as decode_pdf_text

    def text(value) -> str:
        value = resolve1(value)
        if isinstance(value, PSLiteral):
            return "" if value.name == "Off" else str(value.name)
        if isinstance(value, bytes):
            return " ".join(decode_pdf_text(value).split())
        if isinstance(value, list):
            return ", ".join(filter(None, (text(item) for item in value)))
        return ""

    found: dict[int, list[tuple[float, float, str]]] = {}
    try:
        form = resolve1(doc.catalog.get("AcroForm"))
        fields = resolve1(form.get("Fields")) if isinstance(form, dict) else None
        stack = [(ref, None, "") for ref in reversed(fields)] if isinstance(fields, list) else []
        seen: set[int] = set()
        while stack and len(seen) < MAX_FORM_FIELDS:
            ref, value, label = stack.pop()
            field = resolve1(ref)
            if not isinstance(ref, PDFObjRef) or ref.objid in seen or not isinstance(field, dict):
                continue
            seen.add(ref.objid)
            value = field.get("V", value)  # a kid inherits its parent's value and label
            label = text(field.get("TU")) or text(field.get("T")) or label
            kids = resolve1(field.get("Kids"))
            if isinstance(kids, list) and kids:
                stack += [(kid, value, label) for kid in reversed(kids)]
                continue
            shown, rect, number = text(value), resolve1(field.get("Rect")), widget_pages.get(ref.objid)
            if shown and number is not None and isinstance(rect, list) and len(rect) == 4:
                entry = f"{label}: {shown}" if label else shown
                if entry not in {line for _, _, line in found.get(number, [])}:  # one value, several widgets
                    found.setdefault(number, []).append(((float(rect[1]) + float(rect[3])) / 2, float(min(rect[0], rect[2])),
                                                         entry))
    except Exception:  # noqa: BLE001 - a form is optional: a damaged one must not fail the parse
        return {}
    return {number: sorted(values, key=lambda value: (-value[0], value[1])) for number, values in found.items()}


def _outline_key(text: str) -> str:
    """A title or line as outline entries are matched to lines: NFKC (ligatures as letters),
    whitespace collapsed, case folded."""
    return " ".join(unicodedata.normalize("NFKC", text).split()).casefold()


#: what may stand before an outline entry's title on its line: a number ("2.1", "A.", "IV)"),
#: perhaps after "Chapter", "Section", "Part", "Appendix", "Annex" or "§"
_NUMBERING = re.compile(r"(?:(?:chapter|section|part|appendix|annex|§)\s*)?(?:\d+|[ivxlcdm]+|[a-z])(?:[.\-]\w+)*[.:)]?")


def _outline_lines(lines: list[tuple[int, str, float]], entries: list[tuple[int, str]], edges: set[str],
                   page: int) -> dict[int, tuple[int, int]]:
    """Which of a page's lines (``_pdf_lines``) are the headings its outline ``entries`` name:
    line number -> (entry number, depth). An entry names a line, or two or three consecutive
    lines of one box (a wrapped title), that read as its title, or as a number (``_NUMBERING``)
    and its title; an exact reading beats a numbered one, and a line of the page's first or last
    box that is one of its edges (``edges``: where running headers are) is taken only when no
    other line reads so."""
    if not entries:
        return {}
    keys = [_outline_key(text) for _, text, _ in lines]
    outer = {lines[0][0], lines[-1][0]} if lines else set()  # the page's first and last boxes
    found: dict[int, tuple[int, int]] = {}
    for entry, (depth, title) in enumerate(entries):
        best = None
        for first in range(len(lines)):
            for last in range(first, min(first + 3, len(lines))):
                if lines[last][0] != lines[first][0] or any(n in found for n in range(first, last + 1)):
                    break
                text = " ".join(keys[first:last + 1])
                numbered = text.endswith(" " + title) and _NUMBERING.fullmatch(text[: -len(title) - 1]) is not None
                if text == title or numbered:
                    edge = lines[first][0] in outer and bool(_line_keys(text, page) & edges)
                    rank = (edge, numbered, first)
                    if best is None or rank < best[0]:
                        best = (rank, range(first, last + 1))
                    break
        if best is not None:
            found.update(dict.fromkeys(best[1], (entry, depth)))
    return found


def _outline_levels_by_depth(headings: list[tuple[int, int | None]]) -> dict[int, int]:
    """Heading levels for outline depths, given each outline heading's (depth, its level by font
    size or None): a depth takes the level most of its headings have by size where that nests
    under the depth above, else the level below the depth above's (depth 1 under none: 1)."""
    from collections import Counter

    by_depth: dict[int, int] = {}
    level = 0
    for depth in range(1, max((d for d, _ in headings), default=0) + 1):
        sized = Counter(size_level for d, size_level in headings if d == depth and size_level is not None)
        common = sized.most_common(1)[0][0] if sized else None
        level = min(common if common is not None and common > level else level + 1, MAX_HEADING_LEVEL)
        by_depth[depth] = level
    return by_depth


def _running_lines(edges: list[set[str]]) -> set[str]:
    """The keys of a PDF's running headers and footers: lines at the top or bottom of at least
    half its pages, and of three, alike but for a number that counts the pages; and in a document
    of three pages or more, a line at the top or bottom of pages at most two apart (a chapter's
    title over each of its pages, or over every other one: a book's or manual's), of two such
    pages written alike, of three alike but for such a number."""
    pages_of: dict[str, list[int]] = {}
    for number, page in enumerate(edges):
        for key in page:
            pages_of.setdefault(key, []).append(number)
    return {key for key, pages in pages_of.items() if len(pages) >= max(3, len(edges) / 2) or len(edges) >= 3
            and sum(b - a <= 2 for a, b in zip(pages, pages[1:])) >= (2 if "#" in key else 1)}


def _edge_keys(blocks: list, slack: float, page: int, text=str) -> set[str]:
    """The keys (``_line_keys``) of a page's one-line blocks of at most 100 characters at its top
    or bottom (within ``slack`` of the highest top or the lowest bottom), where running headers
    and footers are: ``blocks`` are (block, top, bottom), heights up the page, ``text`` a block's
    text (called only for those at an edge)."""
    if not blocks:
        return set()
    top, bottom = max(high for _, high, _ in blocks), min(low for _, _, low in blocks)
    return {key for block, high, low in blocks if high >= top - slack or low <= bottom + slack
            if len(line := text(block)) <= 100 and "\n" not in line for key in _line_keys(line, page)}


def _line_keys(text: str, page: int) -> set[str]:
    """A line on ``page`` as running headers and footers are compared: its text (whitespace
    collapsed, case folded), and the same with one of its first three numbers written as its
    offset from the page number, so that "Page 3 of 12" on page 3 and "Page 4 of 12" on page 4,
    or "7" on page 9 and "8" on page 10, are alike."""
    text = " ".join(text.split()).casefold()
    return {text} | {f"{text[:m.start()]}#{int(m.group()) - page}{text[m.end():]}"
                     for m in list(re.finditer(r"\d+", text))[:3]}


def _pdf_heading_levels(chars, sizes: set[float]) -> dict[float, int]:
    """Heading levels by font size: of ``sizes`` (those that set short runs of heading-like lines),
    the ones at least ``HEADING_SCALE`` times the body text's (the size most of the ``chars``
    counts have), largest first (level 1); {} when there is none."""
    if not chars:
        return {}
    body = chars.most_common(1)[0][0]
    ranked = sorted((size for size in sizes if size >= body * HEADING_SCALE), reverse=True)
    return {size: min(level, MAX_HEADING_LEVEL) for level, size in enumerate(ranked, start=1)}


#: a PDF line is a heading when its font is at least this much larger than the body text's
HEADING_SCALE = 1.15
MAX_HEADING_LEVEL = 6


def _heading_like(line: str) -> bool:
    """Whether a line could be a heading: a letter in it, at most 150 characters, no dot leaders
    (a table of contents' entry)."""
    text = line.strip()
    return 0 < len(text) <= 150 and any(ch.isalpha() for ch in text) and not _DOT_LEADER.search(text)


_DOT_LEADER = re.compile(r"(?:\.\s?){4,}")


def _first_title(text: str, elements: tuple[Element, ...]) -> str:
    for element in elements:
        if element.category == "Title":
            return text[element.start : element.end][:200]
    return ""


# Content types read through pandoc, and the pandoc input formats that are text (decoded first).
_PANDOC_FORMATS = ("odt", "rtf", "epub", "asciidoc", "latex", "org")
_PANDOC_TEXT = ("asciidoc", "latex", "org", "jats", "docbook")
_PARSERS = {"html": _parse_html, "docx": _parse_docx, "pptx": _parse_pptx, "email": _parse_email, "xlsx": _parse_xlsx,
            "ods": _parse_ods, "odp": _parse_odp, "visio": _parse_visio, "drawio": _parse_drawio,
            "svg": _parse_svg,
            "notebook": _parse_notebook, "pdf": _parse_pdf, "image": _parse_image, "xml": _parse_xml,
            **{name: partial(_parse_pandoc, name) for name in _PANDOC_FORMATS}}
_PARSER_MODULES = {"html": ("unstructured.partition.html",),
                   "docx": ("unstructured.partition.docx", "doc2docx", "olefile"),
                   "pptx": ("pptx", "unstructured.partition.pptx", "ppt2pptx", "olefile"),
                   "email": ("oxmsg", "unstructured.partition.email"),
                   "xlsx": ("openpyxl", "xlrd", "olefile"), "notebook": ("json",), "ods": ("lxml.etree",),
                   "odp": ("lxml.etree",), "visio": ("lxml.etree",), "drawio": ("lxml.etree",),
                   "svg": ("lxml.etree",),
                   **{name: ("pypandoc", "unstructured.partition.html") for name in (*_PANDOC_FORMATS, "xml")},
                   "pdf": ("pdfplumber", "unstructured.partition.text"),
                   "image": ("PIL.Image", "tesserocr", "unstructured.partition.text")}  # pdfplumber imports pdfminer's
_LOADED: set[str] = set()
OCR_FORMATS = ("pdf", "image", "docx", "pptx", "email")  # content types with pictures OCR may read
_ARCHIVES = ("docx", "pptx", "xlsx", "odt", "ods", "odp", "epub", "visio")  # zip formats: checked for their expanded size before parsing
