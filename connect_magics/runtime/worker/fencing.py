"""Fencing replaced task instances: Spark retries, speculative copies, and tasks of a runtime that lost its group.

A task instance that was replaced (a Spark task retried after its Python worker was lost, a speculative
copy, a round that outlived its successor, a runtime that lost its group) must never commit offsets
after its successor started. Every fenced instance commits through a :class:`TaskFence`, the
:class:`~connect_magics.storage.fence.ProducerFence` whose transactional id names the task,
``{group.id}-{connector}-{task}`` (the id Kafka Connect gives source tasks under KIP-618). Claiming it
makes the broker fence every earlier instance: their next transaction fails with ``PRODUCER_FENCED`` and
they stop without committing. Source offsets are written to the offsets topic inside the transaction;
sink offsets are sent to the consumer group inside it (``send_offsets_to_transaction``, which also checks
the consumer's group generation).

A broker outage, a transaction coordinator that moved or timed a transaction out can break the producer
with the same errors a successor causes (``PRODUCER_FENCED``, ``INVALID_PRODUCER_EPOCH``, fatal errors).
The fence tells them apart with the instance's :class:`TaskOwnership`: its generation in the task control
topic, written before the claim. Only a newer generation there is a successor; otherwise the fence claims
the id again and the task goes on from its last commit.

>>> fence = TaskFence("nb", TaskId("lines", 0), {"bootstrap.servers": "127.0.0.1:9092"})  # doctest: +SKIP
>>> fence.claim()                                                       # doctest: +SKIP
>>> with fence.transaction() as producer:                               # doctest: +SKIP
...     producer.produce("nb-offsets", b"value", b"key")
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_magics.runtime.config.worker_keys import CLIENT_KEYS_PREFIXES
from connect_magics.runtime.worker.task_id import TaskId
from connect_magics.storage.fence import FencedError, FenceOwner, ProducerFence
from connect_magics.storage.task_control import TaskControlStore

OWNERSHIP_TIMEOUT_S = 5.0  # how long telling a successor from an outage may wait for the control topic


class TaskFencedError(FencedError):
    """A newer instance of this task started: this one may no longer commit, and stops."""


def transactional_id(group_id: str, task_id: TaskId) -> str:
    """``{group.id}-{connector}-{task}``, as Kafka Connect names a source task's transactional id.

    >>> transactional_id("nb", TaskId("lines", 2))
    'nb-lines-2'
    """
    return f"{group_id}-{task_id.connector}-{task_id.task}"


class TaskOwnership:
    """A task instance's generation in the task control topic, the :class:`FenceOwner` of its fence: the
    instance is current as long as no newer generation of the task was written there.

    >>> owner = TaskOwnership(control, TaskId("lines", 0), 3)  # doctest: +SKIP
    >>> owner.register(); owner.is_current()                   # doctest: +SKIP
    True
    """

    def __init__(self, control: TaskControlStore, task_id: TaskId, generation: int, state: str = "STARTED",
                 timeout: float = OWNERSHIP_TIMEOUT_S) -> None:
        self.control, self.task_id, self.generation, self.state, self.timeout = \
            control, task_id, generation, state, timeout

    def register(self) -> None:
        """Write the generation if it was only reserved here (a hosted instance's was written by its handle)."""
        c, t = self.task_id.connector, self.task_id.task
        if self.control.reserved(c, t, self.generation):
            self.control.put_control(c, t, self.generation, self.state, self.timeout)

    def superseded(self) -> bool:
        """True if this process already knows of a newer generation (no broker call)."""
        current = self.control.control(self.task_id.connector, self.task_id.task)
        return current is not None and current["generation"] > self.generation

    def is_current(self) -> bool:
        c, t = self.task_id.connector, self.task_id.task
        return self.control.newest_generation(c, t, self.timeout) <= self.generation


class TaskFence(ProducerFence):
    """One task instance's right to commit (see the module's docs)."""

    error_class = TaskFencedError
    successor = "a newer instance of it started"

    def __init__(self, group_id: str, task_id: TaskId, client_config: Mapping[str, Any],
                 timeout: float = 30.0, producer_config: Mapping[str, Any] | None = None,
                 owner: FenceOwner | None = None) -> None:
        """``producer_config``: the task's own producer settings, for a fence that also writes its records
        (exactly-once sources); otherwise only the connection settings of ``client_config`` are used.
        ``owner``: the instance's :class:`TaskOwnership` (without one, any fence-like error stops it)."""
        config = {k: v for k, v in client_config.items() if k.startswith(CLIENT_KEYS_PREFIXES)}
        # murmur2, as every other writer of the offsets topic (and Java's producers): a key's records must
        # all land in one partition, or a reader could take an older offset as the newest.
        super().__init__(transactional_id(group_id, task_id),
                         {"partitioner": "murmur2_random", **config, **(producer_config or {})},
                         timeout, what=f"Task {task_id}", owner=owner)
        self.task_id = task_id

    def commit_consumer_offsets(self, offsets: list, group_metadata: Any, timeout: float | None = None) -> None:
        """Commit a sink task's consumer offsets inside a transaction of this fence, waiting at most ``timeout``
        for the group coordinator (a consumer still rejoining its group after an outage makes it wait: the task
        polls meanwhile and commits again later)."""
        with self.transaction(timeout) as producer:
            producer.send_offsets_to_transaction(offsets, group_metadata, timeout or self.timeout)
