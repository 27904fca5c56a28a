"""Load ``dbt_like_configs/`` into a resolved Project, failing with file, key and a fix."""

from __future__ import annotations

import os
from pathlib import Path

import jinja2
import yaml
from jinja2.sandbox import SandboxedEnvironment
from pydantic import BaseModel, ValidationError

from rag_assets.config.schema import (
    DEFAULT_BATCH_SIZE,
    ChunkingFile,
    Corpus,
    CorpusSettings,
    EmbeddingModelsFile,
    IndexesFile,
    Project,
    ProjectFile,
    SourcesFile,
)
from rag_assets.core.evaluation import load_questions, question_set_corpus
from rag_assets.core.keys import safe_name
from rag_assets.core.promotion import GRAMMAR, parse_rule

DEFAULT_PROJECT_DIR = Path(__file__).resolve().parents[2] / "dbt_like_configs"
# dbt's templating grammar; the sandbox exposes only env_var and var to a config file.
_JINJA = SandboxedEnvironment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)


class ConfigError(ValueError):
    """A config mistake: names the file, the key and how to fix it."""

    def __init__(self, file: Path | str, key: str, problem: str, fix: str):
        super().__init__(f"{file}: {key}: {problem}. Fix: {fix}")
        self.file, self.key, self.problem, self.fix = str(file), key, problem, fix


def project_dir_from_env() -> Path:
    """The config project: $RAG_PROJECT_DIR, else the repo's ``dbt_like_configs/``."""
    return Path(os.environ.get("RAG_PROJECT_DIR") or DEFAULT_PROJECT_DIR).resolve()


def _render(value, file: Path, key: str, variables: dict, env_read: dict[str, list[str]]):
    """Render strings as dbt does, with Jinja: ``{{ env_var('NAME', 'default') }}`` and
    ``{{ var('name', 'default') }}`` (either quotes; an unset name without a default is a ConfigError).
    ``env_read`` gets, per key, the environment variables its value read."""
    if isinstance(value, dict):
        return {k: _render(v, file, f"{key}.{k}" if key else str(k), variables, env_read) for k, v in value.items()}
    if isinstance(value, list):
        return [_render(v, file, f"{key}[{i}]", variables, env_read) for i, v in enumerate(value)]
    if not isinstance(value, str) or "{" not in value:
        return value

    def lookup(func: str, source):
        def get(name: str, default: str | None = None) -> str:
            if func == "env_var":
                env_read.setdefault(key, []).append(name)
            if name in source:
                return str(source[name])
            if default is not None:
                return default
            where = "the environment variable " if func == "env_var" else "vars."
            raise ConfigError(file, key, f"{func}('{name}') is not set",
                              f"set {where}{name} or give a default: {func}('{name}', '...')")
        return get

    try:
        template = _JINJA.from_string(value)
    except jinja2.TemplateSyntaxError as exc:
        raise ConfigError(file, key, f"not a valid template: {exc.message}",
                          "write it as dbt does: {{ env_var('NAME', 'default') }}") from exc
    try:
        return template.render(env_var=lookup("env_var", os.environ), var=lookup("var", variables))
    except jinja2.TemplateError as exc:
        raise ConfigError(file, key, f"not a valid template: {exc.message}",
                          "use only env_var('NAME', 'default') and var('name', 'default') inside {{ }}") from None


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key given twice in one mapping (PyYAML keeps the last)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # "<<: *anchor": its keys may be overridden here
                continue
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep)


def _read_yaml(path: Path, variables: dict, env_read: dict[str, list[str]] | None = None) -> dict:
    if not path.exists():
        raise ConfigError(path, "(file)", "file is missing", f"create {path.name} (see the README's config section)")
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)
    except yaml.YAMLError as exc:
        raise ConfigError(path, "(yaml)", f"not valid YAML: {exc}",
                          "fix the YAML at the line shown (a key may appear once per mapping)") from exc
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[:exc.start].count(b"\n") + 1
        raise ConfigError(path, "(encoding)", f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} on line {line})",
                          "save the file as UTF-8") from exc
    if not isinstance(data, dict):
        raise ConfigError(path, "(top level)", "expected a mapping", "start the file with its top-level keys")
    return _render(data, path, "", variables, {} if env_read is None else env_read)


