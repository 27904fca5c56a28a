import shutil
import traceback
from pathlib import Path

import pytest
import yaml

from rag_assets.config import ConfigError, load_project
from tests.support.config_mistakes import MISTAKES

CONFIGS = Path(__file__).resolve().parents[2] / "dbt_like_configs"


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "dbt_like_configs"
    shutil.copytree(CONFIGS, root)
    return root


def edit(path: Path, change):
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def test_shipped_project_resolves_every_reference(project):
    loaded = load_project(project)
    corpus = loaded.corpus("sample")
    assert corpus.source.kind == "disk"
    assert corpus.embedding_model.provider == "local"
    assert corpus.embedding_model.max_input_tokens == 256
    assert corpus.chunking_profile.name == "default"
    assert Path(corpus.source_root).is_absolute()
    assert corpus.tags == ("rag", "demo")  # defaults' tags add up with the corpus' own


def test_eval_settings_in_defaults_apply_where_a_corpus_sets_none(project):
    def move(data):
        sample = data["corpora"]["sample"]
        for key in ("+eval_questions", "+eval_profiles", "+min_recall_at_5"):
            data["defaults"][key] = sample.pop(key)
        sample["+min_recall_at_5"] = 70  # the corpus' own wins

    edit(project / "rag_project.yml", move)
    corpus = load_project(project).corpus("sample")
    assert (Path(corpus.eval_questions).name, corpus.eval_profiles, corpus.min_recall_at_5) == (
        "sample_questions.yml", ("default", "recommended", "recursive"), 70)
    edit(project / "rag_project.yml", lambda d: d["defaults"].update({"+eval_profiles": ["nope"]}))
    with pytest.raises(ConfigError) as info:
        load_project(project)
    assert info.value.key == "defaults.+eval_profiles"


def test_a_config_file_not_in_utf_8_is_named_with_its_line(project):
    path = project / "sources.yml"
    path.write_bytes(path.read_bytes().replace(b"# ", "# Grüße ".encode("cp1252"), 1))  # saved by a cp1252 editor
    with pytest.raises(ConfigError) as info:
        load_project(project)
    assert (info.value.file, info.value.key) == (str(path), "(encoding)")
    assert "byte 0xfc on line 5" in str(info.value) and "save the file as UTF-8" in str(info.value)


def test_yaml_merge_keys_reuse_a_declared_mapping(project):
    path = project / "profiles" / "chunking.yml"
    text = path.read_text().replace("  - name: default", "  - &base\n    name: default", 1)
    path.write_text(text + "\n  - <<: *base\n    name: default_small\n    max_tokens: 128\n")
    profiles = {p.name: p for p in load_project(project).chunking_profiles}
    assert profiles["default_small"].max_tokens == 128
    assert profiles["default_small"].strategy == profiles["default"].strategy


def test_env_var_template_overrides_the_default(project, monkeypatch, tmp_path):
    monkeypatch.setenv("RAG_LANCEDB_URI", str(tmp_path / "elsewhere"))
    assert load_project(project).corpus("sample").index_uri == str(tmp_path / "elsewhere")


def test_errors_about_a_sources_location_name_the_environment_variable_it_came_from(project, monkeypatch, tmp_path):
    """A source emptied or missing because an environment variable points elsewhere (or is unset
    where it should be set) is the usual cause of a refused mass delete: the message names it."""
    from rag_assets.core.sources import SourceFolderMissing
    from rag_assets.defs.resources import source_resource

    monkeypatch.delenv("RAG_SAMPLE_DOCS", raising=False)
    monkeypatch.setenv("DOCS_ROOT", str(tmp_path))
    edit(project / "sources.yml",
         lambda d: d["sources"][0].update(path="{{ env_var('DOCS_ROOT') }}/{{ env_var('RAG_SAMPLE_DOCS', 'gone') }}"))
    corpus = load_project(project).corpus("sample")
    assert corpus.source_env == ("DOCS_ROOT", "RAG_SAMPLE_DOCS")
    assert corpus.source_location == (f"'sample_docs' ({tmp_path / 'gone'}, from $DOCS_ROOT, "
                                      "the default of $RAG_SAMPLE_DOCS, which is not set)")
    with pytest.raises(SourceFolderMissing) as missing:
        source_resource(corpus).list_documents()
    assert str(missing.value) == (f"source folder {tmp_path / 'gone'} (from $DOCS_ROOT, the default of $RAG_SAMPLE_DOCS, "
                                  "which is not set) does not exist; fix the source's 'path' in sources.yml or the "
                                  "environment variable it reads")
    # a literal path reads no variable, and its message names none
    edit(project / "sources.yml", lambda d: d["sources"][0].update(path=str(tmp_path / "gone")))
    corpus = load_project(project).corpus("sample")
    assert corpus.source_env == () and corpus.source_location == f"'sample_docs' ({tmp_path / 'gone'})"
    with pytest.raises(SourceFolderMissing, match=r"gone does not exist; fix the source's 'path' in sources.yml$"):
        source_resource(corpus).list_documents()


