"""Building a task's runner from its configs, wherever it runs (a kernel thread or a Spark executor).

A :class:`TaskSpec` is everything a worker needs to start one task instance: plain strings and dicts,
so that it pickles to a Spark executor. :func:`build_runner` resolves the plugins it names (KIP-891
versions are evaluated at each start) and makes the :class:`SourceTaskRunner` or :class:`SinkTaskRunner`.

>>> spec = TaskSpec(TaskId("lines", 0), {"connector.class": "FileStreamSource", ...}, {...},
...                 TargetState.STARTED, "source")  # doctest: +SKIP
>>> runner, plugins = build_runner(spec, services, offset_stores)  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from connect_magics.runtime.config.connector_config import (
    CONNECTOR_CLASS,
    CONNECTOR_VERSION,
    build_transformation_chain,
    client_overrides,
    resolve_converter,
)
from connect_magics.runtime.config.exactly_once import TransactionBoundary, exactly_once_enabled
from connect_magics.runtime.plugins.metrics import TaskPlugins
from connect_magics.runtime.plugins.registry import PluginDesc, python_name
from connect_magics.runtime.worker.exactly_once_source import ExactlyOnceSourceTaskRunner
from connect_magics.runtime.worker.fencing import TaskFence, TaskOwnership
from connect_magics.runtime.worker.sink_runner import SinkTaskRunner
from connect_magics.runtime.worker.source_runner import SourceTaskRunner
from connect_magics.runtime.worker.task_id import TaskId
from connect_magics.runtime.worker.task_runner import TaskRunner, TaskServices
from connect_magics.storage.client_limit import Reservation
from connect_magics.storage.config_store import TargetState
from connect_magics.storage.offset_store import OffsetStore

CONVERTER_KEYS = (("key.converter", True), ("value.converter", False), ("header.converter", None))


@dataclass(frozen=True)
class TaskSpec:
    """One task instance to start: its id, configs, initial target state and connector type.

    ``generation`` counts the instances started for this task (see :mod:`~connect_magics.runtime.worker.fencing`);
    ``fenced`` makes the instance commit through a :class:`TaskFence`, so that a newer one refuses its commits.
    """

    task_id: TaskId
    connector_config: dict[str, str]
    task_config: dict[str, str]
    target_state: TargetState
    connector_type: str
    generation: int = 0
    fenced: bool = False

    def with_generation(self, generation: int, target_state: TargetState | None = None) -> TaskSpec:
        return TaskSpec(self.task_id, self.connector_config, self.task_config, target_state or self.target_state,
                        self.connector_type, generation, self.fenced)


def connector_desc(services: TaskServices, config: dict[str, str]) -> PluginDesc:
    """KIP-891: the connector plugin in the version ``connector.plugin.version`` selects (newest if unset)."""
    return services.plugins.find(config[CONNECTOR_CLASS], ("source", "sink"), config.get(CONNECTOR_VERSION))


def build_runner(spec: TaskSpec, services: TaskServices, offset_stores: list[OffsetStore] | None = None,
                 fallback_task_class: type | None = None,
                 clients: Reservation | None = None) -> tuple[TaskRunner, TaskPlugins]:
    """The runner of ``spec`` and the plugins it was built with; raises what loading them raised.

    ``offset_stores`` (sources only) are the worker's store, then the connector's own if it has one;
    ``fallback_task_class`` is the task class when ``task.class`` cannot be loaded by name (a class defined
    in a notebook), by default what a new instance of the connector names. ``clients``: the Kafka clients
    promised to the instance (runtime/worker/capacity.py), taken off as it builds them and given back when it ends.
    """
    config, wc = spec.connector_config, services.worker_config
    task_config = spec.task_config
    if wc.config_transformer is not None:  # config providers: resolved at every start, never stored
        config, task_config = wc.config_transformer.transform(config), wc.config_transformer.transform(task_config)
    desc = connector_desc(services, config)
    # KIP-891: the task class comes from the installation of the connector version selected now.
    task_cls = services.plugins.load_class(desc, task_config.get("task.class", "")) \
        or fallback_task_class or desc.cls().task_class()
    task = task_cls()
    version = _version(task)
    converters = {key: resolve_converter(services.plugins, config, wc, key, is_key, desc)
                  for key, is_key in CONVERTER_KEYS}
    chain = build_transformation_chain(services.plugins, config)
    policy = wc["connector.client.config.override.policy"]
    # murmur2: keyed records go to the partitions Kafka Connect's Java producer picks
    producer_config = {"partitioner": "murmur2_random", **wc.client_config("producer"), "enable.idempotence": True,
                       "acks": "all", **client_overrides(config, "producer", policy)}
    common: dict[str, Any] = dict(
        task_id=spec.task_id, task=task, task_config=task_config, connector_config=config, services=services,
        target_state=spec.target_state, key_converter=converters["key.converter"][1],
        value_converter=converters["value.converter"][1], header_converter=converters["header.converter"][1],
        chain=chain, version=version, producer_config=producer_config,
        admin_config={**wc.client_config("admin"), **client_overrides(config, "admin", policy)})
    owner = TaskOwnership(services.control, spec.task_id, spec.generation, spec.target_state.value) \
        if services.control is not None and spec.generation else None
    if desc.type == "source" and exactly_once_enabled(wc):  # KIP-618: records and offsets in one transaction
        stores = offset_stores or []
        fence = TaskFence(wc["group.id"], spec.task_id, stores[-1].client_config, producer_config=producer_config,
                          owner=owner)
        runner: TaskRunner = ExactlyOnceSourceTaskRunner(
            **common, offset_stores=stores, fence=fence,
            boundary=TransactionBoundary.of(config, wc.int("offset.flush.interval.ms")))
    elif desc.type == "source":
        stores = offset_stores or []
        fence = TaskFence(wc["group.id"], spec.task_id, stores[-1].client_config, owner=owner) \
            if spec.fenced else None
        runner = SourceTaskRunner(**common, offset_stores=stores, fence=fence)
    else:  # a sink's producer and admin client serve its dead letter queue
        consumer_config = {**wc.client_config("consumer"), **client_overrides(config, "consumer", policy)}
        fence = TaskFence(wc["group.id"], spec.task_id, consumer_config, owner=owner) if spec.fenced else None
        runner = SinkTaskRunner(**common, consumer_config=consumer_config, fence=fence)
    runner.clients = clients
    if fence is not None:
        fence.reservation = clients
    plugins = TaskPlugins(desc, python_name(task_cls), version, {k: d for k, (d, _) in converters.items()},
                          {s.alias: s.transform_desc for s in chain.stages},
                          {a: d for a, (d, _) in chain.predicates.items()})
    return runner, plugins


def _version(obj: Any) -> str | None:
    try:
        return str(obj.version())
    except Exception:  # noqa: BLE001
        return None
