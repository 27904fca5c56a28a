"""`rag chunk` on documents the project has never seen: offsets, coverage and the limit hold."""

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from rag_assets.core.chunking.document import MAX_CHARS_PER_TOKEN
from rag_assets.core.tokens import MINILM_TOKENIZER, get_token_counter

pytestmark = pytest.mark.e2e
RAG = str(Path(sys.executable).parent / "rag")
WORDS = ("robot dock firmware refund warranty battery schedule invoice customer the a of and to in "
         "2.4GHz v4.8.1 E-217 Dr. U.S. e.g. 日本語 naïve 🎉").split()


def unseen_markdown(rng: random.Random) -> str:
    parts = []
    for section in range(rng.randint(3, 8)):
        parts.append("#" * rng.randint(1, 4) + f" Section {section} {rng.choice(WORDS)}")
        for _ in range(rng.randint(1, 4)):
            kind = rng.random()
            if kind < 0.15:
                parts.append("| a | b |\n|---|---|\n" + "\n".join(f"| {rng.choice(WORDS)} | {i} |" for i in range(rng.randint(1, 40))))
            elif kind < 0.25:
                parts.append("```python\n# not a heading\nx = 1\n```")
            elif kind < 0.35:
                parts.append("\n".join(f"- {rng.choice(WORDS)} {rng.choice(WORDS)}" for _ in range(rng.randint(2, 6))))
            else:
                sentences = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 30))).capitalize() + "."
                             for _ in range(rng.randint(1, 12))]
                parts.append(" ".join(sentences))
    return "\n\n".join(parts) + "\n"


def rag_chunk(path: Path, *args: str) -> list[dict]:
    out = subprocess.run([RAG, "chunk", str(path), "--json", *args], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_rag_chunk_guarantees_on_unseen_documents(tmp_path, seed):
    rng = random.Random(seed)
    md = tmp_path / f"unseen_{seed}.md"
    md.write_text(unseen_markdown(rng), encoding="utf-8")
    txt = tmp_path / f"unseen_{seed}.txt"
    txt.write_text("x" * 100_000 + "\n\n" + " ".join(rng.choice(WORDS) for _ in range(3000)), encoding="utf-8")
    cases = [
        (md, ("--tokenizer", "cl100k_base", "--max-tokens", "120", "--overlap", "0"), get_token_counter("cl100k_base"), 120),
        (md, ("--strategy", "markdown"), get_token_counter(MINILM_TOKENIZER), 256),
        (txt, ("--tokenizer", "o200k_base", "--max-tokens", "200", "--strategy", "recursive"), get_token_counter("o200k_base"), 200),
        (txt, ("--strategy", "sentence"), get_token_counter(MINILM_TOKENIZER), 256),
    ]
    for path, args, counter, limit in cases:
        text = path.read_text(encoding="utf-8")
        chunks = rag_chunk(path, *args)
        covered = bytearray(len(text))
        for chunk in chunks:
            assert {"text", "start", "end", "tokens", "heading_path"} <= chunk.keys()
            assert text[chunk["start"] : chunk["end"]] == chunk["text"]
            assert counter.count(chunk["embed_text"]) == chunk["tokens"] <= limit
            assert len(chunk["text"]) <= MAX_CHARS_PER_TOKEN * limit  # MiniLM reads 100 kB of x as one token
            covered[chunk["start"] : chunk["end"]] = b"\x01" * (chunk["end"] - chunk["start"])
        assert all(covered[i] or ch.isspace() for i, ch in enumerate(text)), (path.name, args)


def test_rag_chunk_errors_exit_nonzero(tmp_path):
    out = subprocess.run([RAG, "chunk", str(tmp_path / "missing.md")], capture_output=True, text=True)
    assert out.returncode == 2 and "cannot read" in out.stderr
    binary = tmp_path / "image.md"
    binary.write_bytes(bytes(range(256)) * 4)
    out = subprocess.run([RAG, "chunk", str(binary)], capture_output=True, text=True)
    assert out.returncode == 1 and "image.md" in out.stderr and "binary" in out.stderr


@pytest.mark.parametrize("overlap", ["500", "61", "-5"])
def test_rag_chunk_refuses_an_overlap_a_profile_would_refuse(tmp_path, overlap):
    doc = tmp_path / "doc.md"
    doc.write_text("# Doc\n\nSome text.\n")
    out = subprocess.run([RAG, "chunk", str(doc), "--strategy", "recursive", "--max-tokens", "120",
                          "--overlap", overlap], capture_output=True, text=True)
    assert out.returncode == 2
    assert f"overlap ({overlap}) must be >= 0 and at most half of max_tokens (120)" in out.stderr


def test_rag_chunk_chunks_as_the_corpus_whose_folder_holds_the_file(tmp_path):
    """It chunked every file with the first corpus' profile and model: a file of another corpus was
    shown cut otherwise than its rows."""
    import os

    import yaml

    from tests.conftest import make_project

    values = make_project(tmp_path / "p")
    cfg = Path(values["RAG_PROJECT_DIR"])
    team = tmp_path / "team_docs"
    team.mkdir()
    (team / "faq.md").write_text("# FAQ\n\nThe dock is red. It charges in two hours. Reset it with the pin.\n")
    sources = yaml.safe_load((cfg / "sources.yml").read_text())
    sources["sources"].append({**sources["sources"][0], "name": "team_docs", "path": str(team)})
    (cfg / "sources.yml").write_text(yaml.safe_dump(sources))
    project_yml = yaml.safe_load((cfg / "rag_project.yml").read_text())
    project_yml["corpora"]["team"] = {"+source": "team_docs", "+chunking_profile": "sentence_window"}
    (cfg / "rag_project.yml").write_text(yaml.safe_dump(project_yml, sort_keys=False))

    def strategies(*args):
        out = subprocess.run([RAG, "chunk", str(team / "faq.md"), "--json", *args], capture_output=True, text=True,
                             timeout=300, env={**os.environ, **values})
        assert out.returncode == 0, out.stderr[-2000:]
        return {c["strategy"] for c in json.loads(out.stdout)}

    assert strategies() == {"sentence_window"}
    assert "sentence_window" not in strategies("--corpus", "sample")


def test_a_reader_that_stops_early_ends_rag_quietly(tmp_path):
    """`rag chunk big.txt | head -1`: the closed pipe ends rag as it ends a shell tool (141, no traceback)."""
    doc = tmp_path / "big.txt"
    doc.write_text("\n\n".join(f"para {i} " + "word " * 80 for i in range(3000)), encoding="utf-8")
    proc = subprocess.Popen([RAG, "chunk", str(doc)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = proc.stdout.readline()
    proc.stdout.close()
    _, err = proc.communicate(timeout=300)
    assert "1500 chunks" in first
    assert proc.returncode == 141, err
    assert err == ""


def test_rag_chunk_says_which_language_read_a_code_file(tmp_path):
    """As the chunks materialisation does in the UI: the grammar (or Python's ast) the code was read with."""
    (tmp_path / "Stock.kt").write_text("// Adds stock.\nfun add(stock: Int, total: Int): Int {\n    return stock + total\n}\n")
    (tmp_path / "build.groovy").write_text("def add(a, b) {\n  return a + b\n}\n")
    for name, shown in (("Stock.kt", "strategy code (kotlin),"), ("build.groovy", "strategy code (definition lines),")):
        out = subprocess.run([RAG, "chunk", str(tmp_path / name), "--strategy", "code"], capture_output=True, text=True,
                             timeout=300)
        assert out.returncode == 0 and shown in out.stdout.splitlines()[0], out.stdout + out.stderr[-2000:]
