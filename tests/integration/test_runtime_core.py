"""The runtime core against the real broker: pipelines, statuses, restore, internal formats, bad configs."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from helpers import wait_until

from connect_magics import ConnectRestError, ConnectRuntime
from connect_magics.api import SourceConnector, SourceTask
from connect_magics.api.errors import ConnectException
from connect_magics.connectors import verifying

STRING = "org.apache.kafka.connect.storage.StringConverter"
JSON = "org.apache.kafka.connect.json.JsonConverter"
FAST = {"offset.flush.interval.ms": "200"}


@pytest.fixture
def runtime_factory(bootstrap: str, unique: str) -> Iterator[Callable[..., ConnectRuntime]]:
    made: list[ConnectRuntime] = []

    def make(group: str | None = None, **worker: str) -> ConnectRuntime:
        rt = ConnectRuntime(bootstrap, group or f"g-{unique}", {**FAST, **worker})
        made.append(rt)
        return rt

    yield make
    for rt in reversed(made):
        rt.close()


def create_topic(bootstrap: str, name: str, partitions: int = 1) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})  # keep a reference until the future is done
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)


def read_topic(bootstrap: str, topic: str, expect: int | None = None, timeout: float = 60) -> list:
    """Every record of ``topic`` (reading until its end offsets, or until ``expect`` records)."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "reader", "enable.auto.commit": False})
    md = c.list_topics(topic, timeout=10).topics[topic]
    parts = [TopicPartition(topic, p, 0) for p in md.partitions]
    ends = {p.partition: c.get_watermark_offsets(p, timeout=10)[1] for p in parts}
    c.assign(parts)
    out: list = []
    done = {p: ends[p] == 0 for p in ends}
    try:
        def finished() -> bool:
            for m in c.consume(1000, timeout=0.2):
                if m.error():
                    continue
                out.append(m)
            for tp in c.position(parts):  # past transaction markers (the config topic is written in transactions)
                if tp.offset >= ends[tp.partition]:
                    done[tp.partition] = True
            return len(out) >= expect if expect is not None else all(done.values())
        wait_until(finished, timeout, message=lambda: f"records of {topic} (have {len(out)})")
    finally:
        c.close()
    return out


def statuses(rt: ConnectRuntime, name: str) -> tuple[str, list[str]]:
    s = rt.connector_status(name)
    return s["connector"]["state"], [t["state"] for t in s["tasks"]]


def test_file_source_to_file_sink_with_transforms(runtime_factory, bootstrap, unique, tmp_path) -> None:
    src, out, topic = tmp_path / "in.txt", tmp_path / "out.txt", f"lines-{unique}"
    src.write_text("".join(f"line {i}\n" for i in range(1000)))
    create_topic(bootstrap, f"routed-{topic}")
    rt = runtime_factory()
    rt.create_connector("src", {
        "connector.class": "FileStreamSource", "file": str(src), "topic": topic, "value.converter": STRING,
        "transforms": "route", "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
        "transforms.route.regex": "lines-(.*)", "transforms.route.replacement": "routed-lines-$1"})
    rt.create_connector("sink", {"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
                                 "file": str(out), "topics": f"routed-{topic}", "value.converter": STRING})

    def lines() -> list[str]:
        return out.read_text().splitlines() if out.exists() else []
    wait_until(lambda: len(lines()) >= 1000, 60, message="1000 lines in the sink file")
    assert lines() == [f"line {i}" for i in range(1000)]
    records = read_topic(bootstrap, f"routed-{topic}")
    assert len(records) == 1000 and records[0].value() == b"line 0"
    assert statuses(rt, "src") == ("RUNNING", ["RUNNING"])
    assert statuses(rt, "sink") == ("RUNNING", ["RUNNING"])


