"""A secured embedded Kafka broker for tests and tutorials: SASL (SCRAM, PLAIN), TLS (mutual too) and ACLs.

:class:`SecuredBroker` is an :class:`~connect_magics.local.broker.EmbeddedBroker` whose ``server.properties``
gain, through its ``server_properties`` argument, the listeners a production cluster has:

=================  ==================================================================================
listener           who gets in
=================  ==================================================================================
``PLAINTEXT``      anyone, as ``User:ANONYMOUS``, a **super user**: the harness's back door (the
                   broker's own readiness check, :meth:`SecuredBroker.grant`, test set-up). It is
                   :attr:`~connect_magics.local.broker.EmbeddedBroker.bootstrap_servers`, also the
                   inter-broker and controller listener. Never give it to the code under test.
``SASL_PLAINTEXT`` users with SCRAM-SHA-256, SCRAM-SHA-512 or PLAIN, without TLS
``SASL_SSL``       the same over TLS (the broker's certificate is signed by a CA made on the fly)
``SSL``            clients with a certificate signed by that CA (mutual TLS, ``ssl.client.auth=required``);
                   the principal is the certificate's CN (``CN=alice`` is ``User:alice``)
=================  ==================================================================================

Authorization is Kafka's ``StandardAuthorizer`` with ``allow.everyone.if.no.acl.found=false``: a user can
do nothing until :meth:`SecuredBroker.grant` allows it.

>>> with SecuredBroker(users={"alice": "alice-secret"}) as broker:  # doctest: +SKIP
...     broker.grant("User:alice", "TOPIC", "orders", operation=["WRITE", "READ", "DESCRIBE"])
...     producer = Producer(broker.client_config("SASL_SSL", "alice", mechanism="SCRAM-SHA-512"))
...     worker_properties = broker.java_client_config("SASL_SSL", "alice")  # sasl.jaas.config, JKS truststore

The TLS material (:func:`generate_tls`, :class:`TlsMaterial`) is written under ``<data_dir>/tls``: a CA, the
broker's certificate for ``localhost`` and ``127.0.0.1``, and a client certificate per name in
``tls_clients``, each as PEM files, a PKCS12 and a JKS keystore, with JKS and PKCS12 truststores, all
under one generated password. It is made once per data directory and reused by a restart.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
import re
import secrets
import shutil
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from connect_magics.local.broker import (
    DEFAULT_HEAP,
    HOST,
    BrokerError,
    EmbeddedBroker,
    free_port,
    port_in_use,
)
from connect_magics.local.jars import DEFAULT_KAFKA_VERSION
from connect_magics.local.java import find_java

#: One ACL operation (``"READ"`` or ``AclOperation.READ``) or several.
Operations = str | AclOperation | Iterable[str | AclOperation]

__all__ = [
    "ADMIN_LISTENER", "SASL_MECHANISMS", "SCRAM_MECHANISMS", "SECURED_LISTENERS", "SUPER_USER",
    "SecuredBroker", "TlsError", "TlsIdentity", "TlsMaterial", "generate_tls", "keytool_executable",
]

#: The listener of the harness (PLAINTEXT, ``User:ANONYMOUS``, a super user): ``broker.bootstrap_servers``.
ADMIN_LISTENER = "PLAINTEXT"
#: The listeners for the code under test; each listener's name is its security protocol.
SECURED_LISTENERS = ("SASL_PLAINTEXT", "SASL_SSL", "SSL")
SCRAM_MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
SASL_MECHANISMS = (*SCRAM_MECHANISMS, "PLAIN")
#: The principal of the admin, controller and inter-broker listeners (all PLAINTEXT).
SUPER_USER = "User:ANONYMOUS"
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
SCRAM_ITERATIONS = 4096
DEFAULT_USERS: Mapping[str, str] = {"alice": "alice-secret", "bob": "bob-secret"}
DEFAULT_HOSTS = ("localhost", "127.0.0.1")
#: Maps a client certificate's subject ``CN=alice`` to the principal ``User:alice``.
SSL_PRINCIPAL_MAPPING_RULES = "RULE:^CN=([^,]+)$/$1/,DEFAULT"

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")
_STATE_FILE = "secured.json"  # in the data directory: the secured listeners' ports
_TLS_STATE_FILE = "tls.json"  # in the TLS directory: password, hosts, clients
_PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
_SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"


class TlsError(BrokerError):
    """Certificates or keystores could not be made; the message says which and why."""


def _check_name(name: str, what: str) -> str:
    if not _NAME.match(name) or name == "ANONYMOUS":
        raise ValueError(f"{what} {name!r} is not allowed: use letters, digits, '.', '_' and '-' "
                         "(and not ANONYMOUS, the admin listener's super user)")
    return name


def _check_password(password: str, user: str) -> str:
    if not password or any(c in password for c in '"\\\n\r'):
        raise ValueError(f"The password of {user!r} must be non-empty and hold no quote, backslash or newline "
                         "(it goes into a JAAS configuration)")
    return password


# -- TLS material ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TlsIdentity:
    """One certificate and its private key (the broker's or a client's), in every format Kafka reads.

    ``key_pem`` is an unencrypted PKCS#8 key (librdkafka's ``ssl.key.location``); ``key_pem_encrypted`` the
    same key encrypted with ``password`` (PBES2, AES-256: librdkafka's ``ssl.key.password``; Kafka's Java PEM
    reader on Java 17 cannot decrypt PBES2); ``bundle_pem`` the unencrypted key followed by the certificate and
    the CA's (Java's ``ssl.keystore.type=PEM``, without ``ssl.key.password``). ``keystore_p12`` and ``keystore_jks`` hold
    the key under the alias ``name``; store and key passwords are both ``password``.

    >>> tls.client("alice").librdkafka_config()  # doctest: +SKIP
    {'ssl.certificate.location': '.../alice.pem', 'ssl.key.location': '.../alice-key.pem'}
    """

    name: str
    cert_pem: Path
    key_pem: Path
    key_pem_encrypted: Path
    bundle_pem: Path
    keystore_p12: Path
    keystore_jks: Path
    password: str = field(repr=False)

    def librdkafka_config(self, encrypted_key: bool = False) -> dict[str, str]:
        """``ssl.certificate.location`` and ``ssl.key.location`` (and ``ssl.key.password`` if ``encrypted_key``)."""
        if encrypted_key:
            return {"ssl.certificate.location": str(self.cert_pem), "ssl.key.location": str(self.key_pem_encrypted),
                    "ssl.key.password": self.password}
        return {"ssl.certificate.location": str(self.cert_pem), "ssl.key.location": str(self.key_pem)}

    def java_config(self, store_type: str = "PKCS12") -> dict[str, str]:
        """Kafka's Java ``ssl.keystore.*`` and ``ssl.key.password`` for ``store_type`` PKCS12, JKS or PEM
        (``bundle_pem``, no password)."""
        store_type = store_type.upper()
        if store_type == "PEM":  # Kafka refuses a store password for PEM files; the key is not encrypted
            return {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(self.bundle_pem)}
        paths = {"PKCS12": self.keystore_p12, "JKS": self.keystore_jks}
        if store_type not in paths:
            raise ValueError(f"Unknown keystore type {store_type!r}: use PKCS12, JKS or PEM")
        return {"ssl.keystore.type": store_type, "ssl.keystore.location": str(paths[store_type]),
                "ssl.keystore.password": self.password, "ssl.key.password": self.password}


@dataclass(frozen=True)
class TlsMaterial:
    """A CA, the broker's identity and the clients' ones, with the truststores that trust the CA.

    ``ca_pem`` is librdkafka's ``ssl.ca.location`` (and Java's PEM truststore); ``truststore_jks`` and
    ``truststore_p12`` hold the CA certificate under the alias ``ca``, with ``password``.

    >>> tls = generate_tls(tmp / "tls", clients=["alice"])  # doctest: +SKIP
    >>> tls.java_config(client="alice", keystore_type="JKS")["ssl.truststore.location"]  # doctest: +SKIP
    '.../tls/truststore.jks'
    """

    directory: Path
    password: str = field(repr=False)
    ca_pem: Path
    ca_key_pem: Path
    truststore_jks: Path
    truststore_p12: Path
    broker: TlsIdentity
    clients: Mapping[str, TlsIdentity] = field(default_factory=dict)

    def client(self, name: str) -> TlsIdentity:
        """The client certificate made for ``name`` (its subject is ``CN=name``)."""
        try:
            return self.clients[name]
        except KeyError:
            raise KeyError(f"No client certificate for {name!r}; there are: {', '.join(self.clients) or 'none'} "
                           "(give the name in tls_clients)") from None

    def librdkafka_config(self, client: str | None = None, encrypted_key: bool = False) -> dict[str, str]:
        """``ssl.ca.location``, plus the client certificate and key of ``client`` when given (mutual TLS)."""
        config = {"ssl.ca.location": str(self.ca_pem)}
        if client is not None:
            config.update(self.client(client).librdkafka_config(encrypted_key))
        return config

    def java_config(self, client: str | None = None, truststore_type: str = "JKS",
                    keystore_type: str = "PKCS12") -> dict[str, str]:
        """Kafka's Java ``ssl.truststore.*`` (``truststore_type`` JKS, PKCS12 or PEM), plus ``ssl.keystore.*`` of
        ``client`` when given."""
        truststore_type = truststore_type.upper()
        if truststore_type == "PEM":  # Kafka refuses a password for a PEM truststore
            config = {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(self.ca_pem)}
        else:
            paths = {"JKS": self.truststore_jks, "PKCS12": self.truststore_p12}
            if truststore_type not in paths:
                raise ValueError(f"Unknown truststore type {truststore_type!r}: use JKS, PKCS12 or PEM")
            config = {"ssl.truststore.type": truststore_type, "ssl.truststore.location": str(paths[truststore_type]),
                      "ssl.truststore.password": self.password}
        if client is not None:
            config.update(self.client(client).java_config(keystore_type))
        return config


def keytool_executable(java: str | None = None) -> str:
    """The ``keytool`` of the JDK that :func:`~connect_magics.local.java.find_java` picks (``java``: its path)."""
    executable = find_java(java).executable
    for candidate in (Path(executable).parent / "keytool", Path(os.path.realpath(executable)).parent / "keytool"):
        if candidate.is_file():
            return str(candidate)
    on_path = shutil.which("keytool")
    if on_path:
        return on_path
    raise TlsError(f"No keytool next to {executable}: the JKS keystores need a full JDK (not a JRE). "
                   "Install a JDK 17 or 21 and set JAVA_HOME to it.")


def _keytool(keytool: str, *args: str) -> str:
    out = subprocess.run([keytool, "-J-Xmx128m", "-J-XX:+UseSerialGC", *args, "-noprompt"],
                         capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise TlsError(f"keytool {args[0]} failed:\n{(out.stdout + out.stderr).strip()[-2000:]}")
    return out.stdout


def _write(path: Path, data: bytes, private: bool = False) -> Path:
    path.write_bytes(data)
    if private:
        path.chmod(0o600)
    return path


def _identity_paths(directory: Path, name: str, password: str) -> TlsIdentity:
    return TlsIdentity(name=name, cert_pem=directory / f"{name}.pem", key_pem=directory / f"{name}-key.pem",
                       key_pem_encrypted=directory / f"{name}-key-encrypted.pem",
                       bundle_pem=directory / f"{name}-bundle.pem", keystore_p12=directory / f"{name}.p12",
                       keystore_jks=directory / f"{name}.jks", password=password)


def _material_paths(directory: Path, password: str, clients: Iterable[str]) -> TlsMaterial:
    return TlsMaterial(directory=directory, password=password, ca_pem=directory / "ca.pem",
                       ca_key_pem=directory / "ca-key.pem", truststore_jks=directory / "truststore.jks",
                       truststore_p12=directory / "truststore.p12",
                       broker=_identity_paths(directory, "broker", password),
                       clients={name: _identity_paths(directory, name, password) for name in clients})


def _identity_complete(identity: TlsIdentity) -> bool:
    return all(p.is_file() for p in (identity.cert_pem, identity.key_pem, identity.key_pem_encrypted,
                                     identity.bundle_pem, identity.keystore_p12, identity.keystore_jks))


class _Issuer:
    """Signs certificates with the CA's key (``cryptography``)."""

    def __init__(self, ca_cert: x509.Certificate, ca_key: rsa.RSAPrivateKey, valid_days: int) -> None:
        self.cert = ca_cert
        self.key = ca_key
        self.valid_days = valid_days

    @staticmethod
    def new_key() -> rsa.RSAPrivateKey:
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)

    @classmethod
    def new_ca(cls, valid_days: int) -> _Issuer:
        key = cls.new_key()
        name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "connect_magics test CA"),
                          x509.NameAttribute(NameOID.COMMON_NAME, f"connect_magics CA {secrets.token_hex(4)}")])
        now = datetime.datetime.now(datetime.timezone.utc)
        cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(days=1))
                .not_valid_after(now + datetime.timedelta(days=valid_days + 1))
                .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                             content_commitment=False, key_encipherment=False,
                                             data_encipherment=False, key_agreement=False, encipher_only=False,
                                             decipher_only=False), critical=True)
                .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
                .sign(key, hashes.SHA256()))
        return cls(cert, key, valid_days)

    def issue(self, common_name: str, key: rsa.RSAPrivateKey, hosts: Sequence[str] = (),
              server: bool = False) -> x509.Certificate:
        now = datetime.datetime.now(datetime.timezone.utc)
        usages = [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH] if server else [
            ExtendedKeyUsageOID.CLIENT_AUTH]
        builder = (x509.CertificateBuilder()
                   .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
                   .issuer_name(self.cert.subject).public_key(key.public_key())
                   .serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(days=1))
                   .not_valid_after(now + datetime.timedelta(days=self.valid_days))
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=True,
                                                content_commitment=False, data_encipherment=False,
                                                key_agreement=False, key_cert_sign=False, crl_sign=False,
                                                encipher_only=False, decipher_only=False), critical=True)
                   .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
                   .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
                   .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()),
                                  critical=False))
        if hosts:
            names: list[x509.GeneralName] = []
            for host in hosts:
                try:
                    names.append(x509.IPAddress(ipaddress.ip_address(host)))
                except ValueError:
                    names.append(x509.DNSName(host))
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        return builder.sign(self.key, hashes.SHA256())

    def write_identity(self, identity: TlsIdentity, hosts: Sequence[str], keytool: str, server: bool) -> None:
        """Write ``identity``'s key and certificate as PEM, PKCS12 and (with keytool) JKS."""
        key = self.new_key()
        cert = self.issue(identity.name, key, hosts, server)
        password = identity.password.encode()
        cert_pem = cert.public_bytes(serialization.Encoding.PEM)
        ca_pem = self.cert.public_bytes(serialization.Encoding.PEM)
        encrypted = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                      serialization.BestAvailableEncryption(password))
        _write(identity.cert_pem, cert_pem)
        key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
        _write(identity.key_pem, key_pem, private=True)
        _write(identity.key_pem_encrypted, encrypted, private=True)
        _write(identity.bundle_pem, key_pem + cert_pem + ca_pem, private=True)
        encryption = (serialization.PrivateFormat.PKCS12.encryption_builder().kdf_rounds(10000)
                      .key_cert_algorithm(pkcs12.PBES.PBESv2SHA256AndAES256CBC).hmac_hash(hashes.SHA256())
                      .build(password))
        _write(identity.keystore_p12, pkcs12.serialize_key_and_certificates(
            identity.name.encode(), key, cert, [self.cert], encryption), private=True)
        identity.keystore_jks.unlink(missing_ok=True)
        _keytool(keytool, "-importkeystore", "-srckeystore", str(identity.keystore_p12), "-srcstoretype", "PKCS12",
                 "-srcstorepass", identity.password, "-destkeystore", str(identity.keystore_jks),
                 "-deststoretype", "JKS", "-deststorepass", identity.password, "-destkeypass", identity.password)
        identity.keystore_jks.chmod(0o600)


