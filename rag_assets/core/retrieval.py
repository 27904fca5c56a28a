"""Retrieval over a corpus' LanceDB table: vector, full-text and hybrid search with citations.

Filters are built only from validated keys and escaped values (``build_where``): a value such as
``x' OR '1'='1`` is matched literally and finds nothing. Hybrid search fuses the vector and
full-text rankings of the top candidates with reciprocal-rank fusion; MMR can rerank for
diversity. Hits of one document whose spans overlap are merged into one result.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from itertools import compress
from typing import Callable, Mapping, Sequence

import numpy as np

from rag_assets.core.index import LanceIndex, sql_str
from rag_assets.core.links import place_link
from rag_assets.core.parsing.formats import CONTENT_TYPE_NAMES

CITATION_COLUMNS = ["id", "doc_id", "text", "start", "end", "chunk_index", "title", "source_uri",
                    "heading_path", "page", "content_hash", "embedding_model", "chunk_profile", "run_id", "tenant",
                    "window_start", "window_end", "tags", "page_end", "ocr", "sections", "anchor", "content_type"]
FILTER_KEYS = ("doc_id", "section", "tag", "content_type", "updated_after")
MODES = ("vector", "fts", "hybrid")
MAX_RESULTS = 10_000  # results (or neighbouring chunks) one query may ask for: LanceDB's limits are machine integers
RRF_K = 60
COPY_RETRIES = 3  # searches again for more candidates where copies of documents filled the pool
# What a query returns from the same rows; scores computed on them (retrieval_eval) are redone when it moves.
RETRIEVAL_REVISION = "1"  # 1: short documents whole in grouped results too, counted on their text


class FilterError(ValueError):
    """An invalid filter key or value; the message says what is accepted."""


@dataclass(frozen=True)
class Filters:
    """Validated metadata filters. ``tenant`` is mandatory where the corpus declares tenants."""

    tenant: str | None = None
    doc_id: str | None = None
    section: str | None = None
    tag: str | None = None
    content_type: str | None = None
    updated_after: datetime | None = None

    @classmethod
    def parse(cls, pairs: list[str], tenant: str | None = None) -> "Filters":
        """From ``key=value`` strings (the CLI's repeatable ``--filter``)."""
        values: dict = {"tenant": tenant}
        for pair in pairs:
            key, sep, value = pair.partition("=")
            key = key.strip()
            if not sep or key not in FILTER_KEYS:
                raise FilterError(f"invalid filter {pair!r}: use key=value with key one of {', '.join(FILTER_KEYS)}")
            if not value or "\x00" in value or len(value) > 512:
                raise FilterError(f"invalid value for filter {key!r}: give 1-512 characters")
            if key in values:  # filters combine with AND: two values of one key can match nothing
                raise FilterError(f"filter {key!r} given twice: give each key once")
            if key == "content_type" and value not in CONTENT_TYPE_NAMES:
                raise FilterError(f"no content type {value!r}: use one of {', '.join(CONTENT_TYPE_NAMES)}")
            if key == "tag" and "," in value:  # tags are stored comma-delimited: one would match two
                raise FilterError(f"a tag holds no comma, got {value!r}: filter on one tag")
            if key == "updated_after":
                try:
                    parsed = datetime.fromisoformat(value)
                except ValueError as exc:
                    raise FilterError(f"updated_after must be an ISO date or datetime, got {value!r}") from exc
                values[key] = parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)
            else:
                values[key] = value
        return cls(**values)


def _like(value: str, prefix: str = "", suffix: str = "") -> str:
    """A LIKE pattern that matches ``value`` literally between the given wildcards."""
    escaped = value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"{sql_str(prefix + escaped + suffix)} ESCAPE '\\'"