@pytest.mark.parametrize("file, change, key, fix", MISTAKES)
def test_config_mistakes_name_file_key_and_fix(project, file, change, key, fix):
    edit(project / file, change)
    with pytest.raises(ConfigError) as info:
        load_project(project)
    err = info.value
    assert err.file.endswith(file)
    assert err.key == key
    assert fix in str(err)


def test_executor_defaults_to_in_process_and_follows_the_environment(project, monkeypatch):
    assert load_project(project).executor.kind == "in_process"
    monkeypatch.setenv("RAG_EXECUTOR", "celery")
    executor = load_project(project).executor
    assert (executor.kind, executor.broker_env, executor.backend_env) == (
        "celery", "RAG_CELERY_BROKER", "RAG_CELERY_BACKEND")


def test_blank_s3_endpoint_means_aws(project, monkeypatch):
    assert load_project(project).corpus("sample").index.endpoint_url is None
    monkeypatch.setenv("RAG_LANCEDB_ENDPOINT", "http://127.0.0.1:8333")
    assert load_project(project).corpus("sample").index.endpoint_url == "http://127.0.0.1:8333"


def test_unset_env_var_without_default_is_reported(project):
    path = project / "profiles" / "indexes.yml"
    path.write_text("indexes:\n  - name: local_lancedb\n    uri: \"{{ env_var('RAG_TEST_SURELY_UNSET') }}\"\n")
    with pytest.raises(ConfigError, match=r"indexes.yml: indexes\[0\].uri: env_var\('RAG_TEST_SURELY_UNSET'\) is not set"):
        load_project(project)


def test_invalid_yaml_and_missing_file(project):
    (project / "sources.yml").write_text("sources: [unclosed\n")
    with pytest.raises(ConfigError, match="sources.yml: \\(yaml\\)"):
        load_project(project)
    (project / "sources.yml").unlink()
    with pytest.raises(ConfigError, match="file is missing"):
        load_project(project)


def test_parse_limits_and_delete_guard_have_defaults_and_follow_the_config(project):
    corpus = load_project(project).corpus("sample")
    assert corpus.max_delete_fraction == 0.5
    assert (corpus.source.parse_limits.max_seconds, corpus.source.parse_limits.max_expanded_mb) == (30.0, 32.0)
    edit(project / "sources.yml", lambda d: d["sources"][0].update(max_parse_seconds=5, max_parse_seconds_per_page=1.5,
                                                                  max_parse_seconds_per_ocr_page=4, max_expanded_mb=8, max_elements=1000,
                                                                  max_text_mb=2, max_parse_memory_mb=512))
    edit(project / "rag_project.yml", lambda d: d["defaults"].update({"+max_delete_fraction": 0.2}))
    corpus = load_project(project).corpus("sample")
    limits = corpus.source.parse_limits
    assert (limits.max_seconds, limits.max_seconds_per_page, limits.max_seconds_per_ocr_page, limits.max_expanded_mb,
            limits.max_elements, limits.max_text_mb, limits.max_memory_mb) == (5, 1.5, 4, 8, 1000, 2, 512)
    assert corpus.max_delete_fraction == 0.2
    edit(project / "rag_project.yml", lambda d: d["corpora"]["sample"].update({"+max_delete_fraction": 1.0}))
    assert load_project(project).corpus("sample").max_delete_fraction == 1.0
    edit(project / "rag_project.yml", lambda d: d["corpora"]["sample"].update({"+max_delete_fraction": 0}))
    with pytest.raises(ConfigError, match=r"\+max_delete_fraction"):
        load_project(project)