def _load_issuer(material: TlsMaterial, valid_days: int) -> _Issuer | None:
    """The CA of existing material, or None if it is missing or its certificates expire within a day."""
    try:
        ca = x509.load_pem_x509_certificate(material.ca_pem.read_bytes())
        key = serialization.load_pem_private_key(material.ca_key_pem.read_bytes(), None)
        if not isinstance(key, rsa.RSAPrivateKey):
            return None
        broker = x509.load_pem_x509_certificate(material.broker.cert_pem.read_bytes())
    except (OSError, ValueError):
        return None
    soon = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)
    if min(ca.not_valid_after_utc, broker.not_valid_after_utc) < soon:
        return None
    return _Issuer(ca, key, valid_days)


def generate_tls(directory: str | os.PathLike[str], clients: Iterable[str] = (), hosts: Sequence[str] = DEFAULT_HOSTS,
                 password: str | None = None, java: str | None = None, valid_days: int = 365) -> TlsMaterial:
    """Make (or reuse) a CA, a broker certificate for ``hosts`` and a client certificate per name in ``clients``.

    Everything is written into ``directory`` as PEM files, PKCS12 and JKS keystores and JKS and PKCS12
    truststores (the JKS files with the ``keytool`` of the JDK, :func:`keytool_executable`). Material already
    there is reused when it was made for the same ``hosts`` (and ``password``, if given) and is valid for
    another day; client certificates missing from it are added, signed by the same CA. ``password``
    (default: generated) protects every store and the encrypted keys.

    >>> tls = generate_tls("/tmp/tls", clients=["alice"])  # doctest: +SKIP
    >>> consumer = Consumer({"security.protocol": "SSL", **tls.librdkafka_config(client="alice"), ...})  # doctest: +SKIP
    """
    directory = Path(directory)
    clients = [_check_name(name, "A client certificate name") for name in dict.fromkeys(clients)]
    if "broker" in clients or "ca" in clients:
        raise ValueError("'broker' and 'ca' name the broker's and the CA's files: choose other client names")
    directory.mkdir(parents=True, exist_ok=True)
    state_file = directory / _TLS_STATE_FILE
    try:
        state = json.loads(state_file.read_text())
    except (OSError, ValueError):
        state = {}
    keytool = keytool_executable(java)
    issuer: _Issuer | None = None
    if state.get("hosts") == list(hosts) and state.get("password") and password in (None, state["password"]):
        material = _material_paths(directory, state["password"], dict.fromkeys([*state.get("clients", []), *clients]))
        if (material.truststore_jks.is_file() and material.truststore_p12.is_file()
                and _identity_complete(material.broker)):
            issuer = _load_issuer(material, valid_days)
    if issuer is None:  # everything anew
        material = _material_paths(directory, password or secrets.token_urlsafe(15), clients)
        issuer = _Issuer.new_ca(valid_days)
        state_file.unlink(missing_ok=True)
        _write(material.ca_pem, issuer.cert.public_bytes(serialization.Encoding.PEM))
        _write(material.ca_key_pem, issuer.key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()), private=True)
        for store, store_type in ((material.truststore_jks, "JKS"), (material.truststore_p12, "PKCS12")):
            store.unlink(missing_ok=True)
            _keytool(keytool, "-importcert", "-alias", "ca", "-file", str(material.ca_pem), "-keystore", str(store),
                     "-storetype", store_type, "-storepass", material.password)
        issuer.write_identity(material.broker, hosts, keytool, server=True)
    for identity in material.clients.values():
        if not _identity_complete(identity):
            issuer.write_identity(identity, (), keytool, server=False)
    state_file.write_text(json.dumps({"password": material.password, "hosts": list(hosts),
                                      "clients": list(material.clients)}))
    state_file.chmod(0o600)
    return material