def build_where(filters: Filters, sections: bool = True) -> str | None:
    """A LanceDB filter from escaped values only; None when nothing filters. ``sections``: the
    table has the column of every section a chunk spans (a table written before it: its rows'
    heading paths are matched instead)."""
    clauses = []
    if filters.tenant is not None:
        clauses.append(f"tenant = {sql_str(filters.tenant)}")
    if filters.doc_id is not None:
        clauses.append(f"doc_id = {sql_str(filters.doc_id)}")
    if filters.section is not None and sections:  # whole headings of a path it spans, from its start or below
        section = filters.section
        clauses.append(" OR ".join(f"sections LIKE {_like(section, prefix=before, suffix=after)}"
                                   for before in ("%\n", "% > ") for after in ("\n%", " > %")).join("()"))
    elif filters.section is not None:
        section = filters.section
        clauses.append(f"(heading_path = {sql_str(section)} OR heading_path LIKE {_like(section, suffix=' > %')} "
                       f"OR heading_path LIKE {_like(section, prefix='% > ')} "
                       f"OR heading_path LIKE {_like(section, prefix='% > ', suffix=' > %')})")
    if filters.content_type is not None:
        clauses.append(f"content_type = {sql_str(filters.content_type)}")
    if filters.tag is not None:
        clauses.append(f"tags LIKE {_like(filters.tag, prefix='%,', suffix=',%')}")
    if filters.updated_after is not None:
        stamp = filters.updated_after.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
        clauses.append(f"ingested_at > timestamp {sql_str(stamp)}")
    return " AND ".join(clauses) if clauses else None


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk (or merged span) with everything a citation needs. A chunk's ``text``
    is the parsed text's ``[start:end]``; a merged span's joins its chunks with one space where
    whitespace (not stored) lies between them."""

    id: str
    doc_id: str
    text: str
    source: str
    title: str
    heading_path: str
    page: int | None
    start: int
    end: int
    chunk_index: int
    score: float
    mode: str = "vector"
    tenant: str | None = None
    window_start: int | None = None
    window_end: int | None = None
    vector: list[float] | None = field(default=None, repr=False, compare=False)
    page_end: int | None = None  # the page where the text ends: ``page`` when it lies on one
    tags: tuple[str, ...] = ()  # the corpus' and the document's own
    ocr: bool = False  # OCR read (some of) the text from a scan or a picture: it may hold misreadings
    sections: tuple[str, ...] = ()  # every heading path its text lies under, ``heading_path``'s first
    content_hash: str = ""  # of the document's bytes
    also_in: tuple[str, ...] = ()  # documents of the same bytes (copies) holding the same text, not repeated
    anchor: str | None = None  # a web page's section: the id the page gives its heading
    content_type: str = ""  # what the document was parsed as
    link: str = ""  # opens the cited place: a web page's section (#anchor), a PDF's page (#page=N), else the source

    def to_dict(self) -> dict:
        data = asdict(self)
        data.pop("vector")
        return data

    def citation(self) -> str:
        """Title | heading path [the other sections it spans, by their own heading] | pages | chars,
        then where to open it (``link``)."""
        parts = [self.title or self.doc_id]
        others = [s.rsplit(" > ", 1)[-1] for s in self.sections  # not its own path, nor one above it
                  if s != self.heading_path and not self.heading_path.startswith(s + " > ")]
        if self.heading_path or others:
            parts.append(" ".join(filter(None, [self.heading_path, f"[{'; '.join(others)}]" if others else ""])))
        if self.page is not None:
            parts.append(f"pp. {self.page}-{self.page_end}" if (self.page_end or self.page) > self.page
                         else f"p. {self.page}")
        parts.append(f"chars {self.start}-{self.end}")
        if self.ocr:
            parts.append("read by OCR")
        return " | ".join(parts) + f"  ({self.link or self.source})"


def _hit(row: dict, score: float, mode: str) -> Hit:
    return Hit(id=row["id"], doc_id=row["doc_id"], text=row["text"], source=row["source_uri"], title=row["title"],
               heading_path=row["heading_path"] or "", page=row["page"], start=row["start"], end=row["end"],
               chunk_index=row["chunk_index"], score=round(float(score), 6), mode=mode, tenant=row.get("tenant"),
               window_start=row.get("window_start"), window_end=row.get("window_end"), vector=row.get("vector"),
               page_end=row.get("page_end", row["page"]),  # a table written before the column: its start page
               ocr=bool(row.get("ocr")),
               sections=tuple(s for s in (row.get("sections") or "").split("\n") if s) or (
                   (row["heading_path"],) if row["heading_path"] else ()),  # a table written before the column
               tags=tuple(tag for tag in (row.get("tags") or "").split(",") if tag),
               content_hash=row.get("content_hash") or "", anchor=row.get("anchor"),
               content_type=row.get("content_type") or "",
               link=place_link(row["source_uri"], row.get("anchor"), row.get("content_type") or "", row["page"]))


def _table(index: LanceIndex, version: int | None):
    table = index.table()
    if version is not None:
        table.checkout(version)
    return table


def _columns(table, *extra: str) -> list[str]:
    """``CITATION_COLUMNS`` (and ``extra``) that ``table`` (at its checked-out version) has: a table
    written before a column was added (``ADDED_COLUMNS``) is read without it until its next write."""
    names = set(table.schema.names)
    return [c for c in CITATION_COLUMNS if c in names] + list(extra)


def vector_search(index: LanceIndex, vector: list[float], k: int = 5, version: int | None = None,
                  where: str | None = None) -> list[Hit]:
    """Top ``k`` chunks by cosine similarity (score = 1 - cosine distance)."""
    table = _table(index, version)
    query = table.search(vector, vector_column_name="vector").distance_type("cosine")
    if where:
        query = query.where(where, prefilter=True)
    rows = query.select(_columns(table, "vector", "_distance")).limit(k).to_list()
    return [_hit(r, 1.0 - float(r["_distance"]), "vector") for r in rows]


def fts_search(index: LanceIndex, text: str, k: int = 5, version: int | None = None,
               where: str | None = None) -> list[Hit]:
    """Top ``k`` chunks by BM25 over the chunk text; the query is matched as plain terms."""
    from lancedb.query import MatchQuery

    terms = " ".join(re.findall(r"\w[\w\-./]*", text))
    if not terms:
        return []
    table = _table(index, version)
    query = table.search(MatchQuery(terms, "text"), query_type="fts")
    if where:
        query = query.where(where, prefilter=True)
    rows = query.select(_columns(table, "vector", "_score")).limit(k).to_list()
    return [_hit(r, r["_score"], "fts") for r in rows]


def rrf(rankings: list[list[Hit]], k: int) -> list[Hit]:
    """Reciprocal-rank fusion: score = sum of 1 / (60 + rank) over the rankings a chunk is in.
    Equal scores keep the order of first appearance (the first ranking's order, then the next's
    for chunks only it found), so ties never depend on row ids, which change with a profile's name."""
    scores: dict[str, float] = {}
    first: dict[str, Hit] = {}
    for ranking in rankings:
        for rank, hit in enumerate(ranking, start=1):
            scores[hit.id] = scores.get(hit.id, 0.0) + 1.0 / (RRF_K + rank)
            first.setdefault(hit.id, hit)
    ordered = sorted(scores, key=lambda i: -scores[i])[:k]
    return [replace(first[i], score=round(scores[i], 6), mode="hybrid") for i in ordered]


