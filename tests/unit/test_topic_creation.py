"""Tests for source-connector topic creation rules (connect_magics.runtime.topics.creation).

Cases follow Apache Kafka's TopicCreationTest and SourceConnectorConfigTest.
"""

from __future__ import annotations

import pytest

from connect_magics.runtime.topics.creation import (
    DEFAULT_GROUP,
    TOPIC_CREATION_PREFIX,
    NewTopicSpec,
    TopicCreation,
    TopicCreationConfigError,
    TopicCreationGroup,
    uses_topic_creation,
    validate_topic_creation,
)

pytestmark = pytest.mark.unit

FOO_TOPIC = "foo-topic"
BAR_TOPIC = "bar-topic"
RF_KEY = "topic.creation.default.replication.factor"
PARTITIONS_KEY = "topic.creation.default.partitions"
REPLICATION_MESSAGE = (
    "Replication factor must be positive and not larger than the number of brokers in the Kafka cluster, "
    "or -1 to use the broker's default"
)
PARTITIONS_MESSAGE = "Number of partitions must be positive, or -1 to use the broker's default"


def base(**extra: str) -> dict[str, str]:
    config = {"name": "foo-source", "connector.class": "TestConnector", RF_KEY: "-1", PARTITIONS_KEY: "-1"}
    config.update({TOPIC_CREATION_PREFIX + k.replace("__", "."): v for k, v in extra.items()})
    return config


def build(config: dict[str, str], **kwargs: object) -> TopicCreation:
    warnings: list[str] = []
    kwargs.setdefault("warn", warnings.append)
    return TopicCreation.from_connector_config(config, **kwargs)  # type: ignore[arg-type]


def errors_of(config: dict[str, str]) -> list[tuple[str, str]]:
    with pytest.raises(TopicCreationConfigError) as info:
        build(config)
    assert info.value.errors == validate_topic_creation(config)
    assert str(info.value) == "\n".join(message for _, message in info.value.errors)
    return info.value.errors


# -- when topic creation is active ------------------------------------------------------------------


def test_uses_topic_creation() -> None:
    assert uses_topic_creation(base(), worker_enabled=True)
    assert not uses_topic_creation(base(), worker_enabled=False)
    assert not uses_topic_creation({"name": "x", "topic.creation": "y"}, worker_enabled=True)
    assert uses_topic_creation({"topic.creation.foo": "y"}, worker_enabled=True)


def test_inactive_without_topic_creation_keys() -> None:
    tc = build({"name": "foo-source"})
    assert tc is TopicCreation.EMPTY
    assert not tc.enabled
    assert tc.default_group is None and tc.groups == ()
    assert tc.find_first_group(FOO_TOPIC) is None
    assert tc.new_topic(FOO_TOPIC) is None
    assert validate_topic_creation({"name": "foo-source"}) == []


def test_inactive_when_worker_disabled_even_with_invalid_settings() -> None:
    config = {"topic.creation.groups": "foo", "topic.creation.foo.include": "(", PARTITIONS_KEY: "0"}
    warnings: list[str] = []
    tc = TopicCreation.from_connector_config(config, worker_enabled=False, warn=warnings.append)
    assert tc is TopicCreation.EMPTY
    assert validate_topic_creation(config, worker_enabled=False) == []
    assert warnings == [
        "The connector's topic.creation.* settings are ignored: the worker has topic.creation.enable=false"
    ]


def test_switching_worker_flag_on_activates_the_same_config() -> None:
    config = base(groups="foo", foo__include=".*foo.*")
    assert not build(config, worker_enabled=False).enabled
    assert build(config, worker_enabled=True).enabled


# -- the default group -----------------------------------------------------------------------------


def test_default_group_only() -> None:
    config = base(default__include=".*foo.*", default__exclude=".*bar.*")  # ignored for the default group
    warnings: list[str] = []
    tc = TopicCreation.from_connector_config(config, warn=warnings.append)
    group = tc.default_group
    assert tc.enabled and tc.groups == ()
    assert group == TopicCreationGroup(DEFAULT_GROUP, (".*",), (), -1, -1, {})
    assert group.matches(" ") and group.matches(FOO_TOPIC) and group.matches(BAR_TOPIC)
    assert not group.matches("")  # the empty exclude pattern matches the empty name, as in Kafka
    assert tc.find_first_group(BAR_TOPIC) is group
    assert tc.new_topic(FOO_TOPIC) == NewTopicSpec(FOO_TOPIC, -1, -1, {})
    assert warnings == [
        "topic.creation.default.include is ignored: the 'default' topic creation group always includes "
        "every topic and excludes none",
        "topic.creation.default.exclude is ignored: the 'default' topic creation group always includes "
        "every topic and excludes none",
    ]


