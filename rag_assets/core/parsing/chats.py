"""Chat exports read as the conversation they hold: Slack's (a channel's day, an array of
messages), Discord's (DiscordChatExporter's JSON), Telegram Desktop's (result.json), Microsoft
Teams' (Microsoft Graph's chatMessage list, newest first as Graph pages them) and chat messages of
roles (``[{"role": "user", "content": ...}]``, also under ``messages``). A message is a turn,
"[10:15] Alice Smith: text" (a role's turn without a time), under the day it was sent; the
export's markup reads as the app shows it (Slack's ``<https://x|label>`` as "label", ``<@U02>`` as
the member's name where the file names them; a thread's replies after the message that started it).
Service lines (joins, pins, calls) are left out."""

from __future__ import annotations

import html
import re
from datetime import datetime, timezone

# Slack's markup in a message's text: <@U02|name>, <#C01|general>, <!here>, <https://x|label>, <mailto:a@b>.
_SLACK_MARKUP = re.compile(r"<([@#!]?)([^<>|\s]+)(?:\|([^<>]*))?>")
_SLACK_SERVICE = frozenset(("channel_join", "channel_leave", "channel_purpose", "channel_topic", "channel_name",
                            "channel_archive", "channel_unarchive", "pinned_item", "unpinned_item", "group_join",
                            "group_leave", "bot_add", "bot_remove", "tombstone"))
_ROLES = frozenset(("system", "user", "assistant", "tool", "developer", "function", "model"))
MIN_SHARE = 0.8  # of an array's objects that must be messages for it to read as a chat


def chat_items(value) -> tuple[list[tuple], str] | None:
    """Items (``join_elements``' tuples) of a chat export and its title (a Discord channel, a
    Telegram chat), or None for JSON that holds no chat export."""
    for reader in (_slack, _discord, _telegram, _teams, _roles):
        if (read := reader(value)) is not None:
            turns, title = read
            return _items(turns), title
    return None


def _items(turns: list[tuple[datetime | None, str, str]]) -> list[tuple]:
    """``_turn_items`` of turns timed by ``datetime`` (a day by its ISO date), empty ones left out."""
    return _turn_items([(when.date().isoformat() if when else None, f"{when:%H:%M}" if when else None, speaker,
                         text.strip()) for when, speaker, text in turns if text.strip()])


def _turn_items(turns: list[tuple[str | None, str | None, str, str]]) -> list[tuple]:
    """Items of (day, clock, speaker, text) turns: a day's title before its first turn, then a turn
    an item, "[10:15] Alice Smith: text" (no stamp without a clock)."""
    items: list[tuple] = []
    day = None
    for when, clock, speaker, text in turns:
        if when is not None and when != day:
            day = when
            items.append(("Title", day, None))
        items.append(("NarrativeText", f"[{clock}] {speaker}: {text}" if clock else f"{speaker}: {text}", None))
    return items


# A WhatsApp export's message line: "[04/03/2021, 10:15:02] Alice: text" (iPhone) or "04/03/2021, 10:15 - Alice: text"
# (Android), 12-hour times with AM/PM too; the date as the phone wrote it.
_WHATSAPP = re.compile(r"\u200e?(?:\[(?P<d1>\d{1,4}[./-]\d{1,2}[./-]\d{1,4}),? (?P<t1>\d{1,2}:\d{2})(?::\d{2})?"
                       r"(?:\s?(?P<p1>[AaPp]\.?[Mm]\.?))?\]"
                       r"|(?P<d2>\d{1,4}[./-]\d{1,2}[./-]\d{1,4}),? (?P<t2>\d{1,2}:\d{2})"
                       r"(?::\d{2})?(?:\s?(?P<p2>[AaPp]\.?[Mm]\.?))? -) (?:(?P<who>[^:\n]{1,80}): )?(?P<text>.*)")
MIN_WHATSAPP_LINES = 3


