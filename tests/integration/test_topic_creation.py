"""KIP-158 topic creation against the real broker (``auto.create.topics.enable=false``): creation with the
matched group's settings, the worker switch, broker refusals, the explain API and validation."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, NewTopic, ResourceType
from helpers import wait_until

from connect_magics import ConnectRestError, ConnectRuntime

FAST = {"offset.flush.interval.ms": "200"}
SEQUENCE = "SequenceSource"
ROUTER = "org.apache.kafka.connect.transforms.RegexRouter"
JSON_PLAIN = {"value.converter.schemas.enable": "false"}


@pytest.fixture
def runtime_factory(bootstrap: str, unique: str) -> Iterator[Callable[..., ConnectRuntime]]:
    made: list[ConnectRuntime] = []

    def make(group: str | None = None, **worker: str) -> ConnectRuntime:
        rt = ConnectRuntime(bootstrap, group or f"tc-{unique}", {**FAST, **worker})
        made.append(rt)
        return rt

    yield make
    for rt in reversed(made):
        rt.close()


@pytest.fixture(scope="module")
def admin(bootstrap: str) -> AdminClient:
    return AdminClient({"bootstrap.servers": bootstrap})


def exists(admin: AdminClient, topic: str) -> bool:
    return topic in admin.list_topics(timeout=10).topics  # all topics: never auto-creates


def partitions(admin: AdminClient, topic: str) -> tuple[int, int]:
    """(partition count, replication factor) of ``topic``."""
    md = admin.list_topics(timeout=10).topics[topic]
    return len(md.partitions), len(md.partitions[0].replicas)


def topic_config(admin: AdminClient, topic: str) -> dict[str, Any]:
    """DescribeConfigs of ``topic``: name → ConfigEntry (value and source)."""
    res = ConfigResource(ResourceType.TOPIC, topic)
    return admin.describe_configs([res])[res].result(30)


def set_on_topic(entries: dict[str, Any]) -> dict[str, str]:
    """The configs set on the topic itself (not inherited from the broker's defaults)."""
    return {k: e.value for k, e in entries.items() if e.source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value}


def broker_default(admin: AdminClient, name: str) -> int:
    broker = min(admin.list_topics(timeout=10).brokers)
    res = ConfigResource(ResourceType.BROKER, str(broker))
    return int(admin.describe_configs([res])[res].result(30)[name].value)


def count(bootstrap: str, topic: str) -> int:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "counter"})
    try:
        md = c.list_topics(topic, timeout=10).topics[topic]
        return sum(c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in md.partitions)
    finally:
        c.close()


def states(rt: ConnectRuntime, name: str) -> tuple[str, list[str]]:
    s = rt.connector_status(name)
    return s["connector"]["state"], [t["state"] for t in s["tasks"]]


def source(topic: str, records: int = 20, **extra: str) -> dict[str, str]:
    return {
        "connector.class": SEQUENCE,
        "topic": topic,
        "records": str(records),
        "batch.size": "5",
        **JSON_PLAIN,
        **extra,
    }


def creation(partitions: int | str = 1, rf: int | str = 1, **extra: str) -> dict[str, str]:
    """``topic.creation.*`` settings: ``extra`` keys are relative to ``topic.creation.``."""
    return {
        "topic.creation.default.partitions": str(partitions),
        "topic.creation.default.replication.factor": str(rf),
        **{f"topic.creation.{k}": v for k, v in extra.items()},
    }


# -- creation enabled -------------------------------------------------------------------------------