def within_margin(hits: list[Hit], margin: float | None) -> list[Hit]:
    """Vector hits scoring at most ``margin`` (cosine) below the best one; all of them when
    ``margin`` is None. A relative cut keeps weak tail candidates out of the results."""
    if margin is None or not hits:
        return hits
    best = max(h.score for h in hits)
    return [h for h in hits if h.score >= best - margin]


def _unit_vectors(hits: list[Hit], query_vector: list[float]) -> tuple[np.ndarray, np.ndarray]:
    """The hits' vectors (one row each) and the query vector, scaled to unit length."""
    vecs = np.asarray([h.vector for h in hits], dtype=np.float32)
    vecs /= np.clip(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12, None)
    q = np.asarray(query_vector, dtype=np.float32)
    return vecs, q / max(float(np.linalg.norm(q)), 1e-12)


def mmr(hits: list[Hit], query_vector: list[float], k: int, diversity: float = 0.3) -> list[Hit]:
    """Maximal marginal relevance over candidates that carry vectors."""
    if not hits or any(h.vector is None for h in hits):
        return hits[:k]
    vecs, q = _unit_vectors(hits, query_vector)
    relevance = vecs @ q
    chosen: list[int] = []
    while len(chosen) < min(k, len(hits)):
        best, best_score = -1, -np.inf
        for i in range(len(hits)):
            if i in chosen:
                continue
            redundancy = max((float(vecs[i] @ vecs[j]) for j in chosen), default=0.0)
            score = (1 - diversity) * relevance[i] - diversity * redundancy
            if score > best_score:
                best, best_score = i, score
        chosen.append(best)
    return [hits[i] for i in chosen]


def late_interaction(query: np.ndarray, text: np.ndarray) -> float:
    """MaxSim: the mean over the query's token vectors of each one's best cosine with any of the
    text's (unit rows, as ``token_vectors`` gives them)."""
    return float((query @ text.T).max(axis=1).mean())


CLOSED_QUESTION = re.compile(r"\s*(is|are|was|were|do|does|did|can|could|will|would|should|shall|has|have|had|may|"
                             r"might|must)\b", re.IGNORECASE)


def is_closed_question(text: str) -> bool:
    """Whether ``text`` is an English yes/no question: it opens with an auxiliary verb ("Does
    Lambda support versioning?"). Its answer is the sentence that states the fact, not a passage."""
    return CLOSED_QUESTION.match(text) is not None


def _standardised(values: np.ndarray) -> np.ndarray:
    spread = float(values.std())
    return (values - values.mean()) / spread if spread > 1e-12 else np.zeros_like(values)


