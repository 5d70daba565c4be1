"""Connector configuration: the common definition, its enrichment with transformations and
predicates, validation into Kafka Connect's ConfigInfos, and building a task's converters and chain.

>>> cd = connector_config_def("source")
>>> "tasks.max" in cd.config_keys()
True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from connect_magics.api.config import (
    CaseInsensitiveValidString,
    ConfigDef,
    ConfigException,
    ConfigValue,
    Importance,
    LambdaValidator,
    Range,
    Type,
    Width,
    config_infos,
)
from connect_magics.api.config import _key_info as config_key_info
from connect_magics.api.converters import Converter, HeaderConverter
from connect_magics.api.predicates import Predicate
from connect_magics.api.records import ConnectRecord
from connect_magics.api.transforms import RegexValidator, Transformation
from connect_magics.errors import BadRequestError, NotFoundError
from connect_magics.java_client_settings import librdkafka_client_settings
from connect_magics.runtime.config.client_settings import client_setting_errors
from connect_magics.runtime.config.exactly_once import (
    EXACTLY_ONCE_GROUP,
    EXACTLY_ONCE_LEVELS,
    EXACTLY_ONCE_SUPPORT,
    TRANSACTION_BOUNDARIES,
    TRANSACTION_BOUNDARY,
    TRANSACTION_BOUNDARY_INTERVAL,
    validate_exactly_once,
)
from connect_magics.runtime.plugins.registry import (
    PLUGIN_VERSION_SUFFIX,
    PluginDesc,
    PluginNotFoundError,
    Plugins,
    VersionedPluginLoadingError,
    import_class,
    to_version_range,
)
from connect_magics.runtime.plugins.versions import InvalidVersionSpecificationError, VersionRange

CONNECTOR_CLASS = "connector.class"
#: KIP-891's ``connector.plugin.version`` (``ConnectorConfig.CONNECTOR_VERSION``).
CONNECTOR_VERSION = "connector." + PLUGIN_VERSION_SUFFIX
#: The converter class keys and the plugin types they take.
CONVERTER_TYPES: dict[str, tuple[str, ...]] = {"key.converter": ("converter",), "value.converter": ("converter",),
                                               "header.converter": ("header_converter",)}
OVERRIDE_PREFIXES = ("producer.override.", "consumer.override.", "admin.override.")
COMMON_GROUP, TRANSFORMS_GROUP, PREDICATES_GROUP = "Common", "Transforms", "Predicates"
ERRORS_GROUP = "Error Handling"


_CONVERTER_DOC = ("Converter class used to convert between Kafka Connect format and the serialized form that is "
                  "written to Kafka. This controls the format of the {} in messages written to or read from Kafka, "
                  "and since this is independent of connectors it allows any connector to work with any "
                  "serialization format. Examples of common formats include JSON and Avro.")
#: The KIP-891 version keys of the common plugin keys: (order, width, importance, display name, documentation).
_VERSION_KEYS = {
    CONNECTOR_VERSION: (3, Width.MEDIUM, Importance.MEDIUM, "Connector version", "Version of the connector."),
    "key.converter." + PLUGIN_VERSION_SUFFIX: (7, Width.SHORT, Importance.LOW, "Key converter version",
                                               "Version of the key converter."),
    "value.converter." + PLUGIN_VERSION_SUFFIX: (9, Width.SHORT, Importance.LOW, "Value converter version",
                                                 "Version of the value converter."),
    "header.converter." + PLUGIN_VERSION_SUFFIX: (11, Width.SHORT, Importance.LOW, "Header converter version",
                                                  "Version of the header converter."),
}


def _define_version_key(cd: ConfigDef, key: str, default: str | None = None) -> None:
    order, width, importance, display, doc = _VERSION_KEYS[key]
    cd.define(key, Type.STRING, default, importance=importance, group=COMMON_GROUP, order_in_group=order,
              width=width, display_name=display, documentation=doc)


def _define_transformation_keys(cd: ConfigDef, alias: str) -> None:
    """``transforms.{alias}.type`` and ``.plugin.version`` as Kafka's ``ConnectorConfig.enrich`` defines them."""
    prefix, group = f"transforms.{alias}.", f"Transforms: {alias}"
    if prefix + "type" in cd:  # an alias listed twice
        return
    cd.define(prefix + "type", Type.CLASS, importance=Importance.HIGH, group=group, order_in_group=0,
              width=Width.LONG, display_name=f"Transformation type for {alias}",
              documentation=f"Class for the '{alias}' transformation.")
    cd.define(prefix + PLUGIN_VERSION_SUFFIX, Type.STRING, None, importance=Importance.HIGH, group=group,
              order_in_group=1, width=Width.LONG, display_name=f"Transformation version for {alias}",
              documentation=f"Version of the '{alias}' transformation.")