def test_routed_topic_created_with_matched_group_settings(runtime_factory, admin, bootstrap, unique) -> None:
    raw, routed = f"raw-{unique}", f"orders-{unique}"
    config = source(
        raw,
        transforms="route",
        **{
            "transforms.route.type": ROUTER,
            "transforms.route.regex": "raw-(.*)",
            "transforms.route.replacement": "orders-$1",
        },
    )
    config.update(
        creation(
            1,
            1,
            **{
                "groups": "audit, orders",
                "audit.include": "orders-.*-audit",
                "audit.partitions": "4",
                "orders.include": "orders-.*",
                "orders.exclude": ".*-tmp",
                "orders.partitions": "3",
                "orders.cleanup.policy": "compact",
                "orders.retention.ms": "3600000",
                "orders.min.insync.replicas": "1",
                "orders.max.message.bytes": "2000000",
                "default.cleanup.policy": "delete",
            },
        )
    )
    group = f"tc-created-{unique}"
    rt = runtime_factory(group)
    rt.create_connector("orders-src", config)

    wait_until(
        lambda: exists(admin, routed) and count(bootstrap, routed) >= 20,
        60,
        message=f"20 records in {routed}",
    )
    assert states(rt, "orders-src") == ("RUNNING", ["RUNNING"])
    assert not exists(admin, raw)  # the topic after transforms is the one created
    assert partitions(admin, routed) == (3, 1)  # the 'orders' group; RF inherited from 'default'
    entries = topic_config(admin, routed)
    assert set_on_topic(entries) == {
        "cleanup.policy": "compact",
        "retention.ms": "3600000",
        "min.insync.replicas": "1",
        "max.message.bytes": "2000000",
    }
    assert entries["segment.bytes"].source != ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert routed in rt.herder.task_handle("orders-src", 0).runner._known_topics  # the per-task cache

    (created,) = rt.created_topics("orders-src")
    assert {
        k: created[k] for k in ("name", "connector", "task", "group", "partitions", "replication_factor")
    } == {
        "name": routed,
        "connector": "orders-src",
        "task": 0,
        "group": "orders",
        "partitions": 3,
        "replication_factor": 1,
    }
    assert created["configs"]["cleanup.policy"] == "compact"

    tmp, audit = f"orders-{unique}-tmp", f"orders-{unique}-audit"
    answer = rt.explain_topic_creation("orders-src", topics=[routed, tmp, audit])
    assert answer["enabled"] and answer["created_topics"] == [routed]
    assert [g["group"] for g in answer["groups"]] == ["audit", "orders", "default"]
    by_topic = {e["topic"]: e for e in answer["topics"]}
    assert [e["topic"] for e in answer["topics"]][:3] == [routed, tmp, audit]
    assert len(by_topic) > 3  # the broker's existing topics follow the given names
    made = by_topic[routed]
    assert (
        made["group"],
        made["included_by"],
        made["action"],
        made["exists"],
        made["created_by_connector"],
    ) == ("orders", "orders-.*", "exists", True, True)
    blocked = by_topic[tmp]
    assert (blocked["group"], blocked["action"], blocked["exists"]) == ("default", "create", False)
    assert blocked["groups_tried"][1]["excluded_by"] == ".*-tmp"
    assert (blocked["partitions"], blocked["configs"], blocked["broker_check"]) == (
        1,
        {"cleanup.policy": "delete"},
        None,
    )
    first = by_topic[audit]
    assert (first["group"], first["partitions"], first["replication_factor"]) == ("audit", 4, 1)
    assert first["settings_from"]["replication.factor"] == "topic.creation.default.replication.factor"
    assert not exists(admin, tmp) and not exists(admin, audit)  # explaining creates nothing

    rt.close()  # a new runtime on the same group still knows which topics the connector created
    rt2 = runtime_factory(group)
    assert [t["name"] for t in rt2.created_topics("orders-src")] == [routed]
    wait_until(lambda: states(rt2, "orders-src") == ("RUNNING", ["RUNNING"]), 30, message="restored RUNNING")
    rt2.delete_connector("orders-src")
    with pytest.raises(ConnectRestError) as e:
        rt2.created_topics("orders-src")
    assert e.value.status == 404


