"""Authorization and authentication failures of the runtime's Kafka clients, named as an operator fixes them.

librdkafka reports a missing ACL as ``TOPIC_AUTHORIZATION_FAILED``, ``GROUP_AUTHORIZATION_FAILED``,
``TRANSACTIONAL_ID_AUTHORIZATION_FAILED`` or ``CLUSTER_AUTHORIZATION_FAILED``, without saying which
resource, which operation or whose. The code that made the request knows the first two; the principal comes
from the client's settings (``sasl.username``, the TLS certificate's subject, the Kerberos or OAuth client
name), else it is "the worker's principal". :func:`access_error` turns such a failure into a
:class:`KafkaAuthorizationError` whose message says all three and the ``kafka-acls.sh`` line that grants it
(docs/security.md lists every ACL the worker needs). :func:`check_connection` fails fast on a refused login
(:class:`KafkaAuthenticationError`) instead of waiting for a timeout.

>>> cfg = {"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "connect"}
>>> print(KafkaAuthorizationError(principal(cfg), [("WRITE", "topic", "nb-status")]))
Principal User:connect is not authorized to WRITE topic 'nb-status'. Grant it with: kafka-acls.sh --add \
--allow-principal User:connect --operation Write --topic nb-status (docs/security.md lists every ACL the worker needs)

This module imports only confluent-kafka and ``connect_magics.api``/``errors`` (storage and runtime use it).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from confluent_kafka import KafkaError, KafkaException, TopicCollection
from confluent_kafka.admin import AclOperation, AdminClient

from connect_magics.api.config import ConfigException
from connect_magics.api.errors import ConnectException
from connect_magics.errors import ConnectRestError

log = logging.getLogger(__name__)

__all__ = ["AUTHORIZATION_FAILURES", "KafkaAccessError", "KafkaAuthenticationError", "KafkaAuthorizationError",
           "access_error", "authorization_code", "check_connection", "check_group_operations",
           "check_topic_operations", "principal"]

#: librdkafka's authorization failures, by the kind of resource each is about.
AUTHORIZATION_FAILURES = {
    KafkaError.TOPIC_AUTHORIZATION_FAILED: "topic",
    KafkaError.GROUP_AUTHORIZATION_FAILED: "group",
    KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED: "transactional id",
    KafkaError.CLUSTER_AUTHORIZATION_FAILED: "cluster",
}
#: ``kafka-acls.sh`` resource options by kind.
_ACL_OPTION = {"topic": "--topic", "group": "--group", "transactional id": "--transactional-id",
               "cluster": "--cluster"}
UNKNOWN_PRINCIPAL = "the worker's principal"

#: (operation, kind, name[, pattern]): one missing ACL, e.g. ("WRITE", "topic", "nb-status").
Missing = tuple[str, ...]


class KafkaAccessError(ConnectRestError, ConnectException):
    """The broker refused the runtime's Kafka client: a missing ACL or a refused login. A task that raises it
    fails (its status trace starts with the message); an API call answers it as a 500 (Kafka Connect's status
    for a failed request)."""


class KafkaAuthorizationError(KafkaAccessError):
    """``principal`` lacks the ACLs ``missing``, each ``(operation, kind, name)`` or ``(operation, kind, name,
    "PREFIXED")``; ``context`` says what the runtime was doing."""

    def __init__(self, principal: str, missing: Sequence[Missing], context: str | None = None,
                 cause: str | None = None) -> None:
        self.principal = principal
        self.missing = [tuple(m) for m in missing]
        what = "; ".join(_describe(m) for m in self.missing)
        hint = "; ".join(_grant_line(principal, m) for m in self.missing)
        message = f"Principal {principal} is not authorized to {what}"
        if context:
            message += f" ({context})"
        if cause:
            message += f": {cause}"
        message += f". Grant it with: {hint} (docs/security.md lists every ACL the worker needs)"
        super().__init__(message)

    @property
    def operation(self) -> str:
        return self.missing[0][0]

    @property
    def resource(self) -> tuple[str, str]:
        """``(kind, name)`` of the first missing ACL."""
        return self.missing[0][1], self.missing[0][2]


class KafkaAuthenticationError(ConfigException):
    """The broker refused the credentials of the worker's settings (a wrong password, an unknown user, a
    certificate it does not trust). A :class:`~connect_magics.api.config.ConfigException`, as every other
    unusable client setting the runtime refuses at start."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


