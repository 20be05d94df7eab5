"""A session's tasks one after another (spec §1.7, §5.4): the first task, then each task sent
to the session in order — never preempting a running one — while `lifecycle` says to take
them: `task_acceptance: queue` takes them, `after_task: sleep` waits for the next one until
nothing more can come, `exit` ends once the queue is empty. `conversation: threaded` carries
the context from one task to the next in memory; `stateless` starts each task empty. The
session's exit status is the first task that did not end `ok` (else `ok`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from tui.core import ids
from tui.core.errors import LaunchError
from tui.core.events import vocabulary as ev
from tui.core.events.kinds import TaskOrigin, TaskVia
from tui.core.fs.task_file import forget_task, write_task
from tui.core.loop import task
from tui.core.loop.inbox import Inbox, Pending
from tui.core.loop.report import Report
from tui.core.loop.state import TaskOutcome
from tui.core.manifest.model import Lifecycle
from tui.core.session_index import Entry

if TYPE_CHECKING:  # the shell loads only for a capsule that allows one
    from tui.core.shell.background import Background


def run_all(first: task.TaskDeps, asked: task.TaskInput, inbox: Inbox
            ) -> tuple[TaskOutcome, TaskOutcome]:
    """Run the first task and every task the lifecycle takes after it; returns the deciding
    outcome (the session's exit status) and the last task's."""
    lifecycle = first.capsule.lifecycle
    backgrounds = _backgrounds(first, inbox)
    last = task.run(first, asked)
    deciding = last
    deps = first
    session_cancel = first.cancel.session  # a canceled task ends alone; this ends them all
    while lifecycle.task_acceptance == "queue" and not session_cancel.is_set():
        _forget_task_file(first.paths.accessible)  # as Murmur does under queue, after each task
        pending = inbox.take(wait=lifecycle.after_task == "sleep", cancel=session_cancel)
        if pending is None or first.ending.session_ended:
            break
        deps, asked = _next_task(deps, pending)
        last = task.run(deps, asked)
        if deciding.exit_status == "ok":
            deciding = last
    left = inbox.drain()
    for background in backgrounds:
        background.close()  # what still runs is killed, each one shell_abandoned
    if left:
        first.report.warn_and_log(
            "W-QUEUE", f"{len(left)} task{'s' if len(left) != 1 else ''} sent to the session "
            "did not run: the session ended first")
    return deciding, last


def _backgrounds(first: task.TaskDeps, inbox: Inbox) -> list[Background]:
    """The session's background work (demoted shell commands), told where its events go and
    — under `task_acceptance: queue` + `after_task: sleep`, the only lifecycle that can take
    one — where a finished command's completion task goes. A sleeping session waits while
    work runs."""
    if not first.dispatch.tools.shell:
        return []
    from tui.core.shell.background import Background

    found: list[Background] = []
    for handler in first.dispatch.tools.shell.values():
        background = getattr(handler, "background", None)
        if isinstance(background, Background) and background not in found:
            found.append(background)
    settings = first.capsule.lifecycle
    takes = settings.task_acceptance == "queue" and settings.after_task == "sleep"

    def deliver(text: str, task_id: str, announce: Callable[[], None]) -> bool:
        if inbox.ended:
            return False
        announce()  # shell_completed, before the task can start
        return inbox.send(Pending(text, source="detached_shell", origin="completion",
                                  task_id=task_id), lane="bg")

    for background in found:
        background.attach(first.report.emit, deliver if takes else None)
    if takes and found:
        inbox.expecting = lambda: any(background.running() for background in found)
        for background in found:  # work that ends may be what a waiting `take` waits for
            background.watch(lambda _work: inbox.wake())
    return found


def report_lost(inbox: Inbox, report: Report, resumed: Entry, session_id: str) -> None:
    """`--resume` of a session that died with background work running: Murmur's `shell_lost`
    line for each command in that session's own trace, and one `detached_lost` completion task
    naming them all (it runs when the lifecycle takes another task; the warning says it
    either way)."""
    from tui.core.shell.background import lost_text, session_folder
    from tui.core.shell.background import report_lost as write_lost

    task_id = ids.task_id()
    folder = session_folder(Path(resumed.workdir), resumed.session_id)
    lost = write_lost(folder, resumed.session_id, session_id, task_id,
                      lambda text: report.warn_and_log("W-RESUME", text))
    for work in lost:
        report.emit(ev.ShellLost(work_id=work["work_id"], binary=str(work.get("binary", "")),
                                 command=str(work.get("command", "")),
                                 lost_session_id=resumed.session_id,
                                 detached_at_ms=int(work.get("detached_at_ms", 0))))
    if lost:
        text = lost_text(lost, resumed.session_id)
        report.warn_and_log("W-SHELL-LOST", text)
        inbox.send(Pending(text, source="detached_lost", origin="completion",
                           task_id=task_id), lane="bg")


def _next_task(previous: task.TaskDeps, pending: Pending
               ) -> tuple[task.TaskDeps, task.TaskInput]:
    """What the next task runs with and is asked: its text written to `task.md` (as an A2A
    message rewrites it), the context kept when threaded or a new one when stateless."""
    write_task(previous.paths.accessible, pending.text)
    deps = previous if previous.capsule.lifecycle.conversation == "threaded" \
        else previous.fresh()
    return deps, task.TaskInput(pending.text, source=pending.source, origin=pending.origin,
                                task_id=pending.task_id, context_id=pending.context_id,
                                task_file_written=True, first=False, via=pending.via,
                                caller_member=pending.caller_member)


def _forget_task_file(accessible: Path) -> None:
    forget_task(accessible)


def inbox_for(settings: Lifecycle, more_tasks: tuple[str, ...]) -> Inbox:
    """The session's inbox, holding the tasks given at launch after the first; refuses a
    launch whose lifecycle takes no more tasks, or not that many (LaunchError)."""
    inbox = Inbox(settings.queue_depth)
    if more_tasks and settings.task_acceptance != "queue":
        raise LaunchError(f"--task was given {len(more_tasks) + 1} times, but the capsule's "
                          f"lifecycle.task_acceptance is {settings.task_acceptance}: a session "
                          "takes more tasks only with task_acceptance: queue")
    if len(more_tasks) > settings.queue_depth:
        raise LaunchError(f"--task was given {len(more_tasks) + 1} times, but "
                          f"lifecycle.queue_depth is {settings.queue_depth}: at most "
                          f"{settings.queue_depth} tasks may wait behind the first")
    for text in more_tasks:
        inbox.send(Pending(text, source="task_md"))
    return inbox


def send(settings: Lifecycle, inbox: Inbox, text: str, task_id: str | None = None,
         context_id: str | None = None, via: TaskVia | None = None,
         origin: TaskOrigin = "user", caller_member: str | None = None) -> str | None:
    """Queue a task sent to a running session (under `task_id` when its sender named one;
    `via`: typed on the supervisor's prompt; `caller_member`: the formation member that sent
    it); the reason it is refused, else None."""
    if settings.task_acceptance != "queue":
        return (f"the capsule takes no more tasks (lifecycle.task_acceptance: "
                f"{settings.task_acceptance})")
    if inbox.closed:
        return "the session takes no more tasks"
    if not inbox.send(Pending(text, task_id=task_id, context_id=context_id, via=via,
                              origin=origin, caller_member=caller_member)):
        return f"the queue is full (lifecycle.queue_depth: {settings.queue_depth})"
    return None
