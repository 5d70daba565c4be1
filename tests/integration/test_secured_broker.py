"""The secured embedded broker (connect_magics.local.secured) against real clients: SASL/SCRAM and PLAIN, TLS
and mutual TLS with certificates made on the fly, StandardAuthorizer ACLs granted and revoked over the admin
listener, and the Java client configs (JKS, PKCS12, PEM) a Kafka Connect worker.properties would hold.

One secured broker for the module; each test uses topics and groups of its own.
"""

from __future__ import annotations

import logging
import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, Message, Producer
from confluent_kafka.admin import AclOperation, NewTopic, ResourceType
from cryptography import x509
from cryptography.hazmat.primitives.serialization import pkcs12
from helpers import wait_until

from connect_magics.local.jars import kafka_classpath
from connect_magics.local.java import find_java
from connect_magics.local.secured import SUPER_USER, SecuredBroker, generate_tls, keytool_executable

pytestmark = pytest.mark.broker

USERS = {"alice": "alice-secret", "bob": "bob-secret"}
#: librdkafka's log lines go to Python logging (pytest shows them on failure) instead of the terminal.
QUIET = {"logger": logging.getLogger("test_secured_broker.librdkafka"), "reconnect.backoff.ms": 200,
         "reconnect.backoff.max.ms": 1000}


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> SecuredBroker:
    broker = SecuredBroker(tmp_path_factory.mktemp("secured-broker"), users=USERS,
                           tls_clients=["alice", "bob"], heap="512m",
                           server_properties={"auto.create.topics.enable": "false"})
    broker.start()
    yield broker
    broker.stop()


def new_topic(broker: SecuredBroker, name: str) -> str:
    """Create ``name`` over the admin listener (as the super user)."""
    broker.admin().create_topics([NewTopic(name, 1, 1)])[name].result(30)
    return name


def produce(config: dict, topic: str, values: list[bytes], timeout: float = 30) -> list[KafkaError | None]:
    """Produce ``values`` and return each record's delivery error (None: delivered)."""
    results: list[KafkaError | None] = []
    producer = Producer({**config, **QUIET, "message.timeout.ms": int(timeout * 1000)})
    for value in values:
        producer.produce(topic, value, on_delivery=lambda err, msg: results.append(err))
    producer.flush(timeout + 5)
    assert len(results) == len(values), "not every record got a delivery report"
    return results


def consume(config: dict, topic: str, group: str, count: int, timeout: float = 30) -> list[bytes]:
    consumer = Consumer({**config, **QUIET, "group.id": group, "auto.offset.reset": "earliest",
                         "enable.auto.commit": False})
    consumer.subscribe([topic])
    got: list[bytes] = []
    errors: list[KafkaError] = []

    def read() -> bool:
        msg = consumer.poll(0.5)
        if msg is not None:
            (errors if msg.error() else got).append(msg.error() or msg.value())
        return len(got) >= count or bool(errors)

    try:
        wait_until(read, timeout=timeout, interval=0,
                   message=lambda: f"{count} records from {topic} ({len(got)} so far)")
        assert not errors, errors
    finally:
        consumer.close()
    return got


def first_error(config: dict, timeout: float = 20,
                which: Callable[[KafkaError], bool] = lambda e: e.code() != KafkaError._ALL_BROKERS_DOWN,
                ) -> KafkaError:
    """The first error that a producer on ``config`` reports through ``error_cb`` (connection and
    authentication errors) and ``which`` accepts, within ``timeout`` seconds."""
    errors: list[KafkaError] = []
    producer = Producer({**config, **QUIET, "error_cb": errors.append})

    def reported() -> KafkaError | None:
        producer.poll(0.2)
        return next((e for e in errors if which(e)), None)

    return wait_until(reported, timeout=timeout, interval=0,
                      message=lambda: f"an error from librdkafka (got {[e.str() for e in errors][:3]})")