def whatsapp_items(text: str) -> list[tuple] | None:
    """A WhatsApp chat exported as text ("Export chat"): a message a turn "[10:15] Alice: text" (a
    12-hour time as 24), its following lines with it, under the day it was sent as the export writes
    it; the app's own lines (encryption, "Alice added Bob") left out. None for other text: fewer
    than ``MIN_WHATSAPP_LINES`` message lines, or under half its lines."""
    lines = [line for line in text.splitlines() if line.strip()]
    matches = [_WHATSAPP.fullmatch(line) for line in lines[:MIN_WHATSAPP_LINES * 2]]
    if not any(matches):  # most text: no such line, and no need to read the rest
        return None
    matches += [_WHATSAPP.fullmatch(line) for line in lines[len(matches):]]
    messages = sum(1 for m in matches if m is not None and m["who"])
    if messages < MIN_WHATSAPP_LINES or messages < 0.5 * len(lines):
        return None
    turns: list[tuple[str, str, str, str]] = []
    opened = False  # whether the last line with a date was a message (its next lines are the message's)
    for line, match in zip(lines, matches):
        if match is None:
            if opened:
                day, clock, who, said = turns[-1]
                turns[-1] = (day, clock, who, said + "\n" + line)
            continue
        opened = bool(match["who"])
        if not opened:  # the app's own line
            continue
        clock, meridiem = match["t1"] or match["t2"], match["p1"] or match["p2"]
        hours, minutes = (int(part) for part in clock.split(":"))
        if meridiem:
            hours = hours % 12 + (12 if meridiem[0] in "Pp" else 0)
        turns.append((match["d1"] or match["d2"], f"{hours:02d}:{minutes:02d}", match["who"].strip(), match["text"]))
    return _turn_items(turns)


def _mostly(records, test) -> bool:
    objects = [r for r in records if isinstance(r, dict)] if isinstance(records, list) else []
    return bool(objects) and sum(1 for r in objects if test(r)) >= MIN_SHARE * len(records)


def _slack(value):
    if not _mostly(value, lambda m: m.get("type") == "message" and "ts" in m and isinstance(m.get("text"), str)):
        return None
    names = {}
    for message in value:
        profile = message.get("user_profile") if isinstance(message, dict) else None
        if isinstance(profile, dict) and message.get("user"):
            names[message["user"]] = profile.get("real_name") or profile.get("display_name") or message["user"]

    def shown(match: re.Match) -> str:
        sigil, target, label = match.groups()
        if sigil == "@":
            return "@" + (label or names.get(target, target))
        if sigil == "#":
            return "#" + (label or target)
        if sigil == "!":
            return "@" + (label or target.split("^", 1)[0])
        return label or target.removeprefix("mailto:")

    messages = []  # (ts, thread_ts, turn)
    for message in value:
        if not isinstance(message, dict) or message.get("subtype") in _SLACK_SERVICE:
            continue
        speaker = names.get(message.get("user", "")) or message.get("username") or message.get("user") \
            or message.get("bot_id") or "unknown"
        text = html.unescape(_SLACK_MARKUP.sub(shown, message.get("text") or ""))
        files = [f.get("name") or f.get("title") for f in message.get("files") or () if isinstance(f, dict)]
        text += "".join(f"\n[file: {name}]" for name in files if name)
        messages.append((message.get("ts"), message.get("thread_ts"), (_epoch(message.get("ts")), str(speaker), text)))
    return _threaded(messages), ""


def _threaded(messages: list[tuple]) -> list[tuple]:
    """Slack's turns with each thread's replies right after the message that started it, as the app
    shows a thread (the export lists them in time order among the channel's messages), where both
    were sent on the same day; other replies where they were sent."""
    days = {ts: turn[0].date() if turn[0] else None for ts, _, turn in messages}
    replies: dict[str, list[tuple]] = {}
    top = []
    for ts, parent, turn in messages:
        if parent and parent != ts and parent in days and days[parent] == days[ts]:
            replies.setdefault(parent, []).append(turn)
        else:
            top.append((ts, turn))
    return [shown for ts, turn in top for shown in (turn, *replies.pop(ts, ()))] + [
        turn for orphans in replies.values() for turn in orphans]


