"""`murmur-tui attach SESSION|URL`: the supervisor screen on a session running elsewhere.

The session's events come over its door (`stream/watch`, adapted into the same events a local
session emits; tui/app/fleet/links.py), so the transcript, the tool table, the shell pane and
the status bar are the ones `launch` shows. What the person does goes back through the door:
a question's answer in the shape the door's generation expects, Esc Esc cancels the running
task (`CancelTask`), the prompt sends follow-up tasks. Leaving the screen leaves the session
running: attaching never cancels anything by going away.
"""

from __future__ import annotations

import threading
from pathlib import Path

from textual.binding import Binding

from tui.app.app import SupervisorApp
from tui.app.browser.requests import ResumeConversation
from tui.app.fleet.links import Link, LinkState
from tui.app.responder import ScreenResponder
from tui.app.state import QueuedTask
from tui.core.asking.request import InputRequest
from tui.core.cancel import CancelToken
from tui.core.errors import MurmurTuiError, NoAnswer
from tui.core.events import vocabulary as ev


class AttachApp(SupervisorApp):
    BINDINGS = [Binding("F", "fleet", "Fleet")]
    def __init__(self, home: Path, session_id: str, url: str, record: object | None = None,
                 theme: str | None = None, token: str | None = None) -> None:
        super().__init__(home, theme)
        self.target_id, self.url = session_id, url
        self.link = Link(home, session_id, url, record, self._arrived, token=token)
        self.link_state = "connecting"
        self.why_gone = ""
        self.to_fleet = False  # F: the fleet screen, once this one is left
        self._asked: dict[str, threading.Event] = {}  # request id -> withdrawn
        self._task_id: str | None = None
        self._guard_cancel()

    def on_mount(self) -> None:  # then SupervisorApp's (Textual calls each class's)
        self.attention.capsule = self.target_id
        self.link.start()

    # -- from the door ----------------------------------------------------------------------
    def _arrived(self, session_id: str, item: list[ev.Event] | LinkState) -> None:
        """On the watcher's thread: events go through the bridge like a local session's;
        a question opens the dialog from a thread of its own."""
        if isinstance(item, LinkState):
            self.call_from_thread(self._link_changed, item)
            return
        for event in item:
            match event:
                case ev.TaskStarted():
                    self._task_id = event.task_id
                case ev.InputRequested():
                    self._ask(event)
                case ev.InputAnswered():
                    self._withdraw(event.request_id)
                case ev.TaskEnded() | ev.SessionEnded():
                    for request_id in list(self._asked):
                        self._withdraw(request_id)
            self.bridge.emit(event)

    def _link_changed(self, item: LinkState) -> None:
        before, self.link_state = self.link_state, item.state
        self.refresh_bindings()
        if item.state == "reconnecting" and before == "live":
            self.notify(f"The stream from {self.url} dropped; reconnecting…", timeout=5)
        elif item.state == "live" and before == "reconnecting":
            self.notify("Reconnected.", timeout=3)
        elif item.state == "gone":
            self.why_gone = item.why
            self.notify(f"The session is gone: {item.why}", severity="error", timeout=30)
        elif item.state == "closed":
            self.notify("The session closed.", timeout=10)

    def _ask(self, event: ev.InputRequested) -> None:
        if event.request_id in self._asked:
            return
        withdrawn = threading.Event()
        self._asked[event.request_id] = withdrawn
        request = InputRequest(event.request_id, event.prompt, event.tool_name,
                               cancel=withdrawn)
        threading.Thread(target=self._answer, args=(event.task_id, request), daemon=True,
                         name=f"ask-{event.request_id}").start()

    def _answer(self, task_id: str | None, request: InputRequest) -> None:
        try:
            text = ScreenResponder(self).ask(request)
        except NoAnswer:
            return
        try:
            self.link.answer(task_id, text)
        except MurmurTuiError as exc:
            self.call_from_thread(self.notify, f"The answer was not delivered: {exc.text}",
                                  severity="error", timeout=15)

    def _withdraw(self, request_id: str) -> None:
        withdrawn = self._asked.pop(request_id, None)
        if withdrawn is not None:
            withdrawn.set()

    # -- to the door -----------------------------------------------------------------------------
    def _guard_cancel(self) -> None:
        """Esc Esc, Ctrl+C and the palette set the cancel token: here it cancels the running
        task through the door, and a fresh token waits for the next."""
        token = CancelToken()
        token.subscribe(self._cancel_remote)
        self.cancel = token

    def _cancel_remote(self) -> None:
        task_id = self._task_id
        threading.Thread(target=self._send_cancel, args=(task_id,), daemon=True).start()
        self.call_later(self._guard_cancel)

    def _send_cancel(self, task_id: str | None) -> None:
        try:
            if task_id is None:
                raise MurmurTuiError("no task is running")
            self.link.cancel(task_id)
        except MurmurTuiError as exc:
            self.call_from_thread(self.notify, f"Cancel: {exc.text}", severity="error",
                                  timeout=10)

    @property
    def running(self) -> bool:
        return self.link_state not in ("closed", "gone") and self.state.exit_status is None

    def _feed(self) -> None:
        """The queue's head goes to the session through the door, one at a time."""
        if self._closed or self._quitting or self._queue_held:
            return
        item = self.queue.next_held()
        if item is None or self.queue.sent:
            return
        if not self.running:
            self._queue_held = True
            self.notify("The session has ended: the queued prompts stay here.", timeout=8)
            return
        item.sent = True
        threading.Thread(target=self._send_task, args=(item,), daemon=True).start()

    def _send_task(self, item: QueuedTask) -> None:
        try:
            task_id = self.link.send_task(item.text)
        except MurmurTuiError as exc:
            self.call_from_thread(self._not_sent, item, exc.text)
            return
        self.call_from_thread(self._sent, item, task_id)

    def _sent(self, item: QueuedTask, task_id: str) -> None:
        """The door took it: it is the session's now, and leaves this queue."""
        self.queue.started(item.text)
        self.supervisor.show_queue()
        self.notify(f"Sent as task {task_id}.", timeout=4)

    def _not_sent(self, item: QueuedTask, why: str) -> None:
        item.sent = False
        self._queue_held = True  # Enter on an empty prompt tries again
        self.supervisor.show_queue()
        self.notify(f"Not sent: {why}", severity="error", timeout=10)

    def _start_followup(self) -> None:
        return None  # a remote session's follow-ups are tasks sent through its door

    def _close_inbox(self) -> None:
        return None

    def on_resume_conversation(self, wanted: ResumeConversation) -> None:
        wanted.prevent_default()  # SupervisorApp's would end the session to resume another
        self.notify("Resuming from the browser works on sessions launched here; this screen "
                    "is attached to a session running elsewhere.", timeout=8)

    # -- leaving ----------------------------------------------------------------------------------
    def action_quit_app(self) -> None:
        """Leaving detaches: the session goes on (its door stays open)."""
        self.exit(0, return_code=0)

    def action_fleet(self) -> None:
        """To the fleet screen: this session goes on, and is one of its rows."""
        self.to_fleet = True
        self.exit(0, return_code=0)

    def on_unmount(self) -> None:
        """Before SupervisorApp's (Textual calls each class's): the door is let go first, and
        the cancel it would set on its way out reaches no one."""
        self.link.close()
        self.cancel = CancelToken()