def test_default_group_with_topic_configs() -> None:
    config = base(default__compression__type="lz4", default__retention__ms="2592000000")
    config[RF_KEY], config[PARTITIONS_KEY] = "3", "5"
    tc = build(config)
    assert tc.new_topic(FOO_TOPIC) == NewTopicSpec(
        FOO_TOPIC, 5, 3, {"compression.type": "lz4", "retention.ms": "2592000000"}
    )


def test_default_listed_explicitly_is_dropped_with_warning() -> None:
    warnings: list[str] = []
    config = base(groups="default, group1, group2", group1__include="a.*", group2__include="b.*")
    tc = TopicCreation.from_connector_config(config, warn=warnings.append)
    assert [g.name for g in tc.groups] == ["group1", "group2"]
    assert tc.default_group is not None and tc.default_group.name == DEFAULT_GROUP
    assert warnings == [
        "'default' topic creation group always exists and does not need to be listed explicitly"
    ]


# -- groups ----------------------------------------------------------------------------------------


def test_one_group_with_exclusion_and_inheritance() -> None:
    config = base(
        groups="foo",
        default__partitions="5",
        foo__include=".*foo.*",
        foo__exclude=".*bar.*",
        foo__replication__factor="3",
        foo__cleanup__policy="compact",
    )
    tc = build(config)
    (foo,) = tc.groups
    assert foo == TopicCreationGroup("foo", (".*foo.*",), (".*bar.*",), 5, 3, {"cleanup.policy": "compact"})
    assert not foo.matches(" ") and foo.matches(FOO_TOPIC) and not foo.matches(BAR_TOPIC)
    assert not foo.matches("foo-bar")  # exclusion wins over inclusion
    assert tc.find_first_group(FOO_TOPIC) is foo
    assert tc.find_first_group("foo-bar") is tc.default_group
    assert tc.new_topic(BAR_TOPIC) == NewTopicSpec(BAR_TOPIC, 5, -1, {})
    assert tc.new_topic(FOO_TOPIC) == NewTopicSpec(FOO_TOPIC, 5, 3, {"cleanup.policy": "compact"})


def test_combined_regex_in_one_pattern() -> None:
    tc = build(base(groups="foo", foo__include=".*foo.*|.*bar.*"))
    (foo,) = tc.groups
    assert foo.matches(FOO_TOPIC) and foo.matches(BAR_TOPIC) and not foo.matches(" ")


def test_two_groups_inherit_different_settings() -> None:
    config = base(
        groups="foo, bar",
        default__partitions="5",
        foo__include=FOO_TOPIC,
        foo__replication__factor="3",
        foo__retention__ms="2592000000",
        bar__include=".*bar.*",
        bar__partitions="1",
        bar__cleanup__policy="compact",
    )
    tc = build(config)
    assert tc.new_topic("other-topic") == NewTopicSpec("other-topic", 5, -1, {})
    assert tc.new_topic(FOO_TOPIC) == NewTopicSpec(FOO_TOPIC, 5, 3, {"retention.ms": "2592000000"})
    assert tc.new_topic(BAR_TOPIC) == NewTopicSpec(BAR_TOPIC, 1, -1, {"cleanup.policy": "compact"})


def test_first_matching_group_in_declared_order_wins() -> None:
    config = base(
        groups="second, first", first__include=".*", first__partitions="1", second__include="orders.*"
    )
    tc = build(config)
    assert [g.name for g in tc.groups] == ["second", "first"]
    assert tc.find_first_group("orders.eu").name == "second"
    assert tc.find_first_group("users").name == "first"
    reordered = build({**config, "topic.creation.groups": "first,second"})
    assert reordered.find_first_group("orders.eu").name == "first"


def test_full_match_not_search() -> None:
    tc = build(base(groups="g", g__include="orders"))
    (g,) = tc.groups
    assert g.matches("orders") and not g.matches("orders.eu") and not g.matches("my-orders")


