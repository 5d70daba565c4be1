"""Builds versioned test plugins for KIP-891 tests: every version ships the SAME modules (package
``vplug``) with a source and a sink connector, a converter, a transformation and a predicate, each
reporting the version it was built with and leaving that version in the data it touches.

* source records carry ``{"seq": n, "source": VERSION}``;
* the converter (also a header converter) writes ``{"converter": VERSION, "value": ...}`` and reads back ``{"decoded_by": VERSION, ...}``;
* the transformation sets ``value[field] = VERSION`` (``field`` defaults to ``"transform"``);
* the predicate matches records with an even ``seq`` in major version 1, and every record from 2 on;
* the sink appends ``{"sink": VERSION, "value": ...}`` lines to its ``file``.

Version 2+ of the source connector defines one more config key, ``greeting``. Every plugin refuses a
``plugin.version`` key in its own configuration (it must be removed before the plugin is configured).
"""

from __future__ import annotations

import textwrap
import zipfile
from pathlib import Path

PACKAGE = "vplug"
SOURCE = f"{PACKAGE}.source.VersionedSourceConnector"
SINK = f"{PACKAGE}.sink.VersionedSinkConnector"
CONVERTER = f"{PACKAGE}.converter.VersionedConverter"
TRANSFORM = f"{PACKAGE}.transform.VersionedTransform"
PREDICATE = f"{PACKAGE}.predicate.VersionedPredicate"


def _version_method(declare: bool) -> str:
    return "    def version(self):\n        return _v.VERSION\n" if declare else ""


