"""Dagster's own view of the pipeline, on a real instance: an edited document is unsynced in all
four stages and nowhere else, config changes mark exactly the stages they redo, `rag ingest`
runs are real runs with the code location's origin, a dry run writes nothing, and the source
sensor neither requests work twice nor changes anything when only previewed."""

import time
from pathlib import Path

import dagster as dg
import lancedb
import pytest
import yaml

from dagster._core.execution.backfill import BulkActionStatus, PartitionBackfill
from dagster._core.remote_origin import RemotePartitionSetOrigin

from rag_assets.config import load_project
from rag_assets.core.keys import doc_id_for, partition_key_for
from rag_assets.core.planning import MassDeleteRefused
from rag_assets.defs.factory import build_definitions
from rag_assets.defs.runs import remote_origin
from rag_assets.defs.sensors import in_flight
from rag_assets.ingest import ingest_project, observe_project, status_project
from rag_assets.query import query_corpus
from tests.conftest import edit_yaml, env, make_project
from tests.defs.sensor_helpers import apply, tick

pytestmark = pytest.mark.slow
STAGES = ("parsed_documents", "chunks", "embeddings", "lancedb_index")
DOC = "handbook/employee_handbook.md"


def stale(project) -> dict[str, list[str]]:
    stages = status_project(project)["corpora"]["sample"]["stages"]
    assert all(s["missing"] == 0 for s in stages.values()), stages
    return {stage: stages[stage]["stale_partitions"] for stage in STAGES}


def files(folder: Path) -> dict[str, int]:
    return {str(p): p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}


def recorded() -> tuple[int, int, int]:
    """Runs, raw_documents observations and partitions the instance holds."""
    with dg.DagsterInstance.get() as instance:
        observations = instance.fetch_observations(dg.AssetKey(["sample", "raw_documents"]), limit=10_000).records
        return (instance.get_runs_count(), len(observations), len(instance.get_dynamic_partitions("sample_documents")))


def edit_config(values: dict, name: str, change) -> None:
    path = Path(values["RAG_PROJECT_DIR"]) / name
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


@pytest.fixture()
def project_env(tmp_path):
    values = make_project(tmp_path / "p")
    with env(**values):
        report = ingest_project(load_project())
        assert report["documents_failed"] == 0
        yield values


def test_an_edit_is_unsynced_in_its_partition_only_until_ingested(project_env):
    values = project_env
    project = load_project()
    assert stale(project) == {stage: [] for stage in STAGES}
    with dg.DagsterInstance.get() as instance:
        runs = instance.get_runs()
        # Real runs: the code location's origin (what the UI re-executes from) and its repository label.
        assert runs and all(r.remote_job_origin.location_name == "rag_assets" for r in runs)
        # The job's Runs tab filters on this label.
        labelled = instance.get_runs(dg.RunsFilter(tags={".dagster/repository": "__repository__@rag_assets"}))
        assert {r.run_id for r in labelled} == {r.run_id for r in runs}

    doc = Path(values["RAG_SAMPLE_DOCS"]) / DOC
    doc.write_text(doc.read_text() + "\nEmployees may also take one volunteering day per year.\n")
    # Before anything records the edit, Dagster (and so `rag status`) still calls it fresh, and the
    # dry run says so; once observed, it is stale in every stage and the dry run agrees.
    unseen = ingest_project(project, dry_run=True)["corpora"]["sample"]["documents"]
    assert [(d["doc_id"], d["observed"]) for d in unseen] == [(DOC, False)]
    assert stale(project) == {stage: [] for stage in STAGES}
    assert observe_project(project)["corpora"]["sample"]["documents_observed"] == 1
    assert stale(project) == {stage: [partition_key_for(DOC)] for stage in STAGES}

    # A dry run names that document and writes nothing: stage store, table and instance untouched.
    data, index = Path(values["RAG_DATA_DIR"]), Path(values["RAG_LANCEDB_URI"])
    before = (files(data), files(index))
    instance_state = recorded()
    plan = ingest_project(project, dry_run=True)["corpora"]["sample"]["documents"]
    assert [(d["doc_id"], d["reason"], d["stages"], d["observed"]) for d in plan] == [
        (DOC, "content changed", list(STAGES), True)]
    assert (files(data), files(index)) == before
    assert recorded() == instance_state

    report = ingest_project(project)
    assert report["documents_changed"] == 1 and report["documents_parsed"] == 1
    assert stale(project) == {stage: [] for stage in STAGES}


