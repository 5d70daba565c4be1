"""The offsets editor with 100,000 partitions: how long until its first page shows, including reading the
offsets from Kafka, against reading the same offsets with a bare consumer in the same run.

Run:  python bench/bench_offsets_editor.py [--partitions 100000] [--repeat 3] [--bootstrap HOST:PORT]

Starts an embedded broker unless --bootstrap is given, creates a STOPPED SequenceSource whose offsets live in
a topic of its own (``offsets.storage.topic``) and alters them to ``--partitions`` partitions, then times
(median of ``--repeat``):

* ``bare consumer read``: a confluent-kafka consumer reading that topic from the start to its end, parsing
  every key and value (the baseline: what any Python reader of the offsets must do);
* ``editor, cold``: in a new runtime (a new kernel) on the same group, ``OffsetsEditor(rt, name)`` until its
  first page is shown (``editor.wait()``): the connector's offsets store is started, which reads its topic
  from Kafka, then the frame, the page's widgets and the first page. ``returned after`` is how long the
  constructor held the kernel (it reads in the background and shows progress meanwhile);
* ``editor, warm``: the same on a runtime that has read the topic already (its in-memory view is current);
* ``offsets_frame``: ``rt.offsets_frame(name)`` alone on that runtime (the editor's input);
* ``editor from the frame``: ``OffsetsEditor(rt, name, frame=df)`` (the editor's own cost);
* ``page change``: ``editor.show_page(n)`` (refill the page's widgets from the frame);
* ``edit + validate``: one cell edited, then ``editor.validate()`` (what Apply does before sending).

The issue's target: the first page shows in under 2 s with 100,000 partitions, including the read from Kafka.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import uuid
from collections.abc import Callable

from confluent_kafka import Consumer, TopicPartition

from connect_magics import ConnectRuntime
from connect_magics.local import EmbeddedBroker
from connect_magics.notebook.offsets_editor import OffsetsEditor


def median_seconds(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bare_read(bootstrap: str, topic: str) -> int:
    """Read ``topic`` from the start to its end with a bare consumer, parsing keys and values."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"raw-{uuid.uuid4().hex}",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest", "fetch.wait.max.ms": 50,
                         "fetch.queue.backoff.ms": 10})
    partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
    ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in partitions}
    consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
    seen = dict.fromkeys(ends, 0)
    count = 0
    while any(seen[p] < ends[p] for p in ends):
        for m in consumer.consume(1000, timeout=0.1):
            if not m.error():
                json.loads(m.key())
                if m.value() is not None:
                    json.loads(m.value())
                seen[m.partition()] = m.offset() + 1
                count += 1
    consumer.close()
    return count


def run(bootstrap: str, partitions: int, repeat: int) -> None:
    group = f"bench-editor-{uuid.uuid4().hex[:8]}"
    worker = {"offset.storage.partitions": "25"}
    name = "bench-editor"
    own_topic = f"{group}-own-offsets"
    with ConnectRuntime(bootstrap, group, worker) as rt:
        rt.create_connector(name, {"connector.class": "SequenceSource", "topic": name,
                                   "offsets.storage.topic": own_topic}, initial_state="STOPPED")
        start = time.perf_counter()
        rt.alter_offsets(name, {"offsets": [{"partition": {"task": i}, "offset": {"seq": i}}
                                            for i in range(partitions)]})
        print(f"altered {partitions:,} offsets in {time.perf_counter() - start:.1f} s (set-up, not measured)")
    bare = median_seconds(lambda: bare_read(bootstrap, own_topic), repeat)
    cold, held = [], []
    for _ in range(repeat):
        with ConnectRuntime(bootstrap, group, worker) as fresh:
            start = time.perf_counter()
            editor = OffsetsEditor(fresh, name)
            held.append(time.perf_counter() - start)
            editor.wait()
            cold.append(time.perf_counter() - start)
            assert len(editor.frame) == partitions
    with ConnectRuntime(bootstrap, group, worker) as rt:
        rt.offsets_frame(name)  # the connector's store is read once: later reads use its in-memory view
        editors: list[OffsetsEditor] = []
        warm = median_seconds(lambda: editors.append(OffsetsEditor(rt, name)) or editors[-1].wait(), repeat)
        frame = median_seconds(lambda: rt.offsets_frame(name), repeat)
        read = rt.offsets_frame(name)
        from_frame = median_seconds(lambda: editors.append(OffsetsEditor(rt, name, frame=read)), repeat)
        editor = editors[-1]
        pages = iter(range(1, editor.pages))
        page = median_seconds(lambda: editor.show_page(next(pages)), repeat)

        def edit_and_validate() -> None:
            editor.set_cell(7, "seq", "1")
            assert not editor.validate()[1]
        validate = median_seconds(edit_and_validate, repeat)
    first = statistics.median(cold)
    print(f"\n{'operation':<28}{'seconds':>10}{'x bare read':>14}")
    for label, seconds in (("bare consumer read", bare), ("editor, cold (first page)", first),
                           ("  returned after", statistics.median(held)), ("editor, warm (first page)", warm),
                           ("offsets_frame (warm)", frame), ("editor from the frame", from_frame),
                           ("page change", page), ("edit + validate", validate)):
        print(f"{label:<28}{seconds:>10.3f}{seconds / bare:>14.2f}")
    print(f"\nfirst page under 2 s including the read from Kafka: {'yes' if first < 2 else 'NO'} "
          f"({first:.2f} s, median of {repeat}; {editor.pages:,} pages of {editor.page_size})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--bootstrap")
    args = parser.parse_args()
    broker = None
    if not args.bootstrap:
        broker = EmbeddedBroker(server_properties={"auto.create.topics.enable": "false"})
        broker.start()
    try:
        run(args.bootstrap or broker.bootstrap_servers, args.partitions, args.repeat)
    finally:
        if broker is not None:
            broker.stop()


if __name__ == "__main__":
    main()
