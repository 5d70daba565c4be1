"""Kafka admin calls for topic creation (KIP-158), with Kafka Connect's ``TopicAdmin`` messages.

:func:`describe_topic` and :func:`create_or_find_topic` are what a source task runs before it first
sends to a topic; :func:`cluster_view` and :func:`validate_new_topics` serve the explain API.

Checking existence uses DescribeTopics, never a metadata request for the named topic: librdkafka's
metadata request asks the broker to auto-create the topic, so a broker with
``auto.create.topics.enable=true`` would create it with its defaults before Connect could create it
with the group's settings.

Example::

    admin = AdminClient({"bootstrap.servers": "127.0.0.1:9092"})
    if not describe_topic(admin, "orders"):
        create_or_find_topic(admin, tc.find_first_group("orders"), "orders")   # "created" / "existing"
"""

from __future__ import annotations

import concurrent.futures
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from confluent_kafka import KafkaError, KafkaException, TopicCollection
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic, ResourceType

from connect_magics.api.errors import ConnectException, RetriableException
from connect_magics.runtime.topics.creation import (
    PARTITIONS_CONFIG,
    REPLICATION_FACTOR_CONFIG,
    NewTopicSpec,
    TopicCreation,
    TopicCreationGroup,
)
from connect_magics.storage.authorization import KafkaAuthorizationError, principal

__all__ = ["cluster_view", "create_or_find_topic", "describe_topic", "explain_topics", "validate_new_topics"]

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 30.0
_NOT_AUTHORIZED = (KafkaError.CLUSTER_AUTHORIZATION_FAILED, KafkaError.TOPIC_AUTHORIZATION_FAILED)
_TIMED_OUT = (KafkaError._TIMED_OUT, KafkaError.REQUEST_TIMED_OUT)


def _error_of(exc: BaseException) -> KafkaError | None:
    if isinstance(exc, KafkaException) and exc.args and isinstance(exc.args[0], KafkaError):
        return exc.args[0]
    return None


def _bootstrap(admin_config: Mapping[str, Any] | None) -> str:
    return str((admin_config or {}).get("bootstrap.servers", ""))


def describe_topic(
    admin: AdminClient,
    topic: str,
    admin_config: Mapping[str, Any] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    operation: str = "DESCRIBE",
) -> bool:
    """Whether ``topic`` exists (Kafka's ``TopicAdmin.describeTopics``); never creates it.

    Raises :class:`RetriableException` on a timeout (the task backs off and tries again) and
    :class:`ConnectException` with Kafka Connect's messages on other errors; a principal that may not describe
    the topic gets a :class:`~connect_magics.storage.authorization.KafkaAuthorizationError` naming ``operation``,
    the ACL the caller needs (WRITE for a source task: it implies DESCRIBE).
    """
    names = topic
    try:
        admin.describe_topics(TopicCollection([topic]), request_timeout=timeout)[topic].result(timeout + 5)
        return True
    except concurrent.futures.TimeoutError as e:
        raise RetriableException(f"Timed out while describing topics '{names}'") from e
    except KafkaException as e:
        err = _error_of(e)
        code = err.code() if err is not None else None
        if code == KafkaError.UNKNOWN_TOPIC_OR_PART:
            log.debug("Topic '%s' does not exist on the brokers at %s", topic, _bootstrap(admin_config))
            return False
        if code in _NOT_AUTHORIZED:
            raise KafkaAuthorizationError(
                principal(admin_config or {}), [(operation, "topic", topic)],
                f"Not authorized to describe topic(s) '{names}' on the brokers {_bootstrap(admin_config)}"
            ) from e
        if code == KafkaError.UNSUPPORTED_VERSION:
            raise ConnectException(
                f"Unable to describe topic(s) '{names}' since the brokers at "
                f"{_bootstrap(admin_config)} do not support the DescribeTopics API."
            ) from e
        if code in _TIMED_OUT:
            raise RetriableException(f"Timed out while describing topics '{names}'") from e
        raise ConnectException(f"Error while attempting to describe topics '{names}'") from e


def _new_topic(spec: NewTopicSpec) -> NewTopic:
    return NewTopic(
        spec.name,
        num_partitions=spec.partitions,
        replication_factor=spec.replication_factor,
        config=dict(spec.configs),
    )