def test_ocr_reads_english_unless_the_source_names_its_languages(project):
    from rag_assets.defs.versions import code_versions

    corpus = load_project(project).corpus("sample")
    assert corpus.source.ocr_languages == ("eng",)
    default = code_versions(corpus)["parsed_documents"]
    assert "ocr" not in default  # stores parsed before the setting existed stay current
    versions = {}
    for written, read in (("deu+eng", ("deu", "eng")), (["deu"], ("deu",)), ("eng", ("eng",))):
        edit(project / "sources.yml", lambda d: d["sources"][0].update(ocr_languages=written))
        corpus = load_project(project).corpus("sample")
        assert corpus.source.ocr_languages == read
        versions[read] = code_versions(corpus)["parsed_documents"]
    # a change of languages is a new parser setting: the parses (and all after them) are stale
    assert len(set(versions.values())) == 3 and versions[("eng",)] == default


def test_s3_request_limits_have_defaults_and_follow_the_config(project):
    source = load_project(project).corpus("sample").source
    assert (source.connect_timeout_seconds, source.read_timeout_seconds, source.max_attempts) == (5, 15, 3)
    edit(project / "sources.yml", lambda d: d["sources"][0].update(connect_timeout_seconds=2, read_timeout_seconds=60,
                                                                  max_attempts=1))
    source = load_project(project).corpus("sample").source
    assert (source.connect_timeout_seconds, source.read_timeout_seconds, source.max_attempts) == (2, 60, 1)


def test_templates_follow_dbt_grammar(project, monkeypatch, tmp_path):
    # Jinja, as dbt: either quotes, and a default for an unset variable.
    path = project / "profiles" / "indexes.yml"
    path.write_text('indexes:\n  - name: local_lancedb\n    uri: "{{ env_var(\\"RAG_TEST_URI\\", \'' + str(tmp_path / "a")
                    + '\') }}"\n')
    assert load_project(project).corpus("sample").index_uri == str(tmp_path / "a")
    monkeypatch.setenv("RAG_TEST_URI", str(tmp_path / "b"))
    assert load_project(project).corpus("sample").index_uri == str(tmp_path / "b")
    path.write_text("indexes:\n  - name: local_lancedb\n    uri: \"{{ env_var('RAG_TEST_URI' }}\"\n")
    with pytest.raises(ConfigError, match=r"indexes\[0\].uri: not a valid template"):
        load_project(project)


def test_a_secret_written_for_an_env_var_name_is_not_echoed_anywhere(project):
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    edit(project / "profiles" / "embedding_models.yml", lambda d: d["embedding_models"][1].update({"api_key_env": secret}))
    with pytest.raises(ConfigError) as info:
        load_project(project)
    shown = "".join(traceback.format_exception(info.value))  # what `dagster definitions validate` prints
    assert "embedding_models.1.api_key_env" in shown and secret not in shown


def test_a_key_given_twice_is_refused_with_its_line(project):
    path = project / "profiles" / "chunking.yml"
    text = path.read_text()
    path.write_text(text.replace("max_tokens:", "max_tokens: 64\n    max_tokens:", 1))
    with pytest.raises(ConfigError, match=r"(?s)chunking.yml: \(yaml\): .*duplicate key 'max_tokens'.*line \d+"):
        load_project(project)


def test_a_misspelt_required_key_is_named_as_unknown(project):
    edit(project / "rag_project.yml", lambda d: d.update({"nmae": d.pop("name")}))
    with pytest.raises(ConfigError) as info:
        load_project(project)
    assert info.value.key == "nmae" and info.value.problem == "unknown key"


def test_templates_see_the_projects_own_vars_and_unknown_names_are_config_errors(project):
    edit(project / "rag_project.yml", lambda d: d.update({"vars": {"my_batch": 7}})
         or d["defaults"].update({"+batch_size": "{{ var('my_batch') }}"}))
    assert load_project(project).corpus("sample").batch_size == 7
    edit(project / "sources.yml", lambda d: d["sources"][0].update({"path": "{{ envvar('X', 'docs') }}"}))
    with pytest.raises(ConfigError, match=r"sources\[0\].path: not a valid template: 'envvar' is undefined"):
        load_project(project)


