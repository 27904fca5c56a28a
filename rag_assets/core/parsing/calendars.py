"""iCalendar files (``.ics``: a calendar's export, a meeting invitation) read as a calendar app lists
them: each event, to-do or journal entry a section under its summary, with when it happens (in its
own time zone), how it repeats, where, who organises and attends, then its description."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

from rag_assets.core.parsing.items import join_elements
from rag_assets.core.parsing.text_formats import parse_text

_ENTRIES = {"VEVENT": "Event", "VTODO": "To-do", "VJOURNAL": "Journal entry"}
_UNITS = {"SECONDLY": "second", "MINUTELY": "minute", "HOURLY": "hour", "DAILY": "day", "WEEKLY": "week",
          "MONTHLY": "month", "YEARLY": "year"}
_DAYS = {"MO": "Monday", "TU": "Tuesday", "WE": "Wednesday", "TH": "Thursday", "FR": "Friday", "SA": "Saturday",
         "SU": "Sunday"}
_ORDINALS = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth", -1: "last", -2: "second to last"}


def parse_calendar(data: bytes):
    """An iCalendar file's entries (``calendar_items``) and its title (``X-WR-CALNAME``); a file that
    icalendar cannot read is read as text (its lines are what it holds)."""
    import icalendar

    try:
        calendars = icalendar.Calendar.from_ical(data, multiple=True)
    except (ValueError, KeyError, IndexError, TypeError):  # not iCalendar: icalendar raises these for bad lines
        return parse_text("text", data)
    items = [item for calendar in calendars for item in calendar_items(calendar)]
    text, spans = join_elements(items)
    title = next((str(c.get("X-WR-CALNAME")) for c in calendars if c.get("X-WR-CALNAME")), "")
    return text, spans, " ".join(title.split())[:200]


def calendar_items(calendar) -> list[tuple[str, str, None]]:
    """Items (``join_elements``' tuples) of a parsed calendar's entries in the file's order: a title
    (its summary, else "Event", "To-do" or "Journal entry"), then a line each for when ("When:
    2026-03-04 10:00 - 11:00 (Europe/Berlin)", an all-day entry by its dates), its due date, how it
    repeats (``_repeats``), where, its status where it is not confirmed, its organiser and
    attendees (name and address) and its link, then its description's paragraphs."""
    items: list[tuple[str, str, None]] = []
    for entry in calendar.walk():
        if entry.name not in _ENTRIES:
            continue
        items.append(("Title", _text(entry.get("SUMMARY")) or _ENTRIES[entry.name], None))
        lines = [("When", _when(entry)), ("Due", _moment(entry, "DUE")),
                 ("Repeats", _repeats(entry.get("RRULE"))),
                 ("Where", _text(entry.get("LOCATION"))),
                 ("Status", "" if str(entry.get("STATUS", "")).upper() in ("", "CONFIRMED")
                  else _text(entry["STATUS"])),
                 ("Organizer", _people(entry.get("ORGANIZER"))), ("Attendees", _people(entry.get("ATTENDEE"))),
                 ("Link", _text(entry.get("URL")))]
        items += [("NarrativeText", f"{label}: {value}", None) for label, value in lines if value]
        description = str(entry.get("DESCRIPTION") or "").replace("\r\n", "\n")
        items += [("NarrativeText", paragraph.strip(), None) for paragraph in description.split("\n\n")
                  if paragraph.strip()]
    return items


def _repeats(rule) -> str:
    """How a recurrence rule repeats, as a calendar app says it ("every 2 weeks on Monday and Friday,
    until 2026-06-30", "every year in April on the second Friday", "every day, 10 times"); the rule as
    written where it uses parts this does not say (BYMONTHDAY, BYSETPOS...)."""
    if rule is None:
        return ""
    parts = {key.upper(): values for key, values in rule.items()}
    unit = _UNITS.get(str((parts.get("FREQ") or [""])[0]).upper())
    days = [re.fullmatch(r"([+-]?\d{0,2})(MO|TU|WE|TH|FR|SA|SU)", str(day).upper()) for day in parts.get("BYDAY", [])]
    months = [int(month) for month in parts.get("BYMONTH", []) if str(month).isdigit() and 1 <= int(month) <= 12]
    if unit is None or not all(days) or any(m[1] and int(m[1]) not in _ORDINALS for m in days) \
            or len(months) < len(parts.get("BYMONTH", [])) \
            or set(parts) - {"FREQ", "INTERVAL", "BYDAY", "BYMONTH", "UNTIL", "COUNT", "WKST"}:
        return rule.to_ical().decode()
    interval = int((parts.get("INTERVAL") or [1])[0])
    shown = f"every {unit}" if interval == 1 else f"every {interval} {unit}s"
    if months:
        shown += " in " + " and ".join(date(2000, month, 1).strftime("%B") for month in months)
    named = [f"the {_ORDINALS[int(m[1])]} {_DAYS[m[2]]}" if m[1] else _DAYS[m[2]] for m in days]
    if named:
        shown += " on " + (" and ".join(named) if len(named) < 3 else ", ".join(named[:-1]) + " and " + named[-1])
    if parts.get("UNTIL"):
        until = parts["UNTIL"][0]
        shown += f", until {until:%Y-%m-%d}" if isinstance(until, date) else ""
    if parts.get("COUNT"):
        shown += f", {int(parts['COUNT'][0])} times"
    return shown


def _text(value) -> str:
    return " ".join(str(value).split()) if value is not None else ""


def _when(entry) -> str:
    """When an entry happens: its start and end (an end on the start's day as its time; an
    all-day entry's end is the day after its last, as the file keeps it), its time zone."""
    start = _decoded(entry, "DTSTART")
    if start is None:
        return ""
    end = _decoded(entry, "DTEND")
    if end is None and entry.get("DURATION") is not None:
        try:
            end = start + entry.decoded("DURATION")
        except (TypeError, ValueError):
            end = None
    if not isinstance(start, datetime):  # all day: DTEND is the day after the last
        last = end - timedelta(days=1) if isinstance(end, date) and not isinstance(end, datetime) else None
        return start.isoformat() + (f" - {last.isoformat()}" if last and last > start else "")
    shown = f"{start:%Y-%m-%d %H:%M}"
    if isinstance(end, datetime):
        shown += f" - {end:%H:%M}" if end.date() == start.date() else f" - {end:%Y-%m-%d %H:%M}"
    return shown + _zone(entry, "DTSTART", start)


def _moment(entry, key: str) -> str:
    """A date or a time (in its time zone) as written: a to-do's due date."""
    value = _decoded(entry, key)
    if value is None:
        return ""
    return f"{value:%Y-%m-%d %H:%M}{_zone(entry, key, value)}" if isinstance(value, datetime) else value.isoformat()


def _zone(entry, key: str, value: datetime) -> str:
    """The time zone a time is written in, as " (Europe/Berlin)" (its TZID, or UTC); "" for a floating time."""
    zone = entry[key].params.get("TZID") or ("UTC" if value.tzinfo is not None and value.utcoffset() == timedelta(0)
                                             else "")
    return f" ({zone})" if zone else ""


def _decoded(entry, key: str):
    """A date or time property's value, None where it is missing or does not parse."""
    try:
        value = entry.decoded(key) if entry.get(key) is not None else None
    except (ValueError, TypeError, KeyError):
        return None
    return value if isinstance(value, (date, datetime)) else None


def _people(value) -> str:
    """Calendar addresses as "Name <address>" (the address alone where no name is given)."""
    people = value if isinstance(value, list) else [value] if value is not None else []
    shown = []
    for person in people:
        address = str(person).removeprefix("mailto:").removeprefix("MAILTO:")
        name = " ".join(str(person.params.get("CN", "")).split()) if hasattr(person, "params") else ""
        shown.append(f"{name} <{address}>" if name else address)
    return ", ".join(shown)
