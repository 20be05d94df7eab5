"""Where the supervisor's session runs: the port the app speaks to, and the local session.

The app draws events and takes keys; what it asks of the session — run, take a task, cancel,
go on when it has ended — goes through a `SessionSource`. `LocalSource` is a session built
here and run on the app's session worker, going on in follow-up sessions (`--resume` of the
one that ended) in the same conversation; `tui.app.attach.RemoteSource` is a session running
elsewhere, reached through its door. The app never asks which one it holds."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from tui.app.attention import Attention
from tui.app.bridge import CoalescingBridge, ImmediateBridge
from tui.app.models.queue import QueuedTask, TaskQueue
from tui.app.models.status import SessionState
from tui.app.responder import QuestionDesk, ScreenResponder
from tui.core import session_index
from tui.core.cancel import CancelToken
from tui.core.errors import MurmurTuiError
from tui.core.events import vocabulary as ev
from tui.core.loop.launch import SessionResult
from tui.core.loop.session import Session

if TYPE_CHECKING:
    from tui.app.browser.requests import ResumeConversation
    from tui.core.door.serving import Serving
    from tui.core.formation.seat import Seat
    from tui.core.tools.approvals import Approver


class Taker(Protocol):
    """The prompt queue, as a source answers it."""

    def taken(self, item: QueuedTask, task_id: str) -> None:
        """The session took the queued `item` as the task `task_id`."""

    def not_taken(self, item: QueuedTask, why: str, *, head: bool = False) -> None:
        """The session could not take `item`; `head`: it had left the queue."""


class SourceHost(Protocol):
    """What a source may ask of the app that holds it (the supervisor app)."""

    @property
    def bridge(self) -> CoalescingBridge | ImmediateBridge: ...

    @property
    def state(self) -> SessionState: ...

    @property
    def responder(self) -> ScreenResponder: ...

    @property
    def desk(self) -> QuestionDesk: ...

    @property
    def attention(self) -> Attention: ...

    def notify(self, message: str, *, title: str = "", severity: Any = "information",
               timeout: float | None = None, markup: bool = True) -> None: ...

    def call_from_thread(self, callback: Callable[..., Any], *args: Any, **kwargs: Any
                         ) -> Any: ...

    def refresh_bindings(self) -> None: ...

    def run_worker(self, work: Any, *, group: str = "default") -> Any:
        """Run `work` (a coroutine) on the app's loop as a worker."""

    def run_session(self, work: Callable[[], SessionResult | None]) -> None:
        """Run `work` on the app's `session` worker (a thread)."""

    @property
    def prompts(self) -> Taker: ...

    @property
    def home(self) -> Path: ...

    @property
    def approver(self) -> Approver: ...


class SessionSource(Protocol):
    """What the app and its prompt queue ask of a session, local or remote."""

    elsewhere: bool  # it runs elsewhere: leaving the screen leaves it running, q asks nothing

    @property
    def attached(self) -> bool:
        """There is a session to give tasks to."""
        ...

    @property
    def running(self) -> bool: ...

    @property
    def starting(self) -> bool:
        """A session is being built: the queue waits for it."""
        ...

    def start(self, app: SourceHost) -> None:
        """The app is mounted: the session begins (or is connected to)."""

    def follow(self, batch: list[ev.Event]) -> None:
        """The events the screen takes, as they reach it."""

    def holds_next(self) -> bool:
        """The session already holds a task that waits to start."""
        ...

    def submit(self, item: QueuedTask) -> str | None:
        """Give the session `item`, to run under its task id; why it was refused, or None."""
        ...

    def continue_with(self, queue: TaskQueue) -> bool:
        """The session has ended and the queue has more: go on with it; True when the queue
        must wait for the person instead."""
        ...

    def cancel(self) -> None:
        """Cancel what runs (Esc Esc, Ctrl+C, the palette, quitting)."""

    def close_inbox(self) -> None:
        """Quitting: nothing more comes; a session waiting for its next task ends."""

    def leave(self) -> None:
        """The screen is closing."""

    def leave_for_fleet(self) -> bool:
        """F: whether the screen may be left for the fleet screen (then it is noted)."""
        ...


