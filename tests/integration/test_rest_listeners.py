"""Kafka Connect 4's REST listener settings: ``listeners`` (http and https, ``listeners.https.ssl.*`` or the
worker's ``ssl.*``), client certificates, ``rest.advertised.*`` in statuses, the deprecated ``rest.port``, and
unknown worker keys logged once. Certificates are made here with ``cryptography``."""

from __future__ import annotations

import datetime
import http.client
import ipaddress
import json
import logging
import socket
import ssl
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID
from helpers import RestClient, wait_until

from connect_magics import ConnectRuntime
from connect_magics.api.config import ConfigException
from connect_magics.cli import main, parser, running_worker
from connect_magics.rest import RestAuthError, RestServer
from connect_magics.runtime.config.worker_keys import check_worker_keys

FAST = {"offset.flush.interval.ms": "200"}
KEYS_LOGGER = "connect_magics.runtime.config.worker_keys"


# -- certificates --------------------------------------------------------------------------------------
@dataclass
class Pki:
    """A CA, a server certificate for 127.0.0.1 / localhost and a client certificate, in every file format."""

    ca_pem: Path
    server_p12: Path  # password "server-pass"
    server_pem: Path  # key (encrypted with "key-pass") and chain in one file
    client_pem: Path  # unencrypted key and certificate
    truststore_p12: Path  # the CA, password "trust-pass"


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _certificate(subject: str, key: ec.EllipticCurvePrivateKey, issuer: x509.Name, signer: Any, ca: bool,
                 sans: list[x509.GeneralName] | None = None) -> x509.Certificate:
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder().subject_name(_name(subject)).issuer_name(issuer)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return builder.sign(signer, hashes.SHA256())


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    d = tmp_path_factory.mktemp("pki")
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _certificate("test CA", ca_key, _name("test CA"), ca_key, ca=True)
    server_key = ec.generate_private_key(ec.SECP256R1())
    server = _certificate("localhost", server_key, ca.subject, ca_key, ca=False,
                          sans=[x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    client_key = ec.generate_private_key(ec.SECP256R1())
    client = _certificate("rest-client", client_key, ca.subject, ca_key, ca=False)
    pem = serialization.Encoding.PEM
    out = Pki(d / "ca.pem", d / "server.p12", d / "server.pem", d / "client.pem", d / "truststore.p12")
    out.ca_pem.write_bytes(ca.public_bytes(pem))
    out.server_p12.write_bytes(pkcs12.serialize_key_and_certificates(
        b"server", server_key, server, [ca], serialization.BestAvailableEncryption(b"server-pass")))
    out.server_pem.write_bytes(server_key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                                        serialization.BestAvailableEncryption(b"key-pass"))
                               + server.public_bytes(pem) + ca.public_bytes(pem))
    out.client_pem.write_bytes(client_key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                                        serialization.NoEncryption()) + client.public_bytes(pem))
    out.truststore_p12.write_bytes(pkcs12.serialize_key_and_certificates(
        None, None, None, [ca], serialization.BestAvailableEncryption(b"trust-pass")))
    return out


def https_keystore(pki: Pki, prefix: str = "listeners.https.") -> dict[str, str]:
    return {f"{prefix}ssl.keystore.location": str(pki.server_p12), f"{prefix}ssl.keystore.password": "server-pass",
            f"{prefix}ssl.keystore.type": "PKCS12"}


def tls_client(pki: Pki, certificate: bool = False) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(pki.ca_pem))
    if certificate:
        context.load_cert_chain(str(pki.client_pem))
    return context


def get(url: str, context: ssl.SSLContext | None = None) -> tuple[int, Any]:
    with urllib.request.urlopen(url, timeout=30, context=context) as resp:
        return resp.status, json.loads(resp.read())


# -- helpers ------------------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker_args(tmp_path: Path, bootstrap: str, group: str, props: dict[str, str], *options: str) -> Any:
    path = tmp_path / "worker.properties"
    path.write_text("# a Kafka Connect worker file\n" + "".join(f"{k}={v}\n" for k, v in
                                                                {"bootstrap.servers": bootstrap, "group.id": group,
                                                                 **FAST, **props}.items()))
    return parser().parse_args(["worker", "--config", str(path), *options])


