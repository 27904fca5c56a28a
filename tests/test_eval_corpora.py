"""`rag eval` on a Chroma-format CSV reads each corpus file as an ingest would: a `.md` corpus is
Markdown (its headings reach the chunks), and results are still cited by the corpus id; a scoped
question searches its own corpus only."""

import csv
import io
import json

import pytest

from rag_assets.config import load_project
from rag_assets.core.evaluation import load_questions
from rag_assets.evaluate import _documents, evaluate


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
    docs, _, _, _ = _documents(project.corpora[0], load_questions(questions), questions.relative_to(tmp_path),
                            corpora.relative_to(tmp_path))
    assert {d: doc.doc_id for d, doc in docs.items()} == {"manual": "manual", "notes": "notes"}
    assert (docs["manual"].content_type, docs["notes"].content_type) == ("markdown", "text")
    assert docs["manual"].title == "Sound settings"
    assert [e.heading_path for e in docs["manual"].elements if e.category != "Title"] == \
        [("Sound settings",), ("Sound settings", "Equalizer")]
    assert all(not e.heading_path for e in docs["notes"].elements)
    assert docs["manual"].uri == (corpora / "manual.md").as_uri()


def test_references_index_the_corpus_files_text_and_are_moved_to_what_parsing_leaves_of_it(tmp_path):
    """A Markdown corpus' rules, setext underlines and comments are left out of its parsed text: the
    references, spans of the file's text, must move with it (every span after a "---" pointed 3
    characters past its answer, and every profile's recall fell)."""
    corpora = tmp_path / "corpora"
    corpora.mkdir()
    text = ("Guide\n=====\n\n<!-- licence header -->\n\nIntro text.\n\n---\n\nThe burst limit is 400 requests.\n\n"
            "***\n\nThe daily limit is 5,000 requests.\n")
    (corpora / "guide.md").write_text(text)
    answers = ["The burst limit is 400 requests.", "limit is 400 requests.\n\n***\n\nThe daily", "licence header"]
    questions = tmp_path / "questions.csv"
    with questions.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["question", "references", "corpus_id"])
        for content in answers:
            start = text.index(content)
            writer.writerow(["q", json.dumps([{"content": content, "start_index": start,
                                               "end_index": start + len(content)}]), "guide"])
    docs, _, moved, _ = _documents(load_project().corpora[0], load_questions(questions), questions, corpora)
    shown = docs["guide"].text
    assert "---" not in shown and "<!--" not in shown and "=====" not in shown
    spans = [shown[q.references[0].start : q.references[0].end] for q in moved]
    # the question about the comment is left out: nothing the index holds could answer it
    assert spans == ["The burst limit is 400 requests.", "limit is 400 requests.\n\n\n\nThe daily"]


def test_references_count_a_byte_order_mark_as_python_reads_the_file(tmp_path):
    """Python's UTF-8 codec keeps a file's BOM as a character, so a set's spans count it; the parsed
    text has none. Every span was one character late (its answer's first letter lost)."""
    corpora = tmp_path / "corpora"
    corpora.mkdir()
    (corpora / "faq.txt").write_bytes("\ufeffRefunds take five days.\nShipping is free over 50 euros.\n".encode())
    text = (corpora / "faq.txt").read_text(encoding="utf-8")
    assert text.startswith("\ufeff")
    questions = tmp_path / "questions.csv"
    with questions.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["question", "references", "corpus_id"])
        for content in ("Refunds take five days.", "Shipping is free"):
            start = text.index(content)
            writer.writerow(["q", json.dumps([{"content": content, "start_index": start,
                                               "end_index": start + len(content)}]), "faq"])
    docs, _, moved, _ = _documents(load_project().corpora[0], load_questions(questions), questions, corpora)
    shown = docs["faq"].text
    assert [shown[q.references[0].start : q.references[0].end] for q in moved] == ["Refunds take five days.",
                                                                                "Shipping is free"]


