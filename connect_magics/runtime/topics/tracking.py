"""Active topic tracking (KIP-558): who may ask, and which topics a reconfigured sink still consumes.

The records themselves live in the status topic (:mod:`connect_magics.storage.status_store`); tasks
record a topic on its first use (source: broker ack, sink: consume, before transforms). This module
holds the worker switches with Kafka Connect's 403 messages, and the KIP's rule that a sink that is
reconfigured forgets the topics it no longer consumes::

    >>> consumes = sink_topic_filter({"topics.regex": "orders-.*"})
    >>> consumes("orders-eu"), consumes("payments")
    (True, False)
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from connect_magics.errors import ForbiddenError
from connect_magics.java_regex import JavaRegexError, compile_java_regex
from connect_magics.storage.status_store import StatusStore

log = logging.getLogger(__name__)

__all__ = ["ALLOW_RESET_CONFIG", "RESET_DISABLED", "TRACKING_DISABLED", "TRACKING_ENABLE_CONFIG",
           "check_allowed", "drop_unconsumed_topics", "sink_topic_filter"]

TRACKING_ENABLE_CONFIG = "topic.tracking.enable"
ALLOW_RESET_CONFIG = "topic.tracking.allow.reset"
TRACKING_DISABLED = "Topic tracking is disabled."
RESET_DISABLED = "Topic tracking reset is disabled."


def check_allowed(worker_config: Mapping[str, str], reset: bool = False) -> None:
    """Raise a 403 as ``ConnectorsResource`` does: tracking disabled first, then (for a reset) reset disabled.

    >>> check_allowed({"topic.tracking.enable": "true", "topic.tracking.allow.reset": "false"}, reset=True)
    Traceback (most recent call last):
    ...
    connect_magics.errors.ForbiddenError: Topic tracking reset is disabled.
    """
    if not _true(worker_config, TRACKING_ENABLE_CONFIG):
        raise ForbiddenError(TRACKING_DISABLED)
    if reset and not _true(worker_config, ALLOW_RESET_CONFIG):
        raise ForbiddenError(RESET_DISABLED)


def _true(worker_config: Mapping[str, str], key: str) -> bool:
    return str(worker_config.get(key, "true")).strip().lower() == "true"


def sink_topic_filter(config: Mapping[str, str]) -> Callable[[str], bool] | None:
    """Whether a sink with this config consumes a topic: one of ``topics``, or a full match of the Java
    regex ``topics.regex`` (as Kafka's consumer matches a pattern subscription). None when the regex
    cannot be used here (the caller then keeps every topic).

    >>> sink_topic_filter({"topics": "a, b"})("b")
    True
    """
    topics = {t.strip() for t in str(config.get("topics") or "").split(",") if t.strip()}
    if topics:
        return topics.__contains__
    regex = str(config.get("topics.regex") or "").strip()
    if not regex:
        return lambda topic: False
    try:
        pattern = compile_java_regex(regex)
    except JavaRegexError as e:
        log.warning("Cannot evaluate topics.regex %r (%s); keeping the tracked topics", regex, e)
        return None
    return lambda topic: pattern.fullmatch(topic) is not None


def drop_unconsumed_topics(status: StatusStore, connector: str, config: Mapping[str, str]) -> list[str]:
    """KIP-558: after a sink is reconfigured, tombstone the tracked topics its new config does not consume.

    Returns the topics dropped. Example: a sink moved from ``topics=a,b`` to ``topics=b`` drops ``["a"]``.
    """
    consumes = sink_topic_filter(config)
    if consumes is None:
        return []
    gone = [topic for topic in status.topics(connector) if not consumes(topic)]
    if gone:
        gone = status.reset_topics(connector, gone)
        log.info("Sink connector %s no longer consumes %s; dropped from its active topics", connector, gone)
    return gone
