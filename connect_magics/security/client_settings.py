"""Kafka's Java client security settings, as Kafka Connect users write them, turned into librdkafka's.

One table (docs/configuration.md, "Security settings") and one function, :func:`librdkafka_settings`:
librdkafka's own names pass through unchanged, Java names are translated, Java tuning knobs librdkafka
does without are dropped (logged once), and what would change the security of the connection but has no
librdkafka equivalent is refused, naming the key and what to use instead.

>>> librdkafka_settings({"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
...     "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required '
...                         'username="connect" password="s3cret";',
...     "ssl.endpoint.identification.algorithm": ""})  # doctest: +NORMALIZE_WHITESPACE
{'security.protocol': 'SASL_SSL', 'sasl.mechanism': 'SCRAM-SHA-512',
 'ssl.endpoint.identification.algorithm': 'none', 'sasl.username': 'connect', 'sasl.password': 's3cret'}
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from connect_magics.api.config import ConfigException
from connect_magics.security.jaas import KEY as JAAS_KEY
from connect_magics.security.jaas import jaas_settings
from connect_magics.security.stores import keystore_settings, truststore_settings

log = logging.getLogger(__name__)

#: KIP-768's login callback handler (3.1-3.3 and 3.4+ names): librdkafka's OIDC method does its work.
OIDC_HANDLERS = frozenset({"org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
                           "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler"})
#: Java classes plugged into the client's security: no librdkafka equivalent, so refused with what to use.
REFUSED = {
    "sasl.login.callback.handler.class": "librdkafka logs in by itself: give sasl.jaas.config (or sasl.username/"
                                         "sasl.password, sasl.oauthbearer.* for OIDC)",
    "sasl.client.callback.handler.class": "librdkafka has no client callback handlers: give the credentials in "
                                          "sasl.jaas.config",
    "sasl.login.class": "librdkafka logs in by itself: give sasl.jaas.config",
    "ssl.engine.factory.class": "librdkafka uses OpenSSL: give the stores (ssl.truststore.*, ssl.keystore.*)",
}
#: Java tuning knobs with no librdkafka equivalent and no bearing on who may connect: dropped (logged once).
IGNORED_PREFIXES = ("ssl.client.auth", "ssl.protocol", "ssl.keymanager.algorithm", "ssl.trustmanager.algorithm",
                    "ssl.secure.random.implementation", "ssl.provider", "sasl.login.refresh.",
                    "sasl.login.connect.timeout.ms", "sasl.login.read.timeout.ms", "sasl.login.retry.backoff.",
                    "sasl.kerberos.ticket.renew.", "sasl.oauthbearer.scope.claim.name",
                    "sasl.oauthbearer.sub.claim.name", "sasl.oauthbearer.jwks.endpoint.", "sasl.oauthbearer.expected.",
                    "sasl.oauthbearer.clock.skew.seconds", "sasl.oauthbearer.header.urlencode")
STORE_KEYS = ("ssl.truststore.location", "ssl.truststore.password", "ssl.truststore.type",
              "ssl.truststore.certificates", "ssl.keystore.type", "ssl.keystore.key", "ssl.keystore.certificate.chain")
_MODERN_TLS = {"TLSv1.2", "TLSv1.3"}
_warned: set[str] = set()


def librdkafka_settings(settings: Mapping[str, str]) -> dict[str, str]:
    """``settings`` with Java client security settings turned into librdkafka's (see the module's docs);
    raises :class:`~connect_magics.api.config.ConfigException` naming the key for what cannot be."""
    if not any(k.startswith(("sasl.", "ssl.")) for k in settings):
        return dict(settings)
    out: dict[str, str] = {}
    for key, value in settings.items():
        if key == "sasl.login.callback.handler.class" and value.strip() in OIDC_HANDLERS:
            continue
        if key in REFUSED:
            raise ConfigException(key, value, f"has no librdkafka equivalent: {REFUSED[key]}")
        if key == "ssl.enabled.protocols":
            old = {p.strip() for p in value.split(",") if p.strip()} - _MODERN_TLS
            if old:
                raise ConfigException(key, value, f"librdkafka negotiates TLSv1.2 or TLSv1.3 only; {sorted(old)[0]} "
                                                  "cannot be enabled")
            _warn_once(key, "librdkafka negotiates TLSv1.2 or TLSv1.3 by itself")
            continue
        if key.startswith(IGNORED_PREFIXES):
            _warn_once(key, "a Java client setting librdkafka does without")
            continue
        if key == "ssl.cipher.suites" and value.strip().startswith("TLS_"):
            raise ConfigException(key, value, "librdkafka takes OpenSSL's cipher names (such as "
                                              "ECDHE-RSA-AES256-GCM-SHA384), not Java's")
        if key == "ssl.endpoint.identification.algorithm":
            value = value.strip().lower() or "none"
        if key == JAAS_KEY or key in STORE_KEYS or key.startswith("ssl.keystore."):
            continue
        out[key] = value
    if JAAS_KEY in settings:
        out.update(jaas_settings(settings[JAAS_KEY]))
    out.update(truststore_settings(dict(settings)))
    out.update(keystore_settings(dict(settings)))
    return out


def _warn_once(key: str, why: str) -> None:
    if key not in _warned:
        _warned.add(key)
        log.warning("Ignoring the client setting %s: %s (docs/configuration.md, 'Security settings')", key, why)


#: librdkafka names that Kafka's Java clients (Spark's Kafka source) do not know, and their Java form.
_LIBRDKAFKA_ONLY = ("sasl.username", "sasl.password", "ssl.ca.location", "ssl.ca.pem", "ssl.key.pem",
                    "ssl.certificate.pem", "ssl.key.location", "ssl.certificate.location", "sasl.oauthbearer.")
_JAAS_MODULES = {"PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
                 "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
                 "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule"}


def java_settings(settings: Mapping[str, str]) -> dict[str, str]:
    """The security settings of ``settings`` as Kafka's Java clients take them (for Spark's Kafka source, whose
    options are ``kafka.``-prefixed Java client settings): Java names pass through, librdkafka's SASL
    username and password become a ``sasl.jaas.config`` line and a PEM CA file a PEM trust store.

    >>> java_settings({"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.username": "u",
    ...                "sasl.password": "p", "ssl.ca.location": "/ca.pem"})  # doctest: +NORMALIZE_WHITESPACE
    {'security.protocol': 'SASL_SSL', 'sasl.mechanism': 'PLAIN',
     'sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";',
     'ssl.truststore.type': 'PEM', 'ssl.truststore.location': '/ca.pem'}
    """
    out = {k: v for k, v in settings.items()
           if k.startswith(("security.protocol", "sasl.", "ssl.")) and not k.startswith(_LIBRDKAFKA_ONLY)}
    module = _JAAS_MODULES.get(settings.get("sasl.mechanism", "PLAIN").upper())
    if "sasl.jaas.config" not in out and "sasl.username" in settings and module is not None:
        def quoted(value: str) -> str:
            return value.replace("\\", "\\\\").replace('"', '\\"')
        out["sasl.jaas.config"] = (f'{module} required username="{quoted(settings["sasl.username"])}" '
                                   f'password="{quoted(settings.get("sasl.password", ""))}";')
    if "ssl.truststore.location" not in out and "ssl.ca.location" in settings:
        out.update({"ssl.truststore.type": "PEM", "ssl.truststore.location": settings["ssl.ca.location"]})
    if out.get("ssl.endpoint.identification.algorithm", "").lower() == "none":
        out["ssl.endpoint.identification.algorithm"] = ""
    return out