def test_a_scoped_question_is_asked_of_its_own_corpus_only(tmp_path):
    """The same clause in two contracts: unscoped, the closer wording in the other contract wins;
    scoped to its corpus (``scope`` = ``corpus``), the question is searched there only."""
    corpora = tmp_path / "corpora"
    corpora.mkdir()
    (corpora / "nda_a.txt").write_text("Either party may end this agreement with thirty days written notice.\n")
    (corpora / "nda_b.txt").write_text("Termination requires a notice of one month in writing by a party.\n")
    question = "Either party may end this agreement with thirty days written notice."
    content = (corpora / "nda_b.txt").read_text().strip()
    for scope in ("", "corpus"):
        path = tmp_path / f"questions{scope}.csv"
        with path.open("w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["question", "references", "corpus_id", "scope"])
            writer.writerow([question, json.dumps([{"content": content, "start_index": 0, "end_index": len(content)}]),
                             "nda_b", scope])
            writer.writerow(["Who may end it?", json.dumps([{"content": "Either party", "start_index": 0,
                                                              "end_index": 12}]), "nda_a", ""])  # loads nda_a
        seen = []
        evaluate(load_project(), path, ["fixed_200_0"], corpora=corpora, mode="vector", k=1,
                 on_question=lambda profile, q, results: seen.append([r.corpus_id for r in results[1]]))
        assert seen[0] == (["nda_b"] if scope else ["nda_a"])


def test_a_scope_other_than_corpus_is_refused_with_its_line(tmp_path):
    path = tmp_path / "questions.csv"
    path.write_text('question,references,corpus_id,scope\nq,"[]",a,document\n')
    with pytest.raises(ValueError, match=r"questions.csv:2: scope must be empty or 'corpus'"):
        load_questions(path)


def test_a_missing_or_empty_question_file_or_no_results_asked_for_is_refused(tmp_path):
    empty = tmp_path / "questions.csv"
    empty.write_text("question,references,corpus_id\n")
    with pytest.raises(ValueError, match="questions.csv holds no questions"):
        evaluate(load_project(), empty, ["fixed_200_0"], corpora=tmp_path)
    one = tmp_path / "one.csv"
    one.write_text('question,references,corpus_id\nq,"[]",a\n')
    with pytest.raises(ValueError, match="--k must be 1 to 10000, got 0"):
        evaluate(load_project(), one, ["fixed_200_0"], corpora=tmp_path, k=0)
    with pytest.raises(ValueError, match="no question file at .*missing.csv"):
        evaluate(load_project(), tmp_path / "missing.csv", ["fixed_200_0"], corpora=tmp_path)


def test_a_data_dir_that_cannot_be_written_costs_the_cache_not_the_evaluation(tmp_path, monkeypatch):
    """The embedding cache goes to a temporary folder, removed afterwards, with a warning."""
    import io
    import tempfile

    (tmp_path / "not_a_folder").write_text("")
    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path / "not_a_folder" / "data"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    (tmp_path / "corpora").mkdir()
    (tmp_path / "corpora" / "a.txt").write_text("The depot opens at seven. Parcels leave at noon.\n")
    path = tmp_path / "questions.csv"
    path.write_text('question,references,corpus_id\nWhen do parcels leave?,'
                    '"[{""content"": ""Parcels leave at noon."", ""start_index"": 26, ""end_index"": 48}]",a\n')
    progress = io.StringIO()
    [row] = evaluate(load_project(), path, ["fixed_200_0"], corpora=tmp_path / "corpora", progress=progress)
    assert row["recall"] == 100.0
    assert "cannot write the embedding cache" in progress.getvalue()
    assert list((tmp_path / "tmp").iterdir()) == []


def test_a_model_changed_under_its_name_is_never_scored_with_its_old_cached_vectors(tmp_path, monkeypatch):
    import rag_assets.evaluate as evaluation

    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "corpora").mkdir()
    (tmp_path / "corpora" / "a.txt").write_text("The depot opens at seven. Parcels leave at noon.\n")
    path = tmp_path / "questions.csv"
    path.write_text('question,references,corpus_id\nWhen do parcels leave?,'
                    '"[{""content"": ""Parcels leave at noon."", ""start_index"": 26, ""end_index"": 48}]",a\n')
    embedded, real = [], evaluation.open_embedder

    def counting(model):
        inner = real(model)
        return type("Counting", (), {"embed": lambda self, texts: embedded.extend(texts) or inner.embed(texts)})()

    monkeypatch.setattr(evaluation, "open_embedder", counting)
    project = load_project()
    float32 = project.corpora[0].embedding_model
    int8 = project.model_copy(update={"embedding_models": tuple(
        m.model_copy(update={"compute": "int8"}) if m.name == float32.name else m for m in project.embedding_models)})

    def texts_embedded(p):
        embedded.clear()
        evaluate(p, path, ["fixed_200_0"], corpora=tmp_path / "corpora", embedder=float32.name)
        return len(embedded)

    first = texts_embedded(project)
    assert first > 0
    assert texts_embedded(int8) == first  # same name, other arithmetic: embedded again, not read from the cache
    assert texts_embedded(project) == 0  # the float32 vectors are still cached under their own settings


