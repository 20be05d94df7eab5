"""What the fleet screen knows of each session, derived from its events (no Textual here).

A session is in one of three groups — *Needs you* (a question waits, a working session is
*stalled?*, or its process is *gone* without its end), *Working* (a task runs) and *Done*
(nothing runs: it waits for a task, ended, or can no longer be reached) — and sorted within its
group by how long it has been there, the longest first.

Stalled? (`hear`): a session in a task, with no question open, whose door has sent no new frame
and no heartbeat for more than three heartbeat periods. Gone (`lost`): its process is gone
(`connect(..., dead=True)`, the one path for a record's check and a host's discovery alike) and
it never said its end (`capsule-closed`, `SessionEnded`, a `S` from this screen). Either stays
under Needs you until it clears (a frame or heartbeat heard; nothing clears a death) or the
person puts it aside (`d`; `r` resuming a dead session does too): docs/fleet.md.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Set
from dataclasses import dataclass, field
from typing import Literal

from tui.core.cost import Ledger, Spend
from tui.core.events import vocabulary as ev

Group = Literal["needs", "working", "done"]
HEARTBEAT = 15.0  # seconds between a door's heartbeats (Murmur's; murmur-tui's door's too)
STALL_BEATS = 3  # heartbeat periods of silence that make a working session stalled?
GROUPS: tuple[tuple[Group, str], ...] = (
    ("needs", "Needs you"), ("working", "Working"), ("done", "Done"))


@dataclass
class RemoteQuestion:
    task_id: str | None
    request_id: str
    prompt: str
    asked_at: float
    before_restart: bool = False  # asked again after a restart (the door's status says so)
    number: int = 1  # the how-manieth question of its task: a question asked again is new

    def key(self, session_id: str) -> tuple[str, str, str, int]:
        """Which question this is, whatever the number of frames that report it: a replay
        of the session's stream (a fleet screen opened again) reports the same key."""
        return session_id, self.task_id or "", self.prompt, self.number


@dataclass(frozen=True)
class OpenCall:
    """An outstanding `call-member` call of this session: to `member`, since `started`
    (Unix seconds, the session's own clock when its event said)."""

    call_id: str
    task_id: str
    member: str
    started: float


