"""What the transcript holds, apart from how it is drawn: the session, and each task it took
as a block of its own — a header naming where the task came from, its text as given, its model
turns (thinking, answer, a line per tool call, command and question) numbered from 1 within
the task, and the task's own end line — plus the window of recent turns the widget draws. No
Textual or Rich here: the model is built from events alone, so the same events give the same
blocks whoever emits them (a session here, or one reached through its door), and
`tui.app.models.transcript_text` writes it as plain lines and as Markdown.

A long session must not grow without bound: turn data is kept for the last `MODEL_TURNS`
turns (and blocks for the last `MODEL_TURNS` tasks), and while the reader follows the output
only the last `WINDOW` turns are in the window; `load_older` brings earlier ones back
`LOAD_OLDER` at a time. The whole session is in the conversation record and the trace.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterator
from dataclasses import dataclass

from tui.app.models.transcript_calls import FormationLines
from tui.app.models.transcript_parts import (
    Running,
    SessionView,
    TaskBlock,
    TaskResultView,
    TurnModel,
)
from tui.core.cost import Ledger
from tui.core.events import vocabulary as ev
from tui.core.events.wording import (
    Form,
    denied,
    latest_line,
    moved,
    moved_ended,
    said,
    task_ended,
    tool_started,
)

__all__ = ["LOAD_OLDER", "MODEL_TURNS", "WINDOW", "Running", "SessionView", "TaskBlock",
           "TaskResultView", "TranscriptModel", "TurnModel"]

WINDOW = 40  # turns whose lines are kept while following the output
MODEL_TURNS = 2000  # turns whose text is kept in memory (and task blocks)
LOAD_OLDER = 10  # turns brought back per step when scrolling to the top


@dataclass
class _Moved:
    """A shell call whose command moved to the background: its line, until the work ends."""

    model: TurnModel
    key: str
    detached: ev.ShellDetached


class TranscriptModel:
    def __init__(self) -> None:
        self.session = SessionView()
        self.blocks: deque[TaskBlock] = deque(maxlen=MODEL_TURNS)
        self.turns: deque[TurnModel] = deque(maxlen=MODEL_TURNS)
        self.dropped = 0  # turns no longer in the model (older than MODEL_TURNS)
        self.window: deque[TurnModel] = deque()  # the turns the widget draws
        self._by_task: dict[str, TaskBlock] = {}  # a task id -> its newest block
        self._session_note = ""  # for the next block: the session it runs in, when new
        self._first_in_session = True
        self._resumed_from: str | None = None  # the running session went on from this one
        self._completions: dict[str, str] = {}  # a completion task id -> its work id
        self._lost: list[str] = []  # work ids lost, for the next `detached_lost` task
        self._moved: dict[str, _Moved] = {}  # running background work's id -> its call's line
        self._denied: set[str] = set()  # denied calls' line keys, until their finish comes
        self.ledger = Ledger()  # what each task's calls cost, for its end line
        self._formation = FormationLines(self)  # member calls and delegations

    # -- blocks -------------------------------------------------------------------------------
    @property
    def block(self) -> TaskBlock | None:
        """The newest task."""
        return self.blocks[-1] if self.blocks else None

    @property
    def task_text(self) -> str:
        block = self.block
        return block.text if block is not None else ""

    @property
    def result(self) -> TaskResultView | None:
        """The newest task's end, once it ended."""
        block = self.block
        return block.result if block is not None else None

    def _new_block(self, task_id: str, text: str = "", origin: str = "") -> TaskBlock:
        number = self.blocks[-1].number + 1 if self.blocks else 1
        block = TaskBlock(number, task_id, text, origin, self._session_note)
        self._session_note = ""
        if len(self.blocks) == self.blocks.maxlen:
            gone = self.blocks[0]
            if self._by_task.get(gone.task_id) is gone:
                del self._by_task[gone.task_id]
        self.blocks.append(block)
        self._by_task[task_id] = block
        return block

    def _block_of(self, task_id: str) -> TaskBlock:
        """The task's block; one without a header's origin when the screen joined after the
        task started."""
        block = self._by_task.get(task_id)
        return block if block is not None else self._new_block(task_id)

    def visible(self) -> Iterator[TaskBlock | TurnModel]:
        """The window laid out: each block's header, the window's turns under it, and a
        block's end (the block itself again, once it ended) after its turns. The block of the
        window's first turn is the first shown (earlier blocks are older than the window)."""
        return self._layout(self.window, bool(self.window))

    def everything(self) -> Iterator[TaskBlock | TurnModel]:
        """Every block and turn the model keeps, laid out as `visible` lays out the window."""
        return self._layout(self.turns, self.dropped > 0)

    def _layout(self, turns: deque[TurnModel], cut: bool) -> Iterator[TaskBlock | TurnModel]:
        """`turns` under their blocks; `cut`: blocks before the first turn's are left out."""
        under: dict[int, list[TurnModel]] = {}
        for model in turns:
            if model.block is not None:
                under.setdefault(model.block.number, []).append(model)
        start = turns[0].block if cut and turns else None
        first = start.number if start is not None else 0
        blocks = [block for block in self.blocks if block.number >= first]
        if start is not None and (not blocks or blocks[0] is not start):
            blocks.insert(0, start)  # its block let go before its turns: still drawn
        for block in blocks:
            yield block
            yield from under.get(block.number, ())
            if block.result is not None:
                yield block

    # -- turns --------------------------------------------------------------------------------
    def turn(self, task_id: str, turn: int) -> TurnModel:
        """The turn's model, made (and put in the window) when it is new."""
        block = self._block_of(task_id)
        key = (block.number, turn)
        if self.turns and self.turns[-1].key == key:
            return self.turns[-1]
        for model in reversed(self.turns):
            if model.key == key:
                return model
        if len(self.turns) == self.turns.maxlen:
            self.dropped += 1
        model = TurnModel(key, turn + 1, block)
        block.last_turn = max(block.last_turn, turn)
        self.turns.append(model)
        self.window.append(model)
        return model

    def current_turn(self, task_id: str) -> int:
        block = self._by_task.get(task_id)
        return block.last_turn if block is not None else 0

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

    @property
    def running(self) -> bool:
        """A call in the window runs (its line's clock ticks)."""
        return any(model.running for model in self.window)

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
            case ev.SessionStarted():
                self._session(event)
            case ev.TaskStarted():
                self._task(event)
            case ev.ShellCompleted() | ev.ShellAbandoned():
                if isinstance(event, ev.ShellCompleted) and event.completion_task_id:
                    self._completions[event.completion_task_id] = event.work_id
                line = self._moved.pop(event.work_id, None)
                if line is None:
                    return False
                line.model.say(line.key, moved_ended(line.detached, event))
            case ev.ShellDetached():  # the call's line: moved, then its tail, then its end
                key = _call_key(event.call_id, "", event.turn)
                model = self.turn(event.task_id, event.turn)
                model.stop(key)
                self._moved[event.work_id] = _Moved(model, key, event)
                model.say(key, moved(event))
            case ev.ShellLost():
                self._lost.append(event.work_id)
                return False
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
                self.turn(event.task_id, event.turn).run(
                    key, Running(event.ts_ms, tool_started(event, Form.SCREEN)))
            case ev.ToolCallFinished() | ev.ToolCallRestored():
                key = _call_key(event.call_id, event.tool_name, event.turn)
                model = self.turn(event.task_id, event.turn)
                model.stop(key)
                if key in self._denied or any(
                        line.model is model and line.key == key for line in self._moved.values()):
                    self._denied.discard(key)
                    return False  # its line says where the command went, or that it never ran
                self._say(model, key, event)
            case ev.ShellOutput() | ev.ToolProgress():  # the running call's line: its newest
                key = _call_key(event.call_id, "", event.turn)
                model = self.turn(event.task_id, event.turn)
                latest = latest_line(event, 60)
                running = model.running.get(key)
                if running is None or not latest:
                    return False
                model.run(key, running._replace(latest=latest))
            case ev.CallDenied():  # the call's own line says so (no finish: it never ran)
                key = _call_key(event.call_id, event.tool_name, event.turn)
                model = self.turn(event.task_id, event.turn)
                running = model.running.pop(key, None)
                if running is not None:
                    self._denied.add(key)
                    model.say(key, denied(event, running.line))
                else:
                    self._say(model, f"deny{event.seq}", event)
            case ev.ShellExecuted() if event.call_id:
                key = _call_key(event.call_id, "", event.turn)
                model = self.turn(event.task_id, event.turn)
                model.stop(key)
                self._say(model, key, event)
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
                self._ended(event)
            case ev.MemberCallStarted() | ev.MemberCallBusy() | ev.MemberCallEnded() | \
                    ev.TaskContinued() | ev.DelegationStarted() | ev.DelegationEnded() | \
                    ev.FormationEnded():
                return self._formation.take(event)
            case _:
                return False
        return True

    def _session(self, event: ev.SessionStarted) -> None:
        session = self.session
        if session.session_id and event.session_id == session.session_id:
            # the same session told again (an attached one's own start, after the one made
            # from its door's card): what it adds is taken, it is not another session
            session.resumed_from = event.resumed_from or session.resumed_from
            session.model = event.model or session.model
            self._resumed_from = event.resumed_from or self._resumed_from
            return
        session.sessions += 1
        self._first_in_session, self._resumed_from = True, event.resumed_from
        if not session.session_id:
            session.session_id, session.resumed_from = event.session_id, event.resumed_from
            session.capsule = f"{event.capsule_name} {event.capsule_version}".strip()
            session.model = event.model
        elif event.session_id != session.session_id:
            went_on = f", which goes on from {event.resumed_from}" if event.resumed_from else ""
            self._session_note = f"in session {event.session_id}{went_on}"

    def _task(self, event: ev.TaskStarted) -> None:
        first, self._first_in_session = self._first_in_session, False
        self._new_block(event.task_id, event.text.strip() or "(no task text)",
                        self._origin(event, first))

    def _origin(self, event: ev.TaskStarted, first: bool) -> str:
        """Where the task came from, in the header's words."""
        if event.caller_member:  # a formation member's `call-member`
            return f"from {event.caller_member}"
        if event.origin == "peer":  # another capsule's, through the door (its first or not)
            return "from a peer"
        if event.via == "door":  # a session's first task, sent to its door
            return "from the door"
        if event.via is not None:
            return event.via  # typed on this screen's prompt: at once, or queued
        match event.source:
            case "a2a":
                return "from the door"
            case "detached_shell":
                work = self._completions.pop(event.task_id, "")
                return f"completion of {work}" if work else "completion of background work"
            case "detached_lost":
                lost, self._lost = self._lost, []
                return f"background work lost: {', '.join(lost)}" if lost else \
                    "background work lost"
        if first and self._resumed_from:
            return f"resumed from {self._resumed_from}"
        return "given at launch"

    def _ended(self, event: ev.TaskEnded) -> None:
        block = self._block_of(event.task_id)
        ok = event.exit_status == "ok"
        cost = self.ledger.task(event.task_id).cost
        block.result = TaskResultView(task_ended(event, Form.SCREEN, cost),
                                      "" if ok else event.result)
        block.touch()
        for model in self.window:  # tasks run one at a time: nothing before it runs on
            if model.running or not model.done:
                model.stop()
                model.done = True
                model.touch()

    def awaiting(self, calls: Collection[str], now_ms: int) -> bool:
        """The calls (id, or tool name) waiting for the person's approval now: their lines say
        so, without a clock; a call that stops waiting counts its run from `now_ms` (Unix ms).
        True when a line changed."""
        changed = False
        for model in self.window:
            for key, running in list(model.running.items()):
                waits = key.removeprefix("call:").rpartition(":")[0] in calls
                if waits != running.waiting:
                    started = running.started_ms if waits else now_ms
                    model.run(key, running._replace(waiting=waits, started_ms=started))
                    changed = True
        return changed

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
