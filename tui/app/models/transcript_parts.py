"""The parts of the transcript's model (`tui.app.models.transcript`): the session it shows,
a task's block, a turn and its lines, a call that runs. No Textual or Rich here."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

from tui.core.events.formation_wording import fold as fold_lines
from tui.core.events.wording import LineKind, Said, duration


class TaskResultView(NamedTuple):
    title: str
    body: str  # a failure's reason; empty when the task ended ok


@dataclass
class SessionView:
    """What the transcript's top line says: the session (the first one shown; a follow-up
    session in the same conversation is named on the block it starts)."""

    session_id: str = ""
    capsule: str = ""
    model: str = ""
    resumed_from: str | None = None
    sessions: int = 0  # sessions seen: more than one when follow-ups went on here
    formation_ended: str = ""  # a member's formation ended: the line that says so


@dataclass(eq=False)  # compared (and hashed) by identity: the widget caches per block
class TaskBlock:
    """One task: `number` counts the tasks shown, from 1; `origin` says where it came from
    (`typed`, `queued`, `from the door`, `completion of wrk_…`, …; empty when the screen
    joined after it started); `note` names the session it runs in when that session is not
    the one before it (a follow-up, or a resumed one)."""

    number: int
    task_id: str
    text: str = ""
    origin: str = ""
    note: str = ""
    result: TaskResultView | None = None
    last_turn: int = 0  # the task's newest turn index (its questions and notes go there)
    version: int = 0

    @property
    def header(self) -> str:
        return f"Task {self.number} · {self.origin}" if self.origin else f"Task {self.number}"

    def touch(self) -> None:
        self.version += 1


class Running(NamedTuple):
    """A call that runs: when it started (the event's own stamp, Unix ms; 0: unknown — or
    when the person approved it), its start line, the newest line of its live output, and
    whether it waits for the person's approval (no clock then: nothing runs)."""

    started_ms: int
    line: str
    latest: str = ""
    waiting: bool = False  # for the person's approval (`launch --approve`): it does not run yet

    def text(self, now_ms: int | None) -> str:
        if self.waiting:
            return f"{self.line} · waiting for your approval"
        clock = f" · {duration(max(0, now_ms - self.started_ms))}" \
            if now_ms is not None and self.started_ms else ""
        tail = f"  ⋯ {self.latest}" if self.latest else ""
        return f"{self.line}{clock}{tail}"


@dataclass(eq=False)  # compared (and hashed) by identity: the widget caches per turn
class TurnModel:
    key: tuple[int, int]  # (task block number, turn index)
    number: int  # as shown: counted from 1 within the task
    block: TaskBlock | None = None
    thinking: str = ""
    text: str = ""
    lines: dict[str, str] = field(default_factory=dict)  # key -> line, in order
    kinds: dict[str, LineKind] = field(default_factory=dict)  # key -> what the line is
    running: dict[str, Running] = field(default_factory=dict)  # key -> a call still running
    folded: set[str] = field(default_factory=set)  # keys of long lines the screen folds
    done: bool = False
    version: int = 0  # bumped on every change: what was drawn of it is stale

    def touch(self) -> None:
        self.version += 1

    def say(self, key: str, line: Said) -> None:
        """Add the line under `key`, or replace it (a call's start by its end) in place."""
        self.lines[key] = line.text
        self.kinds[key] = line.kind
        self.touch()

    def say_after(self, anchor: str, key: str, line: Said) -> None:
        """Add the line under `key` right after the line under `anchor` (a call's answer
        under the call's own line, whatever was said since)."""
        self.say(key, line)
        if anchor in self.lines:
            order = list(self.lines)
            order.remove(key)
            order.insert(order.index(anchor) + 1, key)
            self.lines = {name: self.lines[name] for name in order}

    def run(self, key: str, running: Running) -> None:
        """The call under `key` runs (its line shows how long, ticking) or goes on."""
        self.running[key] = running
        self.say(key, Said(LineKind.RUNNING, running.text(None)))

    def stop(self, key: str | None = None) -> None:
        """The call under `key` (every call: None) no longer runs: its clock stops."""
        if key is None:
            self.running.clear()
        else:
            self.running.pop(key, None)

    def entries(self, now_ms: int | None = None, fold: bool = False
                ) -> Iterator[tuple[LineKind, str]]:
        """Each line and its kind; with `now_ms` (Unix ms) a running call says how long it
        has run; with `fold` a long line that folds (a member's answer) shows its first lines
        and how many more there are."""
        for key, text in self.lines.items():
            running = self.running.get(key) if now_ms is not None else None
            if running is not None:
                text = running.text(now_ms)
            elif fold and key in self.folded:
                text = fold_lines(text)
            yield self.kinds.get(key, LineKind.NOTE), text