@dataclass
class FleetSession:
    """One row of the fleet: a session reached over its door."""

    session_id: str
    url: str
    host: str = ""  # the host it runs on ("": this machine): tui/core/hosts/status.py
    origin: str = "found"  # found (a running record) | launched (from this screen)
    resumes: str = ""  # the session that died, which this one resumes (`r`)
    name: str = ""  # the session's name (`launch --name`, `R`): docs/fleet.md, "Names"
    capsule: str = ""
    version: str = ""
    model: str = ""
    task: str = ""  # the running (or last) task's text
    task_id: str | None = None
    question: RemoteQuestion | None = None
    in_task: bool = False
    exit_status: str | None = None  # the session ended
    last_task_status: str | None = None
    connection: str = "connecting"  # connecting | live | reconnecting | closed | gone | no door
    why_gone: str = ""
    dead: bool = False  # its process is gone: it stays gone, whatever its watcher says next
    tokens_in: int = 0
    tokens_out: int = 0
    tool_calls: int = 0
    started_tasks: set[str] = field(default_factory=set)  # every task it ran (host totals)
    # a turn that ended with no call told: a door that tells no usage (Murmur's, its trace
    # not on this machine) — the row's tokens are unknown, not 0, until a call is told
    usage_told: bool = False
    untold_turns: int = 0
    _in_turn: bool = False
    delegations: list[str] = field(default_factory=list)  # peers this session asked
    # tasks sent from this screen: those the door holds and has not started, and those it
    # rejected (id, why) — a rejected task never runs, so the row keeps saying so
    queued: list[str] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)
    since: float = field(default_factory=time.monotonic)  # entered its group then
    # a formation's member (its running record, else its session_start), a delegated child
    formation_id: str | None = None
    member: str = ""
    entry: bool = False
    spawned_by: str | None = None
    started_at: str = ""  # the record's RFC 3339 start: members never called, in this order
    calls: dict[str, OpenCall] = field(default_factory=dict)  # outstanding, by call id
    first_called: dict[str, float] = field(default_factory=dict)  # member → first call (Unix s)
    # the member that sent the running task with call-member, and when it started (Unix s):
    # the edge the caller's own events would show, for a caller with no door (a headless entry)
    sent_by: tuple[str, float] | None = None
    first_sent: float | None = None  # when a member's task first started here (call order)
    ledger: Ledger = field(default_factory=lambda: Ledger(per_session=False))  # its cost
    # stalls and deaths: docs/fleet.md, "Stalls and deaths"
    heard: float | None = None  # its door last heard: a new frame or a heartbeat (monotonic)
    heartbeat: float = HEARTBEAT  # its door's heartbeat period, as the fleet was told
    stalled: bool = False  # working, and silent past STALL_BEATS heartbeats
    closed: bool = False  # it said its end: capsule-closed, or its record removed at its end
    stopping: bool = False  # stopped from this screen (`S`): its end is no surprise
    seen_running: bool = False  # this screen saw it run: its death is told, not just shown
    aside_gone: bool = False  # its death put aside (`d`, or resumed with `r`): under Done
    aside_stall: float | None = None  # the silence (its `heard`) put aside with `d`
    told_gone: bool = False
    told_stall: float | None = None  # the silence (its `heard`) told of
    _group: Group = "done"
    _questions: dict[str, int] = field(default_factory=dict)  # task id → questions asked

    def apply(self, event: ev.Event, now: float | None = None) -> bool:
        """Fold one event in; True when the row's group changed (a question arrived, say).
        An event came from a new frame: the door was heard, so no stall stands."""
        self.ledger.apply(event)
        was_stalled, self.stalled = self.stalled, False
        if now is not None and self.heard is not None:
            self.heard = max(self.heard, now)
        match event:
            case ev.SessionStarted():
                self.capsule, self.version = event.capsule_name, event.capsule_version
                self.model = event.model or self.model
                self.formation_id = self.formation_id or event.formation_id
                self.member = self.member or event.formation_member or ""
                self.spawned_by = self.spawned_by or event.spawned_by
            case ev.TaskStarted():
                self.in_task, self.task, self.task_id = True, event.text, event.task_id
                self.started_tasks.add(event.task_id)
                self.sent_by = (event.caller_member, event.ts_ms / 1000 if event.ts_ms
                                else time.time()) if event.caller_member else None
                if self.sent_by is not None and self.first_sent is None:
                    self.first_sent = self.sent_by[1]
                self._unqueue(event.task_id)
            case ev.MemberCallStarted():
                started = event.ts_ms / 1000 if event.ts_ms else time.time()
                self.calls[event.call_id] = OpenCall(event.call_id, event.task_id,
                                                       event.member, started)
                self.first_called.setdefault(event.member, started)
            case ev.MemberCallEnded():
                self.calls.pop(event.call_id, None)
            case ev.InputRequested():
                number = self._questions[event.task_id or ""] = \
                    self._questions.get(event.task_id or "", 0) + 1
                self.question = RemoteQuestion(event.task_id, event.request_id, event.prompt,
                                               now if now is not None else time.monotonic(),
                                               before_restart=event.before_restart,
                                               number=number)
            case ev.InputAnswered():
                if self.question is not None and self.question.request_id == event.request_id:
                    self.question = None
            case ev.TurnStarted():
                self.untold_turns += self._in_turn
                self._in_turn = True
            case ev.TurnCompleted():
                self.usage_told, self._in_turn = True, False
                self.tokens_in += event.input_tokens
                self.tokens_out += event.output_tokens or 0
            case ev.ToolCallFinished():
                self.tool_calls += 1
            case ev.Delegated():
                self.delegations.append(event.peer_url)
                return True
            case ev.TaskEnded():
                self.untold_turns += self._in_turn
                self.in_task, self.question, self._in_turn = False, None, False
                self.calls = {k: c for k, c in self.calls.items() if c.task_id != event.task_id}
                if event.task_id == self.task_id:
                    self.sent_by = None
                self.last_task_status = event.exit_status
                self._unqueue(event.task_id)  # canceled before it started, say
            case ev.SessionEnded():
                self.in_task, self.question, self.calls = False, None, {}
                self.sent_by = None
                self.exit_status = event.exit_status
            case _:
                return self.regroup(now) if was_stalled else False
        return self.regroup(now)

    @property
    def tokens_known(self) -> bool:
        """False while every turn it ended told no call (a door that tells no usage)."""
        return self.usage_told or not self.untold_turns

    def sent(self, task_id: str, rejected: str | None, queued: bool) -> None:
        """A task sent from this screen, as the door answered: `rejected` (why) or taken;
        `queued` when it waits behind the running task."""
        if rejected is not None:
            self.rejected.append((task_id, rejected))
        elif queued and task_id != self.task_id:
            self.queued.append(task_id)

    def _unqueue(self, task_id: str) -> None:
        if task_id in self.queued:
            self.queued.remove(task_id)

    @property
    def sending(self) -> str:
        """What became of the tasks sent from here, in a few words (`1 queued · 2 rejected:
        capsule is busy`); empty when none is queued or rejected."""
        said = [f"{len(self.queued)} queued"] if self.queued else []
        if self.rejected:
            said.append(f"{len(self.rejected)} rejected: {self.rejected[-1][1]}")
        return " · ".join(said)

    def connect(self, state: str, why: str = "", *, dead: bool = False, ended: bool = False,
                now: float | None = None) -> bool:
        """The door's connection as the watcher, the records' check or a host's discovery
        found it (`dead`: the process is gone; `ended`: after saying its end, as a launcher
        removing its record does); True when the row's group changed. A session whose process
        is gone stays gone: a watcher still retrying its door never brings it back. A death
        with no end said is *gone* under Needs you (`lost`)."""
        if self.dead:
            return False
        if state == "gone" and (self.connection != "gone" or dead):
            self.why_gone = why
        if state in ("live", NO_DOOR):
            self.seen_running = True
        self.closed = self.closed or state == "closed" or ended
        self.connection, self.dead = state, dead
        if dead:
            self.stalled = False
        return self.regroup(now)

    def hear(self, heard: float | None, now: float, heartbeat: float = HEARTBEAT) -> bool:
        """Its door last heard at `heard` (a new frame or a heartbeat; None: not yet), the
        clock at `now`, its heartbeat period `heartbeat`: the stall rule. True when the row's
        group changed; a stalled row counts its wait from the last thing heard."""
        if heard is not None:
            self.heard = heard if self.heard is None else max(self.heard, heard)
        self.heartbeat = heartbeat
        self.stalled = (self.heard is not None and self.in_task and self.question is None and
                        self.exit_status is None and not self.dead and not self.closed and
                        now - self.heard > STALL_BEATS * heartbeat)
        changed = self.regroup(now)
        if changed and self.stalled and self.heard is not None and self._group == "needs":
            self.since = self.heard
        return changed

    @property
    def lost(self) -> bool:
        """Its process is gone and it never said its end: it died (killed, crashed, its
        machine stopped) — or nothing tells its end (a host no longer listing it)."""
        return self.dead and self.exit_status is None and not self.closed and not self.stopping

    def put_aside(self, now: float | None = None) -> bool:
        """`d`: the death or the stall seen to — the row leaves Needs you (a death for good;
        a stall until the door, heard again, falls silent again). False: nothing to put
        aside."""
        if self.lost and not self.aside_gone:
            self.aside_gone = True
        elif self.stalled and self.aside_stall != self.heard:
            self.aside_stall = self.heard
        else:
            return False
        self.regroup(now)
        return True

    def regroup(self, now: float | None = None) -> bool:
        group = self.group
        if group == self._group:
            return False
        self._group = group
        self.since = now if now is not None else time.monotonic()
        return True

    @property
    def group(self) -> Group:
        if self.exit_status is not None:
            return "done"
        if self.dead:
            return "needs" if self.lost and not self.aside_gone else "done"
        if self.stalled and self.aside_stall != self.heard:
            return "needs"
        if self.connection == "gone":
            return "done"
        if self.question is not None:
            return "needs"
        return "working" if self.in_task else "done"

    @property
    def status(self) -> str:
        """The row's state in a few words."""
        if self.connection == "gone" and not (self.stalled and not self.dead):
            return f"gone: {self.why_gone}" if self.why_gone else "gone"
        if self.exit_status is not None:
            return f"ended {self.exit_status}"
        if self.stalled:
            return "stalled?"
        if self.connection == "reconnecting":
            return "reconnecting…"
        if self.connection == "connecting":
            return "connecting…"
        if self.connection == NO_DOOR:
            return "running · no door"
        if self.question is not None:
            return "asks"
        if self.in_task:
            return "working"
        if self.last_task_status is not None:
            return f"idle · last {self.last_task_status}"
        return "idle"


