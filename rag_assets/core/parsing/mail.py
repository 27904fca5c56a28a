"""E-mail messages (.eml, Outlook's .msg) and mailboxes (.mbox: a message a section): subject and
senders, the body (a quoted message under the line introducing it), what OCR reads in its
screenshots, then its attachments, each read as its format is."""

from __future__ import annotations

import io
import mimetypes
import re

from rag_assets.core.parsing.decode import decode_text
from rag_assets.core.parsing.formats import ARCHIVES, content_type_for, read_format
from rag_assets.core.parsing.items import NO_LANGUAGE, UNTITLED, join_elements, unstructured_items
from rag_assets.core.parsing.limits import ParseLimitExceeded, ParseLimits
from rag_assets.core.parsing.packages import OLE_MAGIC
from rag_assets.core.parsing.pdf import pictures_text
from rag_assets.core.parsing.web import readable_html


def parse_email(data: bytes, limits: ParseLimits | None = None):
    """An e-mail message, Internet (.eml) or Outlook (.msg, told apart by content, so a misnamed
    one reads too): its subject (the title), a line each of From, To, Cc and Date, its body as
    unstructured reads it (the HTML body where there is one; a message it quotes or forwards under
    the line introducing it, ``_quoted_message_title``), then, given ``limits``, each
    attachment under a heading "Attachment: <name>", parsed as its name's format (an attached
    message without its own attachments). An "Attachments" line names them, with the cause for
    each one not read (an image without text, audio, an unreadable file). Of the images the HTML
    body shows, what OCR reads in those of a screenshot's size (``MIN_SCREENSHOT_PIXELS``) follows
    the body."""
    if data.startswith(b"From "):  # a mailbox (an mbox file: Thunderbird's folders, Google Takeout's mail)
        return _mailbox(data, limits)
    from rag_assets.core.parsing.offline import prepare_unstructured

    prepare_unstructured()
    subject, fields, body, attachments, shown, plain = \
        (_outlook_parts if data.startswith(OLE_MAGIC) else _internet_parts)(data)
    subject = " ".join(subject.split())
    fields = [(name, " ".join(value.split())) for name, value in fields if value.strip()]
    if not fields and not subject:
        raise ValueError("no e-mail headers (From, To, Date, Subject): not an e-mail message; check its extension")
    level = 2 if subject else 1  # the body's headings and each attachment's: under the subject
    read: list[tuple] = []
    names = []
    for name, payload in attachments if limits is not None else ():
        try:
            parsed = attachment_items(name, payload, limits, level)
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
    pictured = pictures_text([image for image in shown if _screenshot_sized(image)], None) if limits is not None else []
    body_items = unstructured_items(body, under=level - 1)
    if plain is not None:  # a plain-text body has no headings: unstructured's short-line guesses ("Cheers,", "Bob") are text
        body_items = [("NarrativeText", *rest) if category == "Title" else (category, *rest)
                      for category, *rest in body_items]
    if plain is None or _top_posted(plain):
        body_items = [_quoted_message_title(item, level) for item in body_items]
    text, spans = join_elements(items + body_items + pictured + read)
    return text, spans, subject


# A message's first line in an mbox file: "From <sender> <date>", at the file's start or after a blank line.
_MBOX_FROM = re.compile(rb"(?:\A|(?<=\n\n)|(?<=\r\n\r\n))From [^\r\n]*\r?\n")
_MBOX_QUOTED_FROM = re.compile(rb"^>(>*From )", re.M)  # a body line "From ..." as mboxrd writes it


def _mailbox(data: bytes, limits: ParseLimits | None):
    """An mbox file's messages, each read as a message is (``parse_email``: a section under its
    subject, its senders, body and attachments), in the file's order; one that cannot be read is
    named on a line of its own. Titled by its one message's subject (a file of several: none)."""
    starts = [(m.start(), m.end()) for m in _MBOX_FROM.finditer(data)]
    items: list[tuple] = []
    subjects, failed = [], []
    for n, (_, begin) in enumerate(starts):
        message = _MBOX_QUOTED_FROM.sub(rb"\1", data[begin : starts[n + 1][0] if n + 1 < len(starts) else len(data)])
        try:
            text, elements, subject = parse_email(message, limits)
        except Exception as exc:  # noqa: BLE001 - one bad message: the others are read
            failed.append(f"message {n + 1} ({exc})")
            continue
        subjects.append(subject)
        items.append((UNTITLED, "", None))  # a message without a subject is under no other's
        items += [(e.category, text[e.start : e.end], e.page, len(e.heading_path), e.ocr, e.heading_path[-1])
                  if e.category == "Title" and e.heading_path else (e.category, text[e.start : e.end], e.page, 0, e.ocr)
                  for e in elements]
    if not subjects:
        raise ValueError(f"no message of the mailbox could be read: {'; '.join(failed)[:300]}")
    if failed:
        items += [(UNTITLED, "", None), ("UncategorizedText", "Not read: " + "; ".join(failed), None)]
    text, spans = join_elements(items)
    return text, spans, subjects[0] if len(subjects) == 1 else ""


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


def attachment_items(name: str, data: bytes, limits: ParseLimits, level: int) -> list[tuple]:
    """An attachment's elements as items, its headings under the attachment's ``level``."""
    content_type = content_type_for(name)
    media = (mimetypes.guess_type(name)[0] or "").split("/")[0]
    if media in ("audio", "video") or (media == "image" and content_type != "image"):
        raise _Unread(f"{'an' if media[0] in 'aeiou' else 'a'} {media} file")
    if content_type in ARCHIVES:
        try:
            limits.check_archive(data)
        except ParseLimitExceeded:
            raise _Unread("expands over the source's max_expanded_mb") from None
    text, elements, _ = read_format(content_type, data)  # an attached message: without its attachments
    if not text.strip():
        raise _Unread("OCR found no text" if content_type == "image" else "no text")
    return [(e.category, text[e.start : e.end], e.page, level + max(len(e.heading_path), 1), e.ocr,
             e.heading_path[-1] if e.category == "Title" and e.heading_path else None) for e in elements]


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
        body = partition_html(text=readable_html(_part_text(shown_body)), languages=NO_LANGUAGE)
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
        elements = partition_html(text=readable_html(html_body), languages=NO_LANGUAGE)
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