def test_config_changes_mark_exactly_the_stages_they_redo(project_env):
    values = project_env
    with dg.DagsterInstance.get() as instance:
        everything = sorted(instance.get_dynamic_partitions("sample_documents"))
    assert len(everything) == 12

    # Another model with the same tokenizer and limit (the chunks stay as they are): embeddings and index.
    def add_models(data):
        data["embedding_models"].append(dict(data["embedding_models"][0], name="minilm_int8", compute="int8"))
        data["embedding_models"].append(dict(data["embedding_models"][0], name="minilm_passages",
                                             passage_prefix="passage: "))

    edit_config(values, "profiles/embedding_models.yml", add_models)
    edit_config(values, "rag_project.yml", lambda d: d["defaults"].update({"+embedding_model": "minilm_int8"}))
    switched = stale(load_project())
    assert not switched["parsed_documents"] and not switched["chunks"]
    assert sorted(switched["embeddings"]) == sorted(switched["lancedb_index"]) == everything
    planned = ingest_project(load_project(), dry_run=True)["corpora"]["sample"]["documents"]
    assert {(d["reason"], tuple(d["stages"])) for d in planned} == {
        ("embedding model changed", ("embeddings", "lancedb_index"))} and len(planned) == 12
    # One whose passage prefix takes room from every chunk: the chunks too, never the parse.
    edit_config(values, "rag_project.yml", lambda d: d["defaults"].update({"+embedding_model": "minilm_passages"}))
    switched = stale(load_project())
    assert not switched["parsed_documents"] and sorted(switched["chunks"]) == everything
    planned = ingest_project(load_project(), dry_run=True)["corpora"]["sample"]["documents"]  # as Dagster marks them
    assert {tuple(d["stages"]) for d in planned} == {("chunks", "embeddings", "lancedb_index")}

    # Back to the ingested model, then another chunk profile: chunks, embeddings and index.
    edit_config(values, "rag_project.yml", lambda d: d["defaults"].update({"+embedding_model": "all_minilm_l6_v2"}))
    assert stale(load_project()) == {stage: [] for stage in STAGES}
    edit_config(values, "rag_project.yml", lambda d: d["defaults"].update({"+chunking_profile": "recursive"}))
    switched = stale(load_project())
    assert not switched["parsed_documents"]
    assert sorted(switched["chunks"]) == sorted(switched["embeddings"]) == sorted(switched["lancedb_index"]) \
        == everything

    # A copy of the ingested profile under another name (another table, the profile's name on every
    # row): stale from the chunks on, and its ingest embeds nothing (the same texts are cached).
    edit_config(values, "profiles/chunking.yml", lambda d: d["chunking_profiles"].append(
        dict(next(p for p in d["chunking_profiles"] if p["name"] == "default"), name="default_copy")))
    edit_config(values, "rag_project.yml", lambda d: d["defaults"].update({"+chunking_profile": "default_copy"}))
    assert stale(load_project()) == {"parsed_documents": [], **dict.fromkeys(STAGES[1:], everything)}
    assert ingest_project(load_project())["chunks_embedded"] == 0
    assert stale(load_project()) == {stage: [] for stage in STAGES}