def seq_config(topic: str) -> dict[str, str]:
    return {"connector.class": "SequenceSource", "topic": topic, "records": "1000000", "rate": "100",
            "tasks.max": "1", "topic.creation.default.replication.factor": "1",
            "topic.creation.default.partitions": "1"}


def running_worker_ids(call: RestClient, name: str) -> set[str]:
    """The worker ids of a connector and its task once both run, else an empty set."""
    status, body, _ = call("GET", f"/connectors/{name}/status")
    if status != 200 or body["connector"]["state"] != "RUNNING" or [t["state"] for t in body["tasks"]] != ["RUNNING"]:
        return set()
    return {body["connector"]["worker_id"], body["tasks"][0]["worker_id"]}


@pytest.fixture
def runtime(bootstrap: str, unique: str) -> Iterator[ConnectRuntime]:
    with ConnectRuntime(bootstrap, f"listeners-{unique}", FAST) as rt:
        yield rt


# -- tests --------------------------------------------------------------------------------------------------
def test_listeners_with_port_0_serve_the_api(bootstrap: str, unique: str, tmp_path: Path) -> None:
    args = worker_args(tmp_path, bootstrap, f"lst-{unique}", {"listeners": "http://127.0.0.1:0"})
    with running_worker(args) as (rt, server):
        [listener] = server.listeners
        assert (listener.scheme, listener.host) == ("http", "127.0.0.1") and listener.port != 0
        assert server.url == f"http://127.0.0.1:{listener.port}"
        call = RestClient(server.url)
        assert call("GET", "/connectors")[:2] == (200, [])
        assert call("GET", "/")[1]["kafka_cluster_id"] == rt.kafka_cluster_id()
        # port 0 resolved: statuses name this worker by the port it listens on (the configured host, as Kafka)
        assert rt.worker_config.worker_id == f"127.0.0.1:{listener.port}"


def test_an_https_listener_serves_over_tls_and_refuses_plain_http(runtime: ConnectRuntime, pki: Pki) -> None:
    config = {**runtime.worker_config, **https_keystore(pki)}
    with RestServer(runtime, listeners="http://127.0.0.1:0, https://127.0.0.1:0", config=config) as server:
        http_url, https_url = server.urls
        assert http_url.startswith("http://127.0.0.1:") and https_url.startswith("https://127.0.0.1:")
        assert get(f"{https_url}/connectors", tls_client(pki)) == (200, [])
        assert get(f"{http_url}/connectors") == (200, [])  # the http listener, beside it
        plain = https_url.replace("https://", "http://")
        with pytest.raises((OSError, http.client.HTTPException)):  # no TLS handshake: the connection is dropped
            get(f"{plain}/connectors")
        with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):  # a client not trusting the CA
            get(f"{https_url}/connectors", ssl.create_default_context())


def test_https_settings_fall_back_to_the_worker_ssl_settings(runtime: ConnectRuntime, pki: Pki) -> None:
    """No ``listeners.https.`` key: the worker's own ``ssl.*`` (here a PEM key store with an encrypted key)."""
    config = {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(pki.server_pem), "ssl.key.password": "key-pass"}
    with RestServer(runtime, listeners="https://localhost:0", config=config) as server:
        assert server.url.startswith("https://localhost:")
        assert get(f"{server.url}/connectors", tls_client(pki)) == (200, [])
    # with a listeners.https. key, only those count: the un-prefixed key store is not used
    with pytest.raises(ConfigException, match="listeners.https.ssl.keystore.location"):
        RestServer(runtime, listeners="https://127.0.0.1:0",
                   config={**config, "listeners.https.ssl.enabled.protocols": "TLSv1.3"})


