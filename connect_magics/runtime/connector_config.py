"""Connector configuration: the common definition, its enrichment with transformations and
predicates, validation into Kafka Connect's ConfigInfos, and building a task's converters and chain.

>>> cd = connector_config_def("source")
>>> "tasks.max" in cd.config_keys()
True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from connect_magics.api.config import (
    ConfigDef,
    ConfigException,
    ConfigValue,
    Importance,
    Range,
    Type,
    ValidString,
    config_infos,
)
from connect_magics.api.converters import Converter, HeaderConverter
from connect_magics.api.predicates import Predicate
from connect_magics.api.records import ConnectRecord
from connect_magics.api.transforms import Transformation
from connect_magics.runtime.plugins import PluginDesc, PluginNotFoundError, Plugins

CONNECTOR_CLASS = "connector.class"
OVERRIDE_PREFIXES = ("producer.override.", "consumer.override.", "admin.override.")
COMMON_GROUP, TRANSFORMS_GROUP, PREDICATES_GROUP = "Common", "Transforms", "Predicates"


def connector_config_def(connector_type: str) -> ConfigDef:
    """The keys every connector config has (Kafka's ``ConnectorConfig``, plus ``SinkConnectorConfig``'s topics)."""
    cd = (ConfigDef()
          .define("name", Type.STRING, importance=Importance.HIGH, group=COMMON_GROUP, order_in_group=1,
                  documentation="Globally unique name to use for this connector.")
          .define(CONNECTOR_CLASS, Type.STRING, importance=Importance.HIGH, group=COMMON_GROUP, order_in_group=2,
                  documentation="Name or alias of the class for this connector.")
          .define("tasks.max", Type.INT, 1, Range.at_least(1), Importance.HIGH, group=COMMON_GROUP,
                  order_in_group=3, documentation="Maximum number of tasks to use for this connector.")
          .define("key.converter", Type.CLASS, None, importance=Importance.LOW, group=COMMON_GROUP,
                  documentation="Converter class used for record keys; the worker's if not set.")
          .define("value.converter", Type.CLASS, None, importance=Importance.LOW, group=COMMON_GROUP,
                  documentation="Converter class used for record values; the worker's if not set.")
          .define("header.converter", Type.CLASS, None, importance=Importance.LOW, group=COMMON_GROUP,
                  documentation="HeaderConverter class used for record headers; the worker's if not set.")
          .define("transforms", Type.LIST, "", importance=Importance.LOW, group=TRANSFORMS_GROUP,
                  documentation="Aliases for the transformations to be applied to records.")
          .define("predicates", Type.LIST, "", importance=Importance.LOW, group=PREDICATES_GROUP,
                  documentation="Aliases for the predicates used by transformations.")
          .define("errors.tolerance", Type.STRING, "none", ValidString.in_("none", "all"), Importance.MEDIUM,
                  documentation="'none' fails the task on a record error; 'all' skips problematic records."))
    if connector_type == "sink":
        cd = (cd.define("topics", Type.LIST, "", importance=Importance.HIGH, group=COMMON_GROUP, order_in_group=4,
                        documentation="List of topics to consume, separated by commas.")
                .define("topics.regex", Type.STRING, "", importance=Importance.HIGH, group=COMMON_GROUP,
                        order_in_group=4, documentation="Regular expression giving topics to consume."))
    else:
        cd = (cd.define("topic.creation.groups", Type.LIST, "", importance=Importance.LOW,
                        group="Topic Creation", documentation="Groups of configurations for topics created by "
                        "source connectors.")
                .define("offsets.storage.topic", Type.STRING, None, importance=Importance.LOW,
                        documentation="The name of a separate offsets topic to use for this connector."))
    return cd


def connector_type(desc: PluginDesc | None) -> str:
    return desc.type if desc is not None and desc.type in ("source", "sink") else "unknown"


def _alias_keys(config: Mapping[str, str], kind: str) -> list[str]:
    return [a.strip() for a in config.get(kind, "").split(",") if a.strip()]


def validate_connector_config(config: Mapping[str, str], plugins: Plugins, worker_override_policy: str = "All",
                              worker_topic_creation: bool = True) -> dict[str, Any]:
    """Validate a connector config and answer with Kafka Connect's ConfigInfos (never raises for bad values)."""
    from connect_magics.runtime.topic_creation import validate_topic_creation

    class_name = config.get(CONNECTOR_CLASS)
    desc = None
    if class_name:
        try:
            desc = plugins.find(class_name, ("source", "sink"))
        except PluginNotFoundError:
            desc = None
    ctype = connector_type(desc)
    cd = connector_config_def("sink" if ctype == "sink" else "source")
    values = {cv.name: cv for cv in cd.validate(config)}
    if class_name and desc is None:
        values[CONNECTOR_CLASS].errors.append(
            f"Invalid value {class_name} for configuration {CONNECTOR_CLASS}: Class {class_name} could not be found.")
    extra: list[ConfigValue] = []
    for kind, types in (("transforms", ("transformation",)), ("predicates", ("predicate",))):
        for alias in _alias_keys(config, kind):
            prefix = f"{kind}.{alias}."
            type_key = prefix + "type"
            type_value = ConfigValue(type_key, config.get(type_key))
            extra.append(type_value)
            if not config.get(type_key):
                type_value.errors.append(f'Missing required configuration "{type_key}" which has no default value.')
                continue
            try:
                plugin = plugins.find(config[type_key], types)
            except PluginNotFoundError:
                type_value.errors.append(f"Invalid value {config[type_key]} for configuration {type_key}: "
                                         f"Class {config[type_key]} could not be found.")
                continue
            sub = {k[len(prefix):]: v for k, v in config.items() if k.startswith(prefix)}
            for cv in plugin.cls().config_def().validate(sub):
                cv.name = prefix + cv.name
                extra.append(cv)
            if kind == "transforms" and config.get(prefix + "predicate"):
                if config[prefix + "predicate"] not in _alias_keys(config, "predicates"):
                    type_value.errors.append(f"Invalid value {config[prefix + 'predicate']} for configuration "
                                             f"{prefix}predicate: Predicate not found in 'predicates'")
    if ctype == "sink":
        topics, regex = config.get("topics", "").strip(), config.get("topics.regex", "").strip()
        if topics and regex:
            values["topics"].errors.append('Must configure one of "topics" or "topics.regex", not both')
        elif not topics and not regex:
            values["topics"].errors.append('Must configure one of "topics" or "topics.regex"')
    elif ctype == "source":
        for key, message in validate_topic_creation(config, worker_topic_creation):
            target = values.get(key)
            if target is None:
                target = ConfigValue(key, config.get(key))
                extra.append(target)
            target.errors.append(message)
    for key in config:
        if key.startswith(OVERRIDE_PREFIXES) and worker_override_policy == "None":
            cv = ConfigValue(key, config[key])
            cv.errors.append(f"The '{worker_override_policy}' policy does not allow '{key.split('.', 2)[2]}' to be "
                             "overridden in the connector configuration.")
            extra.append(cv)
    if desc is not None:
        connector = desc.cls()
        for cv in connector.validate(dict(config)):
            if cv.name in values:
                values[cv.name].errors.extend(e for e in cv.errors if e not in values[cv.name].errors)
            elif cv.errors or cv.name in connector.config_def().config_keys():
                extra.append(cv)
        cd = cd.merge(connector.config_def())
    all_values = list(values.values()) + extra
    return config_infos(desc.class_name if desc else (class_name or ""), cd, all_values)


