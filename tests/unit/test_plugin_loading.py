"""KIP-891 plugin discovery, isolation, ordering, selection and validation (no broker needed).

The test plugins (``vplug``, the same module names in every version) are built by ``versioned_plugins``.
"""

from __future__ import annotations

import importlib
import json
import logging
import sys
import textwrap
from pathlib import Path

import pytest
import versioned_plugins as vp

from connect_magics.api.transforms import Transformation
from connect_magics.errors import BadRequestError, NotFoundError
from connect_magics.runtime.config.connector_config import plugin_config_keys, validate_connector_config
from connect_magics.runtime.plugins.loader import Installation, public_module_name
from connect_magics.runtime.plugins.registry import (
    PluginNotFoundError,
    Plugins,
    VersionedPluginLoadingError,
    python_name,
)
from connect_magics.runtime.plugins.versions import InvalidVersionSpecificationError

VERSIONS = ["1.0.0", "1.1.0", "2.0.0-rc1", "2.0.0"]
AVAILABLE = "[1.0.0, 1.1.0, 2.0.0-rc1, 2.0.0]"


@pytest.fixture(scope="module")
def plugin_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return vp.build_plugin_path(tmp_path_factory.mktemp("kip891"), VERSIONS)


@pytest.fixture(scope="module")
def plugins(plugin_dir: Path) -> Plugins:
    return Plugins(plugin_path=str(plugin_dir), entry_points=False)


@pytest.fixture
def clean_env_modules():
    """Forget the environment modules these tests put on sys.path (the isolated ones never collide)."""
    yield
    for name in list(sys.modules):
        if name.split(".")[0] in ("vplug", "envhelper", "epplug", "upper"):
            del sys.modules[name]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def installation(plugins: Plugins, version: str) -> Installation:
    return next(i for i in plugins.installations if i.location.name == f"vplug-{version}")


# -- isolation -------------------------------------------------------------------------------------------


def test_same_module_names_load_side_by_side(plugins: Plugins) -> None:
    old = plugins.find(vp.SOURCE, ("source",), "1.0.0")
    new = plugins.find(vp.SOURCE, ("source",), "2.0.0")
    assert old.cls is not new.cls
    assert (old.cls().version(), new.cls().version()) == ("1.0.0", "2.0.0")
    assert old.class_name == new.class_name == python_name(old.cls) == python_name(new.cls) == vp.SOURCE
    assert old.cls.__module__ != new.cls.__module__
    assert public_module_name(old.cls.__module__) == public_module_name(new.cls.__module__) == "vplug.source"
    # module state is per installation: configuring v1's converter leaves v2's untouched
    v1, v2 = installation(plugins, "1.0.0"), installation(plugins, "2.0.0")
    state1, state2 = v1.import_module("vplug._version").STATE, v2.import_module("vplug._version").STATE
    before = state2["configured"]
    plugins.find(vp.CONVERTER, ("converter",), "1.0.0").cls().configure({}, False)
    assert state1["configured"] >= 1 and state2["configured"] == before
    assert "vplug" not in sys.modules  # nothing leaked into the environment's module names


def test_absolute_imports_resolve_inside_the_installation(plugins: Plugins) -> None:
    for version in VERSIONS:
        inst = installation(plugins, version)
        own = inst.import_module("vplug._version")
        assert own.VERSION == version
        for module in ("source", "sink", "converter", "transform", "predicate"):
            assert inst.import_module(f"vplug.{module}")._v is own  # `import vplug._version as _v`
        assert inst.import_module("vplug").VERSION == version  # `from vplug._version import VERSION`
        desc = plugins.find(vp.SOURCE, ("source",), version)
        assert plugins.load_class(desc, "vplug.source.VersionedSourceTask")().version() == version
    # a name the installation does not ship comes from the environment
    from connect_magics.connectors.file import FileStreamSourceTask

    assert plugins.load_class(desc, "connect_magics.connectors.file.FileStreamSourceTask") is FileStreamSourceTask