def test_sensor_preview_changes_nothing_and_queued_work_is_not_requested_twice(project_env):
    values = project_env
    project = load_project()
    defs = build_definitions(project)
    sensor = "sample_source_sensor"
    with dg.DagsterInstance.get() as instance:
        _, cursor = tick(defs, sensor, instance, None)  # catch up with what `rag ingest` did
        doc = Path(values["RAG_SAMPLE_DOCS"]) / DOC
        doc.write_text(doc.read_text() + "\nA preview must not swallow this line.\n")

        # A preview (an evaluation whose result is thrown away) leaves no trace...
        pointers = files(Path(values["RAG_DATA_DIR"]) / "current")
        preview, _ = tick(defs, sensor, instance, cursor)
        assert [e.partition for e in preview.asset_events] == [partition_key_for(DOC)]
        assert files(Path(values["RAG_DATA_DIR"]) / "current") == pointers
        # ...so the real tick still reports the change and requests its run.
        first, cursor = tick(defs, sensor, instance, cursor)
        assert [e.partition for e in first.asset_events] == [partition_key_for(DOC)]
        assert [r.partition_key for r in first.run_requests] == [partition_key_for(DOC)]
        assert first.run_requests[0].run_key == preview.run_requests[0].run_key  # same plan, same key

        # The run is queued, not yet executed: the next tick requests nothing.
        instance.report_runless_asset_event(first.asset_events[0])
        job = defs.resolve_job_def("ingest_sample")
        instance.create_run_for_job(job, tags={"dagster/partition": partition_key_for(DOC)},
                                    status=dg.DagsterRunStatus.QUEUED, remote_job_origin=remote_origin(job.name))
        second, cursor = tick(defs, sensor, instance, cursor)
        assert not second.run_requests and not second.asset_events
        assert "1 already queued or running" in second.skip_message

        # A UI backfill's run (the asset job, over a range) holds its documents too: they were ingested twice.
        others = [pk for pk in instance.get_dynamic_partitions("sample_documents")
                  if pk != partition_key_for(DOC)][:3]  # contiguous in the partitions' order
        for pk in others:
            other = Path(values["RAG_SAMPLE_DOCS"]) / doc_id_for(pk)
            other.write_bytes(other.read_bytes() + b"\n\nEdited while a backfill runs.\n")
        assets = defs.resolve_implicit_global_asset_job_def()
        parse_only = instance.create_run_for_job(  # a run of the parse alone leaves them unindexed: not held
            assets, asset_selection=frozenset([dg.AssetKey(["sample", "parsed_documents"])]),
            tags={"dagster/asset_partition_range_start": others[0], "dagster/asset_partition_range_end": others[-1]},
            status=dg.DagsterRunStatus.STARTED, remote_job_origin=remote_origin(assets.name))
        held = in_flight(instance, project.corpus("sample"), list(instance.get_dynamic_partitions("sample_documents")))
        assert held == {partition_key_for(DOC)}
        instance.delete_run(parse_only.run_id)
        instance.create_run_for_job(
            assets, asset_selection=frozenset(dg.AssetKey(["sample", stage]) for stage in STAGES),
            tags={"dagster/asset_partition_range_start": others[0], "dagster/asset_partition_range_end": others[-1]},
            status=dg.DagsterRunStatus.STARTED, remote_job_origin=remote_origin(assets.name))
        third, cursor = tick(defs, sensor, instance, cursor)
        assert sorted(e.partition for e in third.asset_events) == sorted(others)  # observed, not requested
        assert not third.run_requests

        # A backfill launched in the UI whose runs the daemon has not created yet holds its documents
        # too: an asset backfill's partitions not yet requested, a job backfill's after its last submitted.
        rest = [pk for pk in instance.get_dynamic_partitions("sample_documents") if pk != partition_key_for(DOC)][3:]
        for pk in rest[:5]:
            other = Path(values["RAG_SAMPLE_DOCS"]) / doc_id_for(pk)
            other.write_bytes(other.read_bytes() + b"\n\nEdited before its backfill's runs exist.\n")
        asset_backfill = PartitionBackfill.from_asset_partitions(
            backfill_id="assets", asset_graph=defs.resolve_asset_graph(), partition_names=rest[:2],
            asset_selection=[dg.AssetKey(["sample", stage]) for stage in STAGES], backfill_timestamp=time.time(),
            tags={}, dynamic_partitions_store=instance, all_partitions=False, title=None, description=None,
            run_config=None)
        instance.add_backfill(asset_backfill)
        instance.add_backfill(PartitionBackfill(
            backfill_id="job", status=BulkActionStatus.REQUESTED, from_failure=False, tags={},
            backfill_timestamp=time.time(), partition_names=rest[2:5], last_submitted_partition_name=rest[2],
            partition_set_origin=RemotePartitionSetOrigin(repository_origin=remote_origin("ingest_sample").repository_origin,
                                                          partition_set_name="ingest_sample_partition_set")))
        fourth, cursor = tick(defs, sensor, instance, cursor)
        assert sorted(e.partition for e in fourth.asset_events) == sorted(rest[:5])
        assert [r.partition_key for r in fourth.run_requests] == [rest[2]]  # the job backfill's submitted run is done
    # `rag ingest` leaves them to those runs too, and says so.
    report = ingest_project(project)["corpora"]["sample"]
    assert report["documents_in_flight"] == sorted([DOC, *map(doc_id_for, others + rest[:2] + rest[3:5])])
    # rest[2] only (its backfill run is not in flight here), then the table's maintenance
    assert report["runs"] == 2 and report["documents_parsed"] == 1


