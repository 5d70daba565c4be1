"""KIP-875: read, alter and reset the offsets of source and sink connectors, as Kafka Connect does.

Source connectors keep their offsets in the worker's offsets topic and, when they have one, in their
own offsets store (``offsets.storage.topic``, or the worker's topic name on the connector's own Kafka
cluster when its producer writes to another cluster); reads merge both, the connector's store winning.
Sink connectors' offsets are the committed offsets of their consumer group (``connect-{name}``, or
``consumer.override.group.id``), on the cluster their admin (or consumer) overrides point at.

Alter and reset need the connector STOPPED with an empty set of tasks; the connector's
``alter_offsets`` hook runs first and decides between the two success messages. Every message is the
one Apache Kafka Connect answers (see docs/offsets.md for the few deliberate differences).

>>> rt.stop_connector("lines")  # doctest: +SKIP
>>> rt.alter_offsets("lines", {"offsets": [{"partition": {"filename": "/tmp/in.txt"},
...                                          "offset": {"position": 0}}]})  # doctest: +SKIP
{'message': 'The offsets for this connector have been altered successfully'}

Exactly-once source support can be added later: alter/reset would fence the connector's tasks and
write to the primary store in a transaction (``write_offsets`` is the single write path).
"""

from __future__ import annotations

import base64
import contextlib
import gc
import logging
import math
import re
import threading
from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from confluent_kafka import KafkaError
from confluent_kafka.admin import AdminClient

from connect_magics.api.connector import partition_key
from connect_magics.api.errors import ConnectException
from connect_magics.api.records import TopicPartition
from connect_magics.errors import BadRequestError, ConnectRestError, NotFoundError
from connect_magics.runtime.config.connector_config import CONNECTOR_CLASS, client_overrides
from connect_magics.runtime.config.worker_config import WorkerConfig
from connect_magics.runtime.config.worker_keys import CLIENT_KEYS_PREFIXES
from connect_magics.runtime.plugins.registry import PluginDesc, PluginNotFoundError
from connect_magics.runtime.worker.offset_stores import OFFSETS_TOPIC_CONFIG, REQUEST_TIMEOUT_S
from connect_magics.runtime.worker.sink_runner import sink_group_id
from connect_magics.storage.authorization import raise_access
from connect_magics.storage.client_logs import client_logger
from connect_magics.storage.config_store import TargetState
from connect_magics.storage.group_offsets import (
    GroupOffsetsError,
    alter_group_offsets,
    delete_group,
    delete_group_offsets,
    list_group_offsets,
)
from connect_magics.storage.offset_store import OffsetStore, validate_format, write_offsets

if TYPE_CHECKING:
    from connect_magics.runtime.herder import Herder

log = logging.getLogger(__name__)

__all__ = ["KAFKA_OFFSET_KEY", "KAFKA_PARTITION_KEY", "KAFKA_TOPIC_KEY", "OFFSETS_TOPIC_CONFIG",
           "alter_offsets", "get_offsets", "offsets_view", "reset_offsets", "success_message"]

KAFKA_TOPIC_KEY, KAFKA_PARTITION_KEY, KAFKA_OFFSET_KEY = "kafka_topic", "kafka_partition", "kafka_offset"

EMPTY_REQUEST = "Partitions / offsets need to be provided for an alter offsets request"
NOT_STOPPED = ("Connectors must be in the STOPPED state before their offsets can be modified. This can be done "
               "for the specified connector by issuing a 'PUT' request to the '/connectors/{c}/stop' endpoint")
UNSUPPORTED = ("Failed to modify offsets for connector {c} because it doesn't support external modification of "
               "offsets")
ZOMBIES = ("Failed to {verb} consumer group offsets for connector {c} either because its tasks haven't stopped "
           "completely yet or the connector was resumed before the request to {verb} its offsets could be "
           "successfully completed. If the connector is in a stopped state, this operation can be safely "
           "retried. If it doesn't eventually succeed, the Connect cluster may need to be restarted to get rid "
           "of the zombie sink tasks.")


def success_message(hook_result: bool, reset: bool) -> str:
    """Kafka's ``Worker.completeModifyOffsetsCallback`` messages.

    >>> success_message(True, reset=True)
    'The offsets for this connector have been reset successfully'
    """
    kind = "reset" if reset else "altered"
    if hook_result:
        return f"The offsets for this connector have been {kind} successfully"
    return (f"The Connect framework-managed offsets for this connector have been {kind} successfully. However, "
            f"if this connector manages offsets externally, they will need to be manually {kind} in the system "
            "that the connector uses.")


