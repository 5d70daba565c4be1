"""How many tasks one runtime can hold in its process, and refusing the ones it cannot (docs/design.md,
"How many tasks one runtime holds").

Every Kafka client takes one of the process's thread-specific-data keys (storage/client_limit.py: 1,024 on
Linux). A task running in this process (the threads executor) builds the clients :func:`clients_per_task`
counts; the herder promises them to the task before it starts (:func:`reserve_task_clients`) and a task the
process cannot hold is FAILED before it builds anything, with a message naming the limit and the ways past it.

>>> clients_per_task("source", {"connector.class": "FileStreamSource"}, {}, fenced=True)
2
>>> clients_per_task("sink", {"errors.deadletterqueue.topic.name": "dlq"}, {}, fenced=True)
3
"""

from __future__ import annotations

import gc
import logging
import math
from collections.abc import Mapping, Sequence

from connect_magics.runtime.config.exactly_once import exactly_once_enabled
from connect_magics.storage import client_limit
from connect_magics.storage.client_limit import ClientLimitError, Reservation

log = logging.getLogger(__name__)


def clients_per_task(connector_type: str, connector_config: Mapping[str, str], worker_config: Mapping[str, str],
                     fenced: bool) -> int:
    """The most Kafka clients one task of this connector builds in the process that runs it.

    - a source task: its producer, and its fence's transactional producer when ``fenced`` (with exactly-once
      support the fence's producer is the only one: it writes the records too); KIP-158 topic creation uses
      an admin client shared by the worker's tasks (``TaskServices.shared_admin``), not one per task;
    - a sink task: its consumer, its fence's producer when ``fenced``, and the producer of its dead letter
      queue when it has one (whose topic is checked and created with the worker's shared admin client).
    """
    if connector_type == "source":
        eos = exactly_once_enabled(worker_config)
        return 1 if eos else 1 + int(fenced)
    count = 1 + int(fenced)
    if str(connector_config.get("errors.deadletterqueue.topic.name", "")).strip():
        count += 1
    return count


def task_capacity(per_task: int) -> int | None:
    """How many more tasks of ``per_task`` clients this process can hold now (None where it cannot be told)."""
    left = client_limit.available()
    return None if left is None else left // max(1, per_task)


def reserve_task_clients(what: str, count: int) -> Reservation:
    """Promise ``count`` clients to a starting task ("Task lines-0"); raises :class:`ClientLimitError` naming
    the limit and the ways past it when the process cannot build them."""
    return client_limit.reserve(count, lambda needed, left: client_limit.limit_message(what, needed, left))


def check_connectors_fit(needs: Sequence[tuple[str, float, int]]) -> None:
    """:func:`check_connector_fits` for connectors created together (``(name, tasks, per_task)`` each): all their
    tasks must fit; the error names the first connector that does not."""
    total = math.ceil(sum(tasks * per_task for _, tasks, per_task in needs))  # tasks: a share, in a group
    left = _available(total)
    if left is None or left >= total:
        return
    used = 0
    for name, tasks, per_task in needs:
        if used + tasks * per_task > left:
            raise ClientLimitError(
                f"Connector {name} cannot be created with the {len(needs)} connectors of this call: together their "
                f"tasks need {total} more Kafka clients and this runtime's process can build {left} more. Each "
                f"Kafka client takes one of the process's {client_limit.keys_max()} thread-specific-data keys "
                f"(PTHREAD_KEYS_MAX); {client_limit.WAYS_PAST}, create fewer, or stop connectors you no longer need")
        used += tasks * per_task


def _available(needed: int) -> int | None:
    left = client_limit.available(at_most=needed)
    if left is not None and left < needed:
        gc.collect()  # clients of stopped tasks that only a cycle keeps alive give their keys back
        left = client_limit.available(at_most=needed)
    return left


def check_connector_fits(name: str, tasks: int, per_task: int) -> None:
    """Raise :class:`ClientLimitError` if ``tasks`` more tasks of ``per_task`` clients do not fit in this process
    (the check made before a connector is created: its ``tasks.max`` tasks must fit)."""
    left = _available(tasks * per_task)
    if left is not None and left < tasks * per_task:
        fit = left // max(1, per_task)
        raise ClientLimitError(
            f"Connector {name} cannot be created: its {tasks} task{'s' if tasks != 1 else ''} (tasks.max) "
            f"need{'s' if tasks == 1 else ''} {tasks * per_task} more Kafka clients ({per_task} each) and this runtime's process can build {left} "
            f"more, enough for {fit} such task{'s' if fit != 1 else ''}. Each Kafka client (producer, consumer or "
            f"admin client) takes one of the process's {client_limit.keys_max()} thread-specific-data keys "
            f"(PTHREAD_KEYS_MAX), so one runtime with the threads executor holds only so many tasks; "
            f"{client_limit.WAYS_PAST}, or stop connectors you no longer need")