def test_sequence_source_json_converter_to_verifying_sink(runtime_factory, bootstrap, unique) -> None:
    topic = f"seq-{unique}"
    create_topic(bootstrap, topic, 3)
    rt = runtime_factory()
    rt.create_connector("gen", {"connector.class": "SequenceSource", "topic": topic, "records": "500",
                                "tasks.max": "2", "value.converter": JSON, "value.converter.schemas.enable": "false",
                                "transforms": "stamp",
                                "transforms.stamp.type": "org.apache.kafka.connect.transforms.InsertField$Value",
                                "transforms.stamp.static.field": "origin", "transforms.stamp.static.value": "nb"})
    name = f"verify-{unique}"
    rt.create_connector(name, {"connector.class": "VerifyingSink", "topics": topic, "value.converter": JSON,
                               "value.converter.schemas.enable": "false",
                               "transforms": "drop", "transforms.drop.type": "ReplaceField$Value",
                               "transforms.drop.exclude": "payload"})
    wait_until(lambda: len(verifying.received(name)) >= 1000, 60, message="1000 records in the sink")
    got = verifying.received(name)
    assert len(got) == 1000
    assert sorted((r.value["task"], r.value["seq"]) for r in got) == sorted(
        (t, s) for t in range(2) for s in range(500))
    assert all(r.value["origin"] == "nb" and "payload" not in r.value for r in got)
    raw = json.loads(read_topic(bootstrap, topic, expect=1)[0].value())
    assert set(raw) == {"task", "seq", "payload", "origin"}


def test_pause_resume_restart_statuses(runtime_factory, bootstrap, unique) -> None:
    topic = f"pr-{unique}"
    create_topic(bootstrap, topic)
    rt = runtime_factory()
    rt.create_connector("gen", {"connector.class": "SequenceSource", "topic": topic, "rate": "50"})
    wait_until(lambda: statuses(rt, "gen") == ("RUNNING", ["RUNNING"]), 30, message="RUNNING")
    rt.pause_connector("gen")
    wait_until(lambda: statuses(rt, "gen") == ("PAUSED", ["PAUSED"]), 30, message="PAUSED")
    rt.resume_connector("gen")
    wait_until(lambda: statuses(rt, "gen") == ("RUNNING", ["RUNNING"]), 30, message="RUNNING again")
    assert rt.restart_connector("gen") is None  # connector only: REST 204
    plan = rt.restart_connector("gen", include_tasks=True)
    assert plan["connector"]["state"] == "RESTARTING" and [t["state"] for t in plan["tasks"]] == ["RESTARTING"]
    wait_until(lambda: statuses(rt, "gen") == ("RUNNING", ["RUNNING"]), 30, message="RUNNING after restart")
    plan = rt.restart_connector("gen", include_tasks=True, only_failed=True)  # nothing failed: nothing restarts
    assert plan["connector"]["state"] == "RUNNING" and [t["state"] for t in plan["tasks"]] == ["RUNNING"]
    with pytest.raises(ConnectRestError) as e:
        rt.restart_connector("nope")
    assert (e.value.status, e.value.message) == (404, "Unknown connector: nope")
    with pytest.raises(ConnectRestError) as e:
        rt.pause_connector("nope")
    assert (e.value.status, e.value.message) == (404, "Unknown connector nope")


def test_failed_task_reports_trace_and_restarts(runtime_factory, bootstrap, unique) -> None:
    topic = f"fail-{unique}"
    create_topic(bootstrap, topic)
    rt = runtime_factory()
    rt.create_connector("gen", {"connector.class": "SequenceSource", "topic": topic, "records": "100"})
    name = f"flaky-{unique}"
    rt.create_connector(name, {"connector.class": "VerifyingSink", "topics": topic, "fail.on.put.after": "10"})
    wait_until(lambda: statuses(rt, name)[1] == ["FAILED"], 60, message="task FAILED")
    task = rt.connector_status(name)["tasks"][0]
    assert "ConnectException" in task["trace"]
    assert rt.task_status(name, 0)["state"] == "FAILED"
    plan = rt.restart_connector(name, include_tasks=True, only_failed=True)
    assert plan["connector"]["state"] == "RUNNING" and plan["tasks"][0]["state"] == "RESTARTING"
    wait_until(lambda: statuses(rt, name)[1] in (["RUNNING"], ["FAILED"]), 30, message="restarted")


class BrokenConnector(SourceConnector):
    """A connector whose start always fails."""

    def version(self) -> str:
        return "1.0"

    def start(self, props: dict[str, str]) -> None:
        raise ConnectException("cannot reach the source system")

    def task_class(self) -> type:
        raise NotImplementedError

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return []

    def stop(self) -> None:
        pass


def test_connector_that_cannot_start_goes_failed(runtime_factory) -> None:
    rt = runtime_factory()
    rt.plugins.register(BrokenConnector)
    rt.create_connector("broken", {"connector.class": "BrokenConnector"})
    state = rt.connector_status("broken")["connector"]
    assert state["state"] == "FAILED" and "cannot reach the source system" in state["trace"]