def _describe(missing: Missing) -> str:
    operation, kind, name = missing[:3]
    if kind == "cluster":
        return f"{operation} the cluster"
    prefixed = len(missing) > 3 and str(missing[3]).upper() == "PREFIXED"
    return f"{operation} {kind}s prefixed '{name}'" if prefixed else f"{operation} {kind} '{name}'"


def _grant_line(principal: str, missing: Missing) -> str:
    operation, kind, name = missing[:3]
    who = principal if principal.startswith("User:") else "User:<the worker's principal>"
    line = f"kafka-acls.sh --add --allow-principal {who} --operation {operation.replace('_', '').title()}"
    if operation == "IDEMPOTENT_WRITE":
        line = line.replace("Idempotentwrite", "IdempotentWrite")
    line += f" {_ACL_OPTION[kind]}" + ("" if kind == "cluster" else f" {name}")
    if len(missing) > 3 and str(missing[3]).upper() == "PREFIXED":
        line += " --resource-pattern-type prefixed"
    return line


# -- whose request --------------------------------------------------------------------------------------------

def principal(client_config: Mapping[str, Any]) -> str:
    """Who the broker sees, as far as the client's settings tell: ``User:{sasl.username}`` for PLAIN and SCRAM,
    the Kerberos principal or OAuth client, the TLS client certificate's subject, else "the worker's
    principal".

    >>> principal({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.username": "connect"})
    'User:connect'
    >>> principal({"bootstrap.servers": "b:9092"})
    "the worker's principal"
    """
    protocol = str(client_config.get("security.protocol", "PLAINTEXT")).upper()
    mechanism = str(client_config.get("sasl.mechanism", client_config.get("sasl.mechanisms", "GSSAPI"))).upper()
    if protocol.startswith("SASL"):
        if mechanism in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512") and client_config.get("sasl.username"):
            return f"User:{client_config['sasl.username']}"
        if mechanism == "GSSAPI" and client_config.get("sasl.kerberos.principal"):
            return f"the Kerberos principal {client_config['sasl.kerberos.principal']}"
        if mechanism == "OAUTHBEARER" and client_config.get("sasl.oauthbearer.client.id"):
            return f"the principal of OAuth client {client_config['sasl.oauthbearer.client.id']}"
        return UNKNOWN_PRINCIPAL
    if protocol == "SSL":
        subject = _certificate_subject(client_config)
        if subject:
            return f"the principal of TLS certificate '{subject}'"
    return UNKNOWN_PRINCIPAL


def _certificate_subject(config: Mapping[str, Any]) -> str | None:
    """The client certificate's subject (RFC 4514), from a PEM file or text or a PKCS12 key store."""
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives.serialization import pkcs12

        if config.get("ssl.certificate.pem"):
            cert = x509.load_pem_x509_certificate(str(config["ssl.certificate.pem"]).encode())
        elif config.get("ssl.certificate.location"):
            with open(str(config["ssl.certificate.location"]), "rb") as f:
                cert = x509.load_pem_x509_certificate(f.read())
        elif config.get("ssl.keystore.location"):
            with open(str(config["ssl.keystore.location"]), "rb") as f:
                password = config.get("ssl.keystore.password")
                cert = pkcs12.load_key_and_certificates(f.read(), str(password).encode() if password else None)[1]
        else:
            return None
        return cert.subject.rfc4514_string() if cert is not None else None
    except Exception:  # noqa: BLE001 - only for naming the principal in a message
        return None


# -- which failure ----------------------------------------------------------------------------------------------

def _kafka_error(error: Any) -> KafkaError | None:
    if isinstance(error, KafkaError):
        return error
    if isinstance(error, KafkaException) and error.args and isinstance(error.args[0], KafkaError):
        return error.args[0]
    return None


def authorization_code(error: Any) -> int | None:
    """The authorization failure code of ``error`` (a KafkaError, a KafkaException, or an exception whose
    cause or context is one), else None."""
    seen = error
    while seen is not None:
        err = _kafka_error(seen)
        if err is not None and err.code() in AUTHORIZATION_FAILURES:
            return err.code()
        if isinstance(seen, KafkaAuthorizationError):
            return None
        seen = getattr(seen, "__cause__", None) or getattr(seen, "__context__", None)
    return None