def test_group_without_include_matches_nothing() -> None:
    tc = build(base(groups="empty", empty__partitions="1"))
    (empty,) = tc.groups
    assert empty.include == ()
    assert not empty.matches(" ") and not empty.matches(FOO_TOPIC)
    assert tc.find_first_group(FOO_TOPIC) is tc.default_group


def test_list_values_are_trimmed_like_kafka() -> None:
    tc = build(base(groups="  a ,b\t", a__include=" status , orders.* ", b__include="x"))
    assert [g.name for g in tc.groups] == ["a", "b"]
    assert tc.groups[0].include == ("status", "orders.*")


def test_minus_one_and_positive_values_are_accepted() -> None:
    for value in ("-1", "1", "100", " 7 ", "+3"):
        tc = build(base(default__partitions=value, default__replication__factor=value))
        assert tc.default_group.partitions == int(value) == tc.default_group.replication_factor


def test_java_regex_dialect_is_used() -> None:
    tc = build(base(groups="g", g__include=r"\p{Alpha}++\.\d{2}", g__exclude=r"(?i)TMP\..*"))
    (g,) = tc.groups
    assert g.matches("orders.42") and not g.matches("tmp.42") and not g.matches("orders.4")


def test_unknown_group_keys_are_reported_as_warnings() -> None:
    warnings: list[str] = []
    config = base(groups="highly_parallel", highly_parallel__include="hpc.*", highly_paralle__partitions="1")
    TopicCreation.from_connector_config(config, warn=warnings.append)
    assert warnings == [
        "topic.creation.highly_paralle.partitions is ignored: it belongs neither to the 'default' topic "
        "creation group nor to a group listed in topic.creation.groups"
    ]


# -- errors ----------------------------------------------------------------------------------------


def test_duplicate_groups() -> None:
    config = base(groups="g1, g2, g1", g1__include="a", g2__include="b")
    assert errors_of(config) == [
        (
            "topic.creation.groups",
            "Invalid value [g1, g2, g1] for configuration topic.creation.groups: Duplicate alias provided.",
        )
    ]


def test_duplicate_groups_are_an_error_even_when_inactive() -> None:
    config = {"topic.creation.groups": "default,default"}
    with pytest.raises(TopicCreationConfigError) as info:
        TopicCreation.from_connector_config(config, worker_enabled=False, warn=lambda m: None)
    assert info.value.errors == validate_topic_creation(config, worker_enabled=False)
    assert info.value.errors[0][1].startswith("Invalid value [default, default]")


def test_missing_default_settings() -> None:
    assert errors_of({"topic.creation.groups": "foo", "topic.creation.foo.include": ".*"}) == [
        (
            RF_KEY,
            'Missing required configuration "topic.creation.default.replication.factor" which has no default value.',
        ),
        (
            PARTITIONS_KEY,
            'Missing required configuration "topic.creation.default.partitions" which has no default value.',
        ),
    ]


def test_group_values_still_checked_when_default_is_missing() -> None:
    config = {PARTITIONS_KEY: "1", "topic.creation.groups": "g", "topic.creation.g.replication.factor": "0"}
    assert [key for key, _ in errors_of(config)] == [RF_KEY, "topic.creation.g.replication.factor"]


@pytest.mark.parametrize("value", ["0", "-2", "-99"])
def test_invalid_partitions_and_replication_factor(value: str) -> None:
    number = int(value)
    assert errors_of(base(default__partitions=value)) == [
        (PARTITIONS_KEY, f"Invalid value {number} for configuration {PARTITIONS_KEY}: {PARTITIONS_MESSAGE}")
    ]
    assert errors_of(base(default__replication__factor=value)) == [
        (RF_KEY, f"Invalid value {number} for configuration {RF_KEY}: {REPLICATION_MESSAGE}")
    ]


def test_invalid_group_values() -> None:
    config = base(groups="g", g__include="a", g__partitions="0", g__replication__factor="-5")
    assert errors_of(config) == [
        (
            "topic.creation.g.replication.factor",
            f"Invalid value -5 for configuration topic.creation.g.replication.factor: {REPLICATION_MESSAGE}",
        ),
        (
            "topic.creation.g.partitions",
            f"Invalid value 0 for configuration topic.creation.g.partitions: {PARTITIONS_MESSAGE}",
        ),
    ]