def test_restore_in_target_state(runtime_factory, bootstrap, unique, tmp_path) -> None:
    topic = f"rs-{unique}"
    create_topic(bootstrap, topic)
    group = f"restore-{unique}"
    rt = runtime_factory(group)
    rt.create_connector("running", {"connector.class": "SequenceSource", "topic": topic, "rate": "20"})
    rt.create_connector("paused", {"connector.class": "SequenceSource", "topic": topic, "rate": "20"},
                        initial_state="PAUSED")
    rt.create_connector("stopped", {"connector.class": "SequenceSource", "topic": topic}, initial_state="STOPPED")
    wait_until(lambda: statuses(rt, "running") == ("RUNNING", ["RUNNING"]), 30, message="RUNNING")
    rt.close()
    rt2 = runtime_factory(group)
    assert rt2.connectors() == ["paused", "running", "stopped"]
    wait_until(lambda: statuses(rt2, "running") == ("RUNNING", ["RUNNING"]), 30, message="restored RUNNING")
    # created PAUSED: no tasks, as Kafka Connect (only a started connector generates task configs)
    wait_until(lambda: statuses(rt2, "paused") == ("PAUSED", []), 30, message="restored PAUSED")
    assert statuses(rt2, "stopped") == ("STOPPED", [])


def test_internal_topics_use_kafka_connect_formats(runtime_factory, bootstrap, unique, tmp_path) -> None:
    group, topic = f"fmt-{unique}", f"fmt-{unique}"
    src = tmp_path / "in.txt"
    src.write_text("a\nbb\n")
    create_topic(bootstrap, topic)
    rt = runtime_factory(group)
    rt.create_connector("file-src", {"connector.class": "FileStreamSource", "file": str(src), "topic": topic})
    wait_until(lambda: rt.offset_store.offsets("file-src"), 30, message="offsets committed")
    rt.pause_connector("file-src")
    rt.stop_connector("file-src")
    rt.status_store.flush(10)
    assert rt.config_store.log.flush(10) == 0  # target states are sent without waiting

    def records(topic_name: str) -> list[tuple[str, object]]:
        return [(m.key().decode(), json.loads(m.value()) if m.value() is not None else None)
                for m in read_topic(bootstrap, topic_name)]

    config = records(f"{group}-configs")
    keys = [k for k, _ in config]
    assert keys[:4] == ["connector-file-src", "task-file-src-0", "commit-file-src", "target-state-file-src"]
    assert config[0][1] == {"properties": {"connector.class": "FileStreamSource", "file": str(src),
                                           "topic": topic, "name": "file-src"}}
    assert config[1][1]["properties"]["file"] == str(src)
    assert config[2][1] == {"tasks": 1}
    assert config[3][1] == {"state": "PAUSED", "state.v2": "PAUSED"}
    assert ("commit-file-src", {"tasks": 0}) in config
    assert config[-1] == ("target-state-file-src", {"state": "PAUSED", "state.v2": "STOPPED"})
    raw_config = read_topic(bootstrap, f"{group}-configs")
    assert raw_config[2].value() == b'{"tasks":1}'

    offsets = read_topic(bootstrap, f"{group}-offsets")
    assert offsets[-1].key() == json.dumps(["file-src", {"filename": str(src)}], separators=(",", ":")).encode()
    assert offsets[-1].value() == b'{"position":5}'

    status = dict(records(f"{group}-status"))
    conn = status["status-connector-file-src"]
    assert list(conn) == ["state", "trace", "worker_id", "generation", "version"]
    assert conn["state"] == "STOPPED" and conn["trace"] is None and isinstance(conn["generation"], int)
    assert status[f"status-topic-{topic}:connector-file-src"]["topic"]["name"] == topic
    assert set(status[f"status-topic-{topic}:connector-file-src"]["topic"]) == {
        "name", "connector", "task", "discoverTimestamp"}
    assert "status-task-file-src-0" in status and status["status-task-file-src-0"] is None  # removed: tombstone


