"""Chat exports (Slack, Discord, Telegram, Microsoft Teams, role/content messages) read as their conversation: a
message a turn under its day; other JSON records stay a table."""

import json

from rag_assets.config.profiles import profile_from_config
from rag_assets.config.schema import ChunkingProfileConfig
from rag_assets.core.chunking import chunk_document
from rag_assets.core.hashing import content_hash
from rag_assets.core.models import RawDocument
from rag_assets.core.parsing import parse_document
from rag_assets.core.tokens import get_token_counter


def parsed(doc_id: str, value):
    data = json.dumps(value).encode()
    return parse_document(RawDocument(doc_id, f"file:///{doc_id}", content_hash(data), len(data), "v1", data))


SLACK_DAY = [
    {"type": "message", "subtype": "channel_join", "user": "U01", "text": "<@U01> has joined the channel",
     "ts": "1614852000.000100"},
    {"type": "message", "user": "U01", "ts": "1614852900.000200",
     "user_profile": {"real_name": "Alice Smith", "display_name": "alice"},
     "text": "Dock firmware 2.4 is out, see <https://acme.example/notes|the release notes> &amp; ping <@U02>",
     "blocks": [{"type": "rich_text", "elements": []}]},
    {"type": "message", "user": "U02", "ts": "1614853020.000300", "thread_ts": "1614852900.000200",
     "user_profile": {"real_name": "Bob Jones"}, "text": "Rolled it out to <#C01|ops> docks <!here>",
     "files": [{"name": "rollout.csv"}]},
    {"type": "message", "user": "U01", "ts": "1614939600.000400",
     "user_profile": {"real_name": "Alice Smith"}, "text": "All docks report 2.4 today."},
]


def test_a_slack_channel_day_reads_as_its_conversation():
    doc = parsed("slack/ops/2021-03-04.json", SLACK_DAY)
    assert doc.text == (
        "2021-03-04\n\n"
        "[10:15] Alice Smith: Dock firmware 2.4 is out, see the release notes & ping @Bob Jones\n\n"
        "[10:17] Bob Jones: Rolled it out to #ops docks @here\n[file: rollout.csv]\n\n"
        "2021-03-05\n\n"
        "[10:20] Alice Smith: All docks report 2.4 today.")
    found = {doc.text[e.start : e.end]: (e.category, e.heading_path) for e in doc.elements}
    assert found["[10:20] Alice Smith: All docks report 2.4 today."] == ("NarrativeText", ("2021-03-05",))
    assert "rich_text" not in doc.text and "has joined" not in doc.text  # no block JSON, no service line


def test_a_slack_thread_s_replies_follow_the_message_that_started_it():
    """The export lists a thread's replies in time order among the channel's messages: a question and
    its answer were turns apart, often chunks apart. They follow it, as the app shows a thread; a reply
    whose thread started on another day (in another day's file) stays where it was sent."""
    def message(ts, who, text, thread=None):
        return {"type": "message", "user": who, "ts": ts, "text": text, **({"thread_ts": thread} if thread else {})}

    day = [message("1614852900.0001", "alice", "How do I reset dock 4?", "1614852900.0001"),
           message("1614853000.0001", "carol", "Lunch at noon?"),
           message("1614853100.0001", "bob", "Hold reset for ten seconds.", "1614852900.0001"),
           message("1614853200.0001", "dan", "Yes, noon."),
           message("1614853300.0001", "erin", "And on dock 5 too?", "1614766500.0001"),  # yesterday's thread
           message("1614853400.0001", "alice", "Thanks, it works.", "1614852900.0001")]
    assert parsed("slack/ops/2021-03-04.json", day).text == (
        "2021-03-04\n\n[10:15] alice: How do I reset dock 4?\n\n[10:18] bob: Hold reset for ten seconds.\n\n"
        "[10:23] alice: Thanks, it works.\n\n[10:16] carol: Lunch at noon?\n\n[10:20] dan: Yes, noon.\n\n"
        "[10:21] erin: And on dock 5 too?")