def test_a_partition_under_an_old_key_format_is_rekeyed_without_losing_rows(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "incident review, march.md").write_text("# Incident\n\nThe dock lost power at 09:12.\n")
    values = make_project(tmp_path / "p", docs=docs)
    with env(**values):
        project = load_project()
        with dg.DagsterInstance.get() as instance:  # as an older release registered it
            instance.add_dynamic_partitions("sample_documents", ["incident review%2C march.md"])
        report = ingest_project(project)
        assert report["documents_failed"] == 0 and report["rows_in_index"] > 0
        with dg.DagsterInstance.get() as instance:
            assert instance.get_dynamic_partitions("sample_documents") == ["incident review， march.md"]
        assert stale(project) == {stage: [] for stage in STAGES}
        assert ingest_project(project)["runs"] == 0


def test_declarative_automation_requests_exactly_the_unsynced_partitions(tmp_path):
    values = make_project(tmp_path / "p")
    edit_config(values, "rag_project.yml", lambda d: d["defaults"].update({"+automation": "declarative"}))
    with env(**values), dg.DagsterInstance.get() as instance:
        project = load_project()
        defs = build_definitions(project)
        keys = [dg.AssetKey(["sample", stage]) for stage in STAGES]

        def requested(automation_cursor):
            result = dg.evaluate_automation_conditions(defs=defs, instance=instance,
                                                       asset_selection=dg.AssetSelection.assets(*keys),
                                                       cursor=automation_cursor)
            return {key.path[-1]: set(result.get_requested_partitions(key)) for key in keys}, result.cursor

        _, automation_cursor = requested(None)  # the daemon's first tick, before any document
        # The sensor reports documents but leaves the ingest runs to the automation conditions.
        first, cursor = tick(defs, "sample_source_sensor", instance, None)
        assert first.asset_events and not [r for r in first.run_requests if r.job_name == "ingest_sample"]
        apply(defs, instance, first)
        everything = set(instance.get_dynamic_partitions("sample_documents"))
        wanted, automation_cursor = requested(automation_cursor)
        assert wanted == {stage: everything for stage in STAGES}
        ingest_project(project)  # what the daemon's runs would do; the next evaluation asks for nothing
        wanted, automation_cursor = requested(automation_cursor)
        assert wanted == {stage: set() for stage in STAGES}

        doc = Path(values["RAG_SAMPLE_DOCS"]) / DOC
        doc.write_text(doc.read_text() + "\nRemote work needs a manager's approval.\n")
        edited, cursor = tick(defs, "sample_source_sensor", instance, cursor)
        apply(defs, instance, edited)
        wanted, automation_cursor = requested(automation_cursor)
        assert wanted == {stage: {partition_key_for(DOC)} for stage in STAGES}


def test_observing_raw_documents_reports_exactly_the_edited_document(project_env):
    values = project_env
    project = load_project()
    defs = build_definitions(project)
    raw = dg.AssetKey(["sample", "raw_documents"])
    doc = Path(values["RAG_SAMPLE_DOCS"]) / DOC
    doc.write_text(doc.read_text() + "\nThe canteen opens at 07:30.\n")
    with dg.DagsterInstance.get() as instance:
        # What the UI's "Observe" runs: the observation function, in a run.
        job = defs.resolve_implicit_job_def_def_for_assets([raw]).get_subset(asset_selection={raw})
        result = job.execute_in_process(instance=instance)
        assert result.success
        observed = [e.event_specific_data.asset_observation.partition for e in result.all_events
                    if e.event_type_value == "ASSET_OBSERVATION"]
    assert observed == [partition_key_for(DOC)]
    assert stale(project) == {stage: [partition_key_for(DOC)] for stage in STAGES}
    assert ingest_project(project)["documents_changed"] == 1
    assert stale(project) == {stage: [] for stage in STAGES}


def test_an_edit_read_by_a_sweep_that_stopped_is_reported_and_indexed_by_the_next(project_env):
    """A sweep that stops after reading an edited document (a refused mass delete here; an S3
    source failing mid-listing alike) records nothing: the next sweep reports the edit to Dagster
    and the ingest indexes the new text, not the old."""
    values = project_env
    docs = Path(values["RAG_SAMPLE_DOCS"])
    (docs / DOC).write_text((docs / DOC).read_text() + "\nThe canteen opens at 07:30.\n")
    aside = docs.parent / "aside"
    moved = sorted(p.relative_to(docs) for p in docs.rglob("*") if p.is_file() and p != docs / DOC)[:7]
    for rel in moved:
        (aside / rel).parent.mkdir(parents=True, exist_ok=True)
        (docs / rel).rename(aside / rel)
    with pytest.raises(MassDeleteRefused):
        ingest_project(load_project())
    for rel in moved:
        (aside / rel).rename(docs / rel)
    project = load_project()
    observe_project(project)
    assert stale(project) == {stage: [partition_key_for(DOC)] for stage in STAGES}
    assert ingest_project(project)["documents_changed"] == 1
    assert stale(project) == {stage: [] for stage in STAGES}
    hits = query_corpus(project, project.corpus("sample"), "When does the canteen open?", k=3, mode="fts")
    assert any("07:30" in hit.text for hit in hits)


