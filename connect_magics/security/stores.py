"""Java trust and key stores (JKS, PKCS12, PEM) as librdkafka takes them.

librdkafka reads PEM certificates (``ssl.ca.location``, ``ssl.certificate.location``, ``ssl.key.location``
or the ``*.pem`` strings) and PKCS12 key stores (``ssl.keystore.location``); Kafka's Java clients take JKS,
PKCS12 and PEM stores. A PKCS12 trust store is read with ``cryptography``; a JKS store is converted once
with the JDK's ``keytool`` (a JDK is there wherever Spark runs) into a private cache
(``~/.cache/connect-magics/stores``, mode 0700, one file per store content and password, 0600).

>>> truststore_settings({"ssl.truststore.type": "PEM", "ssl.truststore.location": "/etc/ca.pem"})
{'ssl.ca.location': '/etc/ca.pem'}
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from connect_magics.api.config import ConfigException

CACHE_ENV = "CONNECT_MAGICS_CACHE"


def store_cache() -> Path:
    """Where converted stores are kept (``$CONNECT_MAGICS_CACHE/stores``, else the user's cache)."""
    base = Path(os.environ.get(CACHE_ENV) or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
                / "connect-magics")
    path = base / "stores"
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o700)
    return path


def _store_type(settings: dict[str, str], which: str) -> str:
    kind = settings.get(f"ssl.{which}.type", "JKS").strip().upper()
    if kind not in ("JKS", "PKCS12", "PEM"):
        raise ConfigException(f"ssl.{which}.type", kind, "librdkafka's clients take JKS, PKCS12 or PEM stores")
    return kind


def _read(key: str, location: str) -> bytes:
    try:
        return Path(location).read_bytes()
    except OSError as e:
        raise ConfigException(key, location, f"cannot read the store: {e.strerror}") from None


def truststore_settings(settings: dict[str, str]) -> dict[str, str]:
    """librdkafka's CA settings for ``ssl.truststore.*`` (or ``ssl.truststore.certificates``, PEM text)."""
    if "ssl.truststore.certificates" in settings:
        return {"ssl.ca.pem": settings["ssl.truststore.certificates"]}
    location = settings.get("ssl.truststore.location")
    if not location:
        return {}
    kind = _store_type(settings, "truststore")
    if kind == "PEM":
        return {"ssl.ca.location": location}
    password = settings.get("ssl.truststore.password", "")
    data = _read("ssl.truststore.location", location)
    if kind == "JKS" and not data.startswith(b"\xfe\xed\xfe\xed"):
        kind = "PKCS12"  # Java 9+ reads a PKCS12 file named as JKS too
    pem = _cached(data, password, "ca.pem",
                  lambda: _pkcs12_certificates(data, password) if kind == "PKCS12" else _jks_certificates(location, password))
    return {"ssl.ca.location": str(pem)}


def keystore_settings(settings: dict[str, str]) -> dict[str, str]:
    """librdkafka's client certificate settings for ``ssl.keystore.*`` (PKCS12 as it is, JKS converted to
    PKCS12, PEM files or ``ssl.keystore.key`` / ``ssl.keystore.certificate.chain`` text)."""
    if "ssl.keystore.key" in settings:
        out = {"ssl.key.pem": settings["ssl.keystore.key"],
               "ssl.certificate.pem": settings.get("ssl.keystore.certificate.chain", "")}
        return out | ({"ssl.key.password": settings["ssl.key.password"]} if "ssl.key.password" in settings else {})
    location = settings.get("ssl.keystore.location")
    if not location:
        return {}
    kind = _store_type(settings, "keystore")
    password = settings.get("ssl.keystore.password", "")
    if kind == "PEM":  # one file with the private key and the certificate chain
        out = {"ssl.key.location": location, "ssl.certificate.location": location}
        return out | ({"ssl.key.password": settings["ssl.key.password"]} if "ssl.key.password" in settings else {})
    data = _read("ssl.keystore.location", location)
    if kind == "JKS" and data.startswith(b"\xfe\xed\xfe\xed"):
        if settings.get("ssl.key.password", password) != password:
            raise ConfigException("ssl.key.password", "[hidden]", "a JKS key store whose key has a password of its "
                                  "own is not supported: give the key the store's password, or use PKCS12 or PEM")
        location = str(_cached(data, password, "keystore.p12", lambda: _jks_to_pkcs12(location, password)))
    return {"ssl.keystore.location": location, "ssl.keystore.password": password}


def _cached(data: bytes, password: str, suffix: str, convert) -> Path:
    """The converted store for this content and password, converted on first use."""
    digest = hashlib.sha256(data + b"\0" + password.encode()).hexdigest()[:32]
    path = store_cache() / f"{digest}-{suffix}"
    if not path.exists():
        content: bytes = convert()
        fd, tmp = tempfile.mkstemp(dir=path.parent)
        with os.fdopen(fd, "wb") as out:
            out.write(content)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    return path