def _validate(model: type[BaseModel], data: dict, path: Path):
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        # A misspelt key shows as an unknown key and a missing one: name the unknown one.
        err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
        key = ".".join(str(p) for p in err["loc"]) or "(top level)"
        # Not chained (`from None`): pydantic's own text quotes the rejected value, which may be a
        # secret written where the name of its environment variable belongs.
        if err["type"] == "extra_forbidden":
            allowed = _allowed_keys(model, err["loc"][:-1], data)
            raise ConfigError(path, key, "unknown key", f"remove it or use one of: {allowed}") from None
        if err["type"] == "missing":
            raise ConfigError(path, key, "required key is missing", f"add '{err['loc'][-1]}'") from None
        if err["loc"][-1:] == ("[key]",):  # a name YAML read as a boolean, number or null
            raise ConfigError(path, ".".join(str(p) for p in err["loc"][:-2]) or "(top level)",
                              f"a name must be text; YAML read one unquoted as {_yaml_value(err['input'])}",
                              "quote it, e.g. 'on': or '2024':") from None
        if err["type"] == "string_type" and (err["input"] is None or isinstance(err["input"], (bool, int, float))):
            raise ConfigError(path, key, f"text is needed; YAML read the value unquoted as {_yaml_value(err['input'])}",
                              "quote it, e.g. name: 'on'") from None
        raise ConfigError(path, key, err["msg"], "correct the value (see the README's config section)") from None


def _yaml_value(value) -> str:
    """What YAML read ``value`` as, for a message (a number is not echoed: it may be a secret)."""
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else "a number"


def _allowed_keys(model: type[BaseModel], loc: tuple, data) -> str:
    """Field names (aliases) valid at ``loc`` inside ``model``, for the fix-it message."""
    current = model
    for part in loc:
        if isinstance(part, int):
            continue
        field = current.model_fields.get(str(part)) or next(
            (f for f in current.model_fields.values() if f.alias == part), None
        )
        if field is None:
            if current is ProjectFile or not hasattr(current, "model_fields"):
                current = CorpusSettings
                continue
            break
        annotation = field.annotation
        inner = getattr(annotation, "__args__", (annotation,))
        current = next((a for a in inner if isinstance(a, type) and issubclass(a, BaseModel)), CorpusSettings)
    return ", ".join(sorted(f.alias or n for n, f in current.model_fields.items()))


def _by_name(items, file: Path, key: str) -> dict:
    seen: dict = {}
    for i, item in enumerate(items):
        if item.name in seen:
            raise ConfigError(file, f"{key}[{i}].name", f"duplicate name {item.name!r}", "give each entry a unique name")
        _check_table_part(item.name, seen, file, f"{key}[{i}].name")
        seen[item.name] = item
    return seen


def _check_table_part(name: str, earlier, file: Path, key: str) -> None:
    """Names become parts of LanceDB table names (``-`` written ``_``, parts joined by ``__``):
    two that would name one table are refused."""
    if "__" in name:
        raise ConfigError(file, key, f"{name!r} contains '__', which separates the parts of a table name",
                          "use single '_' or '-' between words")
    twin = next((other for other in earlier if safe_name(other) == safe_name(name)), None)
    if twin is not None:
        raise ConfigError(file, key, f"{name!r} and {twin!r} would share one LanceDB table ('-' is written '_')",
                          "rename one of them")


def _resolve_path(project_dir: Path, value: str) -> str:
    if "://" in value:
        return value
    return str((project_dir / value).resolve())


