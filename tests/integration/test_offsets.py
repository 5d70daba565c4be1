"""KIP-875 against real brokers: the STOPPED state, and reading, altering and resetting the offsets of source
and sink connectors (the KIP's test plan), on the worker's cluster and on another one."""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, ConsumerGroupState, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from helpers import wait_until

from connect_magics import ConnectRestError, ConnectRuntime
from connect_magics.api import SourceConnector
from connect_magics.api.connector import SinkConnector
from connect_magics.api.errors import ConnectException
from connect_magics.connectors import verifying
from connect_magics.connectors.sequence import SequenceSourceConnector
from connect_magics.connectors.verifying import VerifyingSinkConnector
from connect_magics.runtime.offsets import NOT_STOPPED, UNSUPPORTED, ZOMBIES
from connect_magics.storage.config_store import TargetState
from connect_magics.storage.fence import ProducerFence
from connect_magics.storage.group_offsets import alter_group_offsets, list_group_offsets
from connect_magics.storage.kafka_log import ensure_topic
from connect_magics.storage.offset_store import OffsetStore, freeze

JSON = "org.apache.kafka.connect.json.JsonConverter"
SCHEMALESS = {"value.converter": JSON, "value.converter.schemas.enable": "false"}
ALTERED = "The offsets for this connector have been altered successfully"
RESET = "The offsets for this connector have been reset successfully"
FRAMEWORK = ("The Connect framework-managed offsets for this connector have been {0} successfully. However, if "
             "this connector manages offsets externally, they will need to be manually {0} in the system that the "
             "connector uses.")

# -- connectors whose hook and lifecycle the tests control ----------------------------------------------------

HOOK_CALLS: dict[str, list[dict[Any, Any]]] = {}
FAILS: dict[str, set[str]] = {}


def _hook(config: dict[str, str], offsets: dict[Any, Any], default: Any) -> Any:
    HOOK_CALLS.setdefault(config["name"], []).append(dict(offsets))
    mode = config.get("hook.mode", "true")
    if mode == "default":
        return default()
    if mode == "unsupported":
        raise NotImplementedError("external offsets cannot change")
    if mode == "connect-error":
        raise ConnectException("the hook refuses these offsets")
    if mode == "other-error":
        raise ValueError("a bug in the hook")
    return True


class HookSource(SequenceSourceConnector):
    """SequenceSource with a configurable ``alter_offsets`` (``hook.mode``) that can fail to start or stop."""

    def start(self, props: dict[str, str]) -> None:
        self.name = props["name"]
        if "start" in FAILS.get(self.name, ()):
            raise ConnectException("start failed on purpose")
        super().start(props)

    def stop(self) -> None:
        if "stop" in FAILS.get(self.name, ()):
            raise ConnectException("stop failed on purpose")

    def alter_offsets(self, connector_config: dict[str, str], offsets: dict[Any, Any]) -> bool:
        return _hook(connector_config, offsets, lambda: SourceConnector.alter_offsets(self, connector_config, offsets))


class HookSink(VerifyingSinkConnector):
    """VerifyingSink with a configurable ``alter_offsets`` (``hook.mode``)."""

    def alter_offsets(self, connector_config: dict[str, str], offsets: dict[Any, Any]) -> bool:
        return _hook(connector_config, offsets, lambda: SinkConnector.alter_offsets(self, connector_config, offsets))


# -- fixtures and helpers ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rt(bootstrap: str) -> Iterator[ConnectRuntime]:
    runtime = ConnectRuntime(bootstrap, f"offsets-{uuid.uuid4().hex[:8]}",
                             {"offset.flush.interval.ms": "200", "offset.storage.partitions": "5"})
    runtime.plugins.register(HookSource)
    runtime.plugins.register(HookSink)
    try:
        yield runtime
    finally:
        runtime.close()


def create_topic(bootstrap: str, name: str, partitions: int = 1) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)


def produce(bootstrap: str, topic: str, per_partition: dict[int, int]) -> None:
    p = Producer({"bootstrap.servers": bootstrap})
    for partition, count in per_partition.items():
        for i in range(count):
            p.produce(topic, json.dumps({"p": partition, "i": i}).encode(), partition=partition)
    assert p.flush(30) == 0


def end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "end-offsets"})
    try:
        parts = c.list_topics(topic, timeout=10).topics[topic].partitions
        return {p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in parts}
    finally:
        c.close()


def read_records(bootstrap: str, topic: str) -> list[Any]:
    """Every record of ``topic``, up to the end offsets at the time of the call."""
    ends = end_offsets(bootstrap, topic)
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "reader", "enable.auto.commit": False})
    c.assign([TopicPartition(topic, p, 0) for p in ends])
    out: list[Any] = []
    positions = {p: 0 for p in ends}
    try:
        def done() -> bool:
            while True:  # batch after batch while records come (no pause between them), then ask again later
                batch = c.consume(10_000, timeout=0.2)
                out.extend(m for m in batch if not m.error())
                for tp in c.position([TopicPartition(topic, p) for p in ends]):  # past transaction markers
                    positions[tp.partition] = max(positions[tp.partition], tp.offset)
                if all(positions[p] >= e for p, e in ends.items()):
                    return True
                if not batch:
                    return False
        wait_until(done, 60, message=f"the records of {topic}")
    finally:
        c.close()
    return out


def sequence_counts(bootstrap: str, topic: str) -> Counter:
    """How often each (task, seq) of a SequenceSource is in ``topic``."""
    return Counter((v["task"], v["seq"]) for v in (json.loads(m.value()) for m in read_records(bootstrap, topic)))


def stored_offsets(bootstrap: str, topic: str, connector: str) -> dict[str, Any]:
    """The last value (None: tombstone) of every key of ``connector`` in an offsets topic."""
    last: dict[str, Any] = {}
    for m in read_records(bootstrap, topic):
        key = json.loads(m.key())
        if key[0] == connector:
            last[json.dumps(key[1], sort_keys=True)] = None if m.value() is None else json.loads(m.value())
    return last


def group_offsets(bootstrap: str, group: str) -> dict[tuple[str, int], int]:
    return list_group_offsets({"bootstrap.servers": bootstrap}, group)


def group_exists(bootstrap: str, group: str) -> bool:
    admin = AdminClient({"bootstrap.servers": bootstrap})  # keep a reference until the future is done
    try:
        found = admin.describe_consumer_groups([group])[group].result(30)
    except KafkaException as e:
        if e.args[0].code() == KafkaError.GROUP_ID_NOT_FOUND:
            return False
        raise
    return found.state not in (ConsumerGroupState.DEAD, ConsumerGroupState.UNKNOWN)