def tls_refusal(error: KafkaError) -> bool:
    """The TLS handshake failed over the client's certificate (librdkafka says "bad certificate", "certificate
    required" or "unknown ca"; a connection closed by the broker may come first)."""
    return (error.code() in (KafkaError._TRANSPORT, KafkaError._SSL)
            and any(w in error.str() for w in ("certificate", "unknown ca")))


def test_listeners_and_the_admin_back_door(secured: SecuredBroker, unique: str) -> None:
    listeners = secured.listeners
    assert set(listeners) == {"PLAINTEXT", "SASL_PLAINTEXT", "SASL_SSL", "SSL"}
    assert len(set(listeners.values())) == 4
    assert listeners["PLAINTEXT"] == secured.bootstrap_servers == secured.listener("plaintext")
    with pytest.raises(ValueError, match="Unknown listener"):
        secured.listener("SASL_SCRAM")
    # The admin listener needs no credentials: it is the super user, which no ACL restricts.
    topic = new_topic(secured, f"admin-{unique}")
    assert produce({"bootstrap.servers": secured.bootstrap_servers}, topic, [b"by the harness"]) == [None]
    props = (secured.data_dir / "server.properties").read_text()
    assert f"super.users={SUPER_USER}" in props
    assert "allow.everyone.if.no.acl.found=false" in props
    assert "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer" in props


def test_scram_sha_512_over_sasl_ssl_produces_and_consumes_with_acls(secured: SecuredBroker, unique: str) -> None:
    topic, group = new_topic(secured, f"scram-{unique}"), f"scram-group-{unique}"
    config = {"bootstrap.servers": secured.listener("SASL_SSL"), "security.protocol": "SASL_SSL",
              "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "alice", "sasl.password": "alice-secret",
              "ssl.ca.location": str(secured.tls.ca_pem)}
    assert secured.client_config("SASL_SSL", "alice", mechanism="SCRAM-SHA-512") == config
    created = secured.grant("User:alice", "TOPIC", topic, operation=["WRITE", "READ", "DESCRIBE"])
    secured.grant("User:alice", ResourceType.GROUP, group, "LITERAL", AclOperation.READ)
    assert len(created) == 3
    assert {(b.restype, b.name, b.operation) for b in secured.acls("User:alice")} >= {
        (ResourceType.TOPIC, topic, AclOperation.WRITE), (ResourceType.GROUP, group, AclOperation.READ)}

    values = [f"record-{i}".encode() for i in range(5)]
    assert produce(config, topic, values) == [None] * 5
    assert consume(config, topic, group, 5) == values


@pytest.mark.parametrize("mechanism, expected", [
    ("SCRAM-SHA-512", "invalid credentials with SASL mechanism SCRAM-SHA-512"),
    ("PLAIN", "Invalid username or password"),
])
def test_a_wrong_password_fails_authentication_quickly(secured: SecuredBroker, mechanism: str,
                                                      expected: str) -> None:
    config = secured.client_config("SASL_SSL", "alice", password="not-alice-secret", mechanism=mechanism)
    error = first_error(config, timeout=20)
    assert error.code() == KafkaError._AUTHENTICATION, error
    assert "Authentication failed" in error.str() and expected in error.str(), error.str()


