"""The local Schema Registry (Apicurio, connect_magics.local.registry) against confluent-kafka's own clients:
Confluent's API, its ids, serializers through the real broker, compatibility, lifecycle and errors."""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
import urllib.request

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry import (
    ConfigCompatibilityLevel,
    Schema,
    SchemaRegistryClient,
    ServerConfig,
)
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError as ClientError
from confluent_kafka.serialization import MessageField, SerializationContext
from helpers import wait_until

from connect_magics.local import EmbeddedBroker, SchemaRegistry, SchemaRegistryError, find_java
from connect_magics.local.broker import free_port
from connect_magics.local.registry import JAVA17_VERSION, launcher, resolve_distribution

pytestmark = pytest.mark.registry

USER = {"type": "record", "name": "User", "namespace": "example",
        "fields": [{"name": "id", "type": "long"}, {"name": "name", "type": "string"},
                   {"name": "email", "type": ["null", "string"], "default": None}]}


def avro(schema: dict) -> Schema:
    return Schema(json.dumps(schema), "AVRO")


@pytest.fixture
def client(schema_registry: SchemaRegistry) -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": schema_registry.url})


def test_it_serves_confluents_api(schema_registry: SchemaRegistry) -> None:
    assert schema_registry.is_running()
    assert schema_registry.url.endswith("/apis/ccompat/v7")
    with urllib.request.urlopen(schema_registry.url + "/subjects", timeout=10) as answer:
        assert answer.status == 200 and isinstance(json.load(answer), list)
    assert schema_registry.version is not None and schema_registry.startup_seconds is not None


def test_register_then_get_by_id_and_by_subject_version(client: SchemaRegistryClient, unique: str) -> None:
    subject = f"users-{unique}-value"
    schema_id = client.register_schema(subject, avro(USER))
    assert json.loads(client.get_schema(schema_id).schema_str) == USER
    registered = client.get_version(subject, 1)
    assert (registered.schema_id, registered.subject, registered.version) == (schema_id, subject, 1)
    assert json.loads(registered.schema.schema_str) == USER
    assert client.get_latest_version(subject).schema_id == schema_id
    assert client.lookup_schema(subject, avro(USER)).version == 1
    assert subject in client.get_subjects()
    assert client.get_versions(subject) == [1]
    # registering it again changes nothing
    assert client.register_schema(subject, avro(USER)) == schema_id and client.get_versions(subject) == [1]


def test_ids_name_a_schema_as_confluents_do(client: SchemaRegistryClient, unique: str) -> None:
    """One schema under two subjects has one id (Confluent's ids name content); another schema another id."""
    first = client.register_schema(f"a-{unique}-value", avro(USER))
    second = client.register_schema(f"b-{unique}-value", avro(USER))
    other = client.register_schema(f"c-{unique}-value", avro({**USER, "name": "Other"}))
    assert first == second != other
    assert json.loads(client.get_schema(other).schema_str)["name"] == "Other"


def test_avro_serializer_to_deserializer_through_the_broker(schema_registry: SchemaRegistry,
                                                            client: SchemaRegistryClient, broker: EmbeddedBroker,
                                                            unique: str) -> None:
    topic = f"users-{unique}"
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    serializer = AvroSerializer(client, json.dumps(USER))
    users = [{"id": i, "name": f"user {i}", "email": None if i % 2 else f"u{i}@example.com"} for i in range(20)]
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
    for user in users:
        producer.produce(topic, serializer(user, SerializationContext(topic, MessageField.VALUE)))
    assert producer.flush(30) == 0

    registered = client.get_latest_version(f"{topic}-value")  # auto-registered under TopicNameStrategy
    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": f"read-{unique}",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    raw: list[bytes] = []
    try:
        def more() -> bool:
            for m in consumer.consume(100, timeout=0.5):
                assert m.error() is None, m.error()
                raw.append(m.value())
            return len(raw) >= len(users)
        wait_until(more, 60, message=lambda: f"{len(users)} records from {topic}, got {len(raw)}")
    finally:
        consumer.close()
    for value in raw:  # Confluent's wire format: magic byte 0, the schema id (4 bytes, big-endian), Avro
        assert value[0] == 0 and struct.unpack(">I", value[1:5])[0] == registered.schema_id
    deserializer = AvroDeserializer(SchemaRegistryClient({"url": schema_registry.url}))  # a cold cache: by id
    decoded = [deserializer(v, SerializationContext(topic, MessageField.VALUE)) for v in raw]
    assert decoded == users


