"""What an idle task costs: the CPU time a second of a process holding N tasks that have nothing to do, against
a process holding just their Kafka clients, idle too (the same run, the same broker).

Each side runs in a process of its own, settles for ``--settle`` seconds, then its CPU time (all threads) is
read over ``--seconds``, ``--rounds`` times (median):

* ``bare``: per task, what an at-least-once source task holds: an idempotent producer, and a transactional
  producer that ran ``init_transactions`` (the task's fence); for ``--kind sink``: a consumer in a group of its
  own, subscribed to an empty topic, and the transactional producer. Each client is polled once a second.
* ``ours``: one runtime (threads executor) with N connectors of one task each: FileStreamSource on an empty file
  (``--kind source``) or FileStreamSink on an empty topic (``--kind sink``), all RUNNING; a task's share is the
  process's CPU less that of the same runtime without connectors (``runtime``), over N.

    python bench/bench_idle.py [--tasks 200] [--kind source|sink]

Goal: an idle task costs little beyond its clients (a task / its bare clients near 1).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic


def cpu_per_second(settle: float, seconds: float, rounds: int) -> float:
    """The median CPU time a second of this process (all threads), after ``settle`` seconds."""
    time.sleep(settle)  # a benchmark letting the work it measures settle, not a test's synchronisation
    figures = []
    for _ in range(rounds):
        cpu, wall = time.process_time(), time.perf_counter()
        time.sleep(seconds)
        figures.append((time.process_time() - cpu) / (time.perf_counter() - wall))
    return statistics.median(figures)


def bare(bootstrap: str, tasks: int, kind: str, topic: str, args: argparse.Namespace) -> float:
    clients: list[Producer | Consumer] = []
    for i in range(tasks):
        fence = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"bare-{uuid.uuid4().hex}"})
        fence.init_transactions(30)
        if kind == "source":
            clients.append(Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True}))
        else:
            consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bare-{i}-{uuid.uuid4().hex[:6]}",
                                 "enable.auto.commit": False})
            consumer.subscribe([topic])
            clients.append(consumer)
        clients.append(fence)
    stop = threading.Event()

    def serve() -> None:  # what the task's loop asks of its clients, once a second
        while not stop.wait(1.0):
            for client in clients:
                client.poll(0)
    threading.Thread(target=serve, daemon=True).start()
    try:
        return cpu_per_second(args.settle, args.seconds, args.rounds)
    finally:
        stop.set()


def ours(bootstrap: str, tasks: int, kind: str, topic: str, args: argparse.Namespace) -> float:
    from connect_magics import ConnectRuntime

    folder = tempfile.mkdtemp(prefix="bench-idle-")
    open(f"{folder}/empty.txt", "w").close()
    if kind == "source":
        configs = {f"c{i}": {"connector.class": "FileStreamSource", "file": f"{folder}/empty.txt", "topic": topic}
                   for i in range(tasks)}
    else:
        configs = {f"c{i}": {"connector.class": "FileStreamSink", "file": f"{folder}/{i}.txt", "topics": topic}
                   for i in range(tasks)}
    with ConnectRuntime(bootstrap, f"idle-{uuid.uuid4().hex[:8]}") as rt:
        if configs:
            rt.create_connectors(configs)
        deadline = time.monotonic() + 300
        while sum(1 for name in configs for t in rt.connector_status(name)["tasks"] if t["state"] == "RUNNING") \
                < tasks:
            if time.monotonic() > deadline:
                raise RuntimeError("not every task RUNNING after 300 s")
            time.sleep(0.5)  # a benchmark polling statuses, not a test's synchronisation
        return cpu_per_second(args.settle, args.seconds, args.rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--kind", choices=("source", "sink"), default="source")
    parser.add_argument("--settle", type=float, default=5.0)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--bootstrap", help="an existing broker (default: start an embedded one)")
    parser.add_argument("--side", choices=("bare", "ours"), help=argparse.SUPPRESS)  # the child processes
    parser.add_argument("--topic", help=argparse.SUPPRESS)
    args = parser.parse_args()
    logging.basicConfig(level=logging.CRITICAL)
    if args.side is not None:
        measure = bare if args.side == "bare" else ours
        print(json.dumps({"cpu_per_s": measure(args.bootstrap, args.tasks, args.kind, args.topic, args)}))
        return
    from connect_magics.local import EmbeddedBroker

    broker = None
    if args.bootstrap is None:
        broker = EmbeddedBroker()
        broker.start()
    bootstrap = args.bootstrap or broker.bootstrap_servers  # type: ignore[union-attr]
    try:
        topic = f"idle-{uuid.uuid4().hex[:8]}"
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
        figures = {}
        for side in ("bare", "runtime", "ours"):
            tasks = 0 if side == "runtime" else args.tasks
            done = subprocess.run([sys.executable, __file__, "--side", "ours" if side == "runtime" else side,
                                   "--bootstrap", bootstrap, "--topic",
                                   topic, "--tasks", str(tasks), "--kind", args.kind, "--settle",
                                   str(args.settle), "--seconds", str(args.seconds), "--rounds", str(args.rounds)],
                                  capture_output=True, text=True, env={**os.environ}, timeout=1200)
            if done.returncode != 0:
                raise RuntimeError(f"{side}: {done.stderr[-3000:]}")
            figures[side] = json.loads(done.stdout.strip().splitlines()[-1])["cpu_per_s"]
        per_task = {"bare": figures["bare"] / args.tasks, "ours": (figures["ours"] - figures["runtime"]) / args.tasks}
        print(f"{args.tasks} idle {args.kind} tasks, CPU time a second (all threads; median of {args.rounds} "
              f"x {args.seconds:g} s)")
        print("| process | ms/s | per task, ms/s |")
        print("|---|---:|---:|")
        print(f"| bare clients of {args.tasks} tasks | {1000 * figures['bare']:.1f} | {1000 * per_task['bare']:.3f} |")
        print(f"| a runtime without connectors | {1000 * figures['runtime']:.1f} | |")
        print(f"| a runtime with {args.tasks} tasks | {1000 * figures['ours']:.1f} | {1000 * per_task['ours']:.3f} |")
        print(f"a task / its bare clients: {per_task['ours'] / per_task['bare']:.2f}")
    finally:
        if broker is not None:
            broker.stop()


if __name__ == "__main__":
    main()
