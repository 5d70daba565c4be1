"""How many tasks one runtime (threads executor) holds, and what happens past that.

Starts its own embedded broker and one runtime, then creates FileStreamSource connectors of one task each
until the runtime refuses one (docs/design.md, "How many tasks one runtime holds"), and prints the capacity
the runtime computed, the connectors it accepted, the refusal, and the tasks' states once every accepted one
settled: every accepted task must be RUNNING and none FAILED. The baseline is the capacity computed before
the first connector (free thread-specific-data keys, less the reserve, over 2 clients per task).

    python bench/bench_task_capacity.py            # up to 600 connectors (about 4 minutes on 2 loaded cores)
"""

from __future__ import annotations

import argparse
import collections
import gc
import logging
import tempfile
import time

from confluent_kafka.admin import AdminClient, NewTopic

from connect_magics import ConnectRestError, ConnectRuntime
from connect_magics.local import EmbeddedBroker
from connect_magics.runtime.worker.capacity import task_capacity
from connect_magics.storage import client_limit


def states(rt: ConnectRuntime) -> collections.Counter:
    counts: collections.Counter = collections.Counter()
    for name in rt.connectors():
        for task in rt.connector_status(name)["tasks"]:
            counts[task["state"]] += 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-connectors", type=int, default=600)
    args = parser.parse_args()
    logging.basicConfig(level=logging.CRITICAL)
    broker = EmbeddedBroker()
    broker.start()
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
        admin.create_topics([NewTopic("capacity", 1, 1)])["capacity"].result(30)
        files = tempfile.mkdtemp(prefix="bench-capacity-files-")
        with ConnectRuntime(broker.bootstrap_servers, "capacity", {"offset.flush.interval.ms": "60000"}) as rt:
            gc.collect()
            free, computed = client_limit.free_keys(10_000), task_capacity(2)
            started, refused, accepted = time.monotonic(), None, 0
            for i in range(args.max_connectors):
                path = f"{files}/{i}.txt"
                with open(path, "w") as f:
                    f.write("a line\n")
                try:
                    rt.create_connector(f"c{i}", {"connector.class": "FileStreamSource", "file": path,
                                                  "topic": "capacity"})
                except ConnectRestError as e:
                    refused = e
                    break
                accepted += 1
            created_s = time.monotonic() - started
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline:
                counts = states(rt)
                if counts["RUNNING"] + counts["FAILED"] >= accepted:
                    break
                time.sleep(1)
            counts = states(rt)
            print("| keys (PTHREAD_KEYS_MAX) | free after start | capacity computed | accepted | created in "
                  "| RUNNING | FAILED | free keys at the end |")
            print("|---|---|---|---|---|---|---|---|")
            print(f"| {client_limit.keys_max()} | {free} | {computed} | {accepted} | {created_s:.0f} s "
                  f"| {counts['RUNNING']} | {counts['FAILED']} | {client_limit.free_keys(10_000)} |")
            print(f"accepted / computed: {accepted / computed:.2f}" if computed else "")
            print(f"refusal: {refused}" if refused else "no refusal")
    finally:
        broker.stop()


if __name__ == "__main__":
    main()
