"""Three machines on this one, in one fleet under Pilot: three `MURMUR_HOME`s, each serving a
real `launch --headless --serve` session on its own loopback address — 127.0.0.1 (this
machine, found by its running record), 127.0.0.2 (listed by `doors:` in fleet.yaml, its door
asking for the token a file holds) and 127.0.0.3 (behind a discovery command, a script running
`murmur-tui ps --json` with that machine's home) — plus a `--host` whose door nobody serves.

Every session appears under its host; a question asked on machine 3 is answered from the fleet
and reaches the tool; machine 3's discovery made to fail makes it one unreachable host saying
why (its row leaves the list) and, fixed, brings its row back; a task sent to machine 2 runs
there, machine 3's session stopped from the fleet ends and its row says so; the token never
shows."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import CapsuleFactory
from tests.fleet.test_fleet_names import screen_rows, shown
from tests.fleet.test_fleet_screen import ask_capsule, until_state
from tests.responses import text_response
from tests.served import SLEEP, Served
from tests.waits import wait_until
from tui.app.fleet.app import FleetApp
from tui.app.screens.confirm import ConfirmScreen
from tui.core.hosts.config import host_argument

AUTH = "network:\n  authentication:\n    scheme: bearer\n"
REFUSED = "ssh: connect to host machine-3 port 22: Connection refused"


def serve_in(root: Path, home: Path, address: str) -> Served:
    """`murmur-tui launch ROOT --headless --json --serve ADDRESS` on the machine `home` is."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tui", "launch", str(root), "--headless", "--json", "--serve",
         address], stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
        text=True, env={**os.environ, "MURMUR_HOME": str(home)})
    assert process.stdout is not None
    while True:
        line = process.stdout.readline()
        if not line:
            raise AssertionError(process.stderr.read() if process.stderr else "no readiness")
        ready = json.loads(line)
        if "event" not in ready:
            return Served(process, ready)


def token_of(home: Path, session_id: str) -> str:
    """What `murmur-tui token` prints on that machine."""
    said = subprocess.run([sys.executable, "-m", "tui", "token", session_id],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "MURMUR_HOME": str(home)})
    assert said.returncode == 0, said.stderr
    return said.stdout.strip()


def discovery_script(folder: Path, home: Path, fail: Path) -> Path:
    """Machine 3's `discover:`: `murmur-tui ps --json` there, or ssh's refusal while `fail`
    exists."""
    script = folder / "discover-3.sh"
    script.write_text(f"#!/bin/sh\nif [ -e '{fail}' ]; then echo '{REFUSED}' >&2; exit 255; "
                      f"fi\nMURMUR_HOME='{home}' exec '{sys.executable}' -m tui ps --json\n")
    script.chmod(0o700)
    return script


def notes(app: FleetApp) -> list[str]:
    return [str(note.message) for note in app._notifications]


