"""Plugin discovery and lookup: connectors, converters, header converters, transformations, predicates.

A plugin is found by its full class name (a Python path such as
``connect_magics.connectors.file.FileStreamSourceConnector``, or the Kafka Java name it mirrors,
such as ``org.apache.kafka.connect.file.FileStreamSourceConnector``) or by an alias: the simple
class name, and for connectors also that name without its ``Connector`` suffix, as in Kafka Connect.

>>> Plugins().find("FileStreamSource").type
'source'
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterable
from dataclasses import dataclass, field

from connect_magics.api.connector import SinkConnector, SourceConnector
from connect_magics.api.converters import (
    ByteArrayConverter,
    Converter,
    HeaderConverter,
    JsonConverter,
    SimpleHeaderConverter,
    StringConverter,
)
from connect_magics.api.predicates import BUILTIN_PREDICATES, Predicate
from connect_magics.api.transforms import BUILTIN_TRANSFORMS, Transformation

#: The order of plugin types in listings (Kafka's ``ConnectorPluginsResource``).
TYPE_ORDER = ("sink", "source", "transformation", "predicate", "converter", "header_converter")

_JAVA_CONVERTERS = {
    JsonConverter: "org.apache.kafka.connect.json.JsonConverter",
    StringConverter: "org.apache.kafka.connect.storage.StringConverter",
    ByteArrayConverter: "org.apache.kafka.connect.converters.ByteArrayConverter",
    SimpleHeaderConverter: "org.apache.kafka.connect.storage.SimpleHeaderConverter",
}


class PluginNotFoundError(LookupError):
    """No installed plugin has this class name or alias."""


def plugin_types(cls: type) -> list[str]:
    """The plugin types a class implements (a converter can also be a header converter)."""
    types = []
    if issubclass(cls, SinkConnector):
        types.append("sink")
    elif issubclass(cls, SourceConnector):
        types.append("source")
    if issubclass(cls, Transformation):
        types.append("transformation")
    if issubclass(cls, Predicate):
        types.append("predicate")
    if issubclass(cls, Converter):
        types.append("converter")
    if issubclass(cls, HeaderConverter):
        types.append("header_converter")
    return types


def python_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def plugin_version(cls: type) -> str:
    try:
        return str(cls().version())
    except Exception:  # noqa: BLE001 - a plugin that cannot say
        return "undefined"


@dataclass(frozen=True)
class PluginDesc:
    """One installed plugin: its class, the class name it is listed under, type, version, location."""

    cls: type
    class_name: str
    type: str
    version: str
    location: str = "classpath"
    aliases: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, str]:
        return {"class": self.class_name, "type": self.type, "version": self.version}


class Plugins:
    """The registry of installed plugins: built-ins plus any registered later."""

    def __init__(self, extra: Iterable[type] = ()) -> None:
        self._plugins: list[PluginDesc] = []
        self._index: dict[str, list[PluginDesc]] = {}
        for cls, names in _builtin_classes():
            self.register(cls, names)
        for cls in extra:
            self.register(cls)

    def register(self, cls: type, names: Iterable[str] = (), location: str = "classpath") -> list[PluginDesc]:
        """Add a plugin class; ``names`` are further full class names it answers to (e.g. Kafka's)."""
        names = [*names, *getattr(cls, "ALIASES", ())]
        class_name = next((n for n in names if "." in n), python_name(cls))
        version = plugin_version(cls)
        added = []
        for type_ in plugin_types(cls):
            simple = cls.__name__
            aliases = {class_name, python_name(cls), simple, *names}
            if type_ in ("sink", "source") and simple.endswith("Connector"):
                aliases.add(simple[: -len("Connector")])
            desc = PluginDesc(cls, class_name, type_, version, location, tuple(sorted(aliases)))
            self._plugins.append(desc)
            for alias in aliases:
                self._index.setdefault(alias, []).append(desc)
            added.append(desc)
        return added

    def find(self, name: str, types: Iterable[str] | None = None) -> PluginDesc:
        """The plugin with this class name or alias (of one of ``types``); import it if it is a Python path."""
        wanted = set(types) if types else None
        found = [d for d in self._index.get(name, []) if wanted is None or d.type in wanted]
        if not found and "." in name:
            cls = _import_class(name)
            if cls is not None and plugin_types(cls):
                self.register(cls)
                found = [d for d in self._index.get(name, []) if wanted is None or d.type in wanted]
        if not found:
            raise PluginNotFoundError(f"Class {name} could not be found.")
        return found[-1]

    def listing(self, connectors_only: bool = True) -> list[dict[str, str]]:
        """Plugins as ``GET /connector-plugins`` lists them: by type, then class name, then version."""
        seen, out = set(), []
        for type_ in TYPE_ORDER:
            if connectors_only and type_ not in ("sink", "source"):
                continue
            for d in sorted((d for d in self._plugins if d.type == type_), key=lambda d: d.class_name):
                key = (d.class_name, d.type, d.version)
                if key not in seen:
                    seen.add(key)
                    out.append(d.to_json())
        return out


def _import_class(path: str) -> type | None:
    module, _, name = path.rpartition(".")
    try:
        obj = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError, ValueError):
        return None
    return obj if inspect.isclass(obj) else None


def _builtin_classes() -> list[tuple[type, list[str]]]:
    from connect_magics import connectors

    classes: list[tuple[type, list[str]]] = []
    for obj in vars(connectors).values():
        if inspect.isclass(obj) and issubclass(obj, (SourceConnector, SinkConnector)) \
                and obj not in (SourceConnector, SinkConnector):
            classes.append((obj, []))
    for cls, java in _JAVA_CONVERTERS.items():
        classes.append((cls, [java]))
    by_class: dict[type, list[str]] = {}
    for java, cls in [*BUILTIN_TRANSFORMS.items(), *BUILTIN_PREDICATES.items()]:
        by_class.setdefault(cls, []).append(java)
    classes.extend(by_class.items())
    return classes