def test_minus_one_uses_the_broker_defaults(runtime_factory, admin, bootstrap, unique) -> None:
    topic = f"defaults-{unique}"
    rt = runtime_factory()
    config = {**source(topic, 5), **creation(-1, -1, **{"default.retention.ms": "86400000"})}
    answer = rt.explain_topic_creation(config, topics=[topic], include_existing=False)
    (entry,) = answer["topics"]
    expected = (broker_default(admin, "num.partitions"), broker_default(admin, "default.replication.factor"))
    assert (entry["partitions"], entry["replication_factor"]) == (-1, -1)
    assert (entry["effective_partitions"], entry["effective_replication_factor"]) == expected
    assert answer["broker_defaults"] == {"partitions": expected[0], "replication_factor": expected[1]}
    rt.create_connector("defaults", config)
    wait_until(
        lambda: exists(admin, topic) and count(bootstrap, topic) >= 5, 60, message=f"records in {topic}"
    )
    assert partitions(admin, topic) == expected
    assert set_on_topic(topic_config(admin, topic)) == {"retention.ms": "86400000"}


# -- the worker switch ------------------------------------------------------------------------------


def test_disabled_at_worker_then_enabled_after_restart(runtime_factory, admin, bootstrap, unique) -> None:
    existing, missing, broken_topic = f"pre-{unique}", f"missing-{unique}", f"broken-{unique}"
    admin.create_topics([NewTopic(existing, 2, 1, config={"retention.ms": "7200000"})])[existing].result(30)
    rules = creation(5, 1, **{"default.cleanup.policy": "compact"})
    broken = {**source(broken_topic), "topic.creation.groups": "g", "topic.creation.g.include": "("}
    group = f"tc-switch-{unique}"

    rt = runtime_factory(group, **{"topic.creation.enable": "false"})
    assert rt.validate_connector_config({**broken, "name": "broken"})["error_count"] == 0  # ignored: off
    rt.create_connector("existing", {**source(existing, 10), **rules})
    # With nothing to create the topic (auto-creation is off too), sending fails quickly.
    rt.create_connector(
        "missing",
        {**source(missing, 10), **rules, "producer.override.topic.metadata.propagation.max.ms": "300"},
    )
    rt.create_connector("broken", broken)
    wait_until(lambda: count(bootstrap, existing) >= 10, 60, message=f"10 records in {existing}")
    wait_until(lambda: states(rt, "missing")[1] == ["FAILED"], 60, message="'missing' task FAILED")
    assert states(rt, "existing") == ("RUNNING", ["RUNNING"])
    assert states(rt, "broken")[0] == "RUNNING"
    assert not exists(admin, missing) and not exists(admin, broken_topic)
    assert rt.created_topics("existing") == [] and rt.created_topics("missing") == []
    answer = rt.explain_topic_creation("missing", topics=[missing], include_existing=False)
    assert not answer["enabled"] and answer["topics"][0]["action"] == "none"
    assert "topic.creation.enable=false" in answer["reason"]
    rt.close()

    rt2 = runtime_factory(group)  # same group, topic.creation.enable=true (the default)
    wait_until(
        lambda: exists(admin, missing) and count(bootstrap, missing) >= 10,
        60,
        message=f"{missing} created and written",
    )
    assert states(rt2, "missing") == ("RUNNING", ["RUNNING"])
    assert partitions(admin, missing) == (5, 1)
    assert set_on_topic(topic_config(admin, missing)) == {"cleanup.policy": "compact"}
    assert [t["name"] for t in rt2.created_topics("missing")] == [missing]
    # The pre-created topic is left exactly as it was.
    wait_until(lambda: states(rt2, "existing") == ("RUNNING", ["RUNNING"]), 30, message="'existing' RUNNING")
    assert partitions(admin, existing) == (2, 1)
    assert set_on_topic(topic_config(admin, existing)) == {"retention.ms": "7200000"}
    assert rt2.created_topics("existing") == []
    # Now active, the invalid settings fail the connector at start, with the ConfigException trace.
    assert states(rt2, "broken") == ("FAILED", ["FAILED"])
    trace = rt2.connector_status("broken")["connector"]["trace"]
    assert rt2.task_status("broken", 0)["trace"] == trace
    assert "TopicCreationConfigError" in trace
    assert (
        'Missing required configuration "topic.creation.default.replication.factor" which has no default '
        "value."
    ) in trace
    assert (
        "Invalid value [(] for configuration topic.creation.g.include: Syntax error in regular expression"
        in trace
    )
    assert not exists(admin, broken_topic)