def test_the_environment_keeps_its_own_module_of_the_same_name(plugins: Plugins, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch,
                                                                clean_env_modules: None) -> None:
    write(tmp_path / "env" / "vplug" / "__init__.py", 'VERSION = "environment"\n')
    write(tmp_path / "env" / "vplug" / "_version.py", 'VERSION = "environment"\n')
    monkeypatch.syspath_prepend(str(tmp_path / "env"))
    importlib.invalidate_caches()
    import vplug  # the environment's

    assert vplug.VERSION == "environment"
    inst = installation(plugins, "1.1.0")
    assert inst.import_module("vplug._version").VERSION == "1.1.0"
    assert plugins.find(vp.SOURCE, ("source",), "1.1.0").cls().version() == "1.1.0"
    assert importlib.import_module("vplug._version").VERSION == "environment"


def test_what_an_installation_does_not_ship_comes_from_the_environment(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       clean_env_modules: None) -> None:
    write(tmp_path / "env" / "envhelper.py", "MARK = object()\n")
    monkeypatch.syspath_prepend(str(tmp_path / "env"))
    root = tmp_path / "plugins" / "shadowing"
    # modules an installation may not replace: the runtime's API and the standard library
    write(root / "connect_magics" / "__init__.py", "raise RuntimeError('shadowed connect_magics')\n")
    write(root / "json.py", "raise RuntimeError('shadowed json')\n")
    write(root / "upper" / "__init__.py", """\
        import json
        import envhelper
        import connect_magics.api.transforms as api
        from upper import helpers
        from .helpers import shout
        import upper.helpers as aliased
        from . import helpers as relative


        class Upper(api.Transformation):
            def version(self):
                return "0.3"

            def configure(self, props):
                pass

            def apply(self, record):
                return record.new_record(value=shout(record.value))
        """)
    write(root / "upper" / "helpers.py", "def shout(text):\n    return text.upper()\n")
    plugins = Plugins(plugin_path=str(tmp_path / "plugins"), entry_points=False)
    desc = plugins.find("Upper", ("transformation",))
    assert desc.version == "0.3" and desc.class_name == "upper.Upper" and desc.isolated
    assert issubclass(desc.cls, Transformation)
    module = sys.modules[desc.cls.__module__]
    assert module.json is json and module.envhelper is importlib.import_module("envhelper")
    assert module.helpers is module.aliased is module.relative is sys.modules[module.__name__ + ".helpers"]
    assert module.shout is module.helpers.shout
    assert "upper" not in sys.modules


def test_wheel_versions_from_distribution_metadata_and_entry_points(tmp_path: Path) -> None:
    vp.write_wheel(tmp_path / "plugins" / "vplug-3.0.0.whl", "3.0.0", declare_version=False,
                   entry_points={"conv": "vplug.converter:VersionedConverter", "more": "vplug.transform"})
    plugins = Plugins(plugin_path=str(tmp_path / "plugins"), entry_points=False)
    listed = [p for p in plugins.listing(False) if p["class"].startswith("vplug.")]
    assert listed == [{"class": vp.TRANSFORM, "type": "transformation", "version": "3.0.0"},
                      {"class": vp.CONVERTER, "type": "converter", "version": "3.0.0"},
                      {"class": vp.CONVERTER, "type": "header_converter", "version": "3.0.0"}]
    conv = plugins.find("VersionedConverter", ("converter",)).cls()
    conv.configure({}, False)
    assert json.loads(conv.from_connect_data("t", None, 1)) == {"converter": "3.0.0", "value": 1}


def test_plugins_without_a_version_are_undefined_and_sort_first(tmp_path: Path) -> None:
    vp.write_installation(tmp_path / "plugins" / "bare", "9.9.9", declare_version=False)
    vp.write_installation(tmp_path / "plugins" / "vplug-1.0.0", "1.0.0")
    plugins = Plugins(plugin_path=str(tmp_path / "plugins"), entry_points=False)
    assert plugins.versions(vp.CONVERTER, ("converter",)) == ["undefined", "1.0.0"]
    assert plugins.find(vp.CONVERTER, ("converter",)).version == "1.0.0"
    assert {"class": vp.CONVERTER, "type": "converter"} in plugins.listing(False)  # no "version" key