NO_DOOR = "no door"  # a live record with no url: its process is all there is to check


def no_door(session: FleetSession) -> bool:
    """A session whose record names no door (a headless launch without --serve): running, and
    nothing more is known of it. True when its row changed."""
    if session.connection == NO_DOOR or session.dead:
        return False
    session.connect(NO_DOOR)
    return True


def records_gone(sessions: Mapping[str, FleetSession], listed: Set[str]) -> bool:
    """A session with no door whose record went away ended (its launcher removes the record
    at its end): nothing else would say so. True when a row changed."""
    went = [s for s in sessions.values() if s.connection == NO_DOOR and
            s.session_id not in listed]
    for session in went:
        session.connect("gone", "no record", dead=True, ended=True)
    return bool(went)


@dataclass(frozen=True)
class Totals:
    sessions: int
    needs: int
    working: int
    tokens_in: int
    tokens_out: int
    tool_calls: int


def totals(sessions: list[FleetSession]) -> Totals:
    return Totals(len(sessions), sum(s.group == "needs" for s in sessions),
                  sum(s.group == "working" for s in sessions),
                  sum(s.tokens_in for s in sessions), sum(s.tokens_out for s in sessions),
                  sum(s.tool_calls for s in sessions))


def age(seconds: float) -> str:
    """`4 s`, `12 min`, `3 h` — how long, in the unit a person reads at a glance."""
    if seconds < 60:
        return f"{int(seconds)} s"
    if seconds < 3600:
        return f"{int(seconds // 60)} min"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h"
    return f"{int(seconds // 86400)} d"


def spent(sessions: list[FleetSession]) -> str:
    """What the fleet's sessions cost in all (`$0.0123`, tui.core.cost); empty when one of
    them called a model that has no price — then its tokens alone are shown."""
    total = Spend()
    for session in sessions:
        total += session.ledger.session
    return total.cost