def rerank_late(hits: list[Hit], text: str, weight: float,
                token_vectors: Callable[[list[str]], list[np.ndarray]]) -> tuple[list[Hit], dict[str, float]]:
    """``hits`` reordered by ``z(score) + weight x z(late_interaction)``, each standardised over the
    hits (the search's own score: cosine, or the fused one in hybrid search), so a sentence that
    matches the query word for word in context outranks one that only shares its topic; and each
    hit's late interaction by id. Scores and texts are kept; ties keep the search's order."""
    if len(hits) < 2:
        return hits, {}
    vectors = token_vectors([text, *(h.text for h in hits)])
    matched = np.asarray([late_interaction(vectors[0], v) for v in vectors[1:]])
    combined = _standardised(np.asarray([h.score for h in hits])) + weight * _standardised(matched)
    return [hits[i] for i in np.argsort(-combined, kind="stable")], dict(zip((h.id for h in hits), matched.tolist()))


def results_within_margin(results: list[list[Hit]], scores: Mapping[str, float], margin: float | None,
                          keep: frozenset[str] = frozenset()) -> list[bool]:
    """Which of the ranked ``results`` (each the candidates it holds) to keep: the first, and every
    other whose best score (``scores`` by candidate id: cosine, late interaction) is at most
    ``margin`` below the best candidate's or that holds an id in ``keep``; all of them without a
    margin or scores. A result is judged as a whole, so a passage whose best sentence scores well
    keeps the sentences around it."""
    if margin is None or not scores:
        return [True] * len(results)
    floor = max(scores.values()) - margin
    return [i == 0 or any(h.id in keep or scores[h.id] >= floor for h in result)
            for i, result in enumerate(results)]


def candidates_within_margin(hits: list[Hit], scores: Mapping[str, float], margin: float | None,
                             keep: frozenset[str] = frozenset()) -> list[Hit]:
    """The ranked ``hits`` that ``results_within_margin`` keeps when each is a result of its own."""
    return list(compress(hits, results_within_margin([[h] for h in hits], scores, margin, keep)))


def merge_overlapping(hits: list[Hit]) -> list[Hit]:
    """Hits of one document whose spans overlap (or touch) become one result with the best score,
    at the rank of the first of them; a hit that bridges several earlier results joins them all."""
    merged: list[Hit] = []
    for hit in hits:
        joined = [i for i, kept in enumerate(merged)
                  if kept.doc_id == hit.doc_id and hit.start <= kept.end and kept.start <= hit.end]
        if not joined:
            merged.append(hit)
            continue
        span = hit
        for piece in sorted((merged[i] for i in joined), key=lambda h: h.start):
            span = _union(span, piece)
        first = merged[joined[0]]
        merged[joined[0]] = replace(first, text=span.text, start=span.start, end=span.end, page=span.page,
                                    page_end=span.page_end, score=max(first.score, span.score),
                                    chunk_index=span.chunk_index, ocr=span.ocr, sections=span.sections)
        for i in reversed(joined[1:]):
            del merged[i]
    return merged


def _union(a: Hit, b: Hit) -> Hit:
    first, second = (a, b) if a.start <= b.start else (b, a)
    if second.end <= first.end:
        text = first.text
    elif second.start > first.end:  # a gap (whitespace between chunks): keep the pieces apart
        text = first.text + " " + second.text
    else:
        text = first.text + second.text[first.end - second.start:]
    ends = [page for page in (first.page_end, second.page_end) if page is not None]
    return replace(a, text=text, start=first.start, end=max(a.end, b.end), score=max(a.score, b.score),
                   chunk_index=min(a.chunk_index, b.chunk_index), page=first.page,
                   page_end=max(ends) if first.page is not None and ends else first.page, ocr=a.ocr or b.ocr,
                   sections=tuple(dict.fromkeys(first.sections + second.sections)))


def _absorb(hit: Hit, rows: list[dict]) -> Hit:
    """``hit`` widened over ``rows`` of its document, its text joined from the pieces in document
    order; it keeps everything else (id, score, rank, mode, citation fields)."""
    pieces = sorted([hit, *(_hit(row, hit.score, hit.mode) for row in rows)], key=lambda h: (h.start, h.end))
    merged = pieces[0]
    for piece in pieces[1:]:
        merged = _union(merged, piece)
    return replace(hit, text=merged.text, start=merged.start, end=merged.end, page=merged.page,
                   page_end=merged.page_end, ocr=merged.ocr, sections=merged.sections)


def expand(index: LanceIndex, hits: list[Hit], neighbours: int, version: int | None = None) -> list[Hit]:
    """Add ``neighbours`` chunks before and after each hit from the same document."""
    if neighbours <= 0:
        return hits
    table = _table(index, version)
    out = []
    for hit in hits:
        lo, hi = hit.chunk_index - neighbours, hit.chunk_index + neighbours
        where = f"doc_id = {sql_str(hit.doc_id)} AND chunk_index >= {int(lo)} AND chunk_index <= {int(hi)}"
        out.append(_absorb(hit, table.search().where(where).select(_columns(table)).limit(2 * neighbours + 1).to_list()))
    return out


