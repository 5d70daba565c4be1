"""The offsets topic of source connectors (``KafkaOffsetBackingStore`` + ``OffsetUtils``).

Keys are the JSON array ``[connector, partition]``, values the offset map (null = tombstone),
both compact JSON as Kafka Connect's internal converter writes them.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from confluent_kafka import Message, Producer

from connect_magics.storage.config_store import dumps
from connect_magics.storage.kafka_log import BadRecord, KafkaLog, json_object

log = logging.getLogger(__name__)

Partition = dict[str, Any]
Offset = dict[str, Any] | None


_SCALARS = frozenset({str, int, float, bool, type(None)})
_flat = _SCALARS.issuperset


def freeze(value: Any) -> Any:
    """A hashable, order-insensitive form of a JSON partition map (for dict keys)."""
    if isinstance(value, dict):
        if _flat(map(type, value.values())):  # fast path: a flat map
            return tuple(sorted(value.items()))
        return tuple(sorted((k, freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(freeze(v) for v in value)
    return value


_scan = json.JSONDecoder().scan_once  # the C scanner behind json.loads, without its per-call Python steps


def loads(raw: bytes) -> Any:
    """``json.loads`` of a record's key or value; a third of its cost for the compact UTF-8 JSON that Kafka
    Connect writes (anything else, e.g. with whitespace around or another encoding, goes to json.loads)."""
    try:
        text = raw.decode()
        value, end = _scan(text, 0)
    except (UnicodeDecodeError, StopIteration):
        return json.loads(raw)
    return value if end == len(text) else json.loads(raw)


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
            kind = ("MAP" if isinstance(value, dict) else "ARRAY" if isinstance(value, (list, tuple))
                    else f"class {type(value).__name__}")  # Kafka names the Connect schema type
            raise ValueError(f"Offsets may only contain primitive types as values, but field {key} contains {kind}")


def offset_key(connector: str, partition: Partition) -> bytes:
    return dumps([connector, partition])


class OffsetStore:
    """One offsets topic: every connector's partitions and latest offsets, kept in memory."""

    def __init__(self, topic: str, client_config: dict[str, str]) -> None:
        self.topic = topic
        self.client_config = dict(client_config)
        # connector -> frozen partition -> (partition, offset)
        self._data: dict[str, dict[Any, tuple[Partition, dict[str, Any]]]] = {}
        # connector -> frozen partition -> the record key last read for it (writes reuse these exact bytes)
        self._keys: dict[str, dict[Any, bytes]] = {}
        # (key, value) bytes this store wrote -> what they decode to, so that reading them back skips the JSON
        # parsing (the bulk of reading back a large alter or reset); bounded, entries leave when read back.
        self._written: dict[tuple[bytes, bytes | None], tuple[str, Partition, Any, Offset]] = {}
        self._lock = threading.Lock()
        self.log = KafkaLog(topic, client_config, self._apply, on_batch=self._apply_batch)

    def start(self, timeout: float = 30.0) -> None:
        self.log.start(timeout)

    def stop(self) -> None:
        self.log.stop()

    def _apply(self, key: bytes | None, value: bytes | None, _p: int, _o: int) -> None:
        """One record read (see :meth:`_apply_batch`)."""
        decoded = self._decode(key, value)
        if decoded is not None:
            self._store([decoded])

    def _apply_batch(self, msgs: list[Message]) -> None:
        """A batch of records read: decoded (records this store wrote are known already), then applied at once."""
        decode = self._decode
        updates = []
        for m in msgs:
            try:
                decoded = decode(m.key(), m.value())
            except BadRecord as e:
                log.warning("Skipping the record of %s at %s/%s with key %r: %s", self.topic, m.partition(),
                            m.offset(), m.key(), e)
                continue
            except Exception:  # noqa: BLE001 - a bad record must never stop the reader
                log.exception("Skipping a record of %s at %s/%s that could not be processed", self.topic,
                              m.partition(), m.offset())
                continue
            if decoded is not None:
                updates.append(decoded)
        self._store(updates)

    def _decode(self, key: bytes | None, value: bytes | None) -> tuple[str, Partition, Any, Offset, bytes] | None:
        """``(connector, partition, frozen partition, offset or None for a tombstone, key)`` of a record, None
        for one that is not an offset record."""
        written = self._written.pop((key, value), None) if self._written else None
        if written is not None:
            return (*written, key)
        try:
            parsed = loads(key) if key is not None else None
        except ValueError:
            parsed = None
        if not (isinstance(parsed, list) and len(parsed) == 2 and isinstance(parsed[0], str)):
            log.warning("Ignoring offsets record with a key that is not [connector, partition]: %r", key)
            return None
        connector, partition = parsed
        if partition is None:
            return None
        if not isinstance(partition, dict):
            log.warning("Ignoring offsets record of %s whose partition is not a map: %r", connector, partition)
            return None
        return connector, partition, freeze(partition), json_object(value, "an offset object", loads), key

    def _store(self, updates: list[tuple[str, Partition, Any, Offset, bytes]]) -> None:
        """Apply decoded records in order (a None offset is a tombstone: the partition is forgotten)."""
        with self._lock:
            data, all_keys = self._data, self._keys
            last = None
            for connector, partition, frozen, offset, key in updates:
                if connector != last:
                    parts = data.setdefault(connector, {})
                    keys = all_keys.setdefault(connector, {})
                    last = connector
                if offset is None:
                    parts.pop(frozen, None)
                    keys.pop(frozen, None)
                else:
                    parts[frozen] = (partition, offset)
                    keys[frozen] = key

    def read_to_end(self, timeout: float = 30.0, past_open_transactions: bool = False) -> None:
        """Read the topic to its end (see :meth:`KafkaLog.read_to_end`: a task about to read its offsets reads
        ``past_open_transactions``)."""
        self.log.read_to_end(timeout, past_open_transactions)

    def offsets(self, connector: str) -> list[tuple[Partition, dict[str, Any]]]:
        """Every known partition of ``connector`` with its latest offset."""
        with self._lock:
            return list(self._data.get(connector, {}).values())

    def entries(self, connector: str) -> dict[Any, tuple[Partition, dict[str, Any]]]:
        """A copy of ``connector``'s partitions: :func:`freeze` of the partition -> (partition, offset)."""
        with self._lock:
            return dict(self._data.get(connector, {}))

    def get(self, connector: str, partitions: Iterable[Partition]) -> dict[Any, dict[str, Any]]:
        """Offsets of the given partitions keyed by :func:`freeze` of the partition."""
        with self._lock:
            parts = self._data.get(connector, {})
            return {freeze(p): parts[freeze(p)][1] for p in partitions if freeze(p) in parts}

    def write(self, connector: str, offsets: Iterable[tuple[Partition, Offset]],
              callback: Callable[[BaseException | None], None] | None = None, producer: Producer | None = None,
              keys: Sequence[Any] | None = None, bulk: bool = False) -> int:
        """Write offsets asynchronously; ``callback`` runs once, after the last acknowledgement. ``producer``
        replaces the store's own (a task fence's transactional producer). ``keys`` are the partitions'
        :func:`freeze` when the caller has them already (same order). ``bulk``: one large write that returns
        only once acknowledged (:meth:`KafkaLog.write_bulk`), ``callback`` called before returning."""
        with self._lock:
            known = self._keys.get(connector)
            known = dict(known) if known else {}
        if bulk and producer is not None:
            raise ValueError("A bulk write uses the store's own bulk producer, not a given one")
        if len(self._written) > 1_000_000:  # records that were never read back (failed writes)
            self._written.clear()
        items = offsets if keys is not None else [(p, o) for p, o in offsets]
        frozen_keys = keys if keys is not None else [freeze(p) for p, _ in items]
        records = self._records(connector, known, frozen_keys, items)
        done = callback or (lambda _err: None)
        if not bulk:
            return self.log.send_all(list(records), done, producer)
        try:
            count = self.log.write_bulk(records)  # produced as they are made: the broker works meanwhile
        except Exception as e:  # noqa: BLE001 - handed to the callback, as asynchronous failures are
            done(e)
            return 0
        done(None)
        return count

    def transaction_committed(self, producer: Producer) -> None:
        """Offsets :meth:`write` wrote through ``producer`` committed (see :meth:`KafkaLog.transaction_committed`):
        a next instance of the task that reads them right away must find them."""
        self.log.transaction_committed(producer)

    def _records(self, connector: str, known: dict[Any, bytes], frozen_keys: Iterable[Any],
                 items: Iterable[tuple[Partition, Offset]]) -> Iterator[tuple[bytes, bytes | None]]:
        """The records of ``items``, each noted in :attr:`_written` so that reading it back skips the JSON."""
        prefix = b"[" + dumps(connector) + b","
        written = self._written
        for frozen, (partition, offset) in zip(frozen_keys, items, strict=True):
            # The exact key bytes of a known partition, so that the new record replaces it under compaction
            # even if this partition map lists its fields in another order.
            key = known.get(frozen) or prefix + dumps(partition) + b"]"
            if offset is None:
                written[(key, None)] = (connector, partition, frozen, None)
                yield key, None
            else:
                value = dumps(offset)
                written[(key, value)] = (connector, dict(partition), frozen, dict(offset))
                yield key, value