def _transformation_def(cd: ConfigDef, alias: str, own: ConfigDef) -> ConfigDef:
    """The transformation's own keys plus ``predicate`` and ``negate``, ordered by name as Kafka's
    ``ConfigDef.embed`` orders keys of equal importance with defaults, embedded into ``cd``; returns them."""
    child = (ConfigDef(own)
             .define("predicate", Type.STRING, None, importance=Importance.MEDIUM,
                     documentation="The alias of a predicate used to determine whether to apply this "
                                   "transformation.")
             .define("negate", Type.BOOLEAN, False, importance=Importance.MEDIUM,
                     documentation="Whether the configured predicate should be negated."))
    keys = child.config_keys()
    ordered = ConfigDef()
    for name in sorted(keys, key=lambda n: (keys[n].has_default, n)):
        ordered.define_key(keys[name])
    prefix = f"transforms.{alias}."
    if prefix + "predicate" not in cd:  # an alias listed twice is embedded once
        cd.embed(prefix, f"Transforms: {alias}", 2, ordered)
    return ordered


def connector_config_def(connector_type: str, worker: Mapping[str, str] | None = None) -> ConfigDef:
    """The keys every connector config has (Kafka's ``ConnectorConfig``, plus ``SinkConnectorConfig``'s or
    ``SourceConnectorConfig``'s), with Kafka's display names, widths, orders and documentation; the
    converters default to the ``worker``'s."""
    worker = worker or {}
    cd = (ConfigDef()
          .define("name", Type.STRING, importance=Importance.HIGH, group=COMMON_GROUP, order_in_group=1,
                  width=Width.MEDIUM, display_name="Connector name",
                  documentation="Globally unique name to use for this connector.")
          .define(CONNECTOR_CLASS, Type.STRING, importance=Importance.HIGH, group=COMMON_GROUP, order_in_group=2,
                  width=Width.LONG, display_name="Connector class",
                  documentation="Name or alias of the class for this connector. Must be a subclass of "
                  "org.apache.kafka.connect.connector.Connector. If the connector is "
                  "org.apache.kafka.connect.file.FileStreamSinkConnector, you can either specify this full name,  "
                  "or use \"FileStreamSink\" or \"FileStreamSinkConnector\" to make the configuration a bit "
                  "shorter"))
    _define_version_key(cd, CONNECTOR_VERSION)
    cd.define("tasks.max", Type.INT, 1, Range.at_least(1), Importance.HIGH, group=COMMON_GROUP, order_in_group=4,
              width=Width.SHORT, display_name="Tasks max",
              documentation="Maximum number of tasks to use for this connector.")
    for order, (key, display, doc) in enumerate((
            ("key.converter", "Key converter class", _CONVERTER_DOC.format("keys")),
            ("value.converter", "Value converter class", _CONVERTER_DOC.format("values")),
            ("header.converter", "Header converter class", _CONVERTER_DOC.replace("Converter class", "HeaderConverter "
             "class").format("header values") + " By default, the SimpleHeaderConverter is used to serialize "
             "header values to strings and deserialize them by inferring the schemas.")), start=3):
        cd.define(key, Type.CLASS, worker.get(key), importance=Importance.LOW, group=COMMON_GROUP,
                  order_in_group=2 * order, width=Width.SHORT, display_name=display, documentation=doc)
        _define_version_key(cd, version_key(key))
    (cd.define("transforms", Type.LIST, "", importance=Importance.LOW, group=TRANSFORMS_GROUP, order_in_group=12,
               width=Width.LONG, display_name="Transforms",
               documentation="Aliases for the transformations to be applied to records.")
       .define("predicates", Type.LIST, "", importance=Importance.LOW, group=PREDICATES_GROUP, order_in_group=13,
               width=Width.LONG, display_name="Predicates",
               documentation="Aliases for the predicates used by transformations.")
       .define("errors.retry.timeout", Type.LONG, 0, importance=Importance.MEDIUM, group=ERRORS_GROUP,
               order_in_group=1, width=Width.MEDIUM, display_name="Retry Timeout for Errors",
               documentation="The maximum duration in milliseconds that a failed operation "
               "will be reattempted. The default is 0, which means no retries will be attempted. Use -1 for "
               "infinite retries.")
       .define("errors.retry.delay.max.ms", Type.LONG, 60000, importance=Importance.MEDIUM, group=ERRORS_GROUP,
               order_in_group=2, width=Width.MEDIUM, display_name="Maximum Delay Between Retries for Errors",
               documentation="The maximum duration in milliseconds between consecutive retry "
               "attempts. Jitter will be added to the delay once this limit is reached to prevent thundering "
               "herd issues.")
       .define("errors.tolerance", Type.STRING, "none", CaseInsensitiveValidString.in_("none", "all"),
               Importance.MEDIUM, group=ERRORS_GROUP, order_in_group=3, width=Width.SHORT,
               display_name="Error Tolerance",
               documentation="Behavior for tolerating errors during connector operation. 'none' is the default "
               "value and signals that any error will result in an immediate connector task failure; 'all' "
               "changes the behavior to skip over problematic records.")
       .define("errors.log.enable", Type.BOOLEAN, False, importance=Importance.MEDIUM, group=ERRORS_GROUP,
               order_in_group=4, width=Width.SHORT, display_name="Log Errors",
               documentation="If true, write each error and the details of the failed "
               "operation and problematic record to the Connect application log. This is 'false' by default, "
               "so that only errors that are not tolerated are reported.")
       .define("errors.log.include.messages", Type.BOOLEAN, False, importance=Importance.MEDIUM,
               group=ERRORS_GROUP, order_in_group=5, width=Width.SHORT, display_name="Log Error Details",
               documentation="Whether to include in the log the Connect "
               "record that resulted in a failure. For sink records, the topic, partition, offset, and "
               "timestamp will be logged. For source records, the key and value (and their schemas), all "
               "headers, and the timestamp, Kafka topic, Kafka partition, source partition, and source offset "
               "will be logged. This is 'false' by default, which will prevent record keys, values, and headers "
               "from being written to log files."))
    if connector_type == "sink":
        (cd.define("topics", Type.LIST, "", importance=Importance.HIGH, group=COMMON_GROUP, order_in_group=4,
                   width=Width.LONG, display_name="Topics",
                   documentation="List of topics to consume, separated by commas")
           .define("topics.regex", Type.STRING, "", RegexValidator(), importance=Importance.HIGH,
                   group=COMMON_GROUP, order_in_group=4, width=Width.LONG, display_name="Topics regex",
                   documentation="Regular expression giving topics to consume. Under the hood, the regex is "
                   "compiled to a <code>java.util.regex.Pattern</code>. Only one of topics or topics.regex should "
                   "be specified.")
           .define("errors.deadletterqueue.topic.name", Type.STRING, "", importance=Importance.MEDIUM,
                   group=ERRORS_GROUP, order_in_group=6, width=Width.MEDIUM,
                   display_name="Dead Letter Queue Topic Name", documentation="The name of the topic to be used "
                   "as the dead letter queue (DLQ) for messages that result in an error when processed by this "
                   "sink connector, or its transformations or converters. The topic name is blank by default, "
                   "which means that no messages are to be recorded in the DLQ.")
           .define("errors.deadletterqueue.topic.replication.factor", Type.SHORT, 3,
                   importance=Importance.MEDIUM, group=ERRORS_GROUP, order_in_group=7, width=Width.MEDIUM,
                   display_name="Dead Letter Queue Topic Replication Factor",
                   documentation="Replication factor used to create the dead letter queue topic when it "
                   "doesn't already exist.")
           .define("errors.deadletterqueue.context.headers.enable", Type.BOOLEAN, False,
                   importance=Importance.MEDIUM, group=ERRORS_GROUP, order_in_group=8, width=Width.MEDIUM,
                   display_name="Enable Error Context Headers",
                   documentation="If true, add headers containing error context to the messages written to "
                   "the dead letter queue. To avoid clashing with headers from the original record, all error "
                   "context header keys, all error context header keys will start with "
                   "<code>__connect.errors.</code>"))
    else:
        (cd.define("topic.creation.groups", Type.LIST, "", importance=Importance.LOW, group="Topic Creation",
                   order_in_group=1, width=Width.LONG, display_name="Topic Creation Groups",
                   documentation="Groups of configurations for topics created by source connectors")
           .define(EXACTLY_ONCE_SUPPORT, Type.STRING, "requested", CaseInsensitiveValidString.in_(*EXACTLY_ONCE_LEVELS),
                   importance=Importance.MEDIUM, group=EXACTLY_ONCE_GROUP, order_in_group=2, width=Width.SHORT,
                   display_name="Exactly once support",
                   documentation='Permitted values are requested, required. If set to "required", forces a '
                   "preflight check for the connector to ensure that it can provide exactly-once semantics with the "
                   "given configuration. Some connectors may be capable of providing exactly-once semantics but not "
                   "signal to Connect that they support this; in that case, documentation for the connector should be "
                   "consulted carefully before creating it, and the value for this property should be set to "
                   '"requested". Additionally, if the value is set to "required" but the worker that performs '
                   "preflight validation does not have exactly-once support enabled for source connectors, requests "
                   "to create or validate the connector will fail.")
           .define(TRANSACTION_BOUNDARY, Type.STRING, "poll", CaseInsensitiveValidString.in_(*TRANSACTION_BOUNDARIES),
                   importance=Importance.MEDIUM, group=EXACTLY_ONCE_GROUP, order_in_group=3, width=Width.SHORT,
                   display_name="Transaction Boundary",
                   documentation="Permitted values are: poll, interval, connector. If set to 'poll', a new producer "
                   "transaction will be started and committed for every batch of records that each task from this "
                   "connector provides to Connect. If set to 'connector', relies on connector-defined transaction "
                   "boundaries; note that not all connectors are capable of defining their own transaction "
                   "boundaries, and in that case, attempts to instantiate a connector with this value will fail. "
                   "Finally, if set to 'interval', commits transactions only after a user-defined time interval has "
                   "passed.")
           .define(TRANSACTION_BOUNDARY_INTERVAL, Type.LONG, None,
                   LambdaValidator(_at_least_zero_or_null, "[0,...]"),
                   importance=Importance.LOW, group=EXACTLY_ONCE_GROUP, order_in_group=4, width=Width.SHORT,
                   display_name="Transaction boundary interval",
                   documentation="If 'transaction.boundary' is set to 'interval', determines the interval for producer "
                   "transaction commits by connector tasks. If unset, defaults to the value of the worker-level "
                   "'offset.flush.interval.ms' property. It has no effect if a different transaction.boundary is "
                   "specified.")
           .define("offsets.storage.topic", Type.STRING, None, importance=Importance.LOW, group="offsets.topic",
                   order_in_group=1, width=Width.LONG, display_name="Offsets topic",
                   documentation="The name of a separate offsets topic to use for this connector. If empty or "
                   "not specified, the worker\u2019s global offsets topic name will be used. If specified, the "
                   "offsets topic will be created if it does not already exist on the Kafka cluster targeted by "
                   "this connector (which may be different from the one used for the worker's global offsets "
                   "topic if the bootstrap.servers property of the connector's producer has been overridden from "
                   "the worker's). Only applicable in distributed mode; in standalone mode, setting this property "
                   "will have no effect."))
    return cd


