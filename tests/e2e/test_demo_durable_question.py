"""The bundled demo shows the durable question: its `ask-user` tool declares its contract
(read-only, replay safe: docs/tools.md "Contracts"), so a demo killed (SIGKILL) while its
question is open resumes to the same question, marked as asked before the restart, and
finishes when answered (docs/tools.md "Resuming"). Real processes, a real signal, the demo's
own files as `launch` runs them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.conftest import read_jsonl, run_cli, started_line
from tui.core.loop.journal import JOURNAL

PROMPT = "The demo tool would like to know: shall it list the workdir? (yes/no)"


def json_events(stdout: str, name: str) -> list[dict[str, Any]]:
    found = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    return [e for e in found if e.get("event") == name]


def demo_killed_while_asking(home: Path, cwd: Path) -> Path:
    """`murmur-tui launch --headless` (no CAPSULE: the demo) with stdin held open and nothing
    typed, SIGKILLed once its journal holds the question (`asked`): the dead session's
    folder."""
    env = dict(os.environ, MURMUR_HOME=str(home))
    process = subprocess.Popen([sys.executable, "-m", "tui", "launch", "--headless"], env=env,
                               cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        found: list[Path] = []
        while time.monotonic() < deadline and not found:
            found = [path for path in home.glob(f"workdirs/murmur-demo/*/{JOURNAL}")
                     if '"asked"' in path.read_text(encoding="utf-8")]
            time.sleep(0.05)
        assert found, "the demo never asked its question"
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(60)
    assert process.returncode == -signal.SIGKILL
    return found[0].parent


def test_a_killed_demo_asks_its_question_again_and_finishes(
        tmp_path: Path, murmur_home: Path) -> None:
    dead = demo_killed_while_asking(murmur_home, tmp_path)
    asked = [line for line in read_jsonl(dead / JOURNAL) if line["event"] == "asked"]
    assert [q["prompt"] for q in asked] == [PROMPT]
    assert not (dead / "out" / "result.txt").exists()  # it died before the answer

    # headless text: the question is asked again and says it was asked before the restart
    done = run_cli("launch", "--headless", "--resume", "@1", "--answer", "yes", cwd=tmp_path,
                   timeout=120)
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stdout.splitlines() if PROMPT in line]
    assert len(said) == 1 and "asked before the restart" in said[0], done.stdout  # once
    assert "interrupted" not in done.stdout and "uncertain" not in done.stdout
    assert "← ask-user ok" in done.stdout
    assert "task ok" in done.stdout and "session ok" in done.stdout

    # the resumed session's own journal: the same question, the same id, answered once
    later = next(p for p in murmur_home.glob("workdirs/murmur-demo/*")
                 if p.name != dead.name and (p / JOURNAL).exists())
    again = [q for q in read_jsonl(later / JOURNAL) if q["event"] == "asked"]
    assert [(q["id"], q["prompt"]) for q in again] == [(asked[0]["id"], PROMPT)]
    answered = [a["answer"] for a in read_jsonl(later / JOURNAL) if a["event"] == "answered"]
    assert answered == ["yes"]
    assert (later / "out" / "result.txt").read_text(encoding="utf-8").startswith("Checked:")


def test_a_killed_demo_resumed_as_json_marks_the_question_before_restart(
        tmp_path: Path, murmur_home: Path) -> None:
    """The same over `--json`: one `InputRequested` with `before_restart: true`, its tool's
    own name, and the call that asked finishes with the answer."""
    dead = demo_killed_while_asking(murmur_home, tmp_path)
    done = run_cli("launch", "--headless", "--json", "--resume", dead.name, "--answer", "yes",
                   cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert started_line(done.stdout)["resumed_from"] == dead.name
    shown = json_events(done.stdout, "InputRequested")
    assert [(e["prompt"], e["before_restart"]) for e in shown] == [(PROMPT, True)]
    finished = [e for e in json_events(done.stdout, "ToolCallFinished")
                if e["tool_name"] == "ask-user"]
    assert len(finished) == 1 and "The user answered: yes" in finished[0]["output"]
    # the script goes on where the killed demo stopped: ask-user once, then bash
    started = [e["call_id"] for e in json_events(done.stdout, "ToolCallStarted")]
    assert started == ["call_demo_1", "call_demo_2"]
    warnings = {w["code"] for w in json_events(done.stdout, "Warning")}
    assert "W-RESUME-TURN" in warnings and "W-TOOL-INTERRUPTED" not in warnings


def test_the_demo_declares_its_question_tool_read_only_and_safe(
        tmp_path: Path, murmur_home: Path) -> None:
    """tools/contracts.json (docs/tools.md "Fingerprints"): the demo's ask-user contract is
    the one its own murmur.yaml declares, not derived from its grants."""
    done = run_cli("launch", "--headless", "--json", "--answer", "yes", cwd=tmp_path,
                   timeout=120)
    assert done.returncode == 0, done.stderr
    workdir = Path(started_line(done.stdout)["trace_path"]).parent
    contracts = json.loads((workdir / "tools" / "contracts.json").read_text(encoding="utf-8"))
    ask = contracts["ask-user"]
    assert (ask["source"], ask["effect"], ask["replay"], ask["capabilities"]) == (
        "declared", "read-only", "safe", [])
    assert contracts["bash"]["source"] == "built-in"