# -- the three operations ---------------------------------------------------------------------------------


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a request builds or reads back up to millions of small
    objects: with large offsets maps alive, its collections would take half of the time (reference counting
    still frees everything; no cycles are made here)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()



def get_offsets(herder: Herder, name: str) -> dict[str, list[dict[str, Any]]]:
    """``GET /connectors/{name}/offsets``: ``{"offsets": [{"partition": {...}, "offset": {...}}, ...]}``."""
    view, sink = offsets_view(herder, name)
    if sink:
        return view
    with _gc_paused():  # copies: the caller may edit the answer (e.g. into an alter request) without harm
        return {"offsets": [{"partition": dict(e["partition"]),
                             "offset": None if e["offset"] is None else dict(e["offset"])} for e in view["offsets"]]}


def offsets_view(herder: Herder, name: str) -> tuple[dict[str, list[dict[str, Any]]], bool]:
    """What :func:`get_offsets` answers, and whether the connector is a sink; a source connector's partition
    and offset maps are the stores' own (read them, never change them): for readers that copy anyway, such
    as a DataFrame of 100,000 partitions."""
    config = herder.configs.connector_config(name)
    if config is None:
        raise NotFoundError(f"Connector {name} not found")
    desc = _plugin_of(herder, config)
    if desc.type == "sink":
        group = sink_group_id(name, config)
        try:
            found = list_group_offsets(sink_admin_config(config, herder.wc), group, REQUEST_TIMEOUT_S)
        except GroupOffsetsError as e:
            _raise_group_access(e, sink_admin_config(config, herder.wc), "DESCRIBE", group, config,
                                f"Failed to retrieve consumer group offsets for sink connector {name}")
            raise ConnectRestError(f"Failed to retrieve consumer group offsets for sink connector {name}") from e
        return {"offsets": [{"partition": {KAFKA_TOPIC_KEY: t, KAFKA_PARTITION_KEY: p},
                             "offset": {KAFKA_OFFSET_KEY: o}} for (t, p), o in sorted(found.items())]}, True
    try:
        stores = _read_stores(herder, name)
    except Exception as e:
        raise _maybe_wrap(e, f"Failed to retrieve offsets for source connector {name}") from e
    with _gc_paused():
        return {"offsets": [{"partition": p, "offset": o} for p, o in _merged(stores, name).values()]}, False


def alter_offsets(herder: Herder, name: str, body: Any) -> dict[str, str]:
    """``PATCH /connectors/{name}/offsets``: change the given partitions only (a null offset resets one)."""
    with _gc_paused():
        plain = _plain_entries(body)
        entries = _parse_request(body) if plain is None else [(p, o) for _, p, o in plain]
    with herder.lock, _gc_paused():
        config, desc = _modifiable(herder, name)
        herder.fence_zombies(name)
        if desc.type == "sink":
            return _alter_sink(herder, name, config, desc, _parse_sink_offsets(entries))
        offsets = (_normalized_source_offsets(entries) if plain is None
                   else {key: (p, o) for key, p, o in plain})  # later entries for a partition win
        return _alter_source(herder, name, config, desc, offsets)


def reset_offsets(herder: Herder, name: str) -> dict[str, str]:
    """``DELETE /connectors/{name}/offsets``: forget every offset of the connector (idempotent)."""
    with herder.lock, _gc_paused():
        config, desc = _modifiable(herder, name)
        herder.fence_zombies(name)
        if desc.type == "sink":
            return _reset_sink(herder, name, config, desc)
        return _alter_source(herder, name, config, desc, None)


# -- checks and request parsing --------------------------------------------------------------------------


def _modifiable(herder: Herder, name: str) -> tuple[dict[str, str], PluginDesc]:
    """The config and plugin of a connector whose offsets may change: it exists (404), is STOPPED and has
    an empty set of task configs (400)."""
    config = herder.configs.connector_config(name)
    if config is None:
        raise NotFoundError(f"Connector {name} not found")
    if herder.configs.target_state(name) is not TargetState.STOPPED or herder.configs.task_configs(name):
        raise BadRequestError(NOT_STOPPED.format(c=name))
    return config, _plugin_of(herder, config)