def write_offsets(stores: list[OffsetStore], connector: str, offsets: Iterable[tuple[Partition, Offset]],
                  callback: Callable[[BaseException | None], None], timeout: float = 30.0,
                  producer: Producer | None = None, keys: Sequence[Any] | None = None, bulk: bool = False) -> None:
    """Write through ``stores`` = [worker store, connector store (primary) if any] as Kafka's
    ``ConnectorOffsetBackingStore.set`` does: with a secondary (worker) store and tombstones, everything
    goes to the secondary first (waiting up to ``timeout``; a failure fails the write), then to the
    primary; without tombstones, to the primary, then copied best-effort to the secondary.

    ``callback(error_or_None)`` runs once the primary answered. ``producer`` writes to the primary instead of
    its own (a task fence's transactional producer). ``keys`` and ``bulk`` are passed to :meth:`OffsetStore.write`.

    >>> write_offsets([worker_store], "c", [({"f": "a"}, {"pos": 1})], print)  # doctest: +SKIP
    None
    """
    items = list(offsets)
    primary, secondary = stores[-1], (stores[0] if len(stores) > 1 else None)
    tombstones = any(offset is None for _, offset in items)
    if secondary is not None and tombstones:
        done = threading.Event()
        errors: list[BaseException] = []

        def secondary_written(err: BaseException | None) -> None:
            if err is not None:
                errors.append(err)
            done.set()

        secondary.write(connector, items, secondary_written, keys=keys, bulk=bulk)
        if not done.wait(timeout):
            errors.append(TimeoutError(f"Timed out writing offset tombstones to {secondary.topic}"))
        if errors:
            log.error("Failed to write offset tombstones of %s to the secondary store %s: %s", connector,
                      secondary.topic, errors[0])
            callback(errors[0])
            return

    def primary_written(err: BaseException | None) -> None:
        if secondary is not None and not tombstones and err is None:
            def copied(copy_err: BaseException | None) -> None:
                if copy_err is not None:
                    log.warning("Failed to copy offsets of %s to the secondary store %s: %s", connector,
                                secondary.topic, copy_err)
            secondary.write(connector, items, copied, keys=keys)
        callback(err)

    primary.write(connector, items, primary_written, producer, keys=keys, bulk=bulk)