def config_errors(infos: Mapping[str, Any]) -> list[str]:
    """Every error message of a ConfigInfos, in order."""
    return [e for c in infos["configs"] if c["value"] for e in c["value"]["errors"]]


def invalid_config_message(infos: Mapping[str, Any], plugin: str) -> str:
    errors = config_errors(infos)
    return (f"Connector configuration is invalid and contains the following {infos['error_count']} error(s):\n"
            + "\n".join(errors)
            + f"\nYou can also find the above list of errors at the endpoint `/connector-plugins/{plugin}/config/validate`")


# -- building what a task runs ---------------------------------------------------------------


def build_converter(plugins: Plugins, config: Mapping[str, str], worker: Mapping[str, str], key: str,
                    is_key: bool | None) -> Any:
    """The converter named by ``key`` in the connector config, else the worker's, configured from the
    ``{key}.`` prefixed properties of whichever config named it."""
    source = config if config.get(key) else worker
    desc = plugins.find(source[key], ("header_converter",) if is_key is None else ("converter",))
    prefix = key + "."
    props = {k[len(prefix):]: v for k, v in source.items() if k.startswith(prefix) and k != key + ".plugin.version"}
    conv = desc.cls()
    if is_key is None:
        conv.configure(props)
    else:
        conv.configure(props, is_key)
    return conv