# -- the broker ------------------------------------------------------------------------------------------

def _jaas(module: str, **options: str) -> str:
    return " ".join([module, "required", *(f'{k}="{v}"' for k, v in options.items())]) + ";"


def _enum(enum_type: type, value: object, what: str) -> object:
    if isinstance(value, enum_type):
        return value
    try:
        return enum_type[str(value).upper()]
    except KeyError:
        names = ", ".join(m for m in enum_type.__members__ if m != "UNKNOWN")
        raise ValueError(f"Unknown {what} {value!r}: use one of {names}") from None


class SecuredBroker(EmbeddedBroker):
    """An :class:`~connect_magics.local.broker.EmbeddedBroker` with SASL, TLS and ACLs, for tests and tutorials.

    ``users`` maps user names to passwords (default: ``alice``/``alice-secret`` and ``bob``/``bob-secret``);
    each gets SCRAM-SHA-256 and SCRAM-SHA-512 credentials (created at start over the admin listener) and a
    PLAIN login on both SASL listeners. ``tls_clients`` names the client certificates to make for mutual TLS
    (default: one per user). ``listener_ports`` fixes the secured listeners' ports (default: free ones,
    kept for the data directory). ``server_properties`` override the secured configuration last.

    :attr:`bootstrap_servers` stays the PLAINTEXT admin listener, where anyone is ``User:ANONYMOUS``, a super
    user: the harness's back door, which :meth:`grant`, :meth:`revoke` and :meth:`admin` use. Hand the code
    under test :meth:`listener`'s address and :meth:`client_config` / :meth:`java_client_config`.

    >>> broker = SecuredBroker(tmp / "broker", users={"alice": "alice-secret"}).start()  # doctest: +SKIP
    >>> broker.listener("SASL_SSL")  # doctest: +SKIP
    '127.0.0.1:41235'
    >>> broker.grant("User:alice", "TOPIC", "orders", operation=["READ", "DESCRIBE"])  # doctest: +SKIP
    >>> broker.grant("User:alice", "GROUP", "orders-", "PREFIXED", "READ")  # doctest: +SKIP
    >>> Consumer({**broker.client_config("SASL_SSL", "alice"), "group.id": "orders-1"})  # doctest: +SKIP
    """

    def __init__(self, data_dir: str | os.PathLike[str] | None = None, users: Mapping[str, str] | None = None,
                 tls_clients: Iterable[str] | None = None, *, port: int | None = None,
                 listener_ports: Mapping[str, int] | None = None, kafka_version: str = DEFAULT_KAFKA_VERSION,
                 heap: str = DEFAULT_HEAP, java: str | None = None,
                 server_properties: Mapping[str, str] | None = None,
                 progress: Callable[[str], None] | None = None) -> None:
        super().__init__(data_dir, port=port, kafka_version=kafka_version, heap=heap, java=java,
                         server_properties=server_properties, progress=progress)
        self.users: dict[str, str] = {}
        for name, password in (DEFAULT_USERS if users is None else users).items():
            self.users[_check_name(name, "A user name")] = _check_password(password, name)
        self.tls_clients = list(dict.fromkeys(self.users if tls_clients is None else tls_clients))
        self.extra_server_properties = dict(server_properties or {})
        self._keytool_java = java
        self._tls: TlsMaterial | None = None
        self._admin: AdminClient | None = None
        unknown = set(listener_ports or {}) - set(SECURED_LISTENERS)
        if unknown:
            raise ValueError(f"Unknown listener(s) {', '.join(sorted(unknown))}: the secured listeners are "
                             f"{', '.join(SECURED_LISTENERS)}")
        saved = self._read_secured_state().get("ports", {})
        taken = {self.port, self.controller_port}
        self.listener_ports: dict[str, int] = {}
        for name in SECURED_LISTENERS:
            chosen = (listener_ports or {}).get(name) or saved.get(name)
            while not chosen or chosen in taken:
                chosen = free_port()
            taken.add(chosen)
            self.listener_ports[name] = chosen

    # -- addresses and client configs -----------------------------------------------------------------
    def listener(self, name: str) -> str:
        """The ``bootstrap.servers`` of listener ``name``: SASL_PLAINTEXT, SASL_SSL, SSL or PLAINTEXT (the admin
        listener, the same as :attr:`bootstrap_servers`)."""
        name = name.upper()
        if name == ADMIN_LISTENER:
            return self.bootstrap_servers
        if name not in self.listener_ports:
            raise ValueError(f"Unknown listener {name!r}: use one of {', '.join((ADMIN_LISTENER, *SECURED_LISTENERS))}")
        return f"{HOST}:{self.listener_ports[name]}"

    @property
    def listeners(self) -> dict[str, str]:
        """Every listener's ``bootstrap.servers`` by name (PLAINTEXT is the admin listener)."""
        return {name: self.listener(name) for name in (ADMIN_LISTENER, *SECURED_LISTENERS)}

    @property
    def tls(self) -> TlsMaterial:
        """The CA, broker and client certificates and stores (made on first use, kept in ``<data_dir>/tls``)."""
        if self._tls is None:
            self._tls = generate_tls(self.data_dir / "tls", self.tls_clients, DEFAULT_HOSTS,
                                     java=self._keytool_java)
        return self._tls

    def _sasl_credentials(self, listener: str, user: str | None, password: str | None) -> tuple[str, str]:
        if user is None:
            raise ValueError(f"The {listener} listener needs a user (one of {', '.join(self.users) or 'none'})")
        if password is None:
            if user not in self.users:
                raise KeyError(f"Unknown user {user!r} (the users are {', '.join(self.users)}); pass password= "
                               "to try credentials the broker does not know")
            password = self.users[user]
        return user, password

    def client_config(self, listener: str = "SASL_SSL", user: str | None = None, *, password: str | None = None,
                      mechanism: str = "SCRAM-SHA-512", client: str | None = None) -> dict[str, str]:
        """A librdkafka (confluent-kafka) config for ``listener`` as ``user`` with ``mechanism``.

        ``password`` defaults to the user's; SSL uses the client certificate ``client`` (default: ``user``, else
        the first of ``tls_clients``). PLAINTEXT gives the admin listener's config (the super user).

        >>> broker.client_config("SASL_SSL", "alice", mechanism="PLAIN")  # doctest: +SKIP
        {'bootstrap.servers': '127.0.0.1:41235', 'security.protocol': 'SASL_SSL', 'sasl.mechanism': 'PLAIN',
         'sasl.username': 'alice', 'sasl.password': 'alice-secret', 'ssl.ca.location': '.../tls/ca.pem'}
        """
        listener = listener.upper()
        config = {"bootstrap.servers": self.listener(listener), "security.protocol": listener}
        if listener.startswith("SASL_"):
            user, password = self._sasl_credentials(listener, user, password)
            config.update({"sasl.mechanism": mechanism.upper(), "sasl.username": user, "sasl.password": password})
        if listener.endswith("SSL"):
            cert = (client or user or self._first_client()) if listener == "SSL" else None
            config.update(self.tls.librdkafka_config(cert))
        return config

    def java_client_config(self, listener: str = "SASL_SSL", user: str | None = None, *,
                           password: str | None = None, mechanism: str = "SCRAM-SHA-512", client: str | None = None,
                           truststore_type: str = "JKS", keystore_type: str = "PKCS12") -> dict[str, str]:
        """The same as :meth:`client_config` with Kafka's Java names, as a Kafka Connect worker.properties has
        them: ``sasl.jaas.config``, ``ssl.truststore.*`` (``truststore_type`` JKS, PKCS12 or PEM) and, for SSL,
        ``ssl.keystore.*`` (``keystore_type`` PKCS12, JKS or PEM).

        >>> "\\n".join(f"{k}={v}" for k, v in broker.java_client_config("SASL_SSL", "alice").items())  # doctest: +SKIP
        """
        listener = listener.upper()
        config = {"bootstrap.servers": self.listener(listener), "security.protocol": listener}
        if listener.startswith("SASL_"):
            user, password = self._sasl_credentials(listener, user, password)
            module = _PLAIN_MODULE if mechanism.upper() == "PLAIN" else _SCRAM_MODULE
            config.update({"sasl.mechanism": mechanism.upper(),
                           "sasl.jaas.config": _jaas(module, username=user, password=password)})
        if listener.endswith("SSL"):
            cert = (client or user or self._first_client()) if listener == "SSL" else None
            config.update(self.tls.java_config(cert, truststore_type, keystore_type))
        return config

    def _first_client(self) -> str:
        if not self.tls_clients:
            raise ValueError("The SSL listener needs a client certificate, and this broker has none: give "
                             "tls_clients")
        return self.tls_clients[0]

    # -- configuration and lifecycle ------------------------------------------------------------------
    def _read_secured_state(self) -> dict:
        try:
            return json.loads((self.data_dir / _STATE_FILE).read_text())
        except (OSError, ValueError):
            return {}

    def _secured_properties(self) -> dict[str, str]:
        """The server.properties that secure the broker (the user's ``server_properties`` win)."""
        names = (ADMIN_LISTENER, *SECURED_LISTENERS)
        advertised = ",".join(f"{name}://{self.listener(name)}" for name in names)
        plain = _jaas(_PLAIN_MODULE, **{f"user_{name}": password for name, password in self.users.items()})
        props = {
            "listeners": f"{advertised},CONTROLLER://{HOST}:{self.controller_port}",
            "advertised.listeners": advertised,
            "listener.security.protocol.map": ",".join(f"{n}:{n}" for n in names) + ",CONTROLLER:PLAINTEXT",
            "inter.broker.listener.name": ADMIN_LISTENER,
            "controller.listener.names": "CONTROLLER",
            "sasl.enabled.mechanisms": ",".join(SASL_MECHANISMS),
            "authorizer.class.name": STANDARD_AUTHORIZER,
            "allow.everyone.if.no.acl.found": "false",
            "super.users": SUPER_USER,
            "ssl.principal.mapping.rules": SSL_PRINCIPAL_MAPPING_RULES,
            "listener.name.ssl.ssl.client.auth": "required",
        }
        for listener in ("sasl_plaintext", "sasl_ssl"):
            for mechanism in SCRAM_MECHANISMS:
                props[f"listener.name.{listener}.{mechanism.lower()}.sasl.jaas.config"] = _jaas(_SCRAM_MODULE)
            props[f"listener.name.{listener}.plain.sasl.jaas.config"] = plain
        props.update(self._ssl_properties())
        props.update(self.extra_server_properties)
        return props

    def _ssl_properties(self) -> dict[str, str]:
        tls = self.tls
        return {"ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(tls.broker.keystore_p12),
                "ssl.keystore.password": tls.password, "ssl.key.password": tls.password,
                "ssl.truststore.type": "JKS", "ssl.truststore.location": str(tls.truststore_jks),
                "ssl.truststore.password": tls.password}

    def start(self, timeout: float = 90.0, detach: bool = False) -> SecuredBroker:
        """Start the broker (making the TLS material first if needed), then create the users' SCRAM credentials
        over the admin listener. Returns once all of it is done."""
        if self.is_running():
            return self
        for name, port in self.listener_ports.items():
            if port_in_use(port):
                raise BrokerError(f"Port {port} on {HOST} (the {name} listener) is already in use. Choose another "
                                  "port (listener_ports=), or stop whatever listens there.")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        (self.data_dir / _STATE_FILE).write_text(json.dumps({"ports": self.listener_ports}))
        self._tls = None  # made again if the client list changed, or read back
        self.server_properties = self._secured_properties()
        super().start(timeout, detach)
        try:
            self._upsert_scram(self.users, SCRAM_MECHANISMS, timeout)
        except BaseException:
            self.stop(timeout=10)
            raise
        return self

    def stop(self, timeout: float = 30.0) -> None:
        self._admin = None
        super().stop(timeout)

    # -- users ---------------------------------------------------------------------------------------
    def admin(self) -> AdminClient:
        """An AdminClient on the admin listener, as the super user (the harness's back door)."""
        if self._admin is None:

            self._admin = AdminClient({"bootstrap.servers": self.bootstrap_servers})
        return self._admin

    def _upsert_scram(self, users: Mapping[str, str], mechanisms: Sequence[str], timeout: float) -> None:

        if not users:
            return
        for mechanism in mechanisms:  # Kafka refuses two alterations of one user in one request
            scram = _enum(ScramMechanism, mechanism.replace("-", "_"), "SCRAM mechanism")
            alterations = [UserScramCredentialUpsertion(name, ScramCredentialInfo(scram, SCRAM_ITERATIONS),
                                                        password.encode()) for name, password in users.items()]
            for user, future in self.admin().alter_user_scram_credentials(alterations,
                                                                          request_timeout=timeout).items():
                try:
                    future.result(timeout)
                except Exception as e:
                    raise BrokerError(f"Creating the {mechanism} credentials of {user!r} failed: {e}") from e
        wanted = {m.replace("-", "_") for m in mechanisms}

        def described() -> bool:
            found = self.admin().describe_user_scram_credentials(list(users), request_timeout=timeout)
            return all(wanted <= {i.mechanism.name for i in f.result(timeout).scram_credential_infos}
                       for f in found.values())

        self._wait(described, timeout, f"the SCRAM credentials of {', '.join(users)}")

    def add_user(self, name: str, password: str, mechanisms: Sequence[str] = SCRAM_MECHANISMS,
                 timeout: float = 30.0) -> None:
        """Add a user, or change its password: its SCRAM credentials at once if the broker runs, its PLAIN login
        at the next (re)start (PLAIN users live in the listener's JAAS configuration).

        >>> broker.add_user("carol", "carol-secret")  # doctest: +SKIP
        """
        self.users[_check_name(name, "A user name")] = _check_password(password, name)
        if self.is_running():
            self._upsert_scram({name: password}, mechanisms, timeout)

    def remove_user(self, name: str, timeout: float = 30.0) -> None:
        """Delete a user's SCRAM credentials (at once) and its PLAIN login (at the next restart)."""

        self.users.pop(name, None)
        if not self.is_running():
            return
        found = self.admin().describe_user_scram_credentials([name], request_timeout=timeout)
        try:
            infos = found[name].result(timeout).scram_credential_infos
        except Exception:  # noqa: BLE001 - RESOURCE_NOT_FOUND: no credentials
            return
        for info in infos:  # one mechanism per request, as for upserts
            deletion = UserScramCredentialDeletion(name, ScramMechanism[info.mechanism.name])
            for future in self.admin().alter_user_scram_credentials([deletion], request_timeout=timeout).values():
                future.result(timeout)

    # -- ACLs ----------------------------------------------------------------------------------------
    @staticmethod
    def _acl_bindings(principal: str | None, resource_type: str | ResourceType, name: str | None,
                      pattern_type: str | ResourcePatternType, operation: Operations,
                      permission: str | AclPermissionType, host: str | None, filters: bool) -> list:

        if principal is not None and not (isinstance(principal, str) and ":" in principal):
            raise ValueError(f"A principal is written TYPE:NAME, e.g. 'User:alice' (got {principal!r})")
        operations = [operation] if isinstance(operation, (str, AclOperation)) else list(operation)
        cls = AclBindingFilter if filters else AclBinding
        return [cls(_enum(ResourceType, resource_type, "resource type"), name,
                    _enum(ResourcePatternType, pattern_type, "pattern type"), principal, host,
                    _enum(AclOperation, op, "operation"), _enum(AclPermissionType, permission, "permission"))
                for op in operations]

    def _wait(self, condition: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        last: Exception | None = None
        while time.monotonic() < deadline:
            try:
                if condition():
                    return
            except Exception as e:  # noqa: BLE001 - not there yet
                last = e
            time.sleep(0.05)
        raise BrokerError(f"Timed out after {timeout:.0f} s waiting for {what}" + (f" (last error: {last})" if last
                                                                                   else ""))

    def _matching(self, binding: AclBinding, timeout: float) -> list:

        flt = AclBindingFilter(binding.restype, binding.name, binding.resource_pattern_type, binding.principal,
                               binding.host, binding.operation, binding.permission_type)
        return list(self.admin().describe_acls(flt, request_timeout=timeout).result(timeout))

    def grant(self, principal: str, resource_type: str | ResourceType, name: str,
              pattern_type: str | ResourcePatternType = "LITERAL", operation: Operations = "ALL",
              permission: str | AclPermissionType = "ALLOW", host: str = "*",
              timeout: float = 30.0) -> list[AclBinding]:
        """Add ACLs over the admin listener and return once the broker's authorizer applies them.

        ``resource_type``: TOPIC, GROUP, CLUSTER (name ``kafka-cluster``), TRANSACTIONAL_ID, or confluent-kafka's
        ``ResourceType``; ``pattern_type``: LITERAL or PREFIXED (``name="*"`` with LITERAL: every resource);
        ``operation``: one operation (READ, WRITE, DESCRIBE, CREATE, ..., ALL) or several; ``permission``:
        ALLOW or DENY. Returns the bindings created.

        >>> broker.grant("User:alice", "TOPIC", "orders", operation=["WRITE", "DESCRIBE"])  # doctest: +SKIP
        >>> broker.grant("User:alice", "GROUP", "connect-", "PREFIXED", "READ")  # doctest: +SKIP
        """
        bindings = self._acl_bindings(principal, self._resource(resource_type), name, pattern_type, operation,
                                      permission, host, filters=False)
        for binding, future in self.admin().create_acls(bindings, request_timeout=timeout).items():
            try:
                future.result(timeout)
            except Exception as e:
                raise BrokerError(f"Creating the ACL {binding} failed: {e}") from e
        self._wait(lambda: all(self._matching(b, timeout) for b in bindings), timeout,
                   f"the broker to apply {len(bindings)} new ACL(s)")
        return bindings

    def revoke(self, principal: str, resource_type: str | ResourceType, name: str,
               pattern_type: str | ResourcePatternType = "LITERAL", operation: Operations = "ALL",
               permission: str | AclPermissionType = "ALLOW", host: str = "*",
               timeout: float = 30.0) -> list[AclBinding]:
        """Remove the ACLs that :meth:`grant` with the same arguments added (``"ANY"`` matches any value of an
        argument), and return once the broker's authorizer no longer applies them. Returns the bindings deleted.

        >>> broker.revoke("User:alice", "TOPIC", "orders", operation="WRITE")  # doctest: +SKIP
        """
        filters = self._acl_bindings(principal, self._resource(resource_type), name, pattern_type, operation,
                                     permission, host, filters=True)
        deleted: list[AclBinding] = []
        for future in self.admin().delete_acls(filters, request_timeout=timeout).values():
            deleted.extend(future.result(timeout))
        self._wait(lambda: not any(self._matching(b, timeout) for b in deleted), timeout,
                   f"the broker to drop {len(deleted)} ACL(s)")
        return deleted

    def revoke_all(self, principal: str | None = None, timeout: float = 30.0) -> list[AclBinding]:
        """Remove every ACL of ``principal`` (``None``: of everyone); returns the bindings deleted."""
        return self.revoke(principal, "ANY", None, "ANY", "ANY", "ANY", None, timeout)  # type: ignore[arg-type]

    def acls(self, principal: str | None = None, timeout: float = 30.0) -> list[AclBinding]:
        """The ACLs on the broker, of ``principal`` only when given."""
        flt = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, principal, None, AclOperation.ANY,
                               AclPermissionType.ANY)
        return list(self.admin().describe_acls(flt, request_timeout=timeout).result(timeout))

    @staticmethod
    def _resource(resource_type: str | ResourceType) -> str | ResourceType:
        # confluent-kafka names the cluster resource BROKER; Kafka (and kafka-acls) say CLUSTER
        return "BROKER" if isinstance(resource_type, str) and resource_type.upper() == "CLUSTER" else resource_type

    def __repr__(self) -> str:
        state = "running" if self.is_running() else "stopped"
        ports = ", ".join(f"{n}={self.listener(n)}" for n in (ADMIN_LISTENER, *SECURED_LISTENERS))
        return f"SecuredBroker({ports}, {state}, data_dir={str(self.data_dir)!r})"
