"""`attach` shows what a local screen shows: a real served session (`launch --headless --json
--serve`) runs three tasks — one with shell output, reopened once by its on-task-end hook, one
whose model call fails — and is then resumed for a fourth; the events its own stream prints
(what a local screen is fed) are compared with the events the remote adapter rebuilds from the
door, watched from before the first task: the same kinds in the same order, the same tool
names, inputs and kinds, the same times (the session's own stamps), the failure's reason, the
reopen with its hook and reason, the live shell lines — and the same transcript lines."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

from tests.conftest import CapsuleFactory
from tests.fleet.test_attach import record_of
from tests.responses import text_response, tool_response
from tests.served import Served, serve
from tests.waits import block_until
from tui.app.fleet.links import Link, LinkState
from tui.app.models.transcript import TranscriptModel
from tui.app.models.transcript_text import text_lines
from tui.core.events import vocabulary as ev

REVIEW = Path(__file__).resolve().parents[2] / "tui" / "demo" / "components" / "review-hook"
LIFECYCLE = "lifecycle:\n  task_acceptance: queue\n  after_task: sleep\n  queue_depth: 4\n"
SHELL = "printf 'one\\ntwo\\n'; sleep 1.2; echo three"
FAILING = {"stop_reason": "error", "content": [], "error": "the provider said no"}
SKIP = ("SessionStarted", "TextDelta", "ThinkingDelta")  # the attaching screen has its own;
# text is compared as each turn's whole (a frame may join deltas)


class Local:
    """The served session's own events, as `--json` prints them, read on a thread."""

    def __init__(self, door: Served) -> None:
        self.events: list[dict[str, Any]] = []
        assert door.process.stdout is not None
        self._thread = threading.Thread(target=self._read, args=(door,), daemon=True)
        self._thread.start()

    def _read(self, door: Served) -> None:
        assert door.process.stdout is not None
        for line in door.process.stdout:
            if line.startswith("{"):
                self.events.append(json.loads(line))

    def kinds(self) -> list[str]:
        return [event["event"] for event in self.events]


class Remote:
    """What the remote adapter rebuilds, as the attached screen receives it."""

    def __init__(self, home: Path, door: Served, text: bool = True) -> None:
        """`text=False`: the fleet's row, which skips the model's text frames."""
        self.events: list[ev.Event] = []
        self.states: list[str] = []
        self.link = Link(home, door.session_id, door.url, record_of(home, door.session_id),
                         self._deliver, text=text)
        self.link.start()

    def _deliver(self, _: str, item: list[ev.Event] | LinkState) -> None:
        if isinstance(item, LinkState):
            self.states.append(item.state)
        else:
            self.events.extend(item)

    def kinds(self) -> list[str]:
        return [type(event).__name__ for event in self.events]


