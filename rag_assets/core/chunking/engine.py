"""Shared machinery of every chunker: one tokenisation of the whole text, exact span counts,
separator cut points, greedy packing and the final exactness check.

The text is tokenised once. A span whose two edges are "safe cuts" (``TokenCounter.safe_cut_rule``)
tokenises on its own exactly as it does inside the whole text, so its token count is read off the
token-end array without encoding it again. Spans with an unsafe edge (a cut inside a word, a
trimmed start after indentation) are counted exactly and re-split if over: no span ever leaves the
engine over the limit. For tiktoken the engine works on UTF-8 byte offsets (what token ends are
measured in) and converts chunk edges to char offsets once at the end.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import NamedTuple

import numpy as np

from rag_assets.core.tokens import TokenCounter

# (pattern, where to cut: "end" of the match, "start", or "end-1" = before its final space)
_SEP_STR = (
    (re.compile(r"\n(?:[ \t]*\n)+"), "end"),  # paragraphs: cut after the newline run
    (re.compile(r"\n"), "end"),  # lines
    (re.compile(r"[.!?;:]['\")\]\u2019\u201d]*[ \t]"), "end-1"),  # sentences: cut before the space
    (re.compile(r"(?<=\S)[ \t]"), "start"),  # words: cut before the space
)
_SEP_BYTES = (
    (re.compile(rb"\n(?:[ \t]*\n)+"), "end"),
    (re.compile(rb"\n"), "end"),
    (re.compile(rb"[.!?;:](?:['\")\]]|\xe2\x80[\x99\x9d])*[ \t]"), "end-1"),
    (re.compile(rb"(?<=\S)[ \t]"), "start"),
)
# Sentence enders of CJK text (no space follows them); only searched where such text occurs.
_CJK_SENTENCE_STR = re.compile(r"[\u3002\uff01\uff1f](?=[^\s\u3002\uff01\uff1f])")
_SPACE_RUN_STR = re.compile(r"\s+")
_SPACE_RUN_BYTES = re.compile(rb"\s+")
LEVELS = ("paragraph", "line", "sentence", "word")


_ASCII_TABLES: dict = {}


def _byte_ends_to_chars(text: str, ends: np.ndarray) -> np.ndarray:
    """UTF-8 byte offsets -> char offsets (an offset inside a char maps past that char)."""
    utf8 = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    chars_so_far = np.cumsum((utf8 & 0xC0) != 0x80, dtype=np.int64)
    return np.where(ends > 0, chars_so_far[np.maximum(ends, 1) - 1], 0)


def _ascii_table(rule) -> list[bool]:
    """rule(before, at) for every pair of ASCII chars (before != newline), computed once."""
    key = getattr(rule, "__qualname__", None) if getattr(rule, "__name__", "") != "<lambda>" else None
    if key in _ASCII_TABLES:
        return _ASCII_TABLES[key]
    table = [bool(rule(chr(b), chr(a), lambda: "")) if b != 10 else False for b in range(128) for a in range(128)]
    if key is not None:
        _ASCII_TABLES[key] = table
    return table


class Span(NamedTuple):
    """A chunk's char span; ``tokens`` counts ``text[start:end]`` exactly (specials included).
    Immutable; a named tuple because chunkers make one per chunk and tuples are cheap to build.

    ``context`` is embedded before the chunk text (a table's header row, an enclosing class);
    ``embed_override`` replaces the chunk text in what is embedded (serialised table rows);
    ``window`` is the char span a sentence-window chunk expands to at query time;
    ``embed_span`` is a wider char span embedded in place of the chunk (context-enriched
    embeddings), shrunk to the chunk itself where it would not fit the model;
    ``sections`` are the heading paths of what else the chunk holds whole (the small functions a
    code chunk packs under their class), cited with it.
    """

    start: int
    end: int
    tokens: int
    heading_path: tuple[str, ...] | None = None
    context: str = ""
    embed_override: str | None = None
    window: tuple[int, int] | None = None
    embed_span: tuple[int, int] | None = None
    sections: tuple[tuple[str, ...], ...] = ()


class TokenIndex:
    """One text, tokenised once: token end offsets and helpers in the same units."""

    def __init__(self, text: str, counter: TokenCounter, chars: bool = False):
        """``chars=True`` indexes in char offsets even for tiktoken (structure-aware chunkers
        work with element char spans); otherwise non-ASCII tiktoken text is indexed in bytes."""
        self.text = text
        self.counter = counter
        ends, in_bytes = counter.token_end_array(text)
        if in_bytes and chars and not text.isascii():
            ends = _byte_ends_to_chars(text, ends)
            in_bytes = False
        self.is_bytes = in_bytes and not text.isascii()
        self.buf: str | bytes = text.encode("utf-8", "surrogatepass") if self.is_bytes else text
        self.n = len(self.buf)
        self.ends = ends
        self._ends_list: list[int] | None = None
        self._rule = counter.safe_cut_rule()
        self._ascii_safe = _ascii_table(self._rule)
        self.separators = _SEP_BYTES if self.is_bytes else _SEP_STR

    @property
    def ends_list(self) -> list[int]:
        if self._ends_list is None:
            self._ends_list = self.ends.tolist()
        return self._ends_list

    # -- chars around a unit position (bytes decoded on demand) --------------------------------
    def char_at(self, u: int) -> str:
        if u >= self.n or u < 0:
            return ""
        if not self.is_bytes:
            return self.buf[u]
        b = self.buf[u]
        if b < 0x80:
            return chr(b)
        while u > 0 and self.buf[u] & 0xC0 == 0x80:
            u -= 1
        width = 4 if self.buf[u] >= 0xF0 else 3 if self.buf[u] >= 0xE0 else 2
        return self.buf[u : u + width].decode("utf-8", "replace")[:1]

    def char_start(self, u: int) -> int:
        """The start of the char that unit ``u`` falls in (``u`` itself on a char boundary)."""
        if self.is_bytes:
            while 0 < u < self.n and self.buf[u] & 0xC0 == 0x80:
                u -= 1
        return u

    def char_before(self, u: int) -> str:
        if u <= 0:
            return ""
        if not self.is_bytes:
            return self.buf[u - 1]
        if self.buf[u - 1] < 0x80:
            return chr(self.buf[u - 1])
        start = u - 1
        while start > 0 and self.buf[start] & 0xC0 == 0x80:
            start -= 1
        return self.buf[start:u].decode("utf-8", "replace")[-1:]

    def _run(self, u: int) -> str:
        chars = []
        while True:
            ch = self.char_at(u)
            if not ch or not ch.isspace():
                return "".join(chars)
            chars.append(ch)
            u += len(ch.encode("utf-8", "surrogatepass")) if self.is_bytes else 1

    def safe(self, u: int) -> bool:
        """Whether unit position ``u`` is a safe cut (see module docstring)."""
        if u <= 0 or u >= self.n:
            return True
        before, at = self.buf[u - 1], self.buf[u]
        if self.is_bytes:
            if at & 0xC0 == 0x80:
                return False  # inside a multi-byte char
        else:
            before, at = ord(before), ord(at)
        if before < 128 and at < 128 and before != 10:
            return self._ascii_safe[before * 128 + at]
        return self._rule(self.char_before(u), self.char_at(u), lambda: self._run(u))

    # -- counting -------------------------------------------------------------------------------
    def tokens_before(self, positions) -> np.ndarray:
        """Number of tokens ending at or before each unit position."""
        return np.searchsorted(self.ends, positions, "right")

    def count(self, start: int, end: int) -> int:
        """Content tokens of the span; exact when both edges are safe cuts."""
        a, b = np.searchsorted(self.ends, (start, end), "right")
        return int(b - a)

    def cut_points(self, start: int, end: int, level: int) -> list[int]:
        pattern, where = self.separators[level]
        found = pattern.finditer(self.buf, start, end)
        if where == "end":
            cuts = [m.end() for m in found]
        elif where == "start":
            cuts = [m.start() for m in found]
        else:
            cuts = [m.end() - 1 for m in found]
        if level == 2 and not self.is_bytes and not self.text.isascii():
            cuts = sorted(cuts + [m.end() for m in _CJK_SENTENCE_STR.finditer(self.buf, start, end)])
        while cuts and cuts[-1] >= end:
            cuts.pop()
        while cuts and cuts[0] <= start:
            cuts.pop(0)
        return cuts

    def word_start_after(self, u: int, limit: int) -> int:
        """First unit position >= ``u`` right after whitespace (overlaps never start mid-word)."""
        if u <= 0:
            return 0
        pattern = _SPACE_RUN_BYTES if self.is_bytes else _SPACE_RUN_STR
        if self.char_before(u).isspace():
            m = pattern.match(self.buf, u, limit)
            return m.end() if m else u
        m = pattern.search(self.buf, u, limit)
        return m.end() if m else limit

    def to_chars(self, positions: list[int]) -> dict[int, int]:
        """Unit positions -> char positions (a position inside a char snaps to the char start)."""
        if not self.is_bytes:
            return {p: p for p in positions}
        out: dict[int, int] = {}
        prev_u, prev_c = 0, 0
        for u in sorted(set(positions)):
            snapped = u
            while 0 < snapped < self.n and self.buf[snapped] & 0xC0 == 0x80:
                snapped -= 1
            prev_c += len(self.buf[prev_u:snapped].decode("utf-8", "surrogatepass"))
            prev_u = snapped
            out[u] = prev_c
        return out


def split_to_fit(index: TokenIndex, start: int, end: int, budget: int, level: int = 0, out: list[int] | None = None) -> list[int]:
    """Cut positions in ``(start, end]`` (``end`` last) so that every piece holds at most
    ``budget`` tokens, cut at the coarsest separator that works (paragraph, line, sentence,
    word, then token)."""
    if out is None:
        out = []
    while level < len(LEVELS):
        cuts = index.cut_points(start, end, level)
        if cuts:
            bounds = [start, *cuts, end]
            before = index.tokens_before(bounds).tolist()
            for i in range(len(bounds) - 1):
                if before[i + 1] - before[i] <= budget:
                    out.append(bounds[i + 1])
                else:
                    split_to_fit(index, bounds[i], bounds[i + 1], budget, level + 1, out)
            return out
        level += 1
    ends = index.ends_list
    first = bisect_right(ends, start)
    last = bisect_right(ends, end)
    for k in range(first + budget - 1, last - 1, budget):
        if start < ends[k] < end:
            out.append(ends[k])
    out.append(end)
    return out


def pieces(index: TokenIndex, budget: int, start: int = 0, end: int | None = None) -> list[int]:
    """Boundaries ``[start, c1, ..., end]`` of the coarsest pieces that each fit ``budget``."""
    end = index.n if end is None else end
    if index.count(start, end) <= budget:
        return [start, end]
    return [start, *split_to_fit(index, start, end, budget)]


def pack(index: TokenIndex, bounds: list[int], budget: int) -> list[tuple[int, int]]:
    """Greedily merge consecutive pieces (given by their boundaries) while they fit ``budget``."""
    before = index.tokens_before(bounds).tolist()
    spans = []
    i, last = 0, len(bounds) - 1
    while i < last:
        j = bisect_right(before, before[i] + budget, i + 1) - 1
        if j <= i:
            j = i + 1  # a single piece over budget (token fallback): finalize re-splits it
        spans.append((bounds[i], bounds[j]))
        i = j
    return spans


def add_overlap(index: TokenIndex, spans: list[tuple[int, int]], overlap: int, budget: int) -> list[tuple[int, int]]:
    """Extend each span after the first back over up to ``overlap`` tokens of its predecessor."""
    if not overlap or len(spans) < 2:
        return spans
    ends = index.ends
    out = [spans[0]]
    for (prev_start, _), (s, e) in zip(spans, spans[1:]):
        room = min(overlap, budget - index.count(s, e))
        if room > 0:
            lowest, first = (int(i) for i in np.searchsorted(ends, (prev_start, s), "right"))
            idx = max(lowest, first - room)
            back = int(ends[idx - 1]) if idx > lowest else prev_start
            new_start = index.word_start_after(max(back, prev_start), s)
            if new_start < s:
                s = new_start
        out.append((s, e))
    return out


def trim(index: TokenIndex, start: int, end: int, only_safe: bool = False) -> tuple[int, int]:
    """Drop surrounding whitespace, keeping edges on safe cuts where whitespace allows it.
    With ``only_safe``, an edge moves only if it lands on a safe cut (token-aligned chunks
    keep a leading space rather than cost a re-count)."""
    s, e = start, end
    if index.is_bytes:
        while s < e and index.char_at(s).isspace():
            s += len(index.char_at(s).encode("utf-8", "surrogatepass"))
        while e > s and index.char_before(e).isspace():
            e -= len(index.char_before(e).encode("utf-8", "surrogatepass"))
    else:
        text = index.text
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
    if s >= e:
        return s, s
    if only_safe:
        return (s if index.safe(s) else start), (e if index.safe(e) else end)
    newline = "\n" if not index.is_bytes else b"\n"
    if s > start and not index.safe(s):
        nl = index.buf.rfind(newline, start, s)
        if nl >= 0 and index.safe(nl + 1):
            s = nl + 1  # keep the indentation: the span then starts on a safe cut
    if e < end and not index.safe(e):
        nl = index.buf.rfind(newline, e, end)
        if nl >= 0 and index.safe(nl + 1):
            e = nl + 1  # keep trailing newlines that a punctuation token absorbed
    return s, e


def finalize(index: TokenIndex, spans: list[tuple[int, int]], max_tokens: int, only_safe_trim: bool = False) -> list[Span]:
    """Trimmed spans in chars with exact token counts (specials included), re-split where over.

    An unsafe edge is fixed up by encoding only the stretch up to the nearest safe cut: counts
    between safe cuts are read off the whole-text tokenisation, and a safe cut splits any text
    exactly. A span with no safe cut near an unsafe edge is counted afresh.
    """
    counter = index.counter
    specials = counter.special_tokens
    staged = []  # (start, end, inner_start, inner_end, edge_tokens) ; inner None = count afresh
    for start, end in spans:
        if index.is_bytes:  # a token-level cut may fall inside a char: both edges move to its start
            start, end = index.char_start(start), index.char_start(end)
        start, end = trim(index, start, end, only_safe_trim)
        if start >= end:
            continue
        inner_start, inner_end, edge = start, end, 0
        if not index.safe(start):
            inner_start = _next_safe(index, start, end)
            if inner_start is not None:
                edge += counter.count(_slice(index, start, inner_start)) - specials
        if inner_start is not None and not index.safe(end):
            inner_end = _prev_safe(index, end, inner_start)
            if inner_end is not None:
                edge += counter.count(_slice(index, inner_end, end)) - specials
        if inner_start is None or inner_end is None:
            staged.append((start, end, None))
        else:
            staged.append((start, end, (inner_start, inner_end, edge)))
    inner = [p for *_, fix in staged if fix is not None for p in fix[:2]]
    before = index.tokens_before(inner).tolist() if inner else []
    chars = index.to_chars([p for s, e, _ in staged for p in (s, e)])
    out: list[Span] = []
    k = 0
    for start, end, fix in staged:
        cs, ce = chars[start], chars[end]
        if fix is not None:
            tokens = before[k + 1] - before[k] + fix[2] + specials
            k += 2
            if tokens <= max_tokens:
                out.append(Span(cs, ce, tokens))
                continue
        out.extend(split_exact(index.text, counter, cs, ce, max_tokens))
    return out


_EDGE_SCAN = 64
_CANDIDATE_STR = re.compile(r"(?<=\S)[ \t]|(?<=\n)[^\r\n]")
_CANDIDATE_BYTES = re.compile(rb"(?<=\S)[ \t]|(?<=\n)[^\r\n]")


def _next_safe(index: TokenIndex, u: int, limit: int) -> int | None:
    pattern = _CANDIDATE_BYTES if index.is_bytes else _CANDIDATE_STR
    stop = min(limit, u + _EDGE_SCAN)
    pos = u + 1
    while pos < stop:
        m = pattern.search(index.buf, pos, stop)
        if m is None:
            break
        if index.safe(m.start()):
            return m.start()
        pos = m.start() + 1
    return limit if stop == limit and index.safe(limit) else None


def _prev_safe(index: TokenIndex, u: int, limit: int) -> int | None:
    for pos in range(u - 1, max(limit, u - _EDGE_SCAN) - 1, -1):
        if index.safe(pos):
            return pos
    return None


def _slice(index: TokenIndex, a: int, b: int) -> str:
    piece = index.buf[a:b]
    return piece.decode("utf-8", "surrogatepass") if index.is_bytes else piece


def split_exact(text: str, counter: TokenCounter, start: int, end: int, max_tokens: int) -> list[Span]:
    """Spans covering ``text[start:end]`` (surrounding whitespace dropped), each counted exactly
    and at most ``max_tokens``: an over-long stretch is cut at its longest fitting prefix
    (snapped to whitespace when one is near) and the rest is split the same way. Iterative: the
    depth never grows with the text.

    Raises ValueError when ``max_tokens`` leaves no room for text after the model's special
    tokens, or when one char alone takes more than ``max_tokens`` (never truncated)."""
    if max_tokens <= counter.special_tokens:
        raise ValueError(f"max_tokens={max_tokens} leaves no room for text after the model's "
                         f"{counter.special_tokens} special tokens; raise max_tokens")
    out: list[Span] = []
    todo = [(start, end)]  # stretches still to place, the next one last
    while todo:
        s, e = strip_span(text, *todo.pop())
        if s >= e:
            continue
        n = counter.count(text[s:e])
        if n <= max_tokens:
            out.append(Span(s, e, n))
            continue
        lo, hi = s + 1, e
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if counter.count(text[s:mid]) <= max_tokens:
                lo = mid
            else:
                hi = mid - 1
        if lo == s + 1 and (first := counter.count(text[s:lo])) > max_tokens:
            raise ValueError(f"the char {text[s]!r} at offset {s} alone takes {first} tokens, more than "
                             f"max_tokens={max_tokens}; raise max_tokens")
        cut = lo
        boundary = max(text.rfind(" ", s + 1, cut), text.rfind("\n", s + 1, cut))
        if boundary > s + (cut - s) // 2:
            cut = boundary
        todo += [(cut, e), (s, cut)]
    return out


def strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    """``start:end`` without the whitespace at its ends."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end
