"""The runtime's metrics in Prometheus' text format, under the names Prometheus' JMX exporter gives Kafka
Connect's MBeans, so that dashboards and alerts built on a Java Connect cluster's scrape work unchanged.

The exporter's default naming (no rules beyond ``pattern: ".*"``): an MBean ``kafka.connect:type=<group>,
<tag>=<value>...`` and its numeric attribute ``<attr>`` become ``kafka_connect_<group>_<attr>`` with the tags
as labels, every character outside ``[a-zA-Z0-9_:]`` replaced by ``_``, a trailing ``_total`` dropped (the
exporter 1.x leaves it to counters) and the type untyped. Strings (a connector's class, a task's status) are
left out, as the exporter leaves them out; booleans are 1 or 0.

>>> text = exposition({"connector-task-metrics,connector=orders,task=0": {"batch-size-avg": 3.0,
...                                                                       "status": "running"}})
>>> [line for line in text.decode().splitlines() if not line.startswith("#")]
['kafka_connect_connector_task_metrics_batch_size_avg{connector="orders",task="0"} 3.0']
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import Metric, UnknownMetricFamily

__all__ = ["CONTENT_TYPE_LATEST", "exposition", "metric_name"]

_UNSAFE = re.compile(r"[^a-zA-Z0-9_:]")


def metric_name(group: str, attribute: str) -> str:
    """The JMX exporter's name for ``attribute`` of MBean type ``group``.

    >>> metric_name("source-task-metrics", "source-record-poll-total")
    'kafka_connect_source_task_metrics_source_record_poll'
    """
    name = _UNSAFE.sub("_", f"kafka_connect_{group}_{attribute}")
    return name[: -len("_total")] if name.endswith("_total") else name


def _families(groups: Mapping[str, Mapping[str, Any]]) -> Iterator[Metric]:
    families: dict[str, tuple[tuple[str, ...], UnknownMetricFamily]] = {}
    for group, metrics in groups.items():
        kind, *tags = group.split(",")
        labels = dict(sorted(tag.partition("=")[::2] for tag in tags))
        names = tuple(labels)
        for attribute, value in metrics.items():
            if isinstance(value, bool):
                value = float(value)
            elif not isinstance(value, (int, float)):
                continue  # strings and unset values: not exported (nor by the JMX exporter)
            name = metric_name(kind, attribute)
            known = families.get(name)
            if known is None:
                known = families[name] = (names, UnknownMetricFamily(
                    name, f"{attribute} of kafka.connect:type={kind}", labels=names))
            if known[0] == names:  # a family has one set of labels
                known[1].add_metric(list(labels.values()), float(value))
    for _, family in families.values():
        yield family


class _Groups:
    """A prometheus_client collector over one snapshot of metric groups."""

    def __init__(self, groups: Mapping[str, Mapping[str, Any]]) -> None:
        self.groups = groups

    def collect(self) -> Iterator[Metric]:
        return _families(self.groups)


def exposition(groups: Mapping[str, Mapping[str, Any]]) -> bytes:
    """``groups`` (as :meth:`ConnectRuntime.metrics <connect_magics.runtime.runtime.ConnectRuntime.metrics>`
    returns them) in Prometheus' text exposition format (:data:`CONTENT_TYPE_LATEST`)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Groups(groups))
    return generate_latest(registry)
