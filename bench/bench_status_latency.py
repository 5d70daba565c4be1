"""Latency of status calls and status-only state changes while the broker is down, against the same
calls with the broker up (the baseline, measured in the same run).

KIP-1278 asks that status writes never block the caller; connect_magics answers status reads from
memory. This benchmark starts its own embedded broker, runs a source and a sink, measures each call
``--iterations`` times with the broker up, stops the broker, measures again, and prints p50 / p99 /
max per call and the outage-to-healthy ratio. Goal: every outage figure under 10 ms.

It also measures, once, a ``pause_connector`` issued during the outage: pausing sends the target state
to the config topic without waiting for it (as Kafka Connect sends target states; see
docs/status-and-topics.md), so it returns at once and the record arrives when the broker is back.

    python bench/bench_status_latency.py --iterations 200
"""

from __future__ import annotations

import argparse
import logging
import statistics
import threading
import time
from collections.abc import Callable
from typing import Any

from confluent_kafka.admin import AdminClient, NewTopic

from connect_magics import ConnectRuntime
from connect_magics.errors import ConflictError
from connect_magics.local import EmbeddedBroker
from connect_magics.storage.status_retry import METRICS_GROUP


def calls(rt: ConnectRuntime, topic: str) -> dict[str, Callable[[int], Any]]:
    """What is measured: status reads, status writes and state changes that write only statuses."""
    source = {"connector.class": "SequenceSource", "topic": topic, "rate": "20"}

    def create_existing(_: int) -> None:
        try:
            rt.create_connector("src", source)
        except ConflictError:
            pass

    return {
        "connector_status": lambda i: rt.connector_status("src"),
        "task_status": lambda i: rt.task_status("src", 0),
        "connector_topics": lambda i: rt.connector_topics("sink"),
        "connectors": lambda i: rt.connectors(),
        "metrics": lambda i: rt.metrics(),
        "status write (task state change)": lambda i: rt.status_store.put_task(
            "bench", 0, "PAUSED" if i % 2 else "RUNNING"),
        "reset_connector_topics": lambda i: rt.reset_connector_topics("bench"),
        "restart_connector (connector only)": lambda i: rt.restart_connector("src"),
        "create_connector (exists: 409)": create_existing,
    }


def measure(fn: Callable[[int], Any], iterations: int) -> list[float]:
    out = []
    for i in range(iterations):
        start = time.perf_counter()
        fn(i)
        out.append((time.perf_counter() - start) * 1000)
    return out


def measure_spread(measured: dict[str, Callable[[int], Any]], iterations: int,
                   seconds: float) -> dict[str, list[float]]:
    """``iterations`` rounds of every call, spread over ``seconds`` (so that, during the outage, calls are
    made while writes time out and are retried)."""
    out: dict[str, list[float]] = {name: [] for name in measured}
    start = time.monotonic()
    for i in range(iterations):
        for name, fn in measured.items():
            out[name] += measure(lambda _, fn=fn, i=i: fn(i), 1)
        time.sleep(max(0.0, start + seconds * (i + 1) / iterations - time.monotonic()))
    return out


def summary(samples: list[float]) -> tuple[float, float, float]:
    ordered = sorted(samples)
    return (statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], ordered[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=5.0,
                        help="spread each phase's calls over this long (the outage lasts at least this)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.CRITICAL)

    broker = EmbeddedBroker()
    broker.start()
    try:
        topic = "bench-status"
        admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})  # referenced until done
        admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
        rt = ConnectRuntime(broker.bootstrap_servers, "bench-status", {
            "offset.flush.interval.ms": "500", "reconnect.backoff.max.ms": "1000"})
        try:
            run(rt, broker, topic, args.iterations, args.seconds)
        finally:
            broker.start()
            rt.close()
    finally:
        broker.stop()


def run(rt: ConnectRuntime, broker: EmbeddedBroker, topic: str, iterations: int, seconds: float) -> None:
    rt.create_connector("src", {"connector.class": "SequenceSource", "topic": topic, "rate": "20"})
    rt.create_connector("sink", {"connector.class": "VerifyingSink", "topics": topic})
    deadline = time.monotonic() + 60
    while not rt.connector_topics("sink")["sink"]["topics"] or not rt.connector_status("src")["tasks"]:
        if time.monotonic() > deadline:
            raise SystemExit("the pipeline did not start")
        time.sleep(0.1)
    measured = calls(rt, topic)
    for fn in measured.values():  # warm up
        measure(fn, 5)
    healthy = measure_spread(measured, iterations, seconds)
    pause_healthy = measure(lambda i: (rt.pause_connector("src"), rt.resume_connector("src")), 20)
    rt.status_store.flush(30)

    broker.stop()
    stopped = time.monotonic()
    rt.status_store.put_task("bench-once", 0, "RUNNING")  # written once: it is retried, never superseded
    outage = measure_spread(measured, iterations, seconds)
    outage_measured_in = time.monotonic() - stopped
    during = {**rt.metrics()[METRICS_GROUP], "superseded": rt.status_store.sender.superseded}
    pause_took: list[float] = []
    pause_error: list[BaseException] = []

    def pause() -> None:
        start = time.perf_counter()
        try:
            rt.pause_connector("src")
        except BaseException as e:  # noqa: BLE001 - reported below
            pause_error.append(e)
        pause_took.append(time.perf_counter() - start)

    thread = threading.Thread(target=pause)
    pause_started = time.monotonic()
    thread.start()
    # The broker stays away 3 s more (then takes a few seconds to start): status reads meanwhile.
    while_paused = measure_spread({name: measured[name] for name in ("connector_status", "connector_topics",
                                                                      "metrics")}, 100, 3.0)
    broker.start()
    back = time.monotonic() - pause_started
    thread.join(60)
    rt.status_store.flush(60)
    counters = rt.metrics()[METRICS_GROUP]

    width = max(len(n) for n in measured) + 2
    print(f"\nStatus call latency, broker up (baseline) vs. broker down; {iterations} calls each, ms\n")
    print(f"{'call':<{width}}{'up p50':>9}{'up p99':>9}{'down p50':>10}{'down p99':>10}{'down max':>10}"
          f"{'ratio p50':>11}{'ratio p99':>11}")
    worst = 0.0
    for name in measured:
        up, down = summary(healthy[name]), summary(outage[name])
        worst = max(worst, down[2])
        print(f"{name:<{width}}{up[0]:>9.3f}{up[1]:>9.3f}{down[0]:>10.3f}{down[1]:>10.3f}{down[2]:>10.3f}"
              f"{down[0] / up[0]:>11.2f}{down[1] / up[1]:>11.2f}")
    p = summary(pause_healthy)
    print(f"\nOutage calls spread over the {outage_measured_in:.2f} s after stopping the broker, with the "
          f"status store at {during}; worst single call {worst:.3f} ms (goal < 10 ms): "
          f"{'OK' if worst < 10 else 'ABOVE GOAL'}")
    print(f"pause+resume with the broker up (config topic writes): p50 {p[0]:.1f} ms, p99 {p[1]:.1f} ms")
    outcome = f"raised {pause_error[0]!r}" if pause_error else "succeeded"
    print(f"pause_connector during the outage: returned after {pause_took[0]:.2f} s and {outcome}; the broker "
          f"was back {back:.2f} s after the call (the target state is sent without waiting for the broker)")
    blocked = max(max(v) for v in while_paused.values())
    print(f"status reads from another thread while that pause ran: worst {blocked:.3f} ms "
          f"({sum(len(v) for v in while_paused.values())} calls)")
    print(f"status store counters: {counters}")


if __name__ == "__main__":
    main()