def source(rt: ConnectRuntime, name: str, topic: str, records: int, tasks: int = 1, initial_state: str | None = None,
           **extra: str) -> None:
    rt.create_connector(name, {"connector.class": "HookSource", "topic": topic, "records": str(records),
                               "tasks.max": str(tasks), **SCHEMALESS, **extra}, initial_state=initial_state)


def seed_source_offsets(rt: ConnectRuntime, name: str, offsets: dict[int, int]) -> None:
    """Offsets of SequenceSource tasks in the worker's offsets topic, as an earlier run would have left them."""
    rt.offset_store.log.write([(json.dumps([name, {"task": t}]).encode(), json.dumps({"seq": s}).encode())
                               for t, s in offsets.items()])


def sink(rt: ConnectRuntime, name: str, topic: str, **extra: str) -> None:
    rt.create_connector(name, {"connector.class": "HookSink", "topics": topic, **SCHEMALESS, **extra})


def source_offsets(rt: ConnectRuntime, name: str) -> dict[int, int]:
    return {o["partition"]["task"]: o["offset"]["seq"] for o in rt.get_offsets(name)["offsets"]}


def sink_offsets(rt: ConnectRuntime, name: str) -> dict[tuple[str, int], int]:
    return {(o["partition"]["kafka_topic"], o["partition"]["kafka_partition"]): o["offset"]["kafka_offset"]
            for o in rt.get_offsets(name)["offsets"]}


def error(call: Any, *args: Any) -> ConnectRestError:
    with pytest.raises(ConnectRestError) as info:
        call(*args)
    return info.value


def state(rt: ConnectRuntime, name: str) -> tuple[str, list[str]]:
    s = rt.connector_status(name)
    return s["connector"]["state"], [t["state"] for t in s["tasks"]]


def stop(rt: ConnectRuntime, name: str) -> None:
    rt.stop_connector(name)
    assert state(rt, name) == ("STOPPED", [])


# -- reading -------------------------------------------------------------------------------------------------------


def test_offsets_of_unknown_connector(rt: ConnectRuntime) -> None:
    body = {"offsets": [{"partition": {"a": 1}, "offset": {"b": 2}}]}
    for call, args in ((rt.get_offsets, ()), (rt.alter_offsets, (body,)), (rt.reset_offsets, ())):
        e = error(call, "nope", *args)
        assert (e.status, e.message) == (404, "Connector nope not found")
    # As in Kafka, an empty request is refused before the connector is looked up.
    e = error(rt.alter_offsets, "nope", {"offsets": []})
    assert (e.status, e.message) == (400, "Partitions / offsets need to be provided for an alter offsets request")


def test_get_offsets_of_running_source_and_sink(rt: ConnectRuntime, bootstrap: str, unique: str) -> None:
    topic = f"run-{unique}"
    create_topic(bootstrap, topic, 2)
    src, snk = f"src-{unique}", f"snk-{unique}"
    source(rt, src, topic, 50, tasks=2)
    sink(rt, snk, topic)
    wait_until(lambda: source_offsets(rt, src) == {0: 49, 1: 49}, 30, message="source offsets at seq 49")
    ends = end_offsets(bootstrap, topic)
    assert sum(ends.values()) == 100
    wait_until(lambda: sink_offsets(rt, snk) == {(topic, p): e for p, e in ends.items()}, 30,
               message="sink offsets at the end of the topic")
    got = rt.get_offsets(snk)["offsets"]
    assert got[0] == {"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": ends[0]}}
    assert {json.dumps(o, sort_keys=True) for o in rt.get_offsets(src)["offsets"]} == {
        json.dumps({"partition": {"task": t}, "offset": {"seq": 49}}, sort_keys=True) for t in (0, 1)}
    assert state(rt, src) == ("RUNNING", ["RUNNING", "RUNNING"])
    answer = rt.get_offsets(src)
    answer["offsets"][0]["offset"]["seq"] = -1  # editing an answer changes nothing
    assert source_offsets(rt, src) == {0: 49, 1: 49}


# -- responses depending on the hook -----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["true", "default", "unsupported", "connect-error", "other-error"])
def test_source_alter_and_reset_responses_depend_on_the_hook(rt: ConnectRuntime, bootstrap: str, unique: str,
                                                             mode: str) -> None:
    name = f"hook-src-{mode}-{unique}"
    source(rt, name, f"unused-{unique}", 10, initial_state="STOPPED", **{"hook.mode": mode})
    seed_source_offsets(rt, name, {0: 3})
    worker_topic = rt.worker_config["offset.storage.topic"]
    before = end_offsets(bootstrap, worker_topic)
    body = {"offsets": [{"partition": {"task": 0}, "offset": {"seq": 7}}, {"partition": {"task": 1},
                                                                           "offset": {"seq": 1}}]}
    failure = {"unsupported": UNSUPPORTED.format(c=name), "connect-error": "the hook refuses these offsets",
               "other-error": f"Failed to modify offsets for source connector {name}"}.get(mode)
    if failure is None:
        message = ALTERED if mode == "true" else FRAMEWORK.format("altered")
        assert rt.alter_offsets(name, body) == {"message": message}
        assert source_offsets(rt, name) == {0: 7, 1: 1}
        message = RESET if mode == "true" else FRAMEWORK.format("reset")
        assert rt.reset_offsets(name) == {"message": message}
        assert source_offsets(rt, name) == {}
        assert HOOK_CALLS[name] == [{(("task", 0),): {"seq": 7}, (("task", 1),): {"seq": 1}},
                                    {(("task", 0),): None, (("task", 1),): None}]
    else:
        for call, args in ((rt.alter_offsets, (body,)), (rt.reset_offsets, ())):
            e = error(call, name, *args)
            assert (e.status, e.message) == (500, failure)
        assert source_offsets(rt, name) == {0: 3}
        assert end_offsets(bootstrap, worker_topic) == before  # nothing was written
        assert len(HOOK_CALLS[name]) == 2


