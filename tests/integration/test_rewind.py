"""Rewinding a sink connector by time against the real broker: records produced with known timestamps,
``rt.rewind`` / ``%connect rewind`` re-deliver exactly those from the time on, a dry run and bad input change
nothing, and ``undo_rewind`` restores the earlier offsets."""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from helpers import wait_until
from IPython.core.interactiveshell import InteractiveShell

from connect_magics import ConnectRestError, ConnectRuntime
from connect_magics.remote import RemoteUnsupportedError

STRING = "org.apache.kafka.connect.storage.StringConverter"
HOUR_MS = 3_600_000


@pytest.fixture(scope="module")
def rt(bootstrap: str) -> Iterator[ConnectRuntime]:
    runtime = ConnectRuntime(bootstrap, f"rewind-{uuid.uuid4().hex[:8]}", {"offset.flush.interval.ms": "200"})
    try:
        yield runtime
    finally:
        runtime.close()


def produce_timed(bootstrap: str, topic: str, stamps: dict[int, list[int]]) -> None:
    """Per partition, one record per timestamp (epoch ms), valued ``p{partition}-{index}``."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, len(stamps), 1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": bootstrap})
    for partition, times in stamps.items():
        for i, ts in enumerate(times):
            producer.produce(topic, f"p{partition}-{i}".encode(), partition=partition, timestamp=ts)
    assert producer.flush(30) == 0


def file_sink(rt: ConnectRuntime, name: str, topic: str, out: Path) -> None:
    rt.create_connector(name, {"connector.class": "FileStreamSink", "topics": topic, "file": str(out),
                               "value.converter": STRING, "key.converter": STRING})


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def committed(rt: ConnectRuntime, name: str) -> dict[tuple[str, int], int]:
    return {(e["partition"]["kafka_topic"], e["partition"]["kafka_partition"]): e["offset"]["kafka_offset"]
            for e in rt.get_offsets(name)["offsets"]}


def all_consumed(rt: ConnectRuntime, name: str, topic: str, out: Path, per_partition: int, partitions: int) -> None:
    wanted = {(topic, p): per_partition for p in range(partitions)}
    wait_until(lambda: committed(rt, name) == wanted and len(lines(out)) == per_partition * partitions, 30,
               message=lambda: f"every record written and committed: {committed(rt, name)}, {len(lines(out))} lines")


def test_rewind_to_a_time_redelivers_exactly_the_records_from_it_and_undo_restores(
        rt: ConnectRuntime, bootstrap: str, tmp_path: Path) -> None:
    topic, name, out = f"rewind-{uuid.uuid4().hex[:8]}", f"rewind-sink-{uuid.uuid4().hex[:6]}", tmp_path / "out.txt"
    t0 = int(time.time() * 1000) - HOUR_MS
    produce_timed(bootstrap, topic, {0: [t0 + i * 1000 for i in range(10)], 1: [t0 + i * 1000 + 500 for i in range(10)]})
    file_sink(rt, name, topic, out)
    all_consumed(rt, name, topic, out, 10, 2)

    # a dry run shows the plan and changes nothing
    plan = rt.rewind(name, to=t0 + 5000, apply=False)
    assert plan.to_dict("records") == [
        {"kafka_topic": topic, "kafka_partition": 0, "kafka_offset_before": 10, "kafka_offset": 5},
        {"kafka_topic": topic, "kafka_partition": 1, "kafka_offset_before": 10, "kafka_offset": 5}]
    assert committed(rt, name) == {(topic, 0): 10, (topic, 1): 10}
    assert rt.connector_status(name)["connector"]["state"] == "RUNNING"

    frame = rt.rewind(name, to=t0 + 5000)  # p0: records 5..9 (at or after t0+5000); p1: 5..9 (t0+5500 on)
    assert list(frame["kafka_offset"]) == [5, 5]
    wait_until(lambda: len(lines(out)) == 30 and committed(rt, name) == {(topic, 0): 10, (topic, 1): 10}, 30,
               message="the 10 rewound records written again, and committed")
    again = Counter(lines(out)) - Counter(f"p{p}-{i}" for p in range(2) for i in range(10))
    assert again == Counter(f"p{p}-{i}" for p in range(2) for i in range(5, 10))
    assert rt.connector_status(name)["connector"]["state"] == "RUNNING"

    # rewind once more, stopped this time: the connector stays STOPPED, and undo puts the offsets back
    rt.stop_connector(name)
    rt.rewind(name, to=t0)
    assert committed(rt, name) == {(topic, 0): 0, (topic, 1): 0}
    assert rt.connector_status(name)["connector"]["state"] == "STOPPED"
    undone = rt.undo_rewind(name)
    assert list(undone["kafka_offset"]) == [10, 10] and list(undone["kafka_offset_before"]) == [0, 0]
    assert committed(rt, name) == {(topic, 0): 10, (topic, 1): 10}
    assert rt.connector_status(name)["connector"]["state"] == "STOPPED"
    rt.delete_connector(name)


def test_rewind_by_a_duration_keeps_a_paused_connector_paused(rt: ConnectRuntime, bootstrap: str,
                                                               tmp_path: Path) -> None:
    topic, name, out = f"rewind-{uuid.uuid4().hex[:8]}", f"rewind-by-{uuid.uuid4().hex[:6]}", tmp_path / "out.txt"
    now = int(time.time() * 1000)
    produce_timed(bootstrap, topic, {0: [now - 3 * HOUR_MS] * 4 + [now - 10 * 60_000] * 3})
    file_sink(rt, name, topic, out)
    all_consumed(rt, name, topic, out, 7, 1)
    rt.pause_connector(name)
    wait_until(lambda: rt.connector_status(name)["connector"]["state"] == "PAUSED", 30, message="PAUSED")
    frame = rt.rewind(name, by="1h")
    assert frame.to_dict("records") == [{"kafka_topic": topic, "kafka_partition": 0, "kafka_offset_before": 7,
                                         "kafka_offset": 4}]
    wait_until(lambda: rt.connector_status(name)["connector"]["state"] == "PAUSED", 30, message="PAUSED again")
    assert len(lines(out)) == 7  # paused: nothing re-delivered yet
    rt.resume_connector(name)
    wait_until(lambda: len(lines(out)) == 10, 30, message="the last hour's 3 records again")
    assert lines(out)[7:] == ["p0-4", "p0-5", "p0-6"]
    rt.delete_connector(name)


def test_bad_rewinds_are_refused_and_change_nothing(rt: ConnectRuntime, bootstrap: str, tmp_path: Path) -> None:
    topic, name, out = f"rewind-{uuid.uuid4().hex[:8]}", f"rewind-bad-{uuid.uuid4().hex[:6]}", tmp_path / "out.txt"
    produce_timed(bootstrap, topic, {0: [int(time.time() * 1000)] * 3})
    file_sink(rt, name, topic, out)
    all_consumed(rt, name, topic, out, 3, 1)
    source = f"rewind-src-{uuid.uuid4().hex[:6]}"
    rt.create_connector(source, {"connector.class": "FileStreamSource", "file": str(tmp_path / "in.txt"),
                                  "topic": f"{topic}-src"})
    cases = [
        (lambda: rt.rewind(name), 400, "one of 'to' (a time) or 'by' (a duration)"),
        (lambda: rt.rewind(name, to="2026-01-01", by="1h"), 400, "one of 'to' (a time) or 'by' (a duration)"),
        (lambda: rt.rewind(name, to="yesterday-ish"), 400, "Invalid value 'yesterday-ish' for 'to': not a time"),
        (lambda: rt.rewind(name, by="-5m"), 400, "Invalid value '-5m' for 'by': must be a positive duration"),
        (lambda: rt.rewind(source, by="1h"), 400, f"Connector {source} is not a sink connector"),
        (lambda: rt.rewind("no-such-connector", by="1h"), 404, "Connector no-such-connector not found"),
        (lambda: rt.undo_rewind(name), 400, f"Connector {name} has no rewind to undo in this runtime"),
    ]
    for call, status, message in cases:
        with pytest.raises(ConnectRestError) as info:
            call()
        assert info.value.status == status and message in info.value.message, info.value.message
    assert committed(rt, name) == {(topic, 0): 3}
    assert rt.connector_status(name)["connector"]["state"] == "RUNNING"
    assert len(lines(out)) == 3
    rt.delete_connector(source)
    rt.delete_connector(name)


def test_the_rewind_magic(bootstrap: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "connect_magics")
    group = f"rewind-magic-{uuid.uuid4().hex[:8]}"
    ip.run_line_magic("config", f"ConnectMagics.bootstrap_servers = {bootstrap!r}")
    ip.run_line_magic("config", f"ConnectMagics.group_id = {group!r}")
    try:
        ip.run_line_magic("connect", "start -o rt")
        rt = ip.user_ns["rt"]
        topic, name, out = f"rewind-{uuid.uuid4().hex[:8]}", "rewind-magic", tmp_path / "out.txt"
        t0 = int(time.time() * 1000) - HOUR_MS
        produce_timed(bootstrap, topic, {0: [t0 + i for i in range(6)]})
        file_sink(rt, name, topic, out)
        all_consumed(rt, name, topic, out, 6, 1)
        capsys.readouterr()
        frame = ip.run_line_magic("connect", f"rewind {name} --to {t0 + 2} --dry-run -o plan")
        assert ip.user_ns["plan"] is frame and list(frame["kafka_offset"]) == [2]
        assert "nothing changed: --dry-run" in capsys.readouterr().out
        assert committed(rt, name) == {(topic, 0): 6}
        ip.run_line_magic("connect", f"rewind {name} --to {t0 + 2}")
        assert f"`%connect rewind {name} --undo` takes it back" in capsys.readouterr().out
        wait_until(lambda: len(lines(out)) == 10, 30, message="records 2..5 again")
        ip.run_line_magic("connect", f"rewind {name} --undo")
        assert "the offsets before its last rewind are back" in capsys.readouterr().out
        with pytest.raises(Exception, match="one of the arguments --to --by --undo is required"):
            ip.run_line_magic("connect", f"rewind {name}")
    finally:
        ip.run_line_magic("unload_ext", "connect_magics")


def test_a_remote_runtime_says_why_it_cannot_rewind() -> None:
    from connect_magics.remote import RemoteRuntime

    remote = RemoteRuntime("http://127.0.0.1:9")
    with pytest.raises(RemoteUnsupportedError, match="offsets for that time"):
        remote.rewind("x", by="1h")


def test_the_offsets_editor_loads_a_rewind_for_review(rt: ConnectRuntime, bootstrap: str, tmp_path: Path) -> None:
    from connect_magics.notebook.offsets_editor import OffsetsEditor

    topic, name, out = f"rewind-{uuid.uuid4().hex[:8]}", f"rewind-ed-{uuid.uuid4().hex[:6]}", tmp_path / "out.txt"
    t0 = int(time.time() * 1000) - HOUR_MS
    produce_timed(bootstrap, topic, {0: [t0 + i * 1000 for i in range(6)]})
    file_sink(rt, name, topic, out)
    all_consumed(rt, name, topic, out, 6, 1)
    editor = OffsetsEditor(rt, name, background=False)
    assert not editor.rewind_to("not a time")  # refused, naming the value; nothing loaded
    assert "Invalid value 'not a time' for 'to'" in editor.message.value and not editor.edits
    assert editor.rewind_to(str(t0 + 4000))
    assert editor.edits == {(0, "kafka_offset"): "4"}
    assert committed(rt, name) == {(topic, 0): 6}  # loaded for review only
    assert not editor.apply()  # RUNNING: asks first
    editor.confirm()
    wait_until(lambda: len(lines(out)) == 8, 30, message="records 4 and 5 again")
    assert rt.connector_status(name)["connector"]["state"] == "RUNNING"
    assert editor.rewind_to("2h")  # two hours ago: every record from the beginning
    assert editor.edits == {(0, "kafka_offset"): "0"}
    rt.delete_connector(name)