def test_discord_telegram_and_role_messages_read_as_turns():
    discord = {"guild": {"name": "Acme"}, "channel": {"name": "support"}, "messages": [
        {"type": "Default", "timestamp": "2024-05-01T09:05:00+02:00", "author": {"name": "carol", "nickname": "Carol"},
         "content": "The dock blinks red.", "attachments": [{"fileName": "dock.jpg"}]},
        {"type": "ChannelPinnedMessage", "timestamp": "2024-05-01T09:06:00+02:00", "author": {"name": "bot"},
         "content": "pinned a message"},
        {"type": "Reply", "timestamp": "2024-05-01T09:07:00+02:00", "author": {"name": "dan"},
         "content": "Hold the reset button for ten seconds."}]}
    doc = parsed("discord/support.json", discord)
    assert doc.title == "Acme / support"
    assert doc.text == ("2024-05-01\n\n[09:05] Carol: The dock blinks red.\n[file: dock.jpg]\n\n"
                        "[09:07] dan: Hold the reset button for ten seconds.")
    telegram = {"name": "Field team", "type": "private_group", "messages": [
        {"id": 1, "type": "service", "date": "2023-01-02T08:00:00", "actor": "Eve", "action": "create_group",
         "text": ""},
        {"id": 2, "type": "message", "date": "2023-01-02T08:01:00", "from": "Eve",
         "text": ["Battery swap ", {"type": "bold", "text": "done"}, " at site 4."]}]}
    doc = parsed("telegram/result.json", telegram)
    assert (doc.title, doc.text) == ("Field team", "2023-01-02\n\n[08:01] Eve: Battery swap done at site 4.")
    teams = {"value": [  # Microsoft Graph pages a chat's messages newest first
        {"messageType": "message", "createdDateTime": "2024-02-01T10:05:00.000Z",
         "from": {"user": {"displayName": "Bob Jones"}},
         "body": {"contentType": "html", "content": "<p>Done &amp; deployed</p><p>see <a href='x'>the log</a></p>"}},
        {"messageType": "systemEventMessage", "createdDateTime": "2024-02-01T10:01:00Z", "from": None,
         "body": {"contentType": "html", "content": "<systemEventMessage/>"}},
        {"messageType": "message", "createdDateTime": "2024-02-01T10:00:00.000Z",
         "from": {"user": {"displayName": "Alice Smith"}}, "body": {"contentType": "text", "content": "Deploy today?"}}]}
    assert parsed("teams/ops.json", teams).text == ("2024-02-01\n\n[10:00] Alice Smith: Deploy today?\n\n"
                                                    "[10:05] Bob Jones: Done & deployed\nsee the log")
    roles = {"messages": [{"role": "user", "content": "How do I reset the dock?"},
                          {"role": "assistant", "content": [{"type": "text", "text": "Hold reset for 10 s."}]}]}
    assert parsed("logs/chat.json", roles).text == "user: How do I reset the dock?\n\nassistant: Hold reset for 10 s."


def test_other_json_records_stay_a_table():
    """Records that are no chat (a message queue's payloads, tickets with a role field) read as before."""
    records = [{"type": "message", "id": 1, "body": "queued"}, {"type": "message", "id": 2, "body": "sent"}]
    doc = parsed("queue.json", records)
    assert doc.elements[0].category == "Table" and "| type | id | body |" in doc.text
    tickets = [{"role": "admin", "content": "Reset the dock"}, {"role": "viewer", "content": "Read logs"}]
    assert parsed("roles.json", tickets).elements[0].category == "Table"


def test_a_chat_is_chunked_at_its_turns():
    """A long conversation under the default profile: no turn is cut between two chunks (the
    transcript strategy, as a meeting transcript is), every chunk under its day."""
    messages = [{"type": "message", "user": "U0" + str(n % 3), "ts": str(1614852900 + 60 * n),
                 "user_profile": {"real_name": ["Alice Smith", "Bob Jones", "Carol King"][n % 3]},
                 "text": f"Update {n}: dock {n} was checked, its firmware and battery are fine and logged."}
                for n in range(60)]
    doc = parsed("slack/ops/2021-03-04.json", messages)
    profile = profile_from_config(ChunkingProfileConfig(name="p", strategy="auto", max_tokens=120, min_tokens=20))
    result = chunk_document(doc, profile, get_token_counter("cl100k_base"), 8191)
    assert {c.strategy for c in result.chunks} == {"transcript"}
    for n in range(60):
        holding = [c for c in result.chunks if f"Update {n}:" in c.text]
        assert len(holding) == 1 and f"Update {n}: dock {n} was checked" in holding[0].text
    assert all(c.heading_path == ("2021-03-04",) for c in result.chunks)


def test_a_whatsapp_text_export_reads_as_turns_under_its_days():
    """iPhone's and Android's export lines (12-hour times as 24); a message's next lines stay with
    it; the app's own lines are left out; other text is read as it was."""
    iphone = ("[04/03/2021, 10:15:02] Messages and calls are end-to-end encrypted. No one outside can read them.\n"
              "[04/03/2021, 10:15:02] Alice Smith: Dock firmware 2.4 is out\n"
              "[04/03/2021, 10:17:40] Bob Jones: Rolled it out to the Oslo docks.\nTwo needed a restart.\n"
              "[05/03/2021, 09:01:00] Alice Smith: All docks report 2.4: done.\n")
    doc = parse_document(RawDocument("chats/ops.txt", "", "h", len(iphone), "", iphone.encode()))
    assert doc.text == ("04/03/2021\n\n[10:15] Alice Smith: Dock firmware 2.4 is out\n\n"
                        "[10:17] Bob Jones: Rolled it out to the Oslo docks.\nTwo needed a restart.\n\n"
                        "05/03/2021\n\n[09:01] Alice Smith: All docks report 2.4: done.")
    android = "3/4/21, 10:15 AM - Alice Smith: Out\n3/4/21, 1:17 PM - Bob Jones: Rolled\n3/4/21, 1:20 PM - Bob: ok\n"
    doc = parse_document(RawDocument("chats/a.txt", "", "h", len(android), "", android.encode()))
    assert doc.text == "3/4/21\n\n[10:15] Alice Smith: Out\n\n[13:17] Bob Jones: Rolled\n\n[13:20] Bob: ok"
    notes = "Meeting notes\n\n12/01/2024, 10:00 - Kickoff: agreed on scope\nEverything else as planned.\n"
    assert parse_document(RawDocument("notes.txt", "", "h", len(notes), "", notes.encode())).text == notes