@dataclass
class TransformStage:
    alias: str
    transform: Transformation
    predicate: Predicate | None
    negate: bool

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        if self.predicate is not None and self.predicate.test(record) == self.negate:
            return record
        return self.transform.apply(record)


class TransformationChain:
    """The configured transformations, each gated by its predicate, applied in order."""

    def __init__(self, stages: list[TransformStage]) -> None:
        self.stages = stages

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        for stage in self.stages:
            record = stage.apply(record)
            if record is None:
                return None
        return record

    def close(self) -> None:
        for stage in self.stages:
            stage.transform.close()
            if stage.predicate is not None:
                stage.predicate.close()


def build_transformation_chain(plugins: Plugins, config: Mapping[str, str]) -> TransformationChain:
    predicates: dict[str, Predicate] = {}
    for alias in _alias_keys(config, "predicates"):
        prefix = f"predicates.{alias}."
        p = plugins.find(config[prefix + "type"], ("predicate",)).cls()
        p.configure({k[len(prefix):]: v for k, v in config.items() if k.startswith(prefix)})
        predicates[alias] = p
    stages = []
    for alias in _alias_keys(config, "transforms"):
        prefix = f"transforms.{alias}."
        t = plugins.find(config[prefix + "type"], ("transformation",)).cls()
        t.configure({k[len(prefix):]: v for k, v in config.items() if k.startswith(prefix)})
        pred_alias = config.get(prefix + "predicate")
        if pred_alias and pred_alias not in predicates:
            raise ConfigException(prefix + "predicate", pred_alias, "Predicate not found in 'predicates'")
        stages.append(TransformStage(alias, t, predicates.get(pred_alias) if pred_alias else None,
                                     config.get(prefix + "negate", "false").lower() == "true"))
    return TransformationChain(stages)


def client_overrides(config: Mapping[str, str], kind: str, policy: str) -> dict[str, str]:
    """The connector's ``{kind}.override.*`` client settings allowed by the worker's override policy."""
    prefix = f"{kind}.override."
    overrides = {k[len(prefix):]: v for k, v in config.items() if k.startswith(prefix)}
    if policy == "None" and overrides:
        raise ConfigException(prefix + next(iter(overrides)), None, "The 'None' policy does not allow overrides")
    if policy == "Principal":
        allowed = {"sasl.jaas.config", "sasl.mechanism", "security.protocol"}
        bad = [k for k in overrides if k not in allowed]
        if bad:
            raise ConfigException(prefix + bad[0], overrides[bad[0]],
                                  "The 'Principal' policy does not allow it to be overridden")
    return overrides


__all__ = ["Converter", "HeaderConverter", "TransformationChain", "build_converter", "build_transformation_chain",
           "client_overrides", "connector_config_def", "validate_connector_config"]
