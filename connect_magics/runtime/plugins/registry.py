"""Plugin discovery and lookup: connectors, converters, header converters, transformations, predicates,
in as many versions as are installed (KIP-891).

Plugins come from three places, as in Kafka Connect:

* the built-ins (``connect_magics.connectors``, the converters, transformations and predicates);
* installed distributions declaring entry points in the group ``connect_magics.plugins`` (an entry
  point names a class, ``pkg.mod:Class``, or a module whose plugin classes are all taken);
* the worker's ``plugin.path``: each subdirectory, wheel or zip of a listed directory is one
  installation, imported in isolation (see :mod:`connect_magics.runtime.plugins.loader`), so two
  versions of one plugin with the same module names are both available.

A plugin is found by its class name (a Python path such as ``mypkg.source.MySourceConnector``, or
the Kafka Java name it mirrors, such as ``org.apache.kafka.connect.file.FileStreamSourceConnector``)
or by an alias: the simple class name, and for connectors also that name without ``Connector``.
A version range (:func:`~connect_magics.runtime.plugins.versions.connector_version_requirement`) picks the
newest installed version inside it.

>>> Plugins().find("FileStreamSource").type
'source'
>>> Plugins().find("FileStreamSource", version_range="[0.0.1,)").type
'source'
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import inspect
import logging
import os
import sys
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from packaging.utils import canonicalize_name

from connect_magics.api import errors
from connect_magics.api.connector import SinkConnector, SourceConnector
from connect_magics.api.converters import (
    ByteArrayConverter,
    Converter,
    HeaderConverter,
    JsonConverter,
    SimpleHeaderConverter,
    StringConverter,
)
from connect_magics.api.predicates import Predicate
from connect_magics.api.transforms import Transformation
from connect_magics.runtime.plugins.loader import (
    ARCHIVE_SUFFIXES,
    Installation,
    installation_of,
    public_module_name,
)
from connect_magics.runtime.plugins.versions import (
    ComparableVersion,
    VersionRange,
    connector_version_requirement,
)
from connect_magics.transforms import BUILTIN_TRANSFORMS
from connect_magics.transforms.predicates import BUILTIN_PREDICATES

log = logging.getLogger(__name__)

#: The order of plugin types in listings (Kafka's ``ConnectorPluginsResource``).
TYPE_ORDER = ("sink", "source", "transformation", "predicate", "converter", "header_converter")
#: Kafka's ``PluginType`` enum order, the last tie-breaker of ``PluginDesc.compareTo``.
_PLUGIN_TYPE_ENUM = ("source", "sink", "converter", "header_converter", "transformation", "predicate")
#: The entry point group installed distributions declare their plugins in.
ENTRY_POINT_GROUP = "connect_magics.plugins"
#: Kafka's ``PluginDesc.UNDEFINED_VERSION``: a plugin that cannot say its version.
UNDEFINED_VERSION = "undefined"
#: The suffix of every version config (``WorkerConfig.PLUGIN_VERSION_SUFFIX``).
PLUGIN_VERSION_SUFFIX = "plugin.version"

_JAVA_CONVERTERS = {
    JsonConverter: "org.apache.kafka.connect.json.JsonConverter",
    StringConverter: "org.apache.kafka.connect.storage.StringConverter",
    ByteArrayConverter: "org.apache.kafka.connect.converters.ByteArrayConverter",
    SimpleHeaderConverter: "org.apache.kafka.connect.storage.SimpleHeaderConverter",
}


class PluginNotFoundError(LookupError):
    """No installed plugin has this class name or alias."""


class VersionedPluginLoadingError(PluginNotFoundError):
    """The plugin is installed, but in no version inside the requested range (Kafka's
    ``VersionedPluginLoadingException``); ``available_versions`` lists the installed ones, ascending."""

    def __init__(self, message: str, available_versions: list[str]) -> None:
        super().__init__(message)
        self.available_versions = available_versions


def kafka_class_name(cls: type) -> str:
    """The name Kafka Connect gives the same class: the Java name of a built-in converter, transformation,
    predicate or ``connect_magics.api.errors`` exception, else the Python name (for DLQ headers and logs).

    >>> kafka_class_name(JsonConverter), kafka_class_name(ValueError)
    ('org.apache.kafka.connect.json.JsonConverter', 'builtins.ValueError')
    """
    if cls in _JAVA_CONVERTERS:
        return _JAVA_CONVERTERS[cls]
    declared = next((name for name in vars(cls).get("ALIASES", ()) if "." in name), None)
    if declared is not None:  # a built-in connector or task that mirrors a Kafka class
        return declared
    java = next((name for name, c in [*BUILTIN_TRANSFORMS.items(), *BUILTIN_PREDICATES.items()]
                 if c is cls and "." in name), None)
    if java is not None:
        return java
    if cls.__module__ == errors.__name__:
        return f"org.apache.kafka.connect.errors.{cls.__qualname__}"
    return python_name(cls)


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
    """A class's full Python name as its installation calls it (without the isolation prefix)."""
    return f"{public_module_name(cls.__module__)}.{cls.__qualname__}"


