"""vCard files (.vcf) read as their contacts, as an address book lists them; they were an unknown extension,
read as text: escaped, folded and quoted-printable property lines, a photo's base64 indexed."""

import pytest

from rag_assets.core.parsing import DocumentError
from tests.support.documents import parsed

CARDS = (
    "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Alice Smith\r\nN:Smith;Alice;;Dr.;\r\nORG:Acme Robotics;Field Service\r\n"
    "TITLE:Dock firmware lead\r\nitem1.EMAIL;TYPE=INTERNET,WORK:alice@acme.example\r\n"
    "EMAIL;TYPE=home:ali@mail.example\r\n"
    "TEL;TYPE=cell:+49 170 1234567\r\nADR;TYPE=work:;;Hauptstr. 1;Berlin;;10115;Germany\r\n"
    "NOTE:On call for dock outages\\, weekdays.\\nEscalate to Bo\r\n b.\r\nCATEGORIES:ops,docks\r\n"
    "PHOTO;ENCODING=b;TYPE=JPEG:/9j/4AAQSkZJRgABAQ\r\nEND:VCARD\r\n"
    # a phone's vCard 2.1: a bare type, a structured name of two fields, a quoted-printable note over two lines
    "BEGIN:VCARD\r\nVERSION:2.1\r\nN:Jones;Bob\r\nTEL;CELL;PREF:+1 555 0100\r\n"
    "NOTE;ENCODING=QUOTED-PRINTABLE;CHARSET=UTF-8:Gr=C3=BC=C3=9Fe aus M=C3=\r\n=BCnchen\r\nEND:VCARD\r\n"
    "BEGIN:VCARD\r\nVERSION:4.0\r\nEND:VCARD\r\n"  # empty: left out
    "BEGIN:VCARD\r\nVERSION:4.0\r\nEMAIL:ops@acme.example\r\nEND:VCARD\r\n")  # no name: its address


def test_a_vcard_file_reads_as_its_contacts_each_under_its_name():
    doc = parsed("contacts/team.vcf", CARDS.encode())
    assert (doc.content_type, doc.title) == ("contacts", "team")
    assert doc.text == (
        "Alice Smith\n\nOrganization: Acme Robotics, Field Service\n\nTitle: Dock firmware lead\n\n"
        "Email: alice@acme.example (work)\n\nEmail: ali@mail.example (home)\n\nPhone: +49 170 1234567 (cell)\n\n"
        "Address: Hauptstr. 1, 10115 Berlin, Germany (work)\n\nCategories: ops, docks\n\n"
        "Note: On call for dock outages, weekdays.\nEscalate to Bob.\n\n"
        "Bob Jones\n\nPhone: +1 555 0100 (cell)\n\nNote: Grüße aus München\n\n"
        "ops@acme.example\n\nEmail: ops@acme.example")
    sections = {doc.text[e.start:e.end]: e.heading_path for e in doc.elements}
    assert sections["Phone: +1 555 0100 (cell)"] == ("Bob Jones",)
    assert "/9j/" not in doc.text and "PHOTO" not in doc.text


def test_a_file_named_vcf_that_holds_no_card_reads_as_text():
    note = b"Call Alice about the dock outage.\n"
    assert parsed("notes.vcf", note).text == parsed("notes.txt", note).text
    with pytest.raises(DocumentError, match="no text"):
        parsed("empty.vcf", b"BEGIN:VCARD\r\nVERSION:4.0\r\nEND:VCARD\r\n")
