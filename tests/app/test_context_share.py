"""The status bar after a compaction shows what the compaction left, not the last request's
input tokens from before it: a real session with a WAT `on-compaction` hook (Murmur v0.11 spec
§6.5 `compaction {turn, tokens_before, tokens_after}`; `context.max_tokens` is the window)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.capsules import write_capsule
from tests.conftest import read_jsonl
from tests.fakes import start_session
from tests.responses import call_response, text_response
from tests.waits import wait_until
from tests.wasm.test_compaction import COMPACTOR
from tests.wasm.test_wasm_session import hook_entry, tool_entry
from tui.app.app import SupervisorApp

WINDOW = 400


def context_shown(app: SupervisorApp) -> str:
    found = re.search(r"context (full|\d+%)", str(app.supervisor.status.render()))
    return found.group(0) if found else ""


async def test_the_status_bar_after_a_compaction_shows_what_it_left(
        tmp_path: Path, murmur_home: Path) -> None:
    # turn 1 echoes a long input and is compacted; turn 2's request (summary, call, echoed
    # result) is larger than the window; the hook compacts again after it, and the session ends
    long = "lorem ipsum dolor " * 60
    hook = hook_entry("summariser", "all_hook", contract=COMPACTOR, tmp=tmp_path)
    root = write_capsule(tmp_path / "capsule", [
        call_response("echo", {"text": long}), text_response("first summary"),
        text_response("done"), text_response("second summary")],
        name="wasm-test", max_turns=None, shell=(),
        artifacts=tool_entry("echo", "echo_tool") + hook,
        extra="  compaction:\n    threshold: 0.5\ncontext:\n  max_tokens: 400\n")
    app = SupervisorApp(murmur_home)
    session = start_session(app, root)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, lambda: app.result is not None)
        trace = read_jsonl(session.paths.trace)
        last_request = [x for x in trace if x["event_type"] == "inference"
                        and "origin" not in x][-1]
        assert last_request["input_tokens"] > WINDOW  # what the bar showed before: over 100 %
        left = [x for x in trace if x["event_type"] == "compaction"][-1]["tokens_after"]
        assert left < WINDOW
        await wait_until(pilot, lambda: context_shown(app) == f"context {left * 100 // WINDOW}%")