def plugin_version(cls: type) -> str:
    """What ``cls().version()`` says, or ``"undefined"``."""
    try:
        return str(cls().version())
    except Exception:  # noqa: BLE001 - a plugin that cannot say
        return UNDEFINED_VERSION


def declares_version(cls: type) -> bool:
    """True if the class (not just connect_magics' API base class) implements ``version()``."""
    owner = next((k for k in cls.__mro__ if "version" in vars(k)), None)
    return owner is not None and not owner.__module__.startswith("connect_magics.api")


@functools.lru_cache(maxsize=1024)
def _comparable(version: str) -> ComparableVersion:
    return ComparableVersion(version)


@dataclass(frozen=True)
class PluginDesc:
    """One installed plugin version: class, the class name it is listed under, type, version, location.

    Sorted as Kafka's ``PluginDesc.compareTo``: class name, Maven version order, classpath before
    isolated, location, type.
    """

    cls: type
    class_name: str
    type: str
    version: str
    location: str = "classpath"
    aliases: tuple[str, ...] = field(default=())
    isolated: bool = False

    def to_json(self) -> dict[str, str]:
        """``{"class", "type", "version"}``; ``version`` is left out when undefined, as Kafka does."""
        out = {"class": self.class_name, "type": self.type}
        if self.version != UNDEFINED_VERSION:
            out["version"] = self.version
        return out

    def sort_key(self) -> tuple:
        return (self.class_name, _comparable(self.version), self.isolated, self.location,
                _PLUGIN_TYPE_ENUM.index(self.type))

    def __lt__(self, other: PluginDesc) -> bool:
        return self.sort_key() < other.sort_key()


def to_version_range(spec: str | VersionRange | None) -> VersionRange | None:
    """A configured version (``None``, ``"latest"``, a bare version or a Maven range) as a range.

    Raises :class:`~connect_magics.runtime.plugins.versions.InvalidVersionSpecificationError` with Maven's message.

    >>> str(to_version_range("1.2")), to_version_range("latest")
    ('[1.2,1.2]', None)
    """
    if spec is None or isinstance(spec, VersionRange):
        return spec
    return connector_version_requirement(spec)


def entry_point_plugins() -> list[tuple[type, str | None]]:
    """The plugin classes that installed distributions declare under the ``connect_magics.plugins`` entry
    point group, each with the version to register it under (the distribution's, unless the class declares
    its own). An entry point that cannot be loaded is logged and skipped.
    """
    # Not the jars on sys.path: a SparkSession's spark.jars.packages put theirs there, seconds to scan.
    path = [entry for entry in sys.path if not entry.endswith(".jar")]
    # Reading every distribution's metadata takes about 0.2-0.4 s, for each runtime (each Plugins) of a process:
    # the last answer is kept for as long as the path and its directories' modification times are the same
    # (installing or removing a distribution adds or removes an entry in its directory, which changes its time).
    key = tuple((os.path.abspath(entry or "."), _mtime_ns(entry)) for entry in path)
    with _ENTRY_POINTS_LOCK:
        if _ENTRY_POINTS_CACHE and _ENTRY_POINTS_CACHE[0][0] == key:
            return list(_ENTRY_POINTS_CACHE[0][1])
    found, seen = [], set()
    for dist in importlib.metadata.distributions(path=path):
        name = canonicalize_name(dist.name or "")
        if name in seen:  # the first on the path wins, as in importlib.metadata.entry_points()
            continue
        seen.add(name)
        found += _plugins_of(dist.entry_points.select(group=ENTRY_POINT_GROUP))
    with _ENTRY_POINTS_LOCK:
        _ENTRY_POINTS_CACHE[:] = [(key, tuple(found))]
    return found