def rejected_settings(group: TopicCreationGroup, code: int | None, broker_message: str) -> list[str]:
    """The connector settings a broker error points at, as ``key=value`` (all of the group's when unclear).

    Example::

        >>> g = TopicCreationGroup("default", (".*",), (), 1, 3, {"cleanup.policy": "bogus"})
        >>> rejected_settings(g, KafkaError.INVALID_REPLICATION_FACTOR, "")
        ['topic.creation.default.replication.factor=3']
        >>> rejected_settings(g, KafkaError.INVALID_CONFIG, "Invalid value bogus for cleanup.policy")
        ['topic.creation.default.cleanup.policy=bogus']
    """
    values = {
        PARTITIONS_CONFIG: group.partitions,
        REPLICATION_FACTOR_CONFIG: group.replication_factor,
        **group.topic_configs,
    }
    if code == KafkaError.INVALID_REPLICATION_FACTOR:
        settings = [REPLICATION_FACTOR_CONFIG]
    elif code == KafkaError.INVALID_PARTITIONS:
        settings = [PARTITIONS_CONFIG]
    elif code == KafkaError.INVALID_CONFIG:
        settings = [name for name in group.topic_configs if name in broker_message] or list(
            group.topic_configs
        )
    else:
        settings = list(values)
    return [f"{group.config_key(setting)}={values[setting]}" for setting in settings]


def _note_rejected(exc: BaseException, group: TopicCreationGroup, code: int | None, message: str) -> None:
    settings = rejected_settings(group, code, message)
    if not settings:
        return
    note = f"The broker rejected the settings of topic creation group '{group.name}': " + ", ".join(settings)
    if hasattr(exc, "add_note"):  # Python 3.11+: shown under the message in the trace
        exc.add_note(note)
    else:
        exc.args = (f"{exc.args[0]}\n{note}",)