def _sentence_rows(table, doc_id: str, lo: int, hi: int, min_chars: int, section: str | None = None,
                   reach: tuple[int, int] | None = None) -> tuple[list[dict], list[dict]]:
    """Rows of sentences ``lo``..``hi`` of a document, widened by whole sentences (one after, then
    one before, in turn) until they span ``min_chars`` characters or the document ends; and every
    row the same query read, which also asks for heading section ``section`` and for the rows
    overlapping the character range ``reach``, when given."""
    pad = 8 if min_chars else 0
    for _ in range(16):  # the fetched range doubles each round: 16 rounds cover any document
        where = (f"doc_id = {sql_str(doc_id)} AND ((chunk_index >= {int(lo - pad)} AND chunk_index <= {int(hi + pad)})"
                 + (f" OR heading_path = {sql_str(section)}" if section is not None else "")
                 + (f" OR (start < {int(reach[1])} AND end > {int(reach[0])}))" if reach is not None else ")"))
        fetched = table.search().where(where).select(_columns(table)).limit(None).to_list()
        rows = {r["chunk_index"]: r for r in fetched if lo - pad <= r["chunk_index"] <= hi + pad}
        if not rows:
            return [], fetched
        a = min((i for i in rows if i >= lo), default=max(rows))
        b = max((i for i in rows if i <= hi), default=a)

        def short() -> bool:
            return rows[b]["end"] - rows[a]["start"] < min_chars

        def unfetched(i: int) -> bool:  # a sentence that may exist but lies outside the fetched range
            return i not in rows and (i > hi + pad or 0 <= i < lo - pad)

        while short() and not unfetched(b + 1) and (a - 1 in rows or b + 1 in rows):
            if b + 1 in rows:
                b += 1
            if not short() or unfetched(a - 1):
                break
            if a - 1 in rows:
                a -= 1
        if not short() or not (unfetched(a - 1) or unfetched(b + 1)):
            break
        pad *= 2
    return [rows[i] for i in range(a, b + 1) if i in rows], fetched


def _rows_within(table, doc_id: str, start: int, end: int) -> list[dict]:
    """Rows of a document lying wholly inside ``start``..``end`` (chars), citation columns only."""
    where = f"doc_id = {sql_str(doc_id)} AND start >= {int(start)} AND end <= {int(end)}"
    return table.search().where(where).select(_columns(table)).limit(None).to_list()


def _to_windows(table, doc_id: str, rows: list[dict]) -> list[dict]:
    """Consecutive ``rows`` of a document widened to the stored windows of the first and the last
    (a piece of a split sentence windows its whole sentence: it brings the rest)."""
    if not rows:
        return rows
    first, last = min(rows, key=lambda r: r["start"]), max(rows, key=lambda r: r["end"])
    lo = min(first["start"], first["window_start"] if first["window_start"] is not None else first["start"])
    hi = max(last["end"], last["window_end"] if last["window_end"] is not None else last["end"])
    return rows if (lo, hi) == (first["start"], last["end"]) else _rows_within(table, doc_id, lo, hi)


def _run(hit: Hit, rows: list[dict], max_chars: int,
         joined: Callable[[dict, dict], bool] = lambda before, after: True) -> list[dict]:
    """The run of ``rows`` with consecutive chunk indexes, each ``joined`` to the one before, that
    holds ``hit``, when it spans at most ``max_chars`` characters, else none."""
    by_index = {r["chunk_index"]: r for r in rows}
    if hit.chunk_index not in by_index:
        return []
    first = last = hit.chunk_index
    while first - 1 in by_index and joined(by_index[first - 1], by_index[first]):
        first -= 1
    while last + 1 in by_index and joined(by_index[last], by_index[last + 1]):
        last += 1
    if by_index[last]["end"] - by_index[first]["start"] > max_chars:
        return []
    return [by_index[i] for i in range(first, last + 1)]


def _short_section(table, hit: Hit, rows: list[dict], max_chars: int) -> list[dict]:
    """The run of consecutive ``rows`` (``hit``'s heading section, which a document may repeat)
    that holds ``hit``, when it spans at most ``max_chars`` characters and is not the whole
    document (a document without sections has none to return), else none."""
    run = _run(hit, rows, max_chars)
    if run and run[0]["chunk_index"] == 0 and not table.search() \
            .where(f"doc_id = {sql_str(hit.doc_id)} AND chunk_index > {int(run[-1]['chunk_index'])}") \
            .select(["chunk_index"]).limit(1).to_list():
        return []
    return run


def _paragraph(hit: Hit, rows: list[dict], max_chars: int) -> list[dict]:
    """The run of consecutive ``rows`` holding ``hit`` that no blank line divides (rows are trimmed
    sentences: a gap of one character, a space or a line break, continues a paragraph) when it
    spans at most ``max_chars`` characters, else none. ``rows`` must hold every row overlapping
    ``hit`` widened by ``max_chars + 2`` characters on each side (a longer run is then seen)."""
    return _run(hit, rows, max_chars, lambda before, after: after["start"] - before["end"] < 2)


