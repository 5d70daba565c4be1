"""KIP-891's plugin version metrics: which class and version every connector, task, converter,
transformation and predicate actually runs, so operators see what is in use before removing a version.

Groups (keys as :func:`~connect_magics.runtime.metrics.group_name` writes them):

* ``connector-metrics,connector=C``: ``connector-class``, ``connector-version``, ``connector-type``, ``status``;
* ``connector-task-metrics,connector=C,task=N``: ``connector-class``, ``connector-type``,
  ``connector-version``, ``task-class``, ``task-version``, and ``{key,value,header}-converter-{class,version}``;
* ``connector-transform-metrics,connector=C,task=N,transform=A``: ``transform-class``, ``transform-version``;
* ``connector-predicate-metrics,connector=C,task=N,predicate=P``: ``predicate-class``, ``predicate-version``.

>>> from connect_magics.runtime.plugins.registry import Plugins
>>> desc = Plugins().find("FileStreamSource")
>>> tp = TaskPlugins(desc, "connect_magics.connectors.file.FileStreamSourceTask", desc.version)
>>> sorted(task_groups("c", 0, tp))
['connector-task-metrics,connector=c,task=0']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from connect_magics.runtime.metrics import group_name
from connect_magics.runtime.plugins.registry import PluginDesc

_CONVERTER_METRICS = {"key.converter": "key-converter", "value.converter": "value-converter",
                      "header.converter": "header-converter"}


@dataclass
class TaskPlugins:
    """The plugins one task was started with (resolved when it started; constant while it runs)."""

    connector: PluginDesc
    task_class: str
    task_version: str | None
    converters: dict[str, PluginDesc] = field(default_factory=dict)  # by config key, e.g. "key.converter"
    transforms: dict[str, PluginDesc | None] = field(default_factory=dict)  # by alias
    predicates: dict[str, PluginDesc | None] = field(default_factory=dict)  # by alias


def connector_group(name: str, desc: PluginDesc, state: str | None) -> dict[str, dict[str, Any]]:
    """The ``connector-metrics`` group of a connector."""
    return {group_name("connector-metrics", connector=name): {
        "connector-class": desc.class_name, "connector-version": desc.version, "connector-type": desc.type,
        "status": state.lower() if state else "unassigned"}}


def task_groups(name: str, task: int, tp: TaskPlugins) -> dict[str, dict[str, Any]]:
    """The task's ``connector-task-metrics`` group and one group per transformation and predicate."""
    metrics: dict[str, Any] = {
        "connector-class": tp.connector.class_name, "connector-type": tp.connector.type,
        "connector-version": tp.connector.version, "task-class": tp.task_class, "task-version": tp.task_version}
    for key, prefix in _CONVERTER_METRICS.items():
        desc = tp.converters.get(key)
        metrics[f"{prefix}-class"] = desc.class_name if desc else None
        metrics[f"{prefix}-version"] = desc.version if desc else None
    groups = {group_name("connector-task-metrics", connector=name, task=task): metrics}
    for kind, items in (("transform", tp.transforms), ("predicate", tp.predicates)):
        for alias, desc in items.items():
            groups[group_name(f"connector-{kind}-metrics", connector=name, task=task, **{kind: alias})] = {
                f"{kind}-class": desc.class_name if desc else None, f"{kind}-version": desc.version if desc else None}
    return groups


__all__ = ["TaskPlugins", "connector_group", "task_groups"]
