"""What the transcript holds, apart from how it is drawn: the task, each model turn (its
thinking, its answer, a line per tool call, command and question) and the task's result, plus
the window of recent turns the widget draws. No Textual or Rich here: the model is built and
tested from events alone, and `tui.app.widgets.transcript` draws it.

A long session must not grow without bound: turn data is kept for the last `MODEL_TURNS`
turns, and while the reader follows the output only the last `WINDOW` turns are in the
window; `load_older` brings earlier ones back `LOAD_OLDER` at a time. The whole session is in
the conversation record and the trace.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NamedTuple

from tui.core.cost import Ledger
from tui.core.events import vocabulary as ev
from tui.core.events.wording import (
    Form,
    LineKind,
    Said,
    denied,
    latest_line,
    moved,
    moved_ended,
    said,
    task_ended,
    tool_started,
)

WINDOW = 40  # turns whose lines are kept while following the output
MODEL_TURNS = 2000  # turns whose text is kept in memory
LOAD_OLDER = 10  # turns brought back per step when scrolling to the top


@dataclass(eq=False)  # compared (and hashed) by identity: the widget caches per turn
class TurnModel:
    key: tuple[str, int]  # (task id, turn index)
    number: int  # as shown: counted from 1
    thinking: str = ""
    text: str = ""
    lines: dict[str, str] = field(default_factory=dict)  # key -> line, in order
    kinds: dict[str, LineKind] = field(default_factory=dict)  # key -> what the line is
    done: bool = False
    version: int = 0  # bumped on every change: what was drawn of it is stale

    def touch(self) -> None:
        self.version += 1

    def say(self, key: str, line: Said) -> None:
        """Add the line under `key`, or replace it (a call's start by its end) in place."""
        self.lines[key] = line.text
        self.kinds[key] = line.kind
        self.touch()

    def entries(self) -> Iterator[tuple[LineKind, str]]:
        for key, text in self.lines.items():
            yield self.kinds.get(key, LineKind.NOTE), text


class TaskResultView(NamedTuple):
    title: str
    body: str  # a failure's reason; empty when the task ended ok


@dataclass
class _Moved:
    """A shell call whose command moved to the background: its line, until the work ends."""

    model: TurnModel
    key: str
    detached: ev.ShellDetached


class TranscriptModel:
    def __init__(self) -> None:
        self.turns: deque[TurnModel] = deque(maxlen=MODEL_TURNS)
        self.dropped = 0  # turns no longer in the model (older than MODEL_TURNS)
        self.task_text = ""
        self.result: TaskResultView | None = None
        self._running: dict[str, str] = {}  # a running call's line key -> its start line
        self._moved: dict[str, _Moved] = {}  # running background work's id -> its call's line
        self._denied: set[str] = set()  # denied calls' line keys, until their finish comes
        self.window: deque[TurnModel] = deque()  # the turns the widget draws
        self.ledger = Ledger()  # what each task's calls cost, for its end line

    # -- turns --------------------------------------------------------------------------------
    def turn(self, task_id: str, turn: int) -> TurnModel:
        """The turn's model, made (and put in the window) when it is new."""
        key = (task_id, turn)
        if self.turns and self.turns[-1].key == key:
            return self.turns[-1]
        for model in reversed(self.turns):
            if model.key == key:
                return model
        if len(self.turns) == self.turns.maxlen:
            self.dropped += 1
        model = TurnModel(key, turn + 1)
        self.turns.append(model)
        self.window.append(model)
        return model

    def current_turn(self, task_id: str) -> int:
        for model in reversed(self.turns):
            if model.key[0] == task_id:
                return model.key[1]
        return 0

    @property
    def hidden_older(self) -> int:
        """Turns older than the window, including those no longer kept."""
        return len(self._older()) + self.dropped

    def _older(self) -> list[TurnModel]:
        first = self.window[0] if self.window else None
        older: list[TurnModel] = []
        for model in self.turns:
            if model is first:
                break
            older.append(model)
        return older

    # -- the window ---------------------------------------------------------------------------
    def trim(self) -> list[TurnModel]:
        """While following: let finished turns beyond WINDOW leave the window; returns them."""
        gone: list[TurnModel] = []
        while len(self.window) > WINDOW and self.window[0].done:
            gone.append(self.window.popleft())
        return gone

    def load_older(self) -> list[TurnModel]:
        """Bring up to LOAD_OLDER earlier turns back into the window; returns them."""
        batch = self._older()[-LOAD_OLDER:]
        self.window.extendleft(reversed(batch))
        return batch

    # -- events -------------------------------------------------------------------------------
    def take(self, event: ev.Event) -> bool:
        """Take in one event; True when what the transcript shows changed."""
        self.ledger.apply(event)
        match event:
            case ev.TaskStarted():
                self.task_text = event.text.strip() or "(no task text)"
            case ev.TextDelta():
                model = self.turn(event.task_id, event.turn)
                model.text += event.text
                model.touch()
            case ev.ThinkingDelta():
                model = self.turn(event.task_id, event.turn)
                model.thinking += event.text
                model.touch()
            case ev.TurnStarted():
                self.turn(event.task_id, event.turn).touch()
            case ev.InferenceRetry() if event.task_id:
                model = self.turn(event.task_id, event.turn)
                model.text, model.thinking = "", ""  # the next attempt streams it again
                self._say(model, f"retry{event.seq}", event)
            case ev.TurnCompleted() if event.origin is None:
                model = self.turn(event.task_id, event.turn)
                model.done = True
                self._say(model, f"err{event.seq}", event)
                model.touch()
            case ev.ToolCallComposing():  # replaced in place by the call's start, then its end
                self._say(self.turn(event.task_id, event.turn),
                          _call_key(event.call_id, event.tool_name, event.turn), event)
            case ev.ToolCallStarted():
                key = _call_key(event.call_id, event.tool_name, event.turn)
                model = self.turn(event.task_id, event.turn)
                self._say(model, key, event)
                self._running[key] = tool_started(event, Form.SCREEN)
            case ev.ToolCallFinished() | ev.ToolCallRestored():
                key = _call_key(event.call_id, event.tool_name, event.turn)
                self._running.pop(key, None)
                model = self.turn(event.task_id, event.turn)
                if any(m.model is model and m.key == key for m in self._moved.values()) \
                        or key in self._denied:
                    self._denied.discard(key)
                    return False  # its line says where the command went, or that it never ran
                self._say(model, key, event)
            case ev.ShellDetached():  # the call's line: moved, then its tail, then its end
                key = _call_key(event.call_id, "", event.turn)
                self._running.pop(key, None)
                model = self.turn(event.task_id, event.turn)
                self._moved[event.work_id] = _Moved(model, key, event)
                model.say(key, moved(event))
            case ev.ShellCompleted() | ev.ShellAbandoned() if event.work_id in self._moved:
                line = self._moved.pop(event.work_id)
                line.model.say(line.key, moved_ended(line.detached, event))
            case ev.ShellOutput() | ev.ToolProgress():  # the running call's line: its newest
                key = _call_key(event.call_id, "", event.turn)
                latest = latest_line(event, 60)
                if key not in self._running or not latest:
                    return False
                self.turn(event.task_id, event.turn).say(
                    key, Said(LineKind.RUNNING, f"{self._running[key]}  ⋯ {latest}"))
            case ev.CallDenied():  # the call's own line says so (no finish: it never ran)
                key = _call_key(event.call_id, event.tool_name, event.turn)
                model = self.turn(event.task_id, event.turn)
                if key in self._running:
                    self._denied.add(key)
                    model.say(key, denied(event, self._running.pop(key)))
                else:
                    self._say(model, f"deny{event.seq}", event)
            case ev.ShellExecuted() if event.call_id:
                self._say(self.turn(event.task_id, event.turn),
                          _call_key(event.call_id, "", event.turn), event)
            case ev.InputRequested() if event.task_id:
                self._say(self._current(event.task_id), f"ask{event.request_id}", event)
            case ev.InputAnswered() if event.task_id:
                self._say(self._current(event.task_id), f"ans{event.request_id}", event)
            case ev.Compacted() | ev.CompactionDeclined():
                self._say(self.turn(event.task_id, event.turn), f"compact{event.seq}", event)
            case ev.TaskReopened():
                self._say(self._current(event.task_id), f"reopen{event.seq}", event)
            case ev.Delegated() if event.task_id:
                self._say(self._current(event.task_id), f"delegate{event.seq}", event)
            case ev.TaskCanceled():
                self._say(self._current(event.task_id), f"cancel{event.seq}", event)
            case ev.TaskEnded():
                ok = event.exit_status == "ok"
                self.result = TaskResultView(
                    task_ended(event, Form.SCREEN, self.ledger.task(event.task_id).cost),
                    "" if ok else event.result)
                for model in self.window:
                    model.done = True
            case _:
                return False
        return True

    def tail(self, work_id: str, latest: str) -> bool:
        """Running background work's newest output line, shown on its call's line (read from
        its log by the Background pane); True when the line changed."""
        line = self._moved.get(work_id)
        if line is None or not latest.strip():
            return False
        line.model.say(line.key, moved(line.detached, latest))
        return True

    def _current(self, task_id: str) -> TurnModel:
        return self.turn(task_id, self.current_turn(task_id))

    @staticmethod
    def _say(model: TurnModel, key: str, event: ev.Event) -> None:
        line = said(event)
        if line is not None:
            model.say(key, line)


def _call_key(call_id: str | None, tool: str, turn: int) -> str:
    return f"call:{call_id or tool}:{turn}"