def _at_least_zero_or_null(name: str, value: Any) -> None:
    if value is not None and value < 0:
        raise ConfigException(name, value, "Value must be at least 0")


def _full_match(regex: str, topic: str) -> bool:
    """Whether a Java ``topics.regex`` matches the whole topic name (False for a pattern that does not compile)."""
    from connect_magics.java_regex import compile_java_regex

    try:
        return compile_java_regex(regex).fullmatch(topic) is not None
    except Exception:  # noqa: BLE001 - the regex's own validation reports it
        return False


def connector_type(desc: PluginDesc | None) -> str:
    return desc.type if desc is not None and desc.type in ("source", "sink") else "unknown"


def _alias_keys(config: Mapping[str, str], kind: str) -> list[str]:
    return [a.strip() for a in config.get(kind, "").split(",") if a.strip()]


def version_key(class_key: str) -> str:
    """The ``*.plugin.version`` key that goes with a plugin class key.

    >>> version_key("connector.class"), version_key("key.converter"), version_key("transforms.a.type")
    ('connector.plugin.version', 'key.converter.plugin.version', 'transforms.a.plugin.version')
    """
    if class_key == CONNECTOR_CLASS:
        return CONNECTOR_VERSION
    base = class_key[: -len(".type")] if class_key.endswith(".type") else class_key
    return f"{base}.{PLUGIN_VERSION_SUFFIX}"


