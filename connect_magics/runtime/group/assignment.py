"""How the leader spreads tasks over the group's members: sticky, balanced, incremental (KIP-415's spirit).

:func:`plan` is pure: given the current assignment and what the leader knows of the group, it returns the next
assignment. Rules, in order:

1. Tasks that no longer exist are dropped; new tasks are placed on the least loaded live member.
2. A task stays where it is while its member is live (sticky: nothing moves without a reason).
3. A member that is gone keeps its tasks for ``scheduled.rebalance.max.delay.ms`` after the leader noticed,
   in case it comes back (Kafka Connect's delay), unless it left cleanly (it said so: its tasks were stopped)
   or a member with its ``worker_id`` is live (a restarted worker at the same address takes them back at once).
   After the delay they are placed like new tasks.
4. Balance: while one live member holds two tasks more than another, one task moves. A task that leaves a
   follower is first *revoked* (unassigned) and given to its new member only when the old one reported it
   stopped (or left the group, or ``rebalance.timeout.ms`` passed): its offsets are committed before its
   successor reads them. A task that leaves the leader is stopped there before the new assignment is written.

>>> current = Assignment(1, "a", {("c", 0): Slot("a"), ("c", 1): Slot("a")})
>>> step = plan(current, Group({"a": "h:1", "b": "h:2"}, "a", {}, set(), {}), {("c", 0), ("c", 1)}, {}, 0.0, 60.0)
>>> sorted((k, s.member) for k, s in step.assignment.tasks.items()), step.stop_here
([(('c', 0), 'a'), (('c', 1), 'b')], {('c', 1)})
"""

from __future__ import annotations

from dataclasses import dataclass, field

from connect_magics.storage.assignment_store import Assignment, Report, Slot, TaskKey


def worker_of(member: str) -> str:
    """The ``worker_id`` in a member's name (``{worker_id}/{pid}/{suffix}``).

    >>> worker_of("host:8083/4242/9f3a")
    'host:8083'
    """
    return member.split("/", 1)[0] if "/" in member else member


@dataclass
class Group:
    """What the leader knows: live members (name → worker_id), itself, their reports, who left cleanly, and
    since when each missing member has been missing (monotonic seconds)."""

    live: dict[str, str]
    leader: str
    reports: dict[str, Report]
    left: set[str]
    missing_since: dict[str, float]


@dataclass
class Revocation:
    source: str
    target: str
    since: float


@dataclass
class Step:
    assignment: Assignment
    revoking: dict[TaskKey, Revocation]
    stop_here: set[TaskKey] = field(default_factory=set)  # the leader stops these before writing
    start_here: set[TaskKey] = field(default_factory=set)  # the leader starts these


def plan(current: Assignment, group: Group, desired: set[TaskKey], revoking: dict[TaskKey, Revocation],
         now: float, delay: float, revoke_timeout: float = 60.0) -> Step:
    tasks = {key: Slot(slot.member, slot.restarts) for key, slot in current.tasks.items() if key in desired}
    revoking = {key: r for key, r in revoking.items() if key in desired}
    step = Step(Assignment(current.version, group.leader, tasks), revoking)
    live = group.live
    for key in desired - tasks.keys():
        tasks[key] = Slot(None)
    # 2-3: members gone
    for slot in tasks.values():
        if slot.member is None or slot.member in live:
            continue
        returning = returning_member(slot.member, live)
        if returning is not None:
            slot.member = returning
        elif slot.member in group.left or now - group.missing_since.get(slot.member, now) >= delay:
            slot.member = None
    # 4 (second half): revoked tasks whose old member let go
    for key, r in list(revoking.items()):
        slot = tasks[key]
        if slot.member is not None:  # placed meanwhile (e.g. the old member came back through rule 3)
            del revoking[key]
            continue
        released = r.source not in live or key not in group.reports.get(r.source, Report("", set())).tasks
        if released or now - r.since >= revoke_timeout:
            slot.member = r.target if r.target in live else None
            del revoking[key]
    # 1: place what has no member (and is not being revoked)
    loads = _loads(tasks, revoking, live)
    for key in sorted(k for k, s in tasks.items() if s.member is None and k not in revoking):
        target = min(loads, key=lambda m: (loads[m], m != group.leader, m))
        tasks[key].member = target
        loads[target] += 1
    # 4: balance
    while loads:
        most = max(loads, key=lambda m: (loads[m], m))
        least = min(loads, key=lambda m: (loads[m], m != group.leader, m))
        if loads[most] - loads[least] <= 1:
            break
        key = max(k for k, s in tasks.items() if s.member == most)
        if most == group.leader:
            tasks[key].member = least
            step.stop_here.add(key)
        else:
            tasks[key].member = None
            revoking[key] = Revocation(most, least, now)
        loads[most] -= 1
        loads[least] += 1
    before = current.of(group.leader)
    after = {k for k, s in tasks.items() if s.member == group.leader}
    step.stop_here |= before.keys() - after
    step.start_here = after - before.keys()
    return step


def returning_member(member: str, live: dict[str, str]) -> str | None:
    """A live member at the departed member's address (the same worker restarted), if any."""
    worker = worker_of(member)
    same = sorted(m for m, w in live.items() if w == worker)
    return same[0] if same else None


def _loads(tasks: dict[TaskKey, Slot], revoking: dict[TaskKey, Revocation], live: dict[str, str]) -> dict[str, int]:
    loads = dict.fromkeys(live, 0)
    for slot in tasks.values():
        if slot.member in loads:
            loads[slot.member] += 1
    for r in revoking.values():
        if r.target in loads:
            loads[r.target] += 1
    return loads
