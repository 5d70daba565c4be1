"""Avro through Confluent's AvroConverter against a bare confluent-kafka AvroDeserializer / AvroSerializer loop,
and against JsonConverter with schemas, one run.

Run:  python bench/bench_avro.py [--records 100000] [--rounds 3] [--registry URL] [--e2e] [--bootstrap HOST:PORT]

Starts a Schema Registry (connect_magics.local.SchemaRegistry: Apicurio, Confluent's API) unless --registry is
given. The records have one Avro record schema of 8 fields: long, string, double, boolean, decimal(10,2),
timestamp-millis, an optional string (every other record null) and an array of strings. confluent-kafka's
AvroSerializer writes ``--records`` of them once (registering the schema under ``<topic>-value``); then:

- sink decode (bytes -> values): the bare loop is ``AvroDeserializer(client)`` called on each message's bytes
  (the writer's schema, fetched once, to dicts); ours is ``AvroConverter.to_connect_column(topic, datas)``
  over the same bytes (Connect Structs); and ``JsonConverter`` (schemas.enable=true)
  ``.to_connect_column`` over the same records written as JSON envelopes (schema + payload).
- source encode (values -> bytes): the bare loop is ``AvroSerializer(client, schema_str)`` called on each dict;
  ours is ``AvroConverter.from_connect_data(topic, schema, struct)`` for each Connect Struct of the schema our
  converter reads the topic with (registered once under a topic of its own); and
  ``JsonConverter(schemas.enable=true).from_connect_data``.
- with ``--e2e``, also end to end on an embedded broker (connect_magics.local.EmbeddedBroker): FileStreamSink
  with value.converter=AvroConverter writing the Avro topic to a file, against a bare confluent-kafka
  Consumer + AvroDeserializer loop reading the same topic and writing each value as a line to a file too
  (both counted from the first record seen to the last, so that start-up is not measured).

Each round runs the converter cases in turn on 20 slices of the records (in a rotating order), so that the
cases compared share the machine's load within a fraction of a second (a shared 2-core machine varies by 2x
between seconds); the end-to-end pair alternates. The table gives the median records/s over the rounds (wall
clock), the ratio of the medians to the bare confluent-kafka loop of the same direction, the range of the
per-round ratios, and for the converter cases the same ratio in this process's CPU seconds (which other jobs
on the machine disturb far less). The inputs are built before timing and frozen out of the cyclic garbage
collector (``gc.freeze()``), as a worker does not hold a hundred thousand records.
Targets (issue 26): sink decode >= 1.0x, source encode >= 0.8x the bare loop.
"""

from __future__ import annotations

import argparse
import datetime as dt
import decimal
import gc
import json
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from typing import Any

from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from connect_magics.api.converters import JsonConverter
from connect_magics.converters import AvroConverter

