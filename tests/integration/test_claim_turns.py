"""Claims of transactional ids take turns in a process, per cluster (storage/fence.py, CONCURRENT_CLAIMS): hundreds
of tasks starting at once (a member's share after another left the group) claimed together and flooded the broker.
A task's claim waits for its turn, and one abandoned meanwhile (its task stopped) builds nothing; the leader's claim
and zombie fencing (no way to give up) do not wait behind task claims; a claim against another cluster does not wait
behind this one's (a cluster that is away holds its claims' turns up to their timeout)."""

from __future__ import annotations

import threading
import time

import pytest
from helpers import wait_until

from connect_magics.local import EmbeddedBroker
from connect_magics.storage import fence as fences
from connect_magics.storage.fence import ProducerFence

pytestmark = pytest.mark.broker


def test_a_claim_waits_for_its_turn_and_an_abandoned_one_builds_nothing(broker: EmbeddedBroker,
                                                                        unique: str) -> None:
    config = {"bootstrap.servers": broker.bootstrap_servers}
    turns = fences.claim_turns(broker.bootstrap_servers)
    for _ in range(fences.CONCURRENT_CLAIMS):  # every turn taken, as by claims under way
        turns.acquire()
    taken = fences.CONCURRENT_CLAIMS
    try:
        waiting, stopped, outcome = ProducerFence(f"turns-{unique}-a", config), threading.Event(), []
        thread = threading.Thread(target=lambda: outcome.append(waiting.claim(True, stopped.is_set)))
        thread.start()
        thread.join(1.0)
        assert thread.is_alive() and not waiting.claimed  # waiting for a turn
        stopped.set()
        thread.join(10)
        assert outcome == [False] and not waiting.claimed

        second = ProducerFence(f"turns-{unique}-b", config)
        thread = threading.Thread(target=lambda: outcome.append(second.claim(True, lambda: False)))
        thread.start()
        thread.join(1.0)
        assert thread.is_alive() and not second.claimed
        turns.release()  # one claim under way ends: the next waiting takes its turn
        taken -= 1
        wait_until(lambda: second.claimed, 60, message="the second claim done in its turn")
        thread.join(10)
        assert outcome == [False, True]
        second.close()

        turns.acquire()  # every turn taken again
        taken += 1
        leader = ProducerFence(f"turns-{unique}-c", config)
        assert leader.claim() and leader.claimed  # at once: no turn to wait for
        leader.close()
    finally:
        for _ in range(taken):
            turns.release()


def test_claims_against_another_cluster_take_their_own_turns(broker: EmbeddedBroker, unique: str) -> None:
    """Every turn of one cluster taken (its claims stuck while it is away): a task's claim against another cluster
    goes on. The other cluster here is the same broker named by another address, which the turns tell apart."""
    away = fences.claim_turns(f"127.0.0.1:1,{unique}:9092")
    for _ in range(fences.CONCURRENT_CLAIMS):
        away.acquire()
    try:
        other = ProducerFence(f"turns-{unique}-d", {"bootstrap.servers": broker.bootstrap_servers})
        deadline = time.monotonic() + 30  # with turns for the whole process it would wait: given up, False
        assert other.claim(True, lambda: time.monotonic() > deadline) and other.claimed
        other.close()
    finally:
        for _ in range(fences.CONCURRENT_CLAIMS):
            away.release()
