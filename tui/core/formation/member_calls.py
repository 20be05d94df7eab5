"""`call-member`'s calls (spec murmur-newest §7.5): a task handed to a callee's door, followed
until it answers, and what the calling task reads of it.

A call sends one A2A `SendMessage` (one text part) to the callee's door — the URL the launcher
sent on the formation channel (`Seat.url`) — with the edge's formation token as the bearer and
`x-murmur-task-origin: peer`, through the one door client (tui/core/a2a/client.py). Then:

* taken: `MemberCallStarted`; a thread `GetTask`s the callee's task every `POLL_SECONDS` until
  it ends (`completed`, `failed`, `canceled`, `rejected`, or `no_answer` when the callee ended
  it with `end-without-answer`), the deadline passes (`timed_out`, the callee's task canceled)
  or the door stops answering (`unreachable`, after `UNREACHABLE_AFTER` failed polls in a row);
* busy (the door rejected it: `capsule is busy`): `MemberCallBusy`, and the thread offers it
  again after 1 s, doubling to 8 s, each wait with up to 250 ms of jitter, within the deadline;
* refused (another rejection, a 401/403, no connection): the call ends at once, `rejected` or
  `failed`.

Each call's outcome is one `MemberCallEnded` and, for a call the task still waits on, one
answer handed to `arrive` (an answer is fenced `member:<name>`: what another capsule wrote is
data). An answer is at most `ANSWER_BYTES`. The task's end abandons what is still out
(`abandon`): `abandoned`, and the callee's task is canceled. The formation token is never shown:
the door client registers it with the one redaction.
"""

from __future__ import annotations

import contextlib
import os
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tui.core import ids
from tui.core.a2a.client import DoorClient
from tui.core.a2a.task import RemoteTask, rejection
from tui.core.errors import DoorError
from tui.core.events import vocabulary as ev
from tui.core.formation.seat import Seat
from tui.core.text.fence import fence

POLL_SECONDS = 0.5
BUSY_FIRST, BUSY_MAX, BUSY_JITTER = 1.0, 8.0, 0.25  # seconds
UNREACHABLE_AFTER = 3  # polls in a row the door did not answer
ANSWER_BYTES = 64 * 1024
URL_WAIT = 10.0  # seconds the launcher has to send the callees' URLs
REQUEST_SECONDS = 5.0
DEADLINE_ENV = "MURMUR_DELEGATION_TIMEOUT_SECS"
BUSY_REASON = "capsule is busy"
NOT_REACHED = frozenset({"connect", "timeout", "broken"})
Emit = Callable[[ev.Event], object]
Expect = Callable[[str, str], None]  # task id, call id
Arrive = Callable[[str, str, str, str, str], bool]  # task, call id, member, status, text


def deadline_secs(manifest: float) -> float:
    """A call's bound: `MURMUR_DELEGATION_TIMEOUT_SECS` when it holds a number > 0, else the
    manifest's `lifecycle.delegation_deadline_secs` (600 unless it says otherwise)."""
    try:
        value = float(os.environ.get(DEADLINE_ENV, ""))
    except ValueError:
        return manifest
    return value if 0 < value < float("inf") else manifest


@dataclass
class Result:
    """What the tool answers: `passed` `Called <m>: started|busy`, `failed` `Called <m>:
    rejected|failed` (with why)."""

    status: str  # passed | failed
    summary: str
    data: dict[str, Any] | None = None
    reason: str | None = None


@dataclass(eq=False)
class MemberCall:
    call_id: str
    task_id: str
    member: str
    text: str
    client: DoorClient
    started: float = field(default_factory=time.monotonic)
    callee_task_id: str | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    ended: bool = False
    cancel_callee: bool = False  # abandoned or out of time: the callee's task is canceled


