"""Evaluate a sensor tick, apply its result the way the daemon would, and run what it requested."""

import dagster as dg


def tick(defs: dg.Definitions, sensor_name: str, instance: dg.DagsterInstance, cursor: str | None):
    """Evaluate the sensor once; returns (tick data, new cursor). ``data.skip_message`` is set
    when it skipped."""
    sensor = defs.resolve_sensor_def(sensor_name)
    with dg.build_sensor_context(instance=instance, instance_ref=instance.get_ref(), cursor=cursor, resources=defs.resources,
                                 definitions=defs) as context:
        data = sensor.evaluate_tick(context)
    return data, (data.cursor or cursor)


def apply(defs: dg.Definitions, instance: dg.DagsterInstance, data) -> list:
    """Add/delete partitions, record the reported events, then execute the requested runs."""
    for request in data.dynamic_partitions_requests or []:
        if isinstance(request, dg.AddDynamicPartitionsRequest):
            instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
    for event in data.asset_events or []:
        instance.report_runless_asset_event(event)
    for request in data.dynamic_partitions_requests or []:
        if isinstance(request, dg.DeleteDynamicPartitionsRequest):
            for key in request.partition_keys:
                instance.delete_dynamic_partition(request.partitions_def_name, key)
    outcomes = []
    for run in data.run_requests or []:
        job = defs.resolve_job_def(run.job_name)
        outcomes.append(job.execute_in_process(instance=instance, partition_key=run.partition_key,
                                               tags=dict(run.tags), raise_on_error=True))
    return outcomes
