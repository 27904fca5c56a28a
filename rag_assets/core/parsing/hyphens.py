"""Words a printed page hyphenates across a line break, read whole: a justified PDF's (or scan's)
"mainte-" over "nance" is "maintenance", as its reader reads it, not "mainte- nance" (a word no
keyword search and no tokenizer knows). A compound's own hyphen stays ("self-test" where the document
writes it so, "Franco-Prussian"), and so does a suspended one ("pre- and post-processing")."""

from __future__ import annotations

import re

_HYPHENS = "-\u00ad\u2010"  # ASCII, soft and Unicode
#: a line's end that is a word and a hyphen; the word may be a compound ("end-to-")
_BROKEN = re.compile(r"([^\W\d_]+(?:-[^\W\d_]+)*)[-\u00ad\u2010]\Z")
_LONGEST = 100  # the most characters of a line's end read for its last word (a 100 kB line is read in no time)
_FIRST_WORD = re.compile(r"[ \t]*([^\W_]+)")
_COMPOUND = re.compile(r"(?<![^\W\d_])[^\W\d_]+(?:-[^\W\d_]+)+")  # from a word's start only: linear time
_WORD = re.compile(r"[^\W_]+")
#: words after which a hyphen is suspended: "pre- and post-processing", "short- or long-term", "one- to two-day"
_SUSPENDED = frozenset(("and", "or", "nor", "to", "vs", "versus"))


class Hyphens:
    """What a document's lines read so far say of its words: the compounds it writes with a
    hyphen within a line ("self-test") and the words it writes whole."""

    def __init__(self) -> None:
        self.compounds: set[str] = set()
        self.words: set[str] = set()

    def learn(self, texts) -> None:
        """Take in the words and hyphenated compounds of ``texts`` (lines)."""
        for text in texts:
            if "-" in text:
                self.compounds.update(compound.lower() for compound in _COMPOUND.findall(text))
            self.words.update(word.lower() for word in _WORD.findall(text))

    def joiner(self, left: str, hyphen: str, right: str) -> str | None:
        """How ``left`` (the word before a line-end ``hyphen``, perhaps a compound: "intercept-deploy")
        and ``right`` (the next line's first word) read joined: "" where the document writes the
        word whole ("deployment"); else the hyphen where it is a compound's (the next word starts
        with a digit or a capital, "Franco-Prussian", unless both are capitals, "OP-TIONAL"), None
        where it is suspended ("pre- and"), the hyphen where the document writes the compound, and
        "" for any other word ("mainte-nance", "Docu-ment", "LOCA-TION", "XftDrawCre-ate"): 99.9% of
        8,739 breaks in 700 man pages set justified read as written, 97.5% knowing none of the
        document's words (``benchmarks/hyphenation.py``)."""
        last = left.rsplit("-", 1)[-1]
        if hyphen == "\u00ad" or (last + right).lower() in self.words:
            return ""  # a soft hyphen only ever breaks a word
        if not right[0].isalpha() or right[0].isupper() and not (last.isupper() and right.isupper()):
            return hyphen
        if right.lower() in _SUSPENDED:
            return None
        if f"{left}-{right}".lower() in self.compounds or f"{last}-{right}".lower() in self.compounds:
            return hyphen
        return ""

    def cut(self, before: str, after: str) -> tuple[str, str] | None:
        """Where ``before`` ends in a word a line break cut with a hyphen and ``after`` opens with the
        rest of it: ``before`` trimmed and without that hyphen, and what joins the two (``joiner``).
        None where ``before`` ends in no such word, or its hyphen is suspended."""
        end = before.rstrip()
        if not end or end[-1] not in _HYPHENS or not (broken := _BROKEN.search(end[-_LONGEST:])) \
                or not (first := _FIRST_WORD.match(after)):
            return None
        joiner = self.joiner(broken.group(1), end[-1], first.group(1))
        return None if joiner is None else (end[:-1], joiner)


def joined_lines(lines: list[tuple[int, str, float]], hyphens: Hyphens) -> list[tuple[int, str, float]]:
    """A page's lines (box number, text with its line end, font size) with each line that ends in
    a hyphenated word joined to the next line of its box and size (``Hyphens.cut``), the pair one
    line; ``hyphens`` learns the page's words first."""
    hyphens.learn(text for _, text, _ in lines)
    out: list[tuple[int, str, float]] = []
    for box, text, size in lines:
        if out and out[-1][0] == box and out[-1][2] == size and (cut := hyphens.cut(out[-1][1], text)):
            out[-1] = (box, cut[0] + cut[1] + text.lstrip(" \t"), size)
            continue
        out.append((box, text, size))
    return out