def access_error(error: Any, client_config: Mapping[str, Any], context: str | None = None, *,
                 topic: tuple[str, str] | None = None, group: tuple[str, str] | None = None,
                 transactional_id: tuple[str, str] | None = None,
                 cluster: str | None = None) -> KafkaAuthorizationError | None:
    """``error`` as a :class:`KafkaAuthorizationError` if it is an authorization failure, else None (an
    authorization error already named is returned as it is).

    ``topic``, ``group`` and ``transactional_id`` are ``(operation, name)`` of the request's resource of that
    kind, ``cluster`` the operation on the cluster: the failure's code says which of them was refused.

    >>> e = KafkaException(KafkaError(KafkaError.GROUP_AUTHORIZATION_FAILED))
    >>> access_error(e, {"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "sasl.username": "c"},
    ...              group=("READ", "connect-sink")).missing
    [('READ', 'group', 'connect-sink')]
    """
    named = _named(error)
    if named is not None:
        return named
    code = authorization_code(error)
    if code is None:
        return None
    kind = AUTHORIZATION_FAILURES[code]
    resource = {"topic": topic, "group": group, "transactional id": transactional_id,
                "cluster": (cluster, "kafka-cluster") if cluster else None}[kind]
    if resource is None:  # the request's resource of that kind is not known here
        resource = ("DESCRIBE" if kind != "transactional id" else "WRITE", _unnamed(kind))
    operation, name = resource
    err = _kafka_error(error) or next((_kafka_error(e) for e in _chain(error) if _kafka_error(e)), None)
    return KafkaAuthorizationError(principal(client_config), [(operation, kind, name)], context,
                                   err.str() if err is not None else None)


def _unnamed(kind: str) -> str:
    return {"topic": "(a topic of the request)", "group": "(the request's group)",
            "transactional id": "(the request's transactional id)"}.get(kind, "kafka-cluster")


def _chain(error: Any) -> Iterable[Any]:
    seen = error
    while seen is not None:
        yield seen
        seen = getattr(seen, "__cause__", None) or getattr(seen, "__context__", None)


def _named(error: Any) -> KafkaAuthorizationError | None:
    return next((e for e in _chain(error) if isinstance(e, KafkaAuthorizationError)), None)


# -- checks ------------------------------------------------------------------------------------------------------

_COORDINATOR_NOT_READY = (KafkaError.COORDINATOR_LOAD_IN_PROGRESS, KafkaError.COORDINATOR_NOT_AVAILABLE,
                          KafkaError.NOT_COORDINATOR)
#: An operation is implied by these (Kafka's ``AclEntry``: READ, WRITE, DELETE and ALTER imply DESCRIBE).
_IMPLIES_DESCRIBE = {"READ", "WRITE", "DELETE", "ALTER"}


def _wanted(operations: Iterable[str]) -> list[str]:
    """Operations to ask for, without DESCRIBE when another of them implies it."""
    ops = [o.upper() for o in operations]
    return [o for o in ops if not (o == "DESCRIBE" and _IMPLIES_DESCRIBE & set(ops))]


def _lacking(ops: list[str], authorized: list[AclOperation] | None) -> list[str]:
    """The operations of ``ops`` not among ``authorized`` (None: the broker did not say, so none is lacking)."""
    if authorized is None:
        return []
    allowed = {op.name for op in authorized}
    return [] if AclOperation.ALL.name in allowed else [op for op in ops if op not in allowed]


def check_topic_operations(admin: AdminClient, client_config: Mapping[str, Any],
                           wanted: Mapping[str, Iterable[str]], timeout: float = 30.0) -> list[Missing]:
    """The ACLs missing for ``wanted`` (topic name → operations), asked of the broker in one DescribeTopics
    request with the principal's authorized operations: ``[(operation, "topic", name), ...]``. A topic the
    principal may not even DESCRIBE lacks every operation wanted; one that does not exist, or whose operations
    the broker cannot tell now, lacks none (the requests themselves will tell)."""
    if not wanted:
        return []
    futures = admin.describe_topics(TopicCollection(list(wanted)), request_timeout=timeout,
                                    include_authorized_operations=True)
    missing: list[Missing] = []
    for name, future in futures.items():
        ops = _wanted(wanted[name])
        try:
            described = future.result(timeout + 5).authorized_operations
        except KafkaException as e:
            if authorization_code(e) is None:  # not there (yet), or cannot tell: the requests themselves will
                log.debug("Cannot ask for the operations allowed on topic %s: %s", name, e)
                continue
            missing.extend((op, "topic", name) for op in (ops or ["DESCRIBE"]))
            continue
        missing.extend((op, "topic", name) for op in _lacking(ops, described))
    return missing