class LocalSource:
    """A session built here, run on the app's `session` worker. `token` is its cancel token
    (give it to the Session); `result` its outcome once it has ended."""

    elsewhere = False

    def __init__(self) -> None:
        self.token = CancelToken()
        self.session: Session | None = None
        self.result: SessionResult | None = None
        self.serving: Serving | None = None  # `launch --serve`: the session's door
        self.seat: Seat | None = None  # a formation's member: its seat (its callees' doors)
        self._starting = False  # a follow-up session is being built
        self.app: SourceHost | None = None  # the app, once it has started this
        self.ran: list[Session] = []  # every session attached, first to last (follow-ups too)
        self.outcomes: dict[str, SessionResult] = {}  # by session id, once each has ended

    def attach(self, session: Session, token: CancelToken | None = None) -> None:
        """The session to run (built by the command line, or resumed from the browser with
        a `token` of its own)."""
        self.session = session
        self.result = None
        self.ran.append(session)
        if token is not None:
            self.token = token

    @property
    def attached(self) -> bool:
        return self.session is not None

    @property
    def running(self) -> bool:
        app = self.app
        ended = app is not None and app.state.exit_status is not None
        return self._starting or (self.session is not None and self.result is None and
                                  not ended)

    @property
    def starting(self) -> bool:
        return self._starting

    def start(self, app: SourceHost) -> None:
        self.app = app
        if self.session is not None:
            self.run_worker()

    def run_worker(self) -> None:
        assert self.app is not None
        self.app.run_session(self.run)

    def run(self) -> SessionResult | None:
        """On the session's thread: run it (a served session first waits for its first task
        from the door, which closes when the session ends)."""
        assert self.session is not None
        serving = self.serving
        ours = serving is not None and serving.session is self.session
        if ours and serving is not None and serving.waits and \
                not serving.first_task(self.token):  # stopped before any task came
            self.end_serving()
            return None
        try:
            return self.session.run()
        finally:
            if ours:
                self.end_serving()

    def end_serving(self) -> None:
        if self.serving is not None:
            self.serving.end()

    def ended(self, result: SessionResult | None, error: BaseException | None) -> None:
        """The session worker ended: with `result`, or broke with `error`."""
        if error is not None:
            self._starting = False
        elif result is not None:
            self.result = result
            self.outcomes[result.session_id] = result

    def follow(self, batch: list[ev.Event]) -> None:
        if any(isinstance(event, ev.SessionStarted) for event in batch):
            self._starting = False

    def holds_next(self) -> bool:
        return self.session is not None and bool(self.session.inbox.pending())

    def submit(self, item: QueuedTask) -> str | None:
        assert self.session is not None
        return self.session.submit(item.text, task_id=item.task_id, via=item.via)

    def cancel(self) -> None:
        self.token.set()

    def close_inbox(self) -> None:
        if self.session is not None:
            self.session.inbox.close()

    def leave(self) -> None:
        self.close_inbox()

    def leave_for_fleet(self) -> bool:
        return False

    # -- follow-up sessions -----------------------------------------------------------------
    def continue_with(self, queue: TaskQueue) -> bool:
        """The next session in the same conversation, with the queue's head as its task
        (`--resume` of the session that ended, full)."""
        previous, app = self.session, self.app
        assert previous is not None and app is not None
        if self.result is None:  # its end has not reached the app yet: how it ended decides
            return False         # whether the queue goes on (`session_over` feeds it again)
        entry = next((e for e in session_index.entries(previous.home)
                      if e.session_id == previous.session_id), None)
        if entry is None:
            app.notify(f"Cannot go on: session {previous.session_id} is not in "
                       f"{session_index.index_path(previous.home)}.", severity="error",
                       timeout=10)
            return True
        item = queue.pop_head()
        assert item is not None
        self._starting = True
        self.token = CancelToken()
        app.run_session(partial(self._run_followup, app, previous, entry, item, self.token))
        return False

    def _run_followup(self, app: SourceHost, previous: Session, entry: session_index.Entry,
                      item: QueuedTask, cancel: CancelToken) -> SessionResult | None:
        """On the session's thread: build the follow-up (which loads its components), then
        run it under the queued prompt's task id; None when it was refused (the prompt goes
        back to the queue's head)."""
        from tui.core.loop.build import build_session, follow_up

        try:
            session = build_session(follow_up(previous, entry, item.text, (app.bridge,),
                                              app.responder, cancel))
        except MurmurTuiError as exc:
            app.call_from_thread(self._refused, app, item, str(exc))
            return None
        session.take_first(item.text, item.task_id, via=item.via)
        app.call_from_thread(self.attach, session)
        return session.run()

    def _refused(self, app: SourceHost, item: QueuedTask, why: str) -> None:
        self._starting = False
        app.prompts.not_taken(item, f"The follow-up session did not start: {why}", head=True)

    def resumed(self, wanted: ResumeConversation, app: SourceHost, cancel: CancelToken
                ) -> Session:
        """Off the screen's loop: the session the browser's `r` / `R` resumes, with approvals
        in the mode the session before had (loading its components can take a while)."""
        from tui.app.browser.resume import follow_up
        from tui.core.loop.build import SessionSpec, build_session

        previous = self.session.dispatch.approvals if self.session is not None else None
        capsule, options, approvals = follow_up(
            wanted, app.home, previous.mode if previous is not None else None)
        return build_session(SessionSpec(
            capsule, options, (app.bridge,), app.responder, cancel,
            approvals.gate(app.approver) if approvals is not None else None))