def _plugin_of(herder: Herder, config: Mapping[str, str]) -> PluginDesc:
    try:
        return herder.plugins.find(config.get(CONNECTOR_CLASS, ""), ("source", "sink"))
    except PluginNotFoundError as e:
        raise ConnectRestError(str(e)) from e


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    return "object" if isinstance(value, Mapping) else type(value).__name__


_PLAIN_TYPES = frozenset({str, int, bool, type(None)})
_STR = frozenset({str})


def _plain_entries(body: Any) -> list[tuple[Any, dict[str, Any], dict[str, Any] | None]] | None:
    """``(partition_key, partition, offset)`` of every entry of an alter request in the common case, checked
    in one pass: a ``{"offsets": [...]}`` dict whose entries are dicts with a ``partition`` dict and an
    ``offset`` dict or null, all of string keys and string, integer, boolean or null values (nothing to
    normalize). None for anything else: :func:`_parse_request` and the normalization then give the exact
    error or result. What passes here passes those unchanged."""
    if type(body) is not dict or len(body) != 1:
        return None
    offsets = body.get("offsets")
    if type(offsets) is not list or not offsets:
        return None
    plain_values, str_keys = _PLAIN_TYPES.issuperset, _STR.issuperset  # checks of every key/value type in C
    out = []
    append = out.append
    for entry in offsets:
        if type(entry) is not dict:
            return None
        partition = entry.get("partition")
        offset = entry.get("offset")
        size = len(entry)
        if type(partition) is not dict or not (size == 1 or (size == 2 and "offset" in entry)) \
                or not (str_keys(map(type, partition)) and plain_values(map(type, partition.values()))):
            return None
        if offset is not None and (type(offset) is not dict or not (
                str_keys(map(type, offset)) and plain_values(map(type, offset.values())))):
            return None
        append((tuple(sorted(partition.items())), partition, offset))  # partition_key() of a flat map
    return out


def _parse_request(body: Any) -> list[tuple[dict[str, Any] | None, dict[str, Any] | None]]:
    """The ``(partition, offset)`` entries of an alter request, checked as Jackson would bind them
    (a wrong shape is a 500, as in Kafka) and then for emptiness (400)."""
    if body is None:
        raise BadRequestError(EMPTY_REQUEST)
    if not isinstance(body, Mapping):
        raise ConnectRestError("Cannot deserialize the alter offsets request: expected a JSON object "
                               f'{{"offsets": [...]}}, but got {_json_type(body)}')
    for key in body:
        if key != "offsets":
            raise ConnectRestError(f'Unrecognized field "{key}" in the alter offsets request: only "offsets" '
                                   "is allowed")
    offsets = body.get("offsets")
    if offsets is not None and not isinstance(offsets, (list, tuple)):
        raise ConnectRestError('Cannot deserialize value of "offsets": expected a list of {"partition": ..., '
                               f'"offset": ...}} objects, but got {_json_type(offsets)}')
    if not offsets:
        raise BadRequestError(EMPTY_REQUEST)
    entries = []
    allowed = {"partition", "offset"}
    for i, entry in enumerate(offsets):
        if not isinstance(entry, dict) and not isinstance(entry, Mapping):
            raise ConnectRestError(f'Cannot deserialize offsets[{i}]: expected an object with "partition" and '
                                   f'"offset", but got {_json_type(entry)}')
        if not entry.keys() <= allowed:
            key = next(k for k in entry if k not in allowed)
            raise ConnectRestError(f'Unrecognized field "{key}" in offsets[{i}]: only "partition" and '
                                   '"offset" are allowed')
        partition, offset = entry.get("partition"), entry.get("offset")
        for key, value in (("partition", partition), ("offset", offset)):
            if value is not None and not isinstance(value, dict):
                if not isinstance(value, Mapping):
                    raise ConnectRestError(f"Cannot deserialize offsets[{i}].{key}: expected a JSON object or "
                                           f"null, but got {_json_type(value)}")
        entries.append((partition if partition is None or isinstance(partition, dict) else dict(partition),
                        offset if offset is None or isinstance(offset, dict) else dict(offset)))
    return entries


# -- sink connectors ---------------------------------------------------------------------------------------

_INTEGER = re.compile(r"[+-]?[0-9]+")