@dataclass(frozen=True)
class Grouping:
    """How ``group_sentences`` makes results of a sentence_window profile's candidate sentences."""

    gap: int  # candidates of one document at most this many sentences apart form one result
    context: int | None = None  # sentences around a result's members (None: their stored windows)
    lone_context: int | None = None  # the same for a result of one candidate (None: context)
    margin: float | None = None  # results after the first whose best cosine is this far below the best go
    min_chars: int = 0  # context-width results narrower than this widen by whole sentences
    section_chars: int = 0  # a context-width result of several hits takes its heading section this short
    paragraph_chars: int = 0  # else its paragraph, this short


@dataclass(frozen=True)
class LateInteraction:
    """Candidates reranked by late interaction (``rerank_late``) and the margins that read it."""

    weight: float
    token_vectors: Callable[[list[str]], list[np.ndarray]]
    margin: float | None = None  # results whose best late interaction is this far below the best go
    closed_question_margin: float | None = None  # the same per candidate first, for a yes/no question


def group_sentences(index: LanceIndex, hits: list[Hit], grouping: Grouping, ks: Sequence[int],
                    version: int | None = None, vector: list[float] | None = None,
                    anchors: frozenset[str] = frozenset(), late: Mapping[str, float] | None = None,
                    late_margin: float | None = None) -> dict[int, list[Hit]]:
    """Sentence-window results: candidate sentences of one document at most ``grouping.gap``
    sentences apart form one result, ranked by its best sentence and spanning its members' windows;
    or, with ``grouping.context``, its members plus that many sentences on each side (a lone hit is
    most often the answer itself, several close hits mark a passage), its first and last sentence
    widened to their stored windows (``window: 0``: a piece of a split sentence brings the rest).
    With ``grouping.margin`` and the query ``vector``, a result after the first is kept only when its
    best sentence's cosine similarity is within the margin of the best candidate's or it holds one
    of ``anchors`` (hybrid search's best keyword hit); a context-width result narrower than
    ``min_chars`` widens by whole neighbouring sentences; one of two or more hits also takes the rest
    of its best hit's heading section when that spans at most ``section_chars``
    (``_short_section``), else its paragraph when that spans at most ``paragraph_chars``
    (``_paragraph``); with ``late_margin`` and the candidates' ``late`` interaction, the margin rule
    holds for late interaction too (both: ``results_within_margin``). Returns the results of the
    first ``k`` groups for each ``k`` in ``ks`` (the groups do not depend on ``k``: each is read
    once), those that overlap or touch (two groups that took one heading section) merged."""
    groups: list[list[Hit]] = []
    for hit in sorted(hits, key=lambda h: (h.doc_id, h.chunk_index)):
        last = groups[-1][-1] if groups else None
        if last is not None and last.doc_id == hit.doc_id and hit.chunk_index - last.chunk_index <= grouping.gap:
            groups[-1].append(hit)
        else:
            groups.append([hit])
    rank = {h.id: i for i, h in enumerate(hits)}
    groups.sort(key=lambda g: min(rank[h.id] for h in g))
    ranked = list(enumerate(groups[:max(ks)]))

    def thinned(ranked: list, scores: Mapping[str, float], margin: float | None) -> list[tuple[int, list[Hit]]]:
        return list(compress(ranked, results_within_margin([g for _, g in ranked], scores, margin, anchors)))

    if grouping.margin is not None and vector is not None and groups and all(h.vector is not None for h in hits):
        vecs, q = _unit_vectors(hits, vector)  # cosines, whatever score fusion gave the hits
        ranked = thinned(ranked, dict(zip((h.id for h in hits), (vecs @ q).tolist())), grouping.margin)
    if late:
        ranked = thinned(ranked, late, late_margin)
    table = _table(index, version)
    out = []
    for i, group in ranked:
        best = min(group, key=lambda h: rank[h.id])
        if grouping.context is not None:
            dense = len(group) > 1
            width = grouping.context if dense or grouping.lone_context is None else grouping.lone_context
            section = best.heading_path if grouping.section_chars and dense else None
            cap = grouping.paragraph_chars
            reach = (best.start - cap - 2, best.end + cap + 2) if cap and dense else None
            rows, read = _sentence_rows(table, best.doc_id, group[0].chunk_index - width,
                                        group[-1].chunk_index + width, grouping.min_chars, section, reach)
            in_section = [r for r in read if section is not None and r["heading_path"] == section]
            rows = rows + (_short_section(table, best, in_section, grouping.section_chars)
                           or (_paragraph(best, read, cap) if reach else []))
            out.append((i, _absorb(best, _to_windows(table, best.doc_id, rows))))
            continue
        lo = min(h.window_start if h.window_start is not None else h.start for h in group)
        hi = max(h.window_end if h.window_end is not None else h.end for h in group)
        out.append((i, _absorb(best, _rows_within(table, best.doc_id, lo, hi))))
    return {k: merge_overlapping([result for i, result in out if i < k]) for k in ks}


