"""KIP-558 active topic tracking against the real broker: what is recorded, read, reset, deleted,
dropped on sink reconfiguration, restored on restart, and what the worker switches forbid."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest
from helpers import wait_until
from raw_topics import create_topics, latest, read_records

from connect_magics import ConnectRestError, ConnectRuntime
from connect_magics.connectors import verifying

FAST = {"offset.flush.interval.ms": "200"}
ROUTE = {"transforms": "route", "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter"}


@pytest.fixture
def runtime_factory(bootstrap: str, unique: str) -> Iterator[Callable[..., ConnectRuntime]]:
    made: list[ConnectRuntime] = []

    def make(**worker: str) -> ConnectRuntime:
        rt = ConnectRuntime(bootstrap, f"tt-{unique}", {**FAST, **worker})
        made.append(rt)
        return rt

    yield make
    for rt in reversed(made):
        rt.close()


def topics(rt: ConnectRuntime, name: str) -> list[str]:
    return rt.connector_topics(name)[name]["topics"]


def status_records(rt: ConnectRuntime, bootstrap: str) -> list[tuple[str, bytes | None]]:
    assert rt.status_store.flush(30), "status writes still pending"
    return read_records(bootstrap, rt.worker_config["status.storage.topic"])


def key(topic: str, connector: str) -> str:
    return f"status-topic-{topic}:connector-{connector}"


def source(topic: str, records: int = 20, **extra: str) -> dict[str, str]:
    return {"connector.class": "SequenceSource", "topic": topic, "records": str(records), **extra}


def sink(name: str, **extra: str) -> dict[str, str]:
    return {"connector.class": "VerifyingSink", "verifying.name": name, **extra}


def test_source_and_sink_topics_are_tracked_reset_and_deleted(runtime_factory, bootstrap, unique) -> None:
    raw, routed = f"raw-{unique}", f"routed-{unique}"
    create_topics(bootstrap, routed)
    rt = runtime_factory()
    # The source writes to `routed` (after its transform): that is the topic it used.
    rt.create_connector("src", source(raw, **ROUTE, **{"transforms.route.regex": "raw-(.*)",
                                                       "transforms.route.replacement": "routed-$1"}))
    # The sink consumes `routed` and renames it: it used `routed` (the topic before transforms).
    rt.create_connector("sink", sink(f"v-{unique}", topics=routed, **ROUTE, **{
        "transforms.route.regex": ".*", "transforms.route.replacement": "renamed"}))
    wait_until(lambda: len(verifying.received(f"v-{unique}")) >= 20, 60, message="20 records in the sink")
    assert {r.topic for r in verifying.received(f"v-{unique}")} == {"renamed"}
    wait_until(lambda: topics(rt, "src") == [routed] and topics(rt, "sink") == [routed], 30,
               message=lambda: f"tracked topics, have {topics(rt, 'src')} and {topics(rt, 'sink')}")
    assert rt.connector_topics("src") == {"src": {"topics": [routed]}}

    records = status_records(rt, bootstrap)
    for connector in ("src", "sink"):
        written = [json.loads(v) for k, v in records if k == key(routed, connector)]
        assert len(written) == 1, "only the first use of a topic is recorded"
        value = written[0]["topic"]
        assert list(value) == ["name", "connector", "task", "discoverTimestamp"]
        assert (value["name"], value["connector"], value["task"]) == (routed, connector, 0)
        assert isinstance(value["discoverTimestamp"], int) and value["discoverTimestamp"] > 1_600_000_000_000
    assert not [k for k, _ in records if k.startswith(f"status-topic-{raw}")]

    # Reset: a tombstone for each topic; nothing else changes.
    assert rt.reset_connector_topics("src") is None
    assert topics(rt, "src") == [] and topics(rt, "sink") == [routed]
    state = latest(status_records(rt, bootstrap))
    assert key(routed, "src") in state and state[key(routed, "src")] is None
    assert state[key(routed, "sink")]["topic"]["connector"] == "sink"
    assert rt.connector_status("src")["connector"]["state"] == "RUNNING"

    # No existence check, as in Kafka Connect.
    assert rt.connector_topics("no-such-connector") == {"no-such-connector": {"topics": []}}
    rt.reset_connector_topics("no-such-connector")

    # Deleting a connector resets its topics.
    rt.delete_connector("sink")
    assert topics(rt, "sink") == []
    assert latest(status_records(rt, bootstrap))[key(routed, "sink")] is None


def test_sink_reconfiguration_drops_topics_it_no_longer_consumes(runtime_factory, bootstrap, unique) -> None:
    a, b, c = f"ta-{unique}", f"tb-{unique}", f"tc-{unique}"
    create_topics(bootstrap, a, b, c)
    rt = runtime_factory()
    for t in (a, b, c):
        rt.create_connector(f"gen-{t}", source(t, 5))
    name = f"v-{unique}"
    rt.create_connector("sink", sink(name, topics=f"{a},{b},{c}"))
    wait_until(lambda: topics(rt, "sink") == sorted([a, b, c]), 60, message="three tracked topics")

    info = rt.update_connector("sink", sink(name, topics=f"{b},{c}"))  # PUT: a is no longer consumed
    assert info["created"] is False
    assert topics(rt, "sink") == sorted([b, c])
    rt.patch_connector_config("sink", {"topics": None, "topics.regex": f"tc-{unique}"})  # PATCH: b goes too
    assert topics(rt, "sink") == [c]
    state = latest(status_records(rt, bootstrap))
    assert state[key(a, "sink")] is None and state[key(b, "sink")] is None
    assert state[key(c, "sink")]["topic"]["name"] == c

    # Reconfiguring a source leaves its topics alone.
    wait_until(lambda: topics(rt, f"gen-{a}") == [a], 30, message="the source's topic")
    rt.update_connector(f"gen-{a}", source(a, 6))
    assert topics(rt, f"gen-{a}") == [a]


def test_topics_are_restored_from_the_status_topic(runtime_factory, bootstrap, unique) -> None:
    t = f"r-{unique}"
    create_topics(bootstrap, t)
    first = runtime_factory()
    first.create_connector("src", source(t, 10))
    first.create_connector("sink", sink(f"v-{unique}", topics=t))
    wait_until(lambda: len(verifying.received(f"v-{unique}")) >= 10, 60, message="10 records in the sink")
    wait_until(lambda: topics(first, "src") == [t] and topics(first, "sink") == [t], 30,
               message="tracked topics")
    first.reset_connector_topics("sink")  # a reset is restored too
    first.close()

    second = runtime_factory()  # same group: reads the status topic back
    assert second.connector_topics("src") == {"src": {"topics": [t]}}
    assert topics(second, "sink") == []


def test_reset_disabled_is_403_and_changes_nothing(runtime_factory, bootstrap, unique) -> None:
    t = f"nr-{unique}"
    create_topics(bootstrap, t)
    rt = runtime_factory(**{"topic.tracking.allow.reset": "false"})
    rt.create_connector("src", source(t, 5))
    wait_until(lambda: topics(rt, "src") == [t], 30, message="the tracked topic")
    before = status_records(rt, bootstrap)
    with pytest.raises(ConnectRestError) as e:
        rt.reset_connector_topics("src")
    assert (e.value.status, e.value.message) == (403, "Topic tracking reset is disabled.")
    assert topics(rt, "src") == [t]
    assert status_records(rt, bootstrap) == before  # not a single record written

    rt.delete_connector("src")  # deleting resets even when reset requests are disabled
    assert latest(status_records(rt, bootstrap))[key(t, "src")] is None


def test_tracking_disabled_is_403_and_writes_no_topic_record(runtime_factory, bootstrap, unique) -> None:
    t = f"nt-{unique}"
    create_topics(bootstrap, t)
    rt = runtime_factory(**{"topic.tracking.enable": "false", "topic.tracking.allow.reset": "false"})
    rt.create_connector("src", source(t, 10))
    rt.create_connector("sink", sink(f"v-{unique}", topics=t))
    wait_until(lambda: len(verifying.received(f"v-{unique}")) >= 10, 60, message="10 records in the sink")
    for call in (rt.connector_topics, rt.reset_connector_topics):
        with pytest.raises(ConnectRestError) as e:
            call("src")
        assert (e.value.status, e.value.message) == (403, "Topic tracking is disabled.")  # checked first
    rt.delete_connector("sink")
    records = status_records(rt, bootstrap)
    assert any(k.startswith("status-connector-") for k, _ in records)
    assert [k for k, _ in records if k.startswith("status-topic-")] == []


def test_a_connector_name_must_be_a_string(runtime_factory) -> None:
    rt = runtime_factory()
    for call in (rt.connector_topics, rt.reset_connector_topics):
        with pytest.raises(ConnectRestError) as e:
            call(None)  # type: ignore[arg-type]
        assert e.value.status == 400 and "must be a string" in e.value.message