def _discord(value):
    messages = value.get("messages") if isinstance(value, dict) else None
    if not _mostly(messages, lambda m: isinstance(m.get("author"), dict) and "content" in m and "timestamp" in m):
        return None
    turns = []
    for message in messages:
        if not isinstance(message, dict) or message.get("type") not in (None, "Default", "Reply"):
            continue
        author = message.get("author") or {}
        attachments = [a.get("fileName") for a in message.get("attachments") or () if isinstance(a, dict)]
        text = str(message.get("content") or "") + "".join(f"\n[file: {name}]" for name in attachments if name)
        turns.append((_iso(message.get("timestamp")), str(author.get("nickname") or author.get("name") or "unknown"),
                      text))
    channel = value.get("channel") if isinstance(value.get("channel"), dict) else {}
    guild = value.get("guild") if isinstance(value.get("guild"), dict) else {}
    title = " / ".join(str(part) for part in (guild.get("name"), channel.get("name")) if part)
    return turns, title


def _telegram(value):
    messages = value.get("messages") if isinstance(value, dict) else None
    if not _mostly(messages, lambda m: "date" in m and "text" in m and m.get("type") in ("message", "service")):
        return None
    turns = []
    for message in messages:
        if not isinstance(message, dict) or message.get("type") != "message":
            continue
        text = message.get("text")
        if isinstance(text, list):  # formatted text: strings and {"type": "bold", "text": ...} pieces
            text = "".join(part if isinstance(part, str) else str(part.get("text", "")) for part in text
                           if isinstance(part, (str, dict)))
        turns.append((_iso(message.get("date")), str(message.get("from") or "unknown"), str(text or "")))
    return turns, str(value.get("name") or "")


def _teams(value):
    """Microsoft Teams messages as Microsoft Graph lists them (``chatMessage`` resources, also under
    ``value``): the sender's display name, the body's text (HTML read as its text)."""
    messages = value.get("value") if isinstance(value, dict) else value
    if not _mostly(messages, lambda m: "createdDateTime" in m and isinstance(m.get("body"), dict)
                   and "messageType" in m):
        return None
    turns = []
    for message in messages:
        if not isinstance(message, dict) or message.get("messageType") != "message":
            continue
        sender = message.get("from") if isinstance(message.get("from"), dict) else {}
        who = next((party.get("displayName") for party in (sender.get("user"), sender.get("application"))
                    if isinstance(party, dict) and party.get("displayName")), "unknown")
        body = message["body"]
        text = str(body.get("content") or "")
        if str(body.get("contentType", "")).lower() == "html":
            text = _html_text(text)
        turns.append((_iso(message.get("createdDateTime")), str(who), text))
    turns.sort(key=lambda turn: (turn[0] is None, turn[0] or datetime.min.replace(tzinfo=timezone.utc)))
    return turns, ""


def _html_text(markup: str) -> str:
    """An HTML message body's text: a line a paragraph or line break, tags and entities read."""
    markup = re.sub(r"(?i)<br\s*/?>|</(?:p|div|li)\s*>", "\n", markup)
    return html.unescape(re.sub(r"<[^<>]*>", "", markup))


def _roles(value):
    messages = value.get("messages") if isinstance(value, dict) else value
    if not _mostly(messages, lambda m: m.get("role") in _ROLES and isinstance(m.get("content"), (str, list))):
        return None
    turns = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if isinstance(content, list):  # parts: {"type": "text", "text": ...}, pictures and the like left out
            content = "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
        turns.append((None, str(message.get("name") or message.get("role")), str(content or "")))
    return turns, ""


def _epoch(ts) -> datetime | None:
    try:
        return datetime.fromtimestamp(float(ts), tz=timezone.utc)
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def _iso(stamp) -> datetime | None:
    """An ISO 8601 time as written (its own offset's wall clock), or None."""
    try:
        return datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    except ValueError:
        return None