REF = '"[{""start_index"": 0, ""end_index"": 12}]"'


@pytest.mark.parametrize("name, text, said", [
    ("nocol.csv", "question,corpus_id\nq,a\n", "questions.nocol.csv: no column references"),
    ("badjson.csv", "question,references,corpus_id\nq,not json,a\n", ":2: references is not JSON"),
    ("refnum.csv", "question,references,corpus_id\nq,5,a\n", ":2: references must be a JSON list"),
    ("reversed.csv", 'question,references,corpus_id\nq,"[{""start_index"": 50, ""end_index"": 10}]",a\n',
     ':2: reference {"start_index": 50, "end_index": 10} is no span'),
    ("negative.csv", 'question,references,corpus_id\nq,"[{""start_index"": -100, ""end_index"": 10}]",a\n', ":2: reference"),
    ("text.csv", 'question,references,corpus_id\nq,"[{""start_index"": ""a"", ""end_index"": 10}]",a\n', ":2: reference"),
    ("emptyq.csv", f"question,references,corpus_id\n ,{REF},a\n", ":2: the question is empty"),
    ("bad.yml", "questions: [{question: q, document: a.md\n", "not valid YAML"),
    ("null.yml", "questions:\n", "expected a mapping with a list of 'questions'"),
    ("str.yml", "questions: [just text]\n", "questions[0] must be a mapping"),
    ("typo.yml", "questions: [{question: q, document: a.md, sectoin: S}]\n", "unknown key(s) ['sectoin']"),
    ("number.yml", "questions: [{question: 5, document: a.md}]\n", "questions[0] needs a 'question' and a 'document'"),
])
def test_a_malformed_question_set_is_refused_naming_the_file_and_the_entry(tmp_path, name, text, said):
    path = tmp_path / f"questions.{name}"
    path.write_text(text)
    with pytest.raises(ValueError) as info:
        load_questions(path)
    assert str(info.value).startswith(str(path)) and said in str(info.value)


def test_a_csv_saved_by_excel_with_a_byte_order_mark_loads(tmp_path):
    path = tmp_path / "questions.csv"
    path.write_bytes(b"\xef\xbb\xbf" + f"question,references,corpus_id\nWho?,{REF},a\n".encode())
    assert [(q.question, q.references[0].end) for q in load_questions(path)] == [("Who?", 12)]


def test_a_yaml_question_set_is_asked_of_the_corpus_it_names(tmp_path):
    from rag_assets.core.errors import UsageError
    from tests.conftest import edit_yaml, env, make_project

    docs = tmp_path / "pets"
    docs.mkdir()
    (docs / "pets.md").write_text("# Pets\n\nThe office dog is called Biscuit and sleeps under desk 4.\n")
    values = make_project(tmp_path / "p")
    configs = tmp_path / "p" / "dbt_like_configs"
    edit_yaml(configs / "sources.yml", lambda d: d["sources"].append(
        {"name": "pet_docs", "kind": "disk", "path": str(docs), "include": ["**/*.md"]}))
    edit_yaml(configs / "rag_project.yml", lambda d: d["corpora"].update({"pets": {"+source": "pet_docs"}}))
    questions = tmp_path / "pets.yml"
    questions.write_text("corpus: pets\nquestions:\n  - {question: 'What is the office dog called?', document: pets.md}\n")
    with env(**values):
        project = load_project()
        assert project.corpora[0].name == "sample"  # not the first corpus
        row = evaluate(project, questions, ["default"], k=1)[0]
        assert (row["documents_not_found"], row["recall_at_1"]) == ([], 100.0)
        gone = tmp_path / "gone.yml"
        gone.write_text(questions.read_text().replace("document: pets.md", "document: gone.md"))
        warnings = io.StringIO()  # `rag eval --json` shows no progress, but still warns
        assert evaluate(project, gone, ["default"], k=1, warnings=warnings)[0]["documents_not_found"] == ["gone.md"]
        assert "1 question(s) name 'gone.md', which 'pets' does not hold" in warnings.getvalue()
        questions.write_text(questions.read_text().replace("corpus: pets", "corpus: nope"))
        with pytest.raises(UsageError, match=r"no corpus 'nope'; declared: \['sample', 'pets'\]"):
            evaluate(project, questions, ["default"], k=1)
        with pytest.raises(UsageError, match="unknown embedding model 'nope'"):
            evaluate(project, questions, ["default"], k=1, embedder="nope", corpus=project.corpus("pets"))
