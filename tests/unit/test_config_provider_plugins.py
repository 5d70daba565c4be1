"""The built-in config providers and the transformer, as pure logic (the runtime's use of them is in
tests/integration/test_config_providers.py). Databricks' ``dbutils`` is faked: it exists only on Databricks."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from connect_magics.api.config import ConfigException
from connect_magics.config_providers import DatabricksSecretsConfigProvider, FileConfigProvider
from connect_magics.runtime.config.config_transformer import ConfigTransformer
from connect_magics.security.redaction import redact


class FakeSecrets:
    def __init__(self, scopes: dict[str, dict[str, str]]) -> None:
        self.scopes = scopes

    def get(self, scope: str, key: str) -> str:
        return self.scopes[scope][key]

    def list(self, scope: str) -> list:
        return [SimpleNamespace(key=k) for k in self.scopes[scope]]


def test_databricks_secrets_resolve_scope_and_key() -> None:
    dbutils = SimpleNamespace(secrets=FakeSecrets({"kafka": {"password": "dbx-secret-1", "user": "connect-user"}}))
    transformer = ConfigTransformer({"databricks": DatabricksSecretsConfigProvider(dbutils)})
    assert transformer.transform({"password": "${databricks:kafka:password}"}) == {"password": "dbx-secret-1"}
    assert redact("password=dbx-secret-1") == "password=[hidden]"  # resolved for a sensitive key: hidden
    assert transformer.transform({"user": "${databricks:kafka:user}"}) == {"user": "connect-user"}
    assert redact("user connect-user") == "user connect-user"  # a user name is no secret
    with pytest.raises(ConfigException, match=r"no key other in kafka"):
        transformer.transform({"p": "${databricks:kafka:other}"})


def test_placeholders_of_unknown_providers_and_plain_text_stay() -> None:
    transformer = ConfigTransformer({})
    config = {"a": "${vault:secret/x:y}", "b": "costs $5", "c": "${not a placeholder"}
    assert transformer.transform(config) == config


def test_file_provider_paths_are_limited(tmp_path) -> None:
    (tmp_path / "ok.properties").write_text("k=v\n")
    provider = FileConfigProvider()
    provider.configure({"allowed.paths": str(tmp_path)})
    assert provider.get(str(tmp_path / "ok.properties"), {"k"}).data == {"k": "v"}
    with pytest.raises(ConfigException, match="not under allowed.paths"):
        provider.get(str(tmp_path / ".." / "elsewhere.properties"), {"k"})
    with pytest.raises(ConfigException, match="is not an absolute path"):
        FileConfigProvider().configure({"allowed.paths": "relative/dir"})


def test_restore_puts_placeholders_back_only_where_the_task_kept_the_value() -> None:
    raw = {"password": "${file:/s:p}", "topic": "t"}
    resolved = {"password": "pw-value", "topic": "t"}
    generated = {"password": "pw-value", "derived": "pw-value-2", "topic": "t"}
    assert ConfigTransformer({}).restore(raw, generated, resolved) == {
        "password": "${file:/s:p}", "derived": "pw-value-2", "topic": "t"}
