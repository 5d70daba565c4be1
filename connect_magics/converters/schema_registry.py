"""Confluent's Schema Registry settings (``AbstractKafkaSchemaSerDeConfig``), subject naming and a cached
client, shared by the Avro, Protobuf and JSON Schema converters.

The client is confluent-kafka's ``SchemaRegistryClient``; this module turns the settings Kafka Connect users
write (``schema.registry.url``, ``basic.auth.*``, ``bearer.auth.*``, ``schema.registry.ssl.*``) into its
configuration, names subjects as Confluent's strategies do, and caches ids both ways so the registry is
called once per schema, never per record. Its errors become Connect's: a refused or incompatible schema a
:class:`DataException` naming the subject and the registry's message, an unreachable registry a
:class:`RetriableException` naming ``schema.registry.url``, bad credentials a :class:`ConfigException`
naming the setting.

>>> registry_client_config({"schema.registry.url": "http://r:8081", "basic.auth.credentials.source": "USER_INFO",
...                         "basic.auth.user.info": "u:p"})
{'url': 'http://r:8081', 'basic.auth.user.info': 'u:p'}
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Callable, Mapping
from typing import Any

from connect_magics.api.config import (
    AbstractConfig,
    CaseInsensitiveValidString,
    ConfigDef,
    ConfigException,
    Importance,
    Password,
    Type,
)
from connect_magics.api.errors import DataException, RetriableException
from connect_magics.security.stores import https_client_files

MAGIC_BYTE = 0
URL = "schema.registry.url"
TOPIC_NAME_STRATEGY = "io.confluent.kafka.serializers.subject.TopicNameStrategy"
RECORD_NAME_STRATEGY = "io.confluent.kafka.serializers.subject.RecordNameStrategy"
TOPIC_RECORD_NAME_STRATEGY = "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy"
_STRATEGIES = {name: name for name in (TOPIC_NAME_STRATEGY, RECORD_NAME_STRATEGY, TOPIC_RECORD_NAME_STRATEGY)}
_STRATEGIES.update({name.rsplit(".", 1)[1]: name for name in list(_STRATEGIES)})
_SSL_PREFIX = "schema.registry.ssl."
_BEARER_KEYS = ("bearer.auth.token", "bearer.auth.logical.cluster", "bearer.auth.identity.pool.id",
                "bearer.auth.issuer.endpoint.url", "bearer.auth.client.id", "bearer.auth.client.secret",
                "bearer.auth.scope")


def define_registry_settings(config_def: ConfigDef) -> ConfigDef:
    """Add the Schema Registry serde settings Confluent's converters take, with Confluent's defaults."""
    for name, type_, default, doc in [
        (URL, Type.LIST, None, "Comma-separated list of URLs for Schema Registry instances."),
        ("basic.auth.credentials.source", Type.STRING, "URL",
         "How credentials for HTTP basic authentication are given: URL, USER_INFO or SASL_INHERIT."),
        ("basic.auth.user.info", Type.PASSWORD, "", "user:password for basic.auth.credentials.source=USER_INFO."),
        ("schema.registry.basic.auth.user.info", Type.PASSWORD, "", "Deprecated name of basic.auth.user.info."),
        ("bearer.auth.credentials.source", Type.STRING, None,
         "How a bearer token is obtained: STATIC_TOKEN or OAUTHBEARER."),
        ("auto.register.schemas", Type.BOOLEAN, True, "Register schemas not yet in the registry."),
        ("use.latest.version", Type.BOOLEAN, False, "Write with the subject's latest schema."),
        ("latest.compatibility.strict", Type.BOOLEAN, True,
         "With use.latest.version: check that the latest schema is backward compatible with the record's."),
        ("normalize.schemas", Type.BOOLEAN, False, "Normalize schemas before registering or looking them up."),
        ("max.schemas.per.subject", Type.INT, 1000, "Maximum number of schemas cached per subject."),
        ("http.read.timeout.ms", Type.INT, 60000, "How long a call to the registry may take, in ms."),
        ("max.retries", Type.INT, 3, "How often a failed call to the registry is retried."),
        ("retries.wait.ms", Type.INT, 1000, "The first wait before a retry, in ms (doubling each time)."),
        ("key.subject.name.strategy", Type.STRING, TOPIC_NAME_STRATEGY, "How the subject of a key is named."),
        ("value.subject.name.strategy", Type.STRING, TOPIC_NAME_STRATEGY, "How the subject of a value is named."),
    ]:
        validator = None
        if name == "basic.auth.credentials.source":
            validator = CaseInsensitiveValidString.in_("URL", "USER_INFO", "SASL_INHERIT")
        elif name.endswith("subject.name.strategy"):
            validator = _strategy_validator
        config_def.define(name, type_, default, validator, Importance.MEDIUM, doc)
    for name in _BEARER_KEYS:
        config_def.define(name, Type.PASSWORD if name.endswith(("token", "secret")) else Type.STRING, None, None,
                          Importance.LOW, f"Confluent's {name}.")
    return config_def


def _strategy_validator(name: str, value: Any) -> None:
    if value not in _STRATEGIES:
        raise ConfigException(name, value, f"one of {', '.join(sorted(set(_STRATEGIES.values())))}")


def _secret(value: Any) -> str:
    return value.value if isinstance(value, Password) else (value or "")


def registry_client_config(settings: Mapping[str, Any]) -> dict[str, Any]:
    """confluent-kafka's ``SchemaRegistryClient`` configuration for a converter's settings (raw strings)."""
    urls = settings.get(URL)
    if isinstance(urls, (list, tuple)):
        urls = ",".join(urls)
    if not urls or not str(urls).strip():
        raise ConfigException(URL, urls, "Missing required configuration \"schema.registry.url\" which has no "
                                         "default value.")
    conf: dict[str, Any] = {"url": ",".join(u.strip() for u in str(urls).split(","))}
    source = str(settings.get("basic.auth.credentials.source", "URL")).upper()
    user_info = _secret(settings.get("basic.auth.user.info")) or \
        _secret(settings.get("schema.registry.basic.auth.user.info"))
    if source == "USER_INFO":
        if ":" not in user_info:
            raise ConfigException("basic.auth.user.info", "[hidden]",
                                  "basic.auth.credentials.source=USER_INFO needs user:password")
        conf["basic.auth.user.info"] = user_info
    elif source == "SASL_INHERIT":
        jaas = _secret(settings.get("sasl.jaas.config"))
        from connect_magics.security.jaas import jaas_settings

        found = jaas_settings(jaas) if jaas else {}
        if "sasl.username" not in found:
            raise ConfigException("basic.auth.credentials.source", "SASL_INHERIT",
                                  "needs sasl.jaas.config with a username and password in the converter's settings")
        conf["basic.auth.user.info"] = f"{found['sasl.username']}:{found.get('sasl.password', '')}"
    elif source != "URL":
        raise ConfigException("basic.auth.credentials.source", source, "one of URL, USER_INFO, SASL_INHERIT")
    for key, name, scale in (("http.read.timeout.ms", "timeout", 0.001), ("max.retries", "max.retries", 1),
                             ("retries.wait.ms", "retries.wait.ms", 1)):
        if settings.get(key) not in (None, ""):
            try:
                conf[name] = int(settings[key]) * scale
            except (TypeError, ValueError):
                raise ConfigException(key, settings[key], "Not a number of type INT") from None
    bearer_source = settings.get("bearer.auth.credentials.source")
    if bearer_source:
        conf["bearer.auth.credentials.source"] = str(bearer_source).upper()
        for key in _BEARER_KEYS:
            if settings.get(key):
                conf[key] = _secret(settings[key])
    ssl = {"ssl." + k[len(_SSL_PREFIX):]: _secret(v) for k, v in settings.items() if k.startswith(_SSL_PREFIX)}
    if ssl:
        conf.update(https_client_files(ssl))
        if ssl.get("ssl.endpoint.identification.algorithm", None) == "":
            conf["ssl.ca.location"] = conf.get("ssl.ca.location", False) or False
    return conf


def subject_name(strategy: str, topic: str, is_key: bool, record_name: str | None) -> str:
    """The subject Confluent's strategy gives a topic's key or value.

    >>> subject_name("TopicNameStrategy", "orders", False, None)
    'orders-value'
    >>> subject_name(RECORD_NAME_STRATEGY, "orders", False, "shop.Order")
    'shop.Order'
    """
    strategy = _STRATEGIES[strategy]
    if strategy == TOPIC_NAME_STRATEGY:
        return f"{topic}-{'key' if is_key else 'value'}"
    if record_name is None:
        which = "key" if is_key else "value"
        raise DataException(f"In configuration {which}.subject.name.strategy = {strategy}, the message must be a "
                            f"record schema (a struct with a name)")
    return record_name if strategy == RECORD_NAME_STRATEGY else f"{topic}-{record_name}"


def split_wire(data: bytes) -> tuple[int, memoryview]:
    """The schema id and payload of Confluent's wire format (magic byte 0, 4-byte big-endian id).

    >>> split_wire(b"\\x00\\x00\\x00\\x00\\x07abc")[0]
    7
    """
    if len(data) < 5 or data[0] != MAGIC_BYTE:
        raise DataException("Unknown magic byte!")
    return struct.unpack_from(">I", data, 1)[0], memoryview(data)[5:]


def wire_header(schema_id: int) -> bytes:
    return struct.pack(">bI", MAGIC_BYTE, schema_id)


class Registry:
    """A converter's view of the registry: settings, the client (made on first use, not pickled) and caches.

    >>> r = Registry({"schema.registry.url": "http://localhost:1"}, "AVRO")
    >>> r.subject("orders", is_key=False, record_name=None)
    'orders-value'
    """

    def __init__(self, settings: Mapping[str, Any], schema_type: str) -> None:
        self.settings = dict(settings)
        self.schema_type = schema_type
        config = AbstractConfig(define_registry_settings(ConfigDef()), {k: v for k, v in settings.items()
                                                                        if k in _KNOWN})
        self.client_config = registry_client_config(self.settings)
        self.auto_register: bool = config.get("auto.register.schemas")
        self.use_latest: bool = config.get("use.latest.version")
        self.latest_strict: bool = config.get("latest.compatibility.strict")
        self.normalize: bool = config.get("normalize.schemas")
        self.strategies = {True: config.get("key.subject.name.strategy"),
                           False: config.get("value.subject.name.strategy")}
        self._client: Any = None
        self._lock = threading.Lock()
        self.ids: dict[tuple[str, str], int] = {}  # (subject, schema text) -> id
        self.schemas: dict[int, Any] = {}  # id -> confluent_kafka Schema
        self.versions: dict[tuple[str, int], int | None] = {}  # (subject, id) -> version

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_client": None, "_lock": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @property
    def client(self) -> Any:
        if self._client is None:
            from confluent_kafka.schema_registry import SchemaRegistryClient

            with self._lock:
                if self._client is None:
                    try:
                        self._client = SchemaRegistryClient(dict(self.client_config))
                    except (ValueError, TypeError, OSError) as e:
                        raise ConfigException(URL, self.client_config.get("url"), str(e)) from None
        return self._client

    def subject(self, topic: str, is_key: bool, record_name: str | None) -> str:
        return subject_name(self.strategies[is_key], topic, is_key, record_name)

    def call(self, what: str, action: Callable[[], Any]) -> Any:
        """Run a registry call, its failures as Connect's exceptions (``what`` says what was being done)."""
        from confluent_kafka.schema_registry.error import SchemaRegistryError

        try:
            return action()
        except SchemaRegistryError as e:
            if e.http_status_code in (401, 403):
                setting = "basic.auth.user.info" if "basic.auth.user.info" in self.client_config else \
                    ("bearer.auth.token" if "bearer.auth.credentials.source" in self.client_config else URL)
                raise ConfigException(setting, "[hidden]", f"the Schema Registry at {self.url} refused the "
                                      f"credentials while {what}: {e.error_message} (HTTP {e.http_status_code})") \
                    from None
            raise DataException(f"{what}: {e.error_message} (HTTP status code {e.http_status_code}, "
                                f"SR code {e.error_code})") from None
        except (ConfigException, DataException):
            raise
        except Exception as e:  # httpx's connection and timeout errors, and anything the network gives
            if type(e).__module__.startswith(("httpx", "httpcore", "ssl", "socket")) or isinstance(e, OSError):
                raise RetriableException(f"Network connection error while {what}: cannot reach the Schema "
                                         f"Registry at {URL}={self.url}: {type(e).__name__}: {e}") from None
            raise

    @property
    def url(self) -> str:
        return self.client_config["url"]

    def id_for(self, subject: str, schema_text: str, references: list[Any] | None = None) -> int:
        """The id of ``schema_text`` under ``subject``: registered when ``auto.register.schemas``, else looked up
        (cached: one call per subject and schema)."""
        key = (subject, schema_text)
        found = self.ids.get(key)
        if found is not None:
            return found
        from confluent_kafka.schema_registry import Schema

        schema = Schema(schema_text, self.schema_type, references or [])
        if self.auto_register:
            found = self.call(f"registering a {self.schema_type} schema under subject {subject}",
                              lambda: self.client.register_schema(subject, schema, self.normalize))
        else:
            found = self.call(f"looking up a {self.schema_type} schema under subject {subject}",
                              lambda: self.client.lookup_schema(subject, schema, self.normalize).schema_id)
        self.ids[key] = found
        return found

    def latest(self, subject: str) -> tuple[int, Any]:
        """``use.latest.version``: the subject's latest schema and its id."""
        registered = self.call(f"getting the latest schema of subject {subject}",
                               lambda: self.client.get_latest_version(subject))
        return registered.schema_id, registered.schema

    def schema(self, schema_id: int) -> Any:
        """The registered schema with this id (cached)."""
        found = self.schemas.get(schema_id)
        if found is None:
            found = self.call(f"fetching schema {schema_id}", lambda: self.client.get_schema(schema_id))
            self.schemas[schema_id] = found
        return found

    def version(self, subject: str, schema_id: int) -> int | None:
        """The version of schema ``schema_id`` under ``subject``, or None when it is not registered there."""
        key = (subject, schema_id)
        if key not in self.versions:
            schema = self.schema(schema_id)
            try:
                self.versions[key] = self.call(f"looking up schema {schema_id} under subject {subject}",
                                               lambda: self.client.lookup_schema(subject, schema).version)
            except DataException:
                self.versions[key] = None
        return self.versions[key]


_KNOWN = frozenset(define_registry_settings(ConfigDef()).names())


def subjects_table(settings: Mapping[str, Any], subject: str | None = None) -> list[dict[str, Any]]:
    """The registry's subjects with their latest version, id and type; or, given ``subject``, its versions
    with each one's id, type and schema text (rows for a table)."""
    registry = Registry(settings, "AVRO")
    client = registry.client
    if subject is None:
        rows = []
        for name in sorted(registry.call("listing subjects", client.get_subjects)):
            latest = registry.call(f"getting the latest schema of subject {name}",
                                   lambda n=name: client.get_latest_version(n))
            rows.append({"subject": name, "latest version": latest.version, "id": latest.schema_id,
                         "type": latest.schema.schema_type or "AVRO"})
        return rows
    rows = []
    for version in registry.call(f"listing the versions of subject {subject}", lambda: client.get_versions(subject)):
        found = registry.call(f"getting version {version} of subject {subject}",
                              lambda v=version: client.get_version(subject, v))
        rows.append({"version": found.version, "id": found.schema_id, "type": found.schema.schema_type or "AVRO",
                     "schema": found.schema.schema_str})
    return rows
