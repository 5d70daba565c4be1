"""Issue 25, first "Must show": one Kafka Connect worker.properties per security set-up, as a deployment has it,
runs unchanged on Apache Kafka Connect's Java worker, on ``connect-magics worker --config FILE`` and as
``worker_config`` of ``ConnectRuntime``, and the same FileStream pipeline (a file of 1,000 lines -> topic ->
a file) copies every line on each.

The cases, on one :class:`~connect_magics.local.secured.SecuredBroker` (StandardAuthorizer,
``allow.everyone.if.no.acl.found=false``), each with a worker principal of its own and generous ACLs on
its group's prefix (least privilege is docs/security.md's and another module's business):

1. SASL_SSL, SCRAM-SHA-512, a JKS truststore (its type left to Java's default), the password and the
   truststore's password from ``${file:...}`` with ``config.providers=file``; the JAAS line over two lines;
2. SASL_SSL, PLAIN, a PKCS12 truststore;
3. mutual TLS with a PKCS12 keystore (JKS truststore);
4. mutual TLS with PEM files (``ssl.keystore.type=PEM``, ``ssl.truststore.type=PEM``);
5. ``connector.client.config.override.policy=Principal``: the connectors bring their own user in
   ``producer.override.sasl.jaas.config`` / ``consumer.override.sasl.jaas.config`` (its password from the
   file provider too); that user has the ACLs for the data topic and the sink's group, the worker's
   principal has none there.

The three surfaces take turns on a case's file (they share its group, internal topics and REST port);
each runs its own connectors, data topic and files, and deletes its connectors at the end.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest
from confluent_kafka.admin import NewTopic
from interop.secured_properties import (
    FILE_PROVIDER,
    PLAIN_MODULE,
    SCRAM_MODULE,
    RestSurface,
    RuntimeSurface,
    Surface,
    WorkerFile,
    cli_worker,
    grant_worker,
    jaas,
    placeholder,
    run_file_pipeline,
    worker_properties_text,
    write_secrets,
)

from connect_magics import ConnectRuntime
from connect_magics.local.broker import free_port
from connect_magics.local.connect_worker import JavaConnectWorker
from connect_magics.local.secured import SecuredBroker

pytestmark = [pytest.mark.broker, pytest.mark.slow]

#: Random passwords: a grep for them means something.
USERS = {name: f"{name}-{secrets.token_hex(8)}"
         for name in ("scram-worker", "plain-worker", "override-worker", "connector-user")}
TLS_CLIENTS = ["p12-worker", "pem-worker"]
#: The connectors' own user in case 5.
CONNECTOR_USER = "connector-user"
CLI_LOG = "connect-magics-worker.log"
PRINCIPAL_CASE = "principal-override-policy"


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecuredBroker]:
    broker = SecuredBroker(tmp_path_factory.mktemp("secured-worker-properties"), users=USERS,
                           tls_clients=TLS_CLIENTS, heap="512m",
                           server_properties={"auto.create.topics.enable": "false"})
    broker.start()
    yield broker
    broker.stop()


# -- the five worker.properties ----------------------------------------------------------------------------

def scram_jks_file_provider(broker: SecuredBroker, directory: Path) -> WorkerFile:
    user, group, port = "scram-worker", f"scram-{secrets.token_hex(3)}", free_port()
    secrets_file = write_secrets(directory / "secrets.properties",
                                 {"password": USERS[user], "truststore.password": broker.tls.password})
    security = [("security.protocol", "SASL_SSL"), ("sasl.mechanism", "SCRAM-SHA-512"),
                ("sasl.jaas.config", jaas(SCRAM_MODULE, user, placeholder(secrets_file, "password"))),
                ("ssl.truststore.location", str(broker.tls.truststore_jks)),  # JKS: Java's default type
                ("ssl.truststore.password", placeholder(secrets_file, "truststore.password"))]
    text = worker_properties_text("SASL_SSL with SCRAM-SHA-512, secrets from a file", broker.listener("SASL_SSL"),
                                  group, port, security, providers={"file": FILE_PROVIDER}, wrap_jaas=True)
    grant_worker(broker, f"User:{user}", group)
    return _write(directory, "scram", group, f"User:{user}", port, text, [USERS[user], broker.tls.password],
                  secrets_file)


def sasl_plain(broker: SecuredBroker, directory: Path) -> WorkerFile:
    user, group, port = "plain-worker", f"plain-{secrets.token_hex(3)}", free_port()
    security = [("security.protocol", "SASL_SSL"), ("sasl.mechanism", "PLAIN"),
                ("sasl.jaas.config", jaas(PLAIN_MODULE, user, USERS[user])),
                *broker.tls.java_config(truststore_type="PKCS12").items()]
    text = worker_properties_text("SASL_SSL with PLAIN", broker.listener("SASL_SSL"), group, port, security)
    grant_worker(broker, f"User:{user}", group)
    return _write(directory, "plain", group, f"User:{user}", port, text)


def mtls(keystore_type: str, client: str, truststore_type: str) -> Callable[[SecuredBroker, Path], WorkerFile]:
    def build(broker: SecuredBroker, directory: Path) -> WorkerFile:
        group, port = f"mtls-{keystore_type.lower()}-{secrets.token_hex(3)}", free_port()
        security = [("security.protocol", "SSL"),
                    *broker.tls.java_config(client, truststore_type=truststore_type,
                                            keystore_type=keystore_type).items()]
        text = worker_properties_text(f"mutual TLS, a {keystore_type} keystore", broker.listener("SSL"), group,
                                      port, security)
        grant_worker(broker, f"User:{client}", group)  # the certificate's CN is the principal
        return _write(directory, f"mtls-{keystore_type.lower()}", group, f"User:{client}", port, text)

    return build


def principal_override(broker: SecuredBroker, directory: Path) -> WorkerFile:
    user, group, port = "override-worker", f"override-{secrets.token_hex(3)}", free_port()
    secrets_file = write_secrets(directory / "secrets.properties", {"connector.password": USERS[CONNECTOR_USER]})
    security = [("security.protocol", "SASL_SSL"), ("sasl.mechanism", "SCRAM-SHA-256"),
                ("sasl.jaas.config", jaas(SCRAM_MODULE, user, USERS[user])),
                *broker.tls.java_config(truststore_type="JKS").items()]
    text = worker_properties_text("SASL_SSL with SCRAM-SHA-256; connectors may bring their own principal",
                                  broker.listener("SASL_SSL"), group, port, security,
                                  extra=[("connector.client.config.override.policy", "Principal")],
                                  providers={"file": FILE_PROVIDER})
    grant_worker(broker, f"User:{user}", group, sink_groups=False)
    return _write(directory, "override", group, f"User:{user}", port, text, [USERS[CONNECTOR_USER]], secrets_file)


def _write(directory: Path, case: str, group: str, principal: str, port: int, text: str,
           hidden: list[str] | None = None, secrets_file: Path | None = None) -> WorkerFile:
    path = directory / "worker.properties"
    path.write_text(text)
    return WorkerFile(case, path, group, principal, port, list(hidden or []), secrets_file)


CASES: dict[str, Callable[[SecuredBroker, Path], WorkerFile]] = {
    "sasl-ssl-scram-sha-512-jks-file-provider": scram_jks_file_provider,
    "sasl-ssl-plain": sasl_plain,
    "mtls-pkcs12-keystore": mtls("PKCS12", "p12-worker", "JKS"),
    "mtls-pem-files": mtls("PEM", "pem-worker", "PEM"),
    PRINCIPAL_CASE: principal_override,
}
SURFACES = ("java", "connect-magics-worker", "connect-runtime")


@pytest.fixture(scope="module")
def worker_file(secured: SecuredBroker, tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], WorkerFile]:
    """The worker.properties of a case (written, and its worker's ACLs granted, on first use)."""
    made: dict[str, WorkerFile] = {}

    def get(case: str) -> WorkerFile:
        if case not in made:
            made[case] = CASES[case](secured, tmp_path_factory.mktemp(case))
        return made[case]

    return get


# -- the surfaces ----------------------------------------------------------------------------------------

@contextmanager
def java_worker(worker: WorkerFile, directory: Path) -> Iterator[tuple[Surface, Callable[[], str]]]:
    java = JavaConnectWorker.from_file(worker.path, directory / "java-worker")
    assert java.url == worker.url
    with java:
        yield RestSurface("Apache Kafka Connect", java.url), java.log_tail


@contextmanager
def our_cli_worker(worker: WorkerFile, directory: Path) -> Iterator[tuple[Surface, Callable[[], str]]]:
    log = directory / CLI_LOG
    with cli_worker(worker, log) as surface:
        yield surface, lambda: log.read_text(errors="replace")[-4000:]


@contextmanager
def our_runtime(worker: WorkerFile, directory: Path) -> Iterator[tuple[Surface, Callable[[], str]]]:
    props = worker.properties()  # parsed with jproperties, given whole as worker_config
    with ConnectRuntime(props["bootstrap.servers"], props["group.id"], props) as rt:
        yield RuntimeSurface("ConnectRuntime", rt), lambda: "(in process: see the captured log)"


RUNNERS: dict[str, Callable[[WorkerFile, Path], AbstractContextManager[tuple[Surface, Callable[[], str]]]]] = {
    "java": java_worker, "connect-magics-worker": our_cli_worker, "connect-runtime": our_runtime}


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- the tests -------------------------------------------------------------------------------------------

def _params() -> list:
    params = []
    for case in CASES:
        for surface in SURFACES:
            params.append(pytest.param(case, surface, id=f"{case}-{surface}"))
    return params


@pytest.mark.parametrize("case, surface", _params())
def test_one_worker_properties_runs_the_file_pipeline(case: str, surface: str, secured: SecuredBroker,
                                                      worker_file: Callable[[str], WorkerFile],
                                                      tmp_path: Path) -> None:
    worker = worker_file(case)
    before = digest(worker.path)
    for secret in worker.secrets:  # what a config provider supplies is not in the file
        assert secret not in worker.text
    name = f"{worker.group}-{surface}"
    overrides: dict[str, dict[str, str]] = {}
    topic, create_topic = name, True  # the worker's admin client creates it (KIP-158)
    if case == PRINCIPAL_CASE:
        # The connectors' topic and groups are outside the worker's ACLs; the connectors' own user has them.
        topic, create_topic = f"own-{worker.group}-{surface}", False
        secured.admin().create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
        secured.grant(f"User:{CONNECTOR_USER}", "TOPIC", topic, operation=["READ", "WRITE", "DESCRIBE"])
        secured.grant(f"User:{CONNECTOR_USER}", "GROUP", f"connect-{name}", "PREFIXED", "READ")
        if surface != "java":  # our sink tasks commit through a transactional id of their own, claimed with the
            # connector's credentials (docs/security.md, "Connectors with their own principal")
            secured.grant(f"User:{CONNECTOR_USER}", "TRANSACTIONAL_ID", f"{worker.group}-{name}", "PREFIXED",
                          ["WRITE", "DESCRIBE"])
        assert not [acl for acl in secured.acls(worker.principal)
                    if acl.name in (topic, "*") or acl.name.startswith(("own-", f"connect-{worker.group}"))]
        assert worker.secrets_file is not None
        credentials = jaas(SCRAM_MODULE, CONNECTOR_USER, placeholder(worker.secrets_file, "connector.password"))
        overrides = {"source_extra": {"producer.override.sasl.jaas.config": credentials},
                     "sink_extra": {"consumer.override.sasl.jaas.config": credentials}}
    with RUNNERS[surface](worker, tmp_path) as (api, log_tail):
        try:
            result = run_file_pipeline(api, name, topic, tmp_path, secured.admin(), create_topic=create_topic,
                                       **overrides)
        except AssertionError as e:
            raise AssertionError(f"{e}\n--- tail of the worker's log ---\n{log_tail()}") from None
    assert len(result.lines_out) == result.lines_in
    assert result.lines_out == result.expected  # every line, once, in order
    assert digest(worker.path) == before  # the file ran as written
    if surface == "connect-magics-worker":  # the secrets the provider resolved are in none of its log lines
        log = (tmp_path / CLI_LOG).read_text(errors="replace")
        assert not [secret for secret in worker.secrets if secret in log]