# -- the broker refuses -----------------------------------------------------------------------------


def test_refused_creation_fails_the_task_then_fix_and_restart(
    runtime_factory, admin, bootstrap, unique
) -> None:
    topic, bad_config_topic = f"rf3-{unique}", f"badcfg-{unique}"
    rt = runtime_factory()
    config = {**source(topic, 10), **creation(2, 3)}
    answer = rt.explain_topic_creation(config, topics=[topic], include_existing=False)
    assert answer["topics"][0]["broker_check"].startswith("INVALID_REPLICATION_FACTOR")

    rt.create_connector("rf3", config)
    wait_until(lambda: states(rt, "rf3")[1] == ["FAILED"], 60, message="task FAILED")
    assert states(rt, "rf3")[0] == "RUNNING"
    trace = rt.task_status("rf3", 0)["trace"]
    assert f"ConnectException: Error while attempting to create/find topic(s) '{topic}'" in trace
    assert "INVALID_REPLICATION_FACTOR" in trace  # the broker's reason
    assert (
        "The broker rejected the settings of topic creation group 'default': "
        "topic.creation.default.replication.factor=3"
    ) in trace
    assert not exists(admin, topic)

    rt.patch_connector_config("rf3", {"topic.creation.default.replication.factor": "1"})
    rt.restart_task("rf3", 0)
    wait_until(lambda: exists(admin, topic) and count(bootstrap, topic) >= 10, 60, message=f"{topic} written")
    wait_until(lambda: states(rt, "rf3") == ("RUNNING", ["RUNNING"]), 30, message="RUNNING after the fix")
    assert partitions(admin, topic) == (2, 1)
    assert [t["name"] for t in rt.created_topics("rf3")] == [topic]

    # A topic config the broker rejects: the reference's message, and the setting named.
    rt.create_connector(
        "badcfg",
        {**source(bad_config_topic, 10), **creation(1, 1, **{"default.cleanup.policy": "sometimes"})},
    )
    wait_until(lambda: states(rt, "badcfg")[1] == ["FAILED"], 60, message="task FAILED")
    trace = rt.task_status("badcfg", 0)["trace"]
    assert f"ConnectException: Unable to create topic(s) '{bad_config_topic}': " in trace
    assert "topic.creation.default.cleanup.policy=sometimes" in trace
    assert not exists(admin, bad_config_topic)


# -- validation, sinks and bad input ----------------------------------------------------------------


def test_validate_reports_topic_creation_errors(runtime_factory, admin, unique) -> None:
    rt = runtime_factory()
    bad = {
        **source(f"v-{unique}"),
        "name": "v",
        "topic.creation.groups": "g",
        "topic.creation.g.include": "ok, a(",
        "topic.creation.g.exclude": "x*+?",
    }
    infos = rt.validate_connector_config(bad)
    errors = {c["value"]["name"]: c["value"]["errors"] for c in infos["configs"] if c["value"]["errors"]}
    assert infos["error_count"] == 4 == len(errors)
    assert errors["topic.creation.default.replication.factor"] == [
        'Missing required configuration "topic.creation.default.replication.factor" '
        "which has no default value."
    ]
    assert errors["topic.creation.default.partitions"] == [
        'Missing required configuration "topic.creation.default.partitions" which has no default value.'
    ]
    assert errors["topic.creation.g.include"][0].startswith(
        "Invalid value [ok, a(] for configuration topic.creation.g.include: "
        "Syntax error in regular expression: Unclosed group near index 2"
    )
    assert errors["topic.creation.g.exclude"][0].startswith(
        "Invalid value [x*+?] for configuration topic.creation.g.exclude: "
        "Syntax error in regular expression: Dangling meta character '?' near index 3"
    )  # as Java: a possessive quantifier cannot be made optional
    fixed = {**bad, **creation(1, 1), "topic.creation.g.include": "a", "topic.creation.g.exclude": "tmp-.*+"}
    assert rt.validate_connector_config(fixed)["error_count"] == 0  # possessive quantifiers are fine

    dup = rt.validate_connector_config(
        {**source("t"), "name": "v", **creation(1, 1), "topic.creation.groups": "a, b, a"}
    )
    assert dup["error_count"] == 1
    assert (
        "Invalid value [a, b, a] for configuration topic.creation.groups: Duplicate alias provided."
        in str(dup)
    )
    zero = rt.validate_connector_config({**source("t"), "name": "v", **creation(0, -2)})
    assert zero["error_count"] == 2


