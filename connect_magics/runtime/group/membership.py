"""Which runtime of a group leads it, as the broker's group coordinator decides.

Every runtime of a group joins the Kafka consumer group ``{group.id}-members``, subscribed to the
config topic (one partition) with the cooperative-sticky assignor. The coordinator keeps the membership
(heartbeats, ``session.timeout.ms``, ``rebalance.timeout.ms``) and the member holding partition 0 is
the leader: sticky assignment keeps it with its holder while other members join and leave, and hands it
to another member when the holder leaves or stops heartbeating. Nothing is elected by hand.

>>> membership = GroupMembership(wc, "nb-configs", on_role=print)  # doctest: +SKIP
>>> membership.start(); membership.wait_for_role(10)                  # doctest: +SKIP
<Role.LEADER: 'leader'>
"""

from __future__ import annotations

import enum
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from confluent_kafka import Consumer, KafkaException
from confluent_kafka.admin import AdminClient

from connect_magics.runtime.config.worker_config import WorkerConfig
from connect_magics.storage.authorization import KafkaAccessError, access_error
from connect_magics.storage.client_logs import client_logger

log = logging.getLogger(__name__)


class Role(str, enum.Enum):
    JOINING = "joining"  # not yet (or no longer) assigned by the coordinator
    LEADER = "leader"
    FOLLOWER = "follower"


def membership_group(group_id: str) -> str:
    """The consumer group the runtimes of ``group_id`` join (not ``group.id`` itself, which a Kafka Connect
    worker's group protocol would claim).

    >>> membership_group("nb")
    'nb-members'
    """
    return f"{group_id}-members"


