"""Packing of structural units (sentences, sections, rows, turns) into chunks that fit."""

from __future__ import annotations

from rag_assets.core.chunking.engine import Span, TokenIndex, finalize, pieces


def split_units(index: TokenIndex, units: list[tuple[int, int]], budget: int) -> list[tuple[int, int]]:
    """Units of at most ``budget`` tokens: an oversize unit is split recursively."""
    out = []
    for a, b in units:
        if index.count(a, b) <= budget:
            out.append((a, b))
        else:
            bounds = pieces(index, budget, a, b)
            out.extend(zip(bounds, bounds[1:]))
    return out


def pack_units(index: TokenIndex, units: list[tuple[int, int]], budget: int, overlap: int = 0) -> list[tuple[int, int]]:
    """Greedy packing of consecutive units up to ``budget`` tokens; with ``overlap``, each chunk
    after the first starts with whole trailing units of its predecessor (at most ``overlap``
    tokens of them)."""
    units = split_units(index, units, budget)
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(units):
        j = i
        while j + 1 < len(units) and index.count(units[i][0], units[j + 1][1]) <= budget - (overlap if spans else 0):
            j += 1
        start = units[i][0]
        if spans and overlap:
            k = i
            while k - 1 >= 0 and units[k - 1][0] >= spans[-1][0]:
                if index.count(units[k - 1][0], units[j][1]) > budget or index.count(units[k - 1][0], units[i][0]) > overlap:
                    break
                k -= 1
            start = units[k][0]
        spans.append((start, units[j][1]))
        i = j + 1
    return spans


class Item:
    """A span being assembled, with the metadata every chunk cut from it carries."""

    __slots__ = ("start", "end", "meta", "max_tokens", "flat")

    def __init__(self, start: int, end: int, meta: dict | None = None, max_tokens: int | None = None,
                 flat: bool = True):
        self.start, self.end = start, end
        self.meta = meta or {}
        self.max_tokens = max_tokens
        self.flat = flat  # all of its text lies at its heading path itself (no subsection or sibling merged in)


def merge_small(index: TokenIndex, items: list[Item], min_tokens: int, budget: int) -> list[Item]:
    """Merge each item under ``min_tokens`` into the next item (a heading into its section), or
    into the previous one at the end, when the result still fits ``budget``. Items with their
    own embedding context or embedded text (a table row's ``column: value`` pieces) never merge.
    A merged item's heading path is the common prefix."""
    if min_tokens <= 0 or len(items) < 2:
        return items

    def small(item: Item) -> bool:
        return index.count(item.start, item.end) < min_tokens

    def related(a: Item, b: Item) -> bool:
        # Same branch of the heading tree: one is an ancestor of the other, or they are siblings.
        pa, pb = a.meta.get("heading_path") or (), b.meta.get("heading_path") or ()
        common = len(_common(pa, pb))
        return common == min(len(pa), len(pb)) or common == len(pa) - 1 == len(pb) - 1

    def mergeable(a: Item, b: Item) -> bool:  # an item that embeds other text than its own never merges
        return (not any(item.meta.get(key) is not None for item in (a, b) for key in ("context", "embed_override"))
                and related(a, b) and index.count(a.start, b.end) <= budget)

    def affinity(a: Item, b: Item) -> int:
        return len(_common(a.meta.get("heading_path") or (), b.meta.get("heading_path") or ()))

    pending = list(items)
    out: list[Item] = []
    for i, item in enumerate(pending):
        nxt = pending[i + 1] if i + 1 < len(pending) else None
        forward = nxt is not None and small(item) and mergeable(item, nxt)
        backward = bool(out) and (small(item) or small(out[-1])) and mergeable(out[-1], item)
        if forward and backward:
            # Join the neighbour under the same heading; a heading stub joins its section.
            forward = affinity(item, nxt) >= affinity(out[-1], item)
        if forward:
            pending[i + 1] = _merged(index, item, nxt)
        elif backward:
            out[-1] = _merged(index, out[-1], item)
        else:
            out.append(item)
    return out


def _common(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    common = []
    for x, y in zip(a, b):
        if x != y:
            break
        common.append(x)
    return tuple(common)


def _merged(index: TokenIndex, a: Item, b: Item) -> Item:
    """One item spanning ``a`` and ``b``. Its heading path: the larger part's where ``b`` lies
    under the heading all of ``a`` lies at (a heading stub, or a section's opening text, joining
    its first subsection), else the paths' common prefix, under which both lie (siblings: their
    parent's; a subsection and the next section: that section's parent's)."""
    meta = dict(a.meta)
    if "heading_path" not in a.meta and "heading_path" not in b.meta:
        return Item(a.start, b.end, meta, a.max_tokens, a.flat and b.flat)
    pa, pb = a.meta.get("heading_path") or (), b.meta.get("heading_path") or ()
    common = _common(pa, pb)
    if pa == pb:
        meta["heading_path"] = pa
        return Item(a.start, b.end, meta, a.max_tokens, a.flat and b.flat)
    under = a.flat and len(common) == len(pa)
    meta["heading_path"] = (pa if index.count(a.start, a.end) >= index.count(b.start, b.end) else pb) if under else common
    return Item(a.start, b.end, meta, a.max_tokens, False)


def finalize_items(index: TokenIndex, items: list[Item], max_tokens: int) -> list[Span]:
    """Finalize items into exact spans; each keeps its item's metadata."""
    out: list[Span] = []
    for item in items:
        for span in finalize(index, [(item.start, item.end)], item.max_tokens or max_tokens):
            out.append(span._replace(**item.meta) if item.meta else span)
    return out
