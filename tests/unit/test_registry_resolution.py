"""The local Schema Registry's pure logic: which Apicurio version runs on which Java, the Maven resolution's
arguments, the server's settings, and bad input (connect_magics.local.registry)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from connect_magics.local import registry as reg
from connect_magics.local.registry import SchemaRegistry, SchemaRegistryError


@pytest.mark.parametrize(("java", "version"), [(17, "3.0.9"), (18, "3.0.9"), (20, "3.0.9"), (21, "3.3.3"),
                                               (25, "3.3.3")])
def test_the_version_follows_the_java(java: int, version: str) -> None:
    assert reg.choose_version(java) == version


def test_a_requested_version_is_kept_when_the_java_can_run_it() -> None:
    assert reg.choose_version(25, "3.0.9") == "3.0.9"
    assert reg.choose_version(21, "3.2.0") == "3.2.0"
    assert reg.choose_version(17, "2.6.5") == "2.6.5"


def test_a_version_too_new_for_the_java_is_refused_naming_both() -> None:
    with pytest.raises(SchemaRegistryError, match=r"3\.3\.3 needs Java 21 or newer, but the Java found is 17.*3\.0\.9"):
        reg.choose_version(17, "3.3.3")
    with pytest.raises(SchemaRegistryError, match="3.1.0 needs Java 21"):
        reg.choose_version(17, "3.1.0")


@pytest.mark.parametrize("bad", ["latest", "3.x.1", "", "3.3.3-SNAPSHOT"])
def test_a_malformed_version_is_refused(bad: str) -> None:
    with pytest.raises(SchemaRegistryError, match="expected digits and dots"):
        reg.required_java(bad)


def test_maven_coordinates_and_archive_name() -> None:
    assert reg.coordinates("3.3.3") == "io.apicurio:apicurio-registry-app:3.3.3:tar.gz:all"
    assert reg.archive_name("3.0.9") == "apicurio-registry-app-3.0.9-all.tar.gz"


def test_the_ivy_module_asks_for_the_classified_tar_gz_alone() -> None:
    root = ET.fromstring(reg.ivy_module_xml("3.3.3"))
    dep = root.find("dependencies/dependency")
    assert dep is not None
    assert (dep.get("org"), dep.get("name"), dep.get("rev"), dep.get("transitive")) == (
        "io.apicurio", "apicurio-registry-app", "3.3.3", "false")
    art = dep.find("artifact")
    assert art is not None
    assert (art.get("type"), art.get("ext"), art.get("{http://ant.apache.org/ivy/maven}classifier")) == (
        "tar.gz", "tar.gz", "all")


def test_the_ivy_settings_read_no_poms_and_name_no_host() -> None:
    root = ET.fromstring(reg.IVY_SETTINGS_XML)
    resolver = root.find("resolvers/ibiblio")
    assert resolver is not None and resolver.get("usepoms") == "false" and resolver.get("m2compatible") == "true"
    assert resolver.get("root") is None  # Ivy's default: Maven Central
    assert "://" not in reg.IVY_SETTINGS_XML


def test_the_ivy_and_mvn_commands(tmp_path: Path) -> None:
    cmd = reg.ivy_command("/jdk/bin/java", "/spark/jars/ivy-2.5.3.jar", tmp_path)
    assert cmd[:3] == ["/jdk/bin/java", "-jar", "/spark/jars/ivy-2.5.3.jar"]
    assert cmd[cmd.index("-settings") + 1] == str(tmp_path / "ivysettings.xml")
    assert cmd[cmd.index("-ivy") + 1] == str(tmp_path / "ivy.xml")
    assert cmd[cmd.index("-types") + 1] == "tar.gz"
    assert cmd[cmd.index("-cache") + 1] == str(tmp_path / "ivy-cache")  # inside the staging folder: not kept
    assert cmd[cmd.index("-retrieve") + 1] == str(tmp_path / "download" / "[artifact]-[revision](-[classifier]).[ext]")
    mvn = reg.mvn_command("3.0.9", tmp_path)
    assert mvn[:3] == ["mvn", "-B", "dependency:copy"]
    assert "-Dartifact=io.apicurio:apicurio-registry-app:3.0.9:tar.gz:all" in mvn
    assert f"-DoutputDirectory={tmp_path / 'download'}" in mvn


def test_the_distribution_lives_in_the_user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONNECT_MAGICS_CACHE", str(tmp_path))
    assert reg.distribution_dir("3.3.3") == tmp_path / "apicurio-registry-3.3.3"


def test_the_launcher_of_each_layout(tmp_path: Path) -> None:
    fast, legacy, empty = tmp_path / "fast", tmp_path / "legacy", tmp_path / "empty"
    for d in (fast, legacy, empty):
        d.mkdir()
    (fast / "quarkus-run.jar").write_bytes(b"")
    (legacy / "apicurio-registry-app-3.0.9-runner.jar").write_bytes(b"")
    assert reg.launcher(fast) == fast / "quarkus-run.jar"
    assert reg.launcher(legacy) == legacy / "apicurio-registry-app-3.0.9-runner.jar"
    with pytest.raises(SchemaRegistryError, match="not an Apicurio Registry distribution. Remove the folder"):
        reg.launcher(empty)


def test_the_server_settings(tmp_path: Path) -> None:
    props = reg.registry_properties(18081, 18082, tmp_path)
    assert props["quarkus.http.host"] == "127.0.0.1" and props["quarkus.http.port"] == "18081"
    assert props["quarkus.management.port"] == "18082"
    assert props["apicurio.storage.kind"] == "sql" and props["apicurio.storage.sql.kind"] == "h2"
    assert props["apicurio.datasource.url"].startswith("jdbc:h2:mem:")  # in memory
    assert props["apicurio.ccompat.legacy-id-mode.enabled"] == "false"  # content ids, as Confluent's
    assert props["apicurio.rules.global.compatibility"] == "BACKWARD"
    assert props["apicurio.import.work-dir"] == str(tmp_path)
    assert "apicurio.rules.global.compatibility" not in reg.registry_properties(1, 2, tmp_path, "NONE")


def test_the_default_compatibility_is_confluents_where_a_subject_can_lift_it() -> None:
    assert reg.default_compatibility("3.3.3") == "BACKWARD"
    assert reg.default_compatibility("3.1.0") == "BACKWARD"
    assert reg.default_compatibility("3.0.9") == "NONE"  # 3.0 keeps a global rule over a subject's NONE
    assert reg.default_compatibility("3.0.9", "forward_transitive") == "FORWARD_TRANSITIVE"
    assert reg.default_compatibility("3.3.3", "NONE") == "NONE"


def test_the_command_line(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    dist.mkdir()
    (dist / "quarkus-run.jar").write_bytes(b"")
    registry = SchemaRegistry(port=18081, work_dir=tmp_path / "work", compatibility="full")
    cmd = registry.command("/jdk/bin/java", dist, 18082)
    assert cmd[0] == "/jdk/bin/java" and "-Xmx512m" in cmd
    assert cmd[-2:] == ["-jar", str(dist / "quarkus-run.jar")]
    assert "-Dquarkus.http.port=18081" in cmd and "-Dapicurio.rules.global.compatibility=FULL" in cmd
    assert registry.url == "http://127.0.0.1:18081/apis/ccompat/v7"
    assert not registry.is_running() and "stopped" in repr(registry)
    assert not (tmp_path / "work").exists()  # made by start()
    assert not SchemaRegistry().work_dir.exists()


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"port": 0}, "port 0: must be between 1 and 65535"),
    ({"port": 70000}, "port 70000"),
    ({"compatibility": "SIDEWAYS"}, "compatibility 'SIDEWAYS': expected one of BACKWARD.*or None for the default"),
    ({"version": "newest"}, "version 'newest': expected digits and dots"),
])
def test_bad_arguments_are_refused(kwargs: dict, message: str) -> None:
    with pytest.raises(SchemaRegistryError, match=message):
        SchemaRegistry(**kwargs)


def test_the_version_can_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(reg.VERSION_ENV, "3.0.9")
    assert SchemaRegistry().requested_version == "3.0.9"
    assert SchemaRegistry(version="3.3.3").requested_version == "3.3.3"  # an argument wins
    monkeypatch.setenv(reg.VERSION_ENV, "newest")
    with pytest.raises(SchemaRegistryError, match=r"'newest': expected digits and dots.*\(from "
                                                  r"\$CONNECT_MAGICS_SCHEMA_REGISTRY_VERSION\)"):
        SchemaRegistry()