def test_a_consumer_without_read_acl_gets_topic_authorization_failed(secured: SecuredBroker, unique: str) -> None:
    topic, group = new_topic(secured, f"noread-{unique}"), f"noread-group-{unique}"
    assert produce({"bootstrap.servers": secured.bootstrap_servers}, topic, [b"secret"]) == [None]
    secured.grant("User:bob", "TOPIC", topic, operation="DESCRIBE")  # may see the topic, not read it
    secured.grant("User:bob", "GROUP", f"noread-group-{unique}", "PREFIXED", "READ")
    config = {"bootstrap.servers": secured.listener("SASL_SSL"), "security.protocol": "SASL_SSL",
              "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "bob", "sasl.password": "bob-secret",
              "ssl.ca.location": str(secured.tls.ca_pem)}
    consumer = Consumer({**config, **QUIET, "group.id": group, "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    try:
        def first_message() -> list[Message]:  # a record or an error (in a list: a Message may be falsy)
            msg = consumer.poll(0.5)
            eof = msg is not None and msg.error() is not None and msg.error().code() == KafkaError._PARTITION_EOF
            return [msg] if msg is not None and not eof else []

        [msg] = wait_until(first_message, timeout=30, interval=0, message="an authorization error")
        assert msg.error() is not None, f"read {msg.value()!r} without a READ ACL"
        assert msg.error().code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, msg.error()
    finally:
        consumer.close()

    secured.grant("User:bob", "TOPIC", topic, operation="READ")  # now the same consumer config reads
    assert consume(config, topic, f"{group}-2", 1) == [b"secret"]


def test_revoke_takes_write_away(secured: SecuredBroker, unique: str) -> None:
    topic = new_topic(secured, f"revoke-{unique}")
    config = secured.client_config("SASL_SSL", "bob", mechanism="SCRAM-SHA-256")
    secured.grant("User:bob", "TOPIC", topic, operation=["WRITE", "DESCRIBE"])
    assert produce(config, topic, [b"allowed"]) == [None]
    deleted = secured.revoke("User:bob", "TOPIC", topic, operation="WRITE")
    assert [b.operation for b in deleted] == [AclOperation.WRITE]
    errors = produce(config, topic, [b"denied"], timeout=15)
    assert errors[0] is not None and errors[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, errors


@pytest.mark.parametrize("listener, mechanism", [
    ("SASL_SSL", "PLAIN"), ("SASL_PLAINTEXT", "PLAIN"), ("SASL_PLAINTEXT", "SCRAM-SHA-256"),
])
def test_plain_and_scram_sha_256(secured: SecuredBroker, unique: str, listener: str, mechanism: str) -> None:
    topic = new_topic(secured, f"{listener.lower()}-{mechanism.lower()}-{unique}")
    secured.grant("User:alice", "TOPIC", topic, operation="WRITE")
    config = {"bootstrap.servers": secured.listener(listener), "security.protocol": listener,
              "sasl.mechanism": mechanism, "sasl.username": "alice", "sasl.password": "alice-secret"}
    if listener == "SASL_SSL":
        config["ssl.ca.location"] = str(secured.tls.ca_pem)
    assert produce(config, topic, [b"hello"]) == [None]


def test_mutual_tls_with_the_client_pem(secured: SecuredBroker, unique: str) -> None:
    topic, group = new_topic(secured, f"mtls-{unique}"), f"mtls-group-{unique}"
    alice = secured.tls.client("alice")
    config = {"bootstrap.servers": secured.listener("SSL"), "security.protocol": "SSL",
              "ssl.ca.location": str(secured.tls.ca_pem), "ssl.certificate.location": str(alice.cert_pem),
              "ssl.key.location": str(alice.key_pem)}
    assert secured.client_config("SSL", client="alice") == config
    # The certificate's CN=alice is the principal User:alice (ssl.principal.mapping.rules).
    secured.grant("User:alice", "TOPIC", topic, operation=["WRITE", "READ"])
    secured.grant("User:alice", "GROUP", group, operation="READ")
    assert produce(config, topic, [b"over mTLS"]) == [None]
    assert consume(config, topic, group, 1) == [b"over mTLS"]
    # The same key encrypted, with ssl.key.password.
    encrypted = {**config, "ssl.key.location": str(alice.key_pem_encrypted), "ssl.key.password": alice.password}
    assert produce(encrypted, topic, [b"encrypted key"]) == [None]
    # bob's certificate authenticates, but User:bob has no ACL on the topic.
    errors = produce(secured.client_config("SSL", client="bob"), topic, [b"bob"], timeout=15)
    assert errors[0] is not None and errors[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, errors


def test_mutual_tls_without_a_client_certificate_fails(secured: SecuredBroker) -> None:
    config = {"bootstrap.servers": secured.listener("SSL"), "security.protocol": "SSL",
              "ssl.ca.location": str(secured.tls.ca_pem)}
    error = first_error(config, timeout=20, which=tls_refusal)
    assert "ssl" in error.str().lower(), error.str()


def test_a_certificate_from_another_ca_is_refused(secured: SecuredBroker, tmp_path: Path) -> None:
    other = generate_tls(tmp_path / "other-ca", clients=["alice"])
    config = {"bootstrap.servers": secured.listener("SSL"), "security.protocol": "SSL",
              "ssl.ca.location": str(secured.tls.ca_pem), **other.client("alice").librdkafka_config()}
    first_error(config, timeout=20, which=tls_refusal)


def test_keystores_and_truststores_are_valid(secured: SecuredBroker) -> None:
    tls = secured.tls
    keytool = keytool_executable()

    def listing(path: Path, store_type: str) -> str:
        out = subprocess.run([keytool, "-list", "-keystore", str(path), "-storetype", store_type,
                              "-storepass", tls.password], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stdout + out.stderr
        return out.stdout

    truststore = listing(tls.truststore_jks, "JKS")
    assert "Keystore type: JKS" in truststore and "contains 1 entry" in truststore, truststore
    assert "trustedCertEntry" in truststore
    assert "trustedCertEntry" in listing(tls.truststore_p12, "PKCS12")
    for identity in (tls.broker, tls.client("alice")):
        jks = listing(identity.keystore_jks, "JKS")
        assert "Keystore type: JKS" in jks and "PrivateKeyEntry" in jks, jks
        assert "PrivateKeyEntry" in listing(identity.keystore_p12, "PKCS12")
    key, cert, chain = pkcs12.load_key_and_certificates(tls.client("alice").keystore_p12.read_bytes(),
                                                        tls.password.encode())
    assert key is not None and cert.subject.rfc4514_string() == "CN=alice"
    assert [c.subject for c in chain] == [x509.load_pem_x509_certificate(tls.ca_pem.read_bytes()).subject]
    broker_cert = x509.load_pem_x509_certificate(tls.broker.cert_pem.read_bytes())
    names = broker_cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["localhost"]
    assert [str(ip) for ip in names.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    # Made once per data directory: asking again gives the same CA and stores.
    again = generate_tls(tls.directory, ["alice", "bob"])
    assert again == tls and again.ca_pem.read_bytes() == tls.ca_pem.read_bytes()


JAVA_CHECK = textwrap.dedent("""\
    import java.io.FileReader;
    import java.util.Properties;
    import java.util.concurrent.TimeUnit;
    import org.apache.kafka.clients.admin.Admin;

    /** Connects an AdminClient with each properties file given and prints OK or the root cause. */
    public class SecuredClientCheck {
        public static void main(String[] args) throws Exception {
            for (String path : args) {
                Properties props = new Properties();
                try (FileReader reader = new FileReader(path)) { props.load(reader); }
                props.put("request.timeout.ms", "10000");
                props.put("default.api.timeout.ms", "20000");
                try (Admin admin = Admin.create(props)) {
                    admin.describeCluster().clusterId().get(25, TimeUnit.SECONDS);
                    System.out.println(path + " OK");
                } catch (Exception e) {
                    Throwable cause = e;
                    while (cause.getCause() != null) cause = cause.getCause();
                    System.out.println(path + " " + cause.getClass().getSimpleName() + ": " + cause.getMessage());
                }
            }
        }
    }
    """)


def test_java_clients_accept_the_worker_properties(secured: SecuredBroker, tmp_path: Path) -> None:
    """What a Kafka Connect worker.properties holds (sasl.jaas.config, ssl.truststore.* and ssl.keystore.* in JKS,
    PKCS12 and PEM) connects a Java Kafka client, the one Kafka Connect's worker uses."""
    cases = {
        "scram-jks": secured.java_client_config("SASL_SSL", "alice", mechanism="SCRAM-SHA-512"),
        "plain-p12": secured.java_client_config("SASL_SSL", "bob", mechanism="PLAIN", truststore_type="PKCS12"),
        "scram256-plaintext": secured.java_client_config("SASL_PLAINTEXT", "alice", mechanism="SCRAM-SHA-256"),
        "mtls-p12": secured.java_client_config("SSL", client="alice", keystore_type="PKCS12"),
        "mtls-jks": secured.java_client_config("SSL", client="alice", keystore_type="JKS"),
        "mtls-pem": secured.java_client_config("SSL", client="bob", keystore_type="PEM", truststore_type="PEM"),
        "wrong-password": secured.java_client_config("SASL_SSL", "alice", password="nope"),
    }
    assert cases["scram-jks"]["sasl.jaas.config"] == (
        'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" '
        'password="alice-secret";')
    assert cases["scram-jks"]["ssl.truststore.type"] == "JKS"
    files = []
    for name, config in cases.items():
        path = tmp_path / f"{name}.properties"
        path.write_text("".join(f"{k}={v}\n" for k, v in config.items()))
        files.append(str(path))
    (tmp_path / "SecuredClientCheck.java").write_text(JAVA_CHECK)
    (tmp_path / "log4j2.properties").write_text("rootLogger.level = OFF\n")
    java = find_java()
    out = subprocess.run([java.executable, "-Xmx256m", "-XX:TieredStopAtLevel=1",
                          f"-Dlog4j2.configurationFile={tmp_path / 'log4j2.properties'}",
                          "-cp", kafka_classpath(secured.kafka_version, java.executable),
                          str(tmp_path / "SecuredClientCheck.java"), *files],
                         capture_output=True, text=True, timeout=180)
    results = {Path(line.split(" ", 1)[0]).stem: line.split(" ", 1)[1]
               for line in out.stdout.splitlines() if line.startswith(str(tmp_path))}
    assert set(results) == set(cases), out.stdout + out.stderr[-3000:]
    for name, result in results.items():
        if name == "wrong-password":
            assert result.startswith("SaslAuthenticationException") and "SCRAM-SHA-512" in result, result
        else:
            assert result == "OK", f"{name}: {result}"


def test_users_added_and_removed_at_run_time_and_kept_by_a_restart(secured: SecuredBroker, unique: str) -> None:
    topic = new_topic(secured, f"carol-{unique}")
    secured.grant("User:carol", "TOPIC", topic, operation="WRITE")
    secured.add_user("carol", "carol-secret")  # SCRAM at once
    scram = secured.client_config("SASL_SSL", "carol", mechanism="SCRAM-SHA-512")
    assert produce(scram, topic, [b"scram"]) == [None]

    ports, ca = secured.listeners, secured.tls.ca_pem.read_bytes()
    secured.restart()  # PLAIN users come from the listener's JAAS config: carol's is there after a restart
    assert secured.listeners == ports and secured.tls.ca_pem.read_bytes() == ca
    plain = secured.client_config("SASL_SSL", "carol", mechanism="PLAIN")
    assert produce(plain, topic, [b"plain"]) == [None]  # the ACL survived the restart too

    secured.remove_user("carol")
    error = first_error({**scram, "sasl.password": "carol-secret"}, timeout=20)
    assert error.code() == KafkaError._AUTHENTICATION, error


def test_bad_arguments_are_refused_with_the_reason(secured: SecuredBroker, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="TYPE:NAME"):
        secured.grant("alice", "TOPIC", "t")
    with pytest.raises(ValueError, match="Unknown operation 'READS'"):
        secured.grant("User:alice", "TOPIC", "t", operation="READS")
    with pytest.raises(KeyError, match="Unknown user 'mallory'"):
        secured.client_config("SASL_SSL", "mallory")
    with pytest.raises(ValueError, match="ANONYMOUS"):
        SecuredBroker(tmp_path, users={"ANONYMOUS": "x"})
    with pytest.raises(ValueError, match="quote"):
        SecuredBroker(tmp_path, users={"eve": 'a"b'})