@dataclass
class _Resolution:
    """A plugin class key and its version key resolved against the installed plugins."""

    desc: PluginDesc | None = None
    candidates: list[PluginDesc] = field(default_factory=list)
    class_errors: list[str] = field(default_factory=list)
    version_errors: list[str] = field(default_factory=list)
    version_mismatch: bool = False

    @property
    def versions_newest_first(self) -> list[str]:
        return list(reversed(dict.fromkeys(d.version for d in self.candidates)))


def _parse_range(key: str, spec: str | None, errors: list[str]) -> VersionRange | None:
    try:
        return to_version_range(spec)
    except InvalidVersionSpecificationError as e:
        errors.append(str(ConfigException(key, spec, str(e))))
        return None


def _resolve(plugins: Plugins, class_key: str, class_name: str | None, spec: str | None,
             types: tuple[str, ...], default: VersionRange | None = None) -> _Resolution:
    """Find the plugin a class key and its version key select, collecting errors the Kafka way: a missing
    class is an error of the class key; an installed class with no version in range is one of both keys."""
    res = _Resolution()
    rng = _parse_range(version_key(class_key), spec, res.version_errors) if spec is not None else default
    if not class_name:
        return res
    try:
        res.candidates = plugins.candidates(class_name, types)
        res.desc = plugins.find(class_name, types, rng)
    except VersionedPluginLoadingError as e:
        res.version_mismatch = True
        res.class_errors.append(str(e))
        res.version_errors.append(str(e))
    except PluginNotFoundError as e:
        res.class_errors.append(str(ConfigException(class_key, class_name, str(e))))
    return res


def _version_value(cd: ConfigDef, key: str, group: str, res: _Resolution, config: Mapping[str, str],
                   visible: bool = True, default: str | None = None) -> ConfigValue:
    """Define a ``*.plugin.version`` key (default: the newest installed version) and give its ConfigValue,
    whose recommended values are the installed versions, newest first."""
    versions = res.versions_newest_first
    default = default if default is not None else (versions[0] if versions else None)
    if key in cd:  # predefined (common keys, transformations), or an alias listed twice
        cd.redefine(cd.config_keys()[key], default=default)
    else:
        cd.define(key, Type.STRING, default, importance=Importance.LOW, group=group,
                  documentation="The version of the plugin, as a Maven version range ('1.2' means exactly 1.2); "
                                "the newest installed version if not set.")
    return ConfigValue(key, config.get(key, default), versions if visible else [], list(res.version_errors), visible)