@pytest.mark.parametrize(
    ("key", "value", "type_name"),
    [
        (PARTITIONS_KEY, "abc", "INT"),
        (PARTITIONS_KEY, "1.5", "INT"),
        (PARTITIONS_KEY, "", "INT"),
        (PARTITIONS_KEY, "1_000", "INT"),
        (PARTITIONS_KEY, "2147483648", "INT"),
        (RF_KEY, "abc", "SHORT"),
        (RF_KEY, "32768", "SHORT"),
    ],
)
def test_non_numbers(key: str, value: str, type_name: str) -> None:
    config = base()
    config[key] = value
    assert errors_of(config) == [
        (key, f"Invalid value {value} for configuration {key}: Not a number of type {type_name}")
    ]


def test_invalid_patterns() -> None:
    config = base(groups="g", g__include="ok, a(", g__exclude="x{a}")
    assert errors_of(config) == [
        (
            "topic.creation.g.include",
            "Invalid value [ok, a(] for configuration topic.creation.g.include: "
            "Syntax error in regular expression: Unclosed group near index 2\na(",
        ),
        (
            "topic.creation.g.exclude",
            "Invalid value [x{a}] for configuration topic.creation.g.exclude: "
            "Syntax error in regular expression: Illegal repetition near index 2\nx{a}\n  ^",
        ),
    ]


def test_pattern_python_cannot_express_is_reported_by_name() -> None:
    ((key, message),) = errors_of(base(groups="g", g__include="[a-z&&[^aeiou]]"))
    assert key == "topic.creation.g.include"
    assert "Syntax error in regular expression: Character class intersection (&&) is not supported" in message


def test_patterns_that_only_fail_when_joined() -> None:
    ((key, message),) = errors_of(base(groups="g", g__include="(?<a>x), (?<a>y)"))
    assert key == "topic.creation.g.include"
    assert "Named capturing group <a> is already defined" in message


def test_all_problems_are_collected() -> None:
    config = {
        "topic.creation.groups": "g, g",
        PARTITIONS_KEY: "abc",
        "topic.creation.g.include": "(",
        "topic.creation.g.partitions": "0",
    }
    assert [key for key, _ in validate_topic_creation(config)] == [
        "topic.creation.groups",
        RF_KEY,
        PARTITIONS_KEY,
        "topic.creation.g.include",
        "topic.creation.g.partitions",
    ]


# -- explain -----------------------------------------------------------------------------------------


def test_group_explain() -> None:
    g = TopicCreationGroup("hpc", ("hpc.*", "parallel.*"), (".*internal", ".*metadata"), 1, 1, {})
    assert g.explain("parallel.jobs") == {
        "group": "hpc",
        "matched": True,
        "included_by": "parallel.*",
        "excluded_by": None,
        "reason": "include pattern 'parallel.*' matches 'parallel.jobs' and no exclude pattern does",
    }
    blocked = g.explain("hpc.metadata")
    assert (blocked["matched"], blocked["included_by"], blocked["excluded_by"]) == (
        False,
        "hpc.*",
        ".*metadata",
    )
    missed = g.explain("orders")
    assert (missed["matched"], missed["included_by"], missed["excluded_by"]) == (False, None, None)
    assert TopicCreationGroup("e", (), (), 1, 1, {}).explain("x")["reason"] == (
        "the group has no include patterns, so it matches no topic"
    )


def test_group_explain_reports_joined_expression_when_flags_cross_patterns() -> None:
    g = TopicCreationGroup("g", ("(?i)foo", "bar"), (), 1, 1, {})
    assert g.matches("BAR")  # (?i)foo|bar: the flag reaches the second pattern, as in Java
    assert g.explain("BAR")["included_by"] == "(?i)foo|bar"


