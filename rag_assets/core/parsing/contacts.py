"""vCard files (``.vcf``: an address book's or a phone's export, a contact card attached to an e-mail)
read as an address book lists them: each contact a section under its name, a line each for its
organisation, title, e-mail addresses, phone numbers, addresses and note. Read leniently, as phones
write them (vCard 2.1's bare types and quoted-printable values, 3.0, 4.0)."""

from __future__ import annotations

import quopri
import re

# Properties shown, in this order, by their label; a picture, a sound or a key (base64 blobs) is never shown.
_SHOWN = (("ORG", "Organization"), ("TITLE", "Title"), ("ROLE", "Role"), ("EMAIL", "Email"), ("TEL", "Phone"),
          ("ADR", "Address"), ("URL", "Web"), ("BDAY", "Birthday"), ("CATEGORIES", "Categories"), ("NOTE", "Note"))
_LINE = re.compile(r"(?:[\w-]+\.)?(?P<name>[A-Za-z][\w-]*)(?P<params>(?:;[^:]*)?):(?P<value>.*)")
_QUIET_TYPES = frozenset(("internet", "pref", "voice", "x400"))


def contact_items(text: str) -> list[tuple[str, str, None]] | None:
    """Items (``join_elements``' tuples) of a vCard file's contacts in its order: a title (its
    formatted name, else its structured name given name first, its organisation or its first e-mail
    address, else "Contact"; an empty card is left out), then a line a property shown ("Email:
    alice@acme.example (work)", "Address: Hauptstr. 1, 10115 Berlin, Germany (work)"), a property
    given several times one line each. None for a text that holds no vCard."""
    cards = _cards(text)
    if not cards:
        return None
    items: list[tuple[str, str, None]] = []
    for card in cards:
        lines = [(label, shown) for key, label in _SHOWN
                 for shown in (_shown(key, *p) for p in card.get(key, ())) if shown]
        name = next((v for _, v in card.get("FN", ()) if v.strip()), "") \
            or next((s for s in (_shown("N", *p) for p in card.get("N", ())) if s), "") \
            or next((shown for label, shown in lines if label in ("Organization", "Email")), "")
        if not (name or lines):  # an empty card
            continue
        items.append(("Title", " ".join(_unescape(name).split()) or "Contact", None))
        items += [("NarrativeText", f"{label}: {shown}", None) for label, shown in lines]
    return items


def _cards(text: str) -> list[dict[str, list[tuple[dict[str, list[str]], str]]]]:
    """Each BEGIN:VCARD ... END:VCARD block's properties by name: (params, raw value), lines unfolded
    (a line opening with a space or tab continues the one before; a quoted-printable value ending in
    "=" continues on the next line)."""
    lines: list[str] = []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if lines and line[:1] in (" ", "\t"):
            lines[-1] += line[1:]
        elif lines and lines[-1].endswith("=") and "QUOTED-PRINTABLE" in lines[-1].split(":", 1)[0].upper():
            lines[-1] = lines[-1][:-1] + line
        else:
            lines.append(line)
    cards, card = [], None
    for line in lines:
        match = _LINE.fullmatch(line.strip())
        if match is None:
            continue
        name, value = match["name"].upper(), match["value"]
        if name == "BEGIN" and value.strip().upper() == "VCARD":
            card = {}
        elif name == "END" and value.strip().upper() == "VCARD" and card is not None:
            cards.append(card)
            card = None
        elif card is not None:
            card.setdefault(name, []).append((_params(match["params"]), value))
    return cards


def _params(text: str) -> dict[str, list[str]]:
    """A property's parameters: ``;TYPE=work,cell`` and vCard 2.1's bare ``;CELL`` as TYPE."""
    params: dict[str, list[str]] = {}
    for part in filter(None, text.split(";")):
        key, _, value = part.partition("=")
        key, values = (key.upper(), value.strip('"').split(",")) if value else ("TYPE", [key])
        params.setdefault(key, []).extend(v for v in values if v)
    return params


def _shown(key: str, params: dict[str, list[str]], raw: str) -> str:
    """A property's value as an address book shows it (a name given name first, an address's parts
    in a line, an organisation's units after it), its types after it in brackets; "" for an empty one."""
    if "QUOTED-PRINTABLE" in (v.upper() for v in params.get("ENCODING", ())):
        decoded = quopri.decodestring(raw.encode("latin-1", "replace"))
        charset = (params.get("CHARSET") or ["utf-8"])[0]
        try:
            raw = decoded.decode(charset, "replace")
        except LookupError:  # a charset Python does not know
            raw = decoded.decode("utf-8", "replace")
    separators = r"(?<!\\)[,;]" if key == "CATEGORIES" else r"(?<!\\);"  # categories are a list
    parts = [_unescape(part) for part in re.split(separators, raw)]
    if key == "N":  # family; given; additional; prefix; suffix
        parts += [""] * (5 - len(parts))
        parts = [parts[3], parts[1], parts[2], parts[0], parts[4]]
        shown = " ".join(part for part in parts if part.strip())
    elif key == "ADR":  # post office box; extended; street; locality; region; postal code; country
        parts += [""] * (7 - len(parts))
        town = " ".join(part for part in (parts[5], parts[3]) if part.strip())
        shown = ", ".join(part for part in (parts[0], parts[1], parts[2], town, parts[4], parts[6]) if part.strip())
    else:
        shown = ", ".join(part for part in parts if part.strip())
    shown = shown.removeprefix("mailto:").removeprefix("MAILTO:").removeprefix("tel:").strip()
    shown = shown if "\n" in shown else " ".join(shown.split())
    types = [t.lower() for t in params.get("TYPE", ()) if t.lower() not in _QUIET_TYPES]
    return f"{shown} ({', '.join(types)})" if shown and types else shown


def _unescape(text: str) -> str:
    """vCard's escapes read: "\\n" a line end, "\\," "\\;" "\\\\" their characters."""
    return re.sub(r"\\([nN,;\\])", lambda m: "\n" if m[1] in "nN" else m[1], text)
