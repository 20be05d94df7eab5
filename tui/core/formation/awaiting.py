"""What a task waits for before it goes on (spec murmur-newest §7.5, §9.1): the `call-member`
calls and delegations it started and whose answers have not arrived. When the model ends its turn
with a turn left and something is still out, the task waits here for every one, then continues
with one user message holding all that arrived (member answers first, then delegation outcomes).

One `Awaiting` per session, shared by the tools that start the work (they `expect` an id, and
whatever learns the outcome — a poller, the door taking a completion — `arrive`s it) and by the
turn loop that waits. Thread-safe: arrivals come from other threads.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Literal

from tui.core.cancel import CancelToken

ArrivalKind = Literal["member", "delegation"]


@dataclass(frozen=True)
class Arrival:
    kind: ArrivalKind
    ident: str  # mcl_… for a member call, dlg_… for a delegation
    name: str  # the member called, or the delegated capsule
    status: str  # the call's status or the delegation's outcome
    text: str  # what the task reads of it (a member's answer is fenced `member:<name>`)


class Awaiting:
    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._out: dict[str, dict[str, ArrivalKind]] = {}  # task → ident → kind
        self._arrived: dict[str, list[Arrival]] = {}

    def expect(self, task_id: str, ident: str, kind: ArrivalKind) -> None:
        """`task_id` now waits for `ident`'s outcome."""
        with self._changed:
            self._out.setdefault(task_id, {})[ident] = kind

    def arrive(self, task_id: str, arrival: Arrival) -> bool:
        """`arrival` is in; False when nothing expected it (already arrived, or dropped)."""
        with self._changed:
            out = self._out.get(task_id, {})
            if out.pop(arrival.ident, None) is None:
                return False
            self._arrived.setdefault(task_id, []).append(arrival)
            self._changed.notify_all()
            return True

    def outstanding(self, task_id: str) -> int:
        with self._changed:
            return len(self._out.get(task_id, {}))

    def kinds(self, task_id: str) -> set[ArrivalKind]:
        """What `task_id` still waits for: member calls, delegations, or both."""
        with self._changed:
            return set(self._out.get(task_id, {}).values())

    def arrived(self, task_id: str) -> int:
        with self._changed:
            return len(self._arrived.get(task_id, []))

    def wait(self, task_id: str, cancel: CancelToken) -> list[Arrival]:
        """Every arrival of `task_id` once nothing is out (or at once when canceled): member
        answers first, then delegations, each in the order they arrived. What arrived is taken."""
        unsubscribe = cancel.subscribe(self._wake)
        try:
            with self._changed:
                while self._out.get(task_id) and not cancel.is_set():
                    self._changed.wait()
                taken = self._arrived.pop(task_id, [])
        finally:
            unsubscribe()
        return ([a for a in taken if a.kind == "member"]
                + [a for a in taken if a.kind == "delegation"])

    def drop(self, task_id: str) -> list[str]:
        """The task ended: what it still waited for is abandoned (its ids, to report)."""
        with self._changed:
            self._arrived.pop(task_id, None)
            return list(self._out.pop(task_id, {}))

    def _wake(self) -> None:
        with self._changed:
            self._changed.notify_all()