def sentence_windows(index: LanceIndex, hits: list[Hit], k: int, version: int | None = None) -> list[Hit]:
    """The first ``k`` of ranked ``hits`` as results: a sentence-window hit (retrieved by its
    sentence) spans its window, and those of one document that overlap or touch become one
    (``merge_overlapping``), so the results never hold more text than the ``k`` best hits; other
    hits are kept as they are."""
    hits = hits[:k]
    if all(h.window_start is None for h in hits):
        return merge_overlapping(hits)
    retrieved = {h.id: h for h in hits}
    spans = merge_overlapping([h if h.window_start is None else replace(h, start=h.window_start, end=h.window_end)
                               for h in hits])
    table = _table(index, version)
    out = []
    for span in spans:
        if span.window_start is None:
            out.append(span)
            continue
        rows = _rows_within(table, span.doc_id, span.start, span.end)
        out.append(replace(_absorb(retrieved[span.id], rows), score=span.score))
    return out


def whole_documents(index: LanceIndex, hits: list[Hit], max_tokens: int, count_tokens: Callable[[str], int],
                    version: int | None = None, wholes: dict[str, Hit | None] | None = None) -> list[Hit]:
    """Hits from documents whose text counts at most ``max_tokens`` tokens (``count_tokens``, the
    model's tokenizer: a chunk's stored count is what was embedded, a window or a header too)
    become the whole document. Each document is judged once: its rows are counted (every row holds
    a token, so more than ``max_tokens`` rows is long), then the rows of the documents that few
    are read in one query and their text counted; ``wholes`` (doc_id -> the whole document, or None
    when long) keeps the judgements across calls on one table version. Spans of one document that
    overlap or touch (a whole document, expanded neighbours) are merged, ``merge_overlapping``."""
    if max_tokens <= 0:
        return merge_overlapping(hits)
    table = _table(index, version)
    wholes = {} if wholes is None else wholes
    unjudged = [d for d in dict.fromkeys(hit.doc_id for hit in hits) if d not in wholes]
    few = [d for d in unjudged if table.count_rows(f"doc_id = {sql_str(d)}") <= max_tokens]
    wholes.update(dict.fromkeys(unjudged))
    if few:
        rows: dict[str, list[dict]] = {}
        where = "doc_id IN (" + ", ".join(sql_str(d) for d in few) + ")"
        for row in table.search().where(where).select(_columns(table)).limit(None).to_list():
            rows.setdefault(row["doc_id"], []).append(row)
        for doc_id, doc_rows in rows.items():
            document = _absorb(_hit(doc_rows[0], 0.0, ""), doc_rows)
            if count_tokens(document.text) <= max_tokens:
                wholes[doc_id] = document
    return merge_overlapping([replace(hit, text=document.text, start=document.start, end=document.end,
                                      page=document.page, page_end=document.page_end, ocr=document.ocr,
                                      sections=document.sections)
                              if (document := wholes[hit.doc_id]) else hit for hit in hits])


def candidate_hits(index: LanceIndex, text: str, vector: list[float] | None, mode: str, pool: int,
                   score_margin: float | None = None, version: int | None = None,
                   where: str | None = None) -> tuple[list[Hit], frozenset[str]]:
    """Up to ``pool`` ranked candidates of a query: vector hits within ``score_margin`` of the best,
    full-text hits, or both fused; with a margin, hybrid keeps as many fused candidates as the
    margin left on the vector side (it decides how many, fusion decides which). Also the ids of the
    keyword search's best hit in hybrid mode: the evidence a cosine margin must not overrule."""
    if mode == "fts":
        return fts_search(index, text, pool, version, where), frozenset()
    close = within_margin(vector_search(index, vector, pool, version, where), score_margin)
    if mode == "vector":
        return close, frozenset()
    keyword = fts_search(index, text, pool, version, where)
    return rrf([close, keyword], len(close) if score_margin else pool), frozenset(h.id for h in keyword[:1])


