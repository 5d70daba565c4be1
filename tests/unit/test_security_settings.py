"""Kafka's Java client security settings turned into librdkafka's (connect_magics/security): JAAS lines of the
four login modules, JKS / PKCS12 / PEM stores, refused and ignored keys, and errors that name the key and never
show a secret."""

from __future__ import annotations

import datetime
import subprocess
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

from connect_magics.api.config import ConfigException
from connect_magics.runtime.config.connector_config import client_overrides
from connect_magics.runtime.config.worker_config import WorkerConfig
from connect_magics.security import librdkafka_settings
from connect_magics.security.jaas import jaas_settings
from connect_magics.security.stores import keytool

SECRET = "n0t-in-any-message"
SCRAM = f'org.apache.kafka.common.security.scram.ScramLoginModule required username="connect" password="{SECRET}";'


@pytest.mark.parametrize("line, expected", [
    (SCRAM, {"sasl.username": "connect", "sasl.password": SECRET}),
    ('org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p\\"q";',
     {"sasl.username": "u", "sasl.password": 'p"q'}),
    ("org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId='x' ;".replace("'", '"'),
     {"sasl.oauthbearer.method": "oidc", "sasl.oauthbearer.client.id": "x", "sasl.oauthbearer.client.secret": ""}),
    ('org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="id" '
     'clientSecret="sec" scope="kafka";',
     {"sasl.oauthbearer.method": "oidc", "sasl.oauthbearer.client.id": "id",
      "sasl.oauthbearer.client.secret": "sec", "sasl.oauthbearer.scope": "kafka"}),
    ('org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required '
     'unsecuredLoginStringClaim_sub="alice";',
     {"enable.sasl.oauthbearer.unsecure.jwt": "true", "sasl.oauthbearer.config": "principal=alice"}),
    ('com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true '
     'keyTab="/etc/security/connect.keytab" principal="connect/host@EXAMPLE.COM" serviceName="kafka";',
     {"sasl.kerberos.keytab": "/etc/security/connect.keytab", "sasl.kerberos.principal": "connect/host@EXAMPLE.COM",
      "sasl.kerberos.service.name": "kafka"}),
])
def test_each_login_module_becomes_librdkafka_settings(line: str, expected: dict) -> None:
    assert jaas_settings(line) == expected


@pytest.mark.parametrize("line, reason", [
    (SCRAM.rstrip(";"), "must end with ';'"),
    (SCRAM + SCRAM, "more than one login module"),
    ("org.example.Custom required a=1;", "has no librdkafka equivalent"),
    (f'org.apache.kafka.common.security.plain.PlainLoginModule username="u" password="{SECRET}";', "a flag of"),
    ('org.apache.kafka.common.security.scram.ScramLoginModule required username="u";', "needs the option password"),
])
def test_a_bad_jaas_line_names_the_key_and_hides_the_value(line: str, reason: str) -> None:
    with pytest.raises(ConfigException, match=reason) as info:
        librdkafka_settings({"sasl.jaas.config": line})
    assert info.value.name == "sasl.jaas.config" and SECRET not in str(info.value)


def test_librdkafka_names_pass_through_and_java_names_are_translated() -> None:
    native = {"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.username": "u", "sasl.password": "p",
              "ssl.ca.location": "/ca.pem"}
    assert librdkafka_settings(native) == native
    out = librdkafka_settings({"sasl.jaas.config": SCRAM, "ssl.endpoint.identification.algorithm": "",
                               "ssl.enabled.protocols": "TLSv1.2,TLSv1.3", "ssl.protocol": "TLSv1.3",
                               "sasl.login.refresh.window.factor": "0.8",
                               "sasl.login.callback.handler.class":
                                   "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"})
    assert out == {"ssl.endpoint.identification.algorithm": "none", "sasl.username": "connect",
                   "sasl.password": SECRET}


@pytest.mark.parametrize("key, value, reason", [
    ("sasl.login.callback.handler.class", "com.example.MyHandler", "librdkafka logs in by itself"),
    ("sasl.client.callback.handler.class", "com.example.H", "no client callback handlers"),
    ("ssl.engine.factory.class", "com.example.Engine", "OpenSSL"),
    ("ssl.enabled.protocols", "TLSv1.1,TLSv1.2", "TLSv1.1 cannot be enabled"),
    ("ssl.cipher.suites", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "OpenSSL's cipher names"),
    ("ssl.truststore.type", "BCFKS", "JKS, PKCS12 or PEM"),
])
def test_what_librdkafka_cannot_do_is_refused_naming_the_key(key: str, value: str, reason: str) -> None:
    settings = {key: value}
    if key == "ssl.truststore.type":
        settings["ssl.truststore.location"] = "/somewhere"
    with pytest.raises(ConfigException, match=reason) as info:
        librdkafka_settings(settings)
    assert info.value.name == key


def certificate(tmp_path: Path, name: str) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    return cert, key


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CONNECT_MAGICS_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "stores"