def test_invalid_configs_report_every_error_and_write_nothing(runtime_factory, bootstrap, unique) -> None:
    group = f"bad-{unique}"
    rt = runtime_factory(group)
    bad = {"connector.class": "VerifyingSink", "tasks.max": "zero", "transforms": "x",
           "errors.tolerance": "maybe"}
    infos = rt.validate_connector_config({**bad, "name": "bad"})
    errors = {c["value"]["name"]: c["value"]["errors"] for c in infos["configs"] if c["value"] and c["value"]["errors"]}
    assert set(errors) == {"tasks.max", "transforms.x.type", "errors.tolerance", "topics"}
    count = infos["error_count"]
    with pytest.raises(ConnectRestError) as e:
        rt.create_connector("bad", bad)
    assert e.value.status == 400
    msg = e.value.message
    assert msg.startswith(f"Connector configuration is invalid and contains the following {count} error(s):\n")
    for fragment in ("tasks.max", 'Missing required configuration "transforms.x.type"', "errors.tolerance",
                     'Must configure one of "topics" or "topics.regex"'):
        assert fragment in msg
    assert msg.endswith("You can also find the above list of errors at the endpoint "
                        "`/connector-plugins/{connectorType}/config/validate`")
    with pytest.raises(ConnectRestError) as e:
        rt.create_connector("bad", {"connector.class": "NoSuchConnector"})
    assert e.value.status == 400 and e.value.message.startswith(
        "Failed to find any class that implements Connector and which name matches NoSuchConnector, available "
        "connectors are: PluginDesc{klass=class ")
    with pytest.raises(ConnectRestError) as e:
        rt.create_connector("bad", {"topics": "t"})
    assert e.value.status == 400 and "contains no connector type" in e.value.message
    assert rt.connectors() == []
    assert read_topic(bootstrap, f"{group}-configs") == []
    with pytest.raises(ConnectRestError) as e:
        rt.connector_status("bad")
    assert (e.value.status, e.value.message) == (404, "No status found for connector bad")


def test_duplicate_create_is_409_and_delete_removes(runtime_factory, bootstrap, unique) -> None:
    topic = f"dup-{unique}"
    create_topic(bootstrap, topic)
    rt = runtime_factory()
    cfg = {"connector.class": "VerifyingSink", "topics": topic}
    info = rt.create_connector("v", cfg)
    assert info["type"] == "sink" and info["tasks"] == [{"connector": "v", "task": 0}]
    with pytest.raises(ConnectRestError) as e:
        rt.create_connector("v", cfg)
    assert (e.value.status, e.value.message) == (409, "Connector v already exists")
    rt.patch_connector_config("v", {"tasks.max": "2"})
    assert rt.connector_config("v")["tasks.max"] == "2"
    rt.delete_connector("v")
    assert rt.connectors() == []
    with pytest.raises(ConnectRestError) as e:
        rt.delete_connector("v")
    assert (e.value.status, e.value.message) == (404, "Connector v not found")


def test_records_it_does_not_understand_are_skipped(runtime_factory, bootstrap, unique) -> None:
    from confluent_kafka import Producer

    group, topic = f"junk-{unique}", f"junk-{unique}"
    create_topic(bootstrap, topic)
    rt = runtime_factory(group)
    rt.create_connector("ok", {"connector.class": "VerifyingSink", "topics": topic})
    rt.close()
    p = Producer({"bootstrap.servers": bootstrap})
    for t, key, value in [(f"{group}-configs", b"connector-broken", b"not json"),
                          (f"{group}-configs", b"mystery-key", b"{}"),
                          (f"{group}-offsets", b"[\"x\"]", b"{}"),
                          (f"{group}-offsets", b"garbage", b"{}"),
                          (f"{group}-status", b"status-task-nonsense", b"{}"),
                          (f"{group}-status", b"status-connector-x", b"[1,2")]:
        p.produce(t, value, key)
    assert p.flush(30) == 0
    rt2 = runtime_factory(group)
    assert rt2.connectors() == ["ok"]
    wait_until(lambda: statuses(rt2, "ok") == ("RUNNING", ["RUNNING"]), 30, message="restored despite junk")


class ReconfiguringConnector(SourceConnector):
    """Asks for new task configs whenever its ``tasks`` setting says so (see the test)."""

    instances: list = []

    def version(self) -> str:
        return "1.0"

    def start(self, props: dict[str, str]) -> None:
        self.props, self.count = props, 1
        ReconfiguringConnector.instances.append(self)

    def task_class(self) -> type:
        from connect_magics.connectors import SequenceSourceTask

        return SequenceSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{"topic": self.props["topic"], "task.id": str(i), "rate": "5"} for i in range(self.count)]

    def stop(self) -> None:
        pass


