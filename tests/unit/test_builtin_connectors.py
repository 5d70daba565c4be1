"""Built-in connectors driven directly (no Kafka): FileStream source/sink (after Kafka's FileStream*Test),
the sequence generator and the verifying sink."""

from __future__ import annotations

import os
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import connect_magics.connectors as connectors
from connect_magics.api.config import ConfigException
from connect_magics.api.connector import (
    OffsetStorageReader,
    SinkTaskContext,
    SourceTaskContext,
    partition_key,
)
from connect_magics.api.data import STRING_SCHEMA
from connect_magics.api.errors import ConnectException
from connect_magics.api.records import SinkRecord, SinkRecords, SourceRecord, TopicPartition
from connect_magics.connectors import (
    FileStreamSinkConnector,
    FileStreamSinkTask,
    FileStreamSourceConnector,
    FileStreamSourceTask,
    SequenceSourceConnector,
    SequenceSourceTask,
    VerifyingSinkConnector,
    VerifyingSinkTask,
    verifying,
)

pytestmark = pytest.mark.unit


# ------------------------------------------------------------------------------------------------ fakes


class FakeOffsetReader(OffsetStorageReader):
    """Committed offsets held in a dict keyed by the frozen partition."""

    def __init__(self, offsets: dict[Any, dict[str, Any]] | None = None) -> None:
        self.committed = dict(offsets or {})
        self.lookups: list[dict[str, Any]] = []

    def commit(self, partition: dict[str, Any], offset: dict[str, Any]) -> None:
        self.committed[partition_key(partition)] = offset

    def offsets(self, partitions: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
        self.lookups.extend(partitions)
        keys = [partition_key(p) for p in partitions]
        return {k: self.committed[k] for k in keys if k in self.committed}


class FakeSinkTaskContext(SinkTaskContext):
    def __init__(self, config: dict[str, str], assignment: set[TopicPartition] | None = None) -> None:
        super().__init__(config)
        self._assignment = set(assignment or ())
        self.commit_requests = 0

    def assignment(self) -> set[TopicPartition]:
        return set(self._assignment)

    def request_commit(self) -> None:
        self.commit_requests += 1


def source_task(cls: type, props: dict[str, str], reader: FakeOffsetReader | None = None) -> Any:
    task = cls()
    task.initialize(SourceTaskContext(props, reader or FakeOffsetReader()))
    task.start(props)
    return task


def sink_task(cls: type, props: dict[str, str]) -> Any:
    task = cls()
    task.initialize(FakeSinkTaskContext(props, {TopicPartition("t", 0)}))
    task.start(props)
    return task


def sink_record(value: Any, offset: int = 0, topic: str = "t", partition: int = 0) -> SinkRecord:
    return SinkRecord(topic, partition, value=value, kafka_offset=offset)


def poll_until(task: Any, count: int, timeout: float = 5.0) -> list[SourceRecord]:
    out: list[SourceRecord] = []
    deadline = time.monotonic() + timeout
    while len(out) < count:
        assert time.monotonic() < deadline, f"only {len(out)} of {count} records"
        out.extend(task.poll() or [])
    return out


def errors_by_name(connector: Any, props: dict[str, str]) -> dict[str, list[str]]:
    return {v.name: v.errors for v in connector.validate(props)}


# -------------------------------------------------------------------------------------------- common


@pytest.mark.parametrize("cls", [FileStreamSourceConnector, FileStreamSourceTask, FileStreamSinkConnector,
                                 FileStreamSinkTask, SequenceSourceConnector, SequenceSourceTask,
                                 VerifyingSinkConnector, VerifyingSinkTask])
def test_version_is_the_package_version(cls: type) -> None:
    assert cls().version() == connectors.version()


def test_every_builtin_plugin_reports_the_package_version(monkeypatch: pytest.MonkeyPatch) -> None:
    import connect_magics
    import connect_magics._version
    from connect_magics.api.converters import JsonConverter

    assert connectors.version() == connect_magics.__version__ == JsonConverter().version()
    monkeypatch.setattr(connect_magics._version, "__version__", "9.9.9")
    assert connectors.version() == "9.9.9" == FileStreamSourceConnector().version() == JsonConverter().version()


def test_aliases_and_task_classes() -> None:
    assert FileStreamSourceConnector.ALIASES == ("org.apache.kafka.connect.file.FileStreamSourceConnector",)
    assert FileStreamSinkConnector.ALIASES == ("org.apache.kafka.connect.file.FileStreamSinkConnector",)
    assert SequenceSourceConnector.ALIASES == () == VerifyingSinkConnector.ALIASES
    assert FileStreamSourceConnector().task_class() is FileStreamSourceTask
    assert FileStreamSinkConnector().task_class() is FileStreamSinkTask
    assert SequenceSourceConnector().task_class() is SequenceSourceTask
    assert VerifyingSinkConnector().task_class() is VerifyingSinkTask


def test_config_defs_are_documented() -> None:
    for connector in (FileStreamSourceConnector(), FileStreamSinkConnector(), SequenceSourceConnector(),
                      VerifyingSinkConnector()):
        for key in connector.config_def().config_keys().values():
            assert key.documentation, (type(connector).__name__, key.name)


# --------------------------------------------------------------------------------- FileStream source


@pytest.fixture
def source_props(tmp_path: Path) -> dict[str, str]:
    return {"name": "file-source", "file": str(tmp_path / "in.txt"), "topic": "lines"}


def test_file_source_config_def_matches_kafka() -> None:
    keys = FileStreamSourceConnector().config_def().config_keys()
    assert list(keys) == ["file", "topic", "batch.size"]
    assert keys["file"].default is None
    assert not keys["topic"].has_default
    assert keys["batch.size"].default == 2000


def test_file_source_validate(source_props: dict[str, str]) -> None:
    c = FileStreamSourceConnector()
    assert all(not errs for errs in errors_by_name(c, source_props).values())
    assert errors_by_name(c, {**source_props, "topic": "   "})["topic"] == [
        "Invalid value  for configuration topic: String must be non-empty"]
    assert errors_by_name(c, {**source_props, "batch.size": "abcd"})["batch.size"] == [
        "Invalid value abcd for configuration batch.size: Not a number of type INT"]
    assert "Missing required configuration" in errors_by_name(c, {"file": "f"})["topic"][0]
    assert "single topic" in errors_by_name(c, {**source_props, "topic": "a,b"})["topic"][0]
    assert "standard input" in errors_by_name(c, {"topic": "t"})["file"][0]


@pytest.mark.parametrize("change, key, reason", [
    ({"topic": None}, "topic", None),
    ({"topic": "  "}, "topic", "String must be non-empty"),
    ({"topic": "a,b"}, "topic",
     "'topic' in FileStreamSourceConnector configuration requires definition of a single topic"),
    ({"batch.size": "abcd"}, "batch.size", "Not a number of type INT"),
    ({"file": None}, "file", "Reading the standard input is not supported"),
    ({"file": ""}, "file", "Reading the standard input is not supported"),
])
def test_file_source_start_rejects_bad_config(source_props: dict[str, str], change: dict[str, Any], key: str,
                                              reason: str | None) -> None:
    props = {k: v for k, v in {**source_props, **change}.items() if v is not None}
    for target in (FileStreamSourceConnector(), FileStreamSourceTask()):
        with pytest.raises(ConfigException) as info:
            if isinstance(target, FileStreamSourceTask):
                target.initialize(SourceTaskContext(props, FakeOffsetReader()))
            target.start(props)
        if reason is None:
            assert str(info.value) == f'Missing required configuration "{key}" which has no default value.'
        else:
            assert info.value.name == key and info.value.reason.startswith(reason)


def test_file_source_single_task_with_full_config(source_props: dict[str, str]) -> None:
    c = FileStreamSourceConnector()
    props = {**source_props, "transforms": "insert", "transforms.insert.type": "x"}
    c.start(props)
    assert c.task_configs(1) == [props]
    assert c.task_configs(3) == [props]


def test_file_source_alter_offsets_valid(source_props: dict[str, str]) -> None:
    c = FileStreamSourceConnector()
    f = source_props["file"]
    assert c.alter_offsets(source_props, {partition_key({"filename": f}): {"position": 0}}) is True
    assert c.alter_offsets(source_props, {}) is True
    assert c.alter_offsets(source_props, {partition_key({"filename": f}): {"position": 10},
                                          partition_key({"filename": "/other"}): None}) is True


@pytest.mark.parametrize("partition", [None, (), (("filename", "/f"),), (("garbage", "value"),)])
def test_file_source_alter_offsets_tombstones_for_anything(source_props: dict[str, str], partition: Any) -> None:
    assert FileStreamSourceConnector().alter_offsets(source_props, {partition: None}) is True


@pytest.mark.parametrize("partition, offset, message", [
    ((("other_partition_key", "/f"),), {"position": 0}, "Partition objects should contain the key 'filename'"),
    (None, {"position": 0}, "Partition objects cannot be null"),
    ((("filename", "/f"),), {"other_offset_key": 0},
     "Offset objects should either be null or contain the key 'position'"),
    ((("filename", "/f"),), {"position": "nan"},
     "The value for the 'position' key in the offset is expected to be a Long value"),
    ((("filename", "/f"),), {"position": None},
     "The value for the 'position' key in the offset is expected to be a Long value"),
    ((("filename", "/f"),), {"position": 3.14},
     "The value for the 'position' key in the offset is expected to be a Long value"),
    ((("filename", "/f"),), {"position": "10"},
     "The value for the 'position' key in the offset is expected to be a Long value"),
    ((("filename", "/f"),), {"position": True},
     "The value for the 'position' key in the offset is expected to be a Long value"),
    ((("filename", "/f"),), {"position": -420},
     "The value for the 'position' key in the offset should be a non-negative value"),
])
def test_file_source_alter_offsets_invalid(source_props: dict[str, str], partition: Any,
                                           offset: dict[str, Any], message: str) -> None:
    with pytest.raises(ConnectException) as info:
        FileStreamSourceConnector().alter_offsets(source_props, {partition: offset})
    assert str(info.value) == message


def test_file_source_alter_offsets_stdin(source_props: dict[str, str]) -> None:
    props = {k: v for k, v in source_props.items() if k != "file"}
    with pytest.raises(ConnectException) as info:
        FileStreamSourceConnector().alter_offsets(props, {partition_key({"filename": "/f"}): {"position": 0}})
    assert str(info.value) == ("Offsets cannot be modified if the 'file' configuration is unspecified. "
                               "This is because stdin is used for input and offsets are not tracked.")


@pytest.fixture
def fast_source(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(FileStreamSourceTask, "IDLE_WAIT_S", 0.01)


def test_file_source_task_normal_lifecycle(source_props: dict[str, str], fast_source: None) -> None:
    """Kafka's FileStreamSourceTaskTest.testNormalLifecycle, positions included."""
    path = Path(source_props["file"])
    task = source_task(FileStreamSourceTask, source_props)
    with open(path, "wb", buffering=0) as os_:
        assert task.poll() is None
        os_.write(b"partial line")
        assert task.poll() is None
        os_.write(b" finished\n")
        records = task.poll()
        assert len(records) == 1
        r = records[0]
        assert (r.topic, r.value, r.value_schema) == ("lines", "partial line finished", STRING_SCHEMA)
        assert r.source_partition == {"filename": str(path)}
        assert r.source_offset == {"position": 22}
        assert isinstance(r.timestamp, int)
        assert task.poll() is None

        # Different line endings; the final \r is no line until the byte after it is read.
        os_.write(b"line1\rline2\r\nline3\nline4\n\r")
        records = task.poll()
        assert [r.value for r in records] == ["line1", "line2", "line3", "line4"]
        assert [r.source_offset["position"] for r in records] == [28, 35, 41, 47]
        assert all(r.source_partition == {"filename": str(path)} for r in records)

        os_.write(b"subsequent text")
        records = task.poll()
        assert [(r.value, r.source_offset) for r in records] == [("", {"position": 48})]
    task.stop()


def test_file_source_task_utf8_positions_are_bytes(source_props: dict[str, str]) -> None:
    Path(source_props["file"]).write_bytes("héllo\n日本\n\xff\n".encode() + b"bad \xff\n")
    task = source_task(FileStreamSourceTask, source_props)
    records = task.poll()
    assert [r.value for r in records] == ["héllo", "日本", "\xff", "bad \ufffd"]
    assert [r.source_offset["position"] for r in records] == [7, 14, 17, 23]
    task.stop()


@pytest.mark.parametrize("chunk", [1, 2, 3, 4, 5, 7, 64])
def test_file_source_task_plain_and_other_chunks_give_the_same_records(source_props: dict[str, str],
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       chunk: int) -> None:
    """A chunk of ASCII lines ended by "\\n" is decoded and split in one go, any other line by line: small chunks
    mix both ways within one file, and the values and byte positions are the same."""
    monkeypatch.setattr(FileStreamSourceTask, "READ_CHUNK", chunk)
    Path(source_props["file"]).write_bytes(b"ab\ncd\n" + "\u00e9\n".encode() + b"x\r\ny\n\nlast\n")
    task = source_task(FileStreamSourceTask, source_props)
    records = task.poll()
    assert [r.value for r in records] == ["ab", "cd", "\u00e9", "x", "y", "", "last"]
    assert [r.source_offset["position"] for r in records] == [3, 6, 9, 12, 14, 15, 20]
    assert {r.value_schema for r in records} == {STRING_SCHEMA}
    task.stop()


def test_file_source_task_batch_size(source_props: dict[str, str]) -> None:
    line = b"Neque porro quisquam est qui dolorem ipsum quia dolor sit amet, consectetur, adipisci velit...\n"
    Path(source_props["file"]).write_bytes(line * 10_000)
    task = source_task(FileStreamSourceTask, {**source_props, "batch.size": "5000"})
    first, second = task.poll(), task.poll()
    assert len(first) == 5000 and len(second) == 5000
    assert second[-1].source_offset == {"position": len(line) * 10_000}
    assert {r.value for r in first + second} == {line[:-1].decode()}
    task.stop()


def test_file_source_task_long_lines(source_props: dict[str, str]) -> None:
    long_line = b"*" * (300 * 1024)
    Path(source_props["file"]).write_bytes(long_line + b"\nshort\n")
    task = source_task(FileStreamSourceTask, source_props)
    records = task.poll()
    assert [len(r.value) for r in records] == [len(long_line), 5]
    task.stop()


def test_file_source_task_resumes_from_committed_offset(source_props: dict[str, str]) -> None:
    path = source_props["file"]
    Path(path).write_bytes(b"one\ntwo\nthree\n")
    reader = FakeOffsetReader()
    reader.commit({"filename": path}, {"position": 4})
    task = source_task(FileStreamSourceTask, source_props, reader)
    records = task.poll()
    assert [(r.value, r.source_offset["position"]) for r in records] == [("two", 8), ("three", 14)]
    assert reader.lookups == [{"filename": path}]
    task.stop()

    # A restart after committing the last offset reads nothing old, then what is appended.
    reader.commit({"filename": path}, {"position": 14})
    task = source_task(FileStreamSourceTask, source_props, reader)
    assert task.poll() is None
    with open(path, "ab") as f:
        f.write(b"four\n")
    assert [r.value for r in task.poll()] == ["four"]
    task.stop()


def test_file_source_task_committed_offset_without_position(source_props: dict[str, str]) -> None:
    Path(source_props["file"]).write_bytes(b"one\n")
    reader = FakeOffsetReader({partition_key({"filename": source_props["file"]}): {"other": 1}})
    assert [r.value for r in source_task(FileStreamSourceTask, source_props, reader).poll()] == ["one"]


@pytest.mark.parametrize("position, message", [("4", "Offset position is the incorrect type"),
                                               (-1, "Offset position -1 is negative")])
def test_file_source_task_rejects_bad_committed_offset(source_props: dict[str, str], position: Any,
                                                       message: str) -> None:
    Path(source_props["file"]).write_bytes(b"one\n")
    reader = FakeOffsetReader({partition_key({"filename": source_props["file"]}): {"position": position}})
    task = source_task(FileStreamSourceTask, source_props, reader)
    with pytest.raises(ConnectException, match=message):
        task.poll()


def test_file_source_task_waits_for_missing_file(source_props: dict[str, str], fast_source: None) -> None:
    task = source_task(FileStreamSourceTask, source_props)
    assert task.poll() is None
    Path(source_props["file"]).write_text("hello\n")
    assert [r.value for r in task.poll()] == ["hello"]
    task.stop()


class RecordedWaits(threading.Event):
    """A stop event that records how long each wait asked for, and returns at once."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[float] = []

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.append(timeout or 0.0)
        return self.is_set()


def test_file_source_task_waits_longer_while_idle_up_to_a_second_and_briefly_again_after_data(
        source_props: dict[str, str]) -> None:
    path = Path(source_props["file"])
    path.write_text("")
    task = source_task(FileStreamSourceTask, source_props)
    task._stopping = waits = RecordedWaits()
    assert [task.poll() for _ in range(6)] == [None] * 6
    assert waits.waits == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0]
    path.write_text("a\n")
    assert [r.value for r in task.poll()] == ["a"]
    assert task.poll() is None and waits.waits[-1] == 0.1  # data came: the next empty poll waits briefly


def test_file_source_task_stop(source_props: dict[str, str]) -> None:
    Path(source_props["file"]).write_text("a\n")
    task = source_task(FileStreamSourceTask, source_props)
    task.IDLE_WAIT_S = 5.0
    waiting = threading.Thread(target=task.poll)
    assert [r.value for r in task.poll()] == ["a"]
    started = time.monotonic()
    waiting.start()
    task.stop()
    waiting.join(2)
    assert not waiting.is_alive() and time.monotonic() - started < 1
    assert task.poll() is None


def test_file_source_task_rejects_unreadable_path(tmp_path: Path, source_props: dict[str, str]) -> None:
    task = source_task(FileStreamSourceTask, {**source_props, "file": str(tmp_path)})
    with pytest.raises(ConnectException, match="Error while trying to open file"):
        task.poll()


# ----------------------------------------------------------------------------------- FileStream sink


def test_file_sink_connector(tmp_path: Path) -> None:
    c = FileStreamSinkConnector()
    assert list(c.config_def().config_keys()) == ["file"]
    assert c.config_def().config_keys()["file"].default is None
    props = {"name": "sink", "topics": "a,b", "file": str(tmp_path / "out.txt")}
    c.start(props)
    assert c.task_configs(3) == [props] * 3
    assert c.alter_offsets(props, {TopicPartition("a", 0): 5, TopicPartition("b", 1): None}) is True
    c.stop()


def test_file_sink_task_appends_lines_and_fsyncs_on_flush(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out.txt"
    out.write_text("existing\n")
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    task = sink_task(FileStreamSinkTask, {"file": str(out), "topics": "t"})
    task.put(SinkRecords([sink_record("line1", 0), sink_record("line2", 1)]))
    task.put(SinkRecords([]))
    task.put(SinkRecords([sink_record(42, 2), sink_record({"a": 1}, 3), sink_record("日本", 4)]))
    assert synced == []
    offsets = {TopicPartition("t", 0): 5}
    assert task.pre_commit(offsets) == offsets
    assert len(synced) == 1
    assert out.read_text(encoding="utf-8") == "existing\nline1\nline2\n42\n{a=1}\n日本\n"
    task.stop()
    task.stop()


def test_file_sink_task_creates_missing_file(tmp_path: Path) -> None:
    out = tmp_path / "new.txt"
    task = sink_task(FileStreamSinkTask, {"file": str(out)})
    assert out.exists()
    task.put(SinkRecords([sink_record("x")]))
    task.flush({})
    task.stop()
    assert out.read_text() == "x\n"


@pytest.mark.parametrize("kind", ["/dev/null", "a pipe"])
def test_file_sink_task_flushes_to_a_device_or_a_pipe(kind: str, tmp_path: Path) -> None:
    """fsync fails with EINVAL on a character device or a pipe; Kafka's task flushes them (issue 14)."""
    path = "/dev/null" if kind == "/dev/null" else str(tmp_path / "fifo")
    if kind == "a pipe":
        os.mkfifo(path)
        reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    task = sink_task(FileStreamSinkTask, {"file": path})
    task.put(SinkRecords([sink_record("x")]))
    offsets = {TopicPartition("t", 0): 1}
    assert task.pre_commit(offsets) == offsets
    task.stop()
    if kind == "a pipe":
        assert os.read(reader, 10) == b"x\n"
        os.close(reader)


def test_file_sink_task_bad_path(tmp_path: Path) -> None:
    path = tmp_path / "missing-dir" / "out.txt"
    with pytest.raises(ConnectException, match=re.escape(f"Couldn't find or create file '{path}' for FileStreamSinkTask")):
        sink_task(FileStreamSinkTask, {"file": str(path)})


def test_file_sink_task_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    task = sink_task(FileStreamSinkTask, {"topics": "t"})
    task.put(SinkRecords([sink_record("to stdout"), sink_record("again")]))
    task.flush({})
    task.stop()
    assert capsys.readouterr().out == "to stdout\nagain\n"


def test_file_source_to_sink_round_trip(tmp_path: Path) -> None:
    src, dst = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_text("".join(f"line {i}\n" for i in range(100)))
    source = source_task(FileStreamSourceTask, {"file": str(src), "topic": "t", "batch.size": "30"})
    sink = sink_task(FileStreamSinkTask, {"file": str(dst), "topics": "t"})
    for i, r in enumerate(poll_until(source, 100)):
        sink.put(SinkRecords([sink_record(r.value, i)]))
    sink.flush({})
    source.stop()
    sink.stop()
    assert dst.read_text() == src.read_text()


# ------------------------------------------------------------------------------------------- sequence


def test_sequence_config_def() -> None:
    keys = SequenceSourceConnector().config_def().config_keys()
    assert {n: k.default for n, k in keys.items() if k.has_default} == {
        "records": -1, "rate": 0.0, "batch.size": 1000, "key.mode": "sequence", "value.size": 0, "start": 0,
        "transaction.records": 0}
    assert not keys["topic"].has_default


@pytest.mark.parametrize("change, key, reason", [
    ({"topic": ""}, "topic", "String must be non-empty"),
    ({"records": "-2"}, "records", "Value must be at least -1"),
    ({"records": "many"}, "records", "Not a number of type LONG"),
    ({"rate": "-1"}, "rate", "Value must be at least 0"),
    ({"batch.size": "0"}, "batch.size", "Value must be at least 1"),
    ({"key.mode": "random"}, "key.mode", "String must be one of: none, sequence, task"),
    ({"value.size": "-1"}, "value.size", "Value must be at least 0"),
])
def test_sequence_rejects_bad_config(change: dict[str, str], key: str, reason: str) -> None:
    props = {"topic": "t", **change}
    with pytest.raises(ConfigException) as info:
        SequenceSourceConnector().start(props)
    assert (info.value.name, info.value.reason) == (key, reason)
    with pytest.raises(ConfigException):
        source_task(SequenceSourceTask, props)
    assert errors_by_name(SequenceSourceConnector(), props)[key]


def test_sequence_requires_topic() -> None:
    with pytest.raises(ConfigException, match='Missing required configuration "topic"'):
        SequenceSourceConnector().start({})


def test_sequence_task_configs_carry_task_ids() -> None:
    c = SequenceSourceConnector()
    props = {"name": "seq", "topic": "t", "records": "5", "tasks.max": "3"}
    c.start(props)
    assert c.task_configs(3) == [{**props, "task.id": str(i)} for i in range(3)]


@pytest.mark.parametrize("task_id", ["-1", "x"])
def test_sequence_task_rejects_bad_task_id(task_id: str) -> None:
    with pytest.raises(ConfigException) as info:
        source_task(SequenceSourceTask, {"topic": "t", "task.id": task_id})
    assert info.value.name == "task.id"


def test_sequence_task_produces_exactly_the_range() -> None:
    task = source_task(SequenceSourceTask, {"topic": "nums", "records": "25", "batch.size": "10",
                                            "start": "100", "task.id": "2", "value.size": "3"})
    batches = [task.poll(), task.poll(), task.poll()]
    assert [len(b) for b in batches] == [10, 10, 5]
    records = [r for b in batches for r in b]
    assert [r.value["seq"] for r in records] == list(range(100, 125))
    first = records[0]
    assert first.topic == "nums"
    assert first.source_partition == {"task": 2}
    assert first.source_offset == {"seq": 100}
    assert first.key == "100" and first.key_schema is None and first.value_schema is None
    assert first.value == {"task": 2, "seq": 100, "payload": "xxx"}
    task._stopping = waits = RecordedWaits()
    assert task.poll() is None and waits.waits == [SequenceSourceTask.MAX_WAIT_S]  # finished: waits, then None
    task.stop()


@pytest.mark.parametrize("mode, expected", [("none", [None, None]), ("sequence", ["0", "1"]),
                                            ("task", ["7", "7"])])
def test_sequence_key_modes(mode: str, expected: list[str | None]) -> None:
    task = source_task(SequenceSourceTask, {"topic": "t", "records": "2", "key.mode": mode, "task.id": "7"})
    assert [r.key for r in task.poll()] == expected


def test_sequence_tasks_are_deterministic_and_disjoint_by_partition() -> None:
    c = SequenceSourceConnector()
    c.start({"topic": "t", "records": "50", "batch.size": "7"})
    seen: set[tuple[int, int]] = set()
    for cfg in c.task_configs(4):
        task = source_task(SequenceSourceTask, cfg)
        for r in poll_until(task, 50):
            assert r.source_partition == {"task": r.value["task"]}
            seen.add((r.value["task"], r.value["seq"]))
        assert task.poll() is None
    assert seen == {(t, s) for t in range(4) for s in range(50)}


def test_sequence_resumes_after_committed_offset() -> None:
    props = {"topic": "t", "records": "10", "task.id": "1", "start": "5"}
    reader = FakeOffsetReader()
    reader.commit({"task": 1}, {"seq": 9})
    reader.commit({"task": 0}, {"seq": 13})  # another task's partition is ignored
    task = source_task(SequenceSourceTask, props, reader)
    assert [r.value["seq"] for r in task.poll()] == [10, 11, 12, 13, 14]
    assert task.poll() is None

    reader.commit({"task": 1}, {"seq": 14})
    assert source_task(SequenceSourceTask, props, reader).poll() is None
    reader.commit({"task": 1}, {"seq": 0})  # before 'start': start from 'start'
    assert [r.value["seq"] for r in source_task(SequenceSourceTask, props, reader).poll()][:1] == [5]


def test_sequence_rejects_bad_committed_offset() -> None:
    reader = FakeOffsetReader({partition_key({"task": 0}): {"seq": "3"}})
    with pytest.raises(ConnectException, match="incorrect type"):
        source_task(SequenceSourceTask, {"topic": "t"}, reader)


def test_sequence_unbounded() -> None:
    task = source_task(SequenceSourceTask, {"topic": "t", "batch.size": "100"})
    records = [r for _ in range(5) for r in task.poll()]
    assert [r.value["seq"] for r in records] == list(range(500))


def test_sequence_rate_limit_without_busy_waiting() -> None:
    task = source_task(SequenceSourceTask, {"topic": "t", "rate": "40", "batch.size": "1000"})
    received, polls, longest = 0, 0, 0.0
    started, cpu_started = time.monotonic(), time.process_time()
    while time.monotonic() - started < 0.5:
        t0 = time.monotonic()
        received += len(task.poll() or [])
        longest = max(longest, time.monotonic() - t0)
        polls += 1
    elapsed = time.monotonic() - started
    assert 0.5 * 40 * elapsed <= received <= 40 * elapsed + 2
    assert longest < 0.2
    assert polls < 200, "poll should wait for the next record instead of returning at once"
    assert time.process_time() - cpu_started < 0.4
    task.stop()


def test_sequence_rate_limit_at_high_rates() -> None:
    task = source_task(SequenceSourceTask, {"topic": "t", "rate": "20000", "batch.size": "500",
                                            "records": "2000"})
    started = time.monotonic()
    records = poll_until(task, 2000)
    assert [r.value["seq"] for r in records] == list(range(2000))
    assert 0.05 <= time.monotonic() - started < 2.0


def test_sequence_stop_ends_polling() -> None:
    task = source_task(SequenceSourceTask, {"topic": "t", "rate": "0.1"})
    assert len(task.poll()) == 1
    task.stop()
    started = time.monotonic()
    assert task.poll() is None
    assert time.monotonic() - started < 0.05


def test_sequence_alter_offsets() -> None:
    c = SequenceSourceConnector()
    props = {"topic": "t"}
    assert c.alter_offsets(props, {partition_key({"task": 0}): {"seq": 41},
                                   partition_key({"task": 3}): None, None: None}) is True
    bad = [
        (partition_key({"task": 0}), {"other": 1}, "Offset objects should either be null or contain the key 'seq'"),
        (partition_key({"task": 0}), {"seq": "1"}, "The value for the 'seq' key in the offset is expected"),
        (partition_key({"task": 0}), {"seq": 1.5}, "The value for the 'seq' key in the offset is expected"),
        (partition_key({"other": 0}), {"seq": 1}, "Partition objects should contain the key 'task'"),
        (partition_key({"task": "0"}), {"seq": 1}, "The value for the 'task' key in the partition"),
        (partition_key({"task": -1}), {"seq": 1}, "The value for the 'task' key in the partition"),
        (None, {"seq": 1}, "Partition objects cannot be null"),
    ]
    for partition, offset, message in bad:
        with pytest.raises(ConnectException) as info:
            c.alter_offsets(props, {partition: offset})
        assert str(info.value).startswith(message)


# ------------------------------------------------------------------------------------------ verifying


@pytest.fixture(autouse=True)
def clean_registry() -> Any:
    verifying.clear()
    yield
    verifying.clear()


def test_verifying_records_received_and_flushed() -> None:
    task = sink_task(VerifyingSinkTask, {"name": "v1", "topics": "t"})
    first = [sink_record("a", 0), sink_record("b", 1)]
    task.put(first)
    task.put(SinkRecords([]))
    assert verifying.received("v1") == first
    assert verifying.flushed("v1") == []
    assert task.pre_commit({TopicPartition("t", 0): 2}) == {TopicPartition("t", 0): 2}
    assert verifying.flushed("v1") == first
    third = sink_record("c", 2)
    task.put(SinkRecords([third]))
    assert verifying.received("v1") == [*first, third]
    assert verifying.flushed("v1") == first
    task.stop()
    assert verifying.flushed("v1") == first
    assert VerifyingSinkConnector.received("v1") == verifying.received("v1")
    assert VerifyingSinkConnector.flushed("v1") == first
    # copies: callers cannot corrupt the registry
    verifying.received("v1").clear()
    assert len(verifying.received("v1")) == 3
    verifying.clear("v1")
    assert verifying.received("v1") == [] == verifying.flushed("v1")
    assert verifying.received("never-used") == []


def test_verifying_name_resolution() -> None:
    c = VerifyingSinkConnector()
    c.start({"name": "conn", "topics": "t"})
    assert all(cfg["verifying.name"] == "conn" for cfg in c.task_configs(2))
    c.start({"name": "conn", "verifying.name": "other", "topics": "t"})
    assert c.task_configs(1)[0]["verifying.name"] == "other"
    task = sink_task(VerifyingSinkTask, {"name": "conn", "verifying.name": "other"})
    task.put(SinkRecords([sink_record("x")]))
    assert len(verifying.received("other")) == 1 and verifying.received("conn") == []
    with pytest.raises(ConfigException) as info:
        VerifyingSinkConnector().start({"topics": "t"})
    assert info.value.name == "verifying.name"
    with pytest.raises(ConfigException):
        sink_task(VerifyingSinkTask, {"verifying.name": ""})
    assert VerifyingSinkConnector().alter_offsets({}, {TopicPartition("t", 0): None}) is True


def test_verifying_fail_on_put_after() -> None:
    task = sink_task(VerifyingSinkTask, {"name": "v2", "fail.on.put.after": "3"})
    task.put(SinkRecords([sink_record(i, i) for i in range(2)]))
    with pytest.raises(ConnectException, match="fail.on.put.after=3"):
        task.put(SinkRecords([sink_record(i, i) for i in range(2, 5)]))
    assert [r.value for r in verifying.received("v2")] == [0, 1, 2]
    task.put(SinkRecords([]))  # empty puts never fail
    with pytest.raises(ConnectException):
        task.put(SinkRecords([sink_record(9, 9)]))
    zero = sink_task(VerifyingSinkTask, {"name": "v3", "fail.on.put.after": "0"})
    with pytest.raises(ConnectException):
        zero.put(SinkRecords([sink_record("x")]))
    assert verifying.received("v3") == []


@pytest.mark.parametrize("props, key", [({"fail.on.put.after": "-1"}, "fail.on.put.after"),
                                        ({"put.delay.ms": "-5"}, "put.delay.ms"),
                                        ({"put.delay.ms": "soon"}, "put.delay.ms")])
def test_verifying_rejects_bad_config(props: dict[str, str], key: str) -> None:
    with pytest.raises(ConfigException) as info:
        VerifyingSinkConnector().start({"name": "v", **props})
    assert info.value.name == key


def test_verifying_put_delay() -> None:
    task = sink_task(VerifyingSinkTask, {"name": "slow", "put.delay.ms": "150"})
    started = time.monotonic()
    task.put(SinkRecords([sink_record("x")]))
    assert time.monotonic() - started >= 0.14
    started = time.monotonic()
    task.put(SinkRecords([]))
    assert time.monotonic() - started < 0.1


def test_verifying_close_drops_unflushed_records_of_revoked_partitions() -> None:
    task = sink_task(VerifyingSinkTask, {"name": "v4"})
    kept, dropped = sink_record("keep", 0, "t", 0), sink_record("drop", 0, "t", 1)
    task.put(SinkRecords([kept, dropped]))
    task.close([TopicPartition("t", 1)])
    task.flush({})
    assert verifying.flushed("v4") == [kept]
    assert verifying.received("v4") == [kept, dropped]


def test_verifying_registry_is_thread_safe() -> None:
    tasks = [sink_task(VerifyingSinkTask, {"name": "many"}) for _ in range(8)]

    def run(i: int) -> None:
        for n in range(200):
            tasks[i].put(SinkRecords([sink_record((i, n), n, "t", i)]))
            if n % 50 == 0:
                tasks[i].flush({})
        tasks[i].flush({})

    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r.value for r in verifying.received("many")) == [(i, n) for i in range(8) for n in range(200)]
    assert len(verifying.flushed("many")) == 1600
    for i in range(8):
        assert [r.value[1] for r in verifying.received("many") if r.value[0] == i] == list(range(200))