def test_topic_creation_explain() -> None:
    config = base(
        groups="compacted, highly_parallel",
        default__replication__factor="3",
        default__partitions="5",
        highly_parallel__include="hpc.*,parallel.*",
        highly_parallel__exclude=".*internal, .*metadata, .*config.*",
        highly_parallel__replication__factor="1",
        highly_parallel__partitions="1",
        compacted__include="configurations.*",
        compacted__cleanup__policy="compact",
    )
    internal, hpc, conf = build(config).explain(["hpc.internal", "hpc.jobs", "configurations.users"])

    assert (internal["group"], internal["partitions"], internal["replication_factor"]) == ("default", 5, 3)
    assert [t["group"] for t in internal["groups_tried"]] == ["compacted", "highly_parallel", "default"]
    assert internal["groups_tried"][1]["excluded_by"] == ".*internal"
    assert (
        internal["reason"]
        == "no listed group ('compacted', 'highly_parallel') matches, so the 'default' group applies"
    )

    assert (hpc["group"], hpc["partitions"], hpc["replication_factor"], hpc["configs"]) == (
        "highly_parallel",
        1,
        1,
        {},
    )
    assert hpc["groups_tried"][-1]["included_by"] == "hpc.*"
    assert hpc["reason"] == (
        "group 'highly_parallel': include pattern 'hpc.*' matches 'hpc.jobs' and no exclude pattern does"
    )

    assert conf["group"] == "compacted"
    assert conf["configs"] == {"cleanup.policy": "compact"}
    assert (conf["partitions"], conf["replication_factor"]) == (5, 3)
    assert len(conf["groups_tried"]) == 1


def test_explain_when_inactive() -> None:
    (entry,) = TopicCreation.EMPTY.explain(["orders"])
    assert entry["group"] is None and entry["groups_tried"] == []
    assert entry["partitions"] is None and entry["replication_factor"] is None
    assert "not in use" in entry["reason"]


def test_explain_default_only() -> None:
    (entry,) = build(base()).explain(["orders"])
    assert entry["group"] == "default"
    assert entry["reason"] == "only the 'default' group is configured; it applies to every topic"


# -- value objects -----------------------------------------------------------------------------------


def test_group_value_semantics() -> None:
    a = TopicCreationGroup("g", ["x"], [], 1, 2, {"k": "v"})  # type: ignore[arg-type]
    b = TopicCreationGroup("g", ("x",), (), 1, 2, {"k": "v"})
    assert a == b and hash(a) == hash(b)
    assert a.include == ("x",)
    assert a.new_topic("t") == NewTopicSpec("t", 1, 2, {"k": "v"})
    assert a.new_topic("t").configs is not a.topic_configs


def test_topic_creation_equality_and_guard() -> None:
    assert build(base()) == build(base())
    assert build(base()) != TopicCreation.EMPTY
    with pytest.raises(ValueError, match="default group"):
        TopicCreation(None, [TopicCreationGroup("g", ("x",), (), 1, 1, {})])


# -- inheritance, explain details and the worker's checks -------------------------------------------


def test_inheritance_is_tracked_per_setting() -> None:
    config = base(
        groups="a, b", a__include="a.*", a__partitions="2", b__include="b.*", b__replication__factor="1"
    )
    config[PARTITIONS_KEY], config[RF_KEY] = "6", "3"
    a, b = build(config).groups
    assert (a.partitions, a.replication_factor, b.partitions, b.replication_factor) == (2, 3, 6, 1)
    assert a.inherited == {"replication.factor"} and b.inherited == {"partitions"}
    assert a.settings_from() == {"partitions": "topic.creation.a.partitions", "replication.factor": RF_KEY}
    assert b.settings_from() == {
        "partitions": PARTITIONS_KEY,
        "replication.factor": "topic.creation.b.replication.factor",
    }
    assert build(config).default_group.settings_from() == {
        "partitions": PARTITIONS_KEY,
        "replication.factor": RF_KEY,
    }


def test_topic_configs_are_not_inherited_from_default() -> None:
    config = base(groups="g", g__include="g.*", default__cleanup__policy="compact", g__retention__ms="1000")
    tc = build(config)
    assert tc.new_topic("g1").configs == {"retention.ms": "1000"}  # as Kafka: only the group's own configs
    assert tc.new_topic("other").configs == {"cleanup.policy": "compact"}
    assert tc.groups[0].settings_from()["retention.ms"] == "topic.creation.g.retention.ms"


def test_minus_one_is_inherited_and_overridable() -> None:
    tc = build(base(groups="g", g__include="g.*", g__partitions="4"))
    assert tc.new_topic("g1") == NewTopicSpec("g1", 4, -1, {})
    assert tc.new_topic("x") == NewTopicSpec("x", -1, -1, {})
    tc = build({**base(groups="g", g__include="g.*", g__partitions="-1"), PARTITIONS_KEY: "3"})
    assert tc.new_topic("g1").partitions == -1 and tc.new_topic("x").partitions == 3


