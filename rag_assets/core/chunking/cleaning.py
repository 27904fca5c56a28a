"""Cleaning normalisers applied to the text that is embedded, never to the stored span, so
offsets keep indexing the parsed text whatever cleaning did."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from rag_assets.core.models import Element

_URL = re.compile(r"https?://\S+|www\.\S+")
_SPACES = re.compile(r"[ \t\u00a0]+")
_BLANK_LINES = re.compile(r"\n\s*\n\s*")


@dataclass(frozen=True)
class Cleaning:
    """Per-profile switches. Only the safe ones are on by default (aggressive cleaning hurts
    retrieval quality)."""

    normalize_whitespace: bool = True
    unicode_nfc: bool = True
    strip_page_furniture: bool = True
    strip_urls: bool = False


def repeated_page_lines(text: str, elements: tuple[Element, ...], min_pages: int = 3, share: float = 0.6) -> frozenset[str]:
    """Lines that open or close most pages of a paged document: running headers and footers."""
    by_page: dict[int, list[Element]] = {}
    for el in elements:
        if el.page is not None:
            by_page.setdefault(el.page, []).append(el)
    if len(by_page) < min_pages:
        return frozenset()
    seen: Counter[str] = Counter()
    for page_elements in by_page.values():
        page_elements.sort(key=lambda e: e.start)
        edge = {text[e.start : e.end].strip() for e in (page_elements[0], page_elements[-1])}
        seen.update(line for line in edge if line and len(line) < 200)
    return frozenset(line for line, n in seen.items() if n >= share * len(by_page))


@lru_cache(maxsize=8)
def _furniture_lines(furniture: frozenset[str]) -> re.Pattern:
    """Whole lines holding one of ``furniture`` alone (anchored at line ends, so neither a set's
    order nor a line inside another decides what is removed)."""
    alternatives = "|".join(re.escape(line) for line in sorted(furniture, key=lambda line: (-len(line), line)))
    return re.compile(rf"^[ \t]*(?:{alternatives})[ \t]*$", re.M)


def clean(text: str, cleaning: Cleaning, furniture: frozenset[str] = frozenset()) -> str:
    """The embedding text of a chunk after the enabled normalisers; page furniture goes only where
    it stands as a whole line (the same words in a sentence stay)."""
    if cleaning.strip_page_furniture and furniture:
        text = _furniture_lines(furniture).sub("", text)
    if cleaning.strip_urls:
        text = _URL.sub("", text)
    if cleaning.unicode_nfc:
        text = unicodedata.normalize("NFC", text)
    if cleaning.normalize_whitespace:
        text = _BLANK_LINES.sub("\n\n", _SPACES.sub(" ", text)).strip()
    return text
