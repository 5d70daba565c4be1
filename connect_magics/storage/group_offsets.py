"""A consumer group's committed offsets: list, alter, delete some, delete the group (sink connectors).

confluent-kafka's ``AdminClient`` alters group offsets and deletes groups. Two calls go to librdkafka (the
library confluent-kafka ships) through ``ctypes`` instead:

* listing a group's offsets: ``AdminClient.list_consumer_group_offsets`` crashes the process when the group
  coordinator answers NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE (e.g. on a freshly started broker), because
  librdkafka then signals a consumer-group object that an admin client does not have (librdkafka #5040,
  confluent-kafka-python #1982). Here the request goes through a *consumer* handle that has a throwaway
  ``group.id`` (it never joins a group), so that signal is harmless, and the error is retried;
* deleting the offsets of some partitions (Kafka's ``OffsetDelete``, Java's
  ``Admin.deleteConsumerGroupOffsets``), which confluent-kafka's ``AdminClient`` does not offer.

Example::

    offsets = list_group_offsets({"bootstrap.servers": "..."}, "connect-my-sink")      # {("t", 0): 42}
    alter_group_offsets(admin, "connect-my-sink", {("t", 0): 7})
    delete_group_offsets({"bootstrap.servers": "..."}, "connect-my-sink", [("t", 0)])
    delete_group(admin, "connect-my-sink")
"""

from __future__ import annotations

import ctypes
import glob
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import confluent_kafka
from confluent_kafka import ConsumerGroupTopicPartitions, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient

__all__ = ["GroupOffsetsError", "alter_group_offsets", "delete_group", "delete_group_offsets",
           "list_group_offsets"]

Tp = tuple[str, int]
_COORDINATOR_ERRORS = (KafkaError.COORDINATOR_LOAD_IN_PROGRESS, KafkaError.COORDINATOR_NOT_AVAILABLE,
                       KafkaError.NOT_COORDINATOR)


