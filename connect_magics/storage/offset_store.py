"""The offsets topic of source connectors (``KafkaOffsetBackingStore`` + ``OffsetUtils``).

Keys are the JSON array ``[connector, partition]``, values the offset map (null = tombstone),
both compact JSON as Kafka Connect's internal converter writes them.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any

from connect_magics.storage.config_store import dumps
from connect_magics.storage.kafka_log import KafkaLog

log = logging.getLogger(__name__)

Partition = dict[str, Any]
Offset = dict[str, Any] | None


def freeze(value: Any) -> Any:
    """A hashable, order-insensitive form of a JSON partition map (for dict keys)."""
    if isinstance(value, dict):
        return tuple(sorted((k, freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(freeze(v) for v in value)
    return value


def validate_format(what: Any) -> None:
    """Kafka's ``OffsetUtils.validateFormat`` for a partition or offset map."""
    if what is None:
        return
    if not isinstance(what, dict):
        raise ValueError("Offsets must be specified as a Map")
    for key, value in what.items():
        if not isinstance(key, str):
            raise ValueError("Offsets may only use String keys")
        if value is not None and not isinstance(value, (str, int, float, bool, bytes)):
            raise ValueError("Offsets may only contain primitive types as values, but field "
                             f"{key} contains {type(value).__name__}")


def offset_key(connector: str, partition: Partition) -> bytes:
    return dumps([connector, partition])


class OffsetStore:
    """One offsets topic: every connector's partitions and latest offsets, kept in memory."""

    def __init__(self, topic: str, client_config: dict[str, str]) -> None:
        self.topic = topic
        # connector -> frozen partition -> (partition, offset)
        self._data: dict[str, dict[Any, tuple[Partition, dict[str, Any]]]] = {}
        self._lock = threading.Lock()
        self.log = KafkaLog(topic, client_config, self._apply)

    def start(self, timeout: float = 30.0) -> None:
        self.log.start(timeout)

    def stop(self) -> None:
        self.log.stop()

    def _apply(self, key: bytes | None, value: bytes | None, _p: int, _o: int) -> None:
        try:
            parsed = json.loads(key) if key is not None else None
        except ValueError:
            parsed = None
        if not (isinstance(parsed, list) and len(parsed) == 2 and isinstance(parsed[0], str)):
            log.warning("Ignoring offsets record with a key that is not [connector, partition]: %r", key)
            return
        connector, partition = parsed
        if partition is None:
            return
        if not isinstance(partition, dict):
            log.warning("Ignoring offsets record of %s whose partition is not a map: %r", connector, partition)
            return
        with self._lock:
            parts = self._data.setdefault(connector, {})
            if value is None:
                parts.pop(freeze(partition), None)
            else:
                parts[freeze(partition)] = (partition, json.loads(value))

    def read_to_end(self, timeout: float = 30.0) -> None:
        self.log.read_to_end(timeout)

    def offsets(self, connector: str) -> list[tuple[Partition, dict[str, Any]]]:
        """Every known partition of ``connector`` with its latest offset."""
        with self._lock:
            return list(self._data.get(connector, {}).values())

    def get(self, connector: str, partitions: Iterable[Partition]) -> dict[Any, dict[str, Any]]:
        """Offsets of the given partitions keyed by :func:`freeze` of the partition."""
        with self._lock:
            parts = self._data.get(connector, {})
            return {freeze(p): parts[freeze(p)][1] for p in partitions if freeze(p) in parts}

    def write(self, connector: str, offsets: Iterable[tuple[Partition, Offset]],
              callback: Callable[[BaseException | None], None] | None = None) -> int:
        """Write offsets asynchronously; ``callback`` runs once, after the last acknowledgement."""
        items = list(offsets)
        pending = [len(items)]
        first_error: list[BaseException | None] = [None]
        lock = threading.Lock()

        def done(err: BaseException | None) -> None:
            with lock:
                pending[0] -= 1
                first_error[0] = first_error[0] or err
                last = pending[0] == 0
            if last and callback is not None:
                callback(first_error[0])

        if not items and callback is not None:
            callback(None)
        for partition, offset in items:
            self.log.send(offset_key(connector, partition), None if offset is None else dumps(offset),
                          callback=done)
        return len(items)