def distinct(hits: list[Hit], anchors: frozenset[str], copies: dict[str, set[str]]) -> tuple[list[Hit], frozenset[str]]:
    """``hits`` without those repeating an earlier hit's text from a copy of its document (the same
    bytes under another name: both were results, taking two of k places); each copy's doc id is
    added to ``copies`` under the kept document's, an anchor dropped so is the kept hit's."""
    kept: dict[tuple, Hit] = {}
    out, anchored = [], set(anchors)
    for hit in hits:
        first = kept.setdefault((hit.content_hash, hit.start, hit.end, hit.text), hit) if hit.content_hash else hit
        if first is hit:
            out.append(hit)
        elif first.doc_id != hit.doc_id:
            copies.setdefault(first.doc_id, set()).add(hit.doc_id)
            if hit.id in anchored:
                anchored.add(first.id)
    return out, frozenset(anchored)


def search(index: LanceIndex, text: str, vector: list[float] | None, ks: Sequence[int] = (5,), mode: str = "hybrid",
           filters: Filters = Filters(), candidates: int = 50, rerank: str = "rrf", neighbours: int = 0,
           version: int | None = None, score_margin: float | None = None, grouping: Grouping | None = None,
           late: LateInteraction | None = None, whole_document_tokens: int = 0,
           count_tokens: Callable[[str], int] | None = None,
           wholes: dict[str, Hit | None] | None = None) -> dict[int, list[Hit]]:
    """The query path, for each number of results ``k`` in ``ks``: candidates (``candidate_hits``,
    a pool of ``max(k, candidates)``, searched once per pool size), reordered by ``late`` when given
    (a yes/no question, ``is_closed_question``, first keeps only the candidates within its
    ``closed_question_margin`` of the best, the first and hybrid's keyword anchor always; its
    ``margin`` thins the results, ``results_within_margin``), MMR if asked, sentence windows and
    merging of overlapping spans (``sentence_windows``), neighbour expansion; or, with ``grouping``,
    ``group_sentences`` of the candidates; then whole documents for short ones (``whole_documents``:
    ``whole_document_tokens``, counted by ``count_tokens``). ``mode`` is vector, fts or hybrid.
    Every read sees the table version of the search's start (``LanceIndex.pinned``). ``wholes``
    keeps whole_documents' judgements across searches of a table that does not change between
    them (an evaluation's); by default they last one search. A copy of a document (the same
    bytes) is no result of its own: its name is in the result's ``also_in`` (``distinct``).
    Returns the results by ``k``."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if whole_document_tokens and count_tokens is None:
        raise ValueError("whole_document_tokens needs count_tokens, the model's token counter")
    if filters.section is not None:  # a section asked for: its text, not the rest of a short document
        whole_document_tokens = 0
    index = index.pinned()
    where = build_where(filters, sections="sections" in _table(index, version).schema.names)
    pools: dict[int, tuple[list[Hit], frozenset[str], dict[str, float]]] = {}
    out: dict[int, list[Hit]] = {}
    wholes = {} if wholes is None else wholes  # whole_documents' judgements, shared by every k
    copies: dict[str, set[str]] = {}  # doc id -> copies of it whose hits ``distinct`` dropped
    for k in sorted(set(ks)):
        pool = max(k, candidates)
        if pool not in pools:
            asked = pool
            for _ in range(COPY_RETRIES + 1):  # copies took places in the pool: ask for more, a bounded number of times
                found, anchors = candidate_hits(index, text, vector, mode, asked, score_margin, version, where)
                hits, anchors = distinct(found, anchors, copies)
                if len(hits) >= pool or len(found) < asked:
                    break
                asked += pool
            hits = hits[:pool]
            scores: dict[str, float] = {}
            if late is not None:
                hits, scores = rerank_late(hits, text, late.weight, late.token_vectors)
                if late.closed_question_margin is not None and is_closed_question(text):
                    hits = candidates_within_margin(hits, scores, late.closed_question_margin, anchors)
                if grouping is None:  # each candidate is a result of its own
                    hits = candidates_within_margin(hits, scores, late.margin, anchors)
            pools[pool] = (mmr(hits, vector, pool) if rerank == "mmr" and vector is not None else hits), anchors, scores
        if grouping is not None:
            continue
        hits = sentence_windows(index, pools[pool][0], k, version)
        out[k] = whole_documents(index, expand(index, hits, neighbours, version), whole_document_tokens,
                                 count_tokens, version, wholes)
    if grouping is not None:  # one grouping per candidate pool, for every k searched with it
        for pool, (hits, anchors, scores) in pools.items():
            grouped = group_sentences(index, hits, grouping, [k for k in set(ks) if max(k, candidates) == pool],
                                      version, vector, anchors, scores, late.margin if late else None)
            out.update((k, whole_documents(index, results, whole_document_tokens, count_tokens, version, wholes))
                       for k, results in grouped.items())
    return {k: [replace(hit, also_in=tuple(sorted(copies[hit.doc_id]))) if hit.doc_id in copies else hit
                for hit in results] for k, results in out.items()}
