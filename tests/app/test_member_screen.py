"""A formation member's own screen, the real app fed a member's events through its own bridge:
the call's line with its clock, the status bar waiting on the callee, the answer fenced and
folded (`o` unfolds it), the task continuing and the formation ending — and `g`, which opens
the callee's session over its door (a real served session, the seat's URL pointing at it), or
says why it cannot."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.app.conftest import keep_notes, leave_prompt, replay
from tests.capsules import write_capsule
from tests.responses import text_response
from tests.served import Served, serve, served  # noqa: F401 - the fixture
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.app.callee_screen import CalleeScreen
from tui.core.events import vocabulary as ev
from tui.core.formation.seat import Callee, Seat

FRM = "frm_" + "0" * 31 + "1"
TASK = "tsk_" + "1" * 32
NOW = 1_796_000_000_000  # the events' own stamps (a running call's clock counts from them)


def member_events(at: int = NOW) -> list[ev.Event]:
    return [
        ev.SessionStarted(session_id="ses_lead", ts_ms=at, capsule_name="lead",
                          capsule_version="0.1.0", model="m", workdir="/w", trace_path="",
                          context_id="c", record_path=None, max_turns=6, tools=(),
                          formation_id=FRM, formation_member="lead",
                          formation_callees=("coder",)),
        ev.TaskStarted(session_id="ses_lead", ts_ms=at, task_id=TASK, context_id="c",
                       text="Ship the parser fix."),
        ev.TurnStarted(session_id="ses_lead", ts_ms=at, task_id=TASK, turn=0, max_turns=6,
                       input_tokens=10),
        ev.MemberCallStarted(session_id="ses_lead", ts_ms=at, task_id=TASK, call_id="mcl_1",
                             member="coder", task="Fix the parser\nand run its tests",
                             callee_task_id="tsk_c", turn=0),
        ev.TurnCompleted(session_id="ses_lead", ts_ms=at, task_id=TASK, turn=0,
                         input_tokens=10, output_tokens=5, decision="end_turn",
                         stop_reason="end_turn", tool_name=None, model="m"),
    ]


def drawn(app: SupervisorApp) -> list[str]:
    return [line.rstrip() for line in app.supervisor.transcript.plain_lines]


CALL = re.compile(r'→ coder: "Fix the parser and run its tests" · \d+(\.\d)? (s|min \d+ s)$')


async def test_a_call_on_the_member_screen_and_its_answer(murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    async with app.run_test(size=(120, 40)) as pilot:
        await replay(pilot, member_events(ev_now()))
        await wait_until(pilot, lambda: any(CALL.match(line) for line in drawn(app)),
                         what=lambda: drawn(app))
        await wait_until(pilot, lambda: re.match(r"waiting on coder · \d+:\d\d",
                                                 app.state.line()) is not None,
                         what=app.state.line)
        answer = "\n".join(f"finding {n}" for n in range(1, 10))
        await replay(pilot, [
            ev.MemberCallEnded(session_id="ses_lead", task_id=TASK, call_id="mcl_1",
                               member="coder", status="completed", duration_ms=12_300,
                               answer=answer),
            ev.TaskContinued(session_id="ses_lead", task_id=TASK, continuation_number=1,
                             member_calls=("mcl_1",), delegations=(), waited_ms=14_000,
                             turns_remaining=5)])
        transcript = app.supervisor.transcript
        await wait_until(pilot, lambda: transcript.drawn and
                         "✓ coder answered · 12.3 s" in drawn(app), what=lambda: drawn(app))
        lines = drawn(app)
        at = lines.index("✓ coder answered · 12.3 s")
        assert lines[at + 1:at + 10] == [
            "<untrusted-content source=member:coder>",
            *(f"finding {n}" for n in range(1, 6)),
            "… 5 more lines (o shows them)",
            "continuing with 1 member answer(s) after 0:14", ""]
        assert not app.state.line().startswith("waiting on")
        await leave_prompt(pilot)
        await pilot.press("o")
        await wait_until(pilot, lambda: "</untrusted-content>" in drawn(app))
        assert "finding 9" in drawn(app)
        await replay(pilot, [ev.FormationEnded(session_id="ses_lead", formation_id=FRM)])
        await wait_until(pilot, lambda: f"formation {FRM} ended: winding down" in drawn(app))
        top = " ".join(drawn(app)[:2])  # the session's line, wrapped
        assert top == f"Session ses_lead · 1 task · formation {FRM} ended: winding down"


def ev_now() -> int:
    import time

    return time.time_ns() // 1_000_000


@pytest.fixture
def callee(tmp_path: Path, murmur_home: Path, served: list[Served]) -> Served:  # noqa: F811
    root = write_capsule(tmp_path / "coder", [text_response("The parser is fixed.")],
                         name="coder", lifecycle={"task_acceptance": "queue",
                                                  "after_task": "sleep"})
    running = serve(root, "--task", "Fix the parser and run its tests")
    served.append(running)
    return running


async def test_g_opens_the_callee_over_its_door(murmur_home: Path, callee: Served) -> None:
    app = SupervisorApp(murmur_home)
    assert app.local is not None
    seat = Seat(FRM, "lead", True, "key", (Callee("coder", "mft1.x.y"),))
    seat.know_urls({"coder": callee.url})
    app.local.seat = seat
    async with app.run_test(size=(120, 40)) as pilot:
        await replay(pilot, member_events())
        await leave_prompt(pilot)
        await pilot.press("g")
        await wait_until(pilot, lambda: isinstance(app.screen, CalleeScreen), within=20)
        screen = app.screen
        assert isinstance(screen, CalleeScreen)

        def shown() -> list[str]:
            return [line.rstrip() for line in screen.transcript.plain_lines]

        await wait_until(pilot, lambda: "The parser is fixed." in shown(), what=shown,
                         within=20)
        assert "Fix the parser and run its tests" in shown()
        header = str(screen.header.render())
        assert header.startswith(f"coder · {callee.session_id} · http://127.0.0.1:")
        await wait_until(pilot, lambda: re.match(r"waiting for its next task +· +turn 1/10",
                                                 str(screen.status.render())) is not None,
                         what=lambda: str(screen.status.render()))
        # the member's keys would act on the member underneath: here they say so instead
        notes = keep_notes(app)
        watched = (f"This screen watches coder: Esc goes back to the member's own screen, "
                   f"where its keys act. To answer coder or cancel its task, use murmur-tui "
                   f"attach {callee.session_id} or the fleet.")
        await pilot.press("ctrl+c")
        assert notes[-1] == f"{watched} Ctrl+C again quits."
        await pilot.press("a")
        assert notes[-1] == watched
        assert app.screen is screen and app.return_code is None
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.supervisor)
        assert callee.process.poll() is None  # leaving lets the callee run on


async def test_g_says_why_a_member_has_no_door(murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    assert app.local is not None
    app.local.seat = Seat(FRM, "lead", True, "key", (Callee("coder", "mft1.x.y"),))
    notes = keep_notes(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await leave_prompt(pilot)
        await pilot.press("g")
        await wait_until(pilot, lambda: any("called no other member" in note
                                            for note in notes), what=lambda: notes)
        await replay(pilot, member_events())
        await pilot.press("g")
        expected = (f"coder cannot be opened: coder has no door that can be found: no running "
                    f"record names it as a member of formation {FRM}")
        await wait_until(pilot, lambda: expected in notes, what=lambda: notes)
        assert app.screen is app.supervisor
