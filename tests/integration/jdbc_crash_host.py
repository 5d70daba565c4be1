"""A process that hosts a ConnectRuntime running several connectors until it is killed (the JDBC crash test).

Usage: python jdbc_crash_host.py BOOTSTRAP GROUP CONNECTORS_JSON   ({name: config})
Creates the connectors the restored runtime does not have, prints "ready", then runs forever.
"""

import json
import sys
import threading

from connect_magics import ConnectRuntime

bootstrap, group, connectors = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
rt = ConnectRuntime(bootstrap, group, {"offset.flush.interval.ms": "100"})
for name, config in connectors.items():
    if name not in rt.connectors():
        rt.create_connector(name, config)
print("ready", flush=True)
threading.Event().wait()
