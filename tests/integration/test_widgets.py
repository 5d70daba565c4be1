"""The notebook widgets driven as a front end drives them (widget values set, buttons clicked through their
handlers) against the session broker, with the effect checked in Kafka."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import versioned_plugins as vp
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from helpers import wait_until
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from connect_magics import ConnectRestError, ConnectRuntime
from connect_magics.notebook.dashboard import LiveDashboard
from connect_magics.notebook.offsets_editor import OffsetsEditor
from connect_magics.notebook.topic_explorer import TopicCreationExplorer
from connect_magics.notebook.version_picker import PluginVersionPicker
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


class GatedRuntime:
    """The module's runtime, whose ``offsets_frame`` waits for :attr:`gate`: a read from Kafka that takes as
    long as the test wants."""

    def __init__(self, rt: ConnectRuntime) -> None:
        self.rt, self.gate = rt, threading.Event()

    def offsets_frame(self, name: str) -> Any:
        assert self.gate.wait(60), "the test never opened the gate"
        return self.rt.offsets_frame(name)

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self.rt, attribute)


def test_editor_reads_in_the_background_with_progress(rt: ConnectRuntime, unique: str) -> None:
    name = f"ed-bg-{unique}"
    rt.create_connector(name, {"connector.class": "SequenceSource", "topic": name, **JSON}, initial_state="STOPPED")
    rt.alter_offsets(name, {"offsets": [{"partition": {"task": i}, "offset": {"seq": i}} for i in range(5)]})
    gated = GatedRuntime(rt)
    editor = OffsetsEditor(gated, name)  # returns while the read is still going on
    assert editor.loading and repr(editor) == f"OffsetsEditor: {name}, reading its offsets from Kafka..."
    assert editor.apply_button.disabled and editor.reset_button.disabled and editor.reload_button.disabled
    wait_until(lambda: "reading them from Kafka..." in editor.title.value, 30, message="the progress line")
    gated.gate.set()
    assert len(editor.frame) == 5  # waits for the read
    assert not editor.loading and not editor.apply_button.disabled
    assert editor.prev_button.disabled and editor.next_button.disabled  # one page only
    assert f"Offsets of {name}</b> (source, 5 partitions)" in editor.title.value
    assert [lab["task"].value for lab in editor.labels] == ["0", "1", "2", "3", "4"]
    editor.reload_button.click()  # the Reload button reads in the background too
    editor.wait(30)
    assert editor.page_label.value == "rows 1-5 of 5 (page 1 of 1)"


def test_editor_of_an_unknown_connector_says_why(rt: ConnectRuntime, unique: str) -> None:
    editor = OffsetsEditor(rt, f"missing-{unique}")
    with pytest.raises(ConnectRestError, match=f"Connector missing-{unique} not found"):
        editor.wait(30)
    assert f"Could not read the offsets: Connector missing-{unique} not found (HTTP 404)" in editor.message.value
    assert "could not be read" in repr(editor)


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
        explorer = ip.run_line_magic("connect", f"topic-explorer {name} a b")
        assert isinstance(explorer, TopicCreationExplorer) and explorer.topic_names() == ["a", "b"]
        picker = ip.run_line_magic("connect", f"versions {name}")
        assert isinstance(picker, PluginVersionPicker) and picker.chosen == picker.versions[-1]
        dash = ip.run_line_magic("connect", "dashboard --interval 0.05")
        try:
            assert isinstance(dash, LiveDashboard) and dash.running and name in dash.views
        finally:
            dash.close()
        with pytest.raises(UsageError, match="--interval 0: must be more than 0 seconds"):
            ip.run_line_magic("connect", "dashboard --interval 0")
    finally:
        magics.runtime = None  # the module's runtime is closed by its fixture, not by unload_ext
        ip.run_line_magic("unload_ext", "connect_magics")


# -- topic creation explorer -------------------------------------------------------------------------------


def test_explorer_answers_are_the_explain_api_and_apply_creates_the_topic_so(rt: ConnectRuntime, bootstrap: str,
                                                                           unique: str) -> None:
    name = f"ex-{unique}"
    topic = f"orders-{unique}"
    rt.create_connector(name, {"connector.class": "SequenceSource", "topic": topic, "records": "5", **JSON,
                               "topic.creation.default.partitions": "1",
                               "topic.creation.default.replication.factor": "1"}, initial_state="STOPPED")
    assert TopicCreationExplorer(rt, name).topic_names() == [topic]  # opens with the connector's own topic
    explorer = TopicCreationExplorer(rt, name, topics=[topic, f"audit-{unique}"])
    assert explorer.settings.value == ("topic.creation.default.partitions=1\n"
                                       "topic.creation.default.replication.factor=1")
    assert explorer.answer == rt.explain_topic_creation(rt.connector_config(name), [topic, f"audit-{unique}"],
                                                        include_existing=False)
    explorer.settings.value = ("topic.creation.groups=orders\n"
                               "topic.creation.orders.include=orders-.*\n"
                               "topic.creation.orders.partitions=4\n"
                               "topic.creation.default.partitions=1\n"
                               "topic.creation.default.replication.factor=1")
    expected = rt.explain_topic_creation({**rt.connector_config(name), **explorer.config()},
                                         [topic, f"audit-{unique}"], include_existing=False)
    assert explorer.answer == expected
    assert [(t["topic"], t["group"], t["partitions"]) for t in explorer.answer["topics"]] == [
        (topic, "orders", 4), (f"audit-{unique}", "default", 1)]
    assert "include pattern 'orders-.*' matches" in explorer.table.value
    assert f"{topic}: create, group orders, partitions 4" in repr(explorer)
    explorer.apply_button.click()
    assert rt.connector_config(name)["topic.creation.orders.partitions"] == "4"
    rt.resume_connector(name)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    wait_until(lambda: len(admin.list_topics(topic, timeout=10).topics[topic].partitions) == 4, 30,
               message="the topic created with the explorer's 4 partitions")


@pytest.mark.parametrize("settings, error", [
    ("topic.creation.default.partitions=0\ntopic.creation.default.replication.factor=1",
     "topic.creation.default.partitions"),
    ("topic.creation.default.partitions", "Config line 1: expected key=value"),
    ("topic.creation.default.partitions=1\ntopic.creation.default.replication.factor=1\ntopic=other",
     "Only topic.creation.* keys belong here, not topic"),
])
def test_explorer_shows_bad_settings_in_place_and_apply_changes_nothing(rt: ConnectRuntime, unique: str,
                                                                       settings: str, error: str) -> None:
    name = f"ex-bad-{unique}"
    config = {"connector.class": "SequenceSource", "topic": name, "topic.creation.default.partitions": "1",
              "topic.creation.default.replication.factor": "1", **JSON}
    rt.create_connector(name, config, initial_state="STOPPED")
    explorer = TopicCreationExplorer(rt, name, topics=["a"])
    explorer.settings.value = settings
    assert explorer.answer is None and error in explorer.error and error in explorer.message.value
    if "=0" in settings:  # the runtime's 400, word for word
        with pytest.raises(ConnectRestError) as info:
            rt.explain_topic_creation({**config, "topic.creation.default.partitions": "0"}, ["a"],
                                      include_existing=False)
        assert info.value.status == 400 and explorer.error == info.value.message
    explorer.apply_button.click()
    assert rt.connector_config(name) == {**config, "name": name}


def test_explorer_on_a_config_has_nothing_to_apply(rt: ConnectRuntime) -> None:
    config = {"connector.class": "SequenceSource", "topic": "x"}
    explorer = TopicCreationExplorer(rt, config, topics=["x"])
    assert not explorer.answer["enabled"] and explorer.apply_button.disabled
    assert explorer.answer == rt.explain_topic_creation(config, ["x"], include_existing=False)


# -- plugin version picker -------------------------------------------------------------------------------------


VERSIONS = ["1.0.0", "1.1.0", "2.0.0-rc1", "2.0.0"]


@pytest.fixture(scope="module")
def versioned_rt(bootstrap: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConnectRuntime]:
    path = vp.build_plugin_path(tmp_path_factory.mktemp("picker"), VERSIONS)
    runtime = ConnectRuntime(bootstrap, f"picker-{tmp_path_factory.mktemp('g').name}",
                             {"offset.flush.interval.ms": "200", "plugin.path": str(path)})
    try:
        yield runtime
    finally:
        runtime.close()


def test_picker_choice_is_the_runtimes(versioned_rt: ConnectRuntime, bootstrap: str, unique: str) -> None:
    rt, name = versioned_rt, f"pick-{unique}"
    create_topic(bootstrap, name, 1)
    rt.create_connector(name, {"connector.class": vp.SOURCE, "topic": name, "value.converter": vp.CONVERTER,
                               "connector.plugin.version": "1.0.0"})
    wait_until(lambda: rt.connector_status(name)["connector"].get("version") == "1.0.0", 30, message="1.0.0 runs")
    picker = PluginVersionPicker(rt, name)
    assert list(picker.target.options) == ["connector.class", "value.converter"]
    assert picker.range.value == "1.0.0" and picker.versions == VERSIONS and picker.chosen == "1.0.0"
    picker.range.value = "[1.0,2.0)"
    assert picker.matching == ["1.0.0", "1.1.0", "2.0.0-rc1"] and picker.chosen == "2.0.0-rc1"
    assert picker.chosen == rt.plugins.find(vp.SOURCE, ("source",), "[1.0,2.0)").version
    assert "2.0.0-rc1 &mdash; &#9733; chosen" in picker.listing.value
    picker.range.value = "(,1.0"
    assert picker.chosen is None and "Unbounded range: (,1.0" in picker.error and picker.apply_button.disabled
    picker.range.value = "[3.0,)"
    assert picker.error.startswith(f"Plugin {vp.SOURCE} not found that matches the version range [3.0,)")
    picker.range.value = "[1.1.0,2.0.0)"
    picker.apply_button.click()
    assert rt.connector_config(name)["connector.plugin.version"] == "[1.1.0,2.0.0)"
    wait_until(lambda: [rt.connector_status(name)["connector"].get("version")]
               + [t.get("version") for t in rt.connector_status(name)["tasks"]] == [picker.chosen] * 2, 30,
               message=lambda: f"{name} restarted on {picker.chosen}: {rt.connector_status(name)}")
    picker.target.value = "value.converter"
    assert picker.range.value == "" and picker.chosen == "2.0.0"  # no range: the newest
    picker.range.value = "1.1.0"
    picker.apply_button.click()
    assert rt.connector_config(name)["value.converter.plugin.version"] == "1.1.0"
    wait_until(lambda: rt.metrics()[f"connector-task-metrics,connector={name},task=0"]["value-converter-version"]
               == "1.1.0", 30, message="the task runs the chosen converter")


# -- live dashboard ----------------------------------------------------------------------------------------------


def test_dashboard_shows_lag_and_stops_when_closed(rt: ConnectRuntime, bootstrap: str,
                                                   stopped_sink: tuple[str, str]) -> None:
    name, topic = stopped_sink
    produce(bootstrap, topic, {0: 5})  # the stopped sink is now 5 records behind
    dash = LiveDashboard(rt, interval=0.05)
    assert dash.running
    wait_until(lambda: dash.refreshes >= 3 and dash.views[name].lag == 5, 30, message="three refreshes, lag 5")
    assert f"  {name}: STOPPED (sink)" in repr(dash) and "lag 5" in repr(dash)
    assert bytes(dash.plot.value).startswith(b"\x89PNG")
    assert all(len(sample) == 3 for sample in dash.history)
    dash.close()
    assert not dash.running and dash._thread is not None and not dash._thread.is_alive()
    done = dash.refreshes
    assert "stopped" in repr(dash).splitlines()[0] and dash.refreshes == done


def test_dashboard_stops_when_the_runtime_closes(bootstrap: str, unique: str) -> None:
    runtime = ConnectRuntime(bootstrap, f"dash-{unique}", {"offset.flush.interval.ms": "200"})
    try:
        dash = LiveDashboard(runtime, interval=0.05)
        wait_until(lambda: dash.refreshes >= 2, 30, message="two refreshes")
    finally:
        runtime.close()
    wait_until(lambda: not dash.running, 30, message="the refresh thread ends")
    assert "runtime was closed" in dash.message.value
