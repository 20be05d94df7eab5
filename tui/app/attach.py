"""`murmur-tui attach SESSION|URL`: the supervisor screen on a session running elsewhere.

`RemoteSource` is that session behind the same port a local one is behind
(`tui.app.sources.SessionSource`): the supervisor app takes it as its source and does not know
the difference. The session's events come over its door (`stream/watch`, adapted into the
same events a local session emits; tui/app/fleet/links.py), so the transcript, the tool table,
the shell pane and the status bar are the ones `launch` shows. What the person does goes back
through the door: a question's answer in the shape the door's generation expects, Esc Esc
cancels the running task (`CancelTask`), the prompt sends follow-up tasks (the door names each
task it takes). Leaving the screen leaves the session running: attaching never cancels
anything by going away.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from pathlib import Path

from tui.app.fleet.links import Link, LinkState
from tui.app.models.queue import QueuedTask, TaskQueue
from tui.app.sources import SourceHost
from tui.core.a2a.task import rejection, taken_as
from tui.core.asking.question import Question
from tui.core.asking.request import InputRequest
from tui.core.errors import MurmurTuiError
from tui.core.events import vocabulary as ev


class RemoteSource:
    """The session `session_id` at `url` (its running `record` when known; `token`: the
    bearer token its door asks for). `why_gone` says why the session went away; `to_fleet`
    is set when the person left for the fleet screen (F)."""

    elsewhere = True

    def __init__(self, home: Path, session_id: str, url: str, record: object | None = None,
                 token: str | None = None) -> None:
        self.target_id, self.url = session_id, url
        self.link = Link(home, session_id, url, record, self._arrived, token=token)
        self.link_state = "connecting"
        self.why_gone = ""
        self.to_fleet = False  # F: the fleet screen, once this one is left
        self._app: SourceHost | None = None
        self._asked: dict[str, Question] = {}  # request id -> its question here
        self._task_id: str | None = None
        self._left = False  # the screen is closing: nothing more goes to the door

    @property
    def attached(self) -> bool:
        return True

    @property
    def starting(self) -> bool:
        return False

    @property
    def running(self) -> bool:
        app = self._app
        return self.link_state not in ("closed", "gone") and \
            (app is None or app.state.exit_status is None)

    def start(self, app: SourceHost) -> None:
        self._app = app
        app.attention.capsule = self.target_id
        app.state.session_clock = True  # its clocks count from the session's own stamps
        self.link.start()

    def follow(self, batch: list[ev.Event]) -> None:
        return None  # the door's events were read as they arrived (`_arrived`)

    def leave_for_fleet(self) -> bool:
        self.to_fleet = True
        return True

    # -- from the door ----------------------------------------------------------------------
    def _arrived(self, session_id: str, item: list[ev.Event] | LinkState) -> None:
        """On the watcher's thread: events go through the bridge like a local session's;
        a question opens the dialog from a thread of its own."""
        app = self._app
        if app is None:
            return
        if isinstance(item, LinkState):
            app.call_from_thread(self._link_changed, app, item)
            return
        for event in item:
            match event:
                case ev.TaskStarted():
                    self._task_id = event.task_id
                case ev.InputRequested():
                    self._ask(app, event)
                case ev.InputAnswered():
                    self._withdraw(event.request_id)
                case ev.TaskEnded() | ev.SessionEnded():
                    for request_id in list(self._asked):
                        self._withdraw(request_id)
            app.bridge.emit(event)

    def _link_changed(self, app: SourceHost, item: LinkState) -> None:
        before, self.link_state = self.link_state, item.state
        app.refresh_bindings()
        if item.state == "reconnecting" and before == "live":
            app.notify(f"The stream from {self.url} dropped; reconnecting…", timeout=5)
        elif item.state == "live" and before == "reconnecting":
            app.notify("Reconnected.", timeout=3)
        elif item.state == "gone":
            self.why_gone = item.why
            app.notify(f"The session is gone: {item.why}", severity="error", timeout=30)
        elif item.state == "closed":
            app.notify("The session closed.", timeout=10)

    def _ask(self, app: SourceHost, event: ev.InputRequested) -> None:
        """On the watcher's thread: the remote question becomes a question of this screen,
        which its dialog answers; the answer goes to the door as it is given. Nothing waits
        for it here."""
        if event.request_id in self._asked:
            return
        question = Question(InputRequest(event.request_id, event.prompt, event.tool_name))
        self._asked[event.request_id] = question
        question.when_settled(lambda settled: self._answered(app, event.task_id, settled))
        try:
            app.call_from_thread(app.desk.question_arrived, question)
        except RuntimeError:  # the screen has gone
            question.close("the screen is not running")

    def _answered(self, app: SourceHost, task_id: str | None, question: Question) -> None:
        """On the thread that settled it (the app's, for the dialog's answer)."""
        if question.answered:
            text = question.future.result()
            app.run_worker(self._send_answer(app, task_id, text), group="answers")

    async def _send_answer(self, app: SourceHost, task_id: str | None, text: str) -> None:
        try:  # the HTTP call runs on the event loop's executor, not a thread of its own
            await asyncio.to_thread(self.link.answer, task_id, text)
        except MurmurTuiError as exc:
            app.notify(f"The answer was not delivered: {exc.text}", severity="error",
                       timeout=15)

    def _withdraw(self, request_id: str) -> None:
        """On the watcher's thread: the remote task went on without this screen's answer."""
        question = self._asked.pop(request_id, None)
        app = self._app
        if question is not None and question.close("withdrawn") and app is not None:
            with contextlib.suppress(RuntimeError):  # the screen has gone
                app.call_from_thread(app.desk.question_withdrawn, question)

    # -- to the door ------------------------------------------------------------------------
    def cancel(self) -> None:
        """Esc Esc, Ctrl+C and the palette cancel the running task through the door."""
        if self._left or self._app is None:
            return
        threading.Thread(target=self._send_cancel, args=(self._app, self._task_id),
                         daemon=True).start()

    def _send_cancel(self, app: SourceHost, task_id: str | None) -> None:
        try:
            if task_id is None:
                raise MurmurTuiError("no task is running")
            self.link.cancel(task_id)
        except MurmurTuiError as exc:
            app.call_from_thread(app.notify, f"Cancel: {exc.text}", severity="error",
                                 timeout=10)

    def holds_next(self) -> bool:
        return False  # the queue itself gives one task at a time

    def submit(self, item: QueuedTask) -> str | None:
        """The queue's head goes to the session through the door; the door names the task."""
        assert self._app is not None
        threading.Thread(target=self._send_task, args=(self._app, item), daemon=True).start()
        return None

    def _send_task(self, app: SourceHost, item: QueuedTask) -> None:
        busy = app.state.in_task  # a task the door takes now waits behind it
        try:
            task = self.link.send_task(item.text)
        except MurmurTuiError as exc:
            app.call_from_thread(app.prompts.not_taken, item, f"Not sent: {exc.text}")
            return
        why = rejection(task)
        if why is not None:  # it will never run there: it stays here, marked, not lost
            item.rejected = why
            app.call_from_thread(
                app.prompts.not_taken, item, f"Task {task.id} was rejected: {why}. The prompt "
                "stays in the queue: press Enter in the prompt to send it again.")
            return
        app.call_from_thread(self._sent, app, item, task.id, taken_as(task, busy))

    def _sent(self, app: SourceHost, item: QueuedTask, task_id: str, how: str) -> None:
        """The door took it: it is the session's now, and leaves this queue."""
        item.rejected = ""
        app.prompts.taken(item, task_id)
        app.notify(f"Task {task_id} {how}.", timeout=4)

    def continue_with(self, queue: TaskQueue) -> bool:
        """A remote session's follow-ups are tasks sent through its door: once it has ended,
        the queue stays here."""
        if queue.sent or self._app is None:
            return False
        self._app.notify("The session has ended: the queued prompts stay here.", timeout=8)
        return True

    def close_inbox(self) -> None:
        return None

    def leave(self) -> None:
        """The door is let go first, and a cancel on the app's way out reaches no one."""
        self._left = True
        self.link.close()