AVRO = "io.confluent.connect.avro.AvroConverter"
SCHEMA = {
    "type": "record", "name": "Order", "namespace": "bench", "fields": [
        {"name": "id", "type": "long"},
        {"name": "customer", "type": "string"},
        {"name": "amount", "type": "double"},
        {"name": "paid", "type": "boolean"},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
        {"name": "created", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
    ]}
EPOCH = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def records(n: int) -> list[dict[str, Any]]:
    """``n`` dicts of SCHEMA, as confluent-kafka's AvroSerializer takes them."""
    return [{"id": i, "customer": f"customer-{i % 997:04d}", "amount": i * 0.25, "paid": i % 3 == 0,
             "price": decimal.Decimal(i % 100_000) / 100, "created": EPOCH + dt.timedelta(milliseconds=i),
             "note": None if i % 2 else f"note {i}", "tags": ["a", "bb", f"t{i % 10}"]}
            for i in range(n)]


SLICES = 20  # each round runs the cases slice by slice, in turn: paired within a fraction of a second


def timed(work: Callable[[Any], Any], part: Any) -> tuple[float, float]:
    """The wall-clock and CPU seconds of ``work(part)``."""
    wall, cpu = time.perf_counter(), time.process_time()
    work(part)
    return time.perf_counter() - wall, time.process_time() - cpu


def micro(url: str, n: int, rounds: int) -> tuple[dict[str, list[float]], dict[str, Any]]:
    """The converter cases; returns records/s per case per round, and what --e2e needs."""
    topic, src_topic = f"avro-{uuid.uuid4().hex[:8]}", f"avro-src-{uuid.uuid4().hex[:8]}"
    client = SchemaRegistryClient({"url": url})
    dicts = records(n)
    ser = AvroSerializer(client, json.dumps(SCHEMA), conf={"auto.register.schemas": True})
    ctx, src_ctx = SerializationContext(topic, MessageField.VALUE), SerializationContext(src_topic, MessageField.VALUE)
    datas = [ser(d, ctx) for d in dicts]
    deser = AvroDeserializer(client)

    ours = AvroConverter()
    ours.configure({"schema.registry.url": url}, is_key=False)
    decoded = ours.to_connect_column(topic, datas)
    schema, structs = decoded[0][0], [v for _, v in decoded]
    # the oracle both ways on a few records: what the bare loop reads equals what we read and write
    assert deser(datas[1], ctx) == dicts[1], (deser(datas[1], ctx), dicts[1])
    assert structs[2].get("price") == dicts[2]["price"] and structs[2].get("created") == dicts[2]["created"]
    src_ser = AvroSerializer(client, json.dumps(SCHEMA), conf={"auto.register.schemas": True})
    src_ser(dicts[0], src_ctx)  # registered before timing, as our converter's first call below
    ours_src = AvroConverter()
    ours_src.configure({"schema.registry.url": url}, is_key=False)
    written = ours_src.from_connect_data(src_topic, schema, structs[5])
    assert deser(written, src_ctx) == dicts[5], (deser(written, src_ctx), dicts[5])

    jc = JsonConverter()
    jc.configure({"schemas.enable": "true"}, is_key=False)
    json_datas = [jc.from_connect_data(topic, schema, s) for s in structs]
    assert jc.to_connect_column(topic, json_datas[:3])[2][1] == structs[2]

    # each case takes the slice (a range) of the records it handles
    cases: dict[str, Callable[[range], Any]] = {
        "sink/bare": lambda r: [deser(d, ctx) for d in datas[r.start:r.stop]],
        "sink/avro": lambda r: ours.to_connect_column(topic, datas[r.start:r.stop]),
        "sink/json": lambda r: jc.to_connect_column(topic, json_datas[r.start:r.stop]),
        "source/bare": lambda r: [src_ser(d, src_ctx) for d in dicts[r.start:r.stop]],
        "source/avro": lambda r: [ours_src.from_connect_data(src_topic, schema, s) for s in structs[r.start:r.stop]],
        "source/json": lambda r: [jc.from_connect_data(src_topic, schema, s) for s in structs[r.start:r.stop]],
    }
    # The inputs (several hundred thousand objects) are the bench's, not the workload's: kept out of the cyclic
    # collector's full passes, which would otherwise scan them over and over, charging each case in proportion
    # to what it allocates rather than to its work (it halves every rate at 100,000 records).
    gc.freeze()
    for work in cases.values():  # warm every path (caches, first registry calls) outside the timing
        work(range(0, min(n, 1000)))
    step = -(-n // SLICES)
    parts = [range(a, min(a + step, n)) for a in range(0, n, step)]
    rates: dict[str, list[float]] = {name: [] for name in cases}
    cpu_rates: dict[str, list[float]] = {name: [] for name in cases}
    names = list(cases)
    for r in range(rounds):
        wall, cpu = dict.fromkeys(names, 0.0), dict.fromkeys(names, 0.0)
        gc.collect()
        for i, part in enumerate(parts):
            k = (r * len(parts) + i) % len(names)  # a rotating order: no case always runs first or last
            for name in names[k:] + names[:k]:
                w, c = timed(cases[name], part)
                wall[name] += w
                cpu[name] += c
        for name in names:
            rates[name].append(n / wall[name])
            cpu_rates[name].append(n / cpu[name])
    sizes = {"avro": sum(map(len, datas)) / n, "json": sum(map(len, json_datas)) / n}
    return rates, {"topic": topic, "datas": datas, "sizes": sizes, "cpu": cpu_rates}


# ------------------------------------------------------------------------------------------------ --e2e

def e2e(url: str, bootstrap: str, datas: list[bytes], rounds: int) -> dict[str, list[float]]:
    """FileStreamSink with AvroConverter vs a bare Consumer + AvroDeserializer, over one topic of ``datas``."""
    from confluent_kafka import Consumer, Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    from connect_magics import ConnectRuntime
    from connect_magics.storage.kafka_log import CONSUMER_DEFAULTS

    n = len(datas)
    topic = f"avro-e2e-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept: the future needs its client alive
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    for d in datas:
        while True:
            try:
                p.produce(topic, d)
                break
            except BufferError:
                p.poll(0.01)
        p.poll(0)
    assert p.flush(120) == 0
    client = SchemaRegistryClient({"url": url})
    deser = AvroDeserializer(client)
    deser(datas[0], SerializationContext(topic, MessageField.VALUE))  # fetch the schema outside the timing

    def bare(out_dir: str) -> float:  # deserializes each value and writes it as a line, as the sink does
        c = Consumer({**CONSUMER_DEFAULTS, "bootstrap.servers": bootstrap, "group.id": f"bare-{uuid.uuid4().hex}",
                      "auto.offset.reset": "earliest", "enable.auto.commit": False})
        c.subscribe([topic])
        ctx = SerializationContext(topic, MessageField.VALUE)
        got, start, first = 0, None, 0
        with open(os.path.join(out_dir, f"bare-{uuid.uuid4().hex[:6]}.txt"), "w", encoding="utf-8") as out:
            while got < n:
                msgs = c.consume(500, timeout=1)
                if msgs and start is None:
                    start, first = time.perf_counter(), len(msgs)
                values = [deser(m.value(), ctx) for m in msgs if not m.error()]
                if values:
                    out.write("\n".join(map(str, values)) + "\n")
                got += len(values)
        elapsed = time.perf_counter() - start
        c.close()
        return (n - first) / elapsed

    def lines(path: str) -> int:
        try:
            with open(path, "rb") as f:
                return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
        except FileNotFoundError:
            return 0

    def sink(rt: Any, out_dir: str) -> float:
        name = f"sink-{uuid.uuid4().hex[:6]}"
        path = os.path.join(out_dir, f"{name}.txt")
        rt.create_connector(name, {"connector.class": "FileStreamSink", "topics": topic, "file": path,
                                   "value.converter": AVRO, "value.converter.schema.registry.url": url,
                                   "key.converter": "org.apache.kafka.connect.converters.ByteArrayConverter"})
        while (first := lines(path)) == 0:
            time.sleep(0.002)
        start = time.perf_counter()
        while (got := lines(path)) < n:
            time.sleep(0.01)
        elapsed = time.perf_counter() - start
        rt.delete_connector(name)
        assert got == n, got
        return (n - first) / elapsed

    rates: dict[str, list[float]] = {"e2e/bare": [], "e2e/avro": []}
    with tempfile.TemporaryDirectory() as out_dir, \
            ConnectRuntime(bootstrap, f"bench-{uuid.uuid4().hex[:6]}", {"offset.flush.interval.ms": "1000"}) as rt:
        for r in range(rounds):
            pair = [("e2e/bare", lambda: bare(out_dir)), ("e2e/avro", lambda: sink(rt, out_dir))]
            for name, run in pair if r % 2 == 0 else pair[::-1]:
                rates[name].append(run())
    return rates


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--registry", help="a Schema Registry URL (Confluent's API); default: start one")
    ap.add_argument("--e2e", action="store_true", help="also FileStreamSink on an embedded broker")
    ap.add_argument("--bootstrap", help="with --e2e: a broker to use instead of starting one")
    args = ap.parse_args()
    registry = broker = None
    url = args.registry
    if not url:
        from connect_magics.local import SchemaRegistry

        registry = SchemaRegistry()
        registry.start()
        url = registry.url
    try:
        n = args.records
        rates, extra = micro(url, n, args.rounds)
        rows = [("sink decode", "sink/bare", [("confluent-kafka AvroDeserializer loop", "sink/bare"),
                                              ("AvroConverter.to_connect_column", "sink/avro"),
                                              ("JsonConverter(schemas).to_connect_column", "sink/json")]),
                ("source encode", "source/bare", [("confluent-kafka AvroSerializer loop", "source/bare"),
                                                  ("AvroConverter.from_connect_data", "source/avro"),
                                                  ("JsonConverter(schemas).from_connect_data", "source/json")])]
        if args.e2e:
            bootstrap = args.bootstrap
            if not bootstrap:
                from connect_magics.local import EmbeddedBroker

                broker = EmbeddedBroker().start()
                bootstrap = broker.bootstrap_servers
            rates.update(e2e(url, bootstrap, extra["datas"], args.rounds))
            rows.append(("end to end", "e2e/bare", [("Consumer + AvroDeserializer loop, lines to a file", "e2e/bare"),
                                                    ("FileStreamSink, AvroConverter", "e2e/avro")]))
        cpu = extra["cpu"]
        print("| case | records/s (median) | ratio to bare | per-round ratios | ratio by CPU time |")
        print("|---|---:|---:|---:|---:|")
        for direction, bare, cases in rows:
            for label, key in cases:
                med = statistics.median(rates[key])
                per = [o / b for o, b in zip(rates[key], rates[bare], strict=True)]
                ratio = med / statistics.median(rates[bare])
                by_cpu = f"{statistics.median(cpu[key]) / statistics.median(cpu[bare]):.2f}x" if key in cpu else "-"
                print(f"| {direction}: {label} | {med:,.0f} | {ratio:.2f}x | {min(per):.2f} - {max(per):.2f} "
                      f"| {by_cpu} |")
        sizes = extra["sizes"]
        print(f"\n(medians of {args.rounds} rounds; {n:,} records of an 8-field Avro record, {sizes['avro']:.0f} bytes "
              f"as Avro, {sizes['json']:.0f} as JSON with schema. Converter cases: each round runs them in turn on "
              f"{SLICES} slices of the records, in a rotating order, wall-clock rates; 'by CPU time': the same ratio "
              "of this process's CPU seconds, insensitive to other jobs on the machine; inputs frozen out of the "
              "collector (gc.freeze). End to end: counted from the "
              "first record seen to the last, the two alternating. Targets: sink >= 1.0x, source >= 0.8x.)")
    finally:
        if broker is not None:
            broker.stop()
        if registry is not None:
            registry.stop()


if __name__ == "__main__":
    main()
