"""The REST server's listeners, configured with Kafka Connect 4's worker properties (docs/rest.md, "Listeners").

``listeners`` lists ``http://host:port`` and ``https://host:port`` URLs (parsed in
:mod:`connect_magics.runtime.config.worker_keys`). An https listener takes its TLS settings as Kafka's
``SSLUtils.createServerSideSslContextFactory`` does: the ``listeners.https.ssl.*`` settings if there is any
``listeners.https.`` key, else the worker's own ``ssl.*`` (all or nothing, never mixed). Key stores in PKCS12,
JKS (converted once with the JDK's keytool, see :mod:`connect_magics.security.stores`) or PEM; a trust store
and ``ssl.client.auth`` (none, requested, required) for client certificates.

>>> https_settings({"ssl.keystore.location": "/a.p12", "listeners.https.ssl.keystore.location": "/b.p12"})
('listeners.https.', {'ssl.keystore.location': '/b.p12'})
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import ssl
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from connect_magics.api.config import ConfigException
from connect_magics.rest.auth import RestAuth, check_listener
from connect_magics.runtime.config.worker_keys import HTTPS_PREFIX, Listener

CLIENT_AUTH = "ssl.client.auth"
_PROTOCOLS = {"TLSv1": ssl.TLSVersion.TLSv1, "TLSv1.1": ssl.TLSVersion.TLSv1_1,
              "TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}
_VERIFY = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}


def https_settings(config: Mapping[str, str]) -> tuple[str, dict[str, str]]:
    """``(prefix, settings)``: the https listener's ``ssl.*`` settings without their prefix, from
    ``listeners.https.`` if any key has it, else the worker's top-level ``ssl.*``."""
    prefixed = {k[len(HTTPS_PREFIX):]: str(v) for k, v in config.items() if k.startswith(HTTPS_PREFIX)}
    if prefixed:
        return HTTPS_PREFIX, prefixed
    return "", {k: str(v) for k, v in config.items() if k.startswith("ssl.")}


def client_auth(config: Mapping[str, str]) -> str:
    """The https listener's ``ssl.client.auth``: none (the default), requested or required."""
    prefix, settings = https_settings(config)
    value = settings.get(CLIENT_AUTH, "none").strip().lower()
    if value not in _VERIFY:
        raise ConfigException(prefix + CLIENT_AUTH, settings[CLIENT_AUTH], "String must be one of: required, "
                                                                         "requested, none")
    return value


def server_ssl_context(config: Mapping[str, str]) -> ssl.SSLContext:
    """The TLS context of the https listeners: their key store, protocols, cipher suites and, with
    ``ssl.client.auth`` requested or required, the trust store client certificates are checked against."""
    prefix, settings = https_settings(config)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    with _named(prefix):
        _load_keystore(context, prefix, settings)
        _set_protocols(context, prefix, settings)
        if ciphers := settings.get("ssl.cipher.suites", "").strip():
            try:
                context.set_ciphers(":".join(c.strip() for c in ciphers.split(",") if c.strip()))
            except ssl.SSLError:
                raise ConfigException(prefix + "ssl.cipher.suites", ciphers, "no cipher suite OpenSSL knows: give "
                                      "OpenSSL's names (such as ECDHE-RSA-AES256-GCM-SHA384), not Java's") from None
        auth = client_auth(config)
        if auth != "none":
            _load_truststore(context, settings)
            context.verify_mode = _VERIFY[auth]
    return context


@contextlib.contextmanager
def _named(prefix: str) -> Iterator[None]:
    """Errors of the store helpers (which know ``ssl.*`` keys) name the key as the worker's properties have it."""
    try:
        yield
    except ConfigException as e:
        if not prefix or not (e.name or "").startswith("ssl.") or e.reason is None:
            raise
        raise ConfigException(prefix + e.name, e.value, e.reason) from None


def _load_keystore(context: ssl.SSLContext, prefix: str, settings: dict[str, str]) -> None:
    from connect_magics.security.stores import keystore_settings

    if "ssl.keystore.key" in settings:  # PEM text in the properties (Kafka's KIP-651)
        pem = settings["ssl.keystore.key"].strip() + "\n" + settings.get("ssl.keystore.certificate.chain", "")
        with _private_file(pem.encode()) as path:
            _load_chain(context, prefix, path, settings.get("ssl.key.password"))
        return
    location = settings.get("ssl.keystore.location", "").strip()
    if not location:
        where = f"{prefix}ssl.keystore.location" if prefix else \
            f"{HTTPS_PREFIX}ssl.keystore.location (or, with no {HTTPS_PREFIX} setting, ssl.keystore.location)"
        raise ConfigException(prefix + "ssl.keystore.location", None, f"an https listener needs a key store: {where}, "
                              "PKCS12, JKS or PEM, with its password")
    if settings.get("ssl.keystore.type", "JKS").strip().upper() == "PEM":  # key and certificate chain in one file
        _load_chain(context, prefix, location, settings.get("ssl.key.password"))
        return
    store = keystore_settings({**settings, "ssl.keystore.location": location})  # JKS: converted to PKCS12
    _load_pkcs12(context, prefix, Path(store["ssl.keystore.location"]), store.get("ssl.keystore.password", ""),
                 settings.get("ssl.key.password"))