def test_installed_distributions_through_entry_points(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      clean_env_modules: None) -> None:
    site = tmp_path / "site"
    write(site / "epplug.py", """\
        from connect_magics.api.predicates import Predicate


        class Always(Predicate):
            def configure(self, props):
                pass

            def test(self, record):
                return True
        """)
    write(site / "epplug-4.2.dist-info" / "METADATA", "Metadata-Version: 2.1\nName: epplug\nVersion: 4.2\n")
    write(site / "epplug-4.2.dist-info" / "entry_points.txt", "[connect_magics.plugins]\nalways = epplug:Always\n")
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    desc = Plugins().find("Always", ("predicate",))
    assert (desc.class_name, desc.version, desc.isolated, desc.location) == ("epplug.Always", "4.2", False,
                                                                               "classpath")


def test_broken_installations_are_skipped(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    write(tmp_path / "plugins" / "broken" / "brokenplug.py", "def oops(:\n")
    vp.write_installation(tmp_path / "plugins" / "vplug-1.0.0", "1.0.0")
    with caplog.at_level(logging.WARNING):
        plugins = Plugins(plugin_path=f"{tmp_path / 'plugins'}, {tmp_path / 'missing'}", entry_points=False)
    assert plugins.versions(vp.SOURCE) == ["1.0.0"]
    assert "brokenplug cannot be imported" in caplog.text
    assert f"Could not get listing for plugin path: {tmp_path / 'missing'} (in plugin.path)" in caplog.text


# -- ordering, listing and selection -----------------------------------------------------------------------


def test_listing_has_each_version_in_kafka_order(plugin_dir: Path, tmp_path: Path) -> None:
    # the same version installed twice (two plugin.path entries) is listed once
    vp.write_installation(tmp_path / "again" / "vplug-1.0.0", "1.0.0")
    plugins = Plugins(plugin_path=[str(plugin_dir), str(tmp_path / "again")], entry_points=False)
    listed = plugins.listing(connectors_only=False)
    types = [p["type"] for p in listed]
    assert types == sorted(types, key=["sink", "source", "transformation", "predicate", "converter",
                                       "header_converter"].index)
    for cls, type_ in ((vp.SINK, "sink"), (vp.SOURCE, "source"), (vp.TRANSFORM, "transformation"),
                       (vp.PREDICATE, "predicate"), (vp.CONVERTER, "converter"), (vp.CONVERTER, "header_converter")):
        assert [p["version"] for p in listed if p["class"] == cls and p["type"] == type_] == VERSIONS
    sources = [p["class"] for p in listed if p["type"] == "source"]
    assert sources == sorted(sources)
    assert {p["type"] for p in plugins.listing()} == {"sink", "source"}
    assert len(plugins.candidates(vp.SOURCE)) == 5  # both copies of 1.0.0 are installed


def test_classpath_sorts_before_isolated_for_equal_versions(plugins: Plugins) -> None:
    isolated = plugins.find(vp.TRANSFORM, ("transformation",), "2.0.0")
    local = Plugins(entry_points=False)
    for desc in plugins.candidates(vp.TRANSFORM):
        local.register(desc.cls, [vp.TRANSFORM], desc.location, desc.version, isolated=True)

    class OnClasspath(isolated.cls):  # type: ignore[misc, valid-type]
        pass

    local.register(OnClasspath, [vp.TRANSFORM], version="2.0.0")
    order = local.candidates(vp.TRANSFORM)
    assert [(d.version, d.isolated) for d in order][-2:] == [("2.0.0", False), ("2.0.0", True)]
    assert local.find(vp.TRANSFORM).isolated  # the last one, as Kafka's lastKey()


@pytest.mark.parametrize(("spec", "expected"), [
    (None, "2.0.0"), ("latest", "2.0.0"), ("1.1.0", "1.1.0"), ("[1.1.0]", "1.1.0"), ("[1.0,1.1)", "1.0.0"),
    ("[1.0,2.0)", "2.0.0-rc1"),  # Maven: 2.0.0-rc1 < 2.0
    ("[2.0,)", "2.0.0"), ("(,1.1.0],[2.0.0-rc1]", "2.0.0-rc1"), ("(,1.0.0],[2.1,)", "1.0.0"), (" 1.0 ", "1.0.0"),
])
def test_selection_is_the_newest_version_in_range(plugins: Plugins, spec: str | None, expected: str) -> None:
    assert plugins.find("VersionedSource", ("source",), spec).version == expected
    assert plugins.find(vp.SOURCE, ("source",), spec).cls().version() == expected


def test_selection_errors(plugins: Plugins) -> None:
    with pytest.raises(VersionedPluginLoadingError) as e:
        plugins.find("VersionedSource", ("source",), "3.0")
    assert str(e.value) == (f"Plugin {vp.SOURCE} not found that matches the version range [3.0,3.0], "
                            f"available versions: {AVAILABLE}")
    assert e.value.available_versions == VERSIONS
    with pytest.raises(InvalidVersionSpecificationError, match=r"^Unbounded range: \[1.0$"):
        plugins.find(vp.SOURCE, ("source",), "[1.0")
    with pytest.raises(PluginNotFoundError, match="^Class Nope could not be found.$"):
        plugins.find("Nope", ("source",), "1.0")


# -- validation and config definitions ----------------------------------------------------------------------


def _source(**extra: str) -> dict[str, str]:
    return {"name": "c", "connector.class": "VersionedSource", "topic": "t", **extra}


def _values(infos: dict) -> dict[str, dict]:
    return {c["value"]["name"]: c for c in infos["configs"] if c["value"]}


def test_validation_defaults_and_recommends_installed_versions(plugins: Plugins) -> None:
    infos = validate_connector_config(_source(**{
        "value.converter": vp.CONVERTER, "transforms": "t", "transforms.t.type": vp.TRANSFORM,
        "predicates": "p", "predicates.p.type": vp.PREDICATE}), plugins,
        worker={"key.converter": "org.apache.kafka.connect.json.JsonConverter"})
    assert infos["error_count"] == 0, infos
    values = _values(infos)
    for key in ("connector.plugin.version", "value.converter.plugin.version", "transforms.t.plugin.version",
                "predicates.p.plugin.version"):
        assert values[key]["value"]["recommended_values"] == list(reversed(VERSIONS)), key
        assert values[key]["definition"]["default_value"] == "2.0.0", key
        assert values[key]["value"]["value"] == "2.0.0", key
    assert values["key.converter.plugin.version"]["value"]["visible"] is False  # the worker's converter
    assert vp.CONVERTER in values["value.converter"]["value"]["recommended_values"]
    assert "greeting" in values  # the config definition of the selected (newest) version


def test_validation_uses_the_selected_versions_definitions(plugins: Plugins) -> None:
    infos = validate_connector_config(_source(**{"connector.plugin.version": "1.0.0", "greeting": "hi",
                                                 "transforms": "t", "transforms.t.type": vp.TRANSFORM,
                                                 "transforms.t.plugin.version": "1.0.0",
                                                 "transforms.t.field": "f"}), plugins)
    values = _values(infos)
    assert infos["error_count"] == 0
    assert "greeting" not in values  # version 1.0.0 has no such key
    assert values["transforms.t.field"]["value"]["value"] == "f"
    assert "transforms.t.plugin.version" not in [c["value"]["name"] for c in infos["configs"]
                                                 if c["definition"] is None]


@pytest.mark.parametrize(("class_key", "extra"), [
    ("connector.class", {}),
    ("value.converter", {"value.converter": vp.CONVERTER}),
    ("header.converter", {"header.converter": vp.CONVERTER}),
    ("transforms.t.type", {"transforms": "t", "transforms.t.type": vp.TRANSFORM}),
    ("predicates.p.type", {"predicates": "p", "predicates.p.type": vp.PREDICATE}),
])
def test_a_missing_version_is_an_error_of_both_keys(plugins: Plugins, class_key: str, extra: dict) -> None:
    version_key = {"connector.class": "connector.plugin.version"}.get(
        class_key, class_key.removesuffix(".type") + ".plugin.version")
    infos = validate_connector_config(_source(**extra, **{version_key: "[3.0,4.0)"}), plugins)
    values = _values(infos)
    cls = {"connector.class": vp.SOURCE}.get(class_key, extra.get(class_key))
    message = (f"Plugin {cls} not found that matches the version range [3.0,4.0), available versions: "
               f"{AVAILABLE}")
    assert values[class_key]["value"]["errors"] == [message]
    assert values[version_key]["value"]["errors"] == [message]
    assert values[version_key]["value"]["recommended_values"] == list(reversed(VERSIONS))
    assert infos["error_count"] == 2


@pytest.mark.parametrize(("spec", "maven"), [
    ("[1.0", "Unbounded range: [1.0"),
    ("[2.0,1.0]", "Range defies version ordering: [2.0,1.0]"),
    ("[1.0,2.0),[1.5,3.0)", "Ranges overlap: [1.0,2.0),[1.5,3.0)"),
    ("(1.0)", "Single version must be surrounded by []: (1.0)"),
    ("[1.0,2.0),3.0", "Only fully-qualified sets allowed in multiple set scenario: [1.0,2.0),3.0"),
])
def test_a_bad_range_is_an_error_of_the_version_key(plugins: Plugins, spec: str, maven: str) -> None:
    for key, extra in (("connector.plugin.version", {}),
                       ("value.converter.plugin.version", {"value.converter": vp.CONVERTER}),
                       ("key.converter.plugin.version", {}),  # ignored for the worker's converter, but parsed
                       ("transforms.t.plugin.version", {"transforms": "t", "transforms.t.type": vp.TRANSFORM})):
        infos = validate_connector_config(_source(**extra, **{key: spec}), plugins)
        assert _values(infos)[key]["value"]["errors"] == [f"Invalid value {spec} for configuration {key}: {maven}"]
        assert infos["error_count"] == 1, key


def test_an_alias_listed_twice_does_not_break_validation(plugins: Plugins) -> None:
    infos = validate_connector_config(_source(**{"transforms": "t,t", "transforms.t.type": vp.TRANSFORM,
                                                 "transforms.t.plugin.version": "1.0.0"}), plugins)
    assert _values(infos)["transforms.t.plugin.version"]["value"]["value"] == "1.0.0"


def test_a_connector_converter_defaults_to_the_version_packaged_with_the_connector(plugins: Plugins) -> None:
    infos = validate_connector_config(_source(**{"connector.plugin.version": "1.1.0",
                                                 "value.converter": vp.CONVERTER}), plugins)
    assert _values(infos)["value.converter.plugin.version"]["definition"]["default_value"] == "1.1.0"


def test_plugin_config_definitions_per_version(plugins: Plugins) -> None:
    names = lambda version: [k["name"] for k in plugin_config_keys(plugins, "VersionedSource", version)]  # noqa: E731
    assert names("1.0.0") == names("1.1.0") == ["topic", "interval.ms"]
    assert names("2.0.0") == names(None) == names("latest") == ["topic", "interval.ms", "greeting"]
    with pytest.raises(NotFoundError, match=r"^Unknown plugin Nope\.$"):
        plugin_config_keys(plugins, "Nope")
    with pytest.raises(BadRequestError, match=r"^Invalid version specification: \[1\.0$"):
        plugin_config_keys(plugins, "VersionedSource", "[1.0")
    with pytest.raises(BadRequestError) as e:
        plugin_config_keys(plugins, "VersionedSource", "9.9")
    assert str(e.value) == (f"Plugin {vp.SOURCE} not found that matches the version range [9.9,9.9], "
                            f"available versions: {AVAILABLE}")
    with pytest.raises(BadRequestError, match=r"^Invalid plugin class json\.JSONDecoder\. Valid types are sink, "):
        plugin_config_keys(plugins, "json.JSONDecoder")
