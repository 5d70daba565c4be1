"""The Schema Registry converters reaching a secured registry (HTTPS, mutual TLS, basic auth: the test
registry behind tests/registry_gateway.py) with settings as Kafka Connect users write them, and the errors
that name the setting at fault."""

from __future__ import annotations

import uuid

import pytest
from registry_gateway import RegistryGateway

from connect_magics.api.config import ConfigException
from connect_magics.api.data import INT64_SCHEMA
from connect_magics.api.errors import RetriableException
from connect_magics.converters import AvroConverter
from connect_magics.local.secured import generate_tls

pytestmark = [pytest.mark.registry]


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    return generate_tls(tmp_path_factory.mktemp("registry-tls"), clients=["connect"])


def round_trip(url: str, **settings: str) -> int:
    c = AvroConverter()
    c.configure({"schema.registry.url": url, **settings}, is_key=False)
    topic = f"sec-{uuid.uuid4().hex[:8]}"
    return c.to_connect_data(topic, c.from_connect_data(topic, INT64_SCHEMA, 42)).value


@pytest.mark.parametrize("store", ["JKS", "PKCS12", "PEM"])
def test_https_with_basic_auth_user_info_and_a_truststore(schema_registry, tls, store) -> None:
    with RegistryGateway(schema_registry.url, tls, {"fred": "s3cret"}) as gateway:
        trust = {f"schema.registry.{k}": v for k, v in tls.java_config(truststore_type=store).items()}
        assert round_trip(gateway.url, **{"basic.auth.credentials.source": "USER_INFO",
                                          "basic.auth.user.info": "fred:s3cret", **trust}) == 42


def test_credentials_in_the_url_and_sasl_inherit(schema_registry, tls) -> None:
    trust = {f"schema.registry.{k}": v for k, v in tls.java_config(truststore_type="PEM").items()}
    with RegistryGateway(schema_registry.url, tls, {"fred": "s3cret"}) as gateway:
        assert round_trip(gateway.url.replace("https://", "https://fred:s3cret@"), **trust) == 42
        jaas = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="fred" password="s3cret";'
        assert round_trip(gateway.url, **{"basic.auth.credentials.source": "SASL_INHERIT",
                                          "sasl.jaas.config": jaas, **trust}) == 42


def test_bad_credentials_and_untrusted_certificates_name_the_setting(schema_registry, tls, tmp_path) -> None:
    trust = {f"schema.registry.{k}": v for k, v in tls.java_config(truststore_type="PKCS12").items()}
    with RegistryGateway(schema_registry.url, tls, {"fred": "s3cret"}) as gateway:
        with pytest.raises(ConfigException, match="basic.auth.user.info") as refused:
            round_trip(gateway.url, **{"basic.auth.credentials.source": "USER_INFO",
                                       "basic.auth.user.info": "fred:wrong", **trust})
        assert "wrong" not in str(refused.value)
        with pytest.raises(ConfigException, match="basic.auth.user.info"):
            round_trip(gateway.url, **trust)  # no credentials at all
        other = generate_tls(tmp_path / "other-ca")
        untrusted = {f"schema.registry.{k}": v for k, v in other.java_config(truststore_type="JKS").items()}
        with pytest.raises(ConfigException, match="schema.registry.ssl.truststore.location"):
            round_trip(gateway.url, **{"basic.auth.credentials.source": "USER_INFO",
                                       "basic.auth.user.info": "fred:s3cret", **untrusted})
        with pytest.raises(ConfigException, match="schema.registry.ssl.truststore.password"):
            round_trip(gateway.url, **{**trust, "schema.registry.ssl.truststore.password": "nope"})


@pytest.mark.parametrize("keystore", ["PKCS12", "JKS", "PEM"])
def test_mutual_tls_with_a_client_keystore(schema_registry, tls, keystore) -> None:
    with RegistryGateway(schema_registry.url, tls, {"fred": "s3cret"}, mutual=True) as gateway:
        auth = {"basic.auth.credentials.source": "USER_INFO", "basic.auth.user.info": "fred:s3cret"}
        ssl = {f"schema.registry.{k}": v for k, v in tls.java_config("connect", truststore_type="PEM",
                                                                        keystore_type=keystore).items()}
        assert round_trip(gateway.url, **auth, **ssl) == 42
        trust_only = {k: v for k, v in ssl.items() if "truststore" in k}
        with pytest.raises((ConfigException, RetriableException)):
            round_trip(gateway.url, **auth, **trust_only)


def test_a_file_source_writes_avro_through_a_secured_registry_with_secrets_from_a_file(
        schema_registry, tls, bootstrap, unique, tmp_path, caplog) -> None:
    """Kafka Connect's converter settings, with the registry's password behind the file config provider: the
    placeholder stays in the stored config, the converter gets the value, the password is in no log."""
    import logging

    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext
    from helpers import wait_until
    from raw_topics import create_topics, read_records

    from connect_magics import ConnectRuntime

    caplog.set_level(logging.DEBUG, logger="connect_magics")
    secret = "registry-pa55-" + unique
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "registry.properties").write_text(f"user.info=fred:{secret}\n")
    source = tmp_path / "lines.txt"
    source.write_text("".join(f"line {i}\n" for i in range(20)))
    topic = f"lines-{unique}"
    create_topics(bootstrap, topic)
    trust = {f"value.converter.schema.registry.{k}": v for k, v in tls.java_config(truststore_type="JKS").items()}
    worker = {"config.providers": "file",
              "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
              "offset.flush.interval.ms": "300"}
    with RegistryGateway(schema_registry.url, tls, {"fred": secret}) as gateway, \
            ConnectRuntime(bootstrap, f"g-{unique}", worker) as rt:
        config = {"connector.class": "FileStreamSource", "file": str(source), "topic": topic,
                  "value.converter": "io.confluent.connect.avro.AvroConverter",
                  "value.converter.schema.registry.url": gateway.url,
                  "value.converter.basic.auth.credentials.source": "USER_INFO",
                  "value.converter.basic.auth.user.info": f"${{file:{secrets}/registry.properties:user.info}}",
                  **trust}
        rt.create_connector("lines", config)
        wait_until(lambda: len(read_records(bootstrap, topic)) >= 20, 60, message="20 records")
        assert rt.connector_config("lines")["value.converter.basic.auth.user.info"].startswith("${file:")
        client = SchemaRegistryClient({"url": gateway.url, "basic.auth.user.info": f"fred:{secret}",
                                       "ssl.ca.location": str(tls.ca_pem)})
        values = [AvroDeserializer(client)(v, SerializationContext(topic, MessageField.VALUE))
                  for _, v in read_records(bootstrap, topic)]
        assert sorted(values) == sorted(f"line {i}" for i in range(20))
    assert secret not in caplog.text