_ENTRY_POINTS_LOCK = threading.Lock()
_ENTRY_POINTS_CACHE: list[tuple[tuple[tuple[str, int | None], ...], tuple[tuple[type, str | None], ...]]] = []
"""The last discovery: ``(path key, plugins)``."""


def _mtime_ns(entry: str) -> int | None:
    try:
        return os.stat(entry or ".").st_mtime_ns
    except OSError:
        return None


def _plugins_of(entry_points: Iterable[importlib.metadata.EntryPoint]) -> list[tuple[type, str | None]]:
    """The plugin classes of these entry points, with their versions (see :func:`entry_point_plugins`)."""
    found = []
    for ep in entry_points:
        try:
            obj = ep.load()
        except Exception:  # noqa: BLE001
            log.warning("Entry point %s of %s cannot be loaded; skipping it", ep.value,
                        ep.dist.name if ep.dist else "?", exc_info=True)
            continue
        dist_version = ep.dist.version if ep.dist is not None else None
        found += [(cls, None if declares_version(cls) or dist_version is None else dist_version)
                  for cls in _plugin_classes(obj)]
    return found


class Plugins:
    """The registry of installed plugins: built-ins, entry points, ``plugin.path`` installations, and
    any registered later.

    >>> plugins = Plugins(plugin_path="/opt/connect/plugins")                   # doctest: +SKIP
    >>> plugins.find("VersionedSource", ("source",), "[1.0,2.0)").version         # doctest: +SKIP
    '1.1.0'
    """

    @classmethod
    def listed(cls, entries: Iterable[Mapping[str, str]]) -> Plugins:
        """A registry of what a Kafka Connect REST API lists (``GET /connector-plugins?connectorsOnly=false``:
        ``{"class", "type", "version"}`` entries): their versions can be looked up (:meth:`find`,
        :meth:`versions`), and no class can be loaded.

        >>> Plugins.listed([{"class": "a.FooConnector", "type": "sink", "version": "1.0"}]).find("Foo").version
        '1.0'
        """
        plugins = cls(entry_points=False, builtins=False)
        with plugins._lock:
            for entry in entries:
                class_name, type_ = entry["class"], entry["type"]
                simple = class_name.rsplit(".", 1)[-1]
                aliases = {class_name, simple}
                if type_ in ("sink", "source") and simple.endswith("Connector"):
                    aliases.add(simple[: -len("Connector")])
                desc = PluginDesc(object, class_name, type_, entry.get("version", UNDEFINED_VERSION), "remote",
                                  tuple(sorted(aliases)))
                plugins._plugins.append(desc)
                for alias in aliases:
                    plugins._index.setdefault(alias, []).append(desc)
        return plugins

    def __init__(self, extra: Iterable[type] = (), plugin_path: str | Iterable[str] | None = None,
                 entry_points: bool | Iterable[tuple[type, str | None]] = True, builtins: bool = True) -> None:
        """``entry_points``: True discovers the installed distributions' plugins now, False skips them, and
        a result of :func:`entry_point_plugins` uses what was discovered before."""
        self._plugins: list[PluginDesc] = []
        self._index: dict[str, list[PluginDesc]] = {}
        self._lock = threading.RLock()
        self.installations: list[Installation] = []
        #: ``register()`` calls made after construction, to be repeated where tasks run in other processes.
        self.registrations: list[tuple[type, tuple[str, ...], str, str | None, bool]] = []
        self._constructed = False
        for cls, names in _builtin_classes() if builtins else ():
            self.register(cls, names)
        for cls, version in entry_point_plugins() if entry_points is True else entry_points or ():
            self.register(cls, version=version)
        for directory in _path_entries(plugin_path):
            self.add_plugin_path(directory)
        self._constructed = True
        for cls in extra:
            self.register(cls)

    # -- discovery ----------------------------------------------------------------------------------
    def register(self, cls: type, names: Iterable[str] = (), location: str = "classpath",
                 version: str | None = None, isolated: bool = False) -> list[PluginDesc]:
        """Add a plugin class; ``names`` are further full class names it answers to (e.g. Kafka's).

        ``version`` defaults to what ``cls().version()`` says.
        """
        if self._constructed and location == "classpath":
            self.registrations.append((cls, tuple(names), location, version, isolated))
        names = [*names, *getattr(cls, "ALIASES", ())]
        public = python_name(cls)
        class_name = next((n for n in names if "." in n), public)
        version = version if version is not None else plugin_version(cls)
        added = []
        with self._lock:
            for type_ in plugin_types(cls):
                if any(d.cls is cls and d.type == type_ for d in self._index.get(class_name, ())):
                    continue
                simple = cls.__name__
                # Kafka's nested-class names answer to their short form too (ReplaceField$Value).
                aliases = {class_name, public, simple, *names, *(n.rsplit(".", 1)[-1] for n in names)}
                if type_ in ("sink", "source") and simple.endswith("Connector"):
                    aliases.add(simple[: -len("Connector")])
                desc = PluginDesc(cls, class_name, type_, version, location, tuple(sorted(aliases)), isolated)
                self._plugins.append(desc)
                for alias in aliases:
                    self._index.setdefault(alias, []).append(desc)
                added.append(desc)
        return added

    def add_plugin_path(self, directory: str | Path) -> list[PluginDesc]:
        """Install every plugin of one ``plugin.path`` directory: each subdirectory, wheel or zip in it is
        one installation. A missing directory is logged and ignored, as Kafka Connect does."""
        path = Path(directory)
        if not path.is_dir():
            log.error("Could not get listing for plugin path: %s (in plugin.path). Ignoring.", directory)
            return []
        added = []
        for child in sorted(path.iterdir()):
            if child.name.startswith((".", "__")):
                continue
            if child.is_dir() or (child.is_file() and child.suffix in ARCHIVE_SUFFIXES):
                added += self.add_installation(child)
        return added

    def add_installation(self, location: str | Path) -> list[PluginDesc]:
        """Load one plugin installation in isolation and register the plugins it ships.

        Plugins are the ``connect_magics.plugins`` entry points of the ``*.dist-info`` it contains; without
        any, every module it ships is imported and scanned for plugin classes.
        """
        inst = Installation(location)
        self.installations.append(inst)
        entry_points = [ep for dist in inst.distributions for ep in dist.entry_points
                        if ep.group == ENTRY_POINT_GROUP]
        classes: list[type] = []
        if entry_points:
            for ep in entry_points:
                try:
                    obj = inst.load_class(ep.value) if ":" in ep.value else inst.import_module(ep.value)
                except Exception:  # noqa: BLE001 - one broken plugin must not hide the others
                    log.warning("Plugin installation %s: entry point %s cannot be loaded; skipping it",
                                inst.location, ep.value, exc_info=True)
                    continue
                classes += _plugin_classes(obj)
        else:
            for module in inst.walk_modules():
                classes += _plugin_classes(module)
        added = []
        for cls in classes:
            added += self.register(cls, location=str(inst.location), version=_isolated_version(cls, inst),
                                   isolated=True)
        if not added:
            log.warning("Plugin installation %s contains no plugins", inst.location)
        return added

    # -- lookup ----------------------------------------------------------------------------------------
    def candidates(self, name: str, types: Iterable[str] | None = None) -> list[PluginDesc]:
        """Every installed version of the plugin with this class name or alias, ascending; a Python path
        not yet known is imported from the environment. Raises :class:`PluginNotFoundError`."""
        wanted = set(types) if types else None
        found = self._matching(name, wanted)
        if not found and "." in name:
            cls = import_class(name)
            if cls is not None and plugin_types(cls):
                self.register(cls)
                found = self._matching(name, wanted)
        if not found:
            raise PluginNotFoundError(f"Class {name} could not be found.")
        return sorted(found)

    def _matching(self, name: str, wanted: set[str] | None) -> list[PluginDesc]:
        with self._lock:
            found = [d for d in self._index.get(name, []) if wanted is None or d.type in wanted]
        class_names = {d.class_name for d in found}
        if len(class_names) > 1:  # an ambiguous alias: an exact class name wins, else the latest registered
            keep = name if name in class_names else found[-1].class_name
            found = [d for d in found if d.class_name == keep]
        return found

    def find(self, name: str, types: Iterable[str] | None = None,
             version_range: str | VersionRange | None = None) -> PluginDesc:
        """The plugin with this class name or alias (of one of ``types``): the newest installed version
        inside ``version_range`` (``None`` or ``"latest"``: the newest of all).

        Raises :class:`PluginNotFoundError` if it is not installed, :class:`VersionedPluginLoadingError`
        if no installed version is in the range, and ``InvalidVersionSpecificationError`` for a bad range.
        """
        rng = to_version_range(version_range)
        found = self.candidates(name, types)
        if rng is None:
            return found[-1]
        if not rng.has_restrictions():  # a soft version: that one if installed, else the newest
            exact = [d for d in found if _comparable(d.version) == rng.recommended_version]
            return (exact or found)[-1]
        matching = [d for d in found if rng.contains_version(_comparable(d.version))]
        if not matching:
            available = _distinct(d.version for d in found)
            raise VersionedPluginLoadingError(
                f"Plugin {found[-1].class_name} not found that matches the version range {rng}, available "
                f"versions: [{', '.join(available)}]", available)
        return matching[-1]

    def versions(self, name: str, types: Iterable[str] | None = None) -> list[str]:
        """The installed versions of a plugin, ascending and distinct (empty if it is not installed)."""
        try:
            return _distinct(d.version for d in self.candidates(name, types))
        except PluginNotFoundError:
            return []

    def installed(self, types: Iterable[str]) -> list[PluginDesc]:
        """Every installed plugin version of these types, in Kafka's ``PluginDesc`` order."""
        wanted = set(types)
        with self._lock:
            return sorted(d for d in self._plugins if d.type in wanted)

    def class_names(self, types: Iterable[str]) -> list[str]:
        """The class names of every installed plugin of these types, sorted (for recommenders)."""
        wanted = set(types)
        with self._lock:
            return sorted({d.class_name for d in self._plugins if d.type in wanted})

    def load_class(self, desc: PluginDesc, qualified: str) -> type | None:
        """Another class (e.g. a connector's task class) by name, from the installation of ``desc``."""
        inst = installation_of(desc.cls.__module__)
        try:
            found = inst.load_class(qualified) if inst is not None else import_class(qualified)
        except (ImportError, AttributeError, ValueError):
            found = None
        if found is None and hasattr(desc.cls, "task_class"):
            # a Kafka class name the connector's task answers to (task configs written by Kafka Connect)
            task = desc.cls().task_class()
            if qualified in vars(task).get("ALIASES", ()):
                return task
        return found

    def listing(self, connectors_only: bool = True) -> list[dict[str, str]]:
        """Plugins as ``GET /connector-plugins`` lists them: each version its own entry, by type (sink,
        source, transformation, predicate, converter, header_converter), then class name, then ascending
        version; the same (class, type, version) is listed once."""
        with self._lock:
            plugins = list(self._plugins)
        seen, out = set(), []
        for type_ in TYPE_ORDER:
            if connectors_only and type_ not in ("sink", "source"):
                continue
            for d in sorted(d for d in plugins if d.type == type_):
                key = (d.class_name, d.type, d.version)
                if key not in seen:
                    seen.add(key)
                    out.append(d.to_json())
        return out


