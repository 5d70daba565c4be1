"""Rewinding a sink connector to a point in time ("replay since 10:00").

A sink's offsets are Kafka offsets, so "since 10:00" has an answer per partition: the broker's
offsets-for-times (the first record whose timestamp is at or after that time; the partition's end when
there is none). :func:`rewind_plan` computes it for every partition the connector consumes (those with
committed offsets and those of its ``topics`` / ``topics.regex`` that have none yet), beside the
current offsets, without changing anything. :class:`ConnectRuntime.rewind
<connect_magics.runtime.runtime.ConnectRuntime.rewind>` applies such a plan with KIP-875 (stop, alter,
then the connector's earlier target state again) and keeps the offsets it replaced, so that
``undo_rewind`` puts them back.

>>> plan = rewind_plan(rt.herder, "orders-sink", parse_time("2026-11-26T10:00:00Z"))  # doctest: +SKIP
>>> plan.frame()                                                                     # doctest: +SKIP
  kafka_topic  kafka_partition  kafka_offset_before  kafka_offset
0      orders                0                 1200           830
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from confluent_kafka import Consumer, KafkaException
from confluent_kafka.admin import AdminClient

from connect_magics.errors import BadRequestError, ConnectRestError
from connect_magics.runtime.offsets import (
    KAFKA_OFFSET_KEY,
    KAFKA_PARTITION_KEY,
    KAFKA_TOPIC_KEY,
    offsets_view,
    sink_admin_config,
)
from connect_magics.runtime.topics.tracking import sink_topic_filter
from connect_magics.runtime.worker.offset_stores import REQUEST_TIMEOUT_S
from connect_magics.storage.offset_queries import LATEST, query_consumer, query_offsets

if TYPE_CHECKING:
    import pandas as pd

    from connect_magics.runtime.herder import Herder

__all__ = ["RewindPlan", "consumed_partitions", "parse_duration", "parse_time", "rewind_plan"]

Partition = tuple[str, int]


def parse_time(value: Any) -> int:
    """Epoch milliseconds of ``value``: an int (already epoch ms), a :class:`datetime.datetime`, a pandas
    Timestamp or an ISO 8601 string. A time without a zone is local time, as Kafka's
    ``kafka-consumer-groups --to-datetime`` reads it.

    >>> parse_time("1970-01-01T00:00:01Z")
    1000
    >>> parse_time(1_700_000_000_000)
    1700000000000
    """
    import pandas as pd

    if isinstance(value, bool):
        raise BadRequestError(f"Invalid value {value!r} for 'to': expected a time")
    if isinstance(value, int):
        return value
    try:
        stamp = pd.Timestamp(value)
    except (TypeError, ValueError) as e:
        raise BadRequestError(f"Invalid value {value!r} for 'to': not a time ({e})") from None
    if stamp is pd.NaT:
        raise BadRequestError(f"Invalid value {value!r} for 'to': not a time")
    if stamp.tzinfo is None:
        stamp = stamp.tz_localize(dt.datetime.now().astimezone().tzinfo)
    return int(stamp.value // 1_000_000)


def parse_duration(value: Any) -> int:
    """Milliseconds of ``value``: a :class:`datetime.timedelta`, or a string such as ``"10m"``, ``"1h30m"``,
    ``"2 days"`` or ISO 8601's ``"PT10M"`` (Kafka's ``--by-duration`` form).

    >>> parse_duration("10m"), parse_duration("PT1H")
    (600000, 3600000)
    """
    import pandas as pd

    try:
        delta = pd.Timedelta(value)
    except (TypeError, ValueError) as e:
        raise BadRequestError(f"Invalid value {value!r} for 'by': not a duration ({e})") from None
    if delta is pd.NaT or delta.total_seconds() <= 0:
        raise BadRequestError(f"Invalid value {value!r} for 'by': must be a positive duration")
    return int(delta.total_seconds() * 1000)


@dataclass(frozen=True)
class RewindPlan:
    """The offsets a rewind of ``connector`` to ``to_ms`` sets (``after``) beside those it replaces
    (``before``); None where there are none (a partition reset)."""

    connector: str
    to_ms: int
    before: Mapping[Partition, int | None]
    after: Mapping[Partition, int | None]

    def frame(self) -> pd.DataFrame:
        """One row per partition: ``kafka_topic``, ``kafka_partition``, ``kafka_offset_before``, ``kafka_offset``."""
        import pandas as pd

        rows = [{KAFKA_TOPIC_KEY: t, KAFKA_PARTITION_KEY: p, "kafka_offset_before": self.before.get((t, p)),
                 KAFKA_OFFSET_KEY: offset} for (t, p), offset in sorted(self.after.items())]
        frame = pd.DataFrame(rows, columns=[KAFKA_TOPIC_KEY, KAFKA_PARTITION_KEY, "kafka_offset_before",
                                            KAFKA_OFFSET_KEY])
        frame = frame.astype({"kafka_offset_before": "Int64", KAFKA_OFFSET_KEY: "Int64"})
        frame.attrs["rewind_to"] = dt.datetime.fromtimestamp(self.to_ms / 1000, dt.timezone.utc).isoformat()
        return frame

    def request(self) -> dict[str, list[dict[str, Any]]]:
        """The KIP-875 alter request that applies the plan (None resets a partition)."""
        return {"offsets": [{"partition": {KAFKA_TOPIC_KEY: t, KAFKA_PARTITION_KEY: p},
                             "offset": None if o is None else {KAFKA_OFFSET_KEY: o}} for (t, p), o in self.after.items()]}

    def undone(self) -> RewindPlan:
        """The plan that puts the replaced offsets back."""
        return RewindPlan(self.connector, self.to_ms, self.after, self.before)


def rewind_plan(herder: Herder, name: str, to_ms: int) -> RewindPlan:
    """The offsets of sink connector ``name`` for the time ``to_ms`` (epoch ms), beside its current ones."""
    config = herder.connector_config(name)
    view, sink = offsets_view(herder, name)
    if not sink:
        raise BadRequestError(f"Connector {name} is not a sink connector: only a sink's offsets are Kafka offsets "
                              "that a time maps to (change a source's offsets with alter_offsets)")
    before: dict[Partition, int | None] = {
        (e["partition"][KAFKA_TOPIC_KEY], e["partition"][KAFKA_PARTITION_KEY]): e["offset"][KAFKA_OFFSET_KEY]
        for e in view["offsets"]}
    # Read uncommitted, as a sink's consumer by default (Kafka's): the end is the high watermark.
    queries = query_consumer(sink_admin_config(config, herder.wc), read_committed=False)
    try:
        partitions = set(before) | consumed_partitions(queries, config)
        if not partitions:
            raise BadRequestError(f"Connector {name} has no partitions to rewind: it has committed no offsets and "
                                  "none of its topics exists")
        at = _query(queries, dict.fromkeys(partitions, to_ms))
        missing = [tp for tp, offset in at.items() if offset < 0]  # no record at or after that time: the end
        ends = _query(queries, dict.fromkeys(missing, LATEST))
    finally:
        queries.close()
    after = {tp: ends.get(tp, offset) if offset < 0 else offset for tp, offset in at.items()}
    return RewindPlan(name, to_ms, {tp: before.get(tp) for tp in after}, after)


def consumed_partitions(client: AdminClient | Consumer, config: Mapping[str, str]) -> set[Partition]:
    """The partitions of the existing topics a sink with ``config`` consumes (``topics`` / ``topics.regex``)."""
    consumes = sink_topic_filter(config)
    if consumes is None:
        return set()
    metadata = client.list_topics(timeout=REQUEST_TIMEOUT_S)
    return {(topic, p) for topic, meta in metadata.topics.items() if meta.error is None and consumes(topic)
            for p in meta.partitions}


def _query(queries: Consumer, timestamps: dict[Partition, int]) -> dict[Partition, int]:
    try:
        return query_offsets(queries, timestamps, REQUEST_TIMEOUT_S)
    except KafkaException as e:
        raise ConnectRestError(f"Failed to look up the offsets for the rewind's time: {e}") from e
