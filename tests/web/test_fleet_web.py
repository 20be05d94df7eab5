"""`murmur-tui fleet --web` in headless Chromium: a real `fleet --web` process over a
MURMUR_HOME with a real served session that asks; the page shows its row, a click and Enter
open the session and Ctrl+Q comes back to the fleet, a question is answered from the page and
reaches the tool; the read-only link's answer is refused 403 and the page says so; a
non-loopback bind refuses every request without its token."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import CapsuleFactory, run_cli
from tests.responses import call_response, text_response
from tests.served import SLEEP, Served, serve
from tests.wasm.conftest import FIXTURES
from tests.web.chromium import Chromium, Page, chromium_missing

needs_chromium = pytest.mark.skipif(chromium_missing() is not None,
                                    reason=chromium_missing() or "")

WATCHER = ("network:\n  authentication:\n    scheme: bearer\n    credentials:\n"
           "      watcher:\n        scopes: [stream/watch, GetTask]\n")
ASK = [call_response("ask", {"q": "which branch?"}), text_response("thanks")]


class WebFleet:
    """A `murmur-tui fleet --web WHERE` process and the links it printed."""

    def __init__(self, where: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tui", "fleet", "--web", where], stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=dict(os.environ))
        assert self.process.stdout is not None
        self.printed = [self.process.stdout.readline() for _ in range(3)]
        assert self.printed[0].startswith("murmur-tui fleet: serving on "), self.printed
        self.full = self.printed[1].split()[-1]
        self.watch = self.printed[2].split()[-1]

    def stop(self) -> str:
        """Ctrl+C; what it wrote to stderr."""
        self.process.send_signal(2)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
        return self.process.stderr.read() if self.process.stderr else ""


@pytest.fixture
def web_fleets() -> Iterator[list[WebFleet]]:
    started: list[WebFleet] = []
    yield started
    for fleet in started:
        fleet.stop()


@pytest.fixture
async def chromium(tmp_path: Path) -> AsyncIterator[Chromium]:
    browser = Chromium(tmp_path / "chromium-profile")
    yield browser
    await browser.close()


def operator(home: Path, door: Served) -> dict[str, str]:
    record = json.loads((home / "running" / f"{door.session_id}.json").read_text())
    return {"Authorization": f"Bearer {record['door_token']}"}


def ask(door: Served, headers: dict[str, str]) -> str:
    reply = door.rpc("SendMessage", {"message": {"messageId": f"m{time.monotonic_ns()}",
                                                 "role": "ROLE_USER",
                                                 "parts": [{"text": "ask me"}]}}, headers)
    assert reply.status_code == 200, reply.text
    return str(reply.json()["result"]["task"]["id"])


async def state(door: Served, task_id: str, headers: dict[str, str]) -> str:
    reply = await asyncio.to_thread(door.rpc, "GetTask", {"id": task_id}, headers)
    return str(reply.json()["result"]["status"]["state"])


async def until_state(door: Served, task_id: str, headers: dict[str, str], wanted: str) -> None:
    ends = time.monotonic() + 30
    while (now := await state(door, task_id, headers)) != wanted:
        assert time.monotonic() < ends, f"{task_id} is {now}, never {wanted}"
        await asyncio.sleep(0.1)


def tool_results(home: Path, door: Served) -> str:
    """What the ask tool returned, as the session recorded it: the trace's `tool_call` lines
    (name, status) and the conversation's lines holding the tool's result."""
    record = json.loads((home / "running" / f"{door.session_id}.json").read_text())
    trace = Path(record.get("records_dir") or record["workdir"]) / "trace.jsonl"
    calls = [line for line in trace.read_text().splitlines()
             if line.startswith('{"event_type":"tool_call"')]
    kept = [line for path in home.glob("conversations/asker/*/conversation.jsonl")
            for line in path.read_text().splitlines() if line.startswith('{"role":"tool"')]
    return "\n".join(calls + kept)


def tab_processes(server: int) -> list[int]:
    """The fleet processes the server runs, one per open tab: its descendants running
    `tui fleet` (textual-serve starts each through a shell)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            pid, _, rest = stat.read_text().partition(" (")
            children.setdefault(int(rest.rsplit(") ", 1)[1].split()[1]), []).append(int(pid))
        except (OSError, IndexError, ValueError):
            continue
    found, todo = [], list(children.get(server, []))
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[-3:] == [b"tui", b"fleet", b""]:
            found.append(pid)
    return found


async def until_tabs(server: int, count: int) -> None:
    ends = time.monotonic() + 30
    while len(tab_processes(server)) != count:
        assert time.monotonic() < ends, f"{tab_processes(server)} fleet processes, not {count}"
        await asyncio.sleep(0.1)


async def answer_on(page: Page, text: str) -> None:
    await page.evaluate("window.__fleetTerminal.focus()")  # the keys go to the terminal
    await page.type("a")
    await page.until(lambda shown: "your answer, Enter to send" in shown, "the answer's input")
    await page.type(text)
    await page.press("Enter")


