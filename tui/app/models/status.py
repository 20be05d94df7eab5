"""What the status bar shows, derived from the event stream (no Textual here)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields

from tui.app.models.fitting import fit_parts
from tui.app.models.waiting_on import WaitingOn
from tui.core.cost import Ledger
from tui.core.events import vocabulary as ev
from tui.core.events.stream import monotonic_at

CHARS_PER_TOKEN = 4.0  # what streamed text is estimated at until the turn's count arrives


@dataclass
class SessionState:
    """busy / asking / idle / faulted / finished, and the numbers beside it."""

    capsule: str = ""
    version: str = ""
    model: str = ""
    session_id: str = ""
    turn: int = 0  # 1-based turn in progress (or last)
    max_turns: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    streamed_chars: int = 0  # the turn in flight's answer so far: its tokens, estimated
    context_tokens: int = 0  # what the context holds: the last request's, or a compaction's
    context_max: int | None = None
    started: float | None = None
    ended: float | None = None
    # the clocks count from the session's own stamps (an attached session: it began before
    # this screen heard of it), not from when an event arrived (a local one, a replay)
    session_clock: bool = False
    exit_status: str | None = None
    result: str = ""
    questions: int = 0
    faults: int = 0
    retries: int = 0
    retry_until: float | None = None  # monotonic time the pending retry starts
    retry_why: str = ""
    failed: bool = False  # a task attempt failed and the session has not ended yet
    running_tools: set[str] = field(default_factory=set)
    approvals: tuple[tuple[str, str], ...] = ()  # calls waiting for approval: (call, tool)
    approval_since: float | None = None  # monotonic time the oldest waiting one arrived
    in_task: bool = False  # a task runs (between its task_start and task_end)
    tasks_ended: int = 0
    ledger: Ledger = field(default_factory=Ledger)  # what the calls cost (tui.core.cost)
    waiting_on: WaitingOn = field(default_factory=WaitingOn)  # member calls, delegations out
    # what each earlier session on this screen spent (`spent`), by id: kept across follow-ups
    spent_by_session: dict[str, str] = field(default_factory=dict)

    def restart(self) -> None:
        """A follow-up session takes the screen: every number starts again (what the ones
        before spent is kept, for the lines printed at quit)."""
        kept = dict(self.spent_by_session)
        if self.session_id:
            kept[self.session_id] = self.spent()
        fresh = SessionState(session_clock=self.session_clock)
        for item in fields(self):
            setattr(self, item.name, getattr(fresh, item.name))
        self.spent_by_session = kept

    def spent(self, session_id: str | None = None) -> str:
        """`1234 in / 56 out tokens · $0.0123` for the session on screen, or for an earlier one
        this screen ran (`session_id`; "" when it spent nothing known); the cost only when
        every call had a price."""
        if session_id is not None and session_id != self.session_id:
            return self.spent_by_session.get(session_id, "")
        cost = self.ledger.session.cost
        return (f"{self.tokens_in} in / {self.tokens_out} out tokens"
                + (f" · {cost}" if cost else ""))

    @property
    def sleeping(self) -> bool:
        """The session finished a task and waits for the next one (`after_task: sleep`)."""
        return self.exit_status is None and self.tasks_ended > 0 and not self.in_task

    @property
    def kind(self) -> str:
        """The state in one word (the status bar's style): busy, asking, approval (a call
        waits for the person's approval), retrying, faulted, waiting (for the next task),
        finished or idle."""
        if self.exit_status is not None:
            return "finished"
        if self.questions:
            return "asking"
        if self.approvals:
            return "approval"
        if self.retry_until is not None and self.retry_until > time.monotonic():
            return "retrying"
        if self.failed:
            return "faulted"
        if self.sleeping:
            return "waiting"
        if self.waiting_on.waiting:
            return "calls"
        return "busy" if self.started is not None else "idle"

    @property
    def status(self) -> str:
        """The kind, in words; a pending retry says how long it has to wait."""
        kind = self.kind
        if kind == "retrying" and self.retry_until is not None:
            wait = max(0.0, self.retry_until - time.monotonic())
            return f"retrying in {wait:.0f} s ({self.retry_why})"
        if kind == "waiting":
            return "waiting for the next task (type it below)"
        if kind == "approval":
            tools = ", ".join(dict.fromkeys(tool for _, tool in self.approvals))
            waited = time.monotonic() - (self.approval_since or time.monotonic())
            return f"waiting for your approval: {tools} · {_clock(waited)}"
        if kind == "calls":
            return self.waiting_on.text(time.monotonic())
        return kind

    def waiting_for_approval(self, calls: tuple[tuple[str, str], ...]) -> None:
        """The calls waiting for the person's approval now (none: nothing waits): nothing runs
        meanwhile, and the status says so with how long it has waited."""
        if calls and not self.approvals:
            self.approval_since = time.monotonic()
        elif not calls:
            self.approval_since = None
        self.approvals = calls

    @property
    def elapsed(self) -> float:
        if self.started is None:
            return 0.0
        return (self.ended or time.monotonic()) - self.started

    @property
    def context_share(self) -> float | None:
        """What the context holds, as a share of `context.max_tokens`: the last request's
        input tokens, or — after a compaction — what the compaction left."""
        if not self.context_max:
            return None
        return self.context_tokens / self.context_max

    @property
    def context_text(self) -> str | None:
        """`context 42%`; `context full` when a request's own input filled the window or
        went past it (a share over 100 % says nothing a person can act on). Rounded down,
        so `100%` is never shown for a context that still has room."""
        share = self.context_share
        if share is None:
            return None
        return "context full" if share >= 1 else f"context {int(share * 100)}%"

    def _at(self, event: ev.Event) -> float:
        return monotonic_at(event.ts_ms) if self.session_clock else time.monotonic()

    def apply(self, event: ev.Event) -> None:
        self.waiting_on.apply(event, self._at)
        match event:
            case ev.SessionStarted():
                if self.started is not None and event.session_id != self.session_id:
                    self.restart()  # a follow-up session: its own numbers (the same one told
                    # again — an attached session's own start, after the card's — is not)
                self.capsule, self.version = event.capsule_name, event.capsule_version
                self.model, self.session_id = event.model, event.session_id
                self.max_turns = event.max_turns
                self.context_max = event.context_max_tokens
                self.started = self._at(event)
            case ev.TurnStarted():
                self.streamed_chars = 0
                self.turn = event.turn + 1
                self.max_turns = event.max_turns
                self.context_tokens = event.input_tokens
            case ev.Compacted():  # the context now holds the replacement, not what was sent
                self.context_tokens = event.tokens_after
            case ev.TurnCompleted():
                self.retry_until = None
                self.streamed_chars = 0  # the real count replaces the estimate
                self.tokens_in += event.input_tokens
                self.tokens_out += event.output_tokens or 0
            case ev.ToolCallStarted():
                self.running_tools.add(event.call_id or event.tool_name)
                self.turn = max(self.turn, event.turn + 1)  # a rebuilt turn has no TurnStarted
            case ev.ToolCallFinished():
                self.running_tools.discard(event.call_id or event.tool_name)
            case ev.HookFault():
                self.faults += 1
            case ev.TaskFailed():
                self.failed = True
            case ev.TaskReopened():
                self.failed = False
            case ev.InferenceRetry():
                self.retries += 1
                self.streamed_chars = 0  # the partial answer is discarded
                self.retry_until = time.monotonic() + event.delay_ms / 1000
                self.retry_why = str(event.status) if event.status else "connection broke"
            case ev.TextDelta() | ev.ThinkingDelta():
                self.retry_until = None
                self.streamed_chars += len(event.text)
            case ev.ToolCallComposing():
                self.retry_until = None
            case ev.TaskStarted():
                self.in_task = True
                self.failed = False
            case ev.TaskEnded():
                self.result = event.result
                self.in_task = False
                self.tasks_ended += 1
            case ev.SessionEnded():
                self.exit_status = event.exit_status
                self.ended = self._at(event)
        self.ledger.apply(event)  # after a follow-up's restart: it reads the prices anew

    @property
    def output_tokens(self) -> str:
        """Output tokens so far. While an answer streams they count up, estimated from its
        characters (about four a token) and marked `~`; the turn's real count replaces the
        estimate when it completes."""
        if not self.streamed_chars:
            return _k(self.tokens_out)
        return "~" + _k(self.tokens_out + max(1, round(self.streamed_chars / CHARS_PER_TOKEN)))

    def line(self, width: int | None = None) -> str:
        """The status bar's text; in `width` columns, closer together, then without its
        rightmost parts, when it must be (tui/app/models/fitting.py)."""
        parts = [self.status if self.exit_status is None
                 else f"finished {self.exit_status}"]
        if self.questions:
            parts[0] += f" ({self.questions} question{'s' if self.questions > 1 else ''})"
        if self.max_turns:
            parts.append(f"turn {self.turn}/{self.max_turns}")
        parts.append(f"{_k(self.tokens_in)} in / {self.output_tokens} out")
        if self.ledger.session.cost:  # a model with no price: its tokens alone
            parts.append(self.ledger.session.cost)
        context = self.context_text
        if context is not None:
            parts.append(context)
        parts.append(_clock(self.elapsed))
        if self.faults:
            parts.append(f"{self.faults} hook fault{'s' if self.faults > 1 else ''}")
        if self.retries:
            parts.append(f"{self.retries} {'retry' if self.retries == 1 else 'retries'}")
        return fit_parts(parts, width)  # the state always; the rightmost parts go first


def _k(count: int) -> str:
    return f"{count / 1000:.1f}k" if count >= 10_000 else str(count)


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
