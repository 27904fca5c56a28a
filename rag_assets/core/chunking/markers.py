"""Line patterns that mark a FAQ's questions and a transcript's speaker turns: the FAQ and
transcript chunkers cut at them, and ``auto`` detects those content types by them."""

import re
import unicodedata

QUESTION = re.compile(
    r"^[ \t]*(?:Q\s*[:.)]|Question\s*\d*\s*[:.]|\*\*Q[:.]|#{1,6}[^\n]*\?[ \t]*$|\*\*[^\n]*\?\*\*[ \t]*$)", re.M | re.I
)


def _capitals() -> str:
    """A character class body of every capital letter of the BMP (Unicode categories Lu and Lt:
    no Roman numerals or circled letters, which ``isupper`` also takes)."""
    codes = [c for c in range(0x10000) if unicodedata.category(chr(c)) in ("Lu", "Lt")]
    runs, start = [], codes[0]
    for prev, code in zip(codes, codes[1:] + [-1]):
        if code != prev + 1:
            runs.append(re.escape(chr(start)) + ("-" + re.escape(chr(prev)) if prev > start else ""))
            start = code
    return "".join(runs)


# A turn opens with an optional time stamp ([1:02], (01:02:03), [100:00:01]) and a speaker whose
# name starts with a capital letter of any script in the BMP (Élodie, Øystein), then a colon and the words.
TURN = re.compile(r"^[ \t]*(?:\[?\(?\d{1,3}:\d{2}(?::\d{2})?\)?\]?[ \t]*)?([" + _capitals()
                  + r"][\w.'\- ]{0,40}?)[ \t]*:[ \t]+\S", re.M)
