"""Issue 13 through the real pipeline: hostile files, a lost index, a source pointed at the wrong
folder, concurrent ingests. Scenarios live in tests/support/robustness.py (shared with
benchmarks/robustness.py)."""

import pytest

from tests.support import robustness
from tests.support.robustness import assert_handled

pytestmark = pytest.mark.slow


def test_a_docx_that_unzips_to_60_mb_fails_alone_fast_with_bounded_memory(tmp_path):
    assert_handled(robustness.hostile_docx(tmp_path))


def test_a_missing_source_folder_is_one_line_and_exit_2(tmp_path):
    assert_handled([robustness.missing_source_folder(tmp_path)])


def test_one_ingest_restores_every_row_after_the_lancedb_folder_is_lost(tmp_path):
    assert_handled([robustness.lost_index_folder(tmp_path, documents=12)])


def test_an_empty_source_folder_deletes_nothing_and_exits_non_zero(tmp_path):
    assert_handled([robustness.empty_source_folder(tmp_path, documents=6)])


def test_two_ingests_at_once_embed_each_chunk_once(tmp_path):
    assert_handled([robustness.concurrent_ingests(tmp_path, documents=6)])


def test_a_full_disk_is_one_line_and_nothing_indexed_is_lost(tmp_path):
    assert_handled([robustness.disk_full(tmp_path)])
