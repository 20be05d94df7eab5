"""A call's detail names its tool's contract and fingerprint (the session's contracts.json)."""

from __future__ import annotations

from pathlib import Path

from tests.app.conftest import settle
from tests.app.test_prompt import start
from tests.conftest import CapsuleFactory
from tests.responses import text_response, tool_response
from tests.waits import wait_until
from tui.app.app import SupervisorApp


async def test_a_shell_calls_detail_says_its_contract(murmur_home: Path,
                                                      make_capsule: CapsuleFactory) -> None:
    root = make_capsule([tool_response("echo hi"), text_response("done")])
    app = SupervisorApp(murmur_home)
    start(app, root)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, lambda: app.result is not None)
        await settle(pilot)
        tools = app.supervisor.tools
        tools.rows.focus()
        await pilot.press("home")
        await wait_until(pilot, lambda: "contract:" in tools._detail_text)
        line = next(x for x in tools._detail_text.splitlines() if x.startswith("contract:"))
        assert "mutating, replay unsafe" in line and "process.execute" in line
        assert "(built-in)" in line and " · fingerprint " in line