async def test_three_machines_in_one_fleet_a_question_answered_on_the_third_and_it_going_away(
        tmp_path: Path, murmur_home: Path, make_capsule: CapsuleFactory,
        served: list[Served], caplog: pytest.LogCaptureFixture) -> None:
    home2, home3 = tmp_path / "machine-2", tmp_path / "machine-3"
    local = serve_in(make_capsule([text_response("x")], extra=SLEEP, folder="here",
                                  name="here"), murmur_home, "127.0.0.1:0")
    served.append(local)
    second = serve_in(make_capsule([text_response("y")], extra=SLEEP + AUTH, folder="authed",
                                   name="authed"), home2, "127.0.0.2:0")
    served.append(second)
    third = serve_in(ask_capsule(make_capsule, "asker"), home3, "127.0.0.3:0")
    served.append(third)
    assert (second.url.split(":")[1], third.url.split(":")[1]) == ("//127.0.0.2",
                                                                    "//127.0.0.3")
    secret = token_of(home2, second.session_id)
    token_file = tmp_path / "machine-2.token"
    token_file.write_text(secret + "\n")
    token_file.chmod(0o600)
    fail = tmp_path / "machine-3-down"
    script = discovery_script(tmp_path, home3, fail)
    (murmur_home / "tui").mkdir(parents=True, exist_ok=True)
    (murmur_home / "tui" / "fleet.yaml").write_text(
        f"notify:\n  desktop: false\nhosts:\n"
        f"  - name: machine-2\n    doors: [{second.url}]\n    token_file: {token_file}\n"
        f"    interval: 1\n"
        f"  - name: machine-3\n    discover: ['{script}']\n    interval: 1\n")
    app = FleetApp(murmur_home, given_hosts=[host_argument("spare=http://127.0.0.4:9", None)])
    async with app.run_test(size=(160, 40)) as pilot:
        assert list(app.hosts) == ["", "machine-2", "machine-3", "spare"]
        ids = {local.session_id: "", second.session_id: "machine-2",
               third.session_id: "machine-3"}
        await wait_until(pilot, lambda: {key: s.host for key, s in app.sessions.items()} == ids
                         and all(s.connection == "live" for s in app.sessions.values()),
                         what=lambda: {k: (s.host, s.connection, s.why_gone)
                                       for k, s in app.sessions.items()})
        assert {s.capsule for s in app.sessions.values()} == {"here", "authed", "asker"}
        await wait_until(pilot, lambda: all(shown(app, f"…{key[-9:]} {capsule}") for key,
                                            capsule in [(local.session_id, "here"),
                                                        (second.session_id, "authed"),
                                                        (third.session_id, "asker")]))
        await wait_until(pilot, lambda: app.hosts["spare"].state == "unreachable")
        spare = app.hosts["spare"]
        assert spare.why.startswith("no door answers: ") and "127.0.0.4:9" in spare.why
        assert spare.retry_at is not None and spare.failures >= 1
        assert [app.hosts[name].state for name in ("", "machine-2", "machine-3")] == \
            ["ok"] * 3
        assert app.hosts["machine-3"].where == "discover-3.sh"
        assert app.hosts["machine-2"].where == second.url.removeprefix("http://")

        # a question on machine 3, answered from the fleet, reaches its tool
        asked = await asyncio.to_thread(third.send, "ask me")
        row = app.sessions[third.session_id]
        await wait_until(pilot, lambda: row.group == "needs")
        app.fleet.rows.select_key(third.session_id)
        await pilot.press("a")
        assert app.fleet.input.display and "which branch?" in str(app.fleet.hint.render())
        await pilot.press(*"release-7", "enter")
        done = await until_state(third, asked["id"], "TASK_STATE_COMPLETED")
        assert done["artifacts"][0]["parts"][0]["text"] == "thanks"  # type: ignore[index]
        # the tool's result, in the session's conversation on machine 3
        results = [json.loads(line) for file in home3.glob("conversations/asker/*/"
                                                            "conversation.jsonl")
                   for line in file.read_text().splitlines() if '"role":"tool"' in line]
        assert [part["text"] for result in results for part in result["content"]] == [
            "<untrusted-content source=tool:ask>\nrelease-7\n</untrusted-content>"]
        await wait_until(pilot, lambda: row.group == "done")
        assert f"Answer sent to {third.session_id}." in notes(app)

        # machine 3 goes away: one unreachable host saying why, its row off the list …
        fail.touch()
        await wait_until(pilot, lambda: app.hosts["machine-3"].state == "unreachable")
        down = app.hosts["machine-3"]
        assert down.why == f"discover-3.sh exited with status 255: {REFUSED}"
        assert down.retry_at is not None and down.retry_at > time.monotonic() - 1
        await wait_until(pilot, lambda: third.session_id not in app.sessions)
        await wait_until(pilot, lambda: not shown(app, "asker"))
        assert f"machine-3 cannot be reached: {down.why}" in notes(app)
        assert second.session_id in app.sessions and local.session_id in app.sessions
        # … and back, its row with it
        fail.unlink()
        await wait_until(pilot, lambda: app.hosts["machine-3"].state == "ok" and
                         third.session_id in app.sessions and
                         app.sessions[third.session_id].connection == "live")
        assert app.sessions[third.session_id].host == "machine-3"
        assert app.hosts["machine-3"].why == "" and app.hosts["machine-3"].failures == 0
        await wait_until(pilot, lambda: shown(app, f"…{third.session_id[-9:]} asker"))
        assert "machine-3 answers again." in notes(app)

        # a task sent to machine 2 from the fleet (its door takes only its token) runs there
        app.fleet.rows.select_key(second.session_id)
        await pilot.press("t")
        await pilot.press(*"say hi", "enter")
        await wait_until(pilot, lambda: app.sessions[second.session_id].last_task_status == "ok")
        assert app.sessions[second.session_id].task == "say hi"
        # machine 3's session stopped from the fleet ends there; its row says it ended, even
        # once machine 3 no longer lists it
        app.fleet.rows.select_key(third.session_id)
        await pilot.press("S")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("enter")
        assert await asyncio.to_thread(third.process.wait, 30) == 0
        ended = app.sessions[third.session_id]
        await wait_until(pilot, lambda: ended.dead and third.session_id not in app.links)
        assert ended.status.startswith("ended ") and ended.group == "done"

        # the token never shows: not on the screen, in a note, a log line or a fleet file
        seen = "\n".join(screen_rows(app) + notes(app) + [caplog.text, repr(app.hosts),
                                                           repr(app.remote.configs)])
        assert secret not in seen
        # Enter on machine 2's row: the screen is to attach to its door, with its token
        app.fleet.rows.select_key(second.session_id)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.open_request is not None)
        target = app.open_request
        assert target is not None and (target.session_id, target.url, target.host,
                                       target.token) == (second.session_id, second.url,
                                                         "machine-2", secret)
        assert secret not in repr(target)
    for path in (murmur_home / "tui").rglob("*"):
        if path.is_file():
            assert secret not in path.read_text(errors="replace"), path


def test_a_bad_host_on_the_command_line_refuses_the_fleet_before_any_screen(
        tmp_path: Path, murmur_home: Path) -> None:
    from tests.conftest import run_cli

    for args, said in [
        (["--host", "build-3"], "--host build-3: expected NAME=URL (build-3=http://build-3:7401)"),
        (["--host", "b=ftp://x:1"], "--host b=ftp://x:1: its URL: not a door URL: its scheme "
                                    "is not http or https"),
        (["--host", "b=http://x:1", "--host", "b=http://y:2"], "--host b: given twice; a "
                                                               "host's name is unique"),
        (["--token-file", str(tmp_path)], "--token-file is the --host doors' token: give "
                                          "--host NAME=URL"),
        (["--host", "b=http://x:1", "--token-file", str(tmp_path / "none")],
         f"--token-file {tmp_path / 'none'}: no such file"),
    ]:
        refused = run_cli("fleet", *args)
        assert refused.returncode == 2, refused.stderr
        assert said in refused.stderr
        assert "Traceback" not in refused.stderr
    token = tmp_path / "token"
    token.write_text("tok-ok-1\n")
    # a good --host passes: only the missing terminal stops it then
    passes = run_cli("fleet", "--host", "b=http://127.0.0.1:9", "--token-file", str(token))
    assert passes.returncode == 2 and "fleet needs a terminal" in passes.stderr
