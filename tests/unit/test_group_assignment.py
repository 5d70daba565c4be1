"""The leader's plan of where tasks run (runtime/group/assignment.py): sticky, balanced, incremental."""

from __future__ import annotations

from connect_magics.runtime.group.assignment import Group, Revocation, plan
from connect_magics.storage.assignment_store import Assignment, Report, Slot

A, B, C = "h:1/1/a", "h:2/2/b", "h:3/3/c"


def tasks(n: int, connector: str = "c") -> set[tuple[str, int]]:
    return {(connector, i) for i in range(n)}


def group(*live: str, leader: str = A, reports: dict | None = None, left: set | None = None,
          missing: dict | None = None) -> Group:
    return Group({m: m.split("/")[0] for m in live}, leader, reports or {}, left or set(), missing or {})


def members(assignment: Assignment) -> dict[str, int]:
    out: dict[str, int] = {}
    for slot in assignment.tasks.values():
        out[str(slot.member)] = out.get(str(slot.member), 0) + 1
    return out


def test_new_tasks_are_spread_evenly_and_the_leader_starts_its_share() -> None:
    step = plan(Assignment(), group(A, B, C), tasks(6), {}, 0.0, 60.0)
    assert members(step.assignment) == {A: 2, B: 2, C: 2}
    assert step.start_here == {key for key, s in step.assignment.tasks.items() if s.member == A}
    assert not step.stop_here and not step.revoking


def test_a_joining_member_takes_a_share_and_nothing_else_moves() -> None:
    current = plan(Assignment(), group(A, B), tasks(6), {}, 0.0, 60.0).assignment
    step = plan(current, group(A, B, C), tasks(6), {}, 1.0, 60.0)
    # the leader's tasks move at once (it stops them first); a follower's are revoked, then given
    moved_now = {k for k, s in step.assignment.tasks.items() if s.member == C}
    assert len(moved_now) + len(step.revoking) == 2
    unchanged = {k for k, s in current.tasks.items() if step.assignment.tasks[k].member == s.member}
    assert len(unchanged) == 4
    assert all(r.source == B and r.target == C for r in step.revoking.values())
    # B reports the revoked task stopped: it goes to C
    held = {k for k, s in step.assignment.tasks.items() if s.member == B}
    after = plan(step.assignment, group(A, B, C, reports={B: Report("h:2", held)}), tasks(6), step.revoking,
                 2.0, 60.0)
    assert members(after.assignment) == {A: 2, B: 2, C: 2} and not after.revoking


def test_a_revoked_task_waits_for_its_member_to_let_go() -> None:
    current = Assignment(1, A, {("c", 0): Slot(None), ("c", 1): Slot(B), ("c", 2): Slot(B)})
    revoking = {("c", 0): Revocation(B, C, 0.0)}
    running = {B: Report("h:2", {("c", 0), ("c", 1), ("c", 2)})}
    step = plan(current, group(A, B, C, reports=running), tasks(3), revoking, 1.0, 60.0, revoke_timeout=30.0)
    assert step.assignment.tasks[("c", 0)].member is None and ("c", 0) in step.revoking
    step = plan(current, group(A, B, C, reports=running), tasks(3), revoking, 31.0, 60.0, revoke_timeout=30.0)
    assert step.assignment.tasks[("c", 0)].member == C  # it did not let go in time: fencing makes it safe


def test_a_gone_member_keeps_its_tasks_for_the_delay_then_they_move() -> None:
    current = Assignment(1, A, {("c", 0): Slot(A), ("c", 1): Slot(B), ("c", 2): Slot(C)})
    during = plan(current, group(A, C, missing={B: 0.0}), tasks(3), {}, 5.0, 10.0)
    assert during.assignment.tasks[("c", 1)].member == B
    after = plan(current, group(A, C, missing={B: 0.0}), tasks(3), {}, 10.0, 10.0)
    assert after.assignment.tasks[("c", 1)].member in (A, C)
    assert after.assignment.tasks[("c", 0)].member == A and after.assignment.tasks[("c", 2)].member == C


def test_a_member_that_left_cleanly_or_came_back_at_its_address_gets_no_delay() -> None:
    current = Assignment(1, A, {("c", 0): Slot(A), ("c", 1): Slot(B)})
    left = plan(current, group(A, C, left={B}, missing={B: 0.0}), tasks(2), {}, 1.0, 300.0)
    assert left.assignment.tasks[("c", 1)].member == C
    restarted = "h:2/99/z"  # the same worker_id, a new process
    back = plan(current, group(A, restarted, missing={B: 0.0}), tasks(2), {}, 1.0, 300.0)
    assert back.assignment.tasks[("c", 1)].member == restarted


def test_removed_tasks_are_dropped_and_the_leader_stops_its_own() -> None:
    current = Assignment(1, A, {("c", 0): Slot(A), ("c", 1): Slot(B), ("d", 0): Slot(A)})
    step = plan(current, group(A, B), tasks(2), {}, 0.0, 60.0)
    assert set(step.assignment.tasks) == tasks(2)
    assert step.stop_here == {("d", 0)}
