"""A consumer group's committed offsets: list, alter, delete some, delete the group (sink connectors).

confluent-kafka's ``AdminClient`` lists and alters group offsets and deletes groups, but has no call
for Kafka's ``OffsetDelete`` (Java's ``Admin.deleteConsumerGroupOffsets``), which resetting one
partition of a sink connector needs. :func:`delete_group_offsets` calls librdkafka's
``rd_kafka_DeleteConsumerGroupOffsets`` (the same library confluent-kafka ships) through ``ctypes``.

Example::

    offsets = list_group_offsets(admin, "connect-my-sink")      # {("t", 0): 42}
    alter_group_offsets(admin, "connect-my-sink", {("t", 0): 7})
    delete_group_offsets({"bootstrap.servers": "..."}, "connect-my-sink", [("t", 0)])
    delete_group(admin, "connect-my-sink")
"""

from __future__ import annotations

import ctypes
import glob
import os
import threading
from collections.abc import Iterable, Mapping

import confluent_kafka
from confluent_kafka import ConsumerGroupTopicPartitions, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient

__all__ = ["GroupOffsetsError", "alter_group_offsets", "delete_group", "delete_group_offsets",
           "list_group_offsets"]

Tp = tuple[str, int]


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


def _check_partitions(tps: Iterable[TopicPartition]) -> None:
    for tp in tps:
        if tp.error is not None:
            raise GroupOffsetsError(tp.error.code(), f"{tp.topic}-{tp.partition}: {tp.error.str()}")


def list_group_offsets(admin: AdminClient, group: str, timeout: float = 30.0) -> dict[Tp, int]:
    """Every committed offset of ``group`` (none for an unknown group), keyed by ``(topic, partition)``."""
    request = ConsumerGroupTopicPartitions(group)
    try:
        result = admin.list_consumer_group_offsets([request], request_timeout=timeout)[group].result(timeout)
    except KafkaException as e:
        _raise(e)
    return {(tp.topic, tp.partition): tp.offset for tp in result.topic_partitions or []
            if tp.error is None and tp.offset >= 0}


def alter_group_offsets(admin: AdminClient, group: str, offsets: Mapping[Tp, int], timeout: float = 30.0) -> None:
    """Commit these offsets for ``group`` (only possible while the group has no active member)."""
    if not offsets:
        return
    request = ConsumerGroupTopicPartitions(group, [TopicPartition(t, p, o) for (t, p), o in offsets.items()])
    try:
        result = admin.alter_consumer_group_offsets([request], request_timeout=timeout)[group].result(timeout)
    except KafkaException as e:
        _raise(e)
    _check_partitions(result.topic_partitions or [])


def delete_group(admin: AdminClient, group: str, timeout: float = 30.0) -> bool:
    """Delete ``group`` and its offsets; False if it did not exist."""
    try:
        admin.delete_consumer_groups([group], request_timeout=timeout)[group].result(timeout)
    except KafkaException as e:
        if e.args and isinstance(e.args[0], KafkaError) and e.args[0].code() == KafkaError.GROUP_ID_NOT_FOUND:
            return False
        _raise(e)
    return True


# -- librdkafka's DeleteConsumerGroupOffsets through ctypes ---------------------------------------------


class _TopicPartition(ctypes.Structure):
    _fields_ = [("topic", ctypes.c_char_p), ("partition", ctypes.c_int32), ("offset", ctypes.c_int64),
                ("metadata", ctypes.c_void_p), ("metadata_size", ctypes.c_size_t), ("opaque", ctypes.c_void_p),
                ("err", ctypes.c_int), ("_private", ctypes.c_void_p)]


class _TopicPartitionList(ctypes.Structure):
    _fields_ = [("cnt", ctypes.c_int), ("size", ctypes.c_int), ("elems", ctypes.POINTER(_TopicPartition))]


_ADMIN_OP_DELETECONSUMERGROUPOFFSETS = 8
_PRODUCER = 0
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
        vp, cp, sz = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t
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
            "rd_kafka_topic_partition_list_new": ([ctypes.c_int], ctypes.POINTER(_TopicPartitionList)),
            "rd_kafka_topic_partition_list_add": ([ctypes.POINTER(_TopicPartitionList), cp, ctypes.c_int32], vp),
            "rd_kafka_topic_partition_list_destroy": ([ctypes.POINTER(_TopicPartitionList)], None),
            "rd_kafka_DeleteConsumerGroupOffsets_new": ([cp, ctypes.POINTER(_TopicPartitionList)], vp),
            "rd_kafka_DeleteConsumerGroupOffsets_destroy": ([vp], None),
            "rd_kafka_DeleteConsumerGroupOffsets": ([vp, ctypes.POINTER(vp), sz, vp, vp], None),
            "rd_kafka_event_DeleteConsumerGroupOffsets_result": ([vp], vp),
            "rd_kafka_DeleteConsumerGroupOffsets_result_groups": ([vp, ctypes.POINTER(sz)], ctypes.POINTER(vp)),
            "rd_kafka_group_result_error": ([vp], vp),
            "rd_kafka_group_result_partitions": ([vp], ctypes.POINTER(_TopicPartitionList)),
            "rd_kafka_error_code": ([vp], ctypes.c_int),
            "rd_kafka_error_string": ([vp], cp),
            "rd_kafka_err2str": ([ctypes.c_int], cp),
        }
        for name, (args, res) in sigs.items():
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = args, res
        _lib = lib
        return lib


