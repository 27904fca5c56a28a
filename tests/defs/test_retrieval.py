"""Retrieval on real indexes: hybrid search, escaped filters, tenant isolation, expansion."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rag_assets.config import load_project
from rag_assets.core.retrieval import Filters
from rag_assets.ingest import ingest_project
from rag_assets.query import NotIngested, TenantRequired, lineage, query_corpus
from tests.conftest import SAMPLE_DOCS, edit_yaml, env, make_project

pytestmark = pytest.mark.slow
RAG = str(Path(sys.executable).parent / "rag")
ADVERSARIAL = ["x' OR '1'='1", "' OR 1=1 --", "%", "_", "acme' OR tenant = 'globex", "\\", "acme%"]


def docs_containing(identifier: str) -> set[str]:
    return {p.relative_to(SAMPLE_DOCS).as_posix() for p in SAMPLE_DOCS.rglob("*")
            if p.is_file() and p.suffix in (".md", ".txt", ".csv", ".py") and identifier in p.read_text()}


def ask(values, text, **kwargs):
    with env(**values):
        project = load_project()
        return query_corpus(project, project.corpus("sample"), text, **kwargs)


def test_hybrid_finds_exact_identifiers_that_vector_search_misses(ingested_sample):
    values, _ = ingested_sample
    assert docs_containing("EXP-4471") == {"handbook/employee_handbook.md"}
    assert ask(values, "EXP-4471", k=1, mode="hybrid")[0].doc_id == "handbook/employee_handbook.md"
    assert ask(values, "EXP-4471", k=1, mode="vector")[0].doc_id != "handbook/employee_handbook.md"
    expected = docs_containing("E-217")
    assert len(expected) >= 2
    hybrid = {h.doc_id for h in ask(values, "E-217", k=3, mode="hybrid")}
    vector = {h.doc_id for h in ask(values, "E-217", k=3, mode="vector")}
    assert expected <= hybrid and not expected <= vector
    fts = ask(values, "E-217", k=len(expected), mode="fts")
    assert {h.doc_id for h in fts} == expected


def test_results_link_to_where_a_source_publishes_them(ingested_sample):
    values, _ = ingested_sample
    with env(**values):
        project = load_project()
        corpus = project.corpus("sample")
        question = "How many days of paid vacation does a full-time employee get?"
        plain = query_corpus(project, corpus, question, k=3, mode="vector")
        assert all(h.link == h.source or h.link.startswith(h.source + "#page=") for h in plain)
        published = corpus.model_copy(update={"source": corpus.source.model_copy(update={
            "link_template": "https://github.com/acme/handbook/blob/main/{path}", "heading_anchors": "github"})})
        hits = query_corpus(project, published, question, k=3, mode="vector")
    assert [h.id for h in hits] == [h.id for h in plain]  # the same results, other links
    vacation = next(h for h in hits if h.heading_path.endswith("> Vacation"))
    assert vacation.doc_id == "handbook/employee_handbook.md"
    assert vacation.link == "https://github.com/acme/handbook/blob/main/handbook/employee_handbook.md#vacation"


def test_filters_are_escaped_and_validated(ingested_sample):
    values, _ = ingested_sample
    for value in ADVERSARIAL:
        for key in ("doc_id", "section", "tag"):
            assert ask(values, "refund policy", k=5, filters=Filters.parse([f"{key}={value}"])) == []
        with pytest.raises(ValueError, match="no content type"):  # a closed set: checked, never searched
            Filters.parse([f"content_type={value}"])
    markdown = ask(values, "refund", k=5, filters=Filters.parse(["content_type=markdown"]))
    assert markdown and {h.doc_id.rsplit(".", 1)[1] for h in markdown} == {"md"}
    out = subprocess.run([RAG, "query", "x", "--filter", "content_type=bogus"], env={**os.environ, **values},
                         capture_output=True, text=True)  # it found nothing, exit 0
    assert out.returncode == 2 and "no content type 'bogus': use one of asciidoc, calendar, code," in out.stderr
    only = ask(values, "refund", k=5, filters=Filters.parse(["doc_id=support/customer_faq.md"]))
    assert only and {h.doc_id for h in only} == {"support/customer_faq.md"}
    section = ask(values, "leave", k=5, filters=Filters.parse(["section=Northwind Robotics Employee Handbook > Time Off"]))
    assert section and all(any(s.startswith("Northwind Robotics Employee Handbook > Time Off") for s in h.sections)
                           for h in section)
    # A section is whole headings, named from the title or from any level below it...
    below = ask(values, "leave", k=5, filters=Filters.parse(["section=Time Off"]))
    assert [(h.id, h.start, h.end) for h in below] == [(h.id, h.start, h.end) for h in section]
    assert ask(values, "leave", k=5, filters=Filters.parse(["section=Time Of"])) == []  # ...never part of one
    # ...and a short document's section is that section's text, not the whole document.
    passwords = ask(values, "customer data", k=3, filters=Filters.parse(["section=Passwords and Authentication"]))
    assert passwords and all(any(s.endswith("Passwords and Authentication") for s in h.sections) for h in passwords)
    assert all("Incident Reporting" not in h.text and "Data Classification" not in h.text for h in passwords)
    # A small section the chunker joined to the one before it is found by its own name (its heading
    # is not the chunk's heading path, which names the section the chunk starts in).
    parental = ask(values, "caregivers", k=3, filters=Filters.parse(["section=Parental Leave"]))
    assert parental and all("Parental Leave" in h.text for h in parental)
    assert any(not h.heading_path.endswith("Parental Leave") for h in parental)
    with pytest.raises(ValueError, match="a tag holds no comma"):
        Filters.parse(["tag=rag,demo"])
    assert ask(values, "refund", k=3, filters=Filters.parse(["tag=demo"]))
    assert ask(values, "refund", k=3, filters=Filters.parse(["updated_after=2999-01-01"])) == []
    out = subprocess.run([RAG, "query", "x", "--filter", "colour=red"], env={**os.environ, **values},
                         capture_output=True, text=True)
    assert out.returncode == 2 and "invalid filter 'colour=red'" in out.stderr


def test_query_mistakes_are_named(ingested_sample):
    values, _ = ingested_sample
    for text, kwargs, cause in [("  ", {}, "the query is empty"), ("refund", {"k": 0}, "ask for 1 to 10000 results"),
                                ("refund", {"neighbours": -1}, "an expansion of 0 to 10000"),
                                ("refund", {"k": 10**20}, r"got k=10{20}"),  # was OverflowError (exit 1)
                                ("refund", {"neighbours": 10**20}, r"expand=10{20}"),
                                ("refund", {"as_of": 10**6}, "has no version 1000000; it has versions 1 to"),
                                ("refund", {"filters": Filters(tenant="acme")}, "declares no tenants: drop --tenant")]:
        with pytest.raises(ValueError, match=cause):
            ask(values, text, **kwargs)

    def rag_query(*args):
        return subprocess.run([RAG, "query", *args], env={**os.environ, **values}, capture_output=True, text=True)

    empty = rag_query("")
    assert empty.returncode == 2 and "the query is empty" in empty.stderr
    huge = rag_query("refund", "--expand", "1" + "0" * 20)
    assert huge.returncode == 2 and "an expansion of 0 to 10000 chunks" in huge.stderr
    nothing = rag_query("refund", "--filter", "doc_id=no/such.md")
    assert nothing.returncode == 0 and "no results match the filters (doc_id=no/such.md)" in nothing.stdout
    twice = rag_query("refund", "--filter", "doc_id=a.md", "--filter", "doc_id=b.md")
    assert twice.returncode == 2 and "filter 'doc_id' given twice" in twice.stderr
    no_words = rag_query("qwzxv", "--mode", "fts")
    assert no_words.returncode == 0 and "no chunk holds the query's words" in no_words.stdout


def test_a_corpus_not_ingested_yet_says_so_whatever_the_filters(tmp_path):
    values = make_project(tmp_path)
    with pytest.raises(NotIngested, match="run rag ingest"):
        ask(values, "refund")
    for extra in ([], ["--filter", "doc_id=support/customer_faq.md"], ["--mode", "fts"]):
        out = subprocess.run([RAG, "query", "refund", *extra], env={**os.environ, **values},
                             capture_output=True, text=True)
        assert out.returncode == 1 and "holds no rows (nothing ingested yet" in out.stderr, extra
    for command in (["status"], ["tables"]):
        assert subprocess.run([RAG, *command], env={**os.environ, **values}, capture_output=True).returncode == 0
    # Reading creates nothing: the LanceDB folder is made by the first ingest, not by a query.
    assert not Path(values["RAG_LANCEDB_URI"]).exists()


def test_neighbour_expansion_and_overlap_merging(ingested_sample):
    values, _ = ingested_sample
    plain = ask(values, "How many weeks of parental leave do caregivers get?", k=1, mode="vector")[0]
    wide = ask(values, "How many weeks of parental leave do caregivers get?", k=1, mode="vector", neighbours=1)[0]
    assert wide.id == plain.id
    assert wide.start <= plain.start and wide.end >= plain.end and (wide.start, wide.end) != (plain.start, plain.end)
    section = "Northwind Robotics Employee Handbook"  # a section filter turns whole documents off
    for kwargs in ({}, {"neighbours": 2, "filters": Filters(section=section)}):
        hits = ask(values, "refund leave", k=8, mode="hybrid", **kwargs)
        for i, a in enumerate(hits):
            for b in hits[i + 1:]:
                assert a.doc_id != b.doc_id or a.end < b.start or b.end < a.start, kwargs


def test_tenants_never_see_each_other(tmp_path):
    docs = tmp_path / "docs"
    for tenant, secret in (("acme", "ACME-7781 launch code is 4242"), ("globex", "GLOBEX-9911 launch code is 7777")):
        (docs / tenant).mkdir(parents=True)
        (docs / tenant / "plans.md").write_text(f"# Plans\n\nThe {secret}. Refunds take 45 days.\n")
    (docs / "orphan.md").write_text("# Orphan\n\nThe launch code of nobody is 1111.\n")  # in no tenant's folder
    values = make_project(tmp_path / "p", docs=docs)
    sources = Path(values["RAG_PROJECT_DIR"]) / "sources.yml"
    data = yaml.safe_load(sources.read_text())
    data["sources"][0]["tenant_from_path"] = True
    sources.write_text(yaml.safe_dump(data))
    with env(**values):
        report = ingest_project(load_project())
    # A document with no tenant folder is refused by name (indexed, it would be served to no one).
    assert [(f["doc_id"], "move it into its tenant's folder" in f["error"]) for f in report["failures"]] == [
        ("orphan.md", True)]
    with pytest.raises(TenantRequired):
        ask(values, "launch code")
    for mode in ("vector", "fts", "hybrid"):
        acme = ask(values, "GLOBEX-9911 launch code", k=10, mode=mode, filters=Filters(tenant="acme"))
        assert acme and all(h.tenant == "acme" and "GLOBEX" not in h.text for h in acme)
    with env(**values):  # an audit of a row names its tenant
        assert [e["tenant"] for e in lineage(load_project(), acme[0].id)] == ["acme"]
        for value in ADVERSARIAL:
            assert ask(values, "launch code", k=10, mode=mode, filters=Filters(tenant=value)) == []
    out = subprocess.run([RAG, "query", "launch code"], env={**os.environ, **values}, capture_output=True, text=True)
    assert out.returncode == 2 and "--tenant" in out.stderr
    # The tenant rule changes: every row is re-labelled at the next ingest, nothing re-embedded but
    # the document that was refused (one chunk), now acme's like the rest.
    data["sources"][0]["tenant_from_path"] = False
    data["sources"][0]["tenant"] = "acme"
    sources.write_text(yaml.safe_dump(data))
    with env(**values):
        report = ingest_project(load_project())
    assert report["documents_failed"] == 0 and report["chunks_embedded"] == 1
    acme = ask(values, "GLOBEX-9911 launch code", k=10, mode="fts", filters=Filters(tenant="acme"))
    assert {h.doc_id for h in acme} == {"acme/plans.md", "globex/plans.md", "orphan.md"}
    assert {h.tenant for h in acme} == {"acme"}
    assert ask(values, "launch code", k=10, mode="fts", filters=Filters(tenant="globex")) == []


def test_eval_asks_each_question_within_its_document_s_tenant(tmp_path):
    """rag eval searched every tenant's documents at once (and the root document ingest refuses):
    not what a user of `rag query --tenant X` gets."""
    from rag_assets.evaluate import evaluate

    docs = tmp_path / "docs"
    for tenant, code in (("acme", "4242"), ("globex", "7777")):
        (docs / tenant).mkdir(parents=True)
        (docs / tenant / "plans.md").write_text(f"# Plans\n\nThe launch code is {code}. Refunds take 45 days.\n")
    (docs / "orphan.md").write_text("# Orphan\n\nThe launch code of nobody is 1111.\n")
    values = make_project(tmp_path / "p", docs=docs)
    edit_yaml(Path(values["RAG_PROJECT_DIR"]) / "sources.yml",
              lambda d: d["sources"][0].update(tenant_from_path=True))
    questions = tmp_path / "q.yml"
    questions.write_text(yaml.safe_dump({"corpus": "sample", "questions": [
        {"question": "What is the launch code?", "document": "globex/plans.md"},
        {"question": "What is the launch code?", "document": "acme/plans.md"}]}))
    seen = []
    with env(**values):
        rows = evaluate(load_project(), questions, ["default"], mode="hybrid",
                        on_question=lambda profile, question, results: seen.append(
                            (question.corpus_id, {r.corpus_id for r in results[5]})))
    assert seen == [("globex/plans.md", {"globex/plans.md"}), ("acme/plans.md", {"acme/plans.md"})]
    assert rows[0]["recall_at_1"] == 100.0 and rows[0]["documents_left_out"] == []


def test_a_documents_front_matter_tags_filter_its_rows(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "deploy.md").write_text("---\ntitle: Deploying billing\ntags: [billing, runbook]\n---\n\n"
                                    "Refunds are paused while the billing service deploys.\n")
    (docs / "faq.md").write_text("---\ntags: support, faq\n---\n\n# FAQ\n\nRefunds take 45 days.\n")
    (docs / "plain.md").write_text("# Notes\n\nRefunds are issued to the original card.\n")
    values = make_project(tmp_path / "p", docs=docs)
    with env(**values):
        assert ingest_project(load_project())["documents_failed"] == 0
    for mode in ("vector", "fts", "hybrid"):
        assert {h.doc_id for h in ask(values, "refunds", k=10, mode=mode)} == {"deploy.md", "faq.md", "plain.md"}
        for tag, found in (("billing", {"deploy.md"}), ("faq", {"faq.md"}), ("support", {"faq.md"}),
                           ("demo", {"deploy.md", "faq.md", "plain.md"}), ("bill", set())):  # demo: the corpus'
            hits = ask(values, "refunds", k=10, mode=mode, filters=Filters.parse([f"tag={tag}"]))
            assert {h.doc_id for h in hits} == found, (mode, tag)
    tags = {h.doc_id: h.to_dict()["tags"] for h in ask(values, "refunds", k=10)}  # what rag query --json shows
    assert tags == {"deploy.md": ("rag", "demo", "billing", "runbook"), "faq.md": ("rag", "demo", "support", "faq"),
                    "plain.md": ("rag", "demo")}


def test_short_documents_come_back_whole(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "short.md").write_text("# Badge\n\nYour badge opens the side entrance after 21:00.\n\nLost badges cost 20 EUR.\n")
    long_text = "# Long\n\n" + "\n\n".join(f"Paragraph {i} talks about robots and maps in detail." for i in range(120))
    (docs / "long.md").write_text(long_text)
    values = make_project(tmp_path / "p", docs=docs)
    cfg = Path(values["RAG_PROJECT_DIR"]) / "profiles"
    chunking = yaml.safe_load((cfg / "chunking.yml").read_text())
    chunking["chunking_profiles"][0].update(max_tokens=40, overlap=0, min_tokens=0, strategy="recursive",
                                            contextual_header=False)
    (cfg / "chunking.yml").write_text(yaml.safe_dump(chunking))
    with env(**values):
        assert ingest_project(load_project())["documents_failed"] == 0
    hit = ask(values, "side entrance badge", k=1)[0]
    text = (docs / "short.md").read_text()
    assert hit.doc_id == "short.md" and hit.start == 0 and hit.end == len(text.rstrip())
    long_hit = ask(values, "Paragraph 60 robots", k=1)[0]
    assert long_hit.doc_id == "long.md" and long_hit.end - long_hit.start < len(long_text) // 4


def test_a_copy_of_a_document_is_named_by_its_result_not_returned_again(tmp_path):
    docs = tmp_path / "docs"
    shutil.copytree(SAMPLE_DOCS, docs)
    shutil.copy(docs / "handbook" / "employee_handbook.md", docs / "handbook" / "Copy of employee_handbook.md")
    values = make_project(tmp_path / "p", docs=docs)
    question = "How many weeks of parental leave do primary caregivers get?"
    for profile in ("default", "recommended"):
        edit_yaml(Path(values["RAG_PROJECT_DIR"]) / "rag_project.yml",
                  lambda d: d["corpora"]["sample"].update({"+chunking_profile": profile}))
        with env(**values):
            assert ingest_project(load_project())["documents_failed"] == 0
        for mode in ("vector", "fts", "hybrid"):
            hits = ask(values, question, k=5, mode=mode)
            spans = [(h.content_hash, h.start, h.end) for h in hits]
            assert len(spans) == len(set(spans)), (profile, mode)  # the copy's same text took a second place
            first = hits[0]
            assert first.doc_id == "handbook/Copy of employee_handbook.md" or \
                first.also_in == ("handbook/Copy of employee_handbook.md",), (profile, mode)
            assert {first.doc_id, *first.also_in} == {"handbook/employee_handbook.md",
                                                      "handbook/Copy of employee_handbook.md"}, (profile, mode)
    out = subprocess.run([RAG, "query", question, "--k", "2"], env={**os.environ, **values}, capture_output=True,
                         text=True)
    assert out.returncode == 0 and "also in: handbook/" in out.stdout and "(the same file)" in out.stdout
    # Copies fill a small candidate pool: the search asks again, and all k results still come back.
    for n in range(3):
        shutil.copy(docs / "handbook" / "employee_handbook.md", docs / "handbook" / f"copy {n}.md")
    edit_yaml(Path(values["RAG_PROJECT_DIR"]) / "profiles" / "indexes.yml",
              lambda d: d["indexes"][0].update(search_candidates=5, whole_document_tokens=0))
    edit_yaml(Path(values["RAG_PROJECT_DIR"]) / "rag_project.yml",  # all k results asked, no margins
              lambda d: d["corpora"]["sample"].update({"+chunking_profile": "default"}))
    with env(**values):
        assert ingest_project(load_project())["documents_failed"] == 0
    hits = ask(values, question, k=5, mode="vector")
    assert len(hits) == 5 and len({(h.content_hash, h.start, h.end) for h in hits}) == 5
    assert len(next(h for h in hits if h.content_hash == hits[0].content_hash).also_in) == 4
    # rag eval credits a result to the question's document when it is one of the result's copies.
    from rag_assets.evaluate import evaluate

    questions = tmp_path / "q.yml"
    questions.write_text(yaml.safe_dump({"corpus": "sample", "questions": [
        {"question": question, "document": name} for name in ("handbook/employee_handbook.md", "handbook/copy 1.md")]}))
    with env(**values):
        assert evaluate(load_project(), questions, ["default"])[0]["recall_at_1"] == 100.0


def test_sentence_window_profile_groups_neighbouring_sentences_into_one_result(tmp_path):
    values = make_project(tmp_path)
    edit_yaml(Path(values["RAG_PROJECT_DIR"]) / "rag_project.yml",
              lambda d: d["corpora"]["sample"].update({"+chunking_profile": "recommended"}))
    with env(**values):
        assert ingest_project(load_project())["documents_failed"] == 0
    question = "How many weeks of parental leave do primary caregivers get?"
    handbook = (Path(values["RAG_SAMPLE_DOCS"]) / "handbook" / "employee_handbook.md").read_text()

    def check(hits):
        assert hits[0].doc_id == "handbook/employee_handbook.md"
        assert "20 weeks" in handbook[hits[0].start : hits[0].end]
        for i, a in enumerate(hits):
            for b in hits[i + 1:]:
                assert a.doc_id != b.doc_id or a.end <= b.start or b.end <= a.start

    with env(**values):
        margin = load_project().corpus("sample").chunking_profile.score_margin
    assert margin
    cut = ask(values, question, k=3, mode="vector")
    check(cut)
    with pytest.raises(ValueError, match="drop --expand"):  # groups are widened by the profile, not by chunks
        ask(values, question, k=3, neighbours=1)
    assert all(h.score >= cut[0].score - margin for h in cut)

    # The margins are query-time settings: dropping them re-embeds nothing and fills all k results.
    chunking_yml = Path(values["RAG_PROJECT_DIR"]) / "profiles" / "chunking.yml"
    profiles = yaml.safe_load(chunking_yml.read_text())
    for profile in profiles["chunking_profiles"]:
        if profile["name"] == "recommended":
            del profile["score_margin"], profile["late_interaction_margin"]
    chunking_yml.write_text(yaml.safe_dump(profiles))
    with env(**values):
        again = ingest_project(load_project())
    assert again["corpora"]["sample"]["chunks_embedded"] == 0
    full = ask(values, question, k=3, mode="vector")
    check(full)
    assert len(full) == 3 and len(cut) < 3
    assert ask(values, question, k=3, mode="hybrid")[0].doc_id == "handbook/employee_handbook.md"

    # The widths are query-time too: a wider group context widens every result around the same
    # hits (same ranking) and re-embeds nothing.
    for profile in profiles["chunking_profiles"]:
        if profile["name"] == "recommended":
            profile.update(group_context=3, lone_hit_context=3)
    chunking_yml.write_text(yaml.safe_dump(profiles))
    with env(**values):
        assert ingest_project(load_project())["corpora"]["sample"]["chunks_embedded"] == 0
    wide = ask(values, question, k=3, mode="vector")
    check(wide)
    assert [h.id for h in wide] == [h.id for h in full]
    for narrow, wider in zip(full, wide):
        assert wider.start <= narrow.start and wider.end >= narrow.end
    assert any(wider.end - wider.start > narrow.end - narrow.start for narrow, wider in zip(full, wide))


def test_eval_scores_the_spans_rag_query_returns(tmp_path):
    # An ungrouped sentence-window profile: each result is its sentence's window, and touching or
    # overlapping windows of one document are one result, in `rag query` and in `rag eval` alike.
    values = make_project(tmp_path)
    edit_yaml(Path(values["RAG_PROJECT_DIR"]) / "rag_project.yml",
              lambda d: d["corpora"]["sample"].update({"+chunking_profile": "sentence_window"}))
    questions = tmp_path / "questions.yml"
    question = "How many weeks of parental leave do primary caregivers get?"
    questions.write_text(yaml.safe_dump({"corpus": "sample", "questions": [
        {"question": question, "document": "handbook/employee_handbook.md"}]}))
    with env(**values):
        from rag_assets.evaluate import evaluate

        assert ingest_project(load_project())["documents_failed"] == 0
        scored = []
        evaluate(load_project(), questions, ["sentence_window"], k=10,
                 on_question=lambda profile, q, results: scored.extend(results[10]))
    hits = ask(values, question, k=10, mode="vector")
    assert [(h.doc_id, h.start, h.end) for h in hits] == [(r.corpus_id, r.start, r.end) for r in scored]
    assert all(h.start <= h.window_start and h.window_end <= h.end for h in hits)
    for i, a in enumerate(hits):
        assert all(a.doc_id != b.doc_id or a.end < b.start or b.end < a.start for b in hits[i + 1:])
