"""What each kind of change costs: full ingest, no-op, 1% edited, 1% deleted, chunk-profile change
and embedding-model change, on generated documents.

    .venv/bin/python benchmarks/incremental.py [--docs 2000] [--json]

``expected_chunks_embedded`` and ``live_chunks`` are computed independently of the pipeline: the
generated texts are chunked directly with the profile, and a chunk counts as new when its embedded
text was never embedded for that model before.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
warnings.filterwarnings("ignore", message=".*currently in beta.*")

import yaml  # noqa: E402

from rag_assets.config import load_project  # noqa: E402
from rag_assets.config.profiles import profile_from_config  # noqa: E402
from rag_assets.core.chunking import chunk_document  # noqa: E402
from rag_assets.core.hashing import content_hash, text_hash  # noqa: E402
from rag_assets.core.models import RawDocument  # noqa: E402
from rag_assets.core.parsing import parse_document  # noqa: E402
from rag_assets.core.tokens import get_token_counter  # noqa: E402
from rag_assets.ingest import ingest_project  # noqa: E402
from rag_assets.instance import write_instance_config  # noqa: E402

WORDS = ("robot dock firmware refund warranty battery schedule invoice customer support brush filter "
         "map room cleaning suction sensor update release wheel charge order shipping return policy").split()


def paragraph(rng: random.Random, sentences: int) -> str:
    return " ".join(" ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 16))).capitalize() + "."
                    for _ in range(sentences))


def document(rng: random.Random, i: int) -> str:
    long_doc = i % 10 == 0  # one document in ten spans several chunks
    sections = rng.randint(4, 6) if long_doc else 1
    parts = [f"# Document {i}"]
    for s in range(sections):
        parts.append(f"## Part {s}")
        parts.append(paragraph(rng, rng.randint(8, 12) if long_doc else rng.randint(2, 4)))
    return "\n\n".join(parts) + "\n"


def blocks(markdown: str) -> list[tuple[int, str]]:
    """A generated document's blocks as (heading level, text); level 0 is a paragraph."""
    out = []
    for block in markdown.strip().split("\n\n"):
        level = len(block) - len(block.lstrip("#"))
        out.append((level, block[level:].strip()))
    return out


def as_html(markdown: str) -> str:
    """The generated Markdown document as an HTML page (headings, paragraphs), for format benchmarks."""
    parts = blocks(markdown)
    body = [f"<h{level}>{text}</h{level}>" if level else f"<p>{text}</p>" for level, text in parts]
    title = parts[0][1]
    return f"<html><head><title>{title}</title></head><body>\n" + "\n".join(body) + "\n</body></html>\n"


def as_docx(markdown: str) -> bytes:
    """The generated Markdown document as a Word file (headings, paragraphs), for format benchmarks."""
    import io

    from docx import Document

    out = Document()
    for level, text in blocks(markdown):
        out.add_heading(text, level) if level else out.add_paragraph(text)
    data = io.BytesIO()
    out.save(data)
    return data.getvalue()


def as_scan(markdown: str) -> bytes:
    """The generated Markdown document as a scanned PDF (its pages rendered at 200 dpi and stored
    as images: ``tests.support.make_sample_binaries.scanned``), headings set larger, lines wrapped
    at 90 characters, 50 lines a page, for the OCR benchmark."""
    import tempfile
    import textwrap

    from tests.support.make_sample_binaries import scanned, write_pdf

    lines: list = []
    for level, text in blocks(markdown):
        lines += [(text, 20 - 2 * level), ""] if level else [*textwrap.wrap(text, 90), ""]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "page.pdf"
        write_pdf(path, [lines[i:i + 50] for i in range(0, len(lines), 50)])
        return scanned(path.read_bytes())


def expected_chunks(texts: dict[str, str], project) -> dict[str, list[str]]:
    """Embedded texts of every live document, chunked directly with the corpus' profile."""
    corpus = project.corpus("bench")
    model = corpus.embedding_model
    profile = profile_from_config(corpus.chunking_profile)
    counter = get_token_counter(model.tokenizer)
    out = {}
    for doc_id, text in texts.items():
        data = text.encode()
        doc = parse_document(RawDocument(doc_id, "", content_hash(data), len(data), "", data))
        chunked = chunk_document(doc, profile, counter, model.max_input_tokens)
        out[doc_id] = [text_hash(model.passage_prefix + c.embed_text) for c in chunked.chunks]
    return out


