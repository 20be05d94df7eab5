"""`attach` and `fleet` are screens: run with a pipe for stdin and stdout they refuse at once
(exit 2, one line naming what they need), as `browse` does, instead of writing escape codes
into the pipe and waiting for keys that never come. Real processes: a served session from
`launch --headless --serve` (its running record as Murmur writes it, murmur-newest.md "ps and
running records") and `murmur-tui` on pipes."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import CapsuleFactory, run_cli
from tests.responses import text_response
from tests.served import SLEEP, Served, serve


def refused_plainly(result: subprocess.CompletedProcess[str], command: str) -> None:
    assert result.returncode == 2, result.stderr
    assert result.stderr == (
        f"murmur-tui: error: {command} needs a terminal: its stdin and stdout are not one\n")
    assert result.stdout == ""  # no escape code, nothing at all


def test_fleet_on_a_pipe_refuses_and_writes_no_escape_code(murmur_home: Path) -> None:
    refused_plainly(run_cli("fleet", timeout=60), "fleet")


def test_attach_on_a_pipe_refuses_and_writes_no_escape_code(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served]) -> None:
    door = serve(make_capsule([text_response("x")], extra=SLEEP))
    served.append(door)
    refused_plainly(run_cli("attach", door.session_id, timeout=60), "attach")
    assert door.process.poll() is None  # the session it named runs on, untouched
