"""Build a development question set in the Chroma CSV format from the AWS Documentation Dataset
(GitHub siagholami/aws-documentation): AWS user guides as their Markdown sources and 100
questions whose answers were written from them.

    .venv/bin/python benchmarks/awsdocs_devset.py CHECKOUT OUT_DIR [--corpus-id NAME]

Reads ``QA_true.csv`` (question, answer, the document it came from) and those documents,
``documents/<guide>/doc_source/<page>.md``. The corpus is the pages that answer a kept question,
in path order, each as its Markdown source (headings, ``<a name>`` anchors, backslash escapes,
lists and tables as the guides have them), separated by a blank line. An answer is not a span:
it is looked for in its own page as its words with any non-word characters between them (so
``Multi\\-AZ`` matches "Multi-AZ" and a list of items matches the list); a question is kept only
when that finds exactly one place, and its reference is that place widened to whole sentences
(the guides end a sentence with an escaped ``\\.``), or to the whole line for a list item, table row
or heading. Answers stitched from two places, and short ones that occur more than once (a number
in a limits table), are dropped rather than guessed.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from squad_devset import write_set  # noqa: E402

QUESTIONS = "QA_true.csv"
SENTENCE_END = re.compile(r"(?:\\\.|[.!?])(?:\)|\*\*)?\s+(?=[A-Z(\[`*])")
LINE_ITEM = re.compile(r"\s*(?:[+*-]\s|\d+\.\s|\||#)")


def page_path(checkout: Path, document: str) -> Path:
    """``guide/page.md`` as the CSV names it -> its file under ``documents/<guide>/doc_source/``."""
    guide, page = document.strip().split("/", 1)
    return checkout / "documents" / guide / "doc_source" / page


def records(checkout: Path) -> list[dict]:
    """The QA rows: {question, answer, document}, each question once (its first row)."""
    with (checkout / QUESTIONS).open(newline="", encoding="utf-8-sig") as f:
        rows = [{"question": " ".join(r["Question"].split()), "answer": r["Answer_True"].strip(),
                 "document": r["Document_True"].strip()} for r in csv.DictReader(f)]
    return list({r["question"]: r for r in rows}.values())


def _line(page: str, pos: int) -> tuple[int, int]:
    start = page.rfind("\n", 0, pos) + 1
    end = page.find("\n", pos)
    return start, len(page) if end < 0 else end


def locate(page: str, answer: str) -> tuple[int, int] | None:
    """The one place in ``page`` whose words are the answer's (non-word characters between them
    free; a number never part of a longer one), widened to whole sentences, or to the whole line
    for a list item, table row or heading; None when there is no such place or several."""
    words = re.findall(r"\w+", answer)
    if not words:
        return None
    # a number is not part of a longer one ("32" in "32,000" or "1\\.32")
    pattern = re.compile(r"(?<!\w)(?<!\d[.,])(?<!\d\\\.)" + r"\W+".join(re.escape(w) for w in words)
                         + r"(?!\w)(?![.,]\d)(?!\\\.\d)")
    places = [(m.start(), m.end()) for m in pattern.finditer(page)]
    if len(places) != 1:
        return None
    start, end = places[0]
    line_start, line_end = _line(page, start)
    if LINE_ITEM.match(page, line_start) or "\n" in page[start:end]:
        lo, hi = line_start, _line(page, end)[1]
    else:
        cuts = [m.end() for m in SENTENCE_END.finditer(page, line_start, line_end)]
        lo = max([c for c in cuts if c <= start], default=line_start)
        hi = min([c for c in cuts if c >= end], default=line_end)
    while lo < hi and page[lo].isspace():
        lo += 1
    while hi > lo and page[hi - 1].isspace():
        hi -= 1
    return lo, hi


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkout", type=Path, help="a checkout of siagholami/aws-documentation")
    parser.add_argument("out", type=Path, help="output folder (questions.csv, corpora/)")
    parser.add_argument("--corpus-id", default="aws_docs")
    args = parser.parse_args(argv)
    rows = records(args.checkout)
    found: dict[str, list[tuple[str, int, int]]] = {}
    pages: dict[str, str] = {}
    for row in rows:
        if row["document"] not in pages:
            pages[row["document"]] = page_path(args.checkout, row["document"]).read_text(encoding="utf-8").strip("\n")
        page = pages[row["document"]]
        place = locate(page, row["answer"])
        if place:
            found.setdefault(row["document"], []).append((row["question"], *place))
    text, kept = "", []
    for document in sorted(found):
        offset = len(text) + (2 if text else 0)
        text += ("\n\n" if text else "") + pages[document]
        for question, start, end in found[document]:
            kept.append((question, [{"content": text[offset + start:offset + end], "start_index": offset + start,
                                     "end_index": offset + end}]))
    write_set(args.out, args.corpus_id, text, kept)
    print(f"{len(kept)} questions kept of {len(rows)} (answer found once in its page), from {len(found)} pages",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