class WaitingTask(SourceTask):
    """A source task whose poll waits up to a minute for data that never comes, noting how each wait ended."""

    instances: list[WaitingTask] = []

    def version(self) -> str:
        return "1.0"

    def start(self, props: dict[str, str]) -> None:
        self.stopping, self.stops, self.waits = threading.Event(), 0, []
        WaitingTask.instances.append(self)

    def poll(self) -> None:
        self.waits.append("woken" if self.stopping.wait(60) else "timed out")
        return None

    def stop(self) -> None:
        self.stops += 1
        self.stopping.set()


class WaitingSource(SourceConnector):
    def version(self) -> str:
        return "1.0"

    def start(self, props: dict[str, str]) -> None:
        pass

    def task_class(self) -> type:
        return WaitingTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{}]

    def stop(self) -> None:
        pass


def test_a_source_task_waiting_in_poll_is_stopped_at_once_and_once(runtime_factory) -> None:
    rt = runtime_factory()
    rt.plugins.register(WaitingSource)
    rt.create_connector("waiting", {"connector.class": "WaitingSource"})
    wait_until(lambda: statuses(rt, "waiting") == ("RUNNING", ["RUNNING"]), 30, message="RUNNING")
    task = wait_until(lambda: WaitingTask.instances and WaitingTask.instances[-1], 30, message="the task")
    wait_until(lambda: not task.stopping.is_set() and task.waits == [] and task.stops == 0, 5,
               message="the task waiting in its first poll")
    rt.delete_connector("waiting")  # returns once the task stopped (up to task.shutdown.graceful.timeout.ms)
    # its stop() ended the poll's wait, rather than the task stopping after the wait ran out; called once
    assert (task.waits, task.stops) == (["woken"], 1)


class StuckTask(WaitingTask):
    """A source task whose poll ignores its stop() and waits until the test releases it."""

    release = threading.Event()

    def poll(self) -> None:
        StuckTask.release.wait(60)
        return None


class StuckSource(WaitingSource):
    def task_class(self) -> type:
        return StuckTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{} for _ in range(max_tasks)]


def test_the_graceful_timeout_bounds_the_stop_of_all_tasks_together(runtime_factory, caplog) -> None:
    # Kafka's Worker.awaitStopTasks: one deadline for every task being stopped; waiting the timeout for each task
    # in turn made a worker with four stuck tasks take four times as long to stop (hundreds: many minutes).
    timeout_s, tasks = 1.5, 4
    rt = runtime_factory(**{"task.shutdown.graceful.timeout.ms": str(int(timeout_s * 1000))})
    rt.plugins.register(StuckSource)
    rt.create_connector("stuck", {"connector.class": "StuckSource", "tasks.max": str(tasks)})
    wait_until(lambda: statuses(rt, "stuck") == ("RUNNING", ["RUNNING"] * tasks), 30, message="RUNNING")
    try:
        with caplog.at_level(logging.WARNING, logger="connect_magics.runtime.herder"):
            started = time.monotonic()
            rt.delete_connector("stuck")
            took = time.monotonic() - started
    finally:
        StuckTask.release.set()
    failed = [r for r in caplog.records if r.getMessage().startswith("Graceful stop of task stuck-")]
    assert len(failed) == tasks
    assert took < 3 * timeout_s, f"{tasks} stuck tasks took {took:.1f} s to stop, graceful timeout {timeout_s} s"


class LateFailingTask(SourceTask):
    """A source task whose ``start()`` waits to be released, then raises (as one whose runtime closed a client
    under it while it started)."""

    started, release = threading.Event(), threading.Event()

    def version(self) -> str:
        return "1.0"

    def start(self, props: dict[str, str]) -> None:
        LateFailingTask.started.set()
        LateFailingTask.release.wait(60)
        raise RuntimeError("Consumer closed")

    def poll(self) -> None:
        return None

    def stop(self) -> None:
        pass


class LateFailingSource(WaitingSource):
    def task_class(self) -> type:
        return LateFailingTask


