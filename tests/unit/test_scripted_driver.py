"""The scripted driver's `skip_played` (docs/manifest.md, "Built-in drivers"): a resumed
session goes on with the script where the session it resumes stopped. Responses are spec §4.3
response objects; requests hold Murmur messages (`tool_call` blocks with their ids)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tui.core.cancel import CancelToken
from tui.core.inference.driver import NullStream
from tui.core.inference.scripted import ScriptedDriver
from tui.core.text.fence import fence


def calls(*ids: str) -> dict[str, Any]:
    return {"stop_reason": "tool_call",
            "content": [{"type": "tool_call", "id": i, "name": "t", "input": {}} for i in ids]}


def text(words: str) -> dict[str, Any]:
    return {"stop_reason": "end_turn", "content": [{"type": "text", "text": words}]}


def ending(*turns: dict[str, Any]) -> dict[str, Any]:
    """A request whose conversation is a task, then these assistant turns."""
    return {"messages": [{"role": "user", "content": [{"type": "text", "text": "go"}]},
                         *({"role": "assistant", "content": t["content"]} for t in turns)]}


def played(driver: ScriptedDriver, request: dict[str, Any]) -> Any:
    reply = driver.complete(request, NullStream(), CancelToken())
    return json.loads(reply.data or "")["content"][0]


SCRIPT = [calls("c1"), calls("c2", "c3"), text("done"), text("again")]


def skipping() -> ScriptedDriver:
    return ScriptedDriver("d", SCRIPT, Path("s.yaml"), skip_played=True)


def test_a_resumed_session_goes_on_after_the_turn_it_died_in() -> None:
    driver = skipping()
    assert played(driver, ending(calls("c1")))["id"] == "c2"  # c1's turn was played
    assert played(driver, ending(calls("c1"), calls("c2", "c3")))["text"] == "done"
    assert driver.remaining == 1
    driver = skipping()  # died in the second turn: both are passed
    assert played(driver, ending(calls("c1"), calls("c2", "c3")))["text"] == "done"


def test_a_turn_is_passed_only_when_the_last_one_holds_all_its_calls() -> None:
    assert played(skipping(), ending(calls("c2")))["id"] == "c1"  # c3 is not in it


def test_a_follow_up_after_a_finished_task_plays_the_script_again() -> None:
    """The last assistant turn has no calls (the task ended): nothing is skipped."""
    driver = skipping()
    assert played(driver, ending(calls("c1"), calls("c2", "c3"), text("done")))["id"] == "c1"


def test_without_skip_played_the_script_plays_in_order() -> None:
    driver = ScriptedDriver("d", SCRIPT, Path("s.yaml"))
    assert played(driver, ending(calls("c1")))["id"] == "c1"
    assert played(driver, ending(calls("c1")))["id"] == "c2"


def test_a_text_quotes_a_tool_result_as_the_model_read_it_without_its_fence() -> None:
    """`{{tool:<call id>}}`: a scripted member answers with what its tool returned (the
    answer a person gave its `ask` tool, say); a call the conversation does not hold says so."""
    driver = ScriptedDriver("d", [text("they said: {{tool:q1}} / {{tool:q9}}")],
                            Path("s.yaml"))
    request = ending(calls("q1"))
    request["messages"].append({"role": "tool", "tool_call_id": "q1", "is_error": False,
                                "content": [{"type": "text", "text": fence(
                                    "tool:ask", "asked\nmain, not the release branch")}]})
    assert played(driver, request)["text"] == (
        "they said: asked\nmain, not the release branch / (no result for q9)")
