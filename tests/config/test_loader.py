import shutil
from pathlib import Path

import pytest
import yaml

from rag_assets.config import ConfigError, load_project

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


def test_env_var_template_overrides_the_default(project, monkeypatch, tmp_path):
    monkeypatch.setenv("RAG_LANCEDB_URI", str(tmp_path / "elsewhere"))
    assert load_project(project).corpus("sample").index_uri == str(tmp_path / "elsewhere")


# (file, edit, key the error must name, text of the fix): one per kind of mistake.
MISTAKES = [
    ("rag_project.yml", lambda d: d["corpora"]["sample"].update({"+chunk_profile": "x"}),
     "corpora.sample.+chunk_profile", "+chunking_profile"),
    ("rag_project.yml", lambda d: d["corpora"]["sample"].update({"+embedding_model": "gpt-9"}),
     "corpora.sample.+embedding_model", "all_minilm_l6_v2"),
    ("sources.yml", lambda d: d["sources"][0].update({"kind": "ftp"}), "sources.0.kind", "correct the value"),
    ("sources.yml", lambda d: d["sources"][0].pop("path"), "sources.0", "path"),
    ("profiles/chunking.yml", lambda d: d["chunking_profiles"][0].update({"overlap": 200}),
     "chunking_profiles.0", "at most half of max_tokens"),
    ("profiles/chunking.yml", lambda d: d["chunking_profiles"][0].update({"max_tokens": "big"}),
     "chunking_profiles.0.max_tokens", "correct the value"),
    ("profiles/embedding_models.yml", lambda d: d["embedding_models"][1].update({"api_key_env": "sk-live-123"}),
     "embedding_models.1.api_key_env", "correct the value"),
    ("profiles/embedding_models.yml", lambda d: d["embedding_models"][0].pop("dimensions"),
     "embedding_models.0.dimensions", "add 'dimensions'"),
    ("profiles/indexes.yml", lambda d: d["indexes"].append(dict(d["indexes"][0])),
     "indexes[1].name", "unique"),
    ("rag_project.yml", lambda d: d["corpora"]["sample"].update({"+eval_profiles": ["nope"]}),
     "corpora.sample.+eval_profiles", "use one of"),
    ("rag_project.yml", lambda d: d["corpora"]["sample"].update({"+eval_questions": "evals/missing.yml"}),
     "corpora.sample.+eval_questions", "relative to dbt_like_configs"),
    ("sources.yml", lambda d: d["sources"][0].update({"access_key_env": "AKIAIOSFODNN7EXAMPLE"}),
     "sources.0.access_key_env", "correct the value"),
    ("sources.yml", lambda d: d["sources"][0].update({"max_document_mb": 0}), "sources.0.max_document_mb",
     "correct the value"),
    ("sources.yml", lambda d: d["sources"][0].update({"schedule": "every hour"}), "sources.0.schedule",
     "correct the value"),
    ("sources.yml", lambda d: d["sources"][0].update({"tenant": "a", "tenant_from_path": True}), "sources.0",
     "correct the value"),
    ("sources.yml", lambda d: d["sources"][0].update({"paht": "docs"}), "sources.0.paht", "use one of"),
    ("rag_project.yml", lambda d: d["corpora"]["sample"].update({"+source": "nowhere"}), "corpora.sample.+source",
     "sample_docs"),
    ("rag_project.yml", lambda d: d["corpora"]["sample"].update({"+index": "nope"}), "corpora.sample.+index",
     "local_lancedb"),
    ("rag_project.yml", lambda d: d["defaults"].update({"+batch_size": -3}), "defaults.+batch_size",
     "correct the value"),
    ("rag_project.yml", lambda d: d.update({"corpuses": {}}), "corpuses", "use one of"),
    ("rag_project.yml", lambda d: d["corpora"]["sample"].update({"+data_tests": ["no_such_test"]}),
     "corpora.sample.+data_tests.0", "correct the value"),
    ("profiles/chunking.yml", lambda d: d["chunking_profiles"][0].update({"strategy": "magic"}),
     "chunking_profiles.0.strategy", "correct the value"),
    ("profiles/indexes.yml", lambda d: d["indexes"][0].pop("uri"), "indexes.0.uri", "add 'uri'"),
]


@pytest.mark.parametrize("file, change, key, fix", MISTAKES)
def test_config_mistakes_name_file_key_and_fix(project, file, change, key, fix):
    edit(project / file, change)
    with pytest.raises(ConfigError) as info:
        load_project(project)
    err = info.value
    assert err.file.endswith(file)
    assert err.key == key
    assert fix in str(err)


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