def test_bad_input_changes_nothing(runtime_factory, admin, unique) -> None:
    rt = runtime_factory()
    topic = f"never-{unique}"
    bad = {**source(topic), "topic.creation.default.partitions": "1"}  # replication factor missing
    with pytest.raises(ConnectRestError) as e:
        rt.create_connector("bad", bad)
    assert e.value.status == 400 and "topic.creation.default.replication.factor" in e.value.message
    assert rt.connectors() == [] and not exists(admin, topic)

    with pytest.raises(ConnectRestError) as e:
        rt.explain_topic_creation(bad, topics=[topic])
    assert e.value.status == 400 and "topic.creation.default.replication.factor" in e.value.message
    for topics, field in (
        ("orders", "topics must be a list"),
        (["a b"], "Invalid value 'a b' in topics"),
        ([""], "Invalid value '' in topics"),
        (["x" * 250], "longer than 249"),
    ):
        with pytest.raises(ConnectRestError) as e:
            rt.explain_topic_creation({**source(topic), **creation()}, topics=topics)
        assert e.value.status == 400 and field in e.value.message
    with pytest.raises(ConnectRestError) as e:
        rt.explain_topic_creation(42)  # type: ignore[arg-type]
    assert e.value.status == 400 and "config_or_connector_name" in e.value.message
    for call in (lambda: rt.explain_topic_creation("nope"), lambda: rt.created_topics("nope")):
        with pytest.raises(ConnectRestError) as e:
            call()
        assert (e.value.status, e.value.message) == (404, "Connector nope not found")
    assert rt.connectors() == [] and not exists(admin, topic)


def test_sink_connectors_ignore_topic_creation_with_a_warning(
    runtime_factory, admin, unique, tmp_path, caplog
) -> None:
    topic = f"sink-in-{unique}"
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    rt = runtime_factory()
    config = {
        "connector.class": "FileStreamSink",
        "topics": topic,
        "file": str(tmp_path / "out.txt"),
        **creation(7, 3, **{"groups": "g, g"}),
    }
    assert rt.validate_connector_config({**config, "name": "sink"})["error_count"] == 0
    with caplog.at_level(logging.WARNING, logger="connect_magics.runtime.topics.creation"):
        rt.create_connector("sink", config)
    wait_until(lambda: states(rt, "sink") == ("RUNNING", ["RUNNING"]), 30, message="sink RUNNING")
    assert any(
        "Connector sink: topic.creation.* settings are ignored: topic creation applies to source "
        "connectors only" in r.getMessage()
        for r in caplog.records
    )
    answer = rt.explain_topic_creation("sink", topics=[f"other-{unique}"], include_existing=False)
    assert (answer["type"], answer["enabled"], answer["topics"][0]["action"]) == ("sink", False, "none")
    assert partitions(admin, topic) == (1, 1)


def test_existing_topic_is_success_and_checks_never_create(admin, unique) -> None:
    from connect_magics.runtime.topics.creation import TopicCreation
    from connect_magics.runtime.worker.topic_admin import create_or_find_topic, describe_topic

    topic, absent = f"there-{unique}", f"absent-{unique}"
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    group = TopicCreation.from_connector_config(creation(4, 1)).default_group
    assert describe_topic(admin, topic)
    assert create_or_find_topic(admin, group, topic) == "existing"  # "already exists" is success
    assert partitions(admin, topic) == (1, 1)  # and the topic is left alone
    assert not describe_topic(admin, absent) and not exists(admin, absent)