def _modules(version: str, declare_version: bool = True) -> dict[str, str]:
    vm = _version_method(declare_version)
    return {
        "__init__.py": 'from vplug._version import VERSION  # an absolute import of its own module\n',
        "_version.py": textwrap.dedent(f"""\
            VERSION = {version!r}
            MAJOR = int(VERSION.split(".")[0])
            STATE = {{"configured": 0}}
            """),
        "_guard.py": textwrap.dedent("""\
            from connect_magics.api.config import ConfigException


            def reject_version_key(props, kind):
                if "plugin.version" in props or "connector.plugin.version" in props:
                    raise ConfigException("plugin.version", props.get("plugin.version"),
                                          f"must be removed before the {kind} is configured")
            """),
        "source.py": textwrap.dedent("""\
            import threading

            import vplug._version as _v
            from connect_magics.api.config import ConfigDef, Importance, Type
            from connect_magics.api.connector import SourceConnector, SourceTask
            from connect_magics.api.records import SourceRecord
            from vplug._guard import reject_version_key


            def _config_def():
                cd = (ConfigDef()
                      .define("topic", Type.STRING, importance=Importance.HIGH, documentation="Topic to write to")
                      .define("interval.ms", Type.INT, 20, importance=Importance.LOW,
                              documentation="Pause between two records"))
                if _v.MAJOR >= 2:
                    cd.define("greeting", Type.STRING, "hello", importance=Importance.LOW,
                              documentation="New in version 2")
                return cd


            class VersionedSourceConnector(SourceConnector):
            VERSION_METHOD
                def start(self, props):
                    reject_version_key(props, "connector")
                    self.props = dict(props)

                def task_class(self):
                    return VersionedSourceTask

                def task_configs(self, max_tasks):
                    return [{**self.props, "task.id": str(i)} for i in range(max_tasks)]

                def stop(self):
                    pass

                def config_def(self):
                    return _config_def()


            class VersionedSourceTask(SourceTask):
            VERSION_METHOD
                def start(self, props):
                    self.topic, self.task = props["topic"], props.get("task.id", "0")
                    self.interval = int(props.get("interval.ms", "20")) / 1000
                    last = self.context.offset_storage_reader().offset({"task": self.task})
                    self.seq = last["seq"] + 1 if last else 0
                    self._stopping = threading.Event()

                def poll(self):
                    if self._stopping.wait(self.interval):
                        return None
                    record = SourceRecord({"task": self.task}, {"seq": self.seq}, self.topic,
                                          value={"seq": self.seq, "source": _v.VERSION})
                    self.seq += 1
                    return [record]

                def stop(self):
                    self._stopping.set()
            """).replace("VERSION_METHOD\n", vm or "    pass\n"),
        "sink.py": textwrap.dedent("""\
            import json

            import vplug._version as _v
            from connect_magics.api.config import ConfigDef, Importance, Type
            from connect_magics.api.connector import SinkConnector, SinkTask
            from vplug._guard import reject_version_key


            class VersionedSinkConnector(SinkConnector):
            VERSION_METHOD
                def start(self, props):
                    reject_version_key(props, "connector")
                    self.props = dict(props)

                def task_class(self):
                    return VersionedSinkTask

                def task_configs(self, max_tasks):
                    return [dict(self.props)]

                def stop(self):
                    pass

                def config_def(self):
                    return ConfigDef().define("file", Type.STRING, importance=Importance.HIGH,
                                              documentation="File to append to")


            class VersionedSinkTask(SinkTask):
            VERSION_METHOD
                def start(self, props):
                    self.file = props["file"]

                def put(self, records):
                    with open(self.file, "a") as f:
                        for r in records:
                            f.write(json.dumps({"sink": _v.VERSION, "value": r.value}, sort_keys=True) + "\\n")

                def stop(self):
                    pass
            """).replace("VERSION_METHOD\n", vm or "    pass\n"),
        "converter.py": textwrap.dedent("""\
            import json

            import vplug._version as _v
            from connect_magics.api.converters import Converter, HeaderConverter, SchemaAndValue
            from vplug._guard import reject_version_key


            class VersionedConverter(Converter, HeaderConverter):
            VERSION_METHOD
                def configure(self, configs, is_key=None):
                    reject_version_key(configs, "converter")
                    _v.STATE["configured"] += 1

                def from_connect_header(self, topic, header_key, schema, value):
                    return self.from_connect_data(topic, schema, value)

                def to_connect_header(self, topic, header_key, data):
                    return self.to_connect_data(topic, data)

                def from_connect_data(self, topic, schema, value, headers=None):
                    if value is None:
                        return None
                    return json.dumps({"converter": _v.VERSION, "value": value}, sort_keys=True).encode()

                def to_connect_data(self, topic, data, headers=None):
                    if data is None:
                        return SchemaAndValue(None, None)
                    return SchemaAndValue(None, {"decoded_by": _v.VERSION, **json.loads(data)})
            """).replace("VERSION_METHOD\n", vm or "    pass\n"),
        "transform.py": textwrap.dedent("""\
            import vplug._version as _v
            from connect_magics.api.config import ConfigDef, Importance, Type
            from connect_magics.api.transforms import Transformation
            from vplug._guard import reject_version_key


            class VersionedTransform(Transformation):
            VERSION_METHOD
                def configure(self, props):
                    reject_version_key(props, "transformation")
                    self.field = props.get("field", "transform")

                def apply(self, record):
                    value = dict(record.value) if isinstance(record.value, dict) else {"value": record.value}
                    value[self.field] = _v.VERSION
                    return record.new_record(value=value)

                def config_def(self):
                    return ConfigDef().define("field", Type.STRING, "transform", importance=Importance.LOW,
                                              documentation="The field that receives the version")
            """).replace("VERSION_METHOD\n", vm or "    pass\n"),
        "predicate.py": textwrap.dedent("""\
            import vplug._version as _v
            from connect_magics.api.predicates import Predicate
            from vplug._guard import reject_version_key


            class VersionedPredicate(Predicate):
            VERSION_METHOD
                def configure(self, props):
                    reject_version_key(props, "predicate")

                def test(self, record):
                    if _v.MAJOR >= 2:
                        return True
                    return isinstance(record.value, dict) and record.value.get("seq", 0) % 2 == 0
            """).replace("VERSION_METHOD\n", vm or "    pass\n"),
    }


def write_installation(directory: Path, version: str, declare_version: bool = True) -> Path:
    """``directory/vplug/*.py`` for one version: a plugin installation as a plain directory."""
    package = directory / PACKAGE
    package.mkdir(parents=True, exist_ok=True)
    for name, text in _modules(version, declare_version).items():
        (package / name).write_text(text)
    return directory


def write_wheel(path: Path, version: str, declare_version: bool = False,
                entry_points: dict[str, str] | None = None) -> Path:
    """A wheel of ``vplug`` with ``*.dist-info`` metadata (version, optional entry points)."""
    dist = f"vplug-{version}.dist-info"
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in _modules(version, declare_version).items():
            zf.writestr(f"{PACKAGE}/{name}", text)
        zf.writestr(f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: vplug\nVersion: {version}\n")
        zf.writestr(f"{dist}/top_level.txt", "vplug\n")
        if entry_points:
            zf.writestr(f"{dist}/entry_points.txt", "[connect_magics.plugins]\n"
                        + "".join(f"{k} = {v}\n" for k, v in entry_points.items()))
    return path


def build_plugin_path(root: Path, versions: list[str]) -> Path:
    """``root/plugins/vplug-{version}/`` for each version; returns the ``plugin.path`` directory."""
    plugins = root / "plugins"
    for v in versions:
        write_installation(plugins / f"vplug-{v}", v)
    return plugins
