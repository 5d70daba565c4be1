"""Writes sent to a follower, applied once by the leader: requests and answers through the group's control topic.

A Kafka Connect follower forwards writes to the leader's REST URL; runtimes in notebooks often serve no
REST API, so a follower writes the request to the group's control topic (``task.control.storage.topic``)
and waits for the leader's answer there:

- ``request-{id}`` → ``{"method": "create_connector", "args": [...], "kwargs": {...}, "from": member}``
- ``answer-{id}`` → ``{"status": 200, "result": ...}`` or ``{"status": 409, "message": ...}``

The leader applies each request once, in the order written; the follower deletes both records (tombstones)
when it has the answer, or the request alone when it gives up waiting, which withdraws it: a leader that
has not begun it never will.

>>> channel = RequestChannel("nb-task-control", {"bootstrap.servers": "127.0.0.1:9092"}, "host:8083/12")  # doctest: +SKIP
>>> channel.start(); channel.forward("pause_connector", ["lines"], {}, timeout=30)  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import queue
import threading
import uuid
from collections.abc import Callable
from typing import Any

from connect_magics.errors import ConflictError, ConnectRestError, error_for_status
from connect_magics.storage.config_store import dumps
from connect_magics.storage.kafka_log import KafkaLog, json_object, text_key

log = logging.getLogger(__name__)

REQUEST, ANSWER = "request-", "answer-"

#: The leader's side: ``handler(method, args, kwargs)`` applies a request and returns its JSON answer.
Handler = Callable[[str, list, dict], Any]


class RequestChannel:
    """Both sides of forwarding: :meth:`forward` (a follower) and :meth:`serve` (the leader)."""

    def __init__(self, topic: str, client_config: dict[str, str], member: str) -> None:
        self.member = member
        self._lock = threading.Lock()
        self._pending: dict[str, dict[str, Any]] = {}  # requests neither answered nor withdrawn, in order
        self._answers: dict[str, dict[str, Any]] = {}
        self._answered = threading.Condition(self._lock)
        self._handler: Handler | None = None
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._server: threading.Thread | None = None
        self.log = KafkaLog(topic, client_config, self._apply)

    def start(self, timeout: float = 30.0) -> RequestChannel:
        self.log.start(timeout)
        return self

    def stop(self) -> None:
        self.stop_serving()
        self.log.stop()

    # -- the topic ------------------------------------------------------------------------------------
    def _apply(self, key: bytes | None, value: bytes | None, _p: int, _o: int) -> None:
        k = text_key(key) if key else ""
        if k.startswith(REQUEST):
            request_id = k[len(REQUEST):]
            with self._lock:
                if value is None:
                    self._pending.pop(request_id, None)  # answered, or withdrawn by its sender
                    return
                if request_id in self._answers:
                    return
                self._pending[request_id] = json_object(value, 'a request {"method": ..., "args": [...], ...}')
                serving = self._handler is not None
            if serving:
                self._queue.put(request_id)
        elif k.startswith(ANSWER):
            request_id = k[len(ANSWER):]
            with self._lock:
                if value is None:
                    self._answers.pop(request_id, None)
                    return
                self._answers[request_id] = json_object(value, 'an answer {"status": ..., ...}')
                self._pending.pop(request_id, None)
                self._answered.notify_all()
        # other keys of the control topic (task control, metrics) are not the channel's

    # -- a follower -----------------------------------------------------------------------------------
    def forward(self, method: str, args: list, kwargs: dict, timeout: float,
                leader: Callable[[], str | None] = lambda: None) -> Any:
        """Have the leader apply ``method(*args, **kwargs)``; its answer, or its error raised here. After
        ``timeout`` the request is withdrawn and a 409 names the leader, if any."""
        request_id = uuid.uuid4().hex
        request = {"method": method, "args": args, "kwargs": kwargs, "from": self.member}
        self.log.write([(REQUEST + request_id, dumps(request))], timeout)
        with self._lock:
            answered = self._answered.wait_for(lambda: request_id in self._answers, timeout)
            answer = self._answers.get(request_id)
        if not answered:
            self.log.send(REQUEST + request_id, None)
            name = leader()
            if name is None:
                raise ConflictError("Cannot complete request momentarily due to no known leader URL, likely "
                                    "because a rebalance was underway.")
            raise ConflictError(f"Request timed out: the leader of the group ({name}) did not apply it within "
                                f"{timeout:g} s; it was withdrawn")
        self.log.send(REQUEST + request_id, None)
        self.log.send(ANSWER + request_id, None)
        if answer.get("status", 200) >= 300:
            raise error_for_status(answer["status"], answer.get("message", ""))
        return answer.get("result")

    # -- the leader -----------------------------------------------------------------------------------
    def serve(self, handler: Handler) -> None:
        """Apply every pending and future request with ``handler``, one at a time, in order."""
        with self._lock:
            self._handler = handler
            for request_id in self._pending:
                self._queue.put(request_id)
        self._server = threading.Thread(target=self._serve, name="leader-requests", daemon=True)
        self._server.start()

    def stop_serving(self) -> None:
        """Stop applying requests (after the one being applied, if any)."""
        with self._lock:
            self._handler = None
        if self._server is not None:
            self._queue.put(None)
            self._server.join()
            self._server = None

    def _serve(self) -> None:
        while True:
            request_id = self._queue.get()
            with self._lock:
                handler = self._handler
                request = self._pending.get(request_id) if request_id is not None else None
            if handler is None or request_id is None:
                return
            if request is None:
                continue  # withdrawn, or answered already
            try:
                answer = {"status": 200, "result": handler(request["method"], request.get("args", []),
                                                           request.get("kwargs", {}))}
            except ConnectRestError as e:
                answer = {"status": e.status, "message": e.message}
            except Exception as e:  # noqa: BLE001 - the sender gets it as a 500
                log.exception("Applying %s forwarded by %s failed", request.get("method"), request.get("from"))
                answer = {"status": 500, "message": str(e)}
            try:
                self.log.write([(ANSWER + request_id, dumps(answer))])
            except Exception:  # noqa: BLE001
                log.exception("Answering request %s failed", request_id)
            with self._lock:
                self._pending.pop(request_id, None)
