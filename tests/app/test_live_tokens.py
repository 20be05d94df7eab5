"""Output tokens count up on the status bar while the answer streams (an estimate, marked
`~`), and the turn's real count replaces the estimate when it completes."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.conftest import CapsuleFactory
from tests.fakes import start_session
from tests.responses import text_response
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.app.models.status import SessionState
from tui.core.events import vocabulary as ev

PACED = {"chunk_chars": 4, "chars_per_second": 120}  # the scripted driver streams slowly


def out_tokens(app: SupervisorApp) -> str:
    found = re.search(r"/ (~?[\d.]+k?) out", str(app.supervisor.status.render()))
    return found.group(1) if found else ""


async def test_output_tokens_count_up_while_the_answer_streams(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    answer = " ".join(f"word{n}" for n in range(60))  # ~360 characters: 3 s at 120/s
    root = make_capsule([text_response(answer)], name="paced", driver_config=PACED)
    app = SupervisorApp(murmur_home)
    session = start_session(app, root)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until(pilot, lambda: out_tokens(app).startswith("~"))
        first = int(out_tokens(app)[1:])
        await wait_until(pilot, lambda: out_tokens(app).startswith("~")
                       and int(out_tokens(app)[1:]) > first)
        await wait_until(pilot, lambda: app.result is not None)
        await wait_until(pilot, lambda: out_tokens(app)[:1] not in ("", "~"))  # the real count
        trace = [json.loads(line) for line in session.paths.trace.read_text().splitlines()]
        counted = sum(line.get("output_tokens", 0) for line in trace
                      if line["event_type"] == "inference")
        assert counted > 0 and out_tokens(app) == str(counted)  # the real count, no `~`


def test_a_retry_drops_the_estimate_of_the_discarded_answer() -> None:
    state = SessionState()
    state.apply(ev.TextDelta(task_id="t", turn=0, text="x" * 400))
    assert state.output_tokens == "~100"
    state.apply(ev.InferenceRetry(task_id="t", turn=0, attempt=1, max_attempts=3, status=500,
                                  reason="boom", delay_ms=10))
    assert state.output_tokens == "0"
    state.apply(ev.ThinkingDelta(task_id="t", turn=0, text="ab"))
    assert state.output_tokens == "~1"  # a little text is never shown as nothing