def packaged_version(plugins: Plugins, connector: PluginDesc | None, class_name: str,
                     types: tuple[str, ...]) -> VersionRange | None:
    """The exact version of ``class_name`` shipped in the connector's own installation, if it ships one
    (what a connector's converter defaults to, as in Kafka's ``ConnectorConfig``)."""
    if connector is None or not connector.isolated:
        return None
    try:
        packaged = [d for d in plugins.candidates(class_name, types) if d.location == connector.location]
    except PluginNotFoundError:
        return None
    return to_version_range(f"[{packaged[-1].version}]") if packaged else None


def validate_connector_config(config: Mapping[str, str], plugins: Plugins, worker_override_policy: str = "All",
                              worker_topic_creation: bool = True,
                              worker: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Validate a connector config and answer with Kafka Connect's ConfigInfos (never raises for bad values).

    KIP-891 version keys recommend the installed versions (newest first) and default to the newest; a
    version range no installed plugin matches is an error of both the class key and its version key.
    """
    from connect_magics.runtime.topics.creation import validate_topic_creation

    worker = worker or {}
    class_name = config.get(CONNECTOR_CLASS)
    conn = _resolve(plugins, CONNECTOR_CLASS, class_name, config.get(CONNECTOR_VERSION), ("source", "sink"))
    desc = conn.desc
    ctype = connector_type(desc or (conn.candidates[-1] if conn.candidates else None))
    cd = connector_config_def("sink" if ctype == "sink" else "source", worker)
    values = {cv.name: cv for cv in cd.validate(config)}
    if class_name:
        values[CONNECTOR_CLASS].errors.extend(conn.class_errors)
    values[CONNECTOR_VERSION] = _version_value(cd, CONNECTOR_VERSION, COMMON_GROUP, conn, config, bool(class_name))
    if conn.version_mismatch:  # Kafka's invalidVersionedConnectorValidation: the base definition only
        return config_infos(class_name or "", cd, list(values.values()))
    for key, types in CONVERTER_TYPES.items():
        vkey = version_key(key)
        values[key].recommended_values = plugins.class_names(types)
        if config.get(key):
            res = _resolve(plugins, key, config[key], config.get(vkey), types,
                           packaged_version(plugins, desc, config[key], types))
            values[key].errors.extend(res.class_errors)
            default = res.desc.version if res.desc is not None and vkey not in config else None
            values[vkey] = _version_value(cd, vkey, COMMON_GROUP, res, config, True, default)
        else:  # the worker's converter: the connector's version for it is ignored (but must parse)
            res = _resolve(plugins, key, worker.get(key), worker.get(vkey), types)
            res.class_errors, res.version_errors = [], []
            if config.get(vkey) is not None:
                _parse_range(vkey, config[vkey], res.version_errors)
            default = res.desc.version if res.desc is not None else None
            values[vkey] = _version_value(cd, vkey, COMMON_GROUP, res, config, False, default)
    extra: list[ConfigValue] = []
    for kind, types in (("transforms", ("transformation",)), ("predicates", ("predicate",))):
        for alias in _alias_keys(config, kind):
            prefix = f"{kind}.{alias}."
            type_key, vkey = prefix + "type", prefix + PLUGIN_VERSION_SUFFIX
            type_value = ConfigValue(type_key, config.get(type_key))
            type_value.recommended_values = plugins.class_names(types)  # Kafka's ClassRecommender
            extra.append(type_value)
            if not config.get(type_key):
                type_value.errors.append(f'Missing required configuration "{type_key}" which has no default value.')
                continue
            res = _resolve(plugins, type_key, config[type_key], config.get(vkey), types)
            type_value.errors.extend(res.class_errors)
            if kind == "transforms":
                _define_transformation_keys(cd, alias)
            values[vkey] = _version_value(cd, vkey, f"{kind.capitalize()}: {alias}", res, config)
            if res.desc is None:
                continue
            child = res.desc.cls().config_def()
            if kind == "transforms":
                child = _transformation_def(cd, alias, child)
            # validated under their full names; validators see the key's own name, as in Kafka
            sub = {k: v for k, v in config.items() if k.startswith(prefix) and k != vkey}
            extra.extend(ConfigDef().embed(prefix, "", 0, child).validate(sub))
            if kind == "transforms" and config.get(prefix + "predicate"):
                if config[prefix + "predicate"] not in _alias_keys(config, "predicates"):
                    type_value.errors.append(f"Invalid value {config[prefix + 'predicate']} for configuration "
                                             f"{prefix}predicate: Predicate not found in 'predicates'")
    if ctype == "sink":
        topics, regex = config.get("topics", "").strip(), config.get("topics.regex", "").strip()
        if topics and regex:
            for key in ("topics", "topics.regex"):  # Kafka's SinkConnectorConfig.validate
                values[key].errors.append("topics and topics.regex are mutually exclusive options, but both are set.")
        elif not topics and not regex:
            values["topics"].errors.append('Must configure one of "topics" or "topics.regex"')
        dlq = config.get("errors.deadletterqueue.topic.name", "").strip()
        listed = [t.strip() for t in topics.split(",") if t.strip()]
        _check_topic_names(values, "topics", [t.strip() for t in topics.split(",")] if topics else [])
        _check_topic_names(values, "errors.deadletterqueue.topic.name", [dlq] if dlq else [])
        if dlq and dlq in listed:
            values["errors.deadletterqueue.topic.name"].errors.append(
                f"The DLQ topic '{dlq}' may not be included in the list of topics ('topics=[{', '.join(listed)}]') "
                "consumed by the connector")
        elif dlq and regex and _full_match(regex, dlq):
            values["errors.deadletterqueue.topic.name"].errors.append(
                f"The DLQ topic '{dlq}' may not be included in the regex matching the topics ('topics.regex={regex}') "
                "consumed by the connector")
    elif ctype == "source":
        own_offsets = (config.get("offsets.storage.topic") or "").strip()
        _check_topic_names(values, "offsets.storage.topic", [own_offsets] if own_offsets else [])
        for key, message in validate_topic_creation(config, worker_topic_creation):
            target = values.get(key)
            if target is None:
                target = ConfigValue(key, config.get(key))
                extra.append(target)
            target.errors.append(message)
        if desc is not None:
            validate_exactly_once(desc.cls(), dict(config), values, worker)
    extra.extend(_override_values(config, worker_override_policy))
    if desc is not None:
        connector = desc.cls()
        for cv in connector.validate(dict(config)):
            if cv.name in values:
                values[cv.name].errors.extend(e for e in cv.errors if e not in values[cv.name].errors)
            elif cv.errors or cv.name in connector.config_def().config_keys():
                extra.append(cv)
        cd = cd.merge(connector.config_def())
    all_values = list(values.values()) + extra
    by_name = {cv.name: cv for cv in all_values}
    for key in (k for k, v in config.items() if v is None):  # a JSON null: Kafka's AbstractHerder refuses it
        if key not in by_name:
            by_name[key] = ConfigValue(key)
            all_values.append(by_name[key])
        by_name[key].errors.append("Null value can not be supplied as the configuration value.")
    return config_infos(class_name or "", cd, all_values)  # named as given, as Kafka does


def _check_topic_names(values: dict[str, ConfigValue], key: str, names: list[str]) -> None:
    """An error on ``key`` for the first name that is no legal Kafka topic name (ours: Kafka Connect fails the
    task later, when its client refuses the name)."""
    from connect_magics.runtime.topics.creation import topic_name_error

    for name in names:
        problem = topic_name_error(name)
        if problem is not None:
            values[key].errors.append(str(ConfigException(key, values[key].value if key == "topics" else name,
                                                          problem)))
            return


#: What ``connector.client.config.override.policy=Principal`` lets a connector override (Kafka's policy).
PRINCIPAL_OVERRIDES = frozenset({"sasl.jaas.config", "sasl.mechanism", "security.protocol"})


def _override_values(config: Mapping[str, str], policy: str) -> list[ConfigValue]:
    """ConfigValues with errors for the client overrides the worker's policy forbids (Kafka's messages) and
    for those whose client would refuse them (see :mod:`~connect_magics.runtime.config.client_settings`)."""
    out: list[ConfigValue] = []
    for prefix in OVERRIDE_PREFIXES:
        overrides = {k[len(prefix):]: v for k, v in config.items() if k.startswith(prefix)}
        forbidden = [k for k in overrides
                     if policy == "None" or (policy == "Principal" and k not in PRINCIPAL_OVERRIDES)]
        for setting in forbidden:
            cv = ConfigValue(prefix + setting, overrides[setting])
            cv.errors.append(f"The '{policy}' policy does not allow '{setting}' to be overridden in the connector "
                             "configuration.")
            out.append(cv)
        allowed = {k: v for k, v in overrides.items() if k not in forbidden}
        for setting, reason in client_setting_errors(allowed, prefix.split(".", 1)[0]):
            cv = ConfigValue(prefix + setting, allowed[setting])
            cv.errors.append(str(ConfigException(prefix + setting, allowed[setting], reason)))
            out.append(cv)
    return out


def config_errors(infos: Mapping[str, Any]) -> list[str]:
    """Every error message of a ConfigInfos, in order."""
    return [e for c in infos["configs"] if c["value"] for e in c["value"]["errors"]]


def invalid_config_message(errors: list[str]) -> str:
    """Kafka Connect's answer to an invalid connector config (its endpoint hint is literally
    ``{connectorType}``)."""
    return (f"Connector configuration is invalid and contains the following {len(errors)} error(s):\n"
            + "\n".join(errors)
            + "\nYou can also find the above list of errors at the endpoint "
              "`/connector-plugins/{connectorType}/config/validate`")


# -- building what a task runs ---------------------------------------------------------------


def _sub_config(config: Mapping[str, str], prefix: str) -> dict[str, str]:
    """The ``prefix``-ed keys without the prefix, minus ``plugin.version`` (removed before configuring)."""
    return {k[len(prefix):]: v for k, v in config.items()
            if k.startswith(prefix) and k != prefix + PLUGIN_VERSION_SUFFIX}


def resolve_converter(plugins: Plugins, config: Mapping[str, str], worker: Mapping[str, str], key: str,
                      is_key: bool | None, connector: PluginDesc | None = None) -> tuple[PluginDesc, Any]:
    """The converter named by ``key`` in the connector config, else the worker's, in the version its
    ``{key}.plugin.version`` selects (for a connector's own converter without one: the version shipped
    with the connector, else the newest), configured from the ``{key}.`` prefixed properties of
    whichever config named it. Returns its description and the configured instance.

    A connector's ``{key}.plugin.version`` is ignored when the converter comes from the worker config.
    """
    types = CONVERTER_TYPES[key]
    vkey = version_key(key)
    if config.get(key):
        source, spec = config, config.get(vkey)
        rng = to_version_range(spec) if spec is not None else packaged_version(plugins, connector, config[key], types)
    else:
        source, rng = worker, to_version_range(worker.get(vkey))
    desc = plugins.find(source[key], types, rng)
    conv = desc.cls()
    props = _sub_config(source, key + ".")
    if is_key is None:
        conv.configure(props)
    else:
        conv.configure(props, is_key)
    return desc, conv


def check_worker_converters(worker: Mapping[str, str], plugins: Plugins) -> None:
    """Raise a ConfigException naming the worker's ``key.converter``, ``value.converter`` or
    ``header.converter`` when no installed plugin answers to it, or its ``*.plugin.version`` when that is no
    version range, as Kafka Connect's worker refuses to start. (A range no installed version matches fails
    the tasks that use the converter, as in Kafka Connect.)"""
    for key, types in CONVERTER_TYPES.items():
        vkey = version_key(key)
        try:
            to_version_range(worker.get(vkey))
        except InvalidVersionSpecificationError as e:
            raise ConfigException(vkey, worker.get(vkey), str(e)) from None
        try:
            plugins.candidates(worker[key], types)
        except PluginNotFoundError as e:
            raise ConfigException(key, worker[key], str(e)) from None


def build_converter(plugins: Plugins, config: Mapping[str, str], worker: Mapping[str, str], key: str,
                    is_key: bool | None) -> Any:
    """The configured converter :func:`resolve_converter` selects."""
    return resolve_converter(plugins, config, worker, key, is_key)[1]


@dataclass
class TransformStage:
    alias: str
    transform: Transformation
    predicate: Predicate | None
    negate: bool
    transform_desc: PluginDesc | None = None
    predicate_alias: str | None = None

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        if self.predicate is not None and self.predicate.test(record) == self.negate:
            return record
        return self.transform.apply(record)


class TransformationChain:
    """The configured transformations, each gated by its predicate, applied in order.

    ``predicates`` maps each configured predicate alias to its description and instance.
    """

    def __init__(self, stages: list[TransformStage],
                 predicates: dict[str, tuple[PluginDesc | None, Predicate]] | None = None) -> None:
        self.stages = stages
        self.predicates = predicates if predicates is not None else {
            s.predicate_alias or s.alias: (None, s.predicate) for s in stages if s.predicate is not None}

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        for stage in self.stages:
            record = stage.apply(record)
            if record is None:
                return None
        return record

    def close(self) -> None:
        for stage in self.stages:
            stage.transform.close()
        for _, predicate in self.predicates.values():
            predicate.close()


def build_transformation_chain(plugins: Plugins, config: Mapping[str, str]) -> TransformationChain:
    """The connector's transformations and predicates, each in the version its ``plugin.version`` selects,
    configured from its ``transforms.<alias>.`` / ``predicates.<alias>.`` properties."""
    predicates: dict[str, tuple[PluginDesc, Predicate]] = {}
    for alias in _alias_keys(config, "predicates"):
        prefix = f"predicates.{alias}."
        desc = plugins.find(config[prefix + "type"], ("predicate",), config.get(prefix + PLUGIN_VERSION_SUFFIX))
        p = desc.cls()
        p.configure(_sub_config(config, prefix))
        predicates[alias] = (desc, p)
    stages = []
    for alias in _alias_keys(config, "transforms"):
        prefix = f"transforms.{alias}."
        desc = plugins.find(config[prefix + "type"], ("transformation",), config.get(prefix + PLUGIN_VERSION_SUFFIX))
        t = desc.cls()
        t.configure(_sub_config(config, prefix))
        pred_alias = config.get(prefix + "predicate")
        if pred_alias and pred_alias not in predicates:
            raise ConfigException(prefix + "predicate", pred_alias, "Predicate not found in 'predicates'")
        stages.append(TransformStage(alias, t, predicates[pred_alias][1] if pred_alias else None,
                                     config.get(prefix + "negate", "false").lower() == "true", desc,
                                     pred_alias or None))
    return TransformationChain(stages, dict(predicates))


# -- plugin config definitions (GET /connector-plugins/{p}/config) -----------------------------------

_PLUGIN_TYPES = "sink, source, converter, header_converter, transformation, predicate"


def plugin_config_keys(plugins: Plugins, name: str, version: str | None = None) -> list[dict[str, Any]]:
    """The ConfigKeyInfo list of a plugin's own configuration, in the version ``version`` selects
    (``None`` or ``"latest"``: the newest), as ``GET /connector-plugins/{name}/config?version=`` answers.

    Errors as Kafka Connect's: 404 ``Unknown plugin {name}.``, 400 ``Invalid version specification:
    {version}``, 400 when no installed version matches, 400 for a class that is not a plugin.

    >>> [k["name"] for k in plugin_config_keys(Plugins(), "FileStreamSink")]
    ['file']
    """
    try:
        rng = to_version_range(version)
    except InvalidVersionSpecificationError:
        raise BadRequestError(f"Invalid version specification: {version}") from None
    try:
        desc = plugins.find(name, None, rng)
    except VersionedPluginLoadingError as e:
        raise BadRequestError(str(e)) from None
    except PluginNotFoundError:
        if "." in name and import_class(name) is not None:
            raise BadRequestError(f"Invalid plugin class {name}. Valid types are {_PLUGIN_TYPES}.") from None
        raise NotFoundError(f"Unknown plugin {name}.") from None
    return [config_key_info(k) for k in desc.cls().config_def().config_keys().values()]


#: Kafka client settings of type PASSWORD (as ``producer.override.*`` and the like in a connector config).
CLIENT_PASSWORD_KEYS = frozenset({
    "ssl.key.password", "ssl.keystore.password", "ssl.truststore.password", "ssl.keystore.key",
    "ssl.keystore.certificate.chain", "ssl.truststore.certificates", "sasl.jaas.config", "sasl.password",
    "sasl.oauthbearer.client.credentials.client.secret", "sasl.oauthbearer.assertion.private.key.passphrase"})


def password_keys(plugins: Plugins, config: Mapping[str, str]) -> set[str]:
    """The keys of ``config`` whose definition is of type PASSWORD: the connector's, its transformations'
    and predicates', and client overrides of password settings (what REST answers mask).

    >>> sorted(password_keys(Plugins(), {"connector.class": "FileStreamSink",
    ...                                  "consumer.override.ssl.key.password": "x", "file": "/tmp/o"}))
    ['consumer.override.ssl.key.password']
    """
    defs: list[tuple[str, ConfigDef]] = []
    try:
        defs.append(("", plugins.find(config.get(CONNECTOR_CLASS, ""), ("source", "sink"),
                                       config.get(CONNECTOR_VERSION)).cls().config_def()))
    except (PluginNotFoundError, InvalidVersionSpecificationError):
        pass
    for kind, types in (("transforms", ("transformation",)), ("predicates", ("predicate",))):
        for alias in _alias_keys(config, kind):
            prefix = f"{kind}.{alias}."
            try:
                defs.append((prefix, plugins.find(config.get(prefix + "type", ""), types).cls().config_def()))
            except (PluginNotFoundError, InvalidVersionSpecificationError):
                continue
    keys = {prefix + name for prefix, cd in defs for name, key in cd.config_keys().items()
            if key.type is Type.PASSWORD}
    keys |= {k for k in config if k.startswith(OVERRIDE_PREFIXES) and k.split(".", 2)[2] in CLIENT_PASSWORD_KEYS}
    return keys & set(config)


def client_overrides(config: Mapping[str, str], kind: str, policy: str) -> dict[str, str]:
    """The connector's ``{kind}.override.*`` client settings allowed by the worker's override policy."""
    prefix = f"{kind}.override."
    overrides = {k[len(prefix):]: v for k, v in config.items() if k.startswith(prefix)}
    if policy == "None" and overrides:
        raise ConfigException(prefix + next(iter(overrides)), None, "The 'None' policy does not allow overrides")
    if policy == "Principal":
        bad = [k for k in overrides if k not in PRINCIPAL_OVERRIDES]
        if bad:
            raise ConfigException(prefix + bad[0], overrides[bad[0]],
                                  "The 'Principal' policy does not allow it to be overridden")
    try:
        return librdkafka_client_settings(overrides)  # sasl.jaas.config and Java stores as librdkafka takes them
    except ConfigException as e:
        raise ConfigException(prefix + e.name, e.value, e.reason) from None


__all__ = ["CONNECTOR_VERSION", "Converter", "HeaderConverter", "TransformationChain", "build_converter",
           "build_transformation_chain", "client_overrides", "connector_config_def", "plugin_config_keys",
           "resolve_converter", "validate_connector_config", "version_key"]
