"""iCalendar files (.ics) read as their events, to-dos and journal entries; an invitation attached to an
e-mail too. They were text: folded property lines, escaped commas and "\\n", TZID parameters indexed."""

from email.message import EmailMessage

import pytest

from rag_assets.core.parsing import DocumentError
from tests.support.documents import parsed

CALENDAR = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Acme//Ops//EN\r\nX-WR-CALNAME:Ops calendar\r\n"
    "BEGIN:VEVENT\r\nUID:1@acme\r\nSUMMARY:Dock firmware review\r\n"
    "DTSTART;TZID=Europe/Berlin:20260304T100000\r\nDTEND;TZID=Europe/Berlin:20260304T110000\r\n"
    "RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=WE,FR;UNTIL=20260630T000000Z\r\nLOCATION:Room 4.12\\, Building B\r\n"
    "ORGANIZER;CN=Alice Smith:mailto:alice@acme.example\r\n"
    "ATTENDEE;CN=Bob Jones;ROLE=REQ-PARTICIPANT:mailto:bob@acme.example\r\nATTENDEE:mailto:carol@acme.example\r\n"
    "DESCRIPTION:Agenda:\\n1. Rollout status\\n2. Next st\r\n eps\\n\\nJoin: https://meet.example/abc\r\n"
    "END:VEVENT\r\n"
    "BEGIN:VEVENT\r\nUID:2@acme\r\nSUMMARY:Offsite\r\nDTSTART;VALUE=DATE:20260410\r\nDTEND;VALUE=DATE:20260412\r\n"
    "RRULE:FREQ=YEARLY;BYMONTH=4;BYDAY=2FR\r\n"
    "STATUS:TENTATIVE\r\nEND:VEVENT\r\n"
    "BEGIN:VTODO\r\nUID:3@acme\r\nSUMMARY:Order spare docks\r\nDUE:20260320T170000Z\r\nEND:VTODO\r\n"
    "BEGIN:VEVENT\r\nUID:4@acme\r\nDTSTART:20260305T090000Z\r\nDURATION:PT30M\r\n"
    "RRULE:FREQ=MONTHLY;BYDAY=-1MO;COUNT=3\r\nEND:VEVENT\r\n"
    "END:VCALENDAR\r\n")


def test_a_calendar_reads_as_its_entries_each_under_its_summary():
    doc = parsed("calendars/ops.ics", CALENDAR.encode())
    assert (doc.content_type, doc.title) == ("calendar", "Ops calendar")
    assert doc.text == (
        "Dock firmware review\n\nWhen: 2026-03-04 10:00 - 11:00 (Europe/Berlin)\n\n"
        "Repeats: every 2 weeks on Wednesday and Friday, until 2026-06-30\n\n"
        "Where: Room 4.12, Building B\n\nOrganizer: Alice Smith <alice@acme.example>\n\n"
        "Attendees: Bob Jones <bob@acme.example>, carol@acme.example\n\n"
        "Agenda:\n1. Rollout status\n2. Next steps\n\nJoin: https://meet.example/abc\n\n"
        "Offsite\n\nWhen: 2026-04-10 - 2026-04-11\n\n"  # an all-day end is the day after
        "Repeats: every year in April on the second Friday\n\nStatus: TENTATIVE\n\n"
        "Order spare docks\n\nDue: 2026-03-20 17:00 (UTC)\n\n"
        "Event\n\nWhen: 2026-03-05 09:00 - 09:30 (UTC)\n\n"  # no summary; its end from its duration
        "Repeats: every month on the last Monday, 3 times")
    sections = {doc.text[e.start:e.end]: e.heading_path for e in doc.elements}
    assert sections["Where: Room 4.12, Building B"] == ("Dock firmware review",)
    assert sections["Due: 2026-03-20 17:00 (UTC)"] == ("Order spare docks",)
    assert "TZID" not in doc.text and "\\," not in doc.text and "mailto:" not in doc.text


def test_an_invitation_attached_to_an_e_mail_reads_as_its_event():
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = "alice@acme.example", "bob@acme.example", "Invitation"
    message.set_content("Please join the review.")
    message.add_attachment(CALENDAR.encode(), maintype="text", subtype="calendar", filename="invite.ics")
    doc = parsed("mail/invite.eml", bytes(message))
    assert "When: 2026-03-04 10:00 - 11:00 (Europe/Berlin)" in doc.text and "DTSTART" not in doc.text


def test_a_file_named_ics_that_is_no_calendar_reads_as_text_and_a_binary_one_fails():
    note = b"Call the dock vendor on Monday.\n"
    assert parsed("notes.ics", note).text == parsed("notes.txt", note).text
    with pytest.raises(DocumentError, match="binary, not text"):
        parsed("blob.ics", bytes(range(256)) * 8)
    with pytest.raises(DocumentError, match="no text"):  # a calendar without entries
        parsed("empty.ics", b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n")


def test_a_rule_said_in_words_only_where_every_part_of_it_is():
    def repeats(rule: str) -> str:
        data = ("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nSUMMARY:Payroll\r\nDTSTART;VALUE=DATE:20260115\r\n"
                f"RRULE:{rule}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n").encode()
        return parsed("payroll.ics", data).text.split("Repeats: ")[1]

    assert repeats("FREQ=DAILY;COUNT=10") == "every day, 10 times"
    assert repeats("FREQ=MONTHLY;BYMONTHDAY=15") == "FREQ=MONTHLY;BYMONTHDAY=15"  # a part not said: as written
    assert repeats("FREQ=MONTHLY;BYDAY=9MO") == "FREQ=MONTHLY;BYDAY=9MO"  # a ninth Monday: no such ordinal
