"""The offsets of partitions by time, or their starts and ends, asked of a consumer kept for queries.

A consumer's ``offsets_for_times``, one ListOffsets request per partition leader, not the admin client's
``list_offsets``: the admin client's requests go through librdkafka's enqueue-once machinery, which can abort the
whole process on an assertion when its requests time out as a broker stops, stalls or restarts
(confluentinc/librdkafka#4605, still open); a kernel must survive an outage. A consumer's query waits on a queue
of its own, and an answer that comes after the caller gave up is dropped with that queue.

The querying consumer must not be one another thread reads with: confluent-kafka's consumer calls wait while
another thread is inside ``consume()``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from connect_magics.storage.client_logs import client_logger

#: ListOffsets' timestamp for a partition's start offset.
EARLIEST = -2
#: ListOffsets' timestamp for a partition's end offset: the last stable offset for a ``read_committed`` consumer
#: (librdkafka's default), the high watermark for a ``read_uncommitted`` one.
LATEST = -1

Partition = tuple[str, int]


def query_config(client_config: Mapping[str, Any], read_committed: bool = True) -> dict[str, Any]:
    """The configuration of a consumer that only answers queries: it never subscribes, assigns or commits,
    and its group id is a throwaway one. Its :data:`LATEST` offsets are last stable offsets if ``read_committed``,
    high watermarks (as ``kafka-consumer-groups.sh`` shows a group's lag against) if not.

    >>> query = Consumer(query_config({"bootstrap.servers": "localhost:9092"}))  # doctest: +SKIP
    """
    return {**client_config, "group.id": f"connect-magics-queries-{uuid.uuid4().hex}", "enable.auto.commit": False,
            "isolation.level": "read_committed" if read_committed else "read_uncommitted"}


def query_consumer(client_config: Mapping[str, Any], read_committed: bool = True) -> Consumer:
    """A consumer of :func:`query_config`, logging through the project's client logger.

    >>> queries = query_consumer({"bootstrap.servers": "localhost:9092"}, read_committed=False)  # doctest: +SKIP
    """
    return Consumer(query_config({**client_config, "logger": client_logger("consumer")}, read_committed))


#: Errors of a query sent with the leader epoch the consumer knew before a broker restarted or leaders moved: the
#: consumer asks for the topics' metadata again and repeats the query.
STALE_LEADER = {KafkaError.FENCED_LEADER_EPOCH, KafkaError.UNKNOWN_LEADER_EPOCH, KafkaError.NOT_LEADER_FOR_PARTITION}


def query_offsets(consumer: Consumer, timestamps: Mapping[Partition, int], timeout: float) -> dict[Partition, int]:
    """Per partition, the offset of its first record at or after the timestamp (epoch ms), or its start
    (:data:`EARLIEST`) or end (:data:`LATEST`); -1 where no record is that recent. One request per leader,
    answered within ``timeout`` seconds or ``KafkaException`` (``_TIMED_OUT``); a partition's own error is raised
    as a ``KafkaException`` too. A query the broker refuses for a stale leader is asked again on fresh metadata.

    >>> query_offsets(consumer, {("orders", 0): LATEST, ("orders", 1): EARLIEST}, 10)  # doctest: +SKIP
    {('orders', 0): 42, ('orders', 1): 0}
    """
    if not timestamps:
        return {}
    deadline = time.monotonic() + timeout
    while True:
        try:
            found = consumer.offsets_for_times([TopicPartition(t, p, ts) for (t, p), ts in timestamps.items()],
                                               max(deadline - time.monotonic(), 0.001))
            for tp in found:
                if tp.error is not None:
                    raise KafkaException(tp.error)
            return {(tp.topic, tp.partition): tp.offset for tp in found}
        except KafkaException as e:
            if e.args[0].code() not in STALE_LEADER or time.monotonic() >= deadline:
                raise
            for topic in {t for t, _ in timestamps}:
                consumer.list_topics(topic, timeout=max(deadline - time.monotonic(), 0.001))