def test_exclusion_wins_even_when_include_lists_the_exact_name() -> None:
    tc = build(base(groups="g, h", g__include="orders, payments", g__exclude="orders", h__include="orders"))
    assert tc.find_first_group("payments").name == "g"
    assert tc.find_first_group("orders").name == "h"  # excluded from g, so the next group in order is tried
    entry = tc.explain(["orders"])[0]
    assert [(t["group"], t["matched"], t["excluded_by"]) for t in entry["groups_tried"]] == [
        ("g", False, "orders"),
        ("h", True, None),
    ]
    assert (entry["included_by"], entry["excluded_by"]) == ("orders", None)


def test_explain_reports_settings_and_patterns_of_the_chosen_group() -> None:
    config = base(groups="g", g__include="orders.*", g__replication__factor="1", g__cleanup__policy="compact")
    hit, miss = build(config).explain(["orders.eu", "users"])
    assert (hit["group"], hit["included_by"], hit["excluded_by"]) == ("g", "orders.*", None)
    assert hit["settings_from"] == {
        "partitions": PARTITIONS_KEY,
        "replication.factor": "topic.creation.g.replication.factor",
        "cleanup.policy": "topic.creation.g.cleanup.policy",
    }
    assert (miss["group"], miss["included_by"], miss["settings_from"]["partitions"]) == (
        "default",
        ".*",
        PARTITIONS_KEY,
    )


def test_group_describe() -> None:
    (g,) = build(base(groups="g", g__include="a, b", g__exclude="c", g__retention__ms="5")).groups
    assert g.describe() == {
        "group": "g",
        "include": ["a", "b"],
        "exclude": ["c"],
        "partitions": -1,
        "replication_factor": -1,
        "configs": {"retention.ms": "5"},
        "settings_from": {
            "partitions": PARTITIONS_KEY,
            "replication.factor": RF_KEY,
            "retention.ms": "topic.creation.g.retention.ms",
        },
    }


def test_config_error_is_a_config_exception_naming_the_first_key() -> None:
    from connect_magics.api.config import ConfigException

    with pytest.raises(ConfigException) as info:
        build({"topic.creation.groups": "g", "topic.creation.g.include": "("})
    assert isinstance(info.value, TopicCreationConfigError) and info.value.name == RF_KEY
    assert str(info.value).startswith(
        'Missing required configuration "topic.creation.default.replication.factor"'
    )


def test_check_connector_config_for_sources_and_sinks() -> None:
    from connect_magics.runtime.topics.creation import check_connector_config

    warnings: list[str] = []
    tc = check_connector_config("src", "source", base(groups="default"), True, warnings.append)
    assert tc.enabled and warnings == [
        "Connector src: 'default' topic creation group always exists and does not need to be listed "
        "explicitly"
    ]
    warnings.clear()
    invalid_for_a_source = {"topic.creation.groups": "g, g", PARTITIONS_KEY: "0"}
    assert (
        check_connector_config("snk", "sink", invalid_for_a_source, True, warnings.append)
        is TopicCreation.EMPTY
    )
    assert warnings == [
        "Connector snk: topic.creation.* settings are ignored: topic creation applies to source "
        "connectors only"
    ]
    warnings.clear()
    assert (
        check_connector_config("snk", "sink", {"topics": "t"}, True, warnings.append) is TopicCreation.EMPTY
    )
    assert warnings == []
    with pytest.raises(TopicCreationConfigError):
        check_connector_config("src", "source", invalid_for_a_source, True, warnings.append)


def test_inactive_reason() -> None:
    from connect_magics.runtime.topics.creation import inactive_reason

    assert inactive_reason(base(), True) is None
    assert "topic.creation.enable=false" in inactive_reason(base(), False)
    assert inactive_reason({"topic": "t"}, True) == "the connector config has no topic.creation.* settings"
    assert "source connectors only" in inactive_reason(base(), True, "sink")


def test_new_topic_spec_in_java_format() -> None:
    spec = NewTopicSpec("t", -1, 3, {"cleanup.policy": "compact", "retention.ms": "5"})
    assert spec.to_java_string() == (
        "(name=t, numPartitions=-1, replicationFactor=3, replicasAssignments=null, "
        "configs={cleanup.policy=compact, retention.ms=5})"
    )