def _setting(name: str, settings: CorpusSettings, defaults: CorpusSettings, field: str):
    """(value, key) of a corpus setting: the corpus' own, else the defaults' (the most specific wins)."""
    own = getattr(settings, field)
    alias = CorpusSettings.model_fields[field].alias
    return (own, f"corpora.{name}.{alias}") if own is not None else (getattr(defaults, field), f"defaults.{alias}")


def _promote_if(project_path: Path, name: str, settings: CorpusSettings, defaults: CorpusSettings) -> str | None:
    """The corpus' ``+promote_if`` rule (its own, else the defaults'), checked: it must parse and
    the corpus must declare the golden questions it is scored on."""
    rule, key = _setting(name, settings, defaults, "promote_if")
    if rule is None:
        return None
    try:
        parse_rule(rule)
    except ValueError as exc:
        raise ConfigError(project_path, key, str(exc), f"write the rule as {GRAMMAR}") from exc
    if not _setting(name, settings, defaults, "eval_questions")[0]:
        raise ConfigError(project_path, key, f"corpus {name!r} declares no +eval_questions to score the rule on",
                          f"add '+eval_questions: evals/<file>.yml' to corpora.{name}, or remove +promote_if")
    return rule


def _own_vars(project_path: Path) -> dict:
    """The ``vars:`` of rag_project.yml as written (not rendered), so the file's own
    ``{{ var('name') }}`` sees them, as dbt's do."""
    if not project_path.exists():
        return {}
    try:
        data = yaml.load(project_path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)
    except (yaml.YAMLError, UnicodeDecodeError):
        return {}  # _read_yaml reports it
    own = data.get("vars") if isinstance(data, dict) else None
    return own if isinstance(own, dict) else {}


