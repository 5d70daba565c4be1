"""A source's values reach the topic as its converter writes each one, whether the converter converted the
batch at once (JsonConverter: strings with nothing to escape, ``Converter.from_connect_column``) or a record in
the batch sent it back to the one-by-one path (a string to escape, a transformation, several topics)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Message, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from helpers import wait_until

from connect_magics import ConnectRuntime
from connect_magics.api.connector import SourceConnector, SourceTask
from connect_magics.api.converters import JsonConverter
from connect_magics.api.data import STRING_SCHEMA
from connect_magics.api.records import SourceRecord, SourceRecords

pytestmark = pytest.mark.broker

JSON = "org.apache.kafka.connect.json.JsonConverter"
LINES = ["plain", "x" * 100, "é日本", 'a "quoted" word', "a\ttab", "back\\slash", "last"]


def _raw_values(bootstrap: str, topic: str, count: int) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"read-{topic}", "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        values: list[bytes] = []
        wait_until(lambda: values.extend(m.value() for m in consumer.consume(100, 1) if not m.error())
                   or len(values) >= count, 60, message=lambda: f"{len(values)} of {count} records read")
        return values
    finally:
        consumer.close()


def _messages(bootstrap: str, topic: str, count: int) -> list[Message]:
    """The ``count`` committed messages of the topic's partition 0, and no more."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"read-{topic}", "enable.auto.commit": False,
                         "isolation.level": "read_committed"})
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        msgs: list[Message] = []
        wait_until(lambda: msgs.extend(m for m in consumer.consume(500, 1) if not m.error()) or len(msgs) >= count,
                   120, message=lambda: f"{len(msgs)} of {count} records read")
        assert consumer.consume(10, 1) == []  # nothing more
        return msgs
    finally:
        consumer.close()


@pytest.mark.parametrize("schemas", ["true", "false"])
@pytest.mark.parametrize("transform", [False, True])
def test_json_values_are_written_as_the_converter_writes_each(bootstrap: str, unique: str, tmp_path: Path,
                                                              schemas: str, transform: bool) -> None:
    topic, source = f"conv-{schemas}-{transform}-{unique}", tmp_path / "in.txt"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    plain = [f"line {i}" for i in range(500)]
    source.write_text("\n".join(plain) + "\n")
    config = {"connector.class": "FileStreamSource", "file": str(source), "topic": topic,
              "value.converter": JSON, "value.converter.schemas.enable": schemas}
    if transform:
        config |= {"transforms": "route", "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
                   "transforms.route.regex": "(.*)", "transforms.route.replacement": "$1"}
    with ConnectRuntime(bootstrap, f"conv-{unique}-{schemas}-{transform}") as rt:
        rt.create_connector("src", config)
        assert len(_raw_values(bootstrap, topic, len(plain))) == len(plain)
        with source.open("a") as f:
            f.write("\n".join(LINES) + "\n")  # read as one batch or a few: escaped and plain strings mixed
        values = _raw_values(bootstrap, topic, len(plain) + len(LINES))
        assert rt.task_status("src", 0)["state"] == "RUNNING"
    converter = JsonConverter()
    converter.configure({"schemas.enable": schemas}, is_key=False)
    assert values == [converter.from_connect_data(topic, STRING_SCHEMA, line) for line in plain + LINES]


class KeyedBatches(SourceConnector):
    """Batches of 500 records with string keys, values as ``values`` says, and a timestamp on every other batch
    only; ``count`` records in all."""

    def version(self) -> str:
        return "1.0"

    def start(self, props: dict[str, str]) -> None:
        self.props = props

    def task_class(self) -> type:
        return KeyedBatchesTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [self.props]

    def stop(self) -> None:
        pass


class KeyedBatchesTask(SourceTask):
    def version(self) -> str:
        return "1.0"

    def start(self, props: dict[str, str]) -> None:
        self.topic, self.count, self.raw = props["topic"], int(props["count"]), props["values"] == "bytes"
        offset = self.context.offset_storage_reader().offset({"batches": "keyed"})
        self.next = offset["next"] if offset else 0
        self.stopping = threading.Event()

    def next_batch(self) -> tuple[range, int | None] | None:
        """The numbers of the next batch of 500 and its timestamp (every other batch has none); None when done."""
        if self.next >= self.count:
            self.stopping.wait(0.05)  # an idle source's poll() wait, which stop() ends, as FileStreamSource's
            return None
        numbers = range(self.next, min(self.next + 500, self.count))
        timestamp = None if self.next // 500 % 2 else 1_700_000_000_000 + self.next
        self.next = numbers[-1] + 1
        return numbers, timestamp

    def value(self, i: int) -> str | bytes:
        return f"v{i}".encode() if self.raw else f"v{i}"

    def poll(self) -> list[SourceRecord] | None:
        if (batch := self.next_batch()) is None:
            return None
        numbers, timestamp = batch
        return [SourceRecord({"batches": "keyed"}, {"next": i + 1}, self.topic, None, None, f"k{i}", None,
                             self.value(i), timestamp) for i in numbers]

    def stop(self) -> None:
        self.stopping.set()


