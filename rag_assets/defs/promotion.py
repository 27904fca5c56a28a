"""The quality gate of a switch on a corpus' lancedb_table (``+promote_if``): a complete table of a
new embedding model or chunking profile goes live only when the rule holds on the golden
questions against the live table's model and profile; the ``promotion`` check says what was
decided and why."""

from pathlib import Path

import dagster as dg

from rag_assets.clients import CorpusTable, own_table
from rag_assets.config.schema import Corpus, Project
from rag_assets.core.hashing import content_hash, settings_hash
from rag_assets.core.index import LanceIndex, active_pairs
from rag_assets.core.promotion import Decision, decide, parse_rule
from rag_assets.core.store import StageStore
from rag_assets.defs.names import asset_key
from rag_assets.evaluate import evaluate

CHECK = "promotion"


def promotion_specs(corpus: Corpus) -> list[dg.AssetCheckSpec]:
    """The ``promotion`` check of a corpus that declares ``+promote_if``; none otherwise."""
    if not corpus.promote_if:
        return []
    return [dg.AssetCheckSpec(CHECK, asset=asset_key(corpus.name, "lancedb_table"),
                              description=f"A new embedding model's or chunking profile's table goes live only if "
                                          f"{corpus.promote_if} "
                                          "on the golden questions.")]


def _scores(project: Project, corpus: Corpus, table: CorpusTable, source, store: StageStore) -> dict:
    return evaluate(project, corpus.eval_questions, [table.profile.name], embedder=table.model.name, corpus=corpus,
                    source=source, store=store)[0]


def _recorded(instance: dg.DagsterInstance, corpus: Corpus) -> dict:
    """The metadata values of the table's last materialization ({} before the first)."""
    event = instance.get_latest_materialization_event(asset_key(corpus.name, "lancedb_table"))
    meta = event.asset_materialization.metadata if event and event.asset_materialization else {}
    return {name: entry.value for name, entry in meta.items()}


def _previous(instance: dg.DagsterInstance, corpus: Corpus, key: str) -> Decision | None:
    """The decision the table's last materialization recorded for the same ``key``, if any."""
    value = _recorded(instance, corpus)
    if value.get("promotion_key") != key:
        return None
    return Decision(value["promotion_promoted"], value["promotion_rule"], value["promotion_candidate_score"],
                    value["promotion_live_score"], value["promotion_reason"])


def held_back(instance: dg.DagsterInstance, corpus: Corpus) -> str | None:
    """Why the last maintenance held the corpus' configured table back (its recorded decision's
    reason), or None when it did not."""
    value = _recorded(instance, corpus)
    if value.get("promotion_candidate") == own_table(corpus).label and value.get("promotion_promoted") is False:
        return value["promotion_reason"]
    return None


def gate(project: Project, corpus: Corpus, index: LanceIndex, live: CorpusTable, instance: dg.DagsterInstance,
         source, store: StageStore) -> tuple[Decision | None, dict]:
    """Whether the corpus' complete table ``index`` may be marked active against ``live``, the table
    queries use now: (None, {}) when nothing is gated (no rule, no live table yet, the corpus' own
    table is already live, or it went live before: switching back to it is not a new model or
    profile), else the decision and the metadata recording it (both tables scored on the documents
    ``source``, the corpus' source resource, lists, as its stage ``store`` holds their last parse).
    Scores are reused
    while the questions, both tables' models and profiles and the indexed documents are unchanged."""
    if not corpus.promote_if:
        return None, {}
    candidate = own_table(corpus)
    if live.label == candidate.label or (candidate.model.name, candidate.profile.name) in active_pairs(
            index.db, corpus.name):
        return None, {}
    rule = parse_rule(corpus.promote_if)
    key = settings_hash({
        "questions": content_hash(Path(corpus.eval_questions).read_bytes()), "rule": str(rule),
        "index": corpus.index.model_dump(),
        "tables": [(t.model.model_dump(), t.profile.model_dump()) for t in (candidate, live)],
        "documents": sorted((d, e["content_hash"]) for d, e in index.indexed_documents().items())})
    decision = _previous(instance, corpus, key)
    if decision is None:
        decision = decide(rule, _scores(project, corpus, candidate, source, store),
                          _scores(project, corpus, live, source, store),
                          candidate.label, live.label)
    return decision, {
        "promotion_key": key, "promotion_promoted": decision.promote, "promotion_rule": decision.rule,
        "promotion_candidate": candidate.label, "promotion_live": live.label,
        "promotion_candidate_score": decision.candidate, "promotion_live_score": decision.live,
        "promotion_reason": decision.reason}


def promotion_result(corpus: Corpus, decision: Decision | None, missing: list[str], serving: str
                     ) -> dg.AssetCheckResult:
    """The ``promotion`` check's result: fails only when a complete candidate was held back;
    ``missing`` are the live documents the candidate lacks (the first few are named)."""
    if decision is None:
        why = (f"{serving} is live" if not missing else
               f"{own_table(corpus).label}'s table lacks {len(missing)} live document(s) "
               f"({', '.join(missing[:5])}): queries stay on {serving}; rag status says why")
        return dg.AssetCheckResult(check_name=CHECK, passed=True, metadata={"reason": why, "serving": serving})
    return dg.AssetCheckResult(check_name=CHECK, passed=decision.promote, metadata={
        "reason": decision.reason, "rule": decision.rule, "serving": serving,
        "candidate_score": decision.candidate, "live_score": decision.live})
