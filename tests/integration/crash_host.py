"""A process that hosts a ConnectRuntime until it is killed (used by the crash-safety tests).

Usage: python crash_host.py BOOTSTRAP GROUP NAME CONFIG_JSON
Creates the connector (unless the restored runtime already has it), prints "ready", then runs forever.
"""

import json
import sys
import threading

from connect_magics import ConnectRuntime

bootstrap, group, name, config = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
rt = ConnectRuntime(bootstrap, group, {"offset.flush.interval.ms": "100"})
if name not in rt.connectors():
    rt.create_connector(name, config)
print("ready", flush=True)
threading.Event().wait()
