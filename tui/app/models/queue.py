"""The prompts waiting to run (no Textual here). Each carries the task id it will run as,
minted when it is queued and given to the session with its text, so the task that starts is
matched back to its prompt by id — two identical prompts are two tasks, never confused."""

from __future__ import annotations

from dataclasses import dataclass, field

from tui.core import ids
from tui.core.events.kinds import TaskVia


@dataclass(eq=False)
class QueuedTask:
    """A prompt waiting to run: `sent` once it is in the running session's own queue (it
    starts there and can no longer be edited). `task_id` is the id it runs under;
    `rejected`, why the session refused it when last sent (it waits here again); `waited`,
    it was typed while a task ran (or the queue was held), so it runs as a queued task, not
    one typed and run at once (the transcript's block header says which)."""

    text: str
    task_id: str = field(default_factory=ids.task_id)
    sent: bool = False
    rejected: str = ""
    waited: bool = False

    @property
    def via(self) -> TaskVia:
        return "queued" if self.waited else "typed"


class TaskQueue:
    """The prompts sent while a task runs, in the order they will run. Only what has not been
    sent to the session can be edited, removed or moved; a sent task stays at the head."""

    def __init__(self) -> None:
        self.items: list[QueuedTask] = []

    def __len__(self) -> int:
        return len(self.items)

    def add(self, text: str) -> QueuedTask:
        item = QueuedTask(text)
        self.items.append(item)
        return item

    def insert(self, index: int, text: str) -> QueuedTask:
        """A prompt put back at `index` (what was being typed when a queued one was taken
        back to edit): a new task, with an id of its own."""
        item = QueuedTask(text)
        self.items.insert(index, item)
        return item

    def next_held(self) -> QueuedTask | None:
        """The first task the session has not been given yet."""
        return next((item for item in self.items if not item.sent), None)

    @property
    def sent(self) -> list[QueuedTask]:
        return [item for item in self.items if item.sent]

    def started(self, task_id: str) -> bool:
        """The task `task_id` started: the sent item it was leaves the queue."""
        for item in self.items:
            if item.sent and item.task_id == task_id:
                self.items.remove(item)
                return True
        return False

    def unsend(self) -> None:
        """The session ended before it ran what it was given: those go back to waiting."""
        for item in self.items:
            item.sent = False

    def pop_head(self) -> QueuedTask | None:
        return self.items.pop(0) if self.items else None

    def put_back(self, item: QueuedTask) -> None:
        item.sent = False
        self.items.insert(0, item)

    def neighbours(self, index: int) -> tuple[QueuedTask | None, QueuedTask | None]:
        """The items before and at `index` (what an item taken from there sat between)."""
        before = self.items[index - 1] if 0 < index <= len(self.items) else None
        return before, self.items[index] if 0 <= index < len(self.items) else None

    def put_between(self, item: QueuedTask, after: QueuedTask | None,
                    before: QueuedTask | None) -> int:
        """Put `item` back where it was: in front of `before` while that still waits, else
        behind `after`, else at the head of what can still be edited. Its index."""
        if before is not None and before in self.items and not before.sent:
            index = self.items.index(before)
        elif after is not None and after in self.items:
            index = self.items.index(after) + 1
        else:
            index = len(self.sent)
        self.items.insert(index, item)
        return index

    def editable(self, index: int) -> bool:
        return 0 <= index < len(self.items) and not self.items[index].sent

    def remove(self, index: int) -> QueuedTask | None:
        if not self.editable(index):
            return None
        return self.items.pop(index)

    def move(self, index: int, by: int) -> int:
        """Move the item at `index` up (by < 0) or down; its new index (unchanged when it
        cannot move: a sent item, or past a sent item or the ends)."""
        target = index + by
        if not self.editable(index) or not self.editable(target):
            return index
        self.items[index], self.items[target] = self.items[target], self.items[index]
        return target
