"""A chunking profile's settings, its fingerprint and the token limit its rows keep."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from rag_assets.core.chunking.auto import choose_strategy
from rag_assets.core.chunking.cleaning import Cleaning
from rag_assets.core.hashing import settings_hash
from rag_assets.core.models import ParsedDocument

# Bump when the chunks of an unchanged profile change, so every stored chunk is redone; a
# strategy's own revision redoes only the profiles that can use that strategy.
CHUNKER_REVISION = "8"  # 8: running headers and footers leave the embedded text as whole lines only (words of a sentence that match one stay; a page of them alone embeds as it is, not ""), a class line over half the limit is no method's context, a type mapped to table is chunked as one only where it holds a table; 7: a chunk holds at most 16 chars per token of its limit (a word the tokenizer reads as one token was one 100 kB chunk), a list marker stays in its item's sentence; 6: a chunk records every section it spans, a table row too long for its header is cut alone; 5: a chunk records the page where it ends; 4: an FAQ question over half the limit is not repeated, a long title is shortened; 3: a Markdown table row is one sentence
# sentence_window 1: a split sentence's pieces window the whole sentence; auto 1: a document with a
# table is chunked by section (its table by rows), 2: an e-mail is never a transcript, 3 (and
# markdown 1): small sections merged into a chunk cite the heading all of it lies under (the next
# section's text was cited under the subsection before it); auto 4 and transcript 1: a turn's speaker may
# open with any script's capital (Élodie), its stamp run past 99 hours; sentence_window 2, sentence 1,
# semantic 1 and auto 5: a code block is one unit, never cut into sentences (its lines were units); sentence_window 3,
# sentence 2, semantic 2 and auto 6: a sentence of no letter or digit ("---", a line of dots) joins the one before;
# table 1, markdown 2 and auto 7: a Markdown table with no delimiter row has no header (its first row was
# repeated before every group of rows after the first); code 1 and auto 8: C, C++, C#, Go, Java, JavaScript,
# TypeScript, Rust, Ruby, PHP, shell, Kotlin, Swift, Scala and Lua chunked by their syntax tree (a function, a
# class's methods with its opening lines as context; they were cut at lines a keyword opens, C's and Kotlin's by lines);
# code 2 and auto 9: a definition that fits only without the comment above it or its class's lines is kept whole
# without them (a Python method too), definitions read 8 levels deep and through 6 wrappers, a Scala doc comment with
# the definition below it; code 3 and auto 10: PowerShell and SQL by their syntax tree (a statement a unit); code 4
# and auto 11: Elixir too (a def under its name); code 5 and auto 12: a container's opening and closing lines
# under min_tokens pack with its first and last members (a "}" or "end" was a chunk of its own); code 6 and auto
# 13: a chunk packing small definitions (one-line ones too) cites each of them in its sections ("tiny [add; sub;
# mul]"; it cited their container alone); code 7 and auto 14: a chunk holding a whole class cites its methods
# ("Stack [push; pop]"), and what a const, property or assignment holds (`const add = (a, b) => a + b`,
# `Stack.prototype.push = function`) is cited by its name, a test by its description (`it("pushes", ...)`, RSpec's
# and ExUnit's), a web route by its method and path (Express's `app.get("/users", ...)`, Sinatra's: "GET /users")
STRATEGY_REVISIONS = {"sentence_window": "3", "sentence": "2", "semantic": "2", "auto": "14", "markdown": "2",
                      "transcript": "1", "table": "1", "code": "7"}

# Settings added later count in the fingerprint only when set, so existing profiles keep theirs.
OMITTED_WHEN_UNSET = ("header_weight", "sentence_weight")
QUERY_SETTINGS = ("group_gap", "group_candidates", "score_margin", "group_context", "lone_hit_context",
                  "group_margin", "min_result_chars", "section_chars", "paragraph_chars", "late_interaction_weight",
                  "late_interaction_margin", "closed_question_margin")


@dataclass(frozen=True)
class ChunkingProfile:
    """The chunking settings a profile in ``profiles/chunking.yml`` declares."""

    name: str
    strategy: str = "recursive"
    max_tokens: int = 256
    overlap: int = 0
    contextual_header: bool = True
    header_weight: float | None = None  # embed the header apart and mix its vector in with this weight
    sentence_weight: float | None = None  # sentence_window: mix each sentence's own vector in with this weight
    min_tokens: int = 50
    table_records: bool = False
    window: int = 2
    semantic_percentile: float = 90.0
    semantic_buffer: int = 1
    cleaning: Cleaning = field(default_factory=Cleaning)
    content_types: tuple[tuple[str, str], ...] = ()
    size_tokenizer: str | None = None  # count max_tokens with this tokenizer (the model's limit still holds)
    embed_window: int = 0  # sentence_window: sentences embedded with each sentence, on each side
    group_gap: int = 0  # sentence_window: query hits this close (in sentences) form one result
    group_candidates: int = 20  # sentence_window: sentences retrieved before grouping
    score_margin: float | None = None  # query: vector candidates this far (cosine) below the best are dropped
    group_context: int | None = None  # query: sentences returned around a group (None: the stored window)
    lone_hit_context: int | None = None  # query: the same around a group of one hit (None: group_context)
    group_margin: float | None = None  # query: results after the first this far (cosine) below the best are dropped
    min_result_chars: int = 0  # query: results narrower than this widen by whole sentences
    section_chars: int = 0  # query: a result of several hits brings its heading section when this short
    paragraph_chars: int = 0  # query: else its paragraph, when this short
    late_interaction_weight: float | None = None  # query: candidates reranked with this weight on MaxSim
    late_interaction_margin: float | None = None  # query: results this far below the best MaxSim are dropped
    closed_question_margin: float | None = None  # query: the same per candidate, for a yes/no question

    def fingerprint(self) -> str:
        """Changes whenever the chunks this profile produces could change (query-time settings
        such as grouping and the score margin do not count)."""
        settings = {k: v for k, v in asdict(self).items()
                    if k not in QUERY_SETTINGS and not (k in OMITTED_WHEN_UNSET and v is None)}
        used = sorted({self.strategy, *(strategy for _, strategy in self.content_types)} & STRATEGY_REVISIONS.keys())
        revisions = {"strategy_revisions": {s: STRATEGY_REVISIONS[s] for s in used}} if used else {}
        return settings_hash({**settings, "revision": CHUNKER_REVISION, **revisions})

    def query_settings(self) -> dict:
        """The query-time settings (outside the fingerprint): how a search on its chunks runs."""
        return {k: getattr(self, k) for k in QUERY_SETTINGS}

    def counts_in(self, tokenizer: str) -> bool:
        """Whether ``max_tokens`` counts ``tokenizer``'s tokens (no ``size_tokenizer``, or that one)."""
        return self.size_tokenizer in (None, tokenizer)

    def strategy_for(self, doc: ParsedDocument) -> str:
        """The profile's per-content-type choice, else its strategy (``auto`` decides by structure);
        ``table`` chosen for a type only where the document holds a table (JSON that is no records,
        pretty-printed, takes the profile's strategy: read as a table its "{" was the header row)."""
        chosen = dict(self.content_types).get(doc.content_type, self.strategy)
        if chosen == "table" != self.strategy and doc.elements and all(e.category != "Table" for e in doc.elements):
            chosen = self.strategy
        return choose_strategy(doc) if chosen == "auto" else chosen


def check_overlap(overlap: int, max_tokens: int) -> None:
    """The profile rule for overlap, wherever a profile is set (YAML, CLI flags): at least 0 and
    at most half of ``max_tokens``. Raises ValueError saying so."""
    if not 0 <= overlap <= max_tokens // 2:
        raise ValueError(f"overlap ({overlap}) must be >= 0 and at most half of max_tokens ({max_tokens})")


def row_token_limit(profile: ChunkingProfile, model_tokenizer: str, model_limit: int) -> int:
    """The most tokens a row's embedded text (contextual header included) may have, counted with
    the embedding model's tokenizer: ``min(max_tokens, model_limit)`` when the profile counts
    ``max_tokens`` in that tokenizer, else ``model_limit`` (a ``size_tokenizer`` of another
    model counts other tokens, so only the model's input limit binds its rows)."""
    return min(profile.max_tokens, model_limit) if profile.counts_in(model_tokenizer) else model_limit
