import pytest

from rag_assets.core.promotion import PromoteRule, decide, parse_rule


@pytest.mark.parametrize("text, rule", [
    ("recall_at_5 >= live - 1", PromoteRule("recall_at_5", -1.0)),
    ("mrr>=live+2.5", PromoteRule("mrr", 2.5)),
    ("  iou >= live  ", PromoteRule("iou", 0.0)),
])
def test_rules_parse(text, rule):
    assert parse_rule(text) == rule
    assert parse_rule(str(rule)) == rule  # the rule as metadata shows it reads back the same


@pytest.mark.parametrize("text", ["recall_at_5 > live", "recall_at_5 >= 80", "recall_at_7 >= live",
                                  "recall_at_5 >= live * 2", "recall_at_5 >= live - ", ""])
def test_bad_rules_name_the_grammar(text):
    with pytest.raises(ValueError, match=r"<metric> >= live \[\+\|- number\]"):
        parse_rule(text)


def test_decide_holds_back_below_the_margin_and_promotes_at_it():
    rule = parse_rule("recall_at_5 >= live - 1")
    live = {"recall_at_5": 81.58, "mrr": 78.0}
    held = decide(rule, {"recall_at_5": 80.5}, live, "new", "old")
    assert not held.promote and (held.candidate, held.live) == (80.5, 81.58)
    assert "new (80.5) is below 80.58" in held.reason and "live old: 81.58" in held.reason
    assert decide(rule, {"recall_at_5": 80.58}, live, "new", "old").promote
    assert decide(parse_rule("mrr >= live"), {"mrr": 78.0}, live, "new", "old").promote
    assert not decide(parse_rule("mrr >= live + 0.5"), {"mrr": 78.0}, live, "new", "old").promote
    assert not decide(rule, {"recall_at_5": None}, live, "new", "old").promote  # no score is no promotion
    unmeasured = decide(parse_rule("recall >= live"), {"recall": None}, {"recall": None}, "new", "old")
    assert not unmeasured.promote and "not measured" in unmeasured.reason
