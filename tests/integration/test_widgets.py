"""The notebook widgets driven as a front end drives them (widget values set, buttons clicked through their
handlers) against the session broker, with the effect checked in Kafka."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from helpers import wait_until
from IPython.core.interactiveshell import InteractiveShell

from connect_magics import ConnectRuntime
from connect_magics.notebook.offsets_editor import OffsetsEditor
from connect_magics.storage.group_offsets import list_group_offsets

JSON = {"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false"}
ALTERED = "The offsets for this connector have been altered successfully"
RESET = "The offsets for this connector have been reset successfully"


@pytest.fixture(scope="module")
def rt(bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConnectRuntime]:
    runtime = ConnectRuntime(bootstrap, f"widgets-{tmp_path_factory.mktemp('w').name}",
                             {"offset.flush.interval.ms": "200"})
    try:
        yield runtime
    finally:
        runtime.close()


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)


def produce(bootstrap: str, topic: str, counts: dict[int, int]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for partition, n in counts.items():
        for i in range(n):
            producer.produce(topic, json.dumps({"i": i}).encode(), partition=partition)
    assert producer.flush(30) == 0


def group_offsets(bootstrap: str, name: str) -> dict[tuple[str, int], int]:
    return list_group_offsets({"bootstrap.servers": bootstrap}, f"connect-{name}")


def sequence_counts(bootstrap: str, topic: str, expected: int) -> Counter:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"read-{topic}", "auto.offset.reset": "earliest",
                         "enable.auto.commit": "false"})
    consumer.subscribe([topic])
    seen: Counter = Counter()
    try:
        def read_all() -> bool:
            for m in consumer.consume(500, 0.5):
                if m.error() is None:
                    v = json.loads(m.value())
                    seen[(v["task"], v["seq"])] += 1
            return sum(seen.values()) >= expected
        wait_until(read_all, 30, message=f"{expected} records in {topic}")
    finally:
        consumer.close()
    return seen


def state(rt: ConnectRuntime, name: str) -> str:
    return rt.connector_status(name)["connector"]["state"]


@pytest.fixture
def stopped_sink(rt: ConnectRuntime, bootstrap: str, unique: str) -> tuple[str, str]:
    """A stopped VerifyingSink that read 6, 4 and 2 records of a three-partition topic."""
    topic, name = f"ed-snk-{unique}", f"ed-snk-{unique}"
    create_topic(bootstrap, topic, 3)
    produce(bootstrap, topic, {0: 6, 1: 4, 2: 2})
    rt.create_connector(name, {"connector.class": "VerifyingSink", "topics": topic, **JSON})
    wait_until(lambda: group_offsets(bootstrap, name) == {(topic, 0): 6, (topic, 1): 4, (topic, 2): 2}, 30,
               message="the sink read everything")
    rt.stop_connector(name)
    return name, topic


# -- offsets editor ------------------------------------------------------------------------------------------


def test_editor_edit_and_apply_alters_only_the_edited_sink_partition(rt: ConnectRuntime, bootstrap: str,
                                                                     stopped_sink: tuple[str, str]) -> None:
    name, topic = stopped_sink
    editor = OffsetsEditor(rt, name)
    assert [lab["kafka_partition"].value for lab in editor.labels] == ["0", "1", "2"]
    assert editor.cells[0]["kafka_offset"].value == "6"
    editor.cells[0]["kafka_offset"].value = "2"  # what typing into the cell does
    assert editor.edits == {(0, "kafka_offset"): "2"}
    assert editor.cells[0]["kafka_offset"].layout.border and not editor.cells[1]["kafka_offset"].layout.border
    assert "kafka_offset=2*" in repr(editor)
    editor.apply_button.click()
    assert editor.message.value == ALTERED and editor.answer == {"message": ALTERED}
    assert group_offsets(bootstrap, name) == {(topic, 0): 2, (topic, 1): 4, (topic, 2): 2}
    assert editor.edits == {} and editor.cells[0]["kafka_offset"].value == "2"  # read back after Apply


def test_editor_empty_offset_cell_resets_that_partition(rt: ConnectRuntime, bootstrap: str,
                                                        stopped_sink: tuple[str, str]) -> None:
    name, topic = stopped_sink
    editor = OffsetsEditor(rt, name)
    editor.cells[1]["kafka_offset"].value = ""
    editor.apply_button.click()
    assert editor.message.value == ALTERED
    assert group_offsets(bootstrap, name) == {(topic, 0): 6, (topic, 2): 2}


@pytest.mark.parametrize("text, reason", [("-1", "kafka_offset: -1 is negative"),
                                          ("abc", "kafka_offset: 'abc' is not an integer"),
                                          ("1.5", "kafka_offset: '1.5' is not an integer")])
def test_editor_refuses_a_bad_edit_and_changes_nothing(rt: ConnectRuntime, bootstrap: str,
                                                       stopped_sink: tuple[str, str], text: str, reason: str) -> None:
    name, topic = stopped_sink
    editor = OffsetsEditor(rt, name)
    editor.cells[0]["kafka_offset"].value = "1"
    editor.cells[2]["kafka_offset"].value = text
    editor.apply_button.click()
    assert "Not applied, nothing was changed" in editor.message.value
    assert f"row 3 (kafka_topic={topic}, kafka_partition=2): {reason}" in editor.message.value
    assert editor.answer is None and len(editor.edits) == 2  # the edits stay, to be corrected
    assert group_offsets(bootstrap, name) == {(topic, 0): 6, (topic, 1): 4, (topic, 2): 2}


def test_editor_refuses_unknown_sink_partitions(rt: ConnectRuntime, bootstrap: str,
                                                stopped_sink: tuple[str, str]) -> None:
    name, topic = stopped_sink
    editor = OffsetsEditor(rt, name)
    row = editor.add_row({"kafka_topic": topic, "kafka_partition": "7", "kafka_offset": "1"})
    assert row == 3 and editor.labels[3]["kafka_partition"].value == "7"
    editor.new_row["kafka_topic"].value = f"missing-{topic}"
    editor.new_row["kafka_partition"].value = "0"
    editor.new_row["kafka_offset"].value = "0"
    editor.add_button.click()
    editor.apply_button.click()
    assert f"kafka_topic={topic}, kafka_partition=7: the topic has 3 partition(s), 0 to 2" in editor.message.value
    assert f"kafka_topic=missing-{topic}: no such topic on the broker" in editor.message.value
    assert group_offsets(bootstrap, name) == {(topic, 0): 6, (topic, 1): 4, (topic, 2): 2}


def test_editor_reset_forgets_every_offset(rt: ConnectRuntime, bootstrap: str, stopped_sink: tuple[str, str]) -> None:
    name, _ = stopped_sink
    editor = OffsetsEditor(rt, name)
    editor.reset_button.click()
    assert editor.message.value == RESET
    assert group_offsets(bootstrap, name) == {}
    assert len(editor.frame) == 0 and "no offsets" in editor.page_label.value
    assert "STOPPED with no running tasks" in editor.title.value


def test_editor_stops_a_running_source_applies_and_resumes_it(rt: ConnectRuntime, bootstrap: str,
                                                              unique: str) -> None:
    name = topic = f"ed-src-{unique}"
    create_topic(bootstrap, topic, 1)
    rt.create_connector(name, {"connector.class": "SequenceSource", "topic": topic, "records": "20",
                               "tasks.max": "2", **JSON})
    wait_until(lambda: {o["partition"]["task"]: o["offset"]["seq"] for o in rt.get_offsets(name)["offsets"]}
               == {0: 19, 1: 19}, 30, message="both tasks committed their last record")
    editor = OffsetsEditor(rt, name)
    row = [lab["task"].value for lab in editor.labels].index("0")
    editor.cells[row]["seq"].value = "9"
    editor.apply_button.click()
    assert editor.confirm_box.layout.display == "flex" and "is RUNNING" in editor.confirm_text.value
    assert state(rt, name) == "RUNNING" and editor.answer is None  # nothing done before the user agrees
    editor.confirm_button.click()
    assert editor.answer is not None and editor.message.value.startswith(editor.answer["message"])
    assert f"stopped {name}, then resumed it" in editor.message.value
    assert state(rt, name) == "RUNNING"
    # task 0 starts again after seq 9: 10..19 are written a second time, task 1 writes nothing more
    seen = sequence_counts(bootstrap, topic, 50)
    assert seen == Counter({(0, s): 2 if s >= 10 else 1 for s in range(20)} | {(1, s): 1 for s in range(20)})


def test_editor_cancel_changes_nothing(rt: ConnectRuntime, bootstrap: str, unique: str) -> None:
    topic, name = f"ed-cancel-{unique}", f"ed-cancel-{unique}"
    create_topic(bootstrap, topic, 1)
    produce(bootstrap, topic, {0: 3})
    rt.create_connector(name, {"connector.class": "VerifyingSink", "topics": topic, **JSON})
    wait_until(lambda: group_offsets(bootstrap, name) == {(topic, 0): 3}, 30, message="the sink read 3 records")
    rt.pause_connector(name)
    editor = OffsetsEditor(rt, name)
    editor.reset_button.click()
    assert "is PAUSED" in editor.confirm_text.value and "pause it after" in editor.confirm_text.value
    editor.cancel_button.click()
    assert editor.confirm_box.layout.display == "none" and "nothing was changed" in editor.message.value
    assert group_offsets(bootstrap, name) == {(topic, 0): 3} and state(rt, name) == "PAUSED"
    editor.reset_button.click()
    editor.confirm_button.click()
    assert editor.answer == {"message": RESET} and f"stopped {name}, then paused it" in editor.message.value
    assert state(rt, name) == "PAUSED"


def test_editor_pages_keep_edits_and_apply_only_edited_rows(rt: ConnectRuntime, unique: str) -> None:
    name = f"ed-pages-{unique}"
    rt.create_connector(name, {"connector.class": "SequenceSource", "topic": name, **JSON}, initial_state="STOPPED")
    rt.alter_offsets(name, {"offsets": [{"partition": {"task": i}, "offset": {"seq": i}} for i in range(120)]})
    editor = OffsetsEditor(rt, name, page_size=50)
    assert len(editor.cells) == 50 and editor.page_label.value == "rows 1-50 of 120 (page 1 of 3)"
    editor.next_button.click()
    editor.next_button.click()
    assert editor.page_label.value == "rows 101-120 of 120 (page 3 of 3)" and editor.next_button.disabled
    assert editor.cells[19]["seq"].value != "" and editor.cells[20]["seq"].layout.visibility == "hidden"
    task = int(editor.labels[5]["task"].value)
    editor.cells[5]["seq"].value = "1000"
    editor.prev_button.click()
    assert not editor.cells[5]["seq"].layout.border  # row 56 is not edited
    editor.show_page(2)
    assert editor.cells[5]["seq"].value == "1000" and editor.cells[5]["seq"].layout.border
    editor.apply_button.click()
    assert editor.message.value == editor.answer["message"]
    after = {o["partition"]["task"]: o["offset"]["seq"] for o in rt.get_offsets(name)["offsets"]}
    assert after == {i: 1000 if i == task else i for i in range(120)}


def test_offsets_magic_edit_and_empty_reason(rt: ConnectRuntime, bootstrap: str, unique: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "connect_magics")
    magics = ip._connect_magics
    magics.runtime = rt
    try:
        name = f"ed-magic-{unique}"
        rt.create_connector(name, {"connector.class": "SequenceSource", "topic": name, **JSON},
                            initial_state="STOPPED")
        frame = ip.run_line_magic("connect", f"offsets {name}")
        assert frame.empty
        assert f"No offsets committed for {name}: it is STOPPED" in capsys.readouterr().out
        editor = ip.run_line_magic("connect", f"offsets {name} --edit -o ed")
        assert isinstance(editor, OffsetsEditor) and ip.user_ns["ed"] is editor
    finally:
        magics.runtime = None  # the module's runtime is closed by its fixture, not by unload_ext
        ip.run_line_magic("unload_ext", "connect_magics")