class MemberCalls:
    """Every call-member call of one session (thread-safe: the calls' threads end them)."""

    def __init__(self, seat: Seat, network_ok: bool, deadline: float, emit: Emit,
                 expect: Expect, arrive: Arrive) -> None:
        self.seat = seat
        self.network_ok = network_ok
        self.deadline = deadline
        self._emit, self._expect, self._arrive = emit, expect, arrive
        self._lock = threading.Lock()
        self._live: dict[str, MemberCall] = {}
        self._threads: list[threading.Thread] = []

    # -- the tool's call --------------------------------------------------------------------
    def call(self, task_id: str, turn: int, member: Any, text: Any) -> Result:
        shown = member if isinstance(member, str) else "?"
        names = self.seat.callee_names
        if not isinstance(member, str) or member not in names:
            return _failed(shown, f"member must be one of {', '.join(names)} (the members the "
                                  "roster lets this one call)")
        if not isinstance(text, str) or not text.strip():
            return _failed(shown, "task must be the text of the task to send")
        if not self.network_ok:
            return _failed(member, "capabilities.network.allow does not include localhost, so "
                                   "no member's door can be reached (W-RUN-008)")
        url = self.seat.url(member, URL_WAIT)
        callee = self.seat.callee(member)
        if url is None or callee is None:
            return _failed(member, f"the launcher sent no door URL for {member}")
        client = DoorClient(url, callee.token, REQUEST_SECONDS,  # a member token reaches
                            {"x-murmur-task-origin": "peer"}, extended=False)  # no more

        call = MemberCall(ids.mint("mcl"), task_id, member, text, client)
        try:
            task = client.send_task(text)
        except DoorError as exc:
            client.close()
            status = "rejected" if exc.cause == "refused" else "failed"
            self._ended(call, status, reason=str(exc), tell=False)
            return _failed(member, str(exc), status)
        why = rejection(task)
        if why is not None and why != BUSY_REASON:
            client.close()
            self._ended(call, "rejected", reason=why, tell=False)
            return _failed(member, f"{member}'s door rejected the task: {why}", "rejected")
        with self._lock:
            self._live[call.call_id] = call
        self._expect(task_id, call.call_id)
        first_wait = 0.0
        if why is None:
            self._started(call, task, turn)
        else:
            first_wait = self._busy(call, 1, BUSY_FIRST)
        thread = threading.Thread(target=self._follow, args=(call, turn, first_wait),
                                  name=f"call-member {call.call_id}", daemon=True)
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()
        state = "started" if why is None else "busy"
        return Result("passed", f"Called {member}: {state}",
                      {"call_id": call.call_id, "member": member, "status": state,
                       "task_id": call.callee_task_id})

    # -- the task's end, the session's end --------------------------------------------------
    def abandon(self, task_id: str) -> None:
        """The task ended: what it still waits for is abandoned (the callee's task canceled)."""
        with self._lock:
            out = [call for call in self._live.values() if call.task_id == task_id]
        for call in out:
            self._ended(call, "abandoned", reason="the calling task ended before the answer "
                                                  "arrived")

    def close(self) -> None:
        """The session ends: every call's thread stops (within a request's time)."""
        with self._lock:
            calls, threads = list(self._live.values()), list(self._threads)
        for call in calls:
            call.stop.set()
        for thread in threads:
            thread.join(REQUEST_SECONDS + 1)

    # -- a call's thread --------------------------------------------------------------------
    def _follow(self, call: MemberCall, turn: int, first_wait: float) -> None:
        try:
            if call.callee_task_id is None:
                self._offer_again(call, turn, first_wait)
            if call.callee_task_id is not None:
                self._poll(call)
        finally:
            if call.cancel_callee and call.callee_task_id is not None:
                with contextlib.suppress(DoorError):  # abandoned or late: the callee stops
                    call.client.cancel(call.callee_task_id)
            call.client.close()

    def _left(self, call: MemberCall) -> float:
        return self.deadline - (time.monotonic() - call.started)

    def _offer_again(self, call: MemberCall, turn: int, wait: float) -> None:
        attempt, delay = 1, BUSY_FIRST
        while True:
            if call.stop.wait(max(0.0, min(wait, self._left(call)))):
                return
            if self._left(call) <= 0:
                self._ended(call, "timed_out", reason=self._late())
                return
            try:
                task = call.client.send_task(call.text)
            except DoorError as exc:
                status = "unreachable" if exc.cause in NOT_REACHED else "failed"
                self._ended(call, status, reason=str(exc))
                return
            why = rejection(task)
            if why is None:
                self._started(call, task, turn)
                return
            if why != BUSY_REASON:
                self._ended(call, "rejected", reason=why)
                return
            attempt, delay = attempt + 1, min(delay * 2, BUSY_MAX)
            wait = self._busy(call, attempt, delay)

    def _poll(self, call: MemberCall) -> None:
        failures = 0
        assert call.callee_task_id is not None
        while not call.stop.wait(POLL_SECONDS):
            if self._left(call) <= 0:
                self._ended(call, "timed_out", reason=self._late())
                return
            try:
                task = call.client.get_task(call.callee_task_id)
            except DoorError as exc:
                if exc.cause not in NOT_REACHED:
                    self._ended(call, "failed", reason=str(exc))
                    return
                failures += 1
                if failures >= UNREACHABLE_AFTER:
                    self._ended(call, "unreachable", reason=str(exc))
                    return
                continue
            failures = 0
            if task.state == "completed":
                self._ended(call, "completed", answer=_capped(task.response or task.message
                                                              or ""))
                return
            if task.state in ("failed", "canceled", "rejected"):
                status = "no_answer" if task.no_answer else task.state
                self._ended(call, status, reason=_capped(task.message or "") or None,
                            said=True)
                return

    # -- events ----------------------------------------------------------------------------
    def _started(self, call: MemberCall, task: RemoteTask, turn: int) -> None:
        call.callee_task_id = task.id
        self._emit(ev.MemberCallStarted(task_id=call.task_id, call_id=call.call_id,
                                        member=call.member, task=call.text,
                                        callee_task_id=task.id, turn=turn))

    def _busy(self, call: MemberCall, attempt: int, delay: float) -> float:
        wait = delay + random.uniform(0, BUSY_JITTER)
        self._emit(ev.MemberCallBusy(task_id=call.task_id, member=call.member, attempt=attempt,
                                     retry_in_ms=int(wait * 1000)))
        return wait

    def _late(self) -> str:
        return (f"no answer within {self.deadline:g} s (lifecycle.delegation_deadline_secs, "
                f"or {DEADLINE_ENV})")

    def _ended(self, call: MemberCall, status: str, *, answer: str | None = None,
               reason: str | None = None, said: bool = False, tell: bool = True) -> None:
        """The call's one outcome: its event, then (`tell`) the answer the task waits on.
        `said`: the reason is the callee's own words (fenced for the task)."""
        with self._lock:
            if call.ended:
                return
            call.ended = True
            self._live.pop(call.call_id, None)
            if status in ("abandoned", "timed_out"):
                call.cancel_callee = True
                call.stop.set()
            duration = int((time.monotonic() - call.started) * 1000)
            self._emit(ev.MemberCallEnded(task_id=call.task_id, call_id=call.call_id,
                                          member=call.member, status=status,
                                          duration_ms=duration, answer=answer, reason=reason))
            if tell and status != "abandoned":
                self._arrive(call.task_id, call.call_id, call.member, status,
                             answer_text(call.member, call.call_id, status, answer, reason,
                                         said))


def answer_text(member: str, call_id: str, status: str, answer: str | None,
                reason: str | None, said: bool) -> str:
    """What the calling task reads of one call: a completed call's answer fenced
    `member:<name>`; any other outcome says so, with the callee's own words fenced."""
    source = f"member:{member}"
    if status == "completed":
        return fence(source, answer or "")
    head = f"{member} did not answer (call-member {call_id}: {status})"
    if not reason:
        return head
    return f"{head}:\n{fence(source, reason)}" if said else f"{head}: {reason}"


def _capped(text: str) -> str:
    data = text.encode()
    if len(data) <= ANSWER_BYTES:
        return text
    kept = data[:ANSWER_BYTES].decode("utf-8", errors="ignore")
    return f"{kept}\n[the answer was {len(data)} bytes; only the first 64 KiB is above]"


def _failed(member: str, reason: str, status: str = "failed") -> Result:
    return Result("failed", f"Called {member}: {status}", reason=reason)
