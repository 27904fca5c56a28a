"""`rag eval` on a Chroma-format CSV reads each corpus file as an ingest would: a `.md` corpus is
Markdown (its headings reach the chunks), and results are still cited by the corpus id."""

import csv
import json

from rag_assets.config import load_project
from rag_assets.core.evaluation import load_questions
from rag_assets.evaluate import _documents


def test_a_markdown_corpus_is_parsed_as_markdown_and_named_by_its_corpus_id(tmp_path, monkeypatch):
    corpora = tmp_path / "corpora"
    corpora.mkdir()
    (corpora / "manual.md").write_text("# Sound settings\n\nOpen the sound menu.\n\n## Equalizer\n\nAdjust the bands.\n")
    (corpora / "notes.txt").write_text("# not a heading in plain text\n\nA line.\n")
    questions = tmp_path / "questions.csv"
    with questions.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["question", "references", "corpus_id"])
        for corpus_id, content in (("manual", "Adjust the bands."), ("notes", "A line.")):
            text = (corpora / ("manual.md" if corpus_id == "manual" else "notes.txt")).read_text()
            start = text.index(content)
            writer.writerow(["q", json.dumps([{"content": content, "start_index": start,
                                               "end_index": start + len(content)}]), corpus_id])
    project = load_project()
    monkeypatch.chdir(tmp_path)  # paths as a caller may give them: relative to the working directory
    docs = _documents(project.corpora[0], load_questions(questions), questions.relative_to(tmp_path),
                      corpora.relative_to(tmp_path))
    assert {d: doc.doc_id for d, doc in docs.items()} == {"manual": "manual", "notes": "notes"}
    assert (docs["manual"].content_type, docs["notes"].content_type) == ("markdown", "text")
    assert docs["manual"].title == "Sound settings"
    assert [e.heading_path for e in docs["manual"].elements if e.category != "Title"] == \
        [("Sound settings",), ("Sound settings", "Equalizer")]
    assert all(not e.heading_path for e in docs["notes"].elements)
    assert docs["manual"].uri == (corpora / "manual.md").as_uri()
