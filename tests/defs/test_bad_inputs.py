"""The bad-input corpus through the real pipeline: every kind of bad document ends in a clear
per-document error or a correct result, and every other document of the same run is indexed.
The cases and their checks live in tests/support (shared with benchmarks/robustness.py)."""

import pytest

from tests.support import robustness
from tests.support.robustness import assert_handled

pytestmark = pytest.mark.slow


def test_every_bad_input_fails_alone_or_indexes_correctly(tmp_path):
    results = robustness.bad_inputs(tmp_path)
    assert len([r for r in results if r["case"] not in ("whole run: every other document indexed",
                                                         "good document turns bad on re-ingest")]) >= 20
    assert_handled(results)


def test_a_50_mb_file_is_refused_from_the_listing_with_bounded_memory(tmp_path):
    outcome = robustness.large_file(tmp_path)
    assert_handled([outcome])
    assert outcome["file_mb"] == 50
    # The file is never read: the ingest's peak RSS is that of the same ingest with a small file in
    # its place (reading it alone would add 50 MB; decoding, chunking and embedding it far more).
    assert outcome["rss_over_baseline_mb"] < 25, outcome


def test_a_file_rewritten_while_it_is_read_is_never_indexed_torn(tmp_path):
    assert_handled([robustness.changing_file(tmp_path)])
