"""Build a development question set in the Chroma CSV format from the E-Manual QA data (Nandy et
al., "Question Answering over Electronic Devices", Findings of EMNLP 2021): a Samsung Smart TV /
remote control user manual and the questions its annotators answered from it.

    .venv/bin/python benchmarks/emanual_devset.py REPO_CHECKOUT OUT_DIR [--corpus-id NAME]

Reads ``data/smart_tv_remote_manual_corpus.json`` (the manual's sections, each a title and the
lines its PDF text extraction gave) and the "Normal Q&A" files of ``data/smart_remote_QA.zip``
(question, section path, answer). The corpus is the sections in manual order, each as ``# <title>``
followed by its lines, as extracted. The answers are written from the manual but are not spans:
annotators joined sentences of the section, often with a general sentence of a nearby section
before them, and wrote menu paths as ``Settings>Support`` where the PDF has one item per line. Each
answer sentence of three words or more is looked for in the corpus as its words with any non-word
characters between them: in the sections on the question's path first, else the one place it
occurs; one found only in several places off the path (boilerplate such as "This function may not
be supported depending on the model") is dropped rather than guessed. A question is kept when at
least ``--min-found`` of its answer's words were located; its references are the located sentences,
touching ones merged, and a question asked of several sections has the references of each. The Q&A
files are hand-edited JSON that strict parsers reject (unescaped quotes), so records are read by
their four keys in order.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from squad_devset import write_set  # noqa: E402

CORPUS = "data/smart_tv_remote_manual_corpus.json"
QA_ZIP = "data/smart_remote_QA.zip"
RECORD = re.compile(r'"Section Hierarchy":\s*"(.*?)",\s*"Link":\s*"(.*?)",\s*"Question":\s*"(.*?)",'
                    r'\s*"Answer":\s*"(.*?)"\s*}', re.S)


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text)


def _key(title: str) -> str:
    return " ".join(_words(title.lower()))


def manual(sections: dict) -> tuple[str, dict[str, list[tuple[int, int]]]]:
    """(corpus text, section title key -> [(start, end)] of the sections with that title)."""
    text, where = "", {}
    for section in sections.values():
        block = ("\n\n" if text else "") + f"# {section['title']}\n\n" + "\n".join(section["text"])
        where.setdefault(_key(section["title"]), []).append((len(text), len(text) + len(block)))
        text += block
    return text, where


def questions(archive: Path) -> list[dict]:
    """The Normal Q&A records: {path, question, answer}."""
    out = []
    with zipfile.ZipFile(archive) as z:
        for name in sorted(n for n in z.namelist() if n.startswith("Normal Q&A/") and n.endswith(".json")):
            for m in RECORD.finditer(z.read(name).decode("utf-8")):
                out.append({"path": m[1], "question": " ".join(m[3].split()),
                            "answer": m[4].replace('""', " ")})
    return out


def locate(text: str, where: dict, record: dict) -> tuple[list[tuple[int, int]], float]:
    """The answer's sentences found in ``text`` as (start, end), and the share of its words found."""
    answer = re.sub(r"(?<!\w)\d{1,2}\.\s", " ", record["answer"])  # list numbers the PDF drew as images
    sentences = [s for s in re.split(r"(?<=[.!?])\s*(?=[A-Z(])", answer) if len(_words(s)) >= 3]
    if not sentences:
        return [], 0.0
    sections = [span for level in reversed(record["path"].split(">")) for span in where.get(_key(level), [])]
    found = []
    for sentence in sentences:
        pattern = re.compile(r"\b" + r"\W+".join(re.escape(w) for w in _words(sentence)) + r"\b")
        found.append([(m.start(), m.end()) for m in pattern.finditer(text)])
    chosen = []
    for places in found:
        on_path = [p for p in places if any(lo <= p[0] < hi for lo, hi in sections)]
        chosen.append(on_path[0] if on_path else places[0] if len(places) == 1 else None)
    words = [len(_words(s)) for s in sentences]
    share = sum(w for w, c in zip(words, chosen) if c) / sum(words)
    merged: list[tuple[int, int]] = []
    for start, end in sorted(c for c in chosen if c):
        if merged and (start <= merged[-1][1] or not text[merged[-1][1]:start].strip(" \n.,;:")):
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged, share


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkout", type=Path, help="a checkout of abhi1nandy2/EMNLP-2021-Findings")
    parser.add_argument("out", type=Path, help="output folder (questions.csv, corpora/)")
    parser.add_argument("--corpus-id", default="samsung_tv_manual")
    parser.add_argument("--min-found", type=float, default=0.75)
    args = parser.parse_args(argv)
    text, where = manual(json.loads((args.checkout / CORPUS).read_text(encoding="utf-8")))
    kept: dict[str, list[dict]] = {}
    records = questions(args.checkout / QA_ZIP)
    for record in records:
        spans, share = locate(text, where, record)
        if share < args.min_found:
            continue
        refs = kept.setdefault(record["question"], [])
        for start, end in spans:
            ref = {"content": text[start:end], "start_index": start, "end_index": end}
            if ref not in refs:
                refs.append(ref)
    ordered = sorted(kept.items(), key=lambda item: min(r["start_index"] for r in item[1]))
    write_set(args.out, args.corpus_id, text, ordered)
    print(f"{len(kept)} questions kept of {len(records)} records (at least {args.min_found:.0%} of the answer's "
          "words located)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
