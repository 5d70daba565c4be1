"""Tables shared by the magics and the widgets: statuses, task metrics and offsets as pandas DataFrames,
and why an offsets table is empty. Nothing here imports the magics or the widgets.

>>> tasks_summary({"tasks": [{"id": 0, "state": "RUNNING"}, {"id": 1, "state": "FAILED"}]})
'0:RUNNING, 1:FAILED'
"""

from __future__ import annotations

import time
from typing import Any

import pandas as pd

__all__ = ["STATUS_COLUMNS", "empty_offsets_reason", "offsets_frame", "status_frame", "task_metrics_frame",
           "tasks_summary"]

STATUS_COLUMNS = ["id", "state", "worker_id", "version", "trace"]


def status_frame(status: dict[str, Any]) -> pd.DataFrame:
    """One row for the connector (``id`` ``"connector"``) and one per task, from a status JSON."""
    rows = [{"id": "connector", **status.get("connector", {})}]
    rows += [{**t, "id": str(t.get("id"))} for t in status.get("tasks", [])]
    frame = pd.DataFrame(rows)
    extra = [c for c in frame.columns if c not in STATUS_COLUMNS]
    return frame.reindex(columns=[c for c in STATUS_COLUMNS if c in frame.columns] + extra).fillna("")


TASK_GROUPS = {"source-task-metrics": "source", "sink-task-metrics": "sink"}


def task_metrics_frame(metrics: dict[str, dict[str, Any]], connector: str | None = None) -> pd.DataFrame:
    """One row per task (``connector``, ``task``, ``type``, then its metrics) from ``rt.metrics()``'s
    ``source-task-metrics`` and ``sink-task-metrics`` groups; only ``connector``'s tasks if given."""
    rows = []
    for group, values in metrics.items():
        kind, *tags = group.split(",")
        if kind in TASK_GROUPS:
            tag = dict(t.split("=", 1) for t in tags)
            if connector is None or tag.get("connector") == connector:
                rows.append({"connector": tag.get("connector"), "task": int(tag.get("task", -1)),
                             "type": TASK_GROUPS[kind], **values})
    frame = pd.DataFrame(rows, columns=None if rows else ["connector", "task", "type"])
    return frame.sort_values(["connector", "task"], ignore_index=True) if rows else frame


def tasks_summary(status: dict[str, Any]) -> str:
    """``"0:RUNNING, 1:FAILED"`` for a status JSON's tasks."""
    return ", ".join(f"{t.get('id')}:{t.get('state')}" for t in status.get("tasks", []))


def offsets_frame(rt: Any, name: str) -> pd.DataFrame:
    """The runtime's offsets DataFrame helper when it has one, else a flat frame from the JSON."""
    helper = getattr(rt, "offsets_frame", None)
    if callable(helper):
        return helper(name)
    entries = rt.get_offsets(name)["offsets"]
    return pd.json_normalize([{"partition": e["partition"], "offset": e["offset"]} for e in entries])


def _seconds_to_next_commit(rt: Any, name: str, tasks: int) -> float | None:
    """The soonest periodic offset commit of the connector's running tasks, from their commit clocks."""
    due = []
    herder = getattr(rt, "herder", None)  # a remote cluster's tasks: their clocks are not known here
    for task in range(tasks if herder is not None else 0):
        runner = getattr(herder.task_handle(name, task), "runner", None)  # tasks on this kernel's threads
        last, interval = getattr(runner, "_last_commit", None), getattr(runner, "flush_interval", None)
        if last is not None and interval is not None:
            due.append(max(0.0, last + interval - time.monotonic()))
    return min(due) if due else None


def empty_offsets_reason(rt: Any, name: str) -> str:
    """Why connector ``name`` has no offsets yet, for a notebook user looking at an empty table.

    >>> empty_offsets_reason(rt, "lines")  # doctest: +SKIP
    'No offsets committed yet for lines; the next commit is due in 4 s (offset.flush.interval.ms=5000), ...'
    """
    status = rt.connector_status(name)
    state = status["connector"]["state"]
    if state == "STOPPED" or not status.get("tasks"):
        return f"No offsets committed for {name}: it is {state} with no running tasks, so it commits none."
    due = _seconds_to_next_commit(rt, name, len(status["tasks"]))
    when = f"the next commit is due in {round(due)} s" if due is not None else "offsets are committed"
    worker = getattr(rt, "worker_config", None)  # a remote cluster does not show its worker settings
    every = f"offset.flush.interval.ms={worker.int('offset.flush.interval.ms')}" if worker is not None else \
        "every offset.flush.interval.ms of the worker"
    return (f"No offsets committed yet for {name}; {when} ({every}), and only for records the broker acknowledged "
            "(source) or the task flushed (sink).")