CONVERTERS = {"String": "org.apache.kafka.connect.storage.StringConverter", "Json": JSON,
              "ByteArray": "org.apache.kafka.connect.converters.ByteArrayConverter"}


@pytest.mark.parametrize("converter", CONVERTERS)
@pytest.mark.parametrize("exactly_once", [False, True])
def test_batches_sent_at_once_through_a_full_producer_queue_arrive_once_each(bootstrap: str, unique: str,
                                                                             converter: str,
                                                                             exactly_once: bool) -> None:
    """Batches the producer takes in one C loop (values and keys converted at once, no headers, one topic) into
    a producer queue of 40 messages: every batch fills it, and every record arrives once, in order, with its key
    and its timestamp (the time of sending where the record has none)."""
    topic, count = f"full-{converter}-{exactly_once}-{unique}", 5_000
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    worker = {"exactly.once.source.support": "enabled"} if exactly_once else {}
    with ConnectRuntime(bootstrap, f"full-{unique}-{converter}-{exactly_once}", worker) as rt:
        rt.plugins.register(KeyedBatches)
        rt.create_connector("keyed", {
            "connector.class": "KeyedBatches", "topic": topic, "count": str(count),
            "values": "bytes" if converter == "ByteArray" else "str",
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": CONVERTERS[converter],
            "value.converter.schemas.enable": "false",
            "producer.override.queue.buffering.max.messages": "40"})
        msgs = _messages(bootstrap, topic, count)
        assert rt.task_status("keyed", 0)["state"] == "RUNNING"
    quoted = (lambda s: f'"{s}"') if converter == "Json" else str
    assert [m.key() for m in msgs] == [f"k{i}".encode() for i in range(count)]
    assert [m.value() for m in msgs] == [quoted(f"v{i}").encode() for i in range(count)]
    stamps = [m.timestamp()[1] for m in msgs]
    assert all(stamps[i] == 1_700_000_000_000 + i // 500 * 500 for i in range(count) if i // 500 % 2 == 0)
    assert all(stamps[i] > 1_700_000_000_000 + count for i in range(count) if i // 500 % 2)


class ColumnBatches(KeyedBatches):
    """Batches of 500 values as ``SourceRecords`` (no keys), a timestamp on every other batch only; each batch
    returned is kept, to see afterwards whether anything read it as records."""

    def task_class(self) -> type:
        return ColumnBatchesTask


class ColumnBatchesTask(KeyedBatchesTask):
    returned: list[SourceRecords] = []

    def poll(self) -> SourceRecords | None:
        if (batch := self.next_batch()) is None:
            return None
        numbers, timestamp = batch
        records = SourceRecords({"batches": "keyed"}, [{"next": i + 1} for i in numbers], self.topic, None,
                                list(map(self.value, numbers)), timestamp)
        ColumnBatchesTask.returned.append(records)
        return records


@pytest.mark.parametrize("converter", CONVERTERS)
@pytest.mark.parametrize("exactly_once", [False, True])
def test_source_records_go_out_as_columns_once_each(bootstrap: str, unique: str, converter: str,
                                                    exactly_once: bool) -> None:
    """``SourceRecords`` batches into a producer queue of 40 messages: sent as columns (no batch after the first
    was read as records), every record once, in order, with its batch's timestamp (or the time of sending), and the offset of
    the last one committed."""
    topic, count = f"columns-{converter}-{exactly_once}-{unique}", 5_000
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    ColumnBatchesTask.returned = []
    worker = {"exactly.once.source.support": "enabled"} if exactly_once else {}
    with ConnectRuntime(bootstrap, f"columns-{unique}-{converter}-{exactly_once}",
                        {**worker, "offset.flush.interval.ms": "100"}) as rt:
        rt.plugins.register(ColumnBatches)
        rt.create_connector("columns", {
            "connector.class": "ColumnBatches", "topic": topic, "count": str(count),
            "values": "bytes" if converter == "ByteArray" else "str", "value.converter": CONVERTERS[converter],
            "value.converter.schemas.enable": "false", "producer.override.queue.buffering.max.messages": "40"})
        msgs = _messages(bootstrap, topic, count)
        wait_until(lambda: (rt.get_offsets("columns")["offsets"] or [{}])[0].get("offset") == {"next": count}, 60,
                   message=lambda: f"the last offset committed (have {rt.get_offsets('columns')['offsets']})")
        assert rt.task_status("columns", 0)["state"] == "RUNNING"
    assert len(ColumnBatchesTask.returned) == count // 500
    # the first batch goes record by record, as the first to a topic not known yet (KIP-158's check) does
    assert ColumnBatchesTask.returned[0].built and not any(b.built for b in ColumnBatchesTask.returned[1:])
    quoted = (lambda s: f'"{s}"') if converter == "Json" else str
    assert [m.key() for m in msgs] == [None] * count
    assert [m.value() for m in msgs] == [quoted(f"v{i}").encode() for i in range(count)]
    stamps = [m.timestamp()[1] for m in msgs]
    assert all(stamps[i] == 1_700_000_000_000 + i // 500 * 500 for i in range(count) if i // 500 % 2 == 0)
    assert all(stamps[i] > 1_700_000_000_000 + count for i in range(count) if i // 500 % 2)
