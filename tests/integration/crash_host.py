"""A process that hosts a ConnectRuntime until it is killed (used by the crash-safety tests).

Usage: python crash_host.py BOOTSTRAP GROUP NAME CONFIG_JSON
Creates the connector (unless the restored runtime already has it), prints "ready", then runs forever.
"""

import json
import sys
import threading

from connect_magics import ConnectRuntime

bootstrap, group, name, config = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
# Session timeouts at the broker's minimum (6 s): the restored runtime's worker and sink consumer join their
# groups once the killed process's members expire, which the defaults (10 s, 45 s) would make the test wait for.
rt = ConnectRuntime(bootstrap, group, {"offset.flush.interval.ms": "100", "session.timeout.ms": "6000",
                                       "heartbeat.interval.ms": "1000", "consumer.session.timeout.ms": "6000"})
if name not in rt.connectors():
    rt.create_connector(name, config)
print("ready", flush=True)
threading.Event().wait()