def test_backward_compatibility_refuses_an_incompatible_schema(client: SchemaRegistryClient, unique: str) -> None:
    subject = f"evolving-{unique}-value"
    client.register_schema(subject, avro(USER))
    client.set_config(subject, ServerConfig(compatibility=ConfigCompatibilityLevel.BACKWARD))
    assert client.get_config(subject).compatibility_level == ConfigCompatibilityLevel.BACKWARD

    added = {**USER, "fields": [*USER["fields"], {"name": "age", "type": "int", "default": 0}]}
    assert client.test_compatibility(subject, avro(added))
    client.register_schema(subject, avro(added))
    assert client.get_versions(subject) == [1, 2]

    retyped = {**USER, "fields": [{"name": "id", "type": "string"}, *USER["fields"][1:]]}
    assert not client.test_compatibility(subject, avro(retyped))
    with pytest.raises(ClientError) as refused:
        client.register_schema(subject, avro(retyped))
    assert refused.value.http_status_code == 409
    assert "Incompatible" in refused.value.error_message and subject in refused.value.error_message
    assert "STRING not compatible with writer type: LONG" in refused.value.error_message
    assert client.get_versions(subject) == [1, 2]

    client.set_config(subject, ServerConfig(compatibility=ConfigCompatibilityLevel.NONE))
    client.register_schema(subject, avro(retyped))
    assert client.get_versions(subject) == [1, 2, 3]


def test_the_default_compatibility_is_backward_as_confluents(schema_registry: SchemaRegistry,
                                                            client: SchemaRegistryClient, unique: str) -> None:
    """BACKWARD where a subject's setting can lift it (3.1 on); on 3.0, none (docs: default_compatibility)."""
    subject = f"defaults-{unique}-value"
    client.register_schema(subject, avro(USER))
    without_default = {**USER, "fields": [*USER["fields"], {"name": "age", "type": "int"}]}
    if schema_registry.compatibility == "BACKWARD":
        with pytest.raises(ClientError, match="Incompatible"):
            client.register_schema(subject, avro(without_default))
        assert client.get_config().compatibility_level == ConfigCompatibilityLevel.BACKWARD
    else:
        assert schema_registry.version == JAVA17_VERSION and schema_registry.compatibility == "NONE"
        client.register_schema(subject, avro(without_default))
        assert client.get_versions(subject) == [1, 2]


def test_subjects_can_be_deleted(client: SchemaRegistryClient, unique: str) -> None:
    subject = f"doomed-{unique}-value"
    client.register_schema(subject, avro(USER))
    assert client.delete_subject(subject) == [1]
    assert subject not in client.get_subjects()
    assert client.delete_subject(subject, permanent=True) == [1]


def test_a_busy_port_is_refused(schema_registry: SchemaRegistry) -> None:
    with pytest.raises(SchemaRegistryError, match=f"Port {schema_registry.port} on 127.0.0.1 is already in use"):
        SchemaRegistry(port=schema_registry.port).start()


def test_a_registry_that_dies_while_starting_says_why(schema_registry: SchemaRegistry) -> None:
    registry = SchemaRegistry(heap="1k", version=schema_registry.version)  # the JVM refuses such a heap
    with pytest.raises(SchemaRegistryError, match=r"exited with code \d+ while starting\. Tail of its log") as e:
        registry.start(timeout=60)
    assert "heap" in str(e.value).lower()
    assert not registry.is_running() and not registry.work_dir.exists()


def test_stop_ends_it_and_frees_its_port(schema_registry: SchemaRegistry) -> None:
    with SchemaRegistry(port=free_port(), version=schema_registry.version) as registry:
        url, work_dir = registry.url, registry.work_dir
        assert registry.log_file.is_file()
        SchemaRegistryClient({"url": url}).register_schema("s-value", avro(USER))
    assert not registry.is_running() and not work_dir.exists()
    with pytest.raises(OSError):
        urllib.request.urlopen(url + "/subjects", timeout=5)


def test_java_17_runs_the_older_version(tmp_path) -> None:
    java = find_java(prefer=(17,))
    if java.major != 17:
        pytest.skip(f"no Java 17 here (found Java {java.major})")
    with SchemaRegistry(java=java.executable, work_dir=tmp_path) as registry:
        assert registry.version == JAVA17_VERSION
        client = SchemaRegistryClient({"url": registry.url})
        schema_id = client.register_schema("old-value", avro(USER))
        assert json.loads(client.get_schema(schema_id).schema_str) == USER
    assert (tmp_path / "registry.log").is_file()  # a given work directory is kept


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "connect_magics.cli", "schema-registry", *args]