def delete_group_offsets(client_config: Mapping[str, str], group: str, partitions: Iterable[Tp],
                         timeout: float = 30.0) -> None:
    """Delete the committed offsets of these partitions of ``group`` (Kafka's ``OffsetDelete``).

    ``client_config`` are librdkafka settings (``bootstrap.servers``, security, ...). Raises
    :class:`GroupOffsetsError`, e.g. with ``KafkaError.GROUP_SUBSCRIBED_TO_TOPIC`` while a member
    of the group still consumes one of the topics, or ``GROUP_ID_NOT_FOUND`` for an unknown group.
    """
    parts = list(partitions)
    if not parts:
        return
    lib = _librdkafka()
    errstr = ctypes.create_string_buffer(512)
    conf = lib.rd_kafka_conf_new()
    settings = {k: str(v) for k, v in client_config.items() if not callable(v) and k != "logger"}
    settings.setdefault("log_level", "3")
    for key, value in settings.items():
        if lib.rd_kafka_conf_set(conf, key.encode(), value.encode(), errstr, len(errstr)) != 0:
            lib.rd_kafka_conf_destroy(conf)
            raise GroupOffsetsError(KafkaError._INVALID_ARG, errstr.value.decode(errors="replace"))
    rk = lib.rd_kafka_new(_PRODUCER, conf, errstr, len(errstr))  # takes ownership of conf on success
    if not rk:
        lib.rd_kafka_conf_destroy(conf)
        raise GroupOffsetsError(KafkaError._INVALID_ARG, errstr.value.decode(errors="replace"))
    queue = options = tplist = request = event = None
    try:
        queue = lib.rd_kafka_queue_new(rk)
        options = lib.rd_kafka_AdminOptions_new(rk, _ADMIN_OP_DELETECONSUMERGROUPOFFSETS)
        lib.rd_kafka_AdminOptions_set_request_timeout(options, int(timeout * 1000), errstr, len(errstr))
        tplist = lib.rd_kafka_topic_partition_list_new(len(parts))
        for topic, partition in parts:
            lib.rd_kafka_topic_partition_list_add(tplist, topic.encode(), partition)
        request = lib.rd_kafka_DeleteConsumerGroupOffsets_new(group.encode(), tplist)
        requests = (ctypes.c_void_p * 1)(request)
        lib.rd_kafka_DeleteConsumerGroupOffsets(rk, requests, 1, options, queue)
        event = lib.rd_kafka_queue_poll(queue, int(timeout * 1000) + 5000)
        if not event:
            raise GroupOffsetsError(KafkaError._TIMED_OUT, f"Timed out deleting offsets of group {group}")
        code = lib.rd_kafka_event_error(event)
        if code != 0:
            message = lib.rd_kafka_event_error_string(event) or lib.rd_kafka_err2str(code)
            raise GroupOffsetsError(code, message.decode(errors="replace"))
        result = lib.rd_kafka_event_DeleteConsumerGroupOffsets_result(event)
        if not result:
            raise GroupOffsetsError(KafkaError._FAIL, f"Unexpected answer deleting offsets of group {group}")
        count = ctypes.c_size_t(0)
        groups = lib.rd_kafka_DeleteConsumerGroupOffsets_result_groups(result, ctypes.byref(count))
        for i in range(count.value):
            error = lib.rd_kafka_group_result_error(groups[i])
            if error:
                raise GroupOffsetsError(lib.rd_kafka_error_code(error),
                                        lib.rd_kafka_error_string(error).decode(errors="replace"))
            tps = lib.rd_kafka_group_result_partitions(groups[i])
            for j in range(tps.contents.cnt if tps else 0):
                elem = tps.contents.elems[j]
                if elem.err != 0:
                    raise GroupOffsetsError(elem.err, f"{elem.topic.decode()}-{elem.partition}: "
                                            + lib.rd_kafka_err2str(elem.err).decode(errors="replace"))
    finally:
        if event:
            lib.rd_kafka_event_destroy(event)
        if request:
            lib.rd_kafka_DeleteConsumerGroupOffsets_destroy(request)
        if tplist:
            lib.rd_kafka_topic_partition_list_destroy(tplist)
        if options:
            lib.rd_kafka_AdminOptions_destroy(options)
        if queue:
            lib.rd_kafka_queue_destroy(queue)
        lib.rd_kafka_destroy(rk)