def test_a_deletion_observed_before_the_ingest_is_in_its_dry_run_and_its_count(project_env):
    values = project_env
    project = load_project()
    (Path(values["RAG_SAMPLE_DOCS"]) / DOC).unlink()
    observe_project(project)  # removes the partition; the rows wait for maintenance
    dry = ingest_project(project, dry_run=True)
    assert dry["documents_deleted"] == 1
    assert [(d["doc_id"], d["reason"]) for d in dry["corpora"]["sample"]["documents"]] == \
        [(DOC, "deleted from the source")]
    report = ingest_project(project)
    assert report["documents_deleted"] == 1 and report["checks"]["sample.no_rows_of_deleted_documents"] is True


def test_a_maintenance_run_that_did_not_finish_is_redone_by_the_next_ingest(project_env):
    project = load_project()
    assert ingest_project(project)["runs"] == 0  # nothing changed, nothing to maintain
    defs = build_definitions(project)
    with dg.DagsterInstance.get() as instance:  # the maintenance of a `rag ingest` that was killed
        run = instance.create_run_for_job(defs.resolve_job_def("maintain_sample"))
        instance.report_run_failed(run, message="killed")
    report = ingest_project(project)
    assert report["runs"] == 1 and len(report["checks"]) == 6 and all(report["checks"].values())
    assert ingest_project(project)["runs"] == 0


def _requested(defs, instance, selection, cursor):
    """What the daemon's automation requests on its next tick: (keys, the cursor after it)."""
    result = dg.evaluate_automation_conditions(defs=defs, instance=instance, asset_selection=selection, cursor=cursor)
    return {r.key for r in result.results if not r.true_subset.is_empty}, result.cursor


def test_the_daemon_runs_every_data_test_with_the_table_and_rescores_a_change_made_mid_evaluation(project_env):
    project = load_project()
    defs = build_definitions(project)
    selection = defs.resolve_sensor_def("rag_maintenance_automation").asset_selection
    table, scores = dg.AssetKey(["sample", "lancedb_table"]), dg.AssetKey(["sample", "retrieval_eval"])
    data_tests = {dg.AssetCheckKey(table, test) for test in project.corpus("sample").data_tests}
    assert len(data_tests) == 6
    with dg.DagsterInstance.get() as instance:
        def requested(automation_cursor):
            return _requested(defs, instance, selection, automation_cursor)

        _, cursor = requested(None)
        # A batch launched from the UI indexes a document; nothing maintains the table yet.
        instance.report_runless_asset_event(dg.AssetMaterialization(
            dg.AssetKey(["sample", "lancedb_index"]), partition=partition_key_for(DOC)))
        wanted, cursor = requested(cursor)
        assert wanted == {table, scores} | data_tests
        _, cursor = requested(cursor)
        # The evaluation it asked for ends, and the table changes again right after, before the next tick.
        instance.report_runless_asset_event(dg.AssetMaterialization(scores))
        instance.report_runless_asset_event(dg.AssetMaterialization(table))
        wanted, cursor = requested(cursor)
        assert wanted == {scores} | data_tests
        wanted, cursor = requested(cursor)
        assert wanted == set()


def test_data_tests_a_maintenance_run_ran_are_not_run_again_by_the_daemon(project_env):
    project = load_project()
    defs = build_definitions(project)
    selection = defs.resolve_sensor_def("rag_maintenance_automation").asset_selection
    table = dg.AssetKey(["sample", "lancedb_table"])
    data_tests = {dg.AssetCheckKey(table, test) for test in project.corpus("sample").data_tests}
    with dg.DagsterInstance.get() as instance:
        _, cursor = _requested(defs, instance, selection, None)
        path = Path(project_env["RAG_SAMPLE_DOCS"]) / DOC
        path.write_text(path.read_text() + "\nA new paragraph about parking.\n")
        report = ingest_project(project)  # its maintain_sample run materialises the table and runs every test
        assert len(report["checks"]) == 6
        wanted, cursor = _requested(defs, instance, selection, cursor)
        assert not wanted & (data_tests | {table}), wanted  # the tests ran with the table: not again on their own


