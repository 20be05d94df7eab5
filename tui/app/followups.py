"""The prompt, the queue and follow-up sessions: what the person types joins the queue and
goes to the running session when it takes tasks, or runs in a follow-up session (`--resume` of
the one that ended) in the same conversation (docs/screen.md "The prompt and the queue")."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from tui.app.bridge import CoalescingBridge, ImmediateBridge
from tui.app.dialogs import DialogHost
from tui.app.state import QueuedTask, TaskQueue
from tui.app.widgets.prompt import PromptArea
from tui.app.widgets.task_queue import QueueView
from tui.core import session_index
from tui.core.cancel import CancelToken
from tui.core.errors import MurmurTuiError
from tui.core.events import vocabulary as ev
from tui.core.loop.launch import SessionResult
from tui.core.loop.session import Session


class QueueHost(DialogHost):
    def __init__(self, home: Path, theme: str | None = None,
                 bridge: CoalescingBridge | ImmediateBridge | None = None) -> None:
        super().__init__(home, theme)
        self.bridge = bridge if bridge is not None else CoalescingBridge()
        self.cancel = CancelToken()
        self.session: Session | None = None
        self.result: SessionResult | None = None
        self.queue = TaskQueue()  # prompts waiting to run (the screen shows them)
        self._followup_starting = False  # a follow-up session is being built
        self._queue_held = False  # a canceled session: the queue waits to be started again
        self._refusal_told = False
        self._quitting = False

    @property
    def running(self) -> bool:
        return self._followup_starting or (self.session is not None and
                                           self.result is None and
                                           self.state.exit_status is None)

    # -- the prompt, the queue and follow-up sessions ------------------------------------------
    def on_prompt_area_sent(self, message: PromptArea.Sent) -> None:
        """Enter in the prompt: the text joins the queue and runs as soon as it may. Enter on
        an empty prompt starts a queue that a canceled session left waiting."""
        if message.text.strip():
            self.queue.add(message.text)
        elif not (self._queue_held and self.queue):
            return
        self._queue_held = False
        self._feed()
        self.supervisor.show_queue()

    def on_queue_view_edit(self, message: QueueView.Edit) -> None:
        item = self.queue.remove(message.index)
        if item is None:
            self.notify("The session already holds this task; it starts next as it is.",
                        timeout=5)
            return
        prompt = self.supervisor.prompt
        if prompt.text.strip():  # what you were typing is not lost: it goes back in the queue
            self.queue.items.insert(message.index, QueuedTask(prompt.text))
        prompt.take_back(item.text)
        self.supervisor.show_queue(message.index)

    def on_queue_view_remove(self, message: QueueView.Remove) -> None:
        if self.queue.remove(message.index) is None:
            self.notify("The session already holds this task; it starts next as it is.",
                        timeout=5)
            return
        self.supervisor.show_queue(message.index)
        if not self.queue:
            self.supervisor.prompt.focus()

    def on_queue_view_move(self, message: QueueView.Move) -> None:
        self.supervisor.show_queue(self.queue.move(message.index, message.by))

    def _follow_queue(self, batch: list[ev.Event]) -> None:
        """A queued prompt that started leaves the queue; the next one may go to the session."""
        changed = False
        for event in batch:
            match event:
                case ev.SessionStarted():
                    self._followup_starting = False
                    self._refusal_told = False
                case ev.TaskStarted() if event.source == "a2a":
                    changed = self.queue.started(event.text) or changed
                case ev.TaskEnded():
                    changed = True
        if changed:
            self._feed()
            self.supervisor.show_queue()

    def _feed(self) -> None:
        """Give the next queued prompt to the running session when it takes tasks and holds
        none yet, or start a follow-up session with it when the session has ended."""
        if self._closed or self._quitting or self._followup_starting or self._queue_held:
            return
        session = self.session
        item = self.queue.next_held()
        if session is None or item is None:
            return
        if not self.running:
            self._start_followup()
            return
        if self.queue.sent or session.inbox.pending():
            return  # one at a time: what waits in the session cannot be edited any more
        refused = session.submit(item.text)
        if refused is None:
            item.sent = True
        elif not self._refusal_told:
            self._refusal_told = True
            self.notify(f"Queued: {refused}, so it runs in a follow-up session in the same "
                        "conversation when this one ends.", timeout=8)

    def _session_over(self) -> None:
        """The session ended: what it was given but did not run goes back to waiting, and
        the queue goes on in a follow-up session — unless the session was canceled or broke,
        when the queue waits for Enter."""
        self.queue.unsend()
        status = self.result.exit_status if self.result is not None else None
        if self.queue and status in (None, "canceled"):
            self._queue_held = True
            many = len(self.queue) > 1
            self.notify(f"{len(self.queue)} queued prompt{'s wait' if many else ' waits'}: "
                        f"press Enter in the prompt to run {'them' if many else 'it'}.",
                        timeout=10)
        self.supervisor.show_queue()
        self._feed()

    def _start_followup(self) -> None:
        """The next session in the same conversation, with the queue's head as its task
        (`--resume` of the session that ended, full)."""
        previous = self.session
        assert previous is not None
        entry = next((e for e in session_index.entries(previous.home)
                      if e.session_id == previous.session_id), None)
        if entry is None:
            self._queue_held = True
            self.notify(f"Cannot go on: session {previous.session_id} is not in "
                        f"{session_index.index_path(previous.home)}.", severity="error",
                        timeout=10)
            return
        item = self.queue.pop_head()
        assert item is not None
        self._followup_starting = True
        self.cancel = CancelToken()
        self.run_worker(partial(self._run_followup, previous, entry, item, self.cancel),
                        thread=True, exit_on_error=False, group="session", name="session")
        self.supervisor.show_queue()

    def _run_followup(self, previous: Session, entry: session_index.Entry, item: QueuedTask,
                      cancel: CancelToken) -> SessionResult | None:
        """On the session's thread: build the follow-up (which loads its components), then
        run it; None when it was refused (the prompt goes back to the queue's head)."""
        from tui.core.loop.build import build_session, follow_up

        try:
            session = build_session(follow_up(previous, entry, item.text, (self.bridge,),
                                              self.responder, cancel))
        except MurmurTuiError as exc:
            self.call_from_thread(self._followup_refused, item, str(exc))
            return None
        self.call_from_thread(self._followup_attached, session)
        return session.run()

    def _followup_attached(self, session: Session) -> None:
        self.session = session
        self.result = None

    def _followup_refused(self, item: QueuedTask, why: str) -> None:
        self._followup_starting = False
        self._queue_held = True
        self.queue.put_back(item)
        self.supervisor.show_queue()
        self.notify(f"The follow-up session did not start: {why}", severity="error",
                    timeout=15)

    def _close_inbox(self) -> None:
        """Quitting: a session waiting for its next task ends as it is (nothing more comes)."""
        if self.session is not None:
            self.session.inbox.close()