class GroupOffsetsError(Exception):
    """A group operation failed; ``code`` is the Kafka error code (``KafkaError`` constants)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def _raise(e: KafkaException) -> None:
    err = e.args[0] if e.args and isinstance(e.args[0], KafkaError) else None
    if err is None:
        raise GroupOffsetsError(KafkaError.UNKNOWN, str(e)) from e
    raise GroupOffsetsError(err.code(), err.str()) from e


def alter_group_offsets(admin: AdminClient, group: str, offsets: Mapping[Tp, int], timeout: float = 30.0) -> None:
    """Commit these offsets for ``group`` (only possible while the group has no active member)."""
    if not offsets:
        return
    request = ConsumerGroupTopicPartitions(group, [TopicPartition(t, p, o) for (t, p), o in offsets.items()])

    def attempt(remaining: float) -> None:
        try:
            result = admin.alter_consumer_group_offsets([request], request_timeout=remaining)[group].result(remaining)
        except KafkaException as e:
            _raise(e)
        for tp in result.topic_partitions or []:
            if tp.error is not None:
                raise GroupOffsetsError(tp.error.code(), f"{tp.topic}-{tp.partition}: {tp.error.str()}")

    _retrying(attempt, timeout)


def delete_group(admin: AdminClient, group: str, timeout: float = 30.0) -> bool:
    """Delete ``group`` and its offsets; False if it did not exist."""
    def attempt(remaining: float) -> bool:
        try:
            admin.delete_consumer_groups([group], request_timeout=remaining)[group].result(remaining)
        except KafkaException as e:
            if e.args and isinstance(e.args[0], KafkaError) and e.args[0].code() == KafkaError.GROUP_ID_NOT_FOUND:
                return False
            _raise(e)
        return True

    return _retrying(attempt, timeout)


# -- librdkafka through ctypes ------------------------------------------------------------------------------


class _TopicPartition(ctypes.Structure):
    _fields_ = [("topic", ctypes.c_char_p), ("partition", ctypes.c_int32), ("offset", ctypes.c_int64),
                ("metadata", ctypes.c_void_p), ("metadata_size", ctypes.c_size_t), ("opaque", ctypes.c_void_p),
                ("err", ctypes.c_int), ("_private", ctypes.c_void_p)]


class _TopicPartitionList(ctypes.Structure):
    _fields_ = [("cnt", ctypes.c_int), ("size", ctypes.c_int), ("elems", ctypes.POINTER(_TopicPartition))]


_CONSUMER = 1
_ADMIN_OP_ANY = 0
_lib: ctypes.CDLL | None = None
_lib_lock = threading.Lock()


def _librdkafka() -> ctypes.CDLL:
    """The librdkafka that confluent-kafka uses (its bundled copy, else the system's)."""
    global _lib
    with _lib_lock:
        if _lib is not None:
            return _lib
        base = os.path.dirname(os.path.dirname(confluent_kafka.__file__))
        candidates = sorted(glob.glob(os.path.join(base, "confluent_kafka.libs", "librdkafka*.so*")))
        candidates += sorted(glob.glob(os.path.join(base, "confluent_kafka", ".dylibs", "librdkafka*.dylib")))
        candidates += ["librdkafka.so.1", "librdkafka.dylib"]
        last: OSError | None = None
        for path in candidates:
            try:
                lib = ctypes.CDLL(path)
                break
            except OSError as e:
                last = e
        else:
            raise GroupOffsetsError(KafkaError.UNKNOWN, f"librdkafka could not be loaded: {last}")
        vp, cp, sz, tpl = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(_TopicPartitionList)
        sigs = {
            "rd_kafka_conf_new": ([], vp),
            "rd_kafka_conf_set": ([vp, cp, cp, cp, sz], ctypes.c_int),
            "rd_kafka_conf_destroy": ([vp], None),
            "rd_kafka_new": ([ctypes.c_int, vp, cp, sz], vp),
            "rd_kafka_destroy": ([vp], None),
            "rd_kafka_queue_new": ([vp], vp),
            "rd_kafka_queue_destroy": ([vp], None),
            "rd_kafka_queue_poll": ([vp, ctypes.c_int], vp),
            "rd_kafka_event_destroy": ([vp], None),
            "rd_kafka_event_error": ([vp], ctypes.c_int),
            "rd_kafka_event_error_string": ([vp], cp),
            "rd_kafka_AdminOptions_new": ([vp, ctypes.c_int], vp),
            "rd_kafka_AdminOptions_destroy": ([vp], None),
            "rd_kafka_AdminOptions_set_request_timeout": ([vp, ctypes.c_int, cp, sz], ctypes.c_int),
            "rd_kafka_topic_partition_list_new": ([ctypes.c_int], tpl),
            "rd_kafka_topic_partition_list_add": ([tpl, cp, ctypes.c_int32], vp),
            "rd_kafka_topic_partition_list_destroy": ([tpl], None),
            "rd_kafka_ListConsumerGroupOffsets_new": ([cp, tpl], vp),
            "rd_kafka_ListConsumerGroupOffsets_destroy": ([vp], None),
            "rd_kafka_ListConsumerGroupOffsets": ([vp, ctypes.POINTER(vp), sz, vp, vp], None),
            "rd_kafka_event_ListConsumerGroupOffsets_result": ([vp], vp),
            "rd_kafka_ListConsumerGroupOffsets_result_groups": ([vp, ctypes.POINTER(sz)], ctypes.POINTER(vp)),
            "rd_kafka_DeleteConsumerGroupOffsets_new": ([cp, tpl], vp),
            "rd_kafka_DeleteConsumerGroupOffsets_destroy": ([vp], None),
            "rd_kafka_DeleteConsumerGroupOffsets": ([vp, ctypes.POINTER(vp), sz, vp, vp], None),
            "rd_kafka_event_DeleteConsumerGroupOffsets_result": ([vp], vp),
            "rd_kafka_DeleteConsumerGroupOffsets_result_groups": ([vp, ctypes.POINTER(sz)], ctypes.POINTER(vp)),
            "rd_kafka_group_result_error": ([vp], vp),
            "rd_kafka_group_result_partitions": ([vp], tpl),
            "rd_kafka_error_code": ([vp], ctypes.c_int),
            "rd_kafka_error_string": ([vp], cp),
            "rd_kafka_err2str": ([ctypes.c_int], cp),
        }
        for name, (args, res) in sigs.items():
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = args, res
        _lib = lib
        return lib


def _text(value: bytes | None) -> str:
    return value.decode(errors="replace") if value else ""


def _group_call(client_config: Mapping[str, Any], api: str, group: str,
                partitions: Iterable[Tp] | None, timeout: float) -> list[tuple[str, int, int, int]]:
    """One librdkafka group admin request (``api``: ``ListConsumerGroupOffsets`` or
    ``DeleteConsumerGroupOffsets``) on a fresh consumer handle; ``(topic, partition, offset, error)`` of each
    partition of the answer. Raises :class:`GroupOffsetsError` for an error of the request or the group."""
    lib = _librdkafka()
    errstr = ctypes.create_string_buffer(512)
    conf = lib.rd_kafka_conf_new()
    settings = {k: str(v) for k, v in client_config.items() if not callable(v) and k != "logger"}
    settings.update({"group.id": f"connect-magics-admin-{uuid.uuid4().hex}", "enable.auto.commit": "false",
                     "log_level": settings.get("log_level", "3")})
    for key, value in settings.items():
        if lib.rd_kafka_conf_set(conf, key.encode(), value.encode(), errstr, len(errstr)) != 0:
            lib.rd_kafka_conf_destroy(conf)
            raise GroupOffsetsError(KafkaError._INVALID_ARG, _text(errstr.value))
    rk = lib.rd_kafka_new(_CONSUMER, conf, errstr, len(errstr))  # owns conf from here on
    if not rk:
        lib.rd_kafka_conf_destroy(conf)
        raise GroupOffsetsError(KafkaError._INVALID_ARG, _text(errstr.value))
    new, destroy = getattr(lib, f"rd_kafka_{api}_new"), getattr(lib, f"rd_kafka_{api}_destroy")
    call, event_result = getattr(lib, f"rd_kafka_{api}"), getattr(lib, f"rd_kafka_event_{api}_result")
    result_groups = getattr(lib, f"rd_kafka_{api}_result_groups")
    queue = options = tplist = request = event = None
    try:
        queue = lib.rd_kafka_queue_new(rk)
        options = lib.rd_kafka_AdminOptions_new(rk, _ADMIN_OP_ANY)
        lib.rd_kafka_AdminOptions_set_request_timeout(options, int(timeout * 1000), errstr, len(errstr))
        if partitions is not None:
            parts = list(partitions)
            tplist = lib.rd_kafka_topic_partition_list_new(len(parts))
            for topic, partition in parts:
                lib.rd_kafka_topic_partition_list_add(tplist, topic.encode(), partition)
        request = new(group.encode(), tplist)
        call(rk, (ctypes.c_void_p * 1)(request), 1, options, queue)
        event = lib.rd_kafka_queue_poll(queue, int(timeout * 1000) + 5000)
        if not event:
            raise GroupOffsetsError(KafkaError._TIMED_OUT, f"Timed out waiting for {api} of group {group}")
        code = lib.rd_kafka_event_error(event)
        if code != 0:
            raise GroupOffsetsError(code, _text(lib.rd_kafka_event_error_string(event) or lib.rd_kafka_err2str(code)))
        result = event_result(event)
        if not result:
            raise GroupOffsetsError(KafkaError._FAIL, f"Unexpected answer to {api} of group {group}")
        count = ctypes.c_size_t(0)
        groups = result_groups(result, ctypes.byref(count))
        out: list[tuple[str, int, int, int]] = []
        for i in range(count.value):
            error = lib.rd_kafka_group_result_error(groups[i])
            if error:
                raise GroupOffsetsError(lib.rd_kafka_error_code(error), _text(lib.rd_kafka_error_string(error)))
            tps = lib.rd_kafka_group_result_partitions(groups[i])
            for j in range(tps.contents.cnt if tps else 0):
                elem = tps.contents.elems[j]
                out.append((_text(elem.topic), elem.partition, elem.offset, elem.err))
        return out
    finally:
        if event:
            lib.rd_kafka_event_destroy(event)
        if request:
            destroy(request)
        if tplist:
            lib.rd_kafka_topic_partition_list_destroy(tplist)
        if options:
            lib.rd_kafka_AdminOptions_destroy(options)
        if queue:
            lib.rd_kafka_queue_destroy(queue)
        lib.rd_kafka_destroy(rk)


def _retrying(fn: Callable[[float], Any], timeout: float) -> Any:
    """``fn(remaining)``, again (with backoff) while the group coordinator is not ready."""
    deadline, backoff = time.monotonic() + timeout, 0.05
    while True:
        try:
            return fn(max(1.0, deadline - time.monotonic()))
        except GroupOffsetsError as e:
            if e.code not in _COORDINATOR_ERRORS or time.monotonic() + backoff > deadline:
                raise
        time.sleep(backoff)
        backoff = min(backoff * 2, 1.0)


def list_group_offsets(client_config: Mapping[str, Any], group: str, timeout: float = 30.0) -> dict[Tp, int]:
    """Every committed offset of ``group`` (none for an unknown group), keyed by ``(topic, partition)``.

    ``client_config`` are librdkafka settings (``bootstrap.servers``, security, ...).
    """
    def attempt(remaining: float) -> dict[Tp, int]:
        answer = _group_call(client_config, "ListConsumerGroupOffsets", group, None, remaining)
        for _topic, _partition, _offset, err in answer:
            if err in _COORDINATOR_ERRORS:
                raise GroupOffsetsError(err, "the group coordinator is not ready")
        return {(t, p): o for t, p, o, err in answer if err == 0 and o >= 0}

    return _retrying(attempt, timeout)


def delete_group_offsets(client_config: Mapping[str, Any], group: str, partitions: Iterable[Tp],
                         timeout: float = 30.0) -> None:
    """Delete the committed offsets of these partitions of ``group`` (Kafka's ``OffsetDelete``).

    Raises :class:`GroupOffsetsError`, e.g. with ``KafkaError.GROUP_SUBSCRIBED_TO_TOPIC`` while a member
    of the group still consumes one of the topics, or ``GROUP_ID_NOT_FOUND`` for an unknown group.
    """
    parts = list(partitions)
    if not parts:
        return

    def attempt(remaining: float) -> None:
        for topic, partition, _offset, err in _group_call(client_config, "DeleteConsumerGroupOffsets", group,
                                                          parts, remaining):
            if err != 0:
                raise GroupOffsetsError(err, f"{topic}-{partition}: {_text(_librdkafka().rd_kafka_err2str(err))}")

    _retrying(attempt, timeout)
