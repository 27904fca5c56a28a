"""Runs a killed `rag ingest` left behind are failed by the next one; a UI re-execution of such a
run, which copies its tags, is not."""

import dagster as dg

from rag_assets.defs.runs import LAUNCHED_BY, fail_abandoned_runs


@dg.op
def step():
    return 1


@dg.job
def ingest_sample():
    step()


def test_only_runs_a_dead_rag_ingest_owned_are_failed():
    with dg.instance_for_test() as instance:
        def create(tags):
            return instance.create_run_for_job(ingest_sample, tags=tags).run_id

        abandoned = create({LAUNCHED_BY: "rag ingest"})
        reexecution = create({LAUNCHED_BY: "rag ingest", "dagster/parent_run_id": abandoned,
                              "dagster/root_run_id": abandoned})
        daemon = create({})
        assert fail_abandoned_runs(instance, ["ingest_sample"]) == 1
        status = {run_id: instance.get_run_by_id(run_id).status for run_id in (abandoned, reexecution, daemon)}
        assert status == {abandoned: dg.DagsterRunStatus.FAILURE, reexecution: dg.DagsterRunStatus.NOT_STARTED,
                          daemon: dg.DagsterRunStatus.NOT_STARTED}
