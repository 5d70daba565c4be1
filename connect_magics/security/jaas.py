"""``sasl.jaas.config`` as Kafka's Java clients take it, turned into librdkafka's SASL settings.

A JAAS line names one login module, a control flag and options, and ends with ``;``::

    org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="s3cret";

>>> jaas_settings('org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="b";')
{'sasl.username': 'a', 'sasl.password': 'b'}
>>> jaas_settings('com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true '
...               'keyTab="/etc/kafka.keytab" principal="connect@EXAMPLE.COM";')
{'sasl.kerberos.keytab': '/etc/kafka.keytab', 'sasl.kerberos.principal': 'connect@EXAMPLE.COM'}
"""

from __future__ import annotations

import re

from connect_magics.api.config import ConfigException

KEY = "sasl.jaas.config"
PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
OAUTHBEARER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
KERBEROS = "com.sun.security.auth.module.Krb5LoginModule"
MODULES = (PLAIN, SCRAM, OAUTHBEARER, KERBEROS)
_FLAGS = ("required", "requisite", "sufficient", "optional")
_TOKEN = re.compile(r'\s*(?:(?P<key>[^\s=;"]+)\s*=\s*(?:"(?P<quoted>(?:[^"\\]|\\.)*)"|(?P<bare>[^\s;"]+))'
                    r'|(?P<word>[^\s=;"]+)|(?P<end>;))')


def parse_jaas(text: str) -> tuple[str, dict[str, str]]:
    """``(login module, options)`` of a one-module JAAS configuration; raises ConfigException naming
    ``sasl.jaas.config`` (never its value: it holds a password) when it cannot be read.

    >>> parse_jaas('org.example.Module required a="1" b=2;')
    ('org.example.Module', {'a': '1', 'b': '2'})
    """
    def refuse(reason: str) -> ConfigException:
        return ConfigException(KEY, "[hidden]", reason)

    words: list[str] = []
    options: dict[str, str] = {}
    pos, ended = 0, False
    text = text.strip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            raise refuse(f"cannot read the JAAS configuration at character {pos + 1}")
        pos = match.end()
        if ended and match.group(0).strip():
            raise refuse("holds more than one login module; Kafka clients take exactly one")
        if match.group("end"):
            ended = True
        elif match.group("word"):
            if options:
                raise refuse(f"'{match.group('word')}' is not an option of the form key=value")
            words.append(match.group("word"))
        elif match.group("key"):
            quoted = match.group("quoted")
            options[match.group("key")] = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else match.group("bare")
    if not ended:
        raise refuse("must end with ';'")
    if len(words) != 2 or words[1].lower() not in _FLAGS:
        raise refuse("must be 'LoginModuleClass flag option=\"value\" ...;' with a flag of "
                     f"{', '.join(_FLAGS)}")
    return words[0], options


def jaas_settings(text: str) -> dict[str, str]:
    """librdkafka's settings for a ``sasl.jaas.config`` of Kafka's four login modules (PLAIN, SCRAM,
    OAUTHBEARER with KIP-768's client credentials or an unsecured token, Kerberos with a keytab)."""
    module, options = parse_jaas(text)
    if module in (PLAIN, SCRAM):
        missing = [o for o in ("username", "password") if o not in options]
        if missing:
            raise ConfigException(KEY, "[hidden]", f"the {module.rsplit('.', 1)[1]} needs the option {missing[0]}")
        return {"sasl.username": options["username"], "sasl.password": options["password"]}
    if module == OAUTHBEARER:
        return _oauthbearer(options)
    if module == KERBEROS:
        out = {}
        if options.get("useKeyTab", "false").lower() == "true":
            if "keyTab" not in options:
                raise ConfigException(KEY, "[hidden]", "useKeyTab=true needs the option keyTab")
            out["sasl.kerberos.keytab"] = options["keyTab"]
        if "principal" in options:
            out["sasl.kerberos.principal"] = options["principal"]
        if "serviceName" in options:
            out["sasl.kerberos.service.name"] = options["serviceName"]
        return out
    raise ConfigException(KEY, "[hidden]", f"the login module {module} has no librdkafka equivalent; use one of "
                                           f"{', '.join(MODULES)}")


def _oauthbearer(options: dict[str, str]) -> dict[str, str]:
    """KIP-768's client credentials (``clientId``, ``clientSecret``, ``scope``) become librdkafka's OIDC
    method; Kafka's unsecured tokens (``unsecuredLoginStringClaim_sub``) its unsecured JWTs."""
    if "clientId" in options or "clientSecret" in options:
        out = {"sasl.oauthbearer.method": "oidc", "sasl.oauthbearer.client.id": options.get("clientId", ""),
               "sasl.oauthbearer.client.secret": options.get("clientSecret", "")}
        if "scope" in options:
            out["sasl.oauthbearer.scope"] = options["scope"]
        return out
    if "unsecuredLoginStringClaim_sub" in options:
        claims = [f"principal={options['unsecuredLoginStringClaim_sub']}"]
        if "unsecuredLoginListClaim_scope" in options:
            claims.append(f"scope={options['unsecuredLoginListClaim_scope']}")
        if "unsecuredLoginLifetimeSeconds" in options:
            claims.append(f"lifeSeconds={options['unsecuredLoginLifetimeSeconds']}")
        return {"enable.sasl.oauthbearer.unsecure.jwt": "true", "sasl.oauthbearer.config": " ".join(claims)}
    raise ConfigException(KEY, "[hidden]", "the OAuthBearerLoginModule needs clientId and clientSecret (with "
                                           "sasl.oauthbearer.token.endpoint.url) or unsecuredLoginStringClaim_sub")
