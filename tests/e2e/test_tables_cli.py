"""`rag tables`: each table's role, and dropping only what neither serves queries nor is being built, and
the embedding caches of models no longer declared."""

import json

import lancedb
import pytest

from rag_assets.cli import main
from rag_assets.config import load_project
from rag_assets.core.index import LanceIndex, active_pairs, mark_active, open_tables
from rag_assets.core.locking import ingest_lock
from tests.conftest import env, make_project
from tests.core.test_index_restore import embedded


@pytest.fixture
def sample(tmp_path):
    """The sample corpus of a new project and its empty LanceDB, with rag pointed at them."""
    with env(**make_project(tmp_path)):
        corpus = load_project().corpus("sample")
        yield corpus, lancedb.connect(corpus.index_uri)


def _table(db, corpus, profile: str, docs: int, complete: bool) -> LanceIndex:
    model = corpus.embedding_model
    index = LanceIndex(db, corpus.name, model.name, model.dimensions, profile)
    index.write_documents([embedded(f"{profile}{i}.md", 2, model.dimensions) for i in range(docs)], None, "run")
    if complete:
        mark_active(index, corpus.name, model.name, profile, docs)
    return index


def _listed(capsys, *args: str) -> dict[str, dict]:
    capsys.readouterr()
    assert main(["tables", "--json", *args]) == 0
    return {t["table"]: t for t in json.loads(capsys.readouterr().out)}


def test_roles_and_dropping_unused_then_previous_tables(sample, capsys):
    corpus, db = sample
    previous = _table(db, corpus, "recursive", 1, complete=True)
    gone = _table(db, corpus, "a_profile_no_longer_declared", 1, complete=True)
    own = _table(db, corpus, corpus.chunking_profile.name, 2, complete=True)
    abandoned = _table(db, corpus, "fixed_200_0", 1, complete=False)  # a switch given up before it completed
    db.create_table("sample__all_minilm_l6_v2", data=[{"x": 1}])  # an earlier version's table name
    db.create_table("embcache__all_minilm_l6_v2", data=[{"x": 1}])  # the declared model's cache
    db.create_table("embcache__other_model", data=[{"x": 1}, {"x": 2}])  # a model no longer declared
    listed = _listed(capsys)
    assert {name: t["role"] for name, t in listed.items()} == {
        own.name: "serving", previous.name: "previous", gone.name: "unused", abandoned.name: "unused",
        "sample__all_minilm_l6_v2": "unused", "embcache__all_minilm_l6_v2": "cache",
        "embcache__other_model": "unused"}
    assert (listed["embcache__other_model"]["corpus"], listed["embcache__other_model"]["rows"]) == (None, 2)
    assert (listed[own.name]["rows"], listed[own.name]["profile"]) == (4, corpus.chunking_profile.name)
    assert listed[gone.name]["profile"] == "a_profile_no_longer_declared"  # from the registry
    assert listed[abandoned.name]["completed_at"] is None

    dropped = _listed(capsys, "--drop-unused")
    assert {name for name, t in dropped.items() if t["dropped"]} == {
        gone.name, abandoned.name, "sample__all_minilm_l6_v2", "embcache__other_model"}
    names = set(open_tables(db))
    assert not {gone.name, gone.manifest_name, abandoned.name, abandoned.manifest_name,
                "embcache__other_model"} & names
    assert {own.name, own.manifest_name, previous.name, previous.manifest_name,
            "embcache__all_minilm_l6_v2"} <= names
    assert ("all_minilm_l6_v2", "a_profile_no_longer_declared") not in active_pairs(db, corpus.name)

    assert set(_listed(capsys, "--drop-previous")) == {own.name, previous.name, "embcache__all_minilm_l6_v2"}
    assert set(_listed(capsys)) == {own.name, "embcache__all_minilm_l6_v2"}
    assert active_pairs(db, corpus.name) == [("all_minilm_l6_v2", corpus.chunking_profile.name)]
    assert own.count_rows() == 4


def test_during_a_switch_neither_the_serving_nor_the_configured_table_is_dropped(sample, capsys):
    corpus, db = sample
    live = _table(db, corpus, "recursive", 1, complete=True)
    building = _table(db, corpus, corpus.chunking_profile.name, 1, complete=False)
    listed = _listed(capsys, "--drop-unused", "--drop-previous")
    assert {name: (t["role"], t["dropped"]) for name, t in listed.items() if t["corpus"]} == {
        live.name: ("serving", False), building.name: ("configured", False)}
    assert {live.name, building.name} <= set(open_tables(db))