def set_setting(project_dir: Path, key: str, value: str) -> None:
    path = project_dir / "rag_project.yml"
    data = yaml.safe_load(path.read_text())
    data["corpora"]["bench"][key] = value
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def bench_project(root: Path, docs: int, rng: random.Random, model: str | None = None,
                  fmt: str = "md") -> dict[str, str]:
    """Under ``root``: a copy of the config project with one corpus ``bench`` (markdown profile;
    embedding ``model`` when given, else the default one) over ``docs`` documents generated with
    ``rng`` and written as Markdown (``fmt`` "md"), HTML ("html"), Word files ("docx") or scanned
    PDFs ("scan"); points
    this process' environment at it and returns the files' contents (text, or bytes for Word) by
    document id."""
    docs_dir, project_dir = root / "docs", root / "dbt_like_configs"
    docs_dir.mkdir()
    shutil.copytree(REPO / "dbt_like_configs", project_dir)
    project_yml = yaml.safe_load((project_dir / "rag_project.yml").read_text())
    project_yml["corpora"] = {"bench": {"+source": "sample_docs", "+chunking_profile": "markdown",
                                        **({"+embedding_model": model} if model else {})}}
    (project_dir / "rag_project.yml").write_text(yaml.safe_dump(project_yml, sort_keys=False))
    os.environ.update(RAG_PROJECT_DIR=str(project_dir), RAG_SAMPLE_DOCS=str(docs_dir),
                      DAGSTER_HOME=str(root / ".dagster_home"), RAG_LANCEDB_URI=str(root / "lancedb"),
                      RAG_DATA_DIR=str(root / "data"))
    write = {"md": str, "html": as_html, "docx": as_docx, "scan": as_scan}[fmt]
    texts = {f"doc_{i:05d}.{'pdf' if fmt == 'scan' else fmt}": write(document(rng, i)) for i in range(docs)}
    for doc_id, text in texts.items():
        path = docs_dir / doc_id
        path.write_bytes(text) if isinstance(text, bytes) else path.write_text(text)
    return texts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    root = Path(tempfile.mkdtemp(prefix="rag-incremental-"))
    texts = bench_project(root, args.docs, rng)
    docs_dir, project_dir = Path(os.environ["RAG_SAMPLE_DOCS"]), Path(os.environ["RAG_PROJECT_DIR"])
    models = yaml.safe_load((project_dir / "profiles" / "embedding_models.yml").read_text())
    second = dict(models["embedding_models"][0], name="all_minilm_l6_v2_passage", passage_prefix="passage: ")
    models["embedding_models"].append(second)
    (project_dir / "profiles" / "embedding_models.yml").write_text(yaml.safe_dump(models, sort_keys=False))
    write_instance_config(os.environ["DAGSTER_HOME"])  # the instance config `rag` writes
    embedded_before: dict[str, set[str]] = {}  # model -> embedded-text hashes it has seen
    steps = []

    def step(name: str) -> None:
        project = load_project()
        model = project.corpus("bench").embedding_model.name
        live = expected_chunks(texts, project)
        seen = embedded_before.setdefault(model, set())
        expected = len({h for hashes in live.values() for h in hashes} - seen)
        start = time.perf_counter()
        report = ingest_project(project)
        wall = time.perf_counter() - start
        seen.update(h for hashes in live.values() for h in hashes)
        steps.append({"step": name, "wall_s": round(wall, 3), "docs_parsed": report["documents_parsed"],
                      "chunks_embedded": report["chunks_embedded"], "expected_chunks_embedded": expected,
                      "rows": report["rows_in_index"], "live_chunks": sum(len(h) for h in live.values()),
                      "runs": report["runs"], "failed": report["documents_failed"]})
        if not args.json:
            print(json.dumps(steps[-1]), flush=True)

    step("full")
    step("noop")
    edited = rng.sample(sorted(texts), max(1, args.docs // 100))
    for doc_id in edited:
        texts[doc_id] = texts[doc_id] + "\n" + paragraph(rng, 2) + "\n"
        (docs_dir / doc_id).write_text(texts[doc_id])
    step("edit")
    deleted = rng.sample(sorted(set(texts) - set(edited)), max(1, args.docs // 100))
    for doc_id in deleted:
        del texts[doc_id]
        (docs_dir / doc_id).unlink()
    step("delete")
    set_setting(project_dir, "+chunking_profile", "markdown_small")
    chunking = yaml.safe_load((project_dir / "profiles" / "chunking.yml").read_text())
    base = next(p for p in chunking["chunking_profiles"] if p["name"] == "markdown")
    chunking["chunking_profiles"].append(dict(base, name="markdown_small", max_tokens=200))
    (project_dir / "profiles" / "chunking.yml").write_text(yaml.safe_dump(chunking, sort_keys=False))
    step("profile_change")
    set_setting(project_dir, "+embedding_model", "all_minilm_l6_v2_passage")
    step("model_change")

    result = {"docs": args.docs, "steps": steps}
    if args.json:
        print(json.dumps(result, indent=2))
    shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