CRONS = ["*/15 * * * *", "0 6 * * mon-fri", "0,30 9-17 * * 1-5", "0 0 1 jan,jul *", "0 0 * * 7", "@daily",
         "0 0 L * *", "0 0 29 2 *", "0 0 30,31 2 *", "1-5/2 * * * *", "every hour", "0 0 * * * *", "60 * * * *",
         "0 24 * * *", "0 0 0 * *", "0 0 * 13 *", "0 0 * * 8", "*/0 * * * *", "0 0 30 feb *", "a * * * *",
         "@reboot", "1- * * * *"]


@pytest.mark.parametrize("cron", CRONS)
def test_a_schedule_is_refused_at_load_exactly_when_dagster_would_refuse_it(cron):
    from dagster._utils.schedules import is_valid_cron_string

    from rag_assets.config.schema import cron_problem

    assert (cron_problem(cron) is None) == is_valid_cron_string(cron), cron_problem(cron)


@pytest.mark.parametrize("owner", ["platform-team", "ana@example.com", ["ana@example.com", "search"], "bob@", "a@b"])
def test_an_owner_is_refused_at_load_exactly_when_dagster_would_refuse_it(project, owner):
    from dagster._core.definitions.utils import is_valid_owner

    from rag_assets.defs.factory import owners_of

    names = owner if isinstance(owner, list) else [owner]
    dagster_form = [n if "@" in n else f"team:{n}" for n in names]
    edit(project / "rag_project.yml", lambda d: d["corpora"]["sample"]["+meta"].update({"owner": owner}))
    try:
        corpus = load_project(project).corpus("sample")
    except ConfigError as err:
        assert err.key == "corpora.sample.+meta"
        assert not all(map(is_valid_owner, dagster_form))
    else:
        assert all(map(is_valid_owner, dagster_form))
        assert owners_of(corpus) == dagster_form


def test_a_malformed_question_set_fails_at_load_naming_the_setting_the_file_and_its_entry(project):
    """It passed load and `dagster definitions validate`, then failed every retrieval_eval (with
    +promote_if: every switch held back)."""
    (project / "evals" / "broken.yml").write_text("questions:\n  - question: How long is the warranty?\n")
    edit(project / "rag_project.yml", lambda d: d["corpora"]["sample"].update({"+eval_questions": "evals/broken.yml"}))
    with pytest.raises(ConfigError) as info:
        load_project(project)
    assert (info.value.key, Path(info.value.file).name) == ("corpora.sample.+eval_questions", "rag_project.yml")
    assert "broken.yml: questions[0] needs a 'question' and a 'document'" in str(info.value)
    assert "Fix: correct the question file" in str(info.value)


def test_a_question_set_naming_another_corpus_is_refused_at_load(project):
    """retrieval_eval scores a corpus' +eval_questions on that corpus whatever its `corpus:` says: every
    question about another corpus' documents would score as a miss."""
    (project / "evals" / "other.yml").write_text(
        "corpus: handbooks\nquestions:\n  - {question: 'Who?', document: a.md}\n")
    edit(project / "rag_project.yml", lambda d: d["corpora"]["sample"].update({"+eval_questions": "evals/other.yml"}))
    with pytest.raises(ConfigError, match="asks about corpus 'handbooks', not 'sample'") as info:
        load_project(project)
    assert info.value.key == "corpora.sample.+eval_questions"


def test_the_shipped_source_lists_every_file_of_a_folder_but_hidden_ones(project):
    from rag_assets.core.parsing.formats import CONTENT_TYPES
    from rag_assets.core.sources import matches

    source = load_project(project).corpus("sample").source
    names = [f"docs/a{ext}" for ext in CONTENT_TYPES] + ["SCAN.PDF", "notes.Rmd", "LICENSE", "data.unknown"]
    assert [name for name in names if not matches(name, source.include, source.exclude)] == []
    assert not any(matches(name, source.include, source.exclude) for name in (
        ".env", "docs/.git/config", "docs/~$budget.xlsx", "~$minutes.docx", "photos/Thumbs.db", "desktop.ini"))


def test_a_small_document_size_limit_is_quoted_as_written(project):
    from rag_assets.core.sources import too_large

    edit(project / "sources.yml", lambda d: d["sources"][0].update(max_document_mb=0.01))
    limit = load_project(project).corpus("sample").source.max_document_bytes
    assert "exceeds the source's limit of 0.01 MB" in too_large(37_000, limit)  # was 0.009999
