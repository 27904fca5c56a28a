"""Build a development question set in the Chroma CSV format from CLAP NQ (Rosenthal et al.,
"CLAPNQ: Cohesive Long-form Answers from Passages in Natural Questions for RAG systems", 2024):
real search-engine queries (Natural Questions) whose answers are sentences, often not consecutive,
selected from a Wikipedia paragraph.

    .venv/bin/python benchmarks/clapnq_devset.py ANSWERABLE.jsonl OUT_DIR [--distractors UNANSWERABLE.jsonl]

Every paragraph (the answerable questions' gold passages, and the unanswerable ones' passages as
distractors, which no question asks about) goes into one Markdown document per Wikipedia title,
``corpora/<corpus_id>.md``: ``# <title>`` then its paragraphs separated by blank lines, each the
dataset's sentences detokenized (NQ's ``word , word`` spacing and ````` / ``''`` quotes undone) and
joined by a space. A question's references are its selected sentences (the round-2 annotation where
there is one), touching ones merged; their offsets are known by construction and checked on the
file as read back.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from squad_devset import write_corpus, write_questions  # noqa: E402

_DETOKENIZE = [
    (re.compile(r"``\s*"), '"'),
    (re.compile(r"\s*''"), '"'),
    (re.compile(r"\s+([.,;:?!%)\]])"), r"\1"),
    (re.compile(r"([(\[$])\s+"), r"\1"),
    (re.compile(r"\s+(n't|'s|'re|'ve|'ll|'d|'m)\b"), r"\1"),
    (re.compile(r"(\w) - (?=\w)"), r"\1-"),
    (re.compile(r"\s+--\s+"), " \u2014 "),
]


def detokenize(sentence: str) -> str:
    """NQ's tokenized text as prose: no space before punctuation or contractions, quotes restored."""
    text = sentence.strip()
    for pattern, replacement in _DETOKENIZE:
        text = pattern.sub(replacement, text)
    return text


def corpus_id(title: str) -> str:
    """A file-safe id from the Wikipedia title."""
    return re.sub(r"[^A-Za-z0-9]+", "_", title).strip("_")[:60] or "untitled"


def chosen_output(record: dict) -> dict | None:
    """The round-2 annotation where there is one, else the first with selected sentences."""
    outputs = [o for o in record.get("output", []) if o.get("selected_sentences")]
    return next((o for o in outputs if o.get("meta", {}).get("round") == 2), outputs[0] if outputs else None)


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("answerable", type=Path, help="clapnq_dev_answerable.jsonl")
    parser.add_argument("out", type=Path, help="output folder (questions.csv, corpora/)")
    parser.add_argument("--distractors", type=Path, help="clapnq_dev_unanswerable.jsonl: passages only")
    args = parser.parse_args(argv)
    answerable = read_jsonl(args.answerable)
    records = answerable + (read_jsonl(args.distractors) if args.distractors else [])

    # title -> paragraphs (each a list of detokenized sentences), in first-seen order, deduplicated
    paragraphs: dict[str, list[list[str]]] = {}
    for record in records:
        passage = record["passages"][0]
        sentences = [detokenize(s) for s in passage["sentences"] if s.strip()]
        if sentences and sentences not in paragraphs.setdefault(passage["title"], []):
            paragraphs[passage["title"]].append(sentences)

    texts, offsets = {}, {}  # offsets: (title, paragraph index) -> start offset of each sentence
    ids: dict[str, str] = {}
    for title, paras in paragraphs.items():
        cid = corpus_id(title)
        while cid in texts:
            cid += "_"
        ids[title] = cid
        text = f"# {title}\n"
        for p, sentences in enumerate(paras):
            text += "\n"
            starts = []
            for s, sentence in enumerate(sentences):
                text += " " if s else ""
                starts.append(len(text))
                text += sentence
            offsets[title, p] = starts
            text += "\n"
        texts[cid] = write_corpus(args.out, cid, text)

    rows, dropped = [], 0
    for record in answerable:
        passage, output = record["passages"][0], chosen_output(record)
        raw = [s for s in passage["sentences"] if s.strip()]
        sentences = [detokenize(s) for s in raw]
        picked = sorted({raw.index(s) for s in output["selected_sentences"] if s in raw}) if output else []
        if not picked:
            dropped += 1
            continue
        title = passage["title"]
        starts = offsets[title, paragraphs[title].index(sentences)]
        spans: list[tuple[int, int]] = []
        for i in picked:
            start, end = starts[i], starts[i] + len(sentences[i])
            if spans and spans[-1][1] + 1 == start:  # touching sentences: one reference
                spans[-1] = (spans[-1][0], end)
            else:
                spans.append((start, end))
        cid = ids[title]
        refs = [{"content": texts[cid][a:b], "start_index": a, "end_index": b} for a, b in spans]
        rows.append((record["input"], refs, cid))
    if dropped:
        print(f"{dropped} questions dropped: no selected sentence found in the passage", file=sys.stderr)
    write_questions(args.out, rows, texts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
