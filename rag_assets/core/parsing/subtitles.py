"""Subtitles (SubRip .srt, WebVTT .vtt) as a transcript: what is said, in paragraphs stamped with
their start time, without the cue numbers, timings and markup that were most of the file's text."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

_TIMING = re.compile(r"^[ \t]*((?:\d+:)?\d{1,2}:\d{2}[.,]\d{1,3})[ \t]*-->[ \t]*((?:\d+:)?\d{1,2}:\d{2}[.,]\d{1,3})")
_VOICE = re.compile(r"<v(?:\.[\w.-]+)*[ \t]+([^>\n]+)>")
_MARKUP = re.compile(r"<[^>\n]*>|\{\\[^}\n]*\}")  # WebVTT and SubRip tags, ASS overrides ({\an8})
_SENTENCE_END = re.compile(r"[.!?…][\"'”’)\]]*$")
GAP_SECONDS = 2.0  # a pause this long starts a paragraph
PARAGRAPH_SECONDS = 60.0  # a paragraph this long ends at its next sentence end...
MAX_PARAGRAPH_SECONDS = 120.0  # ...or here at the latest


@dataclass
class _Cue:
    start: float
    end: float
    speaker: str
    lines: list[str]


def _seconds(stamp: str) -> float:
    parts = stamp.replace(",", ".").split(":")
    return sum(float(part) * 60 ** power for power, part in enumerate(reversed(parts)))


def _stamp(seconds: float) -> str:
    whole = int(seconds)
    return f"[{whole // 3600:02d}:{whole // 60 % 60:02d}:{whole % 60:02d}]"


def _cues(text: str) -> list[_Cue]:
    """Each cue: its times, its voice (WebVTT's <v Name>) and its lines of plain text."""
    cues, lines = [], text.split("\n")
    i = 0
    while i < len(lines):
        timing = _TIMING.match(lines[i])
        i += 1
        if not timing:
            continue  # a cue number, the WEBVTT header, a NOTE, STYLE or REGION block
        body = []
        while i < len(lines) and lines[i].strip() and not _TIMING.match(lines[i]):
            body.append(lines[i])
            i += 1
        voice = _VOICE.search(body[0]) if body else None
        plain = [" ".join(html.unescape(_MARKUP.sub("", line)).split()) for line in body]
        cues.append(_Cue(_seconds(timing[1]), _seconds(timing[2]), voice[1].strip() if voice else "",
                         [line for line in plain if line]))
    return cues


def subtitle_transcript(text: str) -> str:
    """The transcript of subtitles ``text``: cues joined into paragraphs (a new one at a pause of
    ``GAP_SECONDS``, a change of voice, or after ``PARAGRAPH_SECONDS`` at a sentence end), each
    opening with its start time and voice ("[00:01:05] Maya: ..."), so it reads and chunks as a
    transcript and a result cites the moment. A line repeated from the cue before (rolling
    captions) is said once. Raises ValueError for text holding no cue."""
    cues = _cues(text)
    if not cues:
        raise ValueError("no subtitle cues (timings such as 00:00:01,000 --> 00:00:04,000): not SubRip or WebVTT "
                         "subtitles; correct its extension")
    paragraphs: list[tuple[_Cue, list[str]]] = []
    previous: _Cue | None = None
    for cue in cues:
        lines = cue.lines
        if previous is not None and previous.lines and lines and lines[0] == previous.lines[-1]:
            lines = lines[1:]  # rolling captions show the line before again
        if lines:
            opening, said = paragraphs[-1] if paragraphs else (None, [])
            last = " ".join(said)
            if opening is None or previous is None or cue.speaker != opening.speaker \
                    or cue.start - previous.end >= GAP_SECONDS \
                    or cue.start - opening.start >= MAX_PARAGRAPH_SECONDS \
                    or (cue.start - opening.start >= PARAGRAPH_SECONDS and _SENTENCE_END.search(last)):
                paragraphs.append((cue, list(lines)))
            else:
                said.extend(lines)
        previous = cue
    return "\n\n".join(_stamp(opening.start) + " " + (f"{opening.speaker}: " if opening.speaker else "")
                       + " ".join(said) for opening, said in paragraphs) + "\n"
