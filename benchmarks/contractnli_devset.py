"""Build a development question set in the Chroma CSV format from ContractNLI (Koreeda and
Manning, "ContractNLI: A Dataset for Document-level Natural Language Inference for Contracts",
Findings of EMNLP 2021): non-disclosure agreements, 17 hypotheses asked of each, and the spans of
each agreement that entail or contradict them.

    .venv/bin/python benchmarks/contractnli_devset.py SPLIT_JSON OUT_DIR [--documents N]

Each of the first ``N`` agreements of the split becomes a corpus of its own
(``corpora/<corpus_id>.txt``, its text as the dataset gives it, read as plain text), and each
hypothesis the agreement entails or contradicts becomes a question scoped to that corpus (the
``scope`` column: the hypothesis is asked of one agreement, as a reviewer filters to the contract
at hand), with the annotated evidence spans (sentences or list items) as references, touching
ones merged. "NotMentioned" hypotheses have no evidence and are left out.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from squad_devset import merged_references, write_corpus, write_questions  # noqa: E402


def corpus_id(document: dict) -> str:
    """A file-safe id: the dataset's document id and its file name's words."""
    stem = re.sub(r"[^A-Za-z0-9]+", "_", Path(document["file_name"]).stem).strip("_")[:40]
    return f"nda{document['id']}_{stem}"


def references(text: str, spans: list[list[int]], chosen: list[int]) -> list[dict]:
    """The chosen evidence spans, whitespace-trimmed, touching ones merged, in document order."""
    return merged_references(text, [spans[i] for i in chosen])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("split", type=Path, help="ContractNLI split JSON (dev.json or test.json)")
    parser.add_argument("out", type=Path, help="output folder (questions.csv, corpora/)")
    parser.add_argument("--documents", type=int, default=20)
    args = parser.parse_args(argv)
    data = json.loads(args.split.read_text(encoding="utf-8"))
    hypotheses = {key: label["hypothesis"] for key, label in data["labels"].items()}
    texts, rows = {}, []
    for document in data["documents"][:args.documents]:
        cid = corpus_id(document)
        text = texts[cid] = write_corpus(args.out, cid, document["text"], ".txt")
        for key, annotation in sorted(document["annotation_sets"][0]["annotations"].items(),
                                      key=lambda item: int(item[0].split("-")[1])):
            if annotation["choice"] != "NotMentioned" and annotation["spans"]:
                rows.append((hypotheses[key], references(text, document["spans"], annotation["spans"]), cid))
    write_questions(args.out, rows, texts, scope="corpus")
    return 0


if __name__ == "__main__":
    sys.exit(main())