class GroupMembership:
    """This runtime's membership; ``on_role(role)`` runs on a thread of its own at every change of role."""

    def __init__(self, worker_config: WorkerConfig, topic: str, on_role: Callable[[Role], None]) -> None:
        self.topic = topic
        self.group = membership_group(worker_config["group.id"])
        # unique among runtimes of one process too (they share a worker_id when none serves REST)
        self.member_name = f"{worker_config.worker_id}/{os.getpid()}/{uuid.uuid4().hex[:6]}"
        self._client_config = worker_config.client_config()
        self._consumer = Consumer({
            **self._client_config, "group.id": self.group, "client.id": self.member_name,
            "partition.assignment.strategy": "cooperative-sticky",
            "session.timeout.ms": worker_config["session.timeout.ms"],
            "heartbeat.interval.ms": worker_config["heartbeat.interval.ms"],
            "max.poll.interval.ms": worker_config["rebalance.timeout.ms"],
            "enable.auto.commit": False, "auto.offset.reset": "latest", "enable.partition.eof": False,
            "logger": client_logger("membership")})
        self._on_role = on_role
        self._role = Role.JOINING
        self._was_lost = False  # the coordinator dropped this member; the next assignment decides the role
        self._applied = Role.JOINING  # the role whose duties were last taken up (on_role returned)
        self._cond = threading.Condition()
        self._closing = False
        #: Why this member cannot take part (a missing ACL): set once, never retried (the runtime raises it).
        self.error: KafkaAccessError | None = None
        self._thread = threading.Thread(target=self._run, name=f"membership-{self.group}", daemon=True)
        self._changes = threading.Thread(target=self._apply_changes, name=f"role-{self.group}", daemon=True)

    # -- state --------------------------------------------------------------------------------------
    @property
    def role(self) -> Role:
        """What the coordinator last said (the duties may still be being taken up: see :meth:`wait_for_role`)."""
        return self._role

    def wait_for_role(self, timeout: float) -> Role:
        """Wait until this member's role is known and its duties taken up (LEADER: connectors started);
        returns the role then, or JOINING after ``timeout``."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while (self._role is Role.JOINING or self._applied is not self._role) and not self._closing \
                    and self.error is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return Role.JOINING
                self._cond.wait(remaining)
            return self._role

    def leader(self, timeout: float = 5.0) -> str | None:
        """The leading member's name (``{worker_id}/{pid}/{suffix}``), asked of the coordinator; None if none holds it."""
        for member in self.members(timeout):
            if member["leader"]:
                return member["name"]
        return None

    def members(self, timeout: float = 5.0) -> list[dict[str, Any]]:
        """Every member as the coordinator describes it: ``name``, ``host``, ``leader``."""
        # A new client each time: a long-lived one whose DescribeGroups requests time out (broker trouble, a busy
        # machine) aborts the process (librdkafka issue 4605, rd_kafka_enq_once_del_source_return's assertion).
        admin = AdminClient({**self._client_config, "logger": client_logger("admin")})
        try:
            described = admin.describe_consumer_groups([self.group], request_timeout=timeout)[self.group]
            group = described.result(timeout + 5)  # the request ends first: nothing is left pending in the client
        except KafkaException:
            return []
        out = []
        for m in group.members:
            partitions = m.assignment.topic_partitions if m.assignment else []
            out.append({"name": m.client_id, "host": m.host,
                        "leader": any(tp.topic == self.topic and tp.partition == 0 for tp in partitions)})
        return out

    # -- lifecycle ----------------------------------------------------------------------------------
    def start(self) -> None:
        self._consumer.subscribe([self.topic], on_assign=self._assigned, on_revoke=self._revoked,
                                 on_lost=self._lost_membership)
        self._changes.start()
        self._thread.start()

    def step_down(self) -> None:
        """Give up the duties of leader at once (the fence said another member leads) until the coordinator
        assigns again."""
        self._set(Role.JOINING)

    def close(self, timeout: float = 10.0) -> None:
        """Leave the group: another member takes over at once instead of after ``session.timeout.ms``."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._thread.join(timeout)
        self._changes.join(timeout)

    def _run(self) -> None:
        while not self._closing:
            try:
                msg = self._consumer.poll(0.2)  # serves heartbeats' outcomes and rebalance callbacks
            except Exception as e:  # noqa: BLE001 - the membership must outlive broker trouble
                log.warning("Group %s membership: %s", self.group, e)
                continue
            if msg is not None and msg.error() is not None and self.error is None:
                named = access_error(msg.error(), self._client_config, f"joining the group {self.group}",
                                     group=("READ", self.group), topic=("READ", self.topic))
                if named is not None:  # JoinGroup refused: no role will ever come
                    self._fail(named)
        try:
            self._consumer.close()
        except Exception as e:  # noqa: BLE001
            log.warning("Leaving group %s: %s", self.group, e)

    def _fail(self, error: KafkaAccessError) -> None:
        log.error("Runtime %s cannot take part in group %s: %s", self.member_name, self.group, error)
        with self._cond:
            self.error = error
            self._cond.notify_all()

    # -- rebalance callbacks (on the polling thread) ------------------------------------------------
    def _holds_leadership(self, partitions: list) -> bool:
        return any(tp.topic == self.topic and tp.partition == 0 for tp in partitions)

    def _assigned(self, consumer: Consumer, partitions: list) -> None:
        if self._holds_leadership(partitions):
            self._set(Role.LEADER)
        elif (self._role is Role.JOINING or self._was_lost) \
                and not self._holds_leadership(self._safe_assignment(consumer)):
            self._set(Role.FOLLOWER)
        self._was_lost = False

    def _revoked(self, consumer: Consumer, partitions: list) -> None:
        if self._holds_leadership(partitions):
            self._set(Role.FOLLOWER)

    def _lost_membership(self, consumer: Consumer, partitions: list) -> None:
        """The coordinator could not be reached for ``session.timeout.ms`` (a broker outage, or this process
        was paused). The role holds until the rejoin's assignment says otherwise: during an outage tasks go
        on; if another member took over meanwhile, the fences refuse this one's writes until then."""
        log.warning("Runtime %s lost its membership of group %s; rejoining", self.member_name, self.group)
        self._was_lost = True

    @staticmethod
    def _safe_assignment(consumer: Consumer) -> list:
        try:
            return consumer.assignment()
        except KafkaException:
            return []

    def _set(self, role: Role) -> None:
        with self._cond:
            if role is not self._role:
                log.info("Runtime %s of group %s: %s -> %s", self.member_name, self.group, self._role.value,
                         role.value)
                self._role = role
            self._cond.notify_all()

    def _apply_changes(self) -> None:
        """Take up each new role's duties in order, off the polling thread (so heartbeats go on)."""
        while True:
            with self._cond:
                while self._applied is self._role and not self._closing:
                    self._cond.wait()
                if self._closing:
                    return
                role = self._role
            try:
                self._on_role(role)
            except KafkaAccessError as e:  # a missing ACL is granted by an operator, not by retrying
                self._fail(e)
                return
            except Exception:  # noqa: BLE001 - e.g. the broker is unreachable: try again while the role holds
                log.exception("Taking up the role %s in group %s failed; retrying", role.value, self.group)
                with self._cond:
                    self._cond.wait(1.0)
                continue
            with self._cond:
                self._applied = role
                self._cond.notify_all()
