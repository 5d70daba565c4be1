"""Unit tests of KIP-558's gates (403 messages) and which topics a reconfigured sink still consumes."""

from __future__ import annotations

import pytest

from connect_magics.errors import ForbiddenError
from connect_magics.runtime.topics.tracking import check_allowed, sink_topic_filter

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("enable", "allow_reset", "reset", "message"),
    [
        ("true", "true", False, None),
        ("true", "true", True, None),
        ("true", "false", False, None),
        ("true", "false", True, "Topic tracking reset is disabled."),
        ("false", "true", False, "Topic tracking is disabled."),
        ("false", "true", True, "Topic tracking is disabled."),
        ("false", "false", True, "Topic tracking is disabled."),  # the tracking check runs first
        (" TRUE ", "False", True, "Topic tracking reset is disabled."),
    ],
)
def test_check_allowed(enable: str, allow_reset: str, reset: bool, message: str | None) -> None:
    config = {"topic.tracking.enable": enable, "topic.tracking.allow.reset": allow_reset}
    if message is None:
        check_allowed(config, reset=reset)
        return
    with pytest.raises(ForbiddenError) as info:
        check_allowed(config, reset=reset)
    assert info.value.status == 403 and info.value.message == message
    assert info.value.to_json() == {"error_code": 403, "message": message}


def test_defaults_allow_everything() -> None:
    check_allowed({}, reset=True)


def test_sink_topic_filter_with_a_topic_list() -> None:
    consumes = sink_topic_filter({"topics": " a, b ,,c", "topics.regex": "ignored"})
    assert [t for t in ("a", "b", "c", "d", "a,b") if consumes(t)] == ["a", "b", "c"]


def test_sink_topic_filter_with_a_java_regex_is_a_full_match() -> None:
    consumes = sink_topic_filter({"topics.regex": r"orders\.\p{Lower}+"})
    assert consumes("orders.eu") and not consumes("orders.eu.old") and not consumes("xorders.eu")


def test_sink_topic_filter_without_topics_consumes_nothing() -> None:
    assert not sink_topic_filter({})("a")


def test_sink_topic_filter_with_an_untranslatable_regex_keeps_everything() -> None:
    assert sink_topic_filter({"topics.regex": "[a-z&&[^x]]"}) is None
