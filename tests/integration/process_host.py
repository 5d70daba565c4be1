"""A process that hosts a ConnectRuntime with ``executor="processes"`` until it is killed.

Usage: python process_host.py BOOTSTRAP GROUP TOPIC
Runs a SequenceSource of two tasks into TOPIC, prints the task processes' pids as one JSON line once both
published them, then runs forever.
"""

import json
import sys
import threading
import time

from connect_magics import ConnectRuntime

bootstrap, group, topic = sys.argv[1:4]
rt = ConnectRuntime(bootstrap, group, {"offset.flush.interval.ms": "200"}, executor="processes")
rt.create_connector("gen", {"connector.class": "SequenceSource", "topic": topic, "tasks.max": "2", "rate": "100"})
deadline = time.monotonic() + 120
while time.monotonic() < deadline:
    handles = [rt.herder.task_handle("gen", i) for i in range(2)]
    pids = [(h.published() or {}).get("pid") if h is not None else None for h in handles]
    if all(pids):
        print(json.dumps(pids), flush=True)
        break
    time.sleep(0.1)
threading.Event().wait()