def test_a_run_on_a_damaged_table_names_the_table_and_the_fix(project_env, tmp_path):
    """As `rag ingest` does: a run launched from the UI fails with the table's path and the fix,
    not Lance's own error."""
    import shutil

    from rag_assets.core.index import table_name
    from rag_assets.ingest import observe_project

    project = load_project()
    corpus = project.corpus("sample")
    path = Path(project_env["RAG_SAMPLE_DOCS"]) / DOC
    path.write_text(path.read_text() + "\nA new paragraph about parking.\n")
    observe_project(project)
    name = table_name("sample", corpus.embedding_model.name, corpus.chunking_profile.name)
    shutil.move(Path(corpus.index_uri) / f"{name}.lance" / "data", tmp_path / "data")
    with dg.DagsterInstance.get() as instance:
        result = build_definitions(project).resolve_job_def("ingest_sample").execute_in_process(
            partition_key=partition_key_for(DOC), instance=instance, raise_on_error=False)
    failure = next(e for e in result.all_events if e.is_step_failure)
    assert failure.step_key == "sample__lancedb_index"
    error = failure.step_failure_data.error.cause  # Dagster wraps the step's own error
    assert error.cls_name == "IndexUnreadable" and error.message.startswith(
        f"rag_assets.core.index.IndexUnreadable: cannot read the LanceDB table {name}")
    assert f"move {corpus.index_uri}/{name}.lance aside" in error.message and ".rs:" not in error.message


def test_a_batch_landing_during_table_maintenance_is_maintained_by_that_run(project_env, monkeypatch):
    """TABLE_CONDITION forgets an index batch that lands while the table run is in progress (the
    run's own materialisation resets it), so the run maintains the table again itself."""
    from rag_assets.core.index import table_name
    from rag_assets.defs import factory
    from rag_assets.defs.runs import run_job

    project = load_project()
    defs = build_definitions(project)
    prune, calls = factory._prune, []

    def prune_then_a_batch_lands(index, live):
        if not calls:  # a sweep deletes a document and a batch indexes another, mid-run
            with dg.DagsterInstance.get() as instance:
                instance.delete_dynamic_partition("sample_documents", partition_key_for(DOC))
                instance.report_runless_asset_event(dg.AssetMaterialization(
                    dg.AssetKey(["sample", "lancedb_index"]), partition=partition_key_for("support/customer_faq.md")))
        calls.append(len(live))
        return prune(index, live)

    monkeypatch.setattr(factory, "_prune", prune_then_a_batch_lands)
    with dg.DagsterInstance.get() as instance:
        result = run_job(project, defs, "maintain_sample", instance)
    assert result.success
    metadata = result.asset_materializations_for_node("sample__lancedb_table")[0].metadata
    assert metadata["passes"].value == 2 and len(calls) == 2 and calls[1] == calls[0] - 1
    assert metadata["deleted_documents"].value == 1
    corpus = project.corpus("sample")
    table = lancedb.connect(corpus.index_uri).open_table(table_name("sample", corpus.embedding_model.name,
                                                                    corpus.chunking_profile.name))
    assert DOC not in set(table.to_arrow().column("doc_id").to_pylist())


def test_a_dry_run_names_the_stages_a_settings_change_leaves_unsynced_in_dagster(project_env):
    """A tags change unsyncs only lancedb_index in the UI; the dry run said every stage would be redone."""
    edit_yaml(Path(project_env["RAG_PROJECT_DIR"]) / "rag_project.yml",
              lambda d: d["corpora"]["sample"].update({"+tags": ["demo", "extra"]}))
    project = load_project()
    unsynced = stale(project)
    assert [stage for stage in STAGES if unsynced[stage]] == ["lancedb_index"]
    planned = ingest_project(project, dry_run=True)["corpora"]["sample"]["documents"]
    assert len(planned) == 12
    assert {(d["reason"], tuple(d["stages"])) for d in planned} == {
        ("index URI, model name, tenant or tags changed", ("lancedb_index",))}
    report = ingest_project(project)
    assert (report["documents_parsed"], report["chunks_embedded"]) == (0, 0)