def test_a_pkcs12_truststore_becomes_a_private_pem_file(tmp_path: Path, cache: Path) -> None:
    cert, _ = certificate(tmp_path, "test-ca")
    store = tmp_path / "truststore.p12"
    store.write_bytes(pkcs12.serialize_java_truststore(
        [pkcs12.PKCS12Certificate(cert, b"ca")], serialization.BestAvailableEncryption(b"trust-pw")))
    out = librdkafka_settings({"ssl.truststore.location": str(store), "ssl.truststore.password": "trust-pw",
                               "ssl.truststore.type": "PKCS12"})
    pem = Path(out["ssl.ca.location"])
    assert pem.parent == cache and oct(pem.stat().st_mode & 0o777) == "0o600"
    assert x509.load_pem_x509_certificate(pem.read_bytes()) == cert
    with pytest.raises(ConfigException, match="cannot open the PKCS12 trust store") as info:
        librdkafka_settings({"ssl.truststore.location": str(store), "ssl.truststore.password": "wrong",
                             "ssl.truststore.type": "PKCS12"})
    assert info.value.name == "ssl.truststore.password" and "wrong" not in str(info.value)


def test_jks_stores_are_converted_with_keytool(tmp_path: Path, cache: Path) -> None:
    cert, key = certificate(tmp_path, "client")
    p12 = tmp_path / "client.p12"
    p12.write_bytes(pkcs12.serialize_key_and_certificates(b"client", key, cert, None,
                                                          serialization.BestAvailableEncryption(b"store-pw")))
    jks = tmp_path / "client.jks"
    subprocess.run([keytool(), "-importkeystore", "-noprompt", "-srckeystore", str(p12), "-srcstoretype", "PKCS12",
                    "-srcstorepass", "store-pw", "-destkeystore", str(jks), "-deststoretype", "JKS",
                    "-deststorepass", "store-pw"], check=True, capture_output=True)
    # the same JKS as a trust store (its certificate) and as a key store (its key and certificate)
    out = librdkafka_settings({"ssl.truststore.location": str(jks), "ssl.truststore.password": "store-pw",
                               "ssl.keystore.location": str(jks), "ssl.keystore.password": "store-pw"})
    assert x509.load_pem_x509_certificate(Path(out["ssl.ca.location"]).read_bytes()) == cert
    converted = pkcs12.load_pkcs12(Path(out["ssl.keystore.location"]).read_bytes(), b"store-pw")
    assert converted.cert.certificate == cert and out["ssl.keystore.password"] == "store-pw"
    with pytest.raises(ConfigException, match="keytool cannot read the JKS store"):
        librdkafka_settings({"ssl.truststore.location": str(jks), "ssl.truststore.password": "wrong-pw"})


def test_pem_stores_map_to_librdkafka_files_and_strings() -> None:
    assert librdkafka_settings({"ssl.keystore.type": "PEM", "ssl.keystore.location": "/k.pem",
                                "ssl.key.password": "kp"}) == {
        "ssl.key.location": "/k.pem", "ssl.certificate.location": "/k.pem", "ssl.key.password": "kp"}
    assert librdkafka_settings({"ssl.keystore.type": "PEM", "ssl.keystore.key": "KEY",
                                "ssl.keystore.certificate.chain": "CHAIN", "ssl.truststore.type": "PEM",
                                "ssl.truststore.certificates": "CA"}) == {
        "ssl.key.pem": "KEY", "ssl.certificate.pem": "CHAIN", "ssl.ca.pem": "CA"}


def test_worker_properties_are_translated_for_every_client_and_errors_name_the_prefixed_key() -> None:
    props = {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": SCRAM,
             "producer.security.protocol": "SASL_SSL", "producer.sasl.jaas.config": SCRAM,
             "consumer.sasl.jaas.config": SCRAM, "admin.sasl.jaas.config": SCRAM}
    wc = WorkerConfig("127.0.0.1:9092", "g", props)
    for kind in (None, "producer", "consumer", "admin"):
        assert wc.client_config(kind)["sasl.username"] == "connect"
        assert "sasl.jaas.config" not in wc.client_config(kind)
    with pytest.raises(ConfigException, match="consumer.sasl.jaas.config") as info:
        WorkerConfig("127.0.0.1:9092", "g", {"consumer.sasl.jaas.config": SCRAM.rstrip(";")})
    assert SECRET not in str(info.value)


def test_the_principal_policy_lets_a_connector_bring_its_own_jaas_line() -> None:
    own = SCRAM.replace('"connect"', '"orders-connector"')
    assert client_overrides({"producer.override.sasl.jaas.config": own}, "producer", "Principal") == {
        "sasl.username": "orders-connector", "sasl.password": SECRET}
    with pytest.raises(ConfigException, match="producer.override.sasl.jaas.config"):
        client_overrides({"producer.override.sasl.jaas.config": "nonsense"}, "producer", "Principal")
