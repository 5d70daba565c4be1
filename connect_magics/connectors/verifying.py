"""A sink for tests: it keeps every record it is given in a process-wide, thread-safe registry.

:func:`received` lists what the tasks of a connector were given through ``put``, :func:`flushed` what of
that was flushed since (what a real sink would have made durable), :func:`clear` forgets. The task can
also be made slow (``put.delay.ms``) or fail on purpose (``fail.on.put.after``).

Example::

    >>> task = VerifyingSinkTask()
    >>> task.start({"name": "doc-example"})
    >>> task.put([SinkRecord("t", 0, value="a", kafka_offset=0)])
    >>> [r.value for r in received("doc-example")], flushed("doc-example")
    (['a'], [])
    >>> task.flush({TopicPartition("t", 0): 1})
    >>> [r.value for r in flushed("doc-example")]
    ['a']
    >>> clear("doc-example")
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from connect_magics.api.config import ConfigDef, ConfigException, Importance, Type
from connect_magics.api.connector import SinkConnector, SinkTask, Task
from connect_magics.api.errors import ConnectException
from connect_magics.api.records import SinkRecord, TopicPartition
from connect_magics.connectors.file import _at_least, _non_empty, _plugin_version

__all__ = ["VerifyingSinkConnector", "VerifyingSinkTask", "clear", "flushed", "received"]

NAME_CONFIG = "verifying.name"
FAIL_AFTER_CONFIG = "fail.on.put.after"
PUT_DELAY_CONFIG = "put.delay.ms"

_lock = threading.Lock()
_received: dict[str, list[SinkRecord]] = {}
_flushed: dict[str, list[SinkRecord]] = {}


def received(connector_name: str) -> list[SinkRecord]:
    """A copy of the records the connector's tasks were given, in the order ``put`` got them."""
    with _lock:
        return list(_received.get(connector_name, ()))


def flushed(connector_name: str) -> list[SinkRecord]:
    """A copy of the records that were flushed (given to ``put`` before a later ``flush``)."""
    with _lock:
        return list(_flushed.get(connector_name, ()))


def clear(connector_name: str | None = None) -> None:
    """Forget what the connector received and flushed (everything, if no name is given)."""
    with _lock:
        if connector_name is None:
            _received.clear()
            _flushed.clear()
        else:
            _received.pop(connector_name, None)
            _flushed.pop(connector_name, None)


def _optional_at_least_zero(name: str, value: Any) -> None:
    if value is not None and value < 0:
        raise ConfigException(name, value, "Value must be at least 0")


def _config_def() -> ConfigDef:
    return (
        ConfigDef()
        .define(NAME_CONFIG, Type.STRING, None, _non_empty, Importance.HIGH,
                "The name the records are registered under; defaults to the connector's 'name'")
        .define(FAIL_AFTER_CONFIG, Type.LONG, None, _optional_at_least_zero, Importance.LOW,
                "Fail each task with a ConnectException once it has been given this many records "
                "(the records beyond are not kept); not set: never fail")
        .define(PUT_DELAY_CONFIG, Type.LONG, 0, _at_least(0), Importance.LOW,
                "How long each put() with records takes, in milliseconds (a slow sink)")
    )


def _registry_name(props: Mapping[str, Any], parsed: Mapping[str, Any]) -> str:
    name = parsed[NAME_CONFIG] or (props.get("name") or "").strip()
    if not name:
        raise ConfigException(NAME_CONFIG, None, "Set 'verifying.name' or the connector's 'name'")
    return name


class VerifyingSinkConnector(SinkConnector):
    """Records what its tasks receive, under ``verifying.name`` (default: the connector's ``name``).

    Configs: ``verifying.name``, ``fail.on.put.after`` (records per task before failing; unset: never),
    ``put.delay.ms`` (0). Read the results with :func:`received` / :func:`flushed`, also available as
    ``VerifyingSinkConnector.received(name)`` etc.

    Example::

        >>> c = VerifyingSinkConnector()
        >>> c.start({"name": "sink-1", "topics": "t"})
        >>> c.task_configs(2)[1]["verifying.name"]
        'sink-1'
    """

    ALIASES: tuple[str, ...] = ()

    received = staticmethod(received)
    flushed = staticmethod(flushed)
    clear = staticmethod(clear)

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return _plugin_version()

    def config_def(self) -> ConfigDef:
        return _config_def()

    def start(self, props: dict[str, str]) -> None:
        name = _registry_name(props, _config_def().parse(props))
        self._props = {**props, NAME_CONFIG: name}

    def task_class(self) -> type[Task]:
        return VerifyingSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props) for _ in range(max_tasks)]

    def stop(self) -> None:
        """Nothing to do; the registry outlives the connector so tests can inspect it."""

    def alter_offsets(self, connector_config: dict[str, str],
                      offsets: dict[TopicPartition, int | None]) -> bool:
        return True


class VerifyingSinkTask(SinkTask):
    """Appends every record given to :meth:`put` to :func:`received`, and moves them to :func:`flushed` on flush.

    Records of partitions taken away (:meth:`close`) or still unflushed at :meth:`stop` never count as flushed.

    Example::

        task = VerifyingSinkTask()
        task.start({"name": "c", "fail.on.put.after": "2"})
        task.put(three_records)   # keeps the first two, then raises ConnectException
    """

    def __init__(self) -> None:
        self.name = ""
        self.fail_after: int | None = None
        self.delay_s = 0.0
        self.count = 0
        self._pending: list[SinkRecord] = []
        self._stopping = threading.Event()

    def version(self) -> str:
        return _plugin_version()

    def start(self, props: dict[str, str]) -> None:
        parsed = _config_def().parse(props)
        self.name = _registry_name(props, parsed)
        self.fail_after = parsed[FAIL_AFTER_CONFIG]
        self.delay_s = parsed[PUT_DELAY_CONFIG] / 1000.0
        self.count = 0
        self._pending = []
        self._stopping.clear()

    def put(self, records: list[SinkRecord]) -> None:
        if not records:
            return
        if self.delay_s > 0:
            self._stopping.wait(self.delay_s)
        accepted = list(records)
        if self.fail_after is not None:
            accepted = accepted[:max(0, self.fail_after - self.count)]
        with _lock:
            _received.setdefault(self.name, []).extend(accepted)
        self._pending.extend(accepted)
        self.count += len(accepted)
        if len(accepted) < len(records):
            raise ConnectException(
                f"VerifyingSinkTask of '{self.name}' failing on purpose: {FAIL_AFTER_CONFIG}={self.fail_after} "
                "records were put")

    def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
        pending, self._pending = self._pending, []
        with _lock:
            _flushed.setdefault(self.name, []).extend(pending)

    def close(self, partitions: list[TopicPartition]) -> None:
        gone = {(tp.topic, tp.partition) for tp in partitions}
        self._pending = [r for r in self._pending
                         if (r.original_topic, r.original_kafka_partition) not in gone]

    def stop(self) -> None:
        self._stopping.set()
        self._pending = []
