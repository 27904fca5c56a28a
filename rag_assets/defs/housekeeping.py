"""Each corpus' stage-store garbage collection (core/garbage.py) as a Dagster job, on the
schedule rag_project.yml's ``stage_store_gc`` declares: what it removed shows in the run's
output metadata."""

import dagster as dg

from rag_assets.config.schema import Corpus, Project
from rag_assets.core.garbage import collect_garbage
from rag_assets.defs.names import gc_job_name, resource_keys
from rag_assets.defs.resources import CorpusResources


def build_gc_automation(project: Project, corpus: Corpus) -> tuple[dg.JobDefinition, list[dg.ScheduleDefinition]]:
    """The corpus' collect_garbage job, and its schedule where ``stage_store_gc.schedule`` is set."""
    days = project.stage_store_gc.older_than_days

    @dg.op(name=f"{corpus.name}_collect_garbage", required_resource_keys={resource_keys(corpus.name)["store"]},
           out=dg.Out(dg.Nothing))
    def collect(context: dg.OpExecutionContext):
        """Remove the stage-store artifacts no document's current version uses, written over
        ``stage_store_gc.older_than_days`` ago."""
        store = CorpusResources(context.resources, corpus).store.get_store()
        report = collect_garbage(store, days * 86400)
        context.log.info(f"stage store {store}: removed {report.removed} unused file(s) written over {days:g} days "
                         f"ago ({report.removed_bytes / 2**20:.1f} MiB)")
        rows = "\n".join(f"| {stage} | {t.artifacts} | {t.referenced} | {t.recent} | {t.removed} |"
                         for stage, t in report.stages.items())
        kept = sum(t.bytes for t in report.stages.values()) - report.removed_bytes
        yield dg.Output(None, metadata={
            "removed": report.removed, "removed_mib": round(report.removed_bytes / 2**20, 3),
            "kept_mib": round(kept / 2**20, 3),
            "older_than_days": days, "temporary_removed": report.temporary_removed,
            "stages": dg.MetadataValue.md("| stage | artifacts | in use | recent | removed |\n|---|---|---|---|---|\n"
                                          + rows)})

    @dg.job(name=gc_job_name(corpus.name), executor_def=dg.in_process_executor,
            description=f"Remove corpus {corpus.name!r}'s stage-store artifacts that no document's current version "
                        f"uses, once written over {days:g} days ago (`rag gc` does the same by hand).")
    def gc_job():
        collect()

    schedules = [dg.ScheduleDefinition(
        name=f"{corpus.name}_collect_garbage_schedule", cron_schedule=project.stage_store_gc.schedule, job=gc_job,
        default_status=dg.DefaultScheduleStatus.RUNNING,
        description="rag_project.yml stage_store_gc.schedule")] if project.stage_store_gc.schedule else []
    return gc_job, schedules