def test_dropping_waits_for_no_ingest(sample, capsys):
    """While `rag ingest` holds the corpus, nothing is dropped and the command says who holds it."""
    corpus, db = sample
    gone = _table(db, corpus, "a_profile_no_longer_declared", 1, complete=True)
    with ingest_lock(corpus.lock_dir, corpus.name):
        assert main(["tables", "--drop-unused"]) == 1
    assert "is being ingested by process" in capsys.readouterr().err
    assert gone.name in set(open_tables(db))


def test_only_previous_and_unused_tables_can_be_dropped(sample):
    from rag_assets.tables import corpus_tables, drop_tables

    corpus, db = sample
    with pytest.raises(ValueError, match="only tables of roles"):
        drop_tables(db, corpus_tables(load_project(), corpus, db), ("serving",))


def test_switching_back_serves_the_old_table_only_once_it_is_complete_again(sample, capsys):
    """A table that served before another went live was not kept current since (documents added,
    edited or deleted meanwhile): the config naming it again does not serve it until it is
    complete again; queries stay on the table that served last."""
    from rag_assets.query import serving

    corpus, db = sample
    own = _table(db, corpus, corpus.chunking_profile.name, 2, complete=True)  # served first
    later = _table(db, corpus, "recursive", 1, complete=True)  # then a switch to recursive went live
    # The config is back on its first profile: it serves again only once complete again.
    assert serving(load_project(), corpus, db).profile.name == "recursive"
    listed = _listed(capsys, "--drop-unused", "--drop-previous")
    assert {name: (t["role"], t["dropped"]) for name, t in listed.items() if t["corpus"]} == {
        later.name: ("serving", False), own.name: ("configured", False)}
    mark_active(own, corpus.name, corpus.embedding_model.name, corpus.chunking_profile.name, 2)
    assert serving(load_project(), corpus, db).profile.name == corpus.chunking_profile.name
    assert _listed(capsys)[later.name]["role"] == "previous"


def test_a_renamed_serving_profile_keeps_its_table_and_no_older_one_serves_until_the_new_is_complete(sample, capsys):
    """The table completed last belongs to a profile since renamed: it cannot be queried, and the
    older complete table lacks what changed since. Queries are refused with the fix; the last
    served table is not dropped (an older one would then look current) until the configured one
    is complete."""
    from rag_assets.query import NotIngested, query_corpus, serving, unserved

    corpus, db = sample
    older = _table(db, corpus, "recursive", 1, complete=True)
    renamed = _table(db, corpus, "default_before_its_rename", 2, complete=True)
    own = _table(db, corpus, corpus.chunking_profile.name, 1, complete=False)  # being built: serves nothing
    project = load_project()
    assert serving(project, corpus, db).profile.name == corpus.chunking_profile.name
    assert "default_before_its_rename" in unserved(project, corpus, db)
    with pytest.raises(NotIngested, match="no longer declared.*run rag ingest"):
        query_corpus(project, corpus, "anything", k=1)
    listed = _listed(capsys, "--drop-unused", "--drop-previous")
    assert {name: (t["role"], t["dropped"]) for name, t in listed.items() if t["corpus"]} == {
        renamed.name: ("last_served", False), older.name: ("previous", True), own.name: ("configured", False)}
    assert renamed.name in set(open_tables(db))

    mark_active(own, corpus.name, corpus.embedding_model.name, corpus.chunking_profile.name, 1)
    assert unserved(load_project(), corpus, db) is None
    roles = {name: t["role"] for name, t in _listed(capsys).items()}
    assert (roles[renamed.name], roles[own.name]) == ("unused", "serving")


