"""Subtitles (SubRip .srt, WebVTT .vtt) as a transcript: what is said, in paragraphs stamped with
their start time, without the cue numbers, timings and markup that were most of the file's text."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

_TIMING = re.compile(r"^[ \t]*((?:\d+:)?\d{1,2}:\d{2}[.,]\d{1,3})[ \t]*-->[ \t]*((?:\d+:)?\d{1,2}:\d{2}[.,]\d{1,3})")
_VOICE = re.compile(r"<v(?:\.[\w.-]+)?[ \t]([^>\n]+)>")  # classes read one way (a run of dots split every way)
_OPENER = re.compile(r"<|\{\\")  # a WebVTT or SubRip tag (<i>), an ASS override ({\an8})
_CLOSER = {"<": ">", "{": "}"}
_SENTENCE_END = re.compile(r"[.!?…][\"'”’)\]]*$")
GAP_SECONDS = 2.0  # a pause this long starts a paragraph
PARAGRAPH_SECONDS = 60.0  # a paragraph this long ends at its next sentence end...
MAX_PARAGRAPH_SECONDS = 120.0  # ...or here at the latest


@dataclass
class _Line:
    """One line of a cue: its cue's times, its voice (WebVTT's <v Name>) and its plain text."""

    start: float
    end: float
    speaker: str
    text: str


def _unmarked(line: str) -> str:
    """``line`` without its tags: each ``<`` up to the next ``>``, each ``{\\`` up to the next ``}``,
    read left to right in one pass (a pattern searched from each unclosed ``<`` to the line's end:
    quadratic)."""
    kept, pos, closer_at = [], 0, {">": -1, "}": -1}
    for opener in _OPENER.finditer(line):
        if opener.start() < pos:
            continue
        closer = _CLOSER[opener[0][0]]
        if closer_at[closer] is not None and closer_at[closer] < opener.end():
            found = line.find(closer, opener.end())
            closer_at[closer] = found if found >= 0 else None  # None: no closer after here
        if closer_at[closer] is not None:
            kept.append(line[pos : opener.start()])
            pos = closer_at[closer] + 1
    kept.append(line[pos:])
    return "".join(kept)


def _seconds(stamp: str) -> float:
    parts = stamp.replace(",", ".").split(":")
    return sum(float(part) * 60 ** power for power, part in enumerate(reversed(parts)))


def _stamp(seconds: float) -> str:
    whole = int(seconds)
    return f"[{whole // 3600:02d}:{whole // 60 % 60:02d}:{whole % 60:02d}]"


def _ends_cue(lines: list[str], i: int) -> bool:
    """Whether line ``i`` ends a cue: an empty line, or one of spaces before the next cue (a cue may
    hold a line of spaces: auto-captions open with one)."""
    if lines[i]:
        return not lines[i].strip() and (i + 1 >= len(lines) or not lines[i + 1].strip() or bool(
            _TIMING.match(lines[i + 1])) or (i + 2 < len(lines) and bool(_TIMING.match(lines[i + 2]))))
    return True


def _lines(text: str) -> list[_Line]:
    """Every cue's lines of plain text, each with its voice: its own <v> tag, else the voice of the
    line before it in the cue."""
    out, lines = [], text.split("\n")
    i = 0
    while i < len(lines):
        timing = _TIMING.match(lines[i])
        i += 1
        if not timing:
            continue  # a cue number, the WEBVTT header, a NOTE, STYLE or REGION block
        start, end, speaker = _seconds(timing[1]), _seconds(timing[2]), ""
        while i < len(lines) and not _ends_cue(lines, i) and not _TIMING.match(lines[i]):
            if voice := _VOICE.search(lines[i], 0, lines[i].rfind(">") + 1):
                speaker = voice[1].strip()
            if plain := " ".join(html.unescape(_unmarked(lines[i])).split()):
                out.append(_Line(start, end, speaker, plain))
            i += 1
    return out


def subtitle_transcript(text: str) -> str:
    """The transcript of subtitles ``text``: cues' lines joined into paragraphs (a new one at a
    pause of ``GAP_SECONDS``, a change of voice, or after ``PARAGRAPH_SECONDS`` at a sentence end),
    each opening with its start time and voice ("[00:01:05] Maya: ..."), so it reads and chunks as a
    transcript and a result cites the moment. A cue's first line that repeats the line just before
    (rolling captions show it again) is said once. Raises ValueError for text holding no cue."""
    lines = _lines(text)
    if not lines and not _TIMING.search(text):
        raise ValueError("WebVTT subtitles without a cue: nothing to index" if text.lstrip("\ufeff").startswith(
            "WEBVTT") else "no subtitle cues (timings such as 00:00:01,000 --> 00:00:04,000): not SubRip or "
            "WebVTT subtitles; correct its extension")
    paragraphs: list[tuple[_Line, list[str]]] = []
    previous: _Line | None = None
    for line in lines:
        rolled = previous is not None and line.start != previous.start and line.text == previous.text \
            and line.start - previous.end < GAP_SECONDS
        if not rolled:
            opening, said = paragraphs[-1] if paragraphs else (None, [])
            if opening is None or line.speaker != opening.speaker \
                    or line.start - previous.end >= GAP_SECONDS \
                    or line.start - opening.start >= MAX_PARAGRAPH_SECONDS \
                    or (line.start - opening.start >= PARAGRAPH_SECONDS and _SENTENCE_END.search(said[-1])):
                paragraphs.append((line, [line.text]))
            else:
                said.append(line.text)
        previous = line
    return "\n\n".join(_stamp(opening.start) + " " + (f"{opening.speaker}: " if opening.speaker else "")
                       + " ".join(said) for opening, said in paragraphs) + "\n"