def _load_pkcs12(context: ssl.SSLContext, prefix: str, path: Path, password: str, key_password: str | None) -> None:
    from cryptography.hazmat.primitives.serialization import (
        BestAvailableEncryption,
        Encoding,
        PrivateFormat,
        pkcs12,
    )

    try:
        data = path.read_bytes()
    except OSError as e:
        raise ConfigException(prefix + "ssl.keystore.location", str(path), f"cannot read the key store: {e.strerror}") \
            from None
    store = None
    for candidate in dict.fromkeys([password, key_password or password]):
        try:
            store = pkcs12.load_key_and_certificates(data, candidate.encode() if candidate else None)
            break
        except ValueError:
            continue
    if store is None:
        raise ConfigException(prefix + "ssl.keystore.password", "[hidden]", "cannot open the PKCS12 key store "
                              f"{path}: wrong password or not a PKCS12 file")
    key, cert, chain = store
    if key is None or cert is None:
        raise ConfigException(prefix + "ssl.keystore.location", str(path), "the key store holds no private key "
                                                                            "with its certificate")
    transit = secrets.token_urlsafe(24)  # the PEM copy lives for one load_cert_chain, encrypted all the same
    pem = key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, BestAvailableEncryption(transit.encode()))
    pem += b"".join(c.public_bytes(Encoding.PEM) for c in [cert, *chain])
    with _private_file(pem) as pem_path:
        _load_chain(context, prefix, pem_path, transit)


def _load_chain(context: ssl.SSLContext, prefix: str, path: str, password: str | None) -> None:
    try:
        context.load_cert_chain(path, password=password or None)
    except FileNotFoundError:
        raise ConfigException(prefix + "ssl.keystore.location", path, "no such file") from None
    except (ssl.SSLError, ValueError) as e:
        raise ConfigException(prefix + "ssl.keystore.location", path, "cannot load the private key and its "
                              f"certificate chain (PEM; an encrypted key needs {prefix}ssl.key.password): {e}") from None


@contextlib.contextmanager
def _private_file(content: bytes) -> Iterator[str]:
    """``content`` in a file only this user can read, removed on exit."""
    directory = tempfile.mkdtemp(prefix="connect-magics-tls-")  # mode 0700
    path = os.path.join(directory, "keystore.pem")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(content)
        yield path
    finally:
        with contextlib.suppress(OSError):
            os.remove(path)
        with contextlib.suppress(OSError):
            os.rmdir(directory)


def _load_truststore(context: ssl.SSLContext, settings: dict[str, str]) -> None:
    from connect_magics.security.stores import truststore_settings

    trust = truststore_settings(settings)
    try:
        if "ssl.ca.pem" in trust:
            context.load_verify_locations(cadata=trust["ssl.ca.pem"])
        elif "ssl.ca.location" in trust:
            context.load_verify_locations(cafile=trust["ssl.ca.location"])
        else:  # as the JVM's default trust store
            context.load_default_certs(ssl.Purpose.CLIENT_AUTH)
    except (OSError, ssl.SSLError) as e:
        raise ConfigException("ssl.truststore.location", settings.get("ssl.truststore.location"),
                              f"cannot load the trusted certificates: {e}") from None


def _set_protocols(context: ssl.SSLContext, prefix: str, settings: dict[str, str]) -> None:
    value = settings.get("ssl.enabled.protocols", "TLSv1.2,TLSv1.3")
    names = [p.strip() for p in value.split(",") if p.strip()]
    unknown = [p for p in names if p not in _PROTOCOLS]
    if unknown or not names:
        raise ConfigException(prefix + "ssl.enabled.protocols", value, "must list TLSv1.2, TLSv1.3 (or the older "
                                                                       "TLSv1, TLSv1.1)")
    versions = sorted(_PROTOCOLS[p] for p in names)
    try:
        context.minimum_version, context.maximum_version = versions[0], versions[-1]
    except (ValueError, ssl.SSLError) as e:
        raise ConfigException(prefix + "ssl.enabled.protocols", value, f"not available in this OpenSSL: {e}") from None


class BoundListeners:
    """Sockets bound for ``listeners`` (port 0: a free port, known from now on in :attr:`listeners`) and the
    https listeners' TLS context from ``config``. Refuses a listener on anything but loopback unless ``auth``
    is given or it is https with ``ssl.client.auth=required``; a busy port raises ``OSError`` whose ``filename``
    is the listener."""

    def __init__(self, listeners: Sequence[Listener], config: Mapping[str, str], auth: RestAuth | None = None) -> None:
        if not listeners:
            raise ConfigException("listeners", "", "at least one URL is expected")
        https = any(listener.scheme == "https" for listener in listeners)
        mutual_tls = https and client_auth(config) == "required"
        for listener in listeners:
            check_listener(listener.host or "0.0.0.0", auth, mutual_tls=mutual_tls and listener.scheme == "https")
        self.ssl_context = server_ssl_context(config) if https else None
        self.sockets: list[tuple[Listener, list[socket.socket]]] = []
        try:
            for listener in listeners:
                sockets = _bind(listener)
                self.sockets.append((replace(listener, port=sockets[0].getsockname()[1]), sockets))
        except BaseException:
            self.close()
            raise

    @property
    def listeners(self) -> list[Listener]:
        """The listeners as bound: their real ports."""
        return [listener for listener, _ in self.sockets]

    def close(self) -> None:
        for _, sockets in self.sockets:
            for sock in sockets:
                sock.close()


def _bind(listener: Listener) -> list[socket.socket]:
    import tornado.netutil

    try:
        return tornado.netutil.bind_sockets(listener.port, listener.host or None)  # "": IPv4 and IPv6
    except OSError as e:
        raise OSError(e.errno, e.strerror or str(e), str(listener)) from None  # names the listener


def listener_url(listener: Listener) -> str:
    """Where ``listener`` can be reached from this machine (every interface: shown as 0.0.0.0)."""
    return str(replace(listener, host=listener.host or "0.0.0.0"))


__all__ = ["BoundListeners", "client_auth", "https_settings", "listener_url", "server_ssl_context"]