def _java_string(value: Any) -> str:
    """``String.valueOf`` of a JSON value as Jackson binds it (for messages and Kafka's lenient parsing)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if not math.isfinite(value):
            return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        if value == 0 or 1e-3 <= abs(value) < 1e7:
            return repr(value)
        number = Decimal(repr(value))  # the shortest digits, as Java prints them: 1.0E20, 1.5E-5
        digits = "".join(map(str, number.as_tuple().digits)).rstrip("0") or "0"
        return f"{'-' if value < 0 else ''}{digits[0]}.{digits[1:] or '0'}E{number.adjusted()}"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}={_java_string(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_java_string(v) for v in value) + "]"
    return str(value)


def _java_integer(value: Any, bits: int) -> int | None:
    """Java's ``Integer/Long.parseLong(String.valueOf(value))``: 10 and "10" are accepted, 10.0 is not."""
    text = _java_string(value)
    if not _INTEGER.fullmatch(text):
        return None
    number = int(text)
    return number if -(1 << (bits - 1)) <= number < (1 << (bits - 1)) else None


def _parse_sink_offsets(entries: list[tuple[dict | None, dict | None]]) -> dict[tuple[str, int], int | None]:
    """Kafka's ``SinkUtils.parseSinkConnectorOffsets`` (same 400 messages), plus a 400 for negative values."""
    parsed: dict[tuple[str, int], int | None] = {}
    for partition, offset in entries:
        if partition is None:
            raise BadRequestError("The partition for a sink connector offset cannot be null or missing")
        if KAFKA_TOPIC_KEY not in partition or KAFKA_PARTITION_KEY not in partition:
            raise BadRequestError(f"The partition for a sink connector offset must contain the keys "
                                  f"'{KAFKA_TOPIC_KEY}' and '{KAFKA_PARTITION_KEY}'")
        topic = partition[KAFKA_TOPIC_KEY]
        if topic is None or isinstance(topic, (Mapping, list, tuple)):
            raise BadRequestError("Kafka topic names must be valid strings and may not be null")
        raw_partition = partition[KAFKA_PARTITION_KEY]
        if raw_partition is None:
            raise BadRequestError("Kafka partitions must be valid numbers and may not be null")
        number = _java_integer(raw_partition, 32)
        if number is None:
            raise BadRequestError("Failed to parse the following Kafka partition value in the provided offsets: "
                                  f"'{_java_string(raw_partition)}'. Partition values for sink connectors need "
                                  "to be integers.")
        if number < 0:
            raise BadRequestError(f"Kafka partitions must be non-negative, but got {number} for topic "
                                  f"'{_java_string(topic)}'")
        tp = (_java_string(topic), number)
        if offset is None:
            parsed[tp] = None
            continue
        if KAFKA_OFFSET_KEY not in offset:
            raise BadRequestError("The offset for a sink connector should either be null or contain the key "
                                  f"'{KAFKA_OFFSET_KEY}'")
        raw_offset = offset[KAFKA_OFFSET_KEY]
        value = _java_integer(raw_offset, 64)
        if value is None:
            raise BadRequestError("Failed to parse the following Kafka offset value in the provided offsets: "
                                  f"'{_java_string(raw_offset)}'. Offset values for sink connectors need to be "
                                  "integers.")
        if value < 0:
            raise BadRequestError(f"Kafka offsets must be non-negative, but got {value} for partition "
                                  f"{tp[1]} of topic '{tp[0]}'")
        parsed[tp] = value
    return parsed


def sink_admin_config(config: Mapping[str, str], wc: WorkerConfig) -> dict[str, str]:
    """The admin client of a sink connector's consumer group: the worker's admin settings and the connector's
    ``admin.override.*``; with no admin bootstrap override, the cluster its consumer overrides point at."""
    policy = wc["connector.client.config.override.policy"]
    admin = client_overrides(config, "admin", policy)
    consumer = client_overrides(config, "consumer", policy)
    out = wc.client_config("admin")
    if "bootstrap.servers" not in admin and "bootstrap.servers" in consumer:
        out.update({k: v for k, v in consumer.items() if k.startswith(CLIENT_KEYS_PREFIXES)})
    out.update(admin)
    return out


def _raise_group_access(error: GroupOffsetsError, admin_config: Mapping[str, Any], operation: str, group: str,
                        config: Mapping[str, str], context: str, topics: list[str] | None = None) -> None:
    """Raise a group request's authorization failure naming the principal, the operation and the group (or the
    topic: the request also needs READ on the sink's topics)."""
    topic = ", ".join(topics) if topics else (config.get("topics") or config.get("topics.regex") or "")
    raise_access(KafkaError(error.code, str(error)), admin_config, context, group=(operation, group),
                 topic=("READ" if operation != "DESCRIBE" else "DESCRIBE", topic))


