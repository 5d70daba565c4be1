"""Topic creation rules for source connectors (KIP-158), as pure logic with no Kafka calls.

A source connector opts in with ``topic.creation.*`` keys; the worker must allow it
(``topic.creation.enable``, default true). The implicit ``default`` group needs
``topic.creation.default.replication.factor`` and ``topic.creation.default.partitions`` and matches every
topic; ``topic.creation.groups`` lists further groups, tried in the listed order, each with Java-regex
``include``/``exclude`` lists (exclusion wins), optional ``partitions``/``replication.factor`` (inherited
from ``default``) and any other ``topic.creation.<group>.<name>`` key passed on as a topic config. ``-1``
means "the broker's default".

Behaviour and messages follow Apache Kafka's ``SourceConnectorConfig``, ``TopicCreationConfig``,
``TopicCreationGroup`` and ``TopicCreation``. Deliberate differences:

* :func:`validate_topic_creation` reports *every* problem (missing default settings, bad numbers, bad
  patterns) for the runtime's validate step; Kafka's ``/config/validate`` only reports duplicate groups
  and fails the connector at start for the rest.
* Extra log warnings (Kafka is silent): ``topic.creation.default.include``/``exclude`` being ignored,
  ``topic.creation.*`` keys that belong to no group, and connector settings ignored because the worker
  has ``topic.creation.enable=false``.
* Patterns are Java regular expressions translated by :mod:`connect_magics.java_regex`; one that
  Python cannot express is reported like a syntax error, naming the construct.

Example::

    >>> tc = TopicCreation.from_connector_config({
    ...     "topic.creation.groups": "compacted",
    ...     "topic.creation.default.replication.factor": "3",
    ...     "topic.creation.default.partitions": "5",
    ...     "topic.creation.compacted.include": "configurations.*",
    ...     "topic.creation.compacted.cleanup.policy": "compact",
    ... })
    >>> tc.new_topic("configurations.users")
    NewTopicSpec(name='configurations.users', partitions=5, replication_factor=3, configs={'cleanup.policy': 'compact'})
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from connect_magics.api.config import ConfigException
from connect_magics.java_regex import JavaRegexError, compile_java_regex

__all__ = [
    "DEFAULT_GROUP",
    "EXCLUDE_REGEX_CONFIG",
    "INCLUDE_REGEX_CONFIG",
    "PARTITIONS_CONFIG",
    "REPLICATION_FACTOR_CONFIG",
    "TOPIC_CREATION_GROUPS_CONFIG",
    "TOPIC_CREATION_PREFIX",
    "NewTopicSpec",
    "TopicCreation",
    "TopicCreationConfigError",
    "TopicCreationGroup",
    "check_connector_config",
    "inactive_reason",
    "topic_name_error",
    "uses_topic_creation",
    "validate_topic_creation",
]

_log = logging.getLogger(__name__)

TOPIC_CREATION_PREFIX = "topic.creation."
DEFAULT_GROUP = "default"
TOPIC_CREATION_GROUPS_CONFIG = TOPIC_CREATION_PREFIX + "groups"
INCLUDE_REGEX_CONFIG = "include"
EXCLUDE_REGEX_CONFIG = "exclude"
REPLICATION_FACTOR_CONFIG = "replication.factor"
PARTITIONS_CONFIG = "partitions"
_GROUP_SETTINGS = (INCLUDE_REGEX_CONFIG, EXCLUDE_REGEX_CONFIG, REPLICATION_FACTOR_CONFIG, PARTITIONS_CONFIG)
_DEFAULT_PREFIX = f"{TOPIC_CREATION_PREFIX}{DEFAULT_GROUP}."

PARTITIONS_MESSAGE = "Number of partitions must be positive, or -1 to use the broker's default"
REPLICATION_FACTOR_MESSAGE = (
    "Replication factor must be positive and not larger than the number of brokers in the Kafka "
    "cluster, or -1 to use the broker's default"
)
_DEFAULT_LISTED_WARNING = (
    f"'{DEFAULT_GROUP}' topic creation group always exists and does not need to be listed explicitly"
)


def uses_topic_creation(connector_config: Mapping[str, str], worker_enabled: bool) -> bool:
    """Whether topic creation is active: enabled on the worker and any ``topic.creation.`` key is set.

    Example::

        >>> uses_topic_creation({"topic.creation.default.partitions": "1"}, worker_enabled=True)
        True
        >>> uses_topic_creation({"topic.creation.default.partitions": "1"}, worker_enabled=False)
        False
    """
    return worker_enabled and any(key.startswith(TOPIC_CREATION_PREFIX) for key in connector_config)


class TopicCreationConfigError(ConfigException):
    """Invalid topic creation settings (a :class:`ConfigException`, as Kafka's ``SourceConnectorConfig``
    throws); ``errors`` holds every ``(config key, message)`` found and ``name`` is the first key.

    Example::

        >>> try:
        ...     TopicCreation.from_connector_config({"topic.creation.default.partitions": "0"})
        ... except TopicCreationConfigError as e:
        ...     [key for key, _ in e.errors]
        ['topic.creation.default.replication.factor', 'topic.creation.default.partitions']
    """

    def __init__(self, errors: Iterable[tuple[str, str]]):
        self.errors: list[tuple[str, str]] = list(errors)
        super().__init__("\n".join(message for _, message in self.errors))
        self.name = self.errors[0][0] if self.errors else ""


@dataclass(frozen=True)
class NewTopicSpec:
    """A topic to create: ``-1`` partitions or replication factor means the broker's default.

    Example::

        >>> NewTopicSpec("orders", -1, 3, {"cleanup.policy": "compact"}).partitions
        -1
    """

    name: str
    partitions: int
    replication_factor: int
    configs: dict[str, str] = field(default_factory=dict, hash=False)

    def to_java_string(self) -> str:
        """How Kafka's ``NewTopic.toString()`` shows it (used in the reference's error messages).

        Example::

            >>> NewTopicSpec("orders", 5, 3, {"cleanup.policy": "compact"}).to_java_string()[52:]
            'replicasAssignments=null, configs={cleanup.policy=compact})'
        """
        configs = ", ".join(f"{k}={v}" for k, v in self.configs.items())
        return (
            f"(name={self.name}, numPartitions={self.partitions}, "
            f"replicationFactor={self.replication_factor}, "
            f"replicasAssignments=null, configs={{{configs}}})"
        )


@dataclass(frozen=True)
class TopicCreationGroup:
    """One topic creation group: which topics it matches and how they are created.

    ``matches`` is Kafka's rule: the include patterns joined with ``|`` must match the whole topic name
    and the exclude patterns joined with ``|`` must not. An empty list is the empty pattern, which only
    matches the empty name, so a group without ``include`` matches no topic. ``inherited`` names the
    settings (``partitions``, ``replication.factor``) this group takes from the ``default`` group.

    Example::

        >>> g = TopicCreationGroup("hpc", ("hpc.*", "parallel.*"), (".*internal",), 1, 1, {})
        >>> g.matches("hpc.jobs"), g.matches("hpc.internal"), g.matches("orders")
        (True, False, False)
    """

    name: str
    include: tuple[str, ...]
    exclude: tuple[str, ...]
    partitions: int
    replication_factor: int
    topic_configs: dict[str, str] = field(default_factory=dict, hash=False)
    inherited: frozenset[str] = field(default=frozenset(), repr=False, compare=False, hash=False)
    _include_rx: re.Pattern[str] = field(init=False, repr=False, compare=False, hash=False)
    _exclude_rx: re.Pattern[str] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "include", tuple(self.include))
        object.__setattr__(self, "exclude", tuple(self.exclude))
        object.__setattr__(self, "topic_configs", dict(self.topic_configs))
        object.__setattr__(self, "inherited", frozenset(self.inherited))
        object.__setattr__(self, "_include_rx", compile_java_regex("|".join(self.include)))
        object.__setattr__(self, "_exclude_rx", compile_java_regex("|".join(self.exclude)))

    def matches(self, topic: str) -> bool:
        """Whether this group applies to ``topic`` (full match; exclusion wins)."""
        return self._exclude_rx.fullmatch(topic) is None and self._include_rx.fullmatch(topic) is not None

    def explain(self, topic: str) -> dict[str, Any]:
        """Why this group does or does not match ``topic``.

        Returns ``group``, ``matched``, ``included_by`` (the include pattern that matched, or None),
        ``excluded_by`` (the exclude pattern that blocked, or None) and a readable ``reason``. When only
        the joined expression matches (inline flags or ``\\Q`` reaching across patterns), that joined
        expression is reported.

        Example::

            >>> g = TopicCreationGroup("hpc", ("hpc.*",), (".*internal",), 1, 1, {})
            >>> g.explain("hpc.internal")["excluded_by"]
            '.*internal'
        """
        excluded = self._exclude_rx.fullmatch(topic) is not None
        included = self._include_rx.fullmatch(topic) is not None
        excluded_by = _matching_pattern(self.exclude, topic) if excluded else None
        included_by = _matching_pattern(self.include, topic) if included else None
        if excluded:
            if self.exclude:
                reason = f"exclude pattern {excluded_by!r} matches {topic!r}"
            else:
                reason = "an empty exclude list is the empty pattern, which matches the empty topic name"
        elif included:
            reason = f"include pattern {included_by!r} matches {topic!r} and no exclude pattern does"
        elif not self.include:
            reason = "the group has no include patterns, so it matches no topic"
        else:
            reason = f"no include pattern matches {topic!r}"
        return {
            "group": self.name,
            "matched": included and not excluded,
            "included_by": included_by,
            "excluded_by": excluded_by,
            "reason": reason,
        }

    def new_topic(self, topic: str) -> NewTopicSpec:
        """The settings to create ``topic`` with, from this group."""
        return NewTopicSpec(topic, self.partitions, self.replication_factor, dict(self.topic_configs))

    def config_key(self, setting: str) -> str:
        """The connector config key a setting of this group comes from (the ``default`` group's key
        when inherited).

        Example::

            >>> g = TopicCreationGroup("g", ("x",), (), 5, 1, {}, inherited={"partitions"})
            >>> g.config_key("partitions"), g.config_key("replication.factor")
            ('topic.creation.default.partitions', 'topic.creation.g.replication.factor')
        """
        group = DEFAULT_GROUP if setting in self.inherited else self.name
        return f"{TOPIC_CREATION_PREFIX}{group}.{setting}"

    def settings_from(self) -> dict[str, str]:
        """Each setting this group creates topics with → the connector config key it comes from."""
        settings = [PARTITIONS_CONFIG, REPLICATION_FACTOR_CONFIG, *self.topic_configs]
        return {setting: self.config_key(setting) for setting in settings}

    def describe(self) -> dict[str, Any]:
        """The group as plain data (for the explain API and widgets)."""
        return {
            "group": self.name,
            "include": list(self.include),
            "exclude": list(self.exclude),
            "partitions": self.partitions,
            "replication_factor": self.replication_factor,
            "configs": dict(self.topic_configs),
            "settings_from": self.settings_from(),
        }


def _matching_pattern(patterns: tuple[str, ...], topic: str) -> str:
    for pattern in patterns:
        try:
            if compile_java_regex(pattern).fullmatch(topic):
                return pattern
        except JavaRegexError:
            continue
    return "|".join(patterns)


class TopicCreation:
    """A source connector's topic creation rules: the ``default`` group plus the listed groups in order.

    :data:`TopicCreation.EMPTY` (``enabled`` false) stands for "Connect does not create topics for this
    connector"; the broker may still auto-create them.

    Example::

        >>> tc = TopicCreation.from_connector_config({
        ...     "topic.creation.groups": "inorder",
        ...     "topic.creation.default.replication.factor": "3",
        ...     "topic.creation.default.partitions": "5",
        ...     "topic.creation.inorder.include": "status, orders.*",
        ...     "topic.creation.inorder.partitions": "1",
        ... })
        >>> tc.find_first_group("orders.eu").name, tc.find_first_group("users").name
        ('inorder', 'default')
    """

    EMPTY: ClassVar[TopicCreation]

    def __init__(
        self, default_group: TopicCreationGroup | None = None, groups: Iterable[TopicCreationGroup] = ()
    ):
        self._default_group = default_group
        self._groups = tuple(groups)
        if default_group is None and self._groups:
            raise ValueError("topic creation groups need a default group")

    @classmethod
    def from_connector_config(
        cls,
        config: Mapping[str, str],
        worker_enabled: bool = True,
        warn: Callable[[str], None] = _log.warning,
    ) -> TopicCreation:
        """Build the rules from a source connector's config, or :data:`EMPTY` when not in use.

        Raises :class:`TopicCreationConfigError` listing every invalid or missing setting. A duplicate
        in ``topic.creation.groups`` is an error even when topic creation is not in use, as in Kafka.

        Example::

            >>> TopicCreation.from_connector_config({"name": "src"}).enabled
            False
        """
        topic_creation, errors = _parse(config, worker_enabled, warn)
        if errors:
            raise TopicCreationConfigError(errors)
        return topic_creation

    @property
    def enabled(self) -> bool:
        """Whether Connect creates missing topics for this connector."""
        return self._default_group is not None

    @property
    def groups(self) -> tuple[TopicCreationGroup, ...]:
        """The non-default groups, in ``topic.creation.groups`` order."""
        return self._groups

    @property
    def default_group(self) -> TopicCreationGroup | None:
        """The ``default`` group (None when not enabled)."""
        return self._default_group

    def find_first_group(self, topic: str) -> TopicCreationGroup | None:
        """The first listed group matching ``topic``, else the default group; None when not enabled."""
        for group in self._groups:
            if group.matches(topic):
                return group
        return self._default_group

    def new_topic(self, topic: str) -> NewTopicSpec | None:
        """How to create ``topic`` (from :meth:`find_first_group`); None when not enabled."""
        group = self.find_first_group(topic)
        return group.new_topic(topic) if group is not None else None

    def explain(self, topics: Iterable[str]) -> list[dict[str, Any]]:
        """For each topic: the group it gets, why, and the settings it would be created with.

        Each entry has ``topic``, ``group`` (None when not enabled), ``partitions``,
        ``replication_factor``, ``configs``, ``settings_from`` (setting → the config key it comes from,
        showing inheritance from ``default``), ``included_by``/``excluded_by`` (of the group that applied,
        when a listed group did), ``reason`` and ``groups_tried``: the
        :meth:`TopicCreationGroup.explain` of every group tried, in order, up to the one that applied.

        Example::

            >>> tc = TopicCreation.from_connector_config({
            ...     "topic.creation.default.replication.factor": "-1",
            ...     "topic.creation.default.partitions": "-1",
            ... })
            >>> [(e["group"], e["partitions"]) for e in tc.explain(["a"])]
            [('default', -1)]
        """
        return [self._explain_one(topic) for topic in topics]

    def _explain_one(self, topic: str) -> dict[str, Any]:
        if self._default_group is None:
            return {
                "topic": topic,
                "group": None,
                "partitions": None,
                "replication_factor": None,
                "configs": {},
                "settings_from": {},
                "included_by": None,
                "excluded_by": None,
                "reason": "topic creation is not in use for this connector, so Connect will not create the "
                "topic (it must exist already or be auto-created by the broker)",
                "groups_tried": [],
            }
        tried = []
        chosen = self._default_group
        verdict: dict[str, Any] = {}
        for group in self._groups:
            verdict = group.explain(topic)
            tried.append(verdict)
            if verdict["matched"]:
                chosen = group
                reason = f"group {group.name!r}: {verdict['reason']}"
                break
        else:
            verdict = self._default_group.explain(topic)
            tried.append(verdict)
            listed = ", ".join(repr(g.name) for g in self._groups)
            reason = (
                f"no listed group ({listed}) matches, so the {DEFAULT_GROUP!r} group applies"
                if self._groups
                else f"only the {DEFAULT_GROUP!r} group is configured; it applies to every topic"
            )
        return {
            "topic": topic,
            "group": chosen.name,
            "partitions": chosen.partitions,
            "replication_factor": chosen.replication_factor,
            "configs": dict(chosen.topic_configs),
            "settings_from": chosen.settings_from(),
            "included_by": verdict.get("included_by"),
            "excluded_by": verdict.get("excluded_by"),
            "reason": reason,
            "groups_tried": tried,
        }

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TopicCreation):
            return NotImplemented
        return (self._default_group, self._groups) == (other._default_group, other._groups)

    def __hash__(self) -> int:
        return hash((self._default_group, self._groups))

    def __repr__(self) -> str:
        if not self.enabled:
            return "TopicCreation.EMPTY"
        return f"TopicCreation(default_group={self._default_group!r}, groups={self._groups!r})"


TopicCreation.EMPTY = TopicCreation()


_LEGAL_TOPIC_CHARS = re.compile(r"[a-zA-Z0-9._-]+")
_MAX_TOPIC_LENGTH = 249


def topic_name_error(name: object) -> str | None:
    """Why ``name`` is not a legal Kafka topic name (Kafka's ``Topic.validate`` messages), or None.

    Example::

        >>> topic_name_error("orders.eu") is None
        True
        >>> print(topic_name_error("a b"))
        Topic name "a b" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'
    """
    if not isinstance(name, str):
        return f"Topic name must be a string, got {type(name).__name__}"
    if not name:
        return "Topic name is illegal, it can't be empty"
    if name in (".", ".."):
        return 'Topic name cannot be "." or ".."'
    if len(name) > _MAX_TOPIC_LENGTH:
        return (
            f"Topic name is illegal, it can't be longer than {_MAX_TOPIC_LENGTH} characters, topic name: "
            f"{name}"
        )
    if not _LEGAL_TOPIC_CHARS.fullmatch(name):
        return (
            f'Topic name "{name}" is illegal, it contains a character other than ASCII alphanumerics, '
            "'.', '_' and '-'"
        )
    return None


def inactive_reason(
    config: Mapping[str, str], worker_enabled: bool, connector_type: str = "source"
) -> str | None:
    """Why Connect will not create topics for this connector, or None when it will (given a valid config).

    Example::

        >>> inactive_reason({"topic.creation.default.partitions": "1"}, worker_enabled=False)
        "the worker has topic.creation.enable=false, so the connector's topic.creation.* settings are ignored"
    """
    has_keys = any(key.startswith(TOPIC_CREATION_PREFIX) for key in config)
    if connector_type == "sink":
        return (
            "topic creation applies to source connectors only; a sink connector's topic.creation.* "
            "settings are ignored"
            if has_keys
            else "topic creation applies to source connectors only"
        )
    if not worker_enabled:
        return (
            "the worker has topic.creation.enable=false, so the connector's topic.creation.* settings "
            "are ignored"
        )
    if not has_keys:
        return "the connector config has no topic.creation.* settings"
    return None


def check_connector_config(
    name: str,
    connector_type: str,
    config: Mapping[str, str],
    worker_enabled: bool,
    warn: Callable[[str], None] = _log.warning,
) -> TopicCreation:
    """What the worker does when a connector starts (Kafka's ``SourceConnectorConfig`` constructor).

    Source connectors: the rules, or :data:`TopicCreation.EMPTY` when not in use; raises
    :class:`TopicCreationConfigError` when they are invalid (the connector then fails). Sink connectors
    ignore ``topic.creation.*`` keys with a warning (KIP-158) and get :data:`TopicCreation.EMPTY`.

    Example::

        >>> check_connector_config("s", "sink", {"topic.creation.default.partitions": "1"}, True, print)
        Connector s: topic.creation.* settings are ignored: topic creation applies to source connectors only
        TopicCreation.EMPTY
    """
    if connector_type == "sink":
        if any(key.startswith(TOPIC_CREATION_PREFIX) for key in config):
            warn(
                f"Connector {name}: topic.creation.* settings are ignored: topic creation applies to source "
                "connectors only"
            )
        return TopicCreation.EMPTY
    return TopicCreation.from_connector_config(
        config, worker_enabled, lambda message: warn(f"Connector {name}: {message}")
    )


def validate_topic_creation(config: Mapping[str, str], worker_enabled: bool = True) -> list[tuple[str, str]]:
    """Every ``(config key, message)`` problem in the topic creation settings, without raising.

    Example::

        >>> validate_topic_creation({"topic.creation.groups": "a, b, a"}, worker_enabled=False)
        [('topic.creation.groups', 'Invalid value [a, b, a] for configuration topic.creation.groups: Duplicate alias provided.')]
    """
    return _parse(config, worker_enabled, lambda message: None)[1]


# --------------------------------------------------------------------------------------------------
# Parsing, with Kafka ConfigDef's rules and messages

_JAVA_TRIM = "".join(chr(c) for c in range(0x21))  # String.trim() removes every char <= ' '
_COMMA_WITH_WHITESPACE = re.compile(r"[ \t\n\x0b\f\r]*,[ \t\n\x0b\f\r]*")
_JAVA_INTEGER = re.compile(r"[+-]?\d+")
_TYPE_RANGES = {"INT": (-(2**31), 2**31 - 1), "SHORT": (-(2**15), 2**15 - 1)}


class _Invalid(Exception):
    def __init__(self, key: str, message: str):
        super().__init__(message)
        self.key = key
        self.message = message


def _parse_list(value: str) -> list[str]:
    """ConfigDef LIST: trimmed, split on commas with surrounding whitespace, empty → []."""
    trimmed = value.strip(_JAVA_TRIM)
    return _COMMA_WITH_WHITESPACE.split(trimmed) if trimmed else []


def _java_list(items: Iterable[str]) -> str:
    return "[" + ", ".join(items) + "]"


def _invalid(key: str, value: object, message: str) -> _Invalid:
    return _Invalid(key, f"Invalid value {value} for configuration {key}: {message}")


def _parse_number(key: str, value: str, type_name: str) -> int:
    """ConfigDef INT/SHORT parsing (``Integer.parseInt`` / ``Short.parseShort`` of the trimmed value)."""
    trimmed = str(value).strip(_JAVA_TRIM)
    low, high = _TYPE_RANGES[type_name]
    if _JAVA_INTEGER.fullmatch(trimmed):
        number = int(trimmed)
        if low <= number <= high:
            return number
    raise _invalid(key, value, f"Not a number of type {type_name}")


def _number_setting(
    config: Mapping[str, str], key: str, type_name: str, message: str, default: int | None
) -> int:
    if key in config:
        number = _parse_number(key, config[key], type_name)
    elif default is None:
        raise _Invalid(key, f'Missing required configuration "{key}" which has no default value.')
    else:
        number = default
    if number != -1 and number < 1:
        raise _invalid(key, number, message)
    return number


def _pattern_setting(config: Mapping[str, str], key: str) -> tuple[str, ...]:
    patterns = _parse_list(config[key]) if key in config else []
    try:
        for pattern in patterns:  # Kafka's REGEX_VALIDATOR compiles each pattern on its own
            compile_java_regex(pattern)
        compile_java_regex("|".join(patterns))  # TopicCreationGroup compiles them joined with |
    except JavaRegexError as exc:
        raise _invalid(key, _java_list(patterns), f"Syntax error in regular expression: {exc}") from None
    return tuple(patterns)


def _topic_configs(config: Mapping[str, str], group: str) -> dict[str, str]:
    prefix = f"{TOPIC_CREATION_PREFIX}{group}."
    return {
        key[len(prefix) :]: value
        for key, value in config.items()
        if key.startswith(prefix) and key[len(prefix) :] not in _GROUP_SETTINGS
    }


def _collect(errors: list[tuple[str, str]], parse: Callable[[], Any]) -> Any:
    try:
        return parse()
    except _Invalid as exc:
        errors.append((exc.key, exc.message))
        return None


def _parse(
    config: Mapping[str, str], worker_enabled: bool, warn: Callable[[str], None]
) -> tuple[TopicCreation, list[tuple[str, str]]]:
    errors: list[tuple[str, str]] = []
    raw_aliases = config.get(TOPIC_CREATION_GROUPS_CONFIG)
    aliases = _parse_list(raw_aliases) if raw_aliases is not None else []
    if len(aliases) > len(set(aliases)):
        errors.append(
            (
                TOPIC_CREATION_GROUPS_CONFIG,
                f"Invalid value {_java_list(aliases)} for configuration {TOPIC_CREATION_GROUPS_CONFIG}: "
                "Duplicate alias provided.",
            )
        )
    if not uses_topic_creation(config, worker_enabled):
        if not worker_enabled and any(key.startswith(TOPIC_CREATION_PREFIX) for key in config):
            warn(
                "The connector's topic.creation.* settings are ignored: the worker has topic.creation.enable=false"
            )
        return TopicCreation.EMPTY, errors

    if DEFAULT_GROUP in aliases:
        warn(_DEFAULT_LISTED_WARNING)
    names = [alias for alias in dict.fromkeys(aliases) if alias != DEFAULT_GROUP]
    for setting in (INCLUDE_REGEX_CONFIG, EXCLUDE_REGEX_CONFIG):
        if _DEFAULT_PREFIX + setting in config:
            warn(
                f"{_DEFAULT_PREFIX}{setting} is ignored: the '{DEFAULT_GROUP}' topic creation group always "
                "includes every topic and excludes none"
            )
    prefixes = [f"{TOPIC_CREATION_PREFIX}{name}." for name in [DEFAULT_GROUP, *names]]
    for key in config:
        if key.startswith(TOPIC_CREATION_PREFIX) and key != TOPIC_CREATION_GROUPS_CONFIG:
            if not any(key.startswith(prefix) for prefix in prefixes):
                warn(
                    f"{key} is ignored: it belongs neither to the '{DEFAULT_GROUP}' topic creation group "
                    f"nor to a group listed in {TOPIC_CREATION_GROUPS_CONFIG}"
                )

    default_rf = _collect(
        errors,
        lambda: _number_setting(
            config, _DEFAULT_PREFIX + REPLICATION_FACTOR_CONFIG, "SHORT", REPLICATION_FACTOR_MESSAGE, None
        ),
    )
    default_partitions = _collect(
        errors,
        lambda: _number_setting(
            config, _DEFAULT_PREFIX + PARTITIONS_CONFIG, "INT", PARTITIONS_MESSAGE, None
        ),
    )

    groups = []
    for name in names:
        prefix = f"{TOPIC_CREATION_PREFIX}{name}."
        include = _collect(errors, lambda p=prefix: _pattern_setting(config, p + INCLUDE_REGEX_CONFIG))
        exclude = _collect(errors, lambda p=prefix: _pattern_setting(config, p + EXCLUDE_REGEX_CONFIG))
        rf = partitions = None
        if default_rf is not None or prefix + REPLICATION_FACTOR_CONFIG in config:
            rf = _collect(
                errors,
                lambda p=prefix: _number_setting(
                    config, p + REPLICATION_FACTOR_CONFIG, "SHORT", REPLICATION_FACTOR_MESSAGE, default_rf
                ),
            )
        if default_partitions is not None or prefix + PARTITIONS_CONFIG in config:
            partitions = _collect(
                errors,
                lambda p=prefix: _number_setting(
                    config, p + PARTITIONS_CONFIG, "INT", PARTITIONS_MESSAGE, default_partitions
                ),
            )
        if None not in (include, exclude, rf, partitions):
            inherited = {
                s for s in (PARTITIONS_CONFIG, REPLICATION_FACTOR_CONFIG) if prefix + s not in config
            }
            groups.append(
                TopicCreationGroup(
                    name, include, exclude, partitions, rf, _topic_configs(config, name), inherited
                )
            )

    if errors:
        return TopicCreation.EMPTY, errors
    default = TopicCreationGroup(
        DEFAULT_GROUP, (".*",), (), default_partitions, default_rf, _topic_configs(config, DEFAULT_GROUP)
    )
    return TopicCreation(default, groups), errors
