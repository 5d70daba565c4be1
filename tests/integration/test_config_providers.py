"""Config providers (KIP-297, KIP-421, KIP-887, KIP-993; issue 25): placeholders stay as written in the config
topic and in every answer, the connector and its tasks get the values at each start, a missing key is refused
naming the placeholder, and a resolved secret appears in no log line, trace, status or answer."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from helpers import one_task_connector, wait_until
from raw_topics import create_topics, read_records

from connect_magics import ConnectRuntime
from connect_magics.api import SinkConnector, SinkTask
from connect_magics.api.config import ConfigException
from connect_magics.errors import ConnectRestError

SECRET = "pa55-w0rd-nobody-may-see"
SEEN: dict[str, dict[str, str]] = {}  # what each SecretSinkTask instance was started with


class SecretSinkTask(SinkTask):
    def version(self) -> str:
        return "1"

    def start(self, props: dict[str, str]) -> None:
        SEEN[props["name"]] = dict(props)
        if props.get("fail") == "true":
            raise ValueError(f"cannot log in with password {props['password']}")

    def put(self, records: Any) -> None:
        pass

    def stop(self) -> None:
        pass


SecretSink = one_task_connector("SecretSink", SinkConnector, SecretSinkTask)


@pytest.fixture
def secrets(tmp_path):
    directory = tmp_path / "secrets"
    directory.mkdir()
    (directory / "db.properties").write_text(f"password={SECRET}\nuser=connect\n")
    (directory / "token").write_text("token-from-a-file")
    return directory


def worker(secrets) -> dict[str, str]:
    return {"config.providers": "file,directory,env",
            "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
            "config.providers.file.param.allowed.paths": str(secrets),
            "config.providers.directory.class": "org.apache.kafka.common.config.provider.DirectoryConfigProvider",
            "config.providers.env.class": "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
            "config.providers.env.param.allowlist.pattern": "CM_TEST_.*"}


def sink_config(secrets, topic: str, **extra: str) -> dict[str, str]:
    return {"connector.class": "SecretSink", "topics": topic,
            "password": f"${{file:{secrets}/db.properties:password}}",
            "token": f"${{directory:{secrets}:token}}", "region": "${env:CM_TEST_REGION}", **extra}


def test_placeholders_stay_written_and_tasks_get_the_values(bootstrap, unique, secrets, monkeypatch, caplog) -> None:
    caplog.set_level(logging.DEBUG, logger="connect_magics")
    monkeypatch.setenv("CM_TEST_REGION", "eu-west-1")
    topic, group = f"secret-{unique}", f"g-{unique}"
    create_topics(bootstrap, topic)
    with ConnectRuntime(bootstrap, group, worker(secrets)) as rt:
        rt.plugins.register(SecretSink)
        config = sink_config(secrets, topic)
        rt.create_connector("s1", config)
        wait_until(lambda: "s1" in SEEN, 60, message="the task started")
        assert (SEEN["s1"]["password"], SEEN["s1"]["token"], SEEN["s1"]["region"]) == \
            (SECRET, "token-from-a-file", "eu-west-1")
        assert rt.connector_config("s1")["password"] == config["password"]  # as written
        assert rt.task_configs("s1")[0]["config"]["password"] == config["password"]
        infos = rt.validate_connector_config({**config, "name": "s1"})
        assert infos["error_count"] == 0 and SECRET not in json.dumps(infos)

        # a changed secret and a restart: the new value
        (secrets / "db.properties").write_text("password=rotated-secret-value\n")
        SEEN.pop("s1")
        rt.restart_connector("s1", include_tasks=True)
        wait_until(lambda: SEEN.get("s1", {}).get("password") == "rotated-secret-value", 60,
                   message="the rotated secret")
        (secrets / "db.properties").write_text(f"password={SECRET}\n")

        # a secret in a task's failure is hidden in its status trace and in the log
        rt.create_connector("s2", sink_config(secrets, topic, fail="true"))
        wait_until(lambda: rt.task_status("s2", 0)["state"] == "FAILED", 60, message="the failed task")
        assert "cannot log in with password [hidden]" in rt.task_status("s2", 0)["trace"]
        answers = json.dumps([rt.connector_status(c) for c in ("s1", "s2")] + [rt.connector_info("s1"),
                             rt.task_configs("s1"), rt.connector_config("s2")])
        stored = [v or b"" for _, v in read_records(bootstrap, f"{group}-configs") +
                  read_records(bootstrap, f"{group}-status")]
    for where, text in [("answers", answers), ("log", caplog.text), ("topics", b"".join(stored).decode())]:
        assert SECRET not in text and "rotated-secret-value" not in text, f"a resolved secret in the {where}"
    assert "password [hidden]" in caplog.text


def test_a_missing_key_or_file_is_refused_naming_the_placeholder(bootstrap, unique, secrets) -> None:
    with ConnectRuntime(bootstrap, f"g-{unique}", worker(secrets)) as rt:
        rt.plugins.register(SecretSink)
        missing = f"${{file:{secrets}/db.properties:no-such-key}}"
        with pytest.raises(ConnectRestError, match=r"no key no-such-key") as info:
            rt.create_connector("bad", {**sink_config(secrets, "t"), "password": missing})
        assert info.value.status == 400 and missing in str(info.value)
        outside = "${file:/etc/passwd:root}"
        with pytest.raises(ConnectRestError, match="not under allowed.paths"):
            rt.create_connector("bad", {**sink_config(secrets, "t"), "password": outside})
        with pytest.raises(ConnectRestError, match="has no key HOME"):  # not in the env allow-list
            rt.create_connector("bad", {**sink_config(secrets, "t"), "region": "${env:HOME}"})
        assert rt.connectors() == []


def test_worker_properties_are_resolved_when_the_worker_starts(bootstrap, unique, secrets) -> None:
    props = {**worker(secrets), "offset.flush.interval.ms": f"${{file:{secrets}/db.properties:user}}"}
    with pytest.raises(ConfigException, match="offset.flush.interval.ms"):  # 'connect' is no number
        ConnectRuntime(bootstrap, f"g-{unique}", props)
    with pytest.raises(ConfigException, match="config.providers.vault.class"):
        ConnectRuntime(bootstrap, f"g-{unique}", {"config.providers": "vault"})