def create_or_find_topic(
    admin: AdminClient,
    group: TopicCreationGroup,
    topic: str,
    admin_config: Mapping[str, Any] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> str:
    """Create ``topic`` with ``group``'s settings: ``"created"``, or ``"existing"`` when it already exists.

    Follows ``TopicAdmin.createOrFindTopics`` and ``AbstractWorkerSourceTask.maybeCreateTopic``: every
    failure raises :class:`ConnectException` with Kafka Connect's message (a broker that refuses the
    settings: ``Unable to create topic(s) ...`` for an invalid config, ``Error while attempting to
    create/find topic(s) ...`` otherwise; not authorized / unsupported: ``Task failed to create new
    topic ...``). The exception carries a note naming the connector settings the broker rejected.
    """
    spec = group.new_topic(topic)
    try:
        admin.create_topics([_new_topic(spec)], request_timeout=timeout)[topic].result(timeout + 5)
        return "created"
    except concurrent.futures.TimeoutError as e:
        err, cause = None, e
    except KafkaException as e:
        err, cause = _error_of(e), e
    code = err.code() if err is not None else KafkaError._TIMED_OUT
    message = err.str() if err is not None else ""
    if code == KafkaError.TOPIC_ALREADY_EXISTS:
        log.debug("Found existing topic '%s' on the brokers at %s", topic, _bootstrap(admin_config))
        return "existing"
    if code in (*_NOT_AUTHORIZED, KafkaError.UNSUPPORTED_VERSION):
        log.debug(
            "Unable to create topic(s) '%s' on the brokers at %s (%s)",
            topic,
            _bootstrap(admin_config),
            message,
        )
        log.warning("Request to create new topic '%s' failed", topic)
        exc = ConnectException(
            f"Task failed to create new topic {spec.to_java_string()}. Ensure that the task "
            "is authorized to create topics or that the topic exists and restart the task"
        )
        if code in _NOT_AUTHORIZED:  # Kafka Connect's words, after who lacks which ACL
            exc = KafkaAuthorizationError(principal(admin_config or {}), [("CREATE", "topic", topic)], str(exc))
    elif code == KafkaError.INVALID_CONFIG:
        exc = ConnectException(f"Unable to create topic(s) '{topic}': {message}")
        _note_rejected(exc, group, code, message)
    elif code in _TIMED_OUT:
        exc = ConnectException(
            f"Timed out while checking for or creating topic(s) '{topic}'. This could indicate "
            "a connectivity issue, unavailable topic partitions, or if this is your first use "
            "of the topic it may have taken too long to create."
        )
    else:
        exc = ConnectException(f"Error while attempting to create/find topic(s) '{topic}'")
        _note_rejected(exc, group, code, message)
    raise exc from cause


def cluster_view(admin: AdminClient, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
    """The broker's topics and the defaults that ``-1`` stands for.

    Returns ``{"topics": set of names, "partitions": num.partitions or None,
    "replication_factor": default.replication.factor or None}``.
    """
    md = admin.list_topics(timeout=timeout)
    view: dict[str, Any] = {"topics": set(md.topics), "partitions": None, "replication_factor": None}
    if md.brokers:
        resource = ConfigResource(ResourceType.BROKER, str(min(md.brokers)))
        try:
            configs = admin.describe_configs([resource], request_timeout=timeout)[resource].result(
                timeout + 5
            )
            for key, name in (
                ("partitions", "num.partitions"),
                ("replication_factor", "default.replication.factor"),
            ):
                if name in configs and configs[name].value is not None:
                    view[key] = int(configs[name].value)
        except (KafkaException, concurrent.futures.TimeoutError, ValueError):
            log.info("Could not read the broker's default partitions and replication factor", exc_info=True)
    return view


def validate_new_topics(
    admin: AdminClient, specs: Iterable[NewTopicSpec], timeout: float = DEFAULT_TIMEOUT
) -> dict[str, str | None]:
    """Ask the broker whether it would create each topic (CreateTopics with ``validate_only``).

    Returns topic → None (the broker accepts the settings) or the broker's error message.
    """
    specs = list(specs)
    if not specs:
        return {}
    futures = admin.create_topics([_new_topic(s) for s in specs], validate_only=True, request_timeout=timeout)
    out: dict[str, str | None] = {}
    for spec in specs:
        try:
            futures[spec.name].result(timeout + 5)
            out[spec.name] = None
        except KafkaException as e:
            err = _error_of(e)
            out[spec.name] = f"{err.name()}: {err.str()}" if err is not None else str(e)
        except concurrent.futures.TimeoutError:
            out[spec.name] = "Timed out asking the broker to validate the topic"
    return out


def explain_topics(
    admin: AdminClient,
    topic_creation: TopicCreation,
    inactive: str | None,
    topics: Iterable[str],
    include_existing: bool = True,
    created: Mapping[str, Mapping[str, Any]] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> dict[str, Any]:
    """The explain API's answer (see ``ConnectRuntime.explain_topic_creation``).

    ``topics`` come first, then (with ``include_existing``) the broker's other topics, sorted, without
    Kafka's own ``__``-prefixed ones. Each entry is :meth:`TopicCreation.explain`'s plus ``exists``,
    ``action`` (``"create"``, ``"exists"``: Connect leaves an existing topic alone, or ``"none"``: Connect
    does not create topics for this connector), ``created_by_connector``, ``effective_partitions`` and
    ``effective_replication_factor`` (``-1`` resolved to the broker's default) and ``broker_check``
    (for ``"create"``: None if the broker would accept the settings, else its error).
    """
    created = created or {}
    view = cluster_view(admin, timeout)
    names = list(dict.fromkeys(topics))
    if include_existing:
        names += sorted(t for t in view["topics"] if t not in names and not t.startswith("__"))
    entries = topic_creation.explain(names)
    enabled = topic_creation.enabled and inactive is None
    to_check = []
    for entry in entries:
        entry["exists"] = entry["topic"] in view["topics"]
        entry["created_by_connector"] = entry["topic"] in created
        entry["action"] = "none" if not enabled else "exists" if entry["exists"] else "create"
        if not enabled:
            entry["reason"] = (
                f"Connect will not create this topic: {inactive or 'topic creation is not in use'}"
            )
        elif entry["exists"]:
            entry["reason"] += "; the topic exists already, so Connect uses it as it is and changes nothing"
        for key in ("partitions", "replication_factor"):
            value = entry[key]
            entry[f"effective_{key}"] = view[key] if value == -1 else value
        entry["broker_check"] = None
        if entry["action"] == "create":
            to_check.append(topic_creation.new_topic(entry["topic"]))
    by_topic = {entry["topic"]: entry for entry in entries}
    for topic, problem in validate_new_topics(admin, to_check, timeout).items():
        by_topic[topic]["broker_check"] = problem
    groups = [*topic_creation.groups, topic_creation.default_group] if topic_creation.enabled else []
    return {
        "enabled": enabled,
        "reason": inactive
        if not enabled
        else "Connect creates each missing topic with the first matching group's "
        "settings before a task first sends to it",
        "groups": [g.describe() for g in groups],
        "broker_defaults": {
            "partitions": view["partitions"],
            "replication_factor": view["replication_factor"],
        },
        "topics": entries,
    }
