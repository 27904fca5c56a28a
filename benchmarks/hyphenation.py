"""How often a word hyphenated over a line break is read as written (``parsing.hyphens``).

Man pages are set twice by groff (``-Tutf8``, 60 columns): as they are (most turn hyphenation off)
and justified with hyphenation on. Each line the second setting ends in a hyphenated word is joined
to the next line as a PDF's lines are (``joined_lines``, the whole page's words known, and again
with none known: a PDF's first page), and scored against the first setting, which writes the word
either whole or with its hyphen; breaks it writes both ways or neither (over a line end) are left out.

    .venv/bin/python benchmarks/hyphenation.py [--pages 300] [--seed 1]

Needs groff and man pages (Debian's groff-base and man-db); prints counts and the rate."""

from __future__ import annotations

import argparse
import glob
import gzip
import random
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag_assets.core.parsing.hyphens import Hyphens, joined_lines  # noqa: E402

_END = re.compile(r"([^\W\d_]+)-\n\Z")
_START = re.compile(r"[ \t]*([^\W_]+)")


def _set(source: str, hyphenated: bool) -> str:
    if hyphenated:
        source = re.sub(r"(?m)^\.nh\s*$", ".hy 4", source)
        source = re.sub(r"(?m)^\.ad l\s*$", ".ad b", source)
        source = re.sub(r"(?m)^(\.TH .*)$", r"\1\n.hy 4", source, count=1)
    done = subprocess.run(["groff", "-man", "-Tutf8", "-rLL=60n", "-P-c"], input=source.encode(),
                          capture_output=True, timeout=60)
    return re.sub(".\b", "", done.stdout.decode("utf-8", "replace")).replace("\u2010", "-")


def _count(pattern: str, text: str) -> int:
    return len(re.findall(r"(?<![^\W\d_])" + re.escape(pattern) + r"(?![^\W\d_])", text))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if not shutil.which("groff"):
        sys.exit("needs groff (apt-get install groff-base)")
    pages = sorted(p for section in ("1", "3", "5", "8") for p in glob.glob(f"/usr/share/man/man{section}/*.gz"))
    if not pages:
        sys.exit("no man pages under /usr/share/man")
    scores = {"words known": Counter(), "none known": Counter()}
    for path in random.Random(args.seed).sample(pages, min(args.pages, len(pages))):
        source = gzip.open(path).read().decode("utf-8", "replace")
        if source.startswith(".so "):
            continue
        truth, broken = _set(source, False), _set(source, True)
        lines = [line + "\n" for line in broken.split("\n")]
        known = Hyphens()
        known.learn(lines)
        for line, after in zip(lines, lines[1:]):
            if not (end := _END.search(line)) or not (start := _START.match(after)):
                continue
            left, right = end.group(1), start.group(1)
            whole, kept = _count(left + right, truth), _count(f"{left}-{right}", truth)
            if (whole > 0) == (kept > 0):
                continue
            for name, hyphens in (("words known", known), ("none known", Hyphens())):
                out = "".join(text for _, text, _ in joined_lines([(0, line, 1.0), (0, after, 1.0)], hyphens))
                read = "whole" if left + right in out else "kept" if f"{left}-{right}" in out else "apart"
                scores[name]["breaks"] += 1
                scores[name]["right" if read == ("whole" if whole else "kept") else "read " + read] += 1
    for name, counts in scores.items():
        rate = counts["right"] / counts["breaks"] if counts["breaks"] else 0.0
        print(f"{name}: {dict(counts)}  right {rate:.1%}")


if __name__ == "__main__":
    main()
