"""A queued prompt taken back to edit keeps its place in the queue, and what was being typed
when it was taken back joins the queue just behind it; the queue view shows the order. Real
sessions and the real app under Pilot."""

from __future__ import annotations

from pathlib import Path

from tests.app.test_prompt import FOREGROUND, WAIT_FOR_GO, queued, start, type_prompt
from tests.conftest import CapsuleFactory
from tests.responses import text_response, tool_response
from tests.waits import wait_until
from tui.app.app import SupervisorApp


def rows(app: SupervisorApp) -> list[str]:
    view = app.supervisor.queue_view
    return [str(view.get_option_at_index(n).prompt) for n in range(view.option_count)]


async def test_an_edited_prompt_goes_back_to_its_place(
        murmur_home: Path, make_capsule: CapsuleFactory) -> None:
    root = make_capsule([tool_response(WAIT_FOR_GO), text_response("done")],
                        extra=FOREGROUND)
    app = SupervisorApp(murmur_home)
    start(app, root)  # task_acceptance: single: what is queued waits, editable
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.supervisor.tools.total == 1)
        for text in ("alpha", "beta", "gamma"):
            await type_prompt(pilot, text)
        await wait_until(pilot, lambda: queued(app) == ["alpha", "beta", "gamma"])
        ids = [item.task_id for item in app.prompts.queue.items]
        await pilot.press("f2", "home", "down", "e")  # beta back into the prompt
        prompt = app.supervisor.prompt
        await wait_until(pilot, lambda: prompt.has_focus and prompt.text == "beta")
        assert queued(app) == ["alpha", "gamma"]
        await type_prompt(pilot, " two")
        await wait_until(pilot, lambda: queued(app) == ["alpha", "beta two", "gamma"])
        assert rows(app) == ["1. alpha", "2. beta two", "3. gamma"]
        assert [item.task_id for item in app.prompts.queue.items] == ids  # its own id
        # taken back while something else was being typed: that waits just behind it
        await pilot.press(*"draft")
        await pilot.press("f2", "end", "e")  # gamma
        await wait_until(pilot, lambda: prompt.text == "gamma")
        assert queued(app) == ["alpha", "beta two", "draft"]
        await type_prompt(pilot, "!")
        await wait_until(pilot, lambda: rows(app) == ["1. alpha", "2. beta two", "3. gamma!",
                                                      "4. draft"])
        # emptied and sent, a prompt taken back leaves the queue
        await pilot.press("f2", "home", "e")
        await wait_until(pilot, lambda: prompt.text == "alpha")
        await pilot.press("ctrl+u")  # delete the line, all of it
        await wait_until(pilot, lambda: prompt.text == "")
        await pilot.press("enter")
        await wait_until(pilot, lambda: rows(app) == ["1. beta two", "2. gamma!", "3. draft"])
        app.cancel.set()
        await wait_until(pilot, lambda: app.result is not None)
