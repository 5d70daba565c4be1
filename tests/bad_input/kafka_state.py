"""What a bad input must leave unchanged in Kafka: the broker's topics, the end offsets of a runtime's internal
topics and the consumer groups."""

from __future__ import annotations

from typing import Any

from confluent_kafka import Consumer, ConsumerGroupState, TopicPartition
from helpers import wait_until

from connect_magics import ConnectRuntime

#: Worker settings that keep the internal topics small, so that a snapshot is a handful of requests, and the
#: task control topic quiet: a runtime that spreads tasks over its group writes a report there every
#: heartbeat.interval.ms, which would move its end between two snapshots (the group tests cover spreading).
SMALL_TOPICS = {"offset.storage.partitions": "1", "status.storage.partitions": "1", "task.assignment": "leader"}


def wait_for_stable_group(rt: ConnectRuntime, group: str) -> None:
    """Wait until a sink's consumer group has joined (it joins after its task reported RUNNING), so that
    snapshots taken afterwards do not see it appear."""
    def stable() -> bool:
        groups = rt.admin.list_consumer_groups(request_timeout=10).result(10).valid
        return any(g.group_id == group and g.state == ConsumerGroupState.STABLE for g in groups)

    wait_until(stable, message=f"consumer group {group} to be stable")


class KafkaState:
    """Snapshots of everything a runtime (and the broker around it) could have written."""

    def __init__(self, rt: ConnectRuntime) -> None:
        self.rt = rt
        wc = rt.worker_config
        self.topics = [wc[k] for k in ("config.storage.topic", "offset.storage.topic", "status.storage.topic",
                                       "task.control.storage.topic")]
        self._consumer = Consumer({"bootstrap.servers": wc["bootstrap.servers"], "group.id": "bad-input-state",
                                   "enable.auto.commit": False})

    def snapshot(self) -> dict[str, Any]:
        """Topic names, end offsets of every internal topic partition, and consumer group ids, once the runtime's
        pending writes were sent."""
        self.rt.config_store.log.flush(10)
        self.rt.offset_store.log.flush(10)
        self.rt.status_store.flush(10)
        metadata = self.rt.admin.list_topics(timeout=10)
        ends = {(t, p): self._consumer.get_watermark_offsets(TopicPartition(t, p), timeout=10, cached=False)[1]
                for t in self.topics for p in metadata.topics[t].partitions}
        groups = self.rt.admin.list_consumer_groups(request_timeout=10).result(10)
        return {"topics": sorted(metadata.topics), "ends": ends, "groups": sorted(g.group_id for g in groups.valid)}

    def close(self) -> None:
        self._consumer.close()
