"""Built-in predicates (Kafka's TopicNameMatchesTest, HasHeaderKeyTest, RecordIsTombstoneTest)."""

from __future__ import annotations

import pytest

from connect_magics.api.config import ConfigException
from connect_magics.api.predicates import Predicate
from connect_magics.api.records import Headers, SinkRecord, SourceRecord
from connect_magics.transforms.predicates import (
    BUILTIN_PREDICATES,
    HasHeaderKey,
    RecordIsTombstone,
    TopicNameMatches,
)

pytestmark = pytest.mark.unit


def record(topic: str | None = "t", value: object = "v", headers: Headers | None = None) -> SourceRecord:
    return SourceRecord(None, None, topic, value=value, headers=headers)  # type: ignore[arg-type]


@pytest.mark.parametrize("pattern, topic, expected", [
    ("my-prefix-.*", "my-prefix-", True),
    ("my-prefix-.*", "my-prefix-foo", True),
    ("my-prefix-.*", "x-my-prefix-", False),
    ("my-prefix-.*", "your-prefix-", False),
    ("orders", "orders-eu", False),  # the whole name must match
    ("\\p{Alpha}+\\d", "abc1", True),  # Java regex syntax
    ("(?i)ORDERS", "orders", True),
])
def test_topic_name_matches(pattern, topic, expected):
    p = TopicNameMatches()
    p.configure({"pattern": pattern})
    assert p.test(record(topic)) is expected


def test_topic_name_matches_null_topic():
    p = TopicNameMatches()
    p.configure({"pattern": ".*"})
    assert p.test(record(None)) is False
    assert repr(p).startswith("TopicNameMatches{pattern=")


@pytest.mark.parametrize("props, message", [
    ({}, 'Missing required configuration "pattern" which has no default value.'),
    ({"pattern": ""}, "Invalid value  for configuration pattern: String must be non-empty"),
    ({"pattern": "["}, "Invalid value [ for configuration pattern: Invalid regex: Unclosed character class"),
    ({"pattern": "a{,3}"}, "for configuration pattern: Invalid regex: Illegal repetition"),
])
def test_topic_name_matches_config_errors(props, message):
    with pytest.raises(ConfigException) as info:
        TopicNameMatches().configure(props)
    assert message in str(info.value)
    assert "pattern" in str(info.value)


def test_record_is_tombstone():
    p = RecordIsTombstone()
    p.configure({})
    assert p.test(record(value=None)) is True
    assert p.test(record(value="x")) is False
    assert p.test(SinkRecord("t", 0, None, "k", None, None)) is True
    assert repr(p) == "RecordIsTombstone{}" and p.config_def().names() == []


def test_has_header_key():
    p = HasHeaderKey()
    p.configure({"name": "trace"})
    assert p.test(record(headers=Headers().add("trace", None)))
    assert p.test(record(headers=Headers().add("other", 1).add("trace", "a").add("trace", "b")))
    assert not p.test(record(headers=Headers().add("Trace", 1)))
    assert not p.test(record())
    assert repr(p) == "HasHeaderKey{name='trace'}"


@pytest.mark.parametrize("props, message", [
    ({}, 'Missing required configuration "name" which has no default value.'),
    ({"name": ""}, "Invalid value  for configuration name: String must be non-empty"),
])
def test_has_header_key_config_errors(props, message):
    with pytest.raises(ConfigException, match=message):
        HasHeaderKey().configure(props)


def test_builtin_predicates_registry():
    prefix = "org.apache.kafka.connect.transforms.predicates."
    assert BUILTIN_PREDICATES == {prefix + "TopicNameMatches": TopicNameMatches,
                                  prefix + "RecordIsTombstone": RecordIsTombstone,
                                  prefix + "HasHeaderKey": HasHeaderKey}
    for cls in BUILTIN_PREDICATES.values():
        assert issubclass(cls, Predicate) and cls().version()
        cls().close()
