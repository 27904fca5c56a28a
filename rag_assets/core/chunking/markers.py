"""Line patterns that mark a FAQ's questions and a transcript's speaker turns: the FAQ and
transcript chunkers cut at them, and ``auto`` detects those content types by them."""

import re

QUESTION = re.compile(
    r"^[ \t]*(?:Q\s*[:.)]|Question\s*\d*\s*[:.]|\*\*Q[:.]|#{1,6}[^\n]*\?[ \t]*$|\*\*[^\n]*\?\*\*[ \t]*$)", re.M | re.I
)
TURN = re.compile(r"^[ \t]*(?:\[?\(?\d{1,2}:\d{2}(?::\d{2})?\)?\]?[ \t]*)?([A-Z][\w.'\- ]{0,40}?)[ \t]*:[ \t]+\S", re.M)