def test_lineage_of_a_row_names_the_table_queries_use(sample):
    """Row ids do not name the model or the profile's name: during a switch the configured table may
    hold a row of the same id, written by another run. `rag lineage` of a row a query returned
    traces the serving table's row."""
    from rag_assets.query import lineage, serving

    corpus, db = sample
    model = corpus.embedding_model
    live = LanceIndex(db, corpus.name, model.name, model.dimensions, "recursive")
    live.write_documents([embedded("a.md", 1, model.dimensions)], None, "serving-run")
    mark_active(live, corpus.name, model.name, "recursive", 1)
    building = LanceIndex(db, corpus.name, model.name, model.dimensions, corpus.chunking_profile.name)
    building.write_documents([embedded("a.md", 1, model.dimensions)], None, "switch-run")
    assert serving(load_project(), corpus, db).profile.name == "recursive"
    row_id = live.table().to_arrow()["id"][0].as_py()
    assert building.row(row_id) is not None
    (trace,) = lineage(load_project(), row_id)
    assert (trace["table"], trace["run_id"]) == (live.name, "serving-run")


def test_lineage_of_a_row_two_corpora_hold_asks_which_corpus(tmp_path, capsys):
    """Two corpora holding the same file write rows of the same id: `rag lineage` names both and
    asks for --corpus (it answered with the first corpus' row, source and run), and --corpus picks."""
    import yaml

    values = make_project(tmp_path)
    project_yml = tmp_path / "dbt_like_configs" / "rag_project.yml"
    data = yaml.safe_load(project_yml.read_text())
    data["corpora"]["team_b"] = {"+source": "sample_docs"}
    project_yml.write_text(yaml.safe_dump(data))
    with env(**values):
        project = load_project()
        for name, run in (("sample", "sample-run"), ("team_b", "team-b-run")):
            corpus = project.corpus(name)
            model = corpus.embedding_model
            index = LanceIndex(lancedb.connect(corpus.index_uri), name, model.name, model.dimensions,
                               corpus.chunking_profile.name)
            index.write_documents([embedded("a.md", 1, model.dimensions)], None, run)
        row_id = index.table().to_arrow()["id"][0].as_py()
        capsys.readouterr()
        assert main(["lineage", row_id]) == 2
        assert "corpora 'sample', 'team_b' each hold a row" in capsys.readouterr().err
        assert main(["lineage", row_id, "--corpus", "team_b", "--json"]) == 0
        trace = json.loads(capsys.readouterr().out)
        assert (trace["corpus"], trace["run_id"]) == ("team_b", "team-b-run")


def test_tables_of_a_corpus_no_longer_declared_are_listed_and_dropped_only_by_name(sample, capsys):
    corpus, db = sample
    own = _table(db, corpus, corpus.chunking_profile.name, 1, complete=True)
    model = corpus.embedding_model
    old = LanceIndex(db, "team_docs", model.name, model.dimensions, "recursive")  # a corpus since removed
    old.write_documents([embedded("faq.md", 2, model.dimensions)], None, "run")
    mark_active(old, "team_docs", model.name, "recursive", 1)
    db.create_table("other_app_vectors", data=[{"x": 1}])  # another project's table in the same LanceDB
    listed = _listed(capsys)
    assert (listed[old.name]["role"], listed[old.name]["corpus"], listed[old.name]["rows"]) == ("undeclared", "team_docs", 2)
    assert listed[old.name]["profile"] == "recursive" and "other_app_vectors" not in listed
    assert main(["tables"]) == 0
    assert "`rag tables --drop-undeclared team_docs` drops them" in capsys.readouterr().out
    assert main(["tables", "--drop-unused", "--drop-previous"]) == 0  # never implied
    assert old.name in open_tables(db)
    assert main(["tables", "--drop-undeclared", "sample"]) == 2  # a declared corpus is not undeclared
    assert "no tables of an undeclared corpus of that name (undeclared corpora with tables: team_docs" in \
        capsys.readouterr().err
    dropped = _listed(capsys, "--drop-undeclared", "team_docs")
    assert dropped[old.name]["dropped"] is True and dropped[own.name]["dropped"] is False
    assert sorted(open_tables(db, "team_docs")) == [] and "other_app_vectors" in open_tables(db)
    assert own.name in open_tables(db) and old.name not in _listed(capsys)


def test_a_profile_named_like_the_registry_is_no_undeclared_corpus(sample, capsys):
    corpus, db = sample
    odd = _table(db, corpus, "live_tables", 1, complete=True)  # sample__<model>__live_tables
    own = _table(db, corpus, corpus.chunking_profile.name, 1, complete=True)  # completed last: serving
    listed = _listed(capsys)
    assert listed[own.name]["role"] == "serving" and listed[odd.name]["corpus"] == "sample"
    assert {t["role"] for t in listed.values()} & {"undeclared"} == set()
