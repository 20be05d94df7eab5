"""A task the door rejects is said to be rejected, with the door's reason, wherever it was sent
from: the fleet's `t` and the attached screen's prompt, on a real served session whose capsule
holds at most one waiting task (`lifecycle.queue_depth: 1`) while a shell command runs.

Murmur's `SendMessage` answers a new task at once: `TASK_STATE_SUBMITTED`, or
`TASK_STATE_REJECTED` with the status message `task rejected: capsule is busy`
(spec/murmur-newest.md §5.4 "Routing by taskId")."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.app.conftest import keep_notes
from tests.conftest import CapsuleFactory
from tests.fleet.test_attach import record_of
from tests.fleet.test_fleet_screen import type_in
from tests.responses import text_response, tool_response
from tests.served import Served, serve
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.app.attach import RemoteSource
from tui.app.fleet.app import FleetApp

WAIT_FOR_GO = "while [ ! -e go ]; do sleep 0.05; done; echo went"
# one task may wait behind the running one; a command that waits for the test stays in the
# foreground however loaded the machine (spec §lifecycle)
ONE_WAITS = ("lifecycle:\n  task_acceptance: queue\n  after_task: sleep\n  queue_depth: 1\n"
             "  shell_grace_secs: 600\n")
BUSY = "capsule is busy"


def busy_session(make_capsule: CapsuleFactory, home: Path, *answers: str
                 ) -> tuple[Served, Path]:
    """A served session whose first task runs a command until `go` exists in its workdir."""
    door = serve(make_capsule([tool_response(WAIT_FOR_GO), *map(text_response, answers)],
                              extra=ONE_WAITS, folder="busy", name="busy"))
    workdir = Path(record_of(home, door.session_id).workdir)  # type: ignore[attr-defined]
    return door, workdir


async def state_of(door: Served, task_id: str) -> str:
    reply = await asyncio.to_thread(door.rpc, "GetTask", {"id": task_id})
    return str(reply.json()["result"]["status"]["state"])


async def test_the_fleet_says_which_of_three_tasks_the_busy_session_rejected(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served]) -> None:
    door, workdir = busy_session(make_capsule, murmur_home, "first done", "queued done")
    served.append(door)
    first = door.send("wait for go")["id"]
    app = FleetApp(murmur_home)
    said = keep_notes(app)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, lambda: door.session_id in app.sessions and
                         app.sessions[door.session_id].in_task)
        session = app.sessions[door.session_id]
        await asyncio.to_thread(door.until, first, "TASK_STATE_WORKING")
        for n in (1, 2, 3):
            app.fleet.rows.select_key(door.session_id)
            await pilot.press("t")
            await type_in(pilot, f"task {n}")
            await wait_until(pilot, lambda n=n: len(said) == n)  # type: ignore[misc]
        queued = session.queued[0]
        (second, why2), (third, why3) = session.rejected
        assert said == [
            f"{door.session_id}: task {queued} queued.",
            f"{door.session_id}: task {second} rejected: {BUSY}. It will not run.",
            f"{door.session_id}: task {third} rejected: {BUSY}. It will not run."]
        assert [n.severity for n in app._notifications][-2:] == ["error", "error"]
        assert (why2, why3) == (BUSY, BUSY)
        # the door agrees: the two never run
        assert await state_of(door, second) == "TASK_STATE_REJECTED"
        assert await state_of(door, third) == "TASK_STATE_REJECTED"
        # the row and the detail say so, not "pending"
        await wait_until(pilot, lambda: any(
            r.key == door.session_id and r.shown()[-1] ==
            f"[1 queued · 2 rejected: {BUSY}]  wait for go" for r in app.fleet.rows.rows))
        app.fleet.rows.select_key(door.session_id)
        await wait_until(pilot, lambda: str(app.fleet.detail.render()).endswith(
            f"\nrejected (never ran): {second} ({BUSY}), {third} ({BUSY})\n"
            f"queued: {queued}"))
        # the command ends; the queued task runs, the rejected ones stay rejected
        (workdir / "go").write_text("")
        await asyncio.to_thread(door.until, queued, "TASK_STATE_COMPLETED")
        await wait_until(pilot, lambda: not session.queued and any(
            r.key == door.session_id and r.shown()[-1] == f"[2 rejected: {BUSY}]  task 1"
            for r in app.fleet.rows.rows))
        assert await state_of(door, third) == "TASK_STATE_REJECTED"


async def test_the_attached_prompt_keeps_a_rejected_task_and_says_why(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served]) -> None:
    door, workdir = busy_session(make_capsule, murmur_home, "first done", "second done",
                                 "third done")
    served.append(door)
    first = door.send("wait for go")["id"]
    await asyncio.to_thread(door.until, first, "TASK_STATE_WORKING")
    waiting = door.send("the one that waits")["id"]  # the session's one waiting place
    remote = RemoteSource(murmur_home, door.session_id, door.url,
                          record_of(murmur_home, door.session_id))
    app = SupervisorApp(murmur_home, source=remote)
    said = keep_notes(app)
    app.prompts.notify = app.notify  # the queue was handed the app's notify before it was kept
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until(pilot, lambda: remote.link_state == "live" and app.state.in_task)
        await pilot.press(*"from the prompt", "enter")  # the prompt has the keys
        await wait_until(pilot, lambda: any("rejected" in note for note in said))
        rejected = [note for note in said if "rejected" in note]
        assert len(rejected) == 1 and rejected[0].startswith("Task tsk_")
        assert rejected[0].endswith(
            f" was rejected: {BUSY}. The prompt stays in the queue: press Enter in the "
            "prompt to send it again.")
        assert await state_of(door, rejected[0].split()[1]) == "TASK_STATE_REJECTED"
        view = app.supervisor.queue_view
        await wait_until(pilot, lambda: view.option_count == 1)
        assert str(view.get_option_at_index(0).prompt) == \
            f"1. rejected ({BUSY}) from the prompt"
        assert not app.prompts.queue.items[0].sent
        # the command ends and the waiting task runs; Enter sends the prompt again
        (workdir / "go").write_text("")
        await asyncio.to_thread(door.until, waiting, "TASK_STATE_COMPLETED")
        await pilot.press("enter")
        await wait_until(pilot, lambda: any(note.startswith("Task tsk_") and
                                            note.endswith((" sent.", " queued."))
                                            for note in said))
        await wait_until(pilot, lambda: app.state.result == "third done")
        await pilot.press("ctrl+q")