def comparable(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each event but its session-local numbering (`session_id`, `seq`), text joined per turn."""
    out: list[dict[str, Any]] = []
    for event in events:
        if event["event"] in SKIP:
            continue
        out.append({k: v for k, v in event.items() if k not in ("session_id", "seq")})
    return out


def texts(events: list[dict[str, Any]]) -> dict[tuple[str, int, str], str]:
    joined: dict[tuple[str, int, str], str] = {}
    for event in events:
        if event["event"] in ("TextDelta", "ThinkingDelta"):
            key = (event["task_id"], event["turn"], event["event"])
            joined[key] = joined.get(key, "") + event["text"]
    return joined


def lines(events: list[ev.Event]) -> list[str]:
    """The transcript the screen draws of these events, as text: the session line, each
    task's block (its header, text, turns numbered within it, end line), every entry."""
    model = TranscriptModel()
    for event in events:
        model.take(event)
    return list(text_lines(model))


def as_dicts(events: list[ev.Event]) -> list[dict[str, Any]]:
    return [json.loads(event.to_json()) for event in events]


def run_and_compare(home: Path, door: Served, tasks: list[str]) -> tuple[
        list[dict[str, Any]], list[ev.Event]]:
    local = Local(door)
    remote = Remote(home, door)
    row = Remote(home, door, text=False)  # the fleet's row of the same session
    block_until(lambda: "live" in remote.states and "live" in row.states,
                what="the attach never went live")
    for text in tasks:
        door.send(text)
    block_until(lambda: local.kinds().count("TaskEnded") == len(tasks),
                what=lambda: f"the tasks never ended: {local.kinds()}")
    door.rpc("session/stop")
    block_until(lambda: "SessionEnded" in local.kinds() and "SessionEnded" in remote.kinds()
                and "SessionEnded" in row.kinds(),
                what=lambda: f"no end: {local.kinds()[-3:]} / {remote.kinds()[-3:]}")
    remote.link.close()
    row.link.close()
    # the fleet's row skips the text frames but not the usage a turn's last one tells
    assert [(e.input_tokens, e.output_tokens) for e in row.events
            if isinstance(e, ev.TurnCompleted)] == [
        (e["input_tokens"], e["output_tokens"]) for e in local.events
        if e["event"] == "TurnCompleted"]
    door.process.wait(60)
    mine = as_dicts(remote.events)
    assert comparable(mine) == comparable(local.events)
    assert texts(mine) == texts(local.events)
    local_events = [ev.event_from_dict(item) for item in local.events]
    transcript = lines(local_events)
    assert lines(remote.events) == transcript  # block for block, line for line
    headers = [line for line in transcript if re.fullmatch(r"Task \d+ · .*", line)]
    assert headers == [f"Task {n} · from the door" for n in range(1, len(tasks) + 1)]
    return local.events, remote.events


def test_attach_shows_what_the_local_screen_shows_across_tasks_a_failure_and_a_resume(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served]) -> None:
    root = make_capsule(
        [tool_response(SHELL, call_id="call_sh"), text_response("listed"),
         text_response("checked"), FAILING, text_response("third"), text_response("fourth")],
        artifacts=f"  - name: review-hook\n    runtime: hook\n    source: {REVIEW}\n",
        extra=LIFECYCLE)
    door = serve(root)
    served.append(door)
    local, remote = run_and_compare(murmur_home, door, ["look", "break", "last"])

    # what the lossy attach used to lose, here as the session told it
    started = [e for e in remote if isinstance(e, ev.ToolCallStarted)]
    assert [(e.tool_name, e.kind, e.input) for e in started] == [
        ("bash", "shell", {"command": SHELL})]
    live = [e for e in remote if isinstance(e, ev.ShellOutput)]
    assert [line for e in live for line in e.text.splitlines()] == ["one", "two", "three"]
    failed = [e for e in remote if isinstance(e, ev.TaskFailed)]
    assert len(failed) == 1 and "the provider said no" in failed[0].reason
    reopened = [e for e in remote if isinstance(e, ev.TaskReopened)]
    assert [(e.hook_name, e.reopen_number) for e in reopened] == [("review-hook", 1)]
    assert reopened[0].reason
    ended = [e for e in remote if isinstance(e, ev.TaskEnded)]
    assert [e.duration_ms for e in ended] == [e["duration_ms"] for e in local
                                             if e["event"] == "TaskEnded"]
    assert ended[0].duration_ms >= 1200  # the session's own clock: the command slept 1.2 s
    finished = [e for e in remote if isinstance(e, ev.ToolCallFinished)]
    assert finished[0].ts_ms - started[0].ts_ms >= 1200
    assert live[0].ts_ms < finished[0].ts_ms - 1000  # "one" came while the command slept

    # the same session resumed: a new session (its script played again from the start: the
    # shell command, the reopen), attached from its start, with one more task
    again = serve(root, "--resume", door.session_id)
    served.append(again)
    local, remote = run_and_compare(murmur_home, again, ["fourth"])
    assert [e.turn for e in remote if isinstance(e, ev.TurnStarted)] == [0, 1, 2]
    assert [e["resumed_from"] for e in local if e["event"] == "SessionStarted"] == [
        door.session_id]
