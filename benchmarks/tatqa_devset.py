"""Build a development question set in the Chroma CSV format from TAT-QA (Zhu et al., "TAT-QA: A
Question Answering Benchmark on a Hybrid of Tabular and Textual Content in Finance", ACL 2021):
excerpts of annual reports, each a financial table and the paragraphs that go with it, and
questions whose answers annotators marked in them.

    .venv/bin/python benchmarks/tatqa_devset.py SPLIT_JSON OUT_DIR [--max-questions 300]

Each hybrid context (a table and its paragraphs, from one company's report) becomes a corpus of its
own, ``corpora/<corpus_id>.md``: its paragraphs in their order, separated by blank lines, as the
dataset gives them (PDF line breaks inside a paragraph kept), and its table as a Markdown pipe
table (first row as the header row) after the first paragraph that ends with a colon (the one
that introduces it), else after the last paragraph. Questions are asked of their own context (the
``scope`` column: "the company" in a question is the one whose report it is, as an analyst filters
to the filing at hand).

Kept: questions answered in the text (``answer_from`` = ``text``) by one or more spans
(``answer_type`` = ``span`` / ``multi-span``); arithmetic and count answers are not spans, and
table or table-and-text answers are values in table cells, not places in the text. Each answer is
looked for in the paragraphs the question marks relevant (``rel_paragraphs``), as written, else
ignoring case; a question one of whose answers is found in none or in more than one place there
is dropped. Each answer is widened to the whole sentence(s) holding it, as spaCy's
``en_core_web_sm`` parser splits the paragraph (most answers are short phrases: "Annual basis",
"2.5 years"); an answer that is already whole sentences stays as it is. Touching references are
merged. Contexts are taken in the file's order, with all their kept questions, until the next one
would take the count past ``--max-questions``. Every span is checked (``text[start:end] ==
content``) after writing and re-reading the corpus.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from squad_devset import (_clean, _sentence_splitter, _widen, merged_references, write_corpus,  # noqa: E402
                          write_questions)


def corpus_id(index: int, context: dict) -> str:
    """A file-safe id: the context's place in the split and its first paragraph's first words."""
    first = min(context["paragraphs"], key=lambda p: p["order"])["text"] if context["paragraphs"] else ""
    words = re.sub(r"[^A-Za-z0-9]+", "_", first).strip("_")[:40].rstrip("_")
    return f"tatqa{index:03d}_{words}" if words else f"tatqa{index:03d}"


def markdown_table(rows: list[list[str]]) -> str:
    """The table as a Markdown pipe table, its first row as the header row."""
    width = max(len(row) for row in rows)

    def line(cells):
        cells = [" ".join(str(c).split()).replace("|", "\\|") for c in cells] + [""] * (width - len(cells))
        return "| " + " | ".join(cells) + " |"

    return "\n".join([line(rows[0]), "|" + "---|" * width] + [line(row) for row in rows[1:]])


def layout(context: dict) -> tuple[str, dict[str, int]]:
    """(corpus text, paragraph order -> offset of that paragraph's text)."""
    paragraphs = sorted(context["paragraphs"], key=lambda p: p["order"])
    table = markdown_table(context["table"]["table"]) if context["table"]["table"] else ""
    after = next((i for i, p in enumerate(paragraphs) if _clean(p["text"]).rstrip().endswith(":")),
                 len(paragraphs) - 1)
    pieces, offsets, offset = [], {}, 0
    for i, paragraph in enumerate(paragraphs):
        if pieces:
            pieces.append("\n\n")
            offset += 2
        offsets[str(paragraph["order"])] = offset
        text = _clean(paragraph["text"])
        pieces.append(text)
        offset += len(text)
        if i == after and table:
            pieces.append("\n\n" + table)
            offset += 2 + len(table)
    if not paragraphs and table:
        pieces.append(table)
    return "".join(pieces) + "\n", offsets


def find(paragraphs: dict[str, str], relevant: list[str], answer: str) -> list[tuple[str, int, int]]:
    """Every (paragraph, start, end) where the answer occurs in the relevant paragraphs: as written,
    else ignoring case."""
    answer = _clean(answer).strip()
    if not answer:
        return []
    for flags in (0, re.IGNORECASE):
        hits = [(key, m.start(), m.end()) for key in relevant if key in paragraphs
                for m in re.finditer(re.escape(answer), paragraphs[key], flags)]
        if hits:
            return hits
    return []


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("split", type=Path, help="TAT-QA split JSON (tatqa_dataset_dev.json)")
    parser.add_argument("out", type=Path, help="output folder (questions.csv, corpora/)")
    parser.add_argument("--max-questions", type=int, default=300)
    args = parser.parse_args(argv)
    split = _sentence_splitter()
    data = json.loads(args.split.read_text(encoding="utf-8"))
    texts, rows, dropped, considered = {}, [], 0, 0
    for index, context in enumerate(data):
        paragraphs = {str(p["order"]): _clean(p["text"]) for p in context["paragraphs"]}
        questions = sorted((q for q in context["questions"]
                            if q["answer_from"] == "text" and q["answer_type"] in ("span", "multi-span")),
                           key=lambda q: q["order"])
        if not questions:
            continue
        text, offsets = layout(context)
        sentences = {key: split(paragraph) for key, paragraph in paragraphs.items()}
        kept, lost = [], 0
        for question in questions:
            places = [find(paragraphs, [str(k) for k in question["rel_paragraphs"]], a) for a in question["answer"]]
            if any(len(hits) != 1 for hits in places):
                lost += 1
                continue
            spans = []
            for (key, start, end), in places:
                start, end = _widen(sentences[key], start, end)
                while end > start and paragraphs[key][end - 1].isspace():
                    end -= 1
                spans.append((offsets[key] + start, offsets[key] + end))
            kept.append((" ".join(question["question"].split()), merged_references(text, spans)))
        if not kept:
            continue
        if len(rows) + len(kept) > args.max_questions:
            break
        considered += len(questions)
        dropped += lost
        cid = corpus_id(index, context)
        texts[cid] = write_corpus(args.out, cid, text)
        rows.extend((question, refs, cid) for question, refs in kept)
    write_questions(args.out, rows, texts, scope="corpus")
    print(f"{len(rows)} questions from {len(texts)} contexts; {dropped} of {considered} text-span questions "
          f"considered dropped (an answer not found once in its relevant paragraphs)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