def _alter_sink(herder: Herder, name: str, config: dict[str, str], desc: PluginDesc,
                offsets: dict[tuple[str, int], int | None]) -> dict[str, str]:
    group = sink_group_id(name, config)
    try:
        hook_result = _call_hook(name, desc, config, {TopicPartition(t, p): o for (t, p), o in offsets.items()})
        admin_config = sink_admin_config(config, herder.wc)
        admin = AdminClient({**admin_config, "logger": client_logger("admin")})
    except Exception as e:
        raise _maybe_wrap(e, f"Failed to modify offsets for sink connector {name}") from e
    operation = "READ"  # OffsetCommit needs READ on the group, OffsetDelete DELETE; both READ on the topics
    try:
        alter_group_offsets(admin, group, {tp: o for tp, o in offsets.items() if o is not None}, REQUEST_TIMEOUT_S)
        operation = "DELETE"
        try:
            delete_group_offsets(admin_config, group, [tp for tp, o in offsets.items() if o is None],
                                 REQUEST_TIMEOUT_S)
        except GroupOffsetsError as e:
            if e.code != KafkaError.GROUP_ID_NOT_FOUND:  # no group: nothing to delete
                raise
    except GroupOffsetsError as e:
        if e.code in (KafkaError.UNKNOWN_MEMBER_ID, KafkaError.GROUP_SUBSCRIBED_TO_TOPIC):
            raise ConnectRestError(ZOMBIES.format(verb="alter", c=name)) from e
        _raise_group_access(e, admin_config, operation, group, config,
                            f"Failed to alter consumer group offsets for connector {name}", sorted({t for t, _ in offsets}))
        raise ConnectRestError(f"Failed to alter consumer group offsets for connector {name}") from e
    return {"message": success_message(hook_result, reset=False)}


def _reset_sink(herder: Herder, name: str, config: dict[str, str], desc: PluginDesc) -> dict[str, str]:
    group = sink_group_id(name, config)
    try:
        admin_config = sink_admin_config(config, herder.wc)
        admin = AdminClient({**admin_config, "logger": client_logger("admin")})
    except Exception as e:
        raise _maybe_wrap(e, f"Failed to modify offsets for sink connector {name}") from e
    try:
        known = list_group_offsets(admin_config, group, REQUEST_TIMEOUT_S)
    except GroupOffsetsError as e:
        _raise_group_access(e, admin_config, "DESCRIBE", group, config,
                            f"Failed to list offsets prior to resetting offsets for sink connector {name}")
        raise ConnectRestError(f"Failed to list offsets prior to resetting offsets for sink connector {name}") \
            from e
    try:
        hook_result = _call_hook(name, desc, config, {TopicPartition(t, p): None for t, p in known})
    except Exception as e:
        raise _maybe_wrap(e, f"Failed to modify offsets for sink connector {name}") from e
    try:
        delete_group(admin, group, REQUEST_TIMEOUT_S)  # an unknown group is fine: reset is idempotent
    except GroupOffsetsError as e:
        if e.code == KafkaError.NON_EMPTY_GROUP:
            raise ConnectRestError(ZOMBIES.format(verb="reset", c=name)) from e
        _raise_group_access(e, admin_config, "DELETE", group, config,
                            f"Failed to reset consumer group offsets for sink connector {name}")
        raise ConnectRestError(f"Failed to reset consumer group offsets for sink connector {name}") from e
    return {"message": success_message(hook_result, reset=True)}


# -- source connectors -------------------------------------------------------------------------------------


_PLAIN = {str, int, bool, type(None)}


def _normalized(what: dict[str, Any] | None) -> dict[str, Any] | None:
    """One partition or offset map checked by Kafka's ``OffsetUtils.validateFormat`` and normalized as Kafka's
    JSON round trip would (bytes become base64 text, subclasses such as numpy floats their JSON type)."""
    if what is None:
        return None
    if type(what) is dict and all(type(k) is str and type(v) in _PLAIN for k, v in what.items()):
        return what  # the common case: valid, and nothing to convert
    try:
        validate_format(what)
    except ValueError as e:
        raise ConnectRestError(str(e)) from e
    out = None
    for key, value in what.items():
        kind = type(value)
        if value is None or kind is str or kind is int or kind is bool:
            continue
        if isinstance(value, float) and not math.isfinite(value):
            raise ConnectRestError(f"Offsets may only contain finite numbers, but field {key} contains {value}")
        if kind is float:
            continue
        out = dict(what) if out is None else out
        if isinstance(value, (bytes, bytearray)):
            out[key] = base64.b64encode(value).decode()
        else:
            out[key] = next(t(value) for t in (bool, int, float, str) if isinstance(value, t))
    return what if out is None else out