@needs_chromium
async def test_the_fleet_in_a_browser_shows_opens_and_answers_and_the_watcher_link_cannot(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served],
        web_fleets: list[WebFleet], chromium: Chromium) -> None:
    door = serve(make_capsule(ASK * 3, extra=SLEEP + "  input_timeout_secs: 120\n" + WATCHER,
                              folder="asker", name="asker",
                              tools={"ask": FIXTURES / "ask_tool.wasm"}))
    served.append(door)
    headers = operator(murmur_home, door)
    fleet = WebFleet("127.0.0.1:0")
    web_fleets.append(fleet)
    port = fleet.full.split(":")[2].split("/")[0]
    assert fleet.full == f"http://127.0.0.1:{port}/"  # loopback: no token, as the door
    assert fleet.watch != fleet.full and fleet.watch.startswith(fleet.full)
    first = ask(door, headers)

    page = await chromium.page()
    await page.open(fleet.full)
    await page.until(lambda shown: "Needs you (1)" in shown and "which branch?" in shown,
                     "the asking session under Needs you")

    # a click on its row and Enter open the session; Ctrl+Q comes back to the fleet
    await page.click_text("asker")
    await page.press("Enter")
    attached = await page.until(lambda shown: "Needs you (" not in shown and "asker" in shown
                                and "Fleet" in shown, "the supervisor screen on the session")
    assert "Browse" in attached  # the full link's screen has the conversation browser
    await page.call("Input.dispatchKeyEvent", type="keyDown", key="q", code="KeyQ",
                    modifiers=2, windowsVirtualKeyCode=81)
    await page.call("Input.dispatchKeyEvent", type="keyUp", key="q", code="KeyQ",
                    modifiers=2, windowsVirtualKeyCode=81)
    await page.until(lambda shown: "Needs you (1)" in shown, "the fleet again")

    # answered from the page: the tool gets the answer, the task completes
    await answer_on(page, "main-from-the-page")
    await page.until(lambda shown: "Answer sent" in shown, "that the answer was sent")
    await until_state(door, first, headers, "TASK_STATE_COMPLETED")
    results = tool_results(murmur_home, door)
    assert '"tool_name":"ask"' in results and '"status":"ok"' in results
    assert "main-from-the-page" in results  # what the tool returned: the page's answer
    await until_tabs(fleet.process.pid, 1)  # one tab, one fleet process
    await page.call("Page.close")  # closing the tab ends its process
    await until_tabs(fleet.process.pid, 0)
    await page.close()

    # the read-only link watches with the watcher credential: its answer is refused
    second = ask(door, headers)
    watching = await chromium.page()
    await watching.open(fleet.watch)
    shown = await watching.until(lambda shown: "Needs you (1)" in shown, "the question")
    assert "Launch" not in shown and "Rename" not in shown  # nothing local is offered
    await answer_on(watching, "not-from-a-watcher")
    refused = await watching.until(lambda shown: "HTTP 403" in shown, "the refusal")
    assert "insufficient_scope" in refused and "watcher" in refused
    assert "Traceback" not in refused
    assert await state(door, second, headers) == "TASK_STATE_INPUT_REQUIRED"
    assert "not-from-a-watcher" not in tool_results(murmur_home, door)
    # it opens the session with the watcher credential, without the conversation browser
    await watching.press("Enter")
    attached = await watching.until(lambda shown: "Needs you (" not in shown and
                                    "Fleet" in shown, "the read-only supervisor screen")
    assert "Browse" not in attached
    await watching.call("Page.close")
    await until_tabs(fleet.process.pid, 0)
    await watching.close()

    stderr = fleet.stop()
    assert stderr == ""  # no token, no traceback, no warning: nothing at all
    logs = {path.name: path.read_text() for path in (murmur_home / "tui" / "web").glob("*")}
    assert logs == {}  # the tabs' processes wrote no error (an empty log is not kept)
    assert fleet.process.returncode == 0


def test_a_bind_beyond_loopback_refuses_every_request_without_its_token(
        murmur_home: Path, web_fleets: list[WebFleet]) -> None:
    fleet = WebFleet("0.0.0.0:0")
    web_fleets.append(fleet)
    port = fleet.full.split(":")[2].split("/")[0]
    token = fleet.full.rstrip("/").rsplit("/", 1)[-1]
    assert len(token) >= 40 and token not in fleet.watch
    here = f"http://127.0.0.1:{port}"
    with httpx.Client(timeout=10) as client:
        for path in ("/", "/ws", "/static/js/textual.js", "/not-the-token/",
                     f"/{token[:-1]}/", "/../"):
            refused = client.get(here + path)
            assert refused.status_code == 403, path
            assert "This link needs its token" in refused.text
        upgrade: dict[str, Any] = {"Connection": "Upgrade", "Upgrade": "websocket",
                                   "Sec-WebSocket-Version": "13",
                                   "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}
        assert client.get(f"{here}/ws", headers=upgrade).status_code == 403  # no app spawned
        page = client.get(f"{here}/{token}/")
        assert page.status_code == 200 and f"/{token}/ws" in page.text
        assert page.headers["Referrer-Policy"] == "no-referrer"
        assert client.get(f"{here}/{token}/static/js/textual.js").status_code == 200
        other = client.get(f"{here}/{token}/ws", headers={**upgrade,
                                                          "Origin": "http://evil.example"})
        assert other.status_code == 403  # another site's page cannot open the fleet


@pytest.mark.parametrize(("where", "said"), [
    ("127.0.0.1:99999", "--web 127.0.0.1:99999: the port must be a number from 0 to 65535"),
    ("127.0.0.1:²", "--web 127.0.0.1:²: the port must be a number from 0 to 65535"),
    ("203.0.113.9:0", "--web 203.0.113.9:0: cannot listen there: "),
])
def test_a_place_that_cannot_be_served_on_is_refused_before_anything_is_served(
        murmur_home: Path, where: str, said: str) -> None:
    result = run_cli("fleet", "--web", where, timeout=60)
    assert result.returncode == 2 and result.stdout == ""  # no link printed
    assert result.stderr.startswith(f"murmur-tui: error: {said}"), result.stderr
    assert "Traceback" not in result.stderr
