"""No LanceDB filter in the product is built by pasting a value; the scanner itself is tested on
known-bad and known-good code so a pass means something."""

import textwrap
from pathlib import Path

import pytest

from tests.support.filter_scan import scan

REPO = Path(__file__).resolve().parents[2]
PRODUCT = [REPO / "rag_assets", REPO / "resources", REPO / "benchmarks"]


def test_product_filters_are_built_only_from_escaped_values():
    findings = scan(PRODUCT, REPO)
    assert not findings, "\n".join(map(str, findings))


@pytest.mark.parametrize("code", [
    "table.delete(f\"doc_id = '{doc_id}'\")",
    "table.search().where(\"tenant = '\" + tenant + \"'\")",
    "table.count_rows(\"doc_id = '%s'\" % doc_id)",
    "table.delete(\"doc_id = '{}'\".format(doc_id))",
    "where = f\"doc_id = {sql_str(a)} AND tenant = '{b}'\"\ntable.delete(where)",
    "clauses = [f\"x = {sql_str(a)}\"]\nclauses.append(f\"y = '{b}'\")\ntable.delete(' AND '.join(clauses))",
    "query.where(f\"id IN {ids}\", prefilter=True)",
    "table.search(vector).where(where=f\"tenant = {t}\")",
])
def test_scanner_reports_pasted_values(tmp_path, code):
    bad = tmp_path / "bad.py"
    bad.write_text("def write(table, query, doc_id, tenant, a, b, ids, t, vector):\n" + textwrap.indent(code, "    ") + "\n"
                   "\nwrite(1, 2, 3, 4, 5, 6, 7, 8, 9)\n")
    assert len(scan([bad], tmp_path)) == 1


def test_scanner_accepts_escaped_and_traced_filters(tmp_path):
    good = tmp_path / "good.py"
    good.write_text(textwrap.dedent("""
        def search(table, filters, where=None):
            table.search().where(where)

        def run(table, filters, doc_id, ids, lo):
            where = build_where(filters)
            search(table, filters, where)
            search(table, filters, where=f"doc_id = {sql_str(doc_id)} AND n >= {int(lo)}")
            table.delete(f"id IN {sql_ids(ids)}")
            table.count_rows("doc_id IN (" + ", ".join(sql_str(d) for d in ids) + ")")
            db.select(Events.c.id).where(Events.c.id.in_(ids))
    """))
    assert scan([good], tmp_path) == []
    good.write_text(good.read_text() + "\ndef leak(table, filters, name):\n    search(table, filters, f\"a = '{name}'\")\n")
    assert [f.line for f in scan([good], tmp_path)] == [3]  # the parameter's sink, reached from the bad call