def _normalized_source_offsets(entries: list[tuple[dict | None, dict | None]]) -> dict[Any, tuple[dict, dict | None]]:
    """Every entry checked and normalized (errors are 500s, as in Kafka; a null partition is refused too),
    keyed by the frozen partition; later entries for a partition win."""
    out: dict[Any, tuple[dict, dict | None]] = {}
    for i, (partition, offset) in enumerate(entries):
        if partition is None:
            raise ConnectRestError(f"The partition of offsets[{i}] is null or missing: source connector offsets "
                                   "need a partition object")
        partition = _normalized(partition)
        # Partition values are primitives, so partition_key() is the stores' freeze().
        out[partition_key(partition)] = (partition, _normalized(offset))
    return out


def _read_stores(herder: Herder, name: str) -> list[OffsetStore]:
    """The connector's offsets stores ([worker, own]), each read to its end."""
    stores = herder.offset_stores_for(name)
    for store in stores:
        store.read_to_end(REQUEST_TIMEOUT_S)
    return stores


def _merged(stores: list[OffsetStore], name: str) -> dict[Any, tuple[dict, dict]]:
    """Every known partition of ``name``; the connector's own store overrides the worker's."""
    merged = stores[0].entries(name)
    for store in stores[1:]:
        merged.update(store.entries(name))
    return merged


def _alter_source(herder: Herder, name: str, config: dict[str, str], desc: PluginDesc,
                  offsets: dict[Any, tuple[dict, dict | None]] | None) -> dict[str, str]:
    """Alter (``offsets``, by frozen partition) or reset (None) a source connector's offsets, hook first."""
    reset = offsets is None
    try:
        stores = _read_stores(herder, name)
        known = _merged(stores, name)
        if offsets is None:
            keys, pairs = list(known), [(partition, None) for partition, _ in known.values()]
            hook_offsets: dict[Any, Any] = dict.fromkeys(known)
        else:
            keys, pairs = list(offsets), list(offsets.values())
            hook_offsets = {key: o for key, (_, o) in offsets.items()}
        hook_result = _call_hook(name, desc, config, hook_offsets)
        if pairs:
            _write(stores, name, pairs, keys)
        return {"message": success_message(hook_result, reset)}
    except Exception as e:
        raise _maybe_wrap(e, f"Failed to modify offsets for source connector {name}") from e


def _write(stores: list[OffsetStore], name: str, offsets: list[tuple[dict, dict | None]], keys: list[Any]) -> None:
    """Write through the connector's stores (``keys``: the partitions' :func:`partition_key`, in the same order)
    as one bulk write, and wait for the acknowledgement, as Kafka Connect does. The stores' readers apply the
    records in the background; every read of offsets reads its stores to their end first, so it sees them."""
    done = threading.Event()
    errors: list[BaseException] = []

    def written(err: BaseException | None) -> None:
        if err is not None:
            errors.append(err)
        done.set()

    write_offsets(stores, name, offsets, written, REQUEST_TIMEOUT_S, keys=keys, bulk=True)
    if not done.wait(REQUEST_TIMEOUT_S):
        raise ConnectRestError(f"Timed out while attempting to modify offsets for source connector {name}")
    if errors:
        raise ConnectRestError(f"Failed to modify offsets for source connector {name}") from errors[0]


# -- the hook and errors -------------------------------------------------------------------------------------


def _call_hook(name: str, desc: PluginDesc, config: dict[str, str], offsets: dict[Any, Any]) -> bool:
    """A new instance of the connector's class, its ``alter_offsets`` called (before ``start``, as Kafka does)."""
    connector = desc.cls()
    try:
        return bool(connector.alter_offsets(dict(config), offsets))
    except NotImplementedError as e:  # Java's UnsupportedOperationException
        raise ConnectRestError(UNSUPPORTED.format(c=name)) from e


def _maybe_wrap(error: BaseException, message: str) -> ConnectRestError:
    """Kafka's ``ConnectUtils.maybeWrap``: a Connect error keeps its message, anything else gets ``message``."""
    if isinstance(error, ConnectRestError):
        return error
    if isinstance(error, ConnectException):
        return ConnectRestError(str(error))
    return ConnectRestError(message)
