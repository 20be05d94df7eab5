"""The prompt queue: what the person types joins it and goes to the session when the session
takes tasks — one at a time, under the task id minted when it was queued — or, once the
session has ended, goes on as its source says (a follow-up session in the same conversation
for a local one; docs/screen.md "The prompt and the queue").

A plain object the supervisor app holds, given the session source and how to speak to the
screen. A task that starts is matched back to its prompt by id, never by text."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tui.app.models.queue import QueuedTask, TaskQueue
from tui.app.sources import SessionSource
from tui.core.events import vocabulary as ev


class PromptQueue:
    """`notify`: the app's; `show(index)`: draw the queue (the row at `index` selected)."""

    def __init__(self, source: SessionSource, notify: Callable[..., Any],
                 show: Callable[[int | None], None]) -> None:
        self.queue = TaskQueue()  # prompts waiting to run (the screen shows them)
        self.source = source
        self.notify = notify
        self.show = show
        self.held = False  # a canceled session: the queue waits to be started again
        self.stopped = False  # the app is closing or quitting: nothing more is given
        self._refusal_told = False
        self._in_task = False  # a task runs: what is typed now waits behind it
        # a prompt taken back to edit, and the two it sat between: sent again, it goes back
        # there (in front of the second, else behind the first), not to the end
        self.editing: tuple[QueuedTask, QueuedTask | None, QueuedTask | None] | None = None

    # -- the person ---------------------------------------------------------------------------
    def enter(self, text: str) -> None:
        """Enter in the prompt: the text joins the queue and runs as soon as it may. Enter on
        an empty prompt starts a queue that a canceled session left waiting. A prompt taken
        back from the queue goes back to its place (emptied, it leaves the queue)."""
        at: int | None = None
        if self.editing is not None:
            at = self._put_back(text)
        elif text.strip():
            item = self.queue.add(text)
            item.waited = self._in_task or self.held or len(self.queue) > 1
        elif not (self.held and self.queue):
            return
        self.held = False
        self.feed()
        self.show(at)

    def _put_back(self, text: str) -> int | None:
        assert self.editing is not None
        item, after, before = self.editing
        self.editing = None
        if not text.strip():
            self.notify("The prompt taken back was emptied: it left the queue.", timeout=4)
            return None
        item.text = text
        item.rejected = ""
        return self.queue.put_between(item, after, before)

    def take(self, index: int, typing: str) -> QueuedTask | None:
        """The prompt at `index` taken back to edit (None: the session holds it already);
        sent again, it goes back to its place. `typing`, what was in the prompt, is not lost:
        it joins the queue in that place, just behind it — or, when it was a prompt taken back
        before, it goes back to that prompt's own place."""
        if not self.queue.editable(index):
            self._holds_it()
            return None
        taken = self.queue.items[index]
        if self.editing is not None:  # emptied meanwhile: it goes back as it was
            self._put_back(typing if typing.strip() else self.editing[0].text)
            index = self.queue.items.index(taken)
        elif typing.strip():
            self.queue.insert(index + 1, typing).waited = True  # it waits where the other was
        item = self.queue.remove(index)
        assert item is taken
        after, before = self.queue.neighbours(index)
        self.editing = (item, after, before)
        self.show(index)
        return item

    def remove(self, index: int) -> bool:
        if self.queue.remove(index) is None:
            self._holds_it()
            return False
        self.show(index)
        return True

    def move(self, index: int, by: int) -> None:
        self.show(self.queue.move(index, by))

    def _holds_it(self) -> None:
        self.notify("The session already holds this task; it starts next as it is.",
                    timeout=5)

    # -- the session --------------------------------------------------------------------------
    def follow(self, batch: list[ev.Event]) -> None:
        """A queued prompt that started leaves the queue (matched by its task id); the next
        one may go to the session."""
        changed = False
        for event in batch:
            match event:
                case ev.SessionStarted():
                    self._refusal_told = False
                case ev.TaskStarted():
                    self._in_task = True
                    if event.source == "a2a":
                        changed = self.queue.started(event.task_id) or changed
                case ev.TaskEnded():
                    self._in_task = False
                    changed = True
        if changed:
            self.feed()
            self.show(None)

    def feed(self) -> None:
        """Give the next queued prompt to the running session when it takes tasks and holds
        none yet, or let the source go on with it when the session has ended."""
        if self.stopped or self.held or self.source.starting:
            return
        if self.queue.next_held() is None or not self.source.attached:
            return
        if not self.source.running:
            self.held = self.source.continue_with(self.queue)
            self.show(None)
            return
        item = self.queue.next_held()
        if item is None or self.queue.sent or self.source.holds_next():
            return  # one at a time: what waits in the session cannot be edited any more
        item.sent = True
        refused = self.source.submit(item)
        if refused is None:
            return
        item.sent = False
        if not self._refusal_told:
            self._refusal_told = True
            self.notify(f"Queued: {refused}, so it runs in a follow-up session in the same "
                        "conversation when this one ends.", timeout=8)

    def session_over(self, status: str | None) -> None:
        """The session ended: what it was given but did not run goes back to waiting, and
        the queue goes on — unless the session was canceled or broke, when the queue waits
        for Enter."""
        self.queue.unsend()
        if self.queue and status in (None, "canceled"):
            self.held = True
            many = len(self.queue) > 1
            self.notify(f"{len(self.queue)} queued prompt{'s wait' if many else ' waits'}: "
                        f"press Enter in the prompt to run {'them' if many else 'it'}.",
                        timeout=10)
        self.show(None)
        self.feed()

    def hold(self) -> None:
        """The session broke: what is queued waits for Enter."""
        self.held = bool(self.queue)

    def taken(self, item: QueuedTask, task_id: str) -> None:
        """The source took `item` as the task `task_id` (a door names its own): it is the
        session's now, and leaves this queue."""
        item.task_id = task_id
        self.queue.started(task_id)
        self.show(None)

    def not_taken(self, item: QueuedTask, why: str, *, head: bool = False) -> None:
        """The source could not take `item`: it waits again (at the head when it had left
        the queue), and the queue holds until Enter."""
        if head:
            self.queue.put_back(item)
        item.sent = False
        self.held = True
        self.show(None)
        self.notify(why, severity="error", timeout=15 if head else 10)
