"""A process hosting one runtime of a group with its REST API until it is killed (the group tests).

Usage: python group_host.py BOOTSTRAP GROUP WORKER_CONFIG_JSON
Prints ``url <REST URL>`` once serving, then ``role <role>`` at every change of role.
"""

import json
import logging
import sys
import threading

from connect_magics import ConnectRuntime
from connect_magics.rest import RestServer


class RoleLines(logging.Handler):
    """Echo the membership's role changes ("... joining -> leader") on stdout."""

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if " -> " in message:
            print("role", message.rsplit(" -> ", 1)[1], flush=True)


logging.getLogger("connect_magics.runtime.group.membership").addHandler(RoleLines())
logging.getLogger("connect_magics.runtime.group.membership").setLevel(logging.INFO)
bootstrap, group, worker = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
rt = ConnectRuntime(bootstrap, group, worker)
with RestServer(rt, "127.0.0.1", int(worker["rest.port"])) as server:
    print("url", server.url, flush=True)
    threading.Event().wait()