def _distinct(versions: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(versions))


def _path_entries(plugin_path: str | Iterable[str] | None) -> list[str]:
    if plugin_path is None:
        return []
    items = plugin_path.split(",") if isinstance(plugin_path, str) else plugin_path
    return [str(p).strip() for p in items if str(p).strip()]


def _plugin_classes(obj: Any) -> list[type]:
    """A plugin class itself, or the concrete plugin classes a module defines."""
    if inspect.isclass(obj):
        return [obj] if plugin_types(obj) else []
    if isinstance(obj, ModuleType):
        return [c for c in vars(obj).values() if inspect.isclass(c) and c.__module__ == obj.__name__
                and plugin_types(c) and not inspect.isabstract(c)]
    return []


def _isolated_version(cls: type, inst: Installation) -> str:
    """``version()`` if the class implements it, else its distribution's version, else undefined."""
    if declares_version(cls):
        return plugin_version(cls)
    dist = inst.distribution_of(cls.__module__)
    return dist.version if dist is not None and dist.version else UNDEFINED_VERSION


def import_class(path: str) -> type | None:
    """The class at a dotted Python path in the environment, or None."""
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
    from connect_magics import converters as registry_converters

    classes.extend((getattr(registry_converters, name), []) for name in registry_converters.__all__)
    by_class: dict[type, list[str]] = {}
    for java, cls in [*BUILTIN_TRANSFORMS.items(), *BUILTIN_PREDICATES.items()]:
        by_class.setdefault(cls, []).append(java)
    classes.extend(by_class.items())
    return classes
