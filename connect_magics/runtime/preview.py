"""What a connector config does to records, shown before it runs: "what will this config do to my records?"

:func:`preview` runs a connector's converters, transformations and predicates on a few records, exactly
as its task would (the same runner code), and writes nothing: a sink's records are read with a consumer of
no group (its group's offsets do not move, nothing goes to a dead letter queue); a source's task is started
on its own, polled, and stopped, and none of its records is produced nor any offset committed. Failures are
listed with the stage that failed and what the connector's error handling would do with them.

>>> result = preview(rt.herder, "orders-sink", records=5)  # doctest: +SKIP
>>> result.before, result.after, result.failures            # doctest: +SKIP
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from confluent_kafka import Consumer, KafkaError, TopicPartition

from connect_magics.api.connector import SourceTaskContext
from connect_magics.errors import BadRequestError
from connect_magics.runtime.config.connector_config import client_overrides
from connect_magics.runtime.offsets import sink_admin_config
from connect_magics.runtime.rewind import consumed_partitions
from connect_magics.runtime.worker.error_handling import ErrorSettings, StagedError
from connect_magics.runtime.worker.offset_stores import REQUEST_TIMEOUT_S
from connect_magics.runtime.worker.sink_runner import SinkTaskRunner, sink_group_id
from connect_magics.runtime.worker.source_runner import SourceTaskRunner, StoreOffsetReader
from connect_magics.runtime.worker.task_factory import TaskSpec, build_runner
from connect_magics.runtime.worker.task_id import TaskId
from connect_magics.storage.client_logs import client_logger
from connect_magics.storage.config_store import TargetState
from connect_magics.storage.group_offsets import list_group_offsets

if TYPE_CHECKING:
    import pandas as pd

    from connect_magics.runtime.herder import Herder

__all__ = ["POSITIONS", "Preview", "preview"]

#: Where a sink's preview reads: each partition's beginning, its last records, or the connector's position.
POSITIONS = ("earliest", "latest", "committed")
_COLUMNS = ["topic", "partition", "offset", "timestamp", "key", "value", "headers"]


@dataclass
class Preview:
    """Records before the transformations (as the converters made them), after them (what the sink task's
    ``put`` receives, or what a source would produce), and the records that failed, with their stage."""

    connector: str
    before: pd.DataFrame
    after: pd.DataFrame
    failures: pd.DataFrame
    notes: list[str] = field(default_factory=list)

    def _repr_html_(self) -> str:
        parts = [f"<h4>{title} ({len(frame)})</h4>{frame.to_html(index=False)}" for title, frame in
                 (("Before the transformations", self.before), ("After", self.after), ("Failures", self.failures))]
        notes = "".join(f"<p>{note}</p>" for note in self.notes)
        return f"<div><b>Preview of {self.connector}</b>{notes}{''.join(parts)}</div>"


def preview(herder: Herder, name: str | None = None, config: Mapping[str, Any] | None = None, records: int = 10,
            position: str = "earliest", timeout: float = 10.0) -> Preview:
    """Preview connector ``name`` (its stored config), or ``config`` (validated first; ``name`` optional), on
    ``records`` records: a sink's from ``position`` (see :data:`POSITIONS`), a source's as its task polls
    them within ``timeout`` seconds."""
    if records < 1:
        raise BadRequestError(f"Invalid value {records} for records: must be at least 1")
    if position not in POSITIONS:
        raise BadRequestError(f"Invalid value {position} for position: must be one of {', '.join(POSITIONS)}")
    if config is None:
        if name is None:
            raise BadRequestError("Give the preview a connector's name or a config")
        stored = herder.connector_config(name)
    else:
        name = name or str(config.get("name") or f"preview-{uuid.uuid4().hex[:6]}")
        stored = herder._validated(name, dict(config))
    resolved = herder._resolve(stored)
    kind = herder._type(stored)
    if kind == "source":
        connector = herder._connector_desc(stored).cls()
        connector.start({k: v for k, v in resolved.items() if k != "connector.plugin.version"})
        try:
            task_config = (connector.task_configs(1) or [{}])[0]
        finally:
            connector.stop()
        runner = _runner(herder, name, stored, task_config, "source")
        return _preview_source(runner, name, records, timeout)
    runner = _runner(herder, name, stored, {}, "sink")
    return _preview_sink(herder, runner, name, resolved, records, position, timeout)


def _runner(herder: Herder, name: str, config: dict[str, str], task_config: dict[str, str], kind: str) -> Any:
    spec = TaskSpec(TaskId(name, 0), config, task_config, TargetState.STARTED, kind, 0, fenced=False)
    stores = herder.offset_stores_for(name) if kind == "source" else None
    runner, _ = build_runner(spec, herder.services, stores)
    return runner


def _on_error(config: Mapping[str, str]) -> str:
    settings = ErrorSettings.from_config(config)
    return "skipped (errors.tolerance=all)" if settings.tolerance == "all" else \
        "fails the task (errors.tolerance=none)"


def _frame(rows: list[dict[str, Any]], columns: list[str]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(rows, columns=columns)


def _row(record: Any, offset: int | None) -> dict[str, Any]:
    headers = {h.key: h.value for h in record.headers} if record.has_headers() else None
    return {"topic": record.topic, "partition": record.kafka_partition, "offset": offset,
            "timestamp": record.timestamp, "key": record.key, "value": record.value, "headers": headers}


def _failure(topic: str, partition: int | None, offset: int | None, error: BaseException, action: str) -> dict:
    stage, cls, cause = (error.stage.value, error.executing_class.__name__, error.cause) \
        if isinstance(error, StagedError) else ("UNKNOWN", type(error).__name__, error)
    return {"topic": topic, "partition": partition, "offset": offset, "stage": stage, "class": cls,
            "error": f"{type(cause).__name__}: {cause}", "action": action}


_FAILURE_COLUMNS = ["topic", "partition", "offset", "stage", "class", "error", "action"]


def _preview_sink(herder: Herder, runner: SinkTaskRunner, name: str, config: dict[str, str], records: int,
                  position: str, timeout: float) -> Preview:
    from confluent_kafka.admin import AdminClient

    consumer_config = {**herder.wc.client_config("consumer"), **client_overrides(
        config, "consumer", herder.wc["connector.client.config.override.policy"])}
    admin_config = sink_admin_config(config, herder.wc)
    admin = AdminClient({**admin_config, "logger": client_logger("admin")})
    partitions = sorted(consumed_partitions(admin, config))
    notes = [] if partitions else ["None of the connector's topics exists yet: there is nothing to preview."]
    messages = _read(consumer_config, admin_config, partitions, sink_group_id(name, config), records, position,
                     timeout) if partitions else []
    action = _on_error(config)
    before, after, failures = [], [], []
    for m in messages:
        try:
            record = runner.converted(m)
        except StagedError as e:
            failures.append(_failure(m.topic(), m.partition(), m.offset(), e, action))
            continue
        before.append(_row(record, m.offset()))
        try:
            out = runner.transform(record)
        except StagedError as e:
            failures.append(_failure(m.topic(), m.partition(), m.offset(), e, action))
            continue
        if out is not None:
            after.append(_row(out, out.kafka_offset))
    runner.chain.close()
    return Preview(name, _frame(before, _COLUMNS), _frame(after, _COLUMNS), _frame(failures, _FAILURE_COLUMNS),
                   notes)


def _read(consumer_config: Mapping[str, Any], admin_config: Mapping[str, Any], partitions: list[tuple[str, int]],
          group: str, records: int, position: str, timeout: float) -> list[Any]:
    """Up to ``records`` messages of ``partitions`` from ``position``, read by a consumer of no group (it
    commits nothing)."""
    consumer = Consumer({**consumer_config, "group.id": f"connect-magics-preview-{uuid.uuid4().hex}",
                         "enable.auto.commit": False, "enable.partition.eof": True,
                         "logger": client_logger("consumer")})
    try:
        ends = {tp: consumer.get_watermark_offsets(TopicPartition(*tp), REQUEST_TIMEOUT_S) for tp in partitions}
        committed = {}
        if position == "committed":
            committed = {tp: o for tp, o in list_group_offsets(admin_config, group, REQUEST_TIMEOUT_S).items()}
        starts = {tp: _start(position, low, high, records, committed.get(tp)) for tp, (low, high) in ends.items()}
        left = {tp for tp, start in starts.items() if start < ends[tp][1]}
        if not left:
            return []
        consumer.assign([TopicPartition(t, p, starts[(t, p)]) for t, p in sorted(left)])
        messages: list[Any] = []
        deadline = time.monotonic() + timeout
        while left and len(messages) < records and time.monotonic() < deadline:
            for m in consumer.consume(records - len(messages), timeout=0.2):
                tp = (m.topic(), m.partition())
                if m.error() is None:
                    messages.append(m)
                    if m.offset() + 1 >= ends[tp][1]:
                        left.discard(tp)
                elif m.error().code() == KafkaError._PARTITION_EOF:
                    left.discard(tp)
        return messages[:records]
    finally:
        consumer.close()


def _start(position: str, low: int, high: int, records: int, committed: int | None) -> int:
    if position == "latest":
        return max(low, high - records)
    if position == "committed" and committed is not None:
        return max(low, committed)
    return low


def _preview_source(runner: SourceTaskRunner, name: str, records: int, timeout: float) -> Preview:
    task = runner.task
    task.initialize(SourceTaskContext(runner.task_config, StoreOffsetReader(name, runner.offset_stores)))
    task.start(runner.task_config)
    polled: list[Any] = []
    try:
        deadline = time.monotonic() + timeout
        while len(polled) < records and time.monotonic() < deadline:
            polled.extend(task.poll() or [])
    finally:
        task.stop()
    polled = polled[:records]
    action = _on_error(runner.connector_config)
    before, after, failures = [], [], []
    for record in polled:
        before.append(_row(record, None))
        try:
            converted = runner._convert(record)  # the transformations, then the converters: as it would send
        except StagedError as e:
            failures.append(_failure(record.topic, record.kafka_partition, None, e, action))
            continue
        if converted is not None:
            after.append(_row(converted[0], None))
    runner.chain.close()
    notes = [] if polled else [f"The task polled no record within {timeout:g} s."]
    return Preview(name, _frame(before, _COLUMNS), _frame(after, _COLUMNS), _frame(failures, _FAILURE_COLUMNS),
                   notes)