def load_project(project_dir: str | Path | None = None) -> Project:
    """Read, validate and resolve every config file under ``project_dir``."""
    root = Path(project_dir).resolve() if project_dir else project_dir_from_env()
    project_path = root / "rag_project.yml"
    raw_project = _read_yaml(project_path, _own_vars(project_path))
    project = _validate(ProjectFile, raw_project, project_path)
    variables = dict(project.vars)

    files = {
        "sources": (root / "sources.yml", SourcesFile),
        "chunking_profiles": (root / "profiles" / "chunking.yml", ChunkingFile),
        "embedding_models": (root / "profiles" / "embedding_models.yml", EmbeddingModelsFile),
        "indexes": (root / "profiles" / "indexes.yml", IndexesFile),
    }
    loaded = {}
    env_read: dict[str, list[str]] = {}  # sources.yml's keys and the environment variables they read
    for key, (path, model) in files.items():
        parsed = _validate(model, _read_yaml(path, variables, env_read if key == "sources" else None), path)
        loaded[key] = (path, _by_name(getattr(parsed, key), path, key))
    location_env = {source.name: tuple(dict.fromkeys(name for field in ("path", "bucket", "prefix", "endpoint_url")
                                                     for name in env_read.get(f"sources[{i}].{field}", ())))
                    for i, source in enumerate(loaded["sources"][1].values())}

    data_dir = _resolve_path(root, project.data_dir)
    dagster_home = (root.parent / project.dagster_home).resolve()
    # This machine's own state when the stage store is on S3: beside the instance rag actually
    # uses ($DAGSTER_HOME wins, as in the cli).
    local_dir = Path(os.environ.get("DAGSTER_HOME") or dagster_home)
    corpora = []
    for i, (name, settings) in enumerate(project.corpora.items()):
        _check_table_part(name, list(project.corpora)[:i], project_path, f"corpora.{name}")
        merged = {}
        for field in ("source", "chunking_profile", "embedding_model", "index"):
            value = getattr(settings, field) or getattr(project.defaults, field)
            where = f"corpora.{name}" if getattr(settings, field) else "defaults"
            ref_key = {"source": "sources", "chunking_profile": "chunking_profiles", "index": "indexes"}.get(field, field + "s")
            path, known = loaded[ref_key]
            if value is None:
                raise ConfigError(
                    project_path, f"corpora.{name}.+{field}", "not set here or in defaults",
                    f"add '+{field}: <name>' with one of: {sorted(known)}",
                )
            if value not in known:
                raise ConfigError(
                    project_path, f"{where}.+{field}", f"{value!r} is not declared in {path.name}",
                    f"use one of: {sorted(known)}, or declare {value!r} in {path.relative_to(root)}",
                )
            merged[field] = known[value]
        source = merged["source"]
        eval_questions, questions_key = _setting(name, settings, project.defaults, "eval_questions")
        if eval_questions and not (root / eval_questions).is_file():
            raise ConfigError(project_path, questions_key, f"{eval_questions!r} is not a file",
                              "give a path relative to dbt_like_configs/, e.g. evals/sample_questions.yml")
        if eval_questions:
            try:  # a malformed set would fail only later, in retrieval_eval (and hold every gated switch)
                load_questions(root / eval_questions)
            except ValueError as exc:
                raise ConfigError(project_path, questions_key, f"{eval_questions!r} cannot be read: {exc}",
                                  "correct the question file (see dbt_like_configs/evals/sample_questions.yml)") from None
            if (named := question_set_corpus(root / eval_questions)) not in (None, name):
                raise ConfigError(project_path, questions_key, f"{eval_questions!r} asks about corpus {named!r}, "
                                  f"not {name!r}", f"give corpora.{name} its own question set, or set its 'corpus: "
                                  f"{name}'") from None
        known_profiles = loaded["chunking_profiles"][1]
        eval_profiles, profiles_key = _setting(name, settings, project.defaults, "eval_profiles")
        for profile_name in eval_profiles or ():
            if profile_name not in known_profiles:
                raise ConfigError(project_path, profiles_key, f"{profile_name!r} is not declared",
                                  f"use one of: {sorted(known_profiles)}")
        promote_if = _promote_if(project_path, name, settings, project.defaults)
        max_delete = _setting(name, settings, project.defaults, "max_delete_fraction")[0]
        corpora.append(
            Corpus(
                name=name,
                description=settings.description or project.defaults.description,
                tags=tuple(dict.fromkeys((*project.defaults.tags, *settings.tags))),
                meta={**project.defaults.meta, **settings.meta},
                source=source,
                chunking_profile=merged["chunking_profile"],
                embedding_model=merged["embedding_model"],
                index=merged["index"],
                source_root=_resolve_path(root, source.path) if source.kind == "disk" else None,
                source_env=location_env[source.name],
                index_uri=_resolve_path(root, merged["index"].uri),
                stage_store=(f"{data_dir.rstrip('/')}/stages/{name}" if data_dir.startswith("s3://")
                             else str(Path(data_dir) / "stages" / name)),
                stage_store_s3=project.data_dir_s3,
                lock_dir=(str(local_dir / "locks" / name) if data_dir.startswith("s3://")
                          else str(Path(data_dir) / "stages" / name)),
                batch_size=settings.batch_size or project.defaults.batch_size or DEFAULT_BATCH_SIZE,
                data_tests=_setting(name, settings, project.defaults, "data_tests")[0] or (),
                eval_questions=_resolve_path(root, eval_questions) if eval_questions else None,
                eval_profiles=eval_profiles or (merged["chunking_profile"].name,),
                min_recall_at_5=_setting(name, settings, project.defaults, "min_recall_at_5")[0],
                promote_if=promote_if,
                max_delete_fraction=0.5 if max_delete is None else max_delete,
                automation=settings.automation or project.defaults.automation or "sensor",
            )
        )
    return Project(
        name=project.name,
        project_dir=str(root),
        dagster_home=str(dagster_home),
        local_dir=str(local_dir / "local") if data_dir.startswith("s3://") else data_dir,
        executor=project.executor,
        stage_store_gc=project.stage_store_gc,
        corpora=tuple(corpora),
        chunking_profiles=tuple(loaded["chunking_profiles"][1].values()),
        embedding_models=tuple(loaded["embedding_models"][1].values()),
    )