def _pkcs12_certificates(data: bytes, password: str) -> bytes:
    from cryptography.hazmat.primitives.serialization import Encoding, pkcs12

    try:
        store = pkcs12.load_pkcs12(data, password.encode() if password else None)
    except ValueError as e:
        raise ConfigException("ssl.truststore.password", "[hidden]", f"cannot open the PKCS12 trust store: {e}") \
            from None
    certs = ([store.cert] if store.cert is not None else []) + list(store.additional_certs)
    if not certs:
        raise ConfigException("ssl.truststore.location", None, "the trust store holds no certificate")
    return b"".join(c.certificate.public_bytes(Encoding.PEM) for c in certs)


def keytool() -> str:
    """The JDK's keytool: ``$JAVA_HOME/bin/keytool``, else the one on the PATH."""
    home = os.environ.get("JAVA_HOME")
    candidates = [str(Path(home) / "bin" / "keytool")] if home else []
    candidates.append(shutil.which("keytool") or "")
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise ConfigException("ssl.truststore.type", "JKS", "a JKS store needs the JDK's keytool (set JAVA_HOME), or "
                                                        "convert the store to PKCS12 or PEM")


def _run_keytool(args: list[str], password: str, key: str, location: str) -> bytes:
    """keytool's output (the store's password through the environment, never the command line)."""
    env = {**os.environ, "CM_STOREPASS": password}
    result = subprocess.run([keytool(), *args], capture_output=True, timeout=60, env=env)
    if result.returncode != 0:
        reason = (result.stdout + result.stderr).decode(errors="replace").strip().splitlines()
        raise ConfigException(key, location, f"keytool cannot read the JKS store: "
                                             f"{reason[-1] if reason else result.returncode}")
    return result.stdout


def _jks_certificates(location: str, password: str) -> bytes:
    text = _run_keytool(["-list", "-rfc", "-keystore", location, "-storetype", "JKS", "-storepass:env",
                         "CM_STOREPASS"], password, "ssl.truststore.location", location).decode()
    end = "-----END CERTIFICATE-----"
    pems = ["-----BEGIN CERTIFICATE-----" + block.split("-----BEGIN CERTIFICATE-----", 1)[1] + end + "\n"
            for block in text.split(end)[:-1] if "-----BEGIN CERTIFICATE-----" in block]
    if not pems:
        raise ConfigException("ssl.truststore.location", location, "the trust store holds no certificate")
    return "".join(pems).encode()


def _jks_to_pkcs12(location: str, password: str) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "store.p12"
        _run_keytool(["-importkeystore", "-noprompt", "-srckeystore", location, "-srcstoretype", "JKS",
                      "-srcstorepass:env", "CM_STOREPASS", "-destkeystore", str(target), "-deststoretype", "PKCS12",
                      "-deststorepass:env", "CM_STOREPASS"], password, "ssl.keystore.location", location)
        return target.read_bytes()


def https_client_files(settings: dict[str, str]) -> dict[str, str]:
    """The files an HTTPS client (Python's ``ssl``) needs for Kafka's ``ssl.*`` store settings:
    ``ssl.ca.location`` (PEM CAs), ``ssl.certificate.location`` and ``ssl.key.location`` (PEM), and
    ``ssl.key.password`` when the key is encrypted. JKS and PKCS12 stores are converted once and cached.

    >>> https_client_files({})
    {}
    """
    out = {k: v for k, v in truststore_settings(settings).items() if k == "ssl.ca.location"}
    if "ssl.truststore.certificates" in settings:
        out["ssl.ca.location"] = str(_cached(settings["ssl.truststore.certificates"].encode(), "", "ca.pem",
                                             lambda: settings["ssl.truststore.certificates"].encode()))
    keystore = keystore_settings(settings)
    if "ssl.key.pem" in keystore:
        key, chain = keystore["ssl.key.pem"].encode(), keystore["ssl.certificate.pem"].encode()
        out["ssl.key.location"] = str(_cached(key, "", "key.pem", lambda: key))
        out["ssl.certificate.location"] = str(_cached(chain, "", "cert.pem", lambda: chain))
    elif "ssl.key.location" in keystore:
        out["ssl.key.location"], out["ssl.certificate.location"] = keystore["ssl.key.location"], \
            keystore["ssl.certificate.location"]
    elif "ssl.keystore.location" in keystore:
        data, password = Path(keystore["ssl.keystore.location"]).read_bytes(), keystore["ssl.keystore.password"]
        pem = _cached(data, password, "client.pem", lambda: _pkcs12_key_and_chain(data, password))
        out["ssl.key.location"] = out["ssl.certificate.location"] = str(pem)
        return out
    if "ssl.key.password" in keystore:
        out["ssl.key.password"] = keystore["ssl.key.password"]
    return out


def _pkcs12_key_and_chain(data: bytes, password: str) -> bytes:
    from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, pkcs12

    try:
        key, cert, chain = pkcs12.load_key_and_certificates(data, password.encode() if password else None)
    except ValueError as e:
        raise ConfigException("ssl.keystore.password", "[hidden]", f"cannot open the PKCS12 key store: {e}") \
            from None
    if key is None or cert is None:
        raise ConfigException("ssl.keystore.location", None, "the key store holds no private key and certificate")
    return key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()) + b"".join(
        c.public_bytes(Encoding.PEM) for c in [cert, *chain])