@pytest.mark.parametrize("mode", ["true", "default", "unsupported", "connect-error", "other-error"])
def test_sink_alter_and_reset_responses_depend_on_the_hook(rt: ConnectRuntime, bootstrap: str, unique: str,
                                                           mode: str) -> None:
    name, topic = f"hook-snk-{mode}-{unique}", f"hook-{unique}"
    create_topic(bootstrap, topic, 2)
    rt.create_connector(name, {"connector.class": "HookSink", "topics": topic, "hook.mode": mode},
                        initial_state="STOPPED")
    group = f"connect-{name}"
    alter_group_offsets(AdminClient({"bootstrap.servers": bootstrap}), group, {(topic, 0): 3})
    body = {"offsets": [{"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 7}},
                        {"partition": {"kafka_topic": topic, "kafka_partition": "1"}, "offset": {"kafka_offset": "1"}}]}
    failure = {"unsupported": UNSUPPORTED.format(c=name), "connect-error": "the hook refuses these offsets",
               "other-error": f"Failed to modify offsets for sink connector {name}"}.get(mode)
    from connect_magics.api.records import TopicPartition as TP
    if failure is None:
        message = ALTERED if mode == "true" else FRAMEWORK.format("altered")
        assert rt.alter_offsets(name, body) == {"message": message}
        assert sink_offsets(rt, name) == {(topic, 0): 7, (topic, 1): 1}
        message = RESET if mode == "true" else FRAMEWORK.format("reset")
        assert rt.reset_offsets(name) == {"message": message}
        assert sink_offsets(rt, name) == {} and not group_exists(bootstrap, group)
        assert HOOK_CALLS[name] == [{TP(topic, 0): 7, TP(topic, 1): 1}, {TP(topic, 0): None, TP(topic, 1): None}]
    else:
        for call, args in ((rt.alter_offsets, (body,)), (rt.reset_offsets, ())):
            e = error(call, name, *args)
            assert (e.status, e.message) == (500, failure)
        assert group_offsets(bootstrap, group) == {(topic, 0): 3}
        assert HOOK_CALLS[name] == [{TP(topic, 0): 7, TP(topic, 1): 1}, {TP(topic, 0): None}]


# -- only STOPPED connectors with no tasks ---------------------------------------------------------------------------


def test_cannot_modify_offsets_unless_stopped_with_no_tasks(rt: ConnectRuntime, bootstrap: str, unique: str) -> None:
    topic = f"state-{unique}"
    create_topic(bootstrap, topic, 1)
    running, paused, snk = f"running-{unique}", f"paused-{unique}", f"snk-{unique}"
    source(rt, running, topic, 20)
    source(rt, paused, topic, 20)
    sink(rt, snk, topic)
    wait_until(lambda: source_offsets(rt, running) == {0: 19} and source_offsets(rt, paused) == {0: 19}, 30,
               message="both sources done")
    wait_until(lambda: sink_offsets(rt, snk) == {(topic, 0): 40}, 30, message="sink done")
    rt.pause_connector(paused)
    # STOPPED in the config topic, but its tasks are not gone yet (what an older worker would do).
    stuck = f"stuck-{unique}"
    source(rt, stuck, topic, 0)
    rt.pause_connector(stuck)
    rt.config_store.put_target_state(stuck, TargetState.STOPPED)
    assert rt.task_configs(stuck)
    worker_topic = rt.worker_config["offset.storage.topic"]
    before = end_offsets(bootstrap, worker_topic)
    HOOK_CALLS.clear()
    for name, body in ((running, {"task": 0}), (paused, {"task": 0}), (stuck, {"task": 0}),
                       (snk, {"kafka_topic": topic, "kafka_partition": 0})):
        offset = {"kafka_offset": 1} if name == snk else {"seq": 1}
        for call, args in ((rt.alter_offsets, ({"offsets": [{"partition": body, "offset": offset}]},)),
                           (rt.reset_offsets, ())):
            e = error(call, name, *args)
            assert (e.status, e.message) == (400, NOT_STOPPED.format(c=name))
            assert f"'/connectors/{name}/stop'" in e.message
    assert HOOK_CALLS == {}
    assert end_offsets(bootstrap, worker_topic) == before
    assert source_offsets(rt, running) == {0: 19} and source_offsets(rt, paused) == {0: 19}
    assert group_offsets(bootstrap, f"connect-{snk}") == {(topic, 0): 40}
    assert state(rt, running)[0] == "RUNNING" and state(rt, paused)[0] == "PAUSED"


# -- alter, reset, resume: where the tasks start -----------------------------------------------------------------


def test_alter_stopped_source_then_resume_starts_at_the_altered_offsets(rt: ConnectRuntime, bootstrap: str,
                                                                        unique: str) -> None:
    topic, name = f"alter-src-{unique}", f"alter-src-{unique}"
    create_topic(bootstrap, topic, 1)
    source(rt, name, topic, 30, tasks=3)
    wait_until(lambda: source_offsets(rt, name) == {0: 29, 1: 29, 2: 29}, 30, message="first run done")
    stop(rt, name)
    # Task 0 continues after seq 9, task 1 from the beginning (reset), task 2 is untouched.
    answer = rt.alter_offsets(name, {"offsets": [{"partition": {"task": 0}, "offset": {"seq": 9}},
                                                 {"partition": {"task": 1}, "offset": None}]})
    assert answer == {"message": ALTERED}
    assert source_offsets(rt, name) == {0: 9, 2: 29}
    assert sequence_counts(bootstrap, topic) == Counter({(t, s): 1 for t in range(3) for s in range(30)})
    rt.resume_connector(name)
    wait_until(lambda: source_offsets(rt, name) == {0: 29, 1: 29, 2: 29}, 30, message="second run done")
    counts = sequence_counts(bootstrap, topic)
    again = {k: n - 1 for k, n in counts.items() if n > 1}
    assert set(again) == {(0, s) for s in range(10, 30)} | {(1, s) for s in range(30)}
    assert set(again.values()) == {1} and sum(counts.values()) == 90 + 20 + 30


def test_alter_stopped_sink_then_resume_starts_at_the_altered_offsets(rt: ConnectRuntime, bootstrap: str,
                                                                      unique: str) -> None:
    topic, name = f"alter-snk-{unique}", f"alter-snk-{unique}"
    create_topic(bootstrap, topic, 3)
    produce(bootstrap, topic, {0: 20, 1: 15, 2: 10})
    sink(rt, name, topic)
    wait_until(lambda: sink_offsets(rt, name) == {(topic, 0): 20, (topic, 1): 15, (topic, 2): 10}, 30,
               message="the sink read everything")
    stop(rt, name)
    assert len(verifying.received(name)) == 45
    verifying.clear(name)
    answer = rt.alter_offsets(name, {"offsets": [
        {"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 5}},
        {"partition": {"kafka_topic": topic, "kafka_partition": 1}, "offset": None}]})
    assert answer == {"message": ALTERED}
    assert sink_offsets(rt, name) == {(topic, 0): 5, (topic, 2): 10}
    rt.resume_connector(name)
    wait_until(lambda: sink_offsets(rt, name) == {(topic, 0): 20, (topic, 1): 15, (topic, 2): 10}, 30,
               message="the sink caught up")
    wait_until(lambda: len(verifying.flushed(name)) >= 30, 30, message="30 records flushed")
    seen = Counter((r.kafka_partition, r.kafka_offset) for r in verifying.received(name))
    assert seen == Counter({(0, o): 1 for o in range(5, 20)} | {(1, o): 1 for o in range(15)})


def test_reset_stopped_source_then_resume_starts_from_the_beginning(rt: ConnectRuntime, bootstrap: str,
                                                                    unique: str) -> None:
    topic, name = f"reset-src-{unique}", f"reset-src-{unique}"
    create_topic(bootstrap, topic, 1)
    source(rt, name, topic, 25, tasks=2)
    wait_until(lambda: source_offsets(rt, name) == {0: 24, 1: 24}, 30, message="first run done")
    stop(rt, name)
    HOOK_CALLS.pop(name, None)
    assert rt.reset_offsets(name) == {"message": RESET}
    assert HOOK_CALLS[name] == [{(("task", 0),): None, (("task", 1),): None}]  # every partition, reset
    assert rt.get_offsets(name) == {"offsets": []}
    worker_topic = rt.worker_config["offset.storage.topic"]
    assert set(stored_offsets(bootstrap, worker_topic, name).values()) == {None}  # tombstones, read back
    before = end_offsets(bootstrap, worker_topic)
    assert rt.reset_offsets(name) == {"message": RESET}  # idempotent, and writes nothing more
    assert HOOK_CALLS[name][-1] == {}
    assert end_offsets(bootstrap, worker_topic) == before
    rt.resume_connector(name)
    wait_until(lambda: source_offsets(rt, name) == {0: 24, 1: 24}, 30, message="second run done")
    assert sequence_counts(bootstrap, topic) == Counter({(t, s): 2 for t in range(2) for s in range(25)})


def test_reset_stopped_sink_then_resume_starts_from_the_beginning(rt: ConnectRuntime, bootstrap: str,
                                                                  unique: str) -> None:
    topic, name = f"reset-snk-{unique}", f"reset-snk-{unique}"
    create_topic(bootstrap, topic, 2)
    produce(bootstrap, topic, {0: 12, 1: 8})
    sink(rt, name, topic)
    wait_until(lambda: sink_offsets(rt, name) == {(topic, 0): 12, (topic, 1): 8}, 30, message="the sink read all")
    stop(rt, name)
    verifying.clear(name)
    assert rt.reset_offsets(name) == {"message": RESET}
    assert not group_exists(bootstrap, f"connect-{name}")
    assert rt.get_offsets(name) == {"offsets": []}
    assert rt.reset_offsets(name) == {"message": RESET}  # the group is gone already: still a success
    rt.resume_connector(name)
    wait_until(lambda: sink_offsets(rt, name) == {(topic, 0): 12, (topic, 1): 8}, 30, message="read all again")
    wait_until(lambda: len(verifying.flushed(name)) >= 20, 30, message="20 records flushed")
    seen = Counter((r.kafka_partition, r.kafka_offset) for r in verifying.received(name))
    assert seen == Counter({(0, o): 1 for o in range(12)} | {(1, o): 1 for o in range(8)})


def test_sink_reset_and_alter_with_an_active_member_are_zombie_errors(rt: ConnectRuntime, bootstrap: str,
                                                                      unique: str) -> None:
    topic, name = f"zombie-{unique}", f"zombie-{unique}"
    create_topic(bootstrap, topic, 1)
    rt.create_connector(name, {"connector.class": "HookSink", "topics": topic}, initial_state="STOPPED")
    group = f"connect-{name}"
    zombie = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest"})
    try:
        zombie.subscribe([topic])
        wait_until(lambda: zombie.poll(0.1) is None and zombie.assignment(), 30, message="the zombie joined")
        alter = {"offsets": [{"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 1}}]}
        e = error(rt.alter_offsets, name, alter)
        assert (e.status, e.message) == (500, ZOMBIES.format(verb="alter", c=name))
        delete = {"offsets": [{"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": None}]}
        e = error(rt.alter_offsets, name, delete)
        assert (e.status, e.message) == (500, ZOMBIES.format(verb="alter", c=name))
        e = error(rt.reset_offsets, name)
        assert (e.status, e.message) == (500, ZOMBIES.format(verb="reset", c=name))
        assert group_exists(bootstrap, group)
    finally:
        zombie.close()
    assert rt.reset_offsets(name) == {"message": RESET}  # once the zombie is gone


# -- overridden group, custom offsets topic, other clusters ------------------------------------------------------------


def test_sink_with_an_overridden_group_id(rt: ConnectRuntime, bootstrap: str, unique: str) -> None:
    topic, name, group = f"grp-{unique}", f"grp-{unique}", f"custom-group-{unique}"
    create_topic(bootstrap, topic, 2)
    produce(bootstrap, topic, {0: 6, 1: 4})
    sink(rt, name, topic, **{"consumer.override.group.id": group})
    wait_until(lambda: sink_offsets(rt, name) == {(topic, 0): 6, (topic, 1): 4}, 30, message="read all")
    assert group_offsets(bootstrap, group) == {(topic, 0): 6, (topic, 1): 4}
    stop(rt, name)
    body = {"offsets": [{"partition": {"kafka_topic": topic, "kafka_partition": 1}, "offset": {"kafka_offset": 2}}]}
    assert rt.alter_offsets(name, body) == {"message": ALTERED}
    assert group_offsets(bootstrap, group) == {(topic, 0): 6, (topic, 1): 2} == sink_offsets(rt, name)
    assert rt.reset_offsets(name) == {"message": RESET}
    assert not group_exists(bootstrap, group) and rt.get_offsets(name) == {"offsets": []}
    assert not group_exists(bootstrap, f"connect-{name}")


def test_source_with_a_custom_offsets_topic(rt: ConnectRuntime, bootstrap: str, unique: str) -> None:
    topic, name, own = f"own-{unique}", f"own-{unique}", f"own-offsets-{unique}"
    create_topic(bootstrap, topic, 1)
    worker_topic = rt.worker_config["offset.storage.topic"]
    # An offset the worker's topic has from before (e.g. written before offsets.storage.topic was set).
    rt.offset_store.log.write([(json.dumps([name, {"task": 7}]).encode(), b'{"seq":3}')])
    source(rt, name, topic, 20, **{"offsets.storage.topic": own})
    wait_until(lambda: source_offsets(rt, name) == {0: 19, 7: 3}, 30, message="merged offsets")
    assert stored_offsets(bootstrap, own, name) == {'{"task": 0}': {"seq": 19}}
    wait_until(lambda: stored_offsets(bootstrap, worker_topic, name).get('{"task": 0}') == {"seq": 19}, 30,
               message="the commit copied to the worker's topic")
    stop(rt, name)
    assert rt.alter_offsets(name, {"offsets": [{"partition": {"task": 0}, "offset": {"seq": 4}}]}) == \
        {"message": ALTERED}
    assert source_offsets(rt, name) == {0: 4, 7: 3}
    assert stored_offsets(bootstrap, own, name)['{"task": 0}'] == {"seq": 4}
    wait_until(lambda: stored_offsets(bootstrap, worker_topic, name)['{"task": 0}'] == {"seq": 4}, 30,
               message="the altered offset copied to the worker's topic")
    assert rt.reset_offsets(name) == {"message": RESET}
    assert rt.get_offsets(name) == {"offsets": []}
    # Tombstones for every known partition, in both topics.
    assert stored_offsets(bootstrap, own, name) == {'{"task": 0}': None, '{"task": 7}': None}
    assert stored_offsets(bootstrap, worker_topic, name) == {'{"task": 0}': None, '{"task": 7}': None}
    assert rt.reset_offsets(name) == {"message": RESET}
    rt.resume_connector(name)
    wait_until(lambda: source_offsets(rt, name) == {0: 19}, 30, message="second run done")
    assert sequence_counts(bootstrap, topic) == Counter({(0, s): 2 for s in range(20)})


def test_source_on_a_different_kafka_cluster(rt: ConnectRuntime, bootstrap: str, second_broker: Any,
                                             unique: str) -> None:
    other = second_broker.bootstrap_servers
    topic, name = f"far-src-{unique}", f"far-src-{unique}"
    create_topic(other, topic, 1)
    worker_topic = rt.worker_config["offset.storage.topic"]
    source(rt, name, topic, 15, **{"producer.override.bootstrap.servers": other,
                                   "admin.override.bootstrap.servers": other})
    wait_until(lambda: source_offsets(rt, name) == {0: 14}, 30, message="first run done")
    # The connector's offsets live on its own cluster, in a topic named like the worker's.
    assert stored_offsets(other, worker_topic, name) == {'{"task": 0}': {"seq": 14}}
    stop(rt, name)
    assert rt.alter_offsets(name, {"offsets": [{"partition": {"task": 0}, "offset": {"seq": 9}}]}) == \
        {"message": ALTERED}
    assert stored_offsets(other, worker_topic, name) == {'{"task": 0}': {"seq": 9}}
    assert source_offsets(rt, name) == {0: 9}
    rt.resume_connector(name)
    wait_until(lambda: source_offsets(rt, name) == {0: 14}, 30, message="second run done")
    stop(rt, name)
    assert rt.reset_offsets(name) == {"message": RESET}
    assert stored_offsets(other, worker_topic, name) == {'{"task": 0}': None}
    assert set(stored_offsets(bootstrap, worker_topic, name).values()) == {None}
    assert rt.get_offsets(name) == {"offsets": []}
    counts = sequence_counts(other, topic)
    assert counts == Counter({(0, s): 1 for s in range(10)} | {(0, s): 2 for s in range(10, 15)})


def test_sink_on_a_different_kafka_cluster(rt: ConnectRuntime, bootstrap: str, second_broker: Any,
                                           unique: str) -> None:
    other = second_broker.bootstrap_servers
    topic, name = f"far-snk-{unique}", f"far-snk-{unique}"
    create_topic(other, topic, 2)
    produce(other, topic, {0: 5, 1: 7})
    sink(rt, name, topic, **{"consumer.override.bootstrap.servers": other,
                             "admin.override.bootstrap.servers": other})
    wait_until(lambda: sink_offsets(rt, name) == {(topic, 0): 5, (topic, 1): 7}, 30, message="read all")
    group = f"connect-{name}"
    assert group_offsets(other, group) == {(topic, 0): 5, (topic, 1): 7}
    assert not group_exists(bootstrap, group)
    stop(rt, name)
    body = {"offsets": [{"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 1}},
                        {"partition": {"kafka_topic": topic, "kafka_partition": 1}, "offset": None}]}
    assert rt.alter_offsets(name, body) == {"message": ALTERED}
    assert group_offsets(other, group) == {(topic, 0): 1} == sink_offsets(rt, name)
    assert rt.reset_offsets(name) == {"message": RESET}
    assert not group_exists(other, group) and rt.get_offsets(name) == {"offsets": []}
    assert not group_exists(bootstrap, group)


# -- malformed requests change nothing -------------------------------------------------------------------------------

SINK_BAD = [
    ([{"offset": {"kafka_offset": 1}}], 400, "The partition for a sink connector offset cannot be null or missing"),
    ([{"partition": {"kafka_topic": "t"}, "offset": {"kafka_offset": 1}}], 400,
     "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'"),
    ([{"partition": {"kafka_topic": None, "kafka_partition": 0}, "offset": {"kafka_offset": 1}}], 400,
     "Kafka topic names must be valid strings and may not be null"),
    ([{"partition": {"kafka_topic": "{t}", "kafka_partition": None}, "offset": {"kafka_offset": 1}}], 400,
     "Kafka partitions must be valid numbers and may not be null"),
    ([{"partition": {"kafka_topic": "{t}", "kafka_partition": "a"}, "offset": {"kafka_offset": 1}}], 400,
     "Failed to parse the following Kafka partition value in the provided offsets: 'a'. Partition values for "
     "sink connectors need to be integers."),
    ([{"partition": {"kafka_topic": "{t}", "kafka_partition": 1.5}, "offset": {"kafka_offset": 1}}], 400,
     "Failed to parse the following Kafka partition value in the provided offsets: '1.5'. Partition values for "
     "sink connectors need to be integers."),
    ([{"partition": {"kafka_topic": "{t}", "kafka_partition": 0}, "offset": {"offset": 1}}], 400,
     "The offset for a sink connector should either be null or contain the key 'kafka_offset'"),
    ([{"partition": {"kafka_topic": "{t}", "kafka_partition": 0}, "offset": {"kafka_offset": "ten"}}], 400,
     "Failed to parse the following Kafka offset value in the provided offsets: 'ten'. Offset values for sink "
     "connectors need to be integers."),
    ([{"partition": {"kafka_topic": "{t}", "kafka_partition": 0}, "offset": {"kafka_offset": -3}}], 400,
     "Kafka offsets must be non-negative, but got -3 for partition 0 of topic '{t}'"),
    # The first entry is fine: nothing at all changes when a later one is wrong.
    ([{"partition": {"kafka_topic": "{t}", "kafka_partition": 0}, "offset": {"kafka_offset": 1}},
      {"partition": {"kafka_topic": "{t}", "kafka_partition": 0}, "offset": {"kafka_offset": True}}], 400,
     "Failed to parse the following Kafka offset value in the provided offsets: 'true'. Offset values for sink "
     "connectors need to be integers."),
    ([], 400, "Partitions / offsets need to be provided for an alter offsets request"),
    ("nope", 500, 'Cannot deserialize value of "offsets": expected a list of {"partition": ..., "offset": ...} '
                  "objects, but got string"),
    ([{"partition": {"kafka_topic": "{t}", "kafka_partition": 0}, "offsets": {"kafka_offset": 1}}], 500,
     'Unrecognized field "offsets" in offsets[0]: only "partition" and "offset" are allowed'),
    ([{"partition": "{t}-0", "offset": {"kafka_offset": 1}}], 500,
     "Cannot deserialize offsets[0].partition: expected a JSON object or null, but got string"),
]


def _fill(value: Any, topic: str) -> Any:
    return json.loads(json.dumps(value).replace("{t}", topic))


@pytest.fixture(scope="module")
def stopped_pair(rt: ConnectRuntime, bootstrap: str) -> dict[str, str]:
    """A stopped sink with committed offsets and a stopped source with offsets, for the malformed cases."""
    suffix = uuid.uuid4().hex[:8]
    topic = f"bad-{suffix}"
    create_topic(bootstrap, topic, 1)
    snk, src = f"bad-snk-{suffix}", f"bad-src-{suffix}"
    rt.create_connector(snk, {"connector.class": "HookSink", "topics": topic}, initial_state="STOPPED")
    alter_group_offsets(AdminClient({"bootstrap.servers": bootstrap}), f"connect-{snk}", {(topic, 0): 4})
    source(rt, src, topic, 5, initial_state="STOPPED")
    seed_source_offsets(rt, src, {0: 2})
    return {"topic": topic, "sink": snk, "source": src}


@pytest.mark.parametrize("offsets,status,message", SINK_BAD, ids=range(len(SINK_BAD)))
def test_malformed_sink_requests_change_nothing(rt: ConnectRuntime, bootstrap: str, stopped_pair: dict[str, str],
                                                offsets: Any, status: int, message: str) -> None:
    topic, name = stopped_pair["topic"], stopped_pair["sink"]
    HOOK_CALLS.pop(name, None)
    e = error(rt.alter_offsets, name, {"offsets": _fill(offsets, topic)})
    assert (e.status, e.message) == (status, _fill(message, topic))
    assert name not in HOOK_CALLS
    assert group_offsets(bootstrap, f"connect-{name}") == {(topic, 0): 4}


SOURCE_BAD = [
    ([{"partition": {"task": 0}, "offset": {"seq": {"nested": 1}}}], 500,
     "Offsets may only contain primitive types as values, but field seq contains MAP"),
    ([{"partition": {"task": [0]}, "offset": {"seq": 1}}], 500,
     "Offsets may only contain primitive types as values, but field task contains ARRAY"),
    ([{"partition": {"task": 0}, "offset": {"seq": float("nan")}}], 500,
     "Offsets may only contain finite numbers, but field seq contains nan"),
    ([{"partition": {1: 0}, "offset": {"seq": 1}}], 500, "Offsets may only use String keys"),
    ([{"partition": None, "offset": {"seq": 1}}], 500,
     "The partition of offsets[0] is null or missing: source connector offsets need a partition object"),
    ([{"partition": {"task": 0}, "offset": {"seq": 1}}, {"partition": {"task": 1}, "offset": [1]}], 500,
     "Cannot deserialize offsets[1].offset: expected a JSON object or null, but got array"),
    ([{"partition": {"task": 0}, "offset": {"seq": 1}, "extra": 1}], 500,
     'Unrecognized field "extra" in offsets[0]: only "partition" and "offset" are allowed'),
    (None, 400, "Partitions / offsets need to be provided for an alter offsets request"),
]


@pytest.mark.parametrize("offsets,status,message", SOURCE_BAD, ids=range(len(SOURCE_BAD)))
def test_malformed_source_requests_change_nothing(rt: ConnectRuntime, bootstrap: str, stopped_pair: dict[str, str],
                                                  offsets: Any, status: int, message: str) -> None:
    name = stopped_pair["source"]
    worker_topic = rt.worker_config["offset.storage.topic"]
    before = end_offsets(bootstrap, worker_topic)
    HOOK_CALLS.pop(name, None)
    e = error(rt.alter_offsets, name, {"offsets": offsets})
    assert (e.status, e.message) == (status, message)
    assert name not in HOOK_CALLS
    assert source_offsets(rt, name) == {0: 2}
    assert end_offsets(bootstrap, worker_topic) == before


def test_malformed_request_bodies(rt: ConnectRuntime, stopped_pair: dict[str, str]) -> None:
    name = stopped_pair["source"]
    e = error(rt.alter_offsets, name, ["not", "an", "object"])
    assert (e.status, e.message) == (500, 'Cannot deserialize the alter offsets request: expected a JSON object '
                                          '{"offsets": [...]}, but got array')
    e = error(rt.alter_offsets, name, {"offsets": [], "extra": 1})
    assert (e.status, e.message) == (500, 'Unrecognized field "extra" in the alter offsets request: only "offsets" '
                                          "is allowed")
    assert source_offsets(rt, name) == {0: 2}


def test_file_source_hook_checks_partitions_and_offsets(rt: ConnectRuntime, unique: str, tmp_path: Any) -> None:
    name, path = f"file-{unique}", str(tmp_path / "in.txt")
    rt.create_connector(name, {"connector.class": "FileStreamSource", "file": path, "topic": f"file-{unique}"},
                        initial_state="STOPPED")
    e = error(rt.alter_offsets, name, {"offsets": [{"partition": {"filename": path}, "offset": {"position": -1}}]})
    assert (e.status, e.message) == (500, "The value for the 'position' key in the offset should be a non-negative value")
    e = error(rt.alter_offsets, name, {"offsets": [{"partition": {"file": path}, "offset": {"position": 1}}]})
    assert (e.status, e.message) == (500, "Partition objects should contain the key 'filename'")
    assert rt.get_offsets(name) == {"offsets": []}
    body = {"offsets": [{"partition": {"filename": path}, "offset": {"position": 12}}]}
    assert rt.alter_offsets(name, body) == {"message": ALTERED}
    assert rt.get_offsets(name) == body
    assert rt.reset_offsets(name) == {"message": RESET}
    assert rt.get_offsets(name) == {"offsets": []}


# -- the STOPPED state (the KIP's stopped-state test plan) --------------------------------------------------------------


def test_stop_running_paused_and_stopped_connectors_then_delete(rt: ConnectRuntime, bootstrap: str,
                                                                unique: str) -> None:
    topic = f"stop-{unique}"
    create_topic(bootstrap, topic, 1)
    running, paused = f"stop-running-{unique}", f"stop-paused-{unique}"
    source(rt, running, topic, -1, rate="50")
    source(rt, paused, topic, -1, rate="50")
    rt.pause_connector(paused)
    wait_until(lambda: state(rt, running) == ("RUNNING", ["RUNNING"]), 30, message="running")
    wait_until(lambda: state(rt, paused) == ("PAUSED", ["PAUSED"]), 30, message="paused")
    for name in (running, paused):
        stop(rt, name)
        stop(rt, name)  # idempotent
        assert rt.connector_info(name)["tasks"] == [] and rt.task_configs(name) == []
    # The KIP's backward-compatible target-state record.
    records = [m for m in read_records(bootstrap, rt.worker_config["config.storage.topic"])
               if m.key() == f"target-state-{running}".encode()]
    assert json.loads(records[-1].value()) == {"state": "PAUSED", "state.v2": "STOPPED"}
    rt.delete_connector(running)
    assert running not in rt.connectors()
    with pytest.raises(ConnectRestError):
        rt.connector_status(running)


def test_resume_and_pause_a_stopped_connector(rt: ConnectRuntime, bootstrap: str, unique: str) -> None:
    topic = f"restart-{unique}"
    create_topic(bootstrap, topic, 1)
    a, b = f"resume-{unique}", f"pause-{unique}"
    source(rt, a, topic, -1, initial_state="STOPPED", rate="50")
    source(rt, b, topic, -1, initial_state="STOPPED", rate="50")
    assert state(rt, a) == ("STOPPED", [])
    rt.resume_connector(a)
    wait_until(lambda: state(rt, a) == ("RUNNING", ["RUNNING"]), 30, message="resumed")
    rt.pause_connector(b)
    wait_until(lambda: state(rt, b) == ("PAUSED", []), 30, message="paused from STOPPED: no tasks, as in Kafka")
    stop(rt, a)
    stop(rt, b)


def test_stopping_failed_connectors(rt: ConnectRuntime, bootstrap: str, unique: str) -> None:
    topic = f"fail-{unique}"
    create_topic(bootstrap, topic, 1)
    failed, failing = f"failed-{unique}", f"failing-{unique}"
    FAILS[failed] = {"start", "stop"}  # fails before the stop request
    FAILS[failing] = {"stop"}  # fails while stopping
    source(rt, failed, topic, 5)
    source(rt, failing, topic, 5)
    assert state(rt, failed)[0] == "FAILED"
    wait_until(lambda: state(rt, failing) == ("RUNNING", ["RUNNING"]), 30, message="running")
    stop(rt, failed)
    stop(rt, failing)
    FAILS.clear()
    for name in (failed, failing):
        rt.resume_connector(name)
        wait_until(lambda n=name: state(rt, n) == ("RUNNING", ["RUNNING"]), 30, message=f"{name} resumed")
        wait_until(lambda n=name: source_offsets(rt, n) == {0: 4}, 30, message=f"{name} ran")


# -- DataFrames ----------------------------------------------------------------------------------------------------


def test_offsets_as_a_dataframe_edited_and_sent_back(rt: ConnectRuntime, bootstrap: str, unique: str) -> None:
    src, snk, topic = f"frame-src-{unique}", f"frame-snk-{unique}", f"frame-{unique}"
    create_topic(bootstrap, topic, 3)
    source(rt, src, topic, 10, tasks=2, initial_state="STOPPED")
    seed_source_offsets(rt, src, {0: 5, 1: 2**62})
    frame = rt.offsets_frame(src)
    assert list(frame.columns) == ["task", "seq"] and str(frame["seq"].dtype) == "Int64"
    assert rt.alter_offsets_from_frame(src, frame) == {"message": ALTERED}  # the unchanged round trip
    assert source_offsets(rt, src) == {0: 5, 1: 2**62}
    frame.loc[frame["task"] == 0, "seq"] = 100
    frame.loc[frame["task"] == 1, "seq"] = None  # reset task 1
    assert rt.alter_offsets_from_frame(src, frame) == {"message": ALTERED}
    assert source_offsets(rt, src) == {0: 100}

    rt.create_connector(snk, {"connector.class": "HookSink", "topics": topic}, initial_state="STOPPED")
    alter_group_offsets(AdminClient({"bootstrap.servers": bootstrap}), f"connect-{snk}",
                        {(topic, 0): 1, (topic, 1): 2, (topic, 2): 3})
    frame = rt.offsets_frame(snk)
    assert list(frame.columns) == ["kafka_topic", "kafka_partition", "kafka_offset"] and len(frame) == 3
    frame["kafka_offset"] = frame["kafka_offset"] * 10
    frame.loc[frame["kafka_partition"] == 2, "kafka_offset"] = None
    assert rt.alter_offsets_from_frame(snk, frame) == {"message": ALTERED}
    assert group_offsets(bootstrap, f"connect-{snk}") == {(topic, 0): 10, (topic, 1): 20}
    # A frame without metadata: the roles come from the connector's current offsets.
    plain = frame.copy()
    plain.attrs.clear()
    plain["kafka_offset"] = 7
    assert rt.alter_offsets_from_frame(snk, plain) == {"message": ALTERED}
    assert group_offsets(bootstrap, f"connect-{snk}") == {(topic, p): 7 for p in range(3)}


def test_sink_on_another_cluster_without_an_admin_override(rt: ConnectRuntime, bootstrap: str, second_broker: Any,
                                                           unique: str) -> None:
    other = second_broker.bootstrap_servers
    topic, name = f"far-consumer-{unique}", f"far-consumer-{unique}"
    create_topic(other, topic, 1)
    produce(other, topic, {0: 3})
    sink(rt, name, topic, **{"consumer.override.bootstrap.servers": other})
    wait_until(lambda: sink_offsets(rt, name) == {(topic, 0): 3}, 30, message="read all")
    stop(rt, name)
    body = {"offsets": [{"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 1}}]}
    assert rt.alter_offsets(name, body) == {"message": ALTERED}
    assert group_offsets(other, f"connect-{name}") == {(topic, 0): 1}
    assert not group_exists(bootstrap, f"connect-{name}")


def test_writes_reuse_the_record_key_of_a_known_partition(rt: ConnectRuntime, bootstrap: str, unique: str) -> None:
    name = f"keys-{unique}"
    source(rt, name, f"unused-{unique}", 1, initial_state="STOPPED")
    stored_key = json.dumps([name, {"b": 1, "a": 2}], separators=(",", ":")).encode()
    rt.offset_store.log.write([(stored_key, b'{"seq":1}')])
    # The same partition, with its fields in another order: the record must replace the stored one.
    assert rt.alter_offsets(name, {"offsets": [{"partition": {"a": 2, "b": 1}, "offset": {"seq": 2}}]}) == \
        {"message": ALTERED}
    assert rt.get_offsets(name) == {"offsets": [{"partition": {"b": 1, "a": 2}, "offset": {"seq": 2}}]}
    keys = [m.key() for m in read_records(bootstrap, rt.worker_config["offset.storage.topic"])
            if json.loads(m.key())[0] == name]
    assert keys == [stored_key, stored_key]
    assert rt.reset_offsets(name) == {"message": RESET}
    records = [m for m in read_records(bootstrap, rt.worker_config["offset.storage.topic"])
               if json.loads(m.key())[0] == name]
    assert [m.key() for m in records] == [stored_key] * 3 and records[-1].value() is None


# -- at scale -----------------------------------------------------------------------------------------------------


def test_100k_source_partitions_altered_read_back_exactly_then_reset_to_tombstones(rt: ConnectRuntime, bootstrap: str,
                                                                                  unique: str) -> None:
    """100,000 partitions through the bulk write path: what get_offsets answers, what Kafka holds and what a
    new reader of the topic finds are exactly the request; a second alter changes only its partitions; reset
    leaves a tombstone as the last record of every partition."""
    n = 100_000
    name, own = f"scale-{unique}", f"scale-offsets-{unique}"
    source(rt, name, f"unused-{unique}", 1, initial_state="STOPPED", **{"offsets.storage.topic": own})
    entries = [{"partition": {"file": f"/data/{i:06d}.csv", "shard": i % 7},
                "offset": {"position": i * 1000, "line": str(i), "eof": i % 2 == 0, "note": None}}
               for i in range(n)]
    assert rt.alter_offsets(name, {"offsets": entries}) == {"message": ALTERED}

    def by_partition(found: list[dict[str, Any]]) -> dict[str, Any]:
        return {json.dumps(e["partition"], sort_keys=True): e["offset"] for e in found}

    expected = by_partition(entries)
    got = rt.get_offsets(name)["offsets"]
    assert len(got) == n and by_partition(got) == expected
    assert stored_offsets(bootstrap, own, name) == expected  # the last record of every key in Kafka
    fresh = OffsetStore(own, {"bootstrap.servers": bootstrap})  # a new reader parses every record itself
    try:
        fresh.start()
        assert {json.dumps(p, sort_keys=True): o for p, o in fresh.offsets(name)} == expected
    finally:
        fresh.stop()

    # Later entries for a partition win; partitions not named keep their offsets.
    changed = [{"partition": {"shard": i % 7, "file": f"/data/{i:06d}.csv"}, "offset": {"position": -1}}
               for i in range(0, n, 1000)]
    assert rt.alter_offsets(name, {"offsets": [{"partition": changed[0]["partition"], "offset": {"position": 5}},
                                               *changed]}) == {"message": ALTERED}
    expected.update(by_partition(changed))
    assert by_partition(rt.get_offsets(name)["offsets"]) == expected

    assert rt.reset_offsets(name) == {"message": RESET}
    assert rt.get_offsets(name) == {"offsets": []}
    assert stored_offsets(bootstrap, own, name) == dict.fromkeys(expected)
    assert {k: v for k, v in stored_offsets(bootstrap, rt.worker_config["offset.storage.topic"], name).items()
            if k in expected} == dict.fromkeys(expected)  # the worker's topic gets the tombstones first


def test_a_graceful_restart_resumes_after_every_acknowledged_record(bootstrap: str, unique: str) -> None:
    """With offsets flushed after every poll, a stop often finds nothing new to commit while the last periodic
    offset write is still in flight (``linger.ms`` holds the runtime's writes back to widen that window): the
    stop must wait for that write, or the next instance of the task starts from older offsets and sends
    records again (seen in CI as repeated sequence numbers after a plugin upgrade)."""
    topic = f"restarts-{unique}"
    create_topic(bootstrap, topic)
    runtime = ConnectRuntime(bootstrap, f"restarts-{unique}", {"offset.flush.interval.ms": "0"})
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"restarts-{unique}"})
    consumer.assign([TopicPartition(topic, 0, 0)])
    seqs: list[int] = []

    def read_past(count: int) -> bool:
        seqs.extend(json.loads(m.value())["seq"] for m in consumer.consume(500, 0.1) if not m.error())
        return len(seqs) >= count

    try:
        runtime.create_connector("restarts", {"connector.class": "SequenceSource", "topic": topic,
                                              "rate": "100", "batch.size": "1", **SCHEMALESS})
        for restart in range(1, 9):
            wait_until(lambda restart=restart: read_past(20 * restart), 30, message=f"records before restart {restart}")
            runtime.restart_task("restarts", 0)
        wanted = len(seqs) + 20
        wait_until(lambda: read_past(wanted), 30, message="records after the last restart")
    finally:
        runtime.close()
        consumer.close()
    repeated = [s for s, n in Counter(seqs).items() if n > 1]
    assert not repeated, f"{len(repeated)} sequence numbers sent twice, e.g. {repeated[:10]}"
    assert seqs == list(range(len(seqs)))


def test_offsets_written_in_a_task_transaction_are_read_right_after_its_commit(bootstrap: str, unique: str) -> None:
    """A fenced task writes its offsets in transactions, and the commit's markers reach the offsets topic after
    ``commit_transaction`` returned: until then its last stable offset, where a read_committed reader's end is,
    falls short of them. The next instance of the task, started at once, must still read them."""
    topic = f"txn-offsets-{unique}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    ensure_topic(admin, topic, 1, 1, {"cleanup.policy": "compact"})
    store = OffsetStore(topic, {"bootstrap.servers": bootstrap})
    store.start()
    fence = ProducerFence(f"txn-offsets-{unique}", {"bootstrap.servers": bootstrap})
    fence.claim()
    partition = {"task": "0"}
    try:
        for seq in range(100):
            with fence.transaction() as producer:
                store.write("c", [(partition, {"seq": seq})], None, producer)
                producer.flush(30)
            store.transaction_committed(producer)
            store.read_to_end()
            assert store.get("c", [partition]) == {freeze(partition): {"seq": seq}}
    finally:
        fence.close()
        store.stop()