def test_the_cli_runs_it_until_sigterm(schema_registry: SchemaRegistry) -> None:
    port = free_port()
    proc = subprocess.Popen(_cli("--port", str(port), "--version", schema_registry.version or ""),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()  # printed once it answers
        assert line == f"schema.registry.url=http://127.0.0.1:{port}/apis/ccompat/v7", proc.stderr.read()
        assert SchemaRegistryClient({"url": line.split("=", 1)[1]}).get_subjects() == []
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
        assert "Stop it with SIGTERM or Ctrl-C" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    with pytest.raises(OSError):
        urllib.request.urlopen(line.split("=", 1)[1] + "/subjects", timeout=5)


def test_the_cli_refuses_bad_input_clearly() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(_cli("--compatibility", "sideways"), capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2 and "invalid choice: 'SIDEWAYS'" in done.stderr
    java = find_java(prefer=(17,))
    if java.major < 21:
        done = subprocess.run(_cli("--version", "3.3.3", "--java", java.executable), capture_output=True, text=True,
                              env=env, timeout=60)
        assert done.returncode == 2 and "error: Apicurio Registry 3.3.3 needs Java 21 or newer" in done.stderr
    done = subprocess.run(_cli("--java", "/no/such/java"), capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2 and "error: Java executable /no/such/java does not exist" in done.stderr


@pytest.fixture
def shell(unique: str):
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "connect_magics")
    ip.run_line_magic("config", f"ConnectMagics.group_id = 'registry-{unique}'")
    try:
        yield ip
    finally:
        ip.run_line_magic("unload_ext", "connect_magics")


def test_the_magic_starts_it_beside_the_embedded_broker_and_stops_it_on_close(
        shell, capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_line_magic("connect", "start --embedded --schema-registry -o rt")
    magics = shell._connect_magics
    registry, broker, rt = magics.schema_registry, magics.broker, shell.user_ns["rt"]
    assert registry is not None and broker is not None and registry.is_running()
    assert rt.schema_registry_url == registry.url
    out = capsys.readouterr().out
    assert f"schema.registry.url={registry.url}" in out and f"Apicurio Registry {registry.version}" in out
    client = SchemaRegistryClient({"url": rt.schema_registry_url})
    schema_id = client.register_schema("magic-value", avro(USER))
    assert json.loads(client.get_schema(schema_id).schema_str) == USER

    shell.run_line_magic("connect", "close")
    assert magics.schema_registry is None and magics.broker is None
    assert not registry.is_running() and not broker.is_running()
    with pytest.raises(OSError):
        urllib.request.urlopen(registry.url + "/subjects", timeout=5)


def test_the_magic_refuses_a_registry_beside_a_remote_cluster(shell) -> None:
    from IPython.core.error import UsageError

    with pytest.raises(UsageError, match="--remote excludes --embedded, --schema-registry"):
        shell.run_line_magic("connect", "start --remote http://127.0.0.1:1 --schema-registry")
    assert shell._connect_magics.schema_registry is None and shell._connect_magics.runtime is None


def test_the_first_use_downloads_and_unpacks_once_with_progress(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh cache: the (smaller) 3.0.9 distribution is resolved from Maven Central, unpacked, marked complete;
    the second call works from the cache and says nothing."""
    monkeypatch.setenv("CONNECT_MAGICS_CACHE", str(tmp_path))
    java = find_java()
    lines: list[str] = []
    dist = resolve_distribution(JAVA17_VERSION, java.executable, lines.append)
    assert dist == tmp_path / f"apicurio-registry-{JAVA17_VERSION}"
    assert (dist / ".complete").read_text() == JAVA17_VERSION
    assert launcher(dist).name == f"apicurio-registry-app-{JAVA17_VERSION}-runner.jar"
    assert lines[0].startswith(f"Downloading Apicurio Registry {JAVA17_VERSION} (io.apicurio:apicurio-registry-app:"
                               f"{JAVA17_VERSION}:tar.gz:all, about 109 MB) from Maven Central into {dist} (once)")
    assert lines[-3].startswith("  downloaded 109 MB of about 109 MB")  # the final size, however fast it came
    assert lines[-2].startswith(f"  unpacking apicurio-registry-app-{JAVA17_VERSION}-all.tar.gz")
    assert lines[-1] == f"Apicurio Registry {JAVA17_VERSION} ready in {dist}"
    # no staging folder, no second archive; the download's lock file stays (removing one races with its takers)
    assert sorted(p.name for p in tmp_path.iterdir()) == [f".{dist.name}.lock", dist.name]
    lines.clear()
    assert resolve_distribution(JAVA17_VERSION, java.executable, lines.append) == dist and lines == []


def test_a_version_that_does_not_exist_fails_clearly(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONNECT_MAGICS_CACHE", str(tmp_path))
    with pytest.raises(SchemaRegistryError, match=r"Failed to download io\.apicurio:apicurio-registry-app:9\.9\.9:"
                                                  r"tar\.gz:all from Maven Central with .*Check the version"):
        resolve_distribution("9.9.9", find_java().executable, lambda line: None)
    assert [p.name for p in tmp_path.iterdir()] == [".apicurio-registry-9.9.9.lock"]  # nothing else left


def _produce_and_read(bootstrap: str, topic: str, values: list[bytes], unique: str) -> list[bytes]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": bootstrap})
    for value in values:
        producer.produce(topic, value)
    assert producer.flush(30) == 0
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"read-{topic}", "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    got: list[bytes] = []
    try:
        def more() -> bool:
            for m in consumer.consume(100, timeout=0.5):
                assert m.error() is None, m.error()
                got.append(m.value())
            return len(got) >= len(values)
        wait_until(more, 60, message=lambda: f"{len(values)} records from {topic}, got {len(got)}")
    finally:
        consumer.close()
    return got


def test_json_schema_serializer_to_deserializer_through_the_broker(schema_registry: SchemaRegistry,
                                                                   broker: EmbeddedBroker, unique: str) -> None:
    from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer

    topic = f"json-users-{unique}"
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", "title": "User", "type": "object",
              "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}, "required": ["id", "name"]}
    ctx = SerializationContext(topic, MessageField.VALUE)
    serializer = JSONSerializer(json.dumps(schema), SchemaRegistryClient({"url": schema_registry.url}))
    users = [{"id": i, "name": f"user {i}"} for i in range(5)]
    raw = _produce_and_read(broker.bootstrap_servers, topic, [serializer(u, ctx) for u in users], unique)
    deserializer = JSONDeserializer(None, schema_registry_client=SchemaRegistryClient({"url": schema_registry.url}))
    assert [deserializer(v, ctx) for v in raw] == users


def _user_message_class():
    """A protobuf message class ``example.User`` built at run time (no generated code)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    proto = descriptor_pb2.FileDescriptorProto(name="example/user.proto", package="example", syntax="proto3")
    message = proto.message_type.add(name="User")
    field = descriptor_pb2.FieldDescriptorProto
    message.field.add(name="id", number=1, type=field.TYPE_INT64, label=field.LABEL_OPTIONAL)
    message.field.add(name="name", number=2, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("example.User"))


@pytest.mark.parametrize("version", [
    JAVA17_VERSION,
    pytest.param("3.3.3", marks=pytest.mark.xfail(
        strict=True, raises=ClientError,
        reason="Apicurio 3.3.3 answers GET /schemas/ids/{id}?format=serialized with a 500 for the base64 "
               "descriptor confluent-kafka's ProtobufSerializer registers (it parses it as .proto text)")),
])
def test_protobuf_serializer_to_deserializer_through_the_broker(version: str, schema_registry: SchemaRegistry,
                                                                broker: EmbeddedBroker, unique: str) -> None:
    from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer

    if find_java(prefer=tuple(range(21, 100))).major < 21 and version == "3.3.3":
        pytest.skip("3.3.3 needs Java 21 or newer")
    user = _user_message_class()
    topic = f"proto-users-{unique}-{version.replace('.', '')}"
    ctx = SerializationContext(topic, MessageField.VALUE)
    conf = {"use.deprecated.format": False}
    registry = schema_registry if schema_registry.version == version else SchemaRegistry(version=version).start()
    try:
        serializer = ProtobufSerializer(user, SchemaRegistryClient({"url": registry.url}), conf)
        users = [user(id=i, name=f"user {i}") for i in range(5)]
        raw = _produce_and_read(broker.bootstrap_servers, topic, [serializer(u, ctx) for u in users], unique)
        assert all(v[0] == 0 for v in raw)
        deserializer = ProtobufDeserializer(user, conf,
                                            schema_registry_client=SchemaRegistryClient({"url": registry.url}))
        assert [deserializer(v, ctx) for v in raw] == users
    finally:
        if registry is not schema_registry:
            registry.stop()
