"""Chunkers for exchanges: question-and-answer pairs and speaker turns, each kept whole where it fits."""

from __future__ import annotations

import re
from typing import Sequence

from rag_assets.core.chunking.base import Chunker
from rag_assets.core.chunking.engine import Span, TokenIndex
from rag_assets.core.chunking.markers import QUESTION, TURN
from rag_assets.core.chunking.packing import Item, finalize_items, pack_units
from rag_assets.core.chunking.sentences import sentence_spans
from rag_assets.core.models import Element


_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]", re.M)


class FAQChunker(Chunker):
    """One question with its answer per chunk; a pair is split only if over the hard limit,
    and then every piece carries the question as context, unless the question takes more than
    half the limit (it is then split like any text and not repeated)."""

    name = "faq"
    profile_options = {"min_tokens": "min_tokens"}

    def chunk(self, text: str, elements: Sequence[Element] = ()) -> list[Span]:
        if not text or text.isspace():
            return []
        index = TokenIndex(text, self.counter, chars=True)
        questions = {m.start() for m in QUESTION.finditer(text)}
        starts = sorted({0} | questions | {m.start() for m in _HEADING.finditer(text)})
        bounds = starts + [len(text)]
        items: list[Item] = []
        for a, b in zip(bounds, bounds[1:]):
            if not text[a:b].strip():
                continue
            if index.count(a, b) <= self.budget or a not in questions:
                items.extend(Item(x, y) for x, y in pack_units(index, [(a, b)], self.budget))
                continue
            line_end = text.find("\n", a, b)
            line_end = b if line_end < 0 else line_end
            question = text[a:line_end].strip() + "\n"
            ctx_tokens = self.counter.count(question) - self.counter.special_tokens
            items.extend(Item(x, y) for x, y in pack_units(index, [(a, line_end)], self.budget))
            if ctx_tokens > self.budget // 2:  # repeated, it would crowd out the answer: not repeated
                question, ctx_tokens = "", 0
            meta = {"context": question} if question else {}
            items.extend(Item(x, y, meta, self.max_tokens - ctx_tokens)
                         for x, y in pack_units(index, [(line_end, b)], self.budget - ctx_tokens))
        # Headings and intros join the pair after them; two pairs never share a chunk.
        merged: list[Item] = []
        has_question: list[bool] = []
        for item in items:
            is_question = item.start in questions or bool(item.meta)
            if (merged and not has_question[-1] and not merged[-1].meta and not item.meta
                    and index.count(merged[-1].start, item.end) <= self.budget):
                merged[-1] = Item(merged[-1].start, item.end)
                has_question[-1] = is_question
                continue
            merged.append(item)
            has_question.append(is_question)
        return finalize_items(index, merged, self.max_tokens)


class TranscriptChunker(Chunker):
    """Speaker turns kept whole and merged up to the budget; a turn over the limit is split with
    the speaker's name as context."""

    name = "transcript"

    def chunk(self, text: str, elements: Sequence[Element] = ()) -> list[Span]:
        if not text or text.isspace():
            return []
        index = TokenIndex(text, self.counter, chars=True)
        starts = sorted({0, *(m.start() for m in TURN.finditer(text))})
        bounds = starts + [len(text)]
        items: list[Item] = []
        whole: list[tuple[int, int]] = []
        for a, b in zip(bounds, bounds[1:]):
            if not text[a:b].strip():
                continue
            if index.count(a, b) <= self.budget:
                whole.append((a, b))
                continue
            items.extend(Item(x, y) for x, y in pack_units(index, whole, self.budget, self.overlap))
            whole = []
            m = TURN.match(text, a)
            speaker = (m.group(1) + ": ") if m else ""
            ctx_tokens = self.counter.count(speaker) - self.counter.special_tokens if speaker else 0
            for k, (x, y) in enumerate(pack_units(index, sentence_spans(text, a, b), self.budget - ctx_tokens)):
                meta = {"context": speaker} if speaker and k else {}
                items.append(Item(x, y, meta, self.max_tokens - ctx_tokens))
        items.extend(Item(x, y) for x, y in pack_units(index, whole, self.budget, self.overlap))
        items.sort(key=lambda it: it.start)
        return finalize_items(index, items, self.max_tokens)
