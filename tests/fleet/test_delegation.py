"""A script capsule delegates to a murmur-tui session serving its door: the peer runs the task,
and the fleet shows which session asked which."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.conftest import CapsuleFactory
from tests.responses import text_response
from tests.served import SLEEP, Served, serve
from tests.waits import wait_until
from tests.wasm.test_message_send import delegating_capsule
from tui.app.fleet.app import FleetApp


async def test_a_capsule_delegates_to_a_served_session_and_the_fleet_shows_it(
        tmp_path: Path, murmur_home: Path, make_capsule: CapsuleFactory,
        served: list[Served]) -> None:
    worker = serve(make_capsule([text_response("summarised")], extra=SLEEP, name="worker",
                                folder="worker"))
    served.append(worker)
    authority = worker.url.removeprefix("http://")
    root = delegating_capsule(tmp_path, authority)  # it serves its door too, and sleeps after
    with (root / "murmur.yaml").open("a", encoding="utf-8") as manifest:
        manifest.write(SLEEP)
    asker = serve(root, "--task", f"{authority}\nsummarise the report")
    served.append(asker)
    app = FleetApp(murmur_home)
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_until(pilot, lambda: asker.session_id in app.sessions and
                       app.sessions[asker.session_id].delegations == [authority])
        await wait_until(pilot, lambda: app.sessions[worker.session_id].task ==
                       "summarise the report")

        def asked() -> bool:
            row = app.fleet.rows.get(asker.session_id)
            return row is not None and f"asked {authority}" in row.shown()[-1]

        await wait_until(pilot, asked)
        shown = app.fleet.rows.get(asker.session_id)
        assert shown is not None and f"asked {authority}" in shown.shown()[-1]
    peer_task = app.sessions[worker.session_id].task_id
    assert peer_task is not None
    done = await asyncio.to_thread(worker.until, peer_task, "TASK_STATE_COMPLETED")
    assert done["artifacts"][0]["parts"][0]["text"] == "summarised"