def check_group_operations(admin: AdminClient, wanted: Mapping[str, Iterable[str]],
                           timeout: float = 30.0) -> list[Missing]:
    """The same as :func:`check_topic_operations` for consumer groups (an unknown group is described as empty,
    with the principal's operations on it; a coordinator still loading is asked again)."""
    missing: list[Missing] = []
    deadline = time.monotonic() + timeout
    for name, operations in wanted.items():
        ops = _wanted(operations)
        while True:
            remaining = max(1.0, deadline - time.monotonic())
            future = admin.describe_consumer_groups([name], request_timeout=remaining,
                                                    include_authorized_operations=True)[name]
            try:
                described = future.result(remaining + 5).authorized_operations
                break
            except KafkaException as e:
                if authorization_code(e) is not None:
                    described = None
                    missing.extend((op, "group", name) for op in (ops or ["DESCRIBE"]))
                    break
                if e.args[0].code() in _COORDINATOR_NOT_READY and time.monotonic() < deadline:
                    time.sleep(0.1)  # a broker that just started loads its groups
                    continue
                log.debug("Cannot ask for the operations allowed on group %s: %s", name, e)
                described = None
                break
        missing.extend((op, "group", name) for op in _lacking(ops, described))
    return missing


def check_connection(client_config: Mapping[str, Any], timeout: float = 30.0,
                     logger: logging.Logger | None = None) -> Any:
    """Connect an admin client and return the cluster's metadata; raise :class:`KafkaAuthenticationError` as
    soon as the broker refuses the login (librdkafka itself would retry it until every request timed out),
    and the last error if the cluster cannot be reached within ``timeout``."""
    errors: list[KafkaError] = []
    settings = {k: v for k, v in client_config.items() if k not in ("error_cb", "logger")}
    admin = AdminClient({**settings, "error_cb": errors.append,
                         **({"logger": logger} if logger is not None else {})})
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        try:
            return admin.list_topics(timeout=max(0.1, min(1.0, remaining)))
        except KafkaException as e:
            admin.poll(0)  # serves error_cb
            refused = next((err for err in errors if err.code() == KafkaError._AUTHENTICATION), None)
            if refused is not None:
                raise KafkaAuthenticationError(authentication_message(refused, client_config)) from None
            if remaining <= 1.0:
                raise e from None


def authentication_message(error: KafkaError, client_config: Mapping[str, Any]) -> str:
    """What a refused login says: who, how, the broker's words, and the settings to check."""
    protocol = str(client_config.get("security.protocol", "PLAINTEXT")).upper()
    who = principal(client_config)
    if protocol.startswith("SASL"):
        mechanism = str(client_config.get("sasl.mechanism", client_config.get("sasl.mechanisms", "GSSAPI"))).upper()
        how = f"SASL {mechanism} authentication of {who}"
        check = ("check the credentials in sasl.jaas.config (or sasl.username / sasl.password) of the worker's "
                 "settings")
    else:
        how = f"TLS authentication of {who}"
        check = "check the client certificate (ssl.keystore.* or ssl.certificate.*) and ssl.truststore.*"
    return (f"Authentication failed: the broker at {client_config.get('bootstrap.servers')} refused the {how} "
            f"({error.str()}); {check}")


def raise_access(error: BaseException, client_config: Mapping[str, Any], context: str | None = None,
                 **resources: Any) -> None:
    """Raise ``error`` as a :class:`KafkaAuthorizationError` (chained) if it is an authorization failure;
    return otherwise (the caller re-raises it)."""
    named = access_error(error, client_config, context, **resources)
    if named is not None and named is not error:
        raise named from (error if isinstance(error, BaseException) else KafkaException(error))


def first_line_trace(error: BaseException, format_trace: Callable[[BaseException], str]) -> str:
    """A status trace for ``error`` whose first line is the access error's message (as a Java trace starts with
    the exception), followed by the full trace; other errors' traces as ``format_trace`` gives them."""
    named = _named(error) if isinstance(error, BaseException) else None
    trace = format_trace(error)
    if named is None:
        return trace
    return f"{type(named).__name__}: {named}\n\n{trace}"
