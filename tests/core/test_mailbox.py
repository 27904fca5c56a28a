"""Mailboxes (.mbox: Thunderbird's folders, Google Takeout's mail) read as their messages, each a
section under its subject read as an .eml is."""

from email.message import EmailMessage

from tests.support.documents import parsed


def message(sender: str, subject: str | None, body: str, attachment: tuple[str, str] | None = None) -> bytes:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Date"] = sender, "ops@acme.example", "Mon, 01 Mar 2021 10:00:00 +0000"
    if subject:
        msg["Subject"] = subject
    msg.set_content(body)
    if attachment:
        msg.add_attachment(attachment[1].encode(), maintype="text", subtype="plain", filename=attachment[0])
    return b"From " + sender.encode() + b" Mon Mar  1 10:00:00 2021\n" + msg.as_bytes() + b"\n"


def test_a_mailbox_reads_as_its_messages():
    mbox = (message("alice@acme.example", "Dock firmware 2.4", "Roll it out this week.\n>From the notes: faster.\n",
                    ("rollout.txt", "Oslo first, then Bergen."))
            + message("bob@acme.example", "Re: Dock firmware 2.4", "Done for all docks in Oslo.\n")
            + message("carol@acme.example", None, "No subject here, just a note.\n")
            + b"From nobody Mon Mar  1 10:00:00 2021\nthis is no message at all\n\n")
    doc = parsed("mail/ops.mbox", mbox)
    found = {doc.text[e.start : e.end]: e.heading_path for e in doc.elements}
    assert doc.content_type == "email" and doc.title == "ops"
    assert found["Roll it out this week. From the notes: faster."] == ("Dock firmware 2.4",)  # mboxrd's >From read
    assert found["Oslo first, then Bergen."] == ("Dock firmware 2.4", "Attachment: rollout.txt")  # its attachment
    assert found["Done for all docks in Oslo."] == ("Re: Dock firmware 2.4",)
    assert found["No subject here, just a note."] == ()  # under no other message's subject
    assert doc.text.endswith("Not read: message 4 (no e-mail headers (From, To, Date, Subject): not an e-mail "
                             "message; check its extension)")


def test_a_mailbox_of_one_message_is_titled_by_its_subject():
    doc = parsed("saved.mbox", message("alice@acme.example", "Quarterly numbers", "See the sheet.\n"))
    assert (doc.title, doc.elements[0].category) == ("Quarterly numbers", "Title")