def test_a_task_failing_after_it_was_asked_to_stop_stops_without_failing(runtime_factory, caplog) -> None:
    """Kafka's WorkerTask: an exception after the task was scheduled for shutdown is a warning; the task is not
    FAILED, though what it was doing is not committed (a worker stopping while hundreds of tasks start closes
    their shared clients under some of them)."""
    rt = runtime_factory()
    rt.plugins.register(LateFailingSource)
    rt.create_connector("late", {"connector.class": "LateFailingSource"})
    wait_until(LateFailingTask.started.is_set, 30, message="the task starting")
    runner = rt.herder.task_handle("late", 0).runner
    stopping = threading.Thread(target=rt.stop_connector, args=("late",))
    stopping.start()
    wait_until(lambda: runner.stopping, 30, message="the task asked to stop")
    LateFailingTask.release.set()
    stopping.join(60)
    wait_until(runner.done.is_set, 30, message="the task stopped")
    assert runner.failed  # what it did is not committed: an exactly-once task aborts its transaction
    assert "Task late-0 threw an exception after being scheduled for shutdown" in caplog.text
    assert "Task late-0 failed" not in caplog.text
    assert rt.connector_status("late")["connector"]["state"] == "STOPPED"
    assert all(t["state"] != "FAILED" for t in rt.connector_status("late")["tasks"])


def test_request_task_reconfiguration(runtime_factory, bootstrap, unique) -> None:
    topic = f"reconf-{unique}"
    create_topic(bootstrap, topic)
    rt = runtime_factory()
    rt.plugins.register(ReconfiguringConnector)
    rt.create_connector("re", {"connector.class": "ReconfiguringConnector", "topic": topic, "tasks.max": "3"})
    wait_until(lambda: statuses(rt, "re") == ("RUNNING", ["RUNNING"]), 30, message="one task")
    connector = ReconfiguringConnector.instances[-1]
    connector.count = 3
    connector.context.request_task_reconfiguration()
    wait_until(lambda: statuses(rt, "re") == ("RUNNING", ["RUNNING"] * 3), 30, message="three tasks")
    assert len(rt.connector_info("re")["tasks"]) == 3


def test_client_override_policy(runtime_factory, bootstrap, unique) -> None:
    topic = f"pol-{unique}"
    create_topic(bootstrap, topic)
    rt = runtime_factory(**{"connector.client.config.override.policy": "None"})
    with pytest.raises(ConnectRestError) as e:
        rt.create_connector("v", {"connector.class": "VerifyingSink", "topics": topic,
                                  "consumer.override.group.id": "mine"})
    assert e.value.status == 400 and "The 'None' policy does not allow 'group.id' to be overridden" in e.value.message
    assert rt.connectors() == []
    rt2 = runtime_factory(f"pol2-{unique}")  # the default policy, All, allows it
    name = f"grp-{unique}"
    rt2.create_connector(name, {"connector.class": "VerifyingSink", "topics": topic, "value.converter": STRING,
                                "consumer.override.group.id": f"mine-{unique}"})
    from confluent_kafka import Producer
    p = Producer({"bootstrap.servers": bootstrap})
    p.produce(topic, b"{}")
    p.flush(10)
    wait_until(lambda: verifying.received(name), 30, message="a record")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    wait_until(lambda: f"mine-{unique}" in {g.group_id for g in admin.list_consumer_groups().result(10).valid},
               30, message="the overridden consumer group")


def test_unknown_executor_is_refused_before_anything_is_created(bootstrap: str, unique: str) -> None:
    with pytest.raises(ValueError, match="Invalid value process for executor: must be one of threads, processes, "
                                         "spark or an Executor"):
        ConnectRuntime(bootstrap, f"ex-{unique}", executor="process")
    topics = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).topics
    assert not [t for t in topics if t.startswith(f"ex-{unique}")]


def test_a_closed_runtime_lets_go_of_its_admin_clients(runtime_factory) -> None:
    # A closed runtime waits in reference cycles for the garbage collector; its admin clients (which have no
    # close()) stayed connected meanwhile, reconnecting through the restarts of the tests' brokers.
    rt = runtime_factory()
    shared = rt.herder.services.shared_admin(rt.worker_config.client_config("admin"), "a task of the test")
    assert rt.herder.services.shared_admin(rt.worker_config.client_config("admin"), "another") is shared
    rt.close()
    assert rt.herder.services._admins == {}
    with pytest.raises(RuntimeError, match="This ConnectRuntime is closed"):
        rt.kafka_cluster_id()