def test_client_authentication_required_refuses_a_client_without_a_certificate(
        runtime: ConnectRuntime, pki: Pki, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONNECT_MAGICS_CACHE", str(tmp_path))  # where the PKCS12 trust store's CAs are kept
    config = {**https_keystore(pki), "listeners.https.ssl.client.auth": "required",
              "listeners.https.ssl.truststore.location": str(pki.truststore_p12),
              "listeners.https.ssl.truststore.password": "trust-pass", "listeners.https.ssl.truststore.type": "PKCS12"}
    # client certificates are authentication: such a listener may listen beyond loopback without credentials
    with RestServer(runtime, listeners="https://0.0.0.0:0", config=config) as server:
        url = f"https://127.0.0.1:{server.port}"
        assert get(f"{url}/connectors", tls_client(pki, certificate=True)) == (200, [])
        with pytest.raises((OSError, http.client.HTTPException)):
            get(f"{url}/connectors", tls_client(pki))
    with pytest.raises(RestAuthError, match="requires authentication"):  # an http listener beside it does not
        RestServer(runtime, listeners="https://127.0.0.1:0,http://0.0.0.0:0", config=config)
    requested = {**config, "listeners.https.ssl.client.auth": "requested"}
    with RestServer(runtime, listeners="https://127.0.0.1:0", config=requested) as server:
        assert get(f"{server.url}/connectors", tls_client(pki)) == (200, [])  # requested: may come without one
    with pytest.raises(ConfigException, match="listeners.https.ssl.client.auth: String must be one of"):
        RestServer(runtime, listeners="https://127.0.0.1:0", config={**config, "listeners.https.ssl.client.auth": "x"})


def test_a_jks_key_store_is_served(runtime: ConnectRuntime, pki: Pki, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from connect_magics.security.stores import keytool

    try:
        tool = keytool()
    except ConfigException:
        pytest.skip("no JDK keytool")
    monkeypatch.setenv("CONNECT_MAGICS_CACHE", str(tmp_path))
    jks = tmp_path / "server.jks"
    subprocess.run([tool, "-importkeystore", "-noprompt", "-srckeystore", str(pki.server_p12), "-srcstoretype",
                    "PKCS12", "-srcstorepass", "server-pass", "-destkeystore", str(jks), "-deststoretype", "JKS",
                    "-deststorepass", "server-pass"], check=True, capture_output=True, timeout=60)
    config = {"listeners.https.ssl.keystore.location": str(jks), "listeners.https.ssl.keystore.password": "server-pass"}
    with RestServer(runtime, listeners="https://127.0.0.1:0", config=config) as server:  # type JKS: Kafka's default
        assert get(f"{server.url}/connectors", tls_client(pki)) == (200, [])


def test_unusable_tls_settings_are_refused_naming_the_key(runtime: ConnectRuntime, pki: Pki) -> None:
    wrong = {**https_keystore(pki), "listeners.https.ssl.keystore.password": "nope"}
    with pytest.raises(ConfigException, match="listeners.https.ssl.keystore.password: cannot open the PKCS12"):
        RestServer(runtime, listeners="https://127.0.0.1:0", config=wrong)
    with pytest.raises(ConfigException, match=r"configuration ssl.keystore.location: an https listener needs a key "
                                              r"store: listeners.https.ssl.keystore.location \(or, with no"):
        RestServer(runtime, listeners="https://127.0.0.1:0", config={})
    with pytest.raises(ConfigException, match="listeners.https.ssl.enabled.protocols"):
        RestServer(runtime, listeners="https://127.0.0.1:0",
                   config={**https_keystore(pki), "listeners.https.ssl.enabled.protocols": "SSLv3"})


def test_rest_port_still_works_with_one_deprecation_warning(bootstrap: str, unique: str, tmp_path: Path,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    port = free_port()  # a port of this test's own: the warning names it, so no other test logged it before
    args = worker_args(tmp_path, bootstrap, f"dep-{unique}", {"rest.port": str(port)})
    with caplog.at_level(logging.WARNING, logger=KEYS_LOGGER), running_worker(args) as (rt, server):
        assert server.url == f"http://127.0.0.1:{port}"
        assert RestClient(server.url)("GET", "/connectors")[:2] == (200, [])
        assert rt.worker_config.worker_id == f"{socket.gethostname()}:{port}"
    warnings = [r.getMessage() for r in caplog.records if "rest.port" in r.getMessage()]
    assert warnings == [f"rest.port was removed in Kafka Connect 4 (still honoured here, deprecated): use "
                        f"listeners=http://127.0.0.1:{port}"]


def test_an_unknown_worker_key_is_logged_once(bootstrap: str, unique: str, caplog: pytest.LogCaptureFixture) -> None:
    worker = {**FAST, f"made.up.{unique}": "1", "producer.linger.ms": "5", "consumer.fetch.min.bytes": "1",
              "key.converter.schemas.enable": "false", "listeners": "http://127.0.0.1:8083",
              "rest.advertised.host.name": "w"}
    with caplog.at_level(logging.WARNING, logger=KEYS_LOGGER), \
            ConnectRuntime(bootstrap, f"unk-{unique}", worker) as rt:
        check_worker_keys(rt.worker_config)  # a second start of the same worker: not logged again
    unused = [r for r in caplog.records if "were supplied but are not used yet" in r.getMessage()]
    assert [(r.levelname, r.getMessage()) for r in unused] == [
        ("WARNING", f"These configurations '[made.up.{unique}]' were supplied but are not used yet.")]


def test_advertised_host_port_and_listener_name_the_worker(bootstrap: str, unique: str, tmp_path: Path,
                                                           pki: Pki) -> None:
    props = {"listeners": "http://127.0.0.1:0,https://127.0.0.1:0", "rest.advertised.host.name": "connect-1.example",
             "rest.advertised.listener": "https", **https_keystore(pki)}
    args = worker_args(tmp_path, bootstrap, f"adv-{unique}", props)
    with running_worker(args) as (rt, server):
        http_listener, https_listener = server.listeners
        assert server.advertised_url == f"https://connect-1.example:{https_listener.port}"
        call = RestClient(server.urls[0])
        name = f"adv-{unique}"
        assert call("POST", "/connectors", {"name": name, "config": seq_config(f"adv-{unique}")})[0] == 201
        ids = wait_until(lambda: running_worker_ids(call, name), 60, message="the connector and its task running")
        assert ids == {f"connect-1.example:{https_listener.port}"}
    worker = {**FAST, "rest.advertised.host.name": "connect-2.example", "rest.advertised.port": "18083",
              "listeners": "http://127.0.0.1:0"}
    with ConnectRuntime(bootstrap, f"adv2-{unique}", worker) as rt, RestServer.from_worker_config(rt) as server:
        call = RestClient(server.url)
        name = f"adv2-{unique}"
        assert call("POST", "/connectors", {"name": name, "config": seq_config(f"adv2-{unique}")})[0] == 201
        assert wait_until(lambda: running_worker_ids(call, name), 60) == {"connect-2.example:18083"}
        assert server.advertised_url == "http://connect-2.example:18083"


def test_worker_refuses_unusable_listeners_before_touching_kafka(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "worker.properties"
    for value, message in [("ftp://:8083", 'the protocol must be either "http" or "https"'),
                           ("http://127.0.0.1", "doesn't have the right format (protocol://hostname:port)")]:
        path.write_text(f"bootstrap.servers=127.0.0.1:1\nlisteners={value}\n")
        assert main(["worker", "--config", str(path)]) == 2
        assert f"Invalid value {value} for configuration listeners: " in (err := capsys.readouterr().err)
        assert message in err
    path.write_text("bootstrap.servers=127.0.0.1:1\nlisteners=http://0.0.0.0:0\n")
    assert main(["worker", "--config", str(path)]) == 2
    assert "Listening on 0.0.0.0 (not a loopback address) requires authentication" in capsys.readouterr().err
    assert main(["worker", "--config", str(path), "--rest-port", "70000"]) == 2
    assert "--rest-port 70000: must be between 0 and 65535" in capsys.readouterr().err