@pytest.mark.parametrize(
    ("name", "error"),
    [
        ("orders.eu_1-x", None),
        ("", "Topic name is illegal, it can't be empty"),
        ("..", 'Topic name cannot be "." or ".."'),
        (
            "a" * 250,
            "Topic name is illegal, it can't be longer than 249 characters, topic name: " + "a" * 250,
        ),
        (
            "a/b",
            "Topic name \"a/b\" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' "
            "and '-'",
        ),
        (42, "Topic name must be a string, got int"),
    ],
)
def test_topic_name_error(name: object, error: str | None) -> None:
    from connect_magics.runtime.topics.creation import topic_name_error

    assert topic_name_error(name) == error


def test_rejected_settings_name_the_connector_keys() -> None:
    from confluent_kafka import KafkaError

    from connect_magics.runtime.worker.topic_admin import rejected_settings

    (g,) = build(
        base(groups="g", g__include="x", g__partitions="2", g__cleanup__policy="bogus", g__retention__ms="1")
    ).groups
    assert rejected_settings(g, KafkaError.INVALID_REPLICATION_FACTOR, "") == [f"{RF_KEY}=-1"]  # inherited
    assert rejected_settings(g, KafkaError.INVALID_PARTITIONS, "") == ["topic.creation.g.partitions=2"]
    assert rejected_settings(
        g, KafkaError.INVALID_CONFIG, "Invalid value bogus for configuration cleanup.policy"
    ) == ["topic.creation.g.cleanup.policy=bogus"]
    assert rejected_settings(g, KafkaError.INVALID_CONFIG, "something else") == [
        "topic.creation.g.cleanup.policy=bogus",
        "topic.creation.g.retention.ms=1",
    ]
    assert len(rejected_settings(g, KafkaError.POLICY_VIOLATION, "")) == 4


# -- the regex dialect in topic creation patterns -----------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "matching", "not_matching"),
    [
        (r"orders\.\d+", ["orders.1", "orders.42"], ["orders.x", "orders.\u0663", "ordersX1"]),  # \d is ASCII
        (r"\p{Lower}+-\p{Digit}", ["abc-1"], ["ABC-1", "é-1"]),  # POSIX classes are ASCII, as in Java
        (r"(?i)orders-.*", ["ORDERS-eu", "orders-x"], ["ordersx"]),
        (r"a*+a", [], ["a", "aa", "aaa"]),  # possessive: never gives a character back
        (r"(?>a|ab)c", ["ac"], ["abc"]),  # atomic group: no backtracking into it
        (r"\Qa.b\E.*", ["a.b", "a.bc"], ["axb"]),  # \Q...\E quotes
        (r"[a-c[x-z]]+", ["axz"], ["d"]),  # nested class = union, as in Java
        (r"db1[.](?<table>\w+)", ["db1.users"], ["db1.us-ers"]),  # Java named groups
    ],
)
def test_java_regex_dialect_in_groups(pattern: str, matching: list[str], not_matching: list[str]) -> None:
    (g,) = build(base(groups="g", g__include=pattern)).groups
    assert all(g.matches(t) for t in matching) and not any(g.matches(t) for t in not_matching)


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        (r"\p{IsLatin}", "Unknown character property name {IsLatin}"),  # scripts: Python has no data
        (r"[a-z&&[^aeiou]]", "Character class intersection (&&) is not supported"),
        ("x{a}", "Illegal repetition near index 2"),  # a Java error; Python would match it literally
        ("(?U)x", "(?U)"),
        ("x*+?", "Dangling meta character '?' near index 3"),
    ],
)
def test_regex_dialect_rejections_are_config_errors(pattern: str, message: str) -> None:
    ((key, text),) = errors_of(base(groups="g", g__include="ok", g__exclude=pattern))
    assert key == "topic.creation.g.exclude"
    assert text.startswith(
        f"Invalid value [{pattern}] for configuration topic.creation.g.exclude: Syntax error in "
        "regular expression: "
    )
    assert message in text


def test_commas_split_patterns_as_in_kafka() -> None:
    # include/exclude are Kafka LIST values: a comma always separates two patterns, even inside {m,n}.
    assert validate_topic_creation(base(groups="g", g__include="a{1,3}"))[0][1].startswith(
        "Invalid value [a{1, 3}] for configuration topic.creation.g.include: "
        "Syntax error in regular expression: "
        "Unclosed counted closure near index 3"
    )
    (g,) = build(base(groups="g", g__include="a{1}|aa|aaa")).groups
    assert g.matches("aa") and not g.matches("aaaa")
