"""Durable questions with real processes: a headless session is killed (SIGKILL) while its tool
waits for an answer, then `launch --resume SESSION --headless --answer X` goes on — a replay-safe
call asks again (marked "asked before the restart") and gets X once, a replay-unsafe one is not
run again, a journaled answer is delivered once, a passed deadline ends the task."""

from __future__ import annotations

import json
import shutil
import stat
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.capsules import set_driver_config, write_capsule
from tests.conftest import read_jsonl, run_cli, started_line
from tests.responses import call_response, text_response
from tests.served import killed_once
from tests.wasm.conftest import FIXTURES, WasmCapsule
from tui.core.loop.journal import JOURNAL
from tui.core.loop.journal_read import continued

QUESTION = {"q": "which branch?"}
PROMPT = json.dumps(QUESTION, separators=(",", ":"))
SAFE = "    effect: read-only\n    replay: safe\n"


def ask_tool(tmp_path: Path, contract: str | None) -> str:
    """The asking fixture as an `artifacts:` entry: a tool folder with its contract, or the
    bare `.wasm` (derived: mutating + unsafe)."""
    if contract is None:
        return f"  - name: ask\n    runtime: tool\n    source: {FIXTURES}/ask_tool.wasm\n"
    folder = tmp_path / "ask-tool"
    folder.mkdir(exist_ok=True)
    shutil.copy(FIXTURES / "ask_tool.wasm", folder / "ask.wasm")
    (folder / "murmur.yaml").write_text(
        f"name: ask\ndescription: Asks.\nx-murmur-tui:\n  contract:\n{contract}",
        encoding="utf-8")
    return f"  - name: ask\n    runtime: tool\n    source: {folder}\n"


def asking_capsule(tmp_path: Path, name: str, extra: str = "") -> Path:
    """A capsule of its own whose model calls the replay-safe asking tool once (a screen's or
    the fleet's durable-resume test)."""
    return write_capsule(tmp_path / "capsule",
                         [call_response("ask", QUESTION), text_response("never")], name=name,
                         max_turns=None, shell=(), artifacts=ask_tool(tmp_path, SAFE),
                         extra=extra)


def killed_while_asking(root: Path, home: Path) -> Path:
    """Launch headless, wait until the question is journaled, SIGKILL: the dead session's
    folder."""
    return killed_once(root, home, "pick one", f"workdir/*/{JOURNAL}", '"asked"',
                       "asked").parent


def resume(root: Path, dead: Path, responses: list[dict[str, Any]], *answers: str,
           task: str | None = "go on") -> tuple[subprocess.CompletedProcess[str], Path]:
    """`launch --resume DEAD --headless` with a new script; the model's first reply comes after
    the rebuilt turn."""
    (root / "script.json").write_text(json.dumps(responses), encoding="utf-8")
    args = [a for value in answers for a in ("--answer", value)]
    args += ["--task", task] if task is not None else []
    done = run_cli("launch", str(root), "--headless", "--json", "--resume", dead.name, *args,
                   timeout=120)
    assert done.returncode == 0, done.stderr
    started = started_line(done.stdout)
    return done, Path(started["trace_path"]).parent


def events(done: subprocess.CompletedProcess[str], name: str) -> list[dict[str, Any]]:
    found = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return [e for e in found if e.get("event") == name]


def lines(folder: Path, event: str) -> list[dict[str, Any]]:
    path = folder / JOURNAL
    return [x for x in read_jsonl(path) if x["event"] == event] if path.exists() else []


def test_a_safe_call_asks_again_after_the_restart_and_gets_the_answer_once(
        wasm_capsule: WasmCapsule, tmp_path: Path, murmur_home: Path) -> None:
    root = wasm_capsule([call_response("ask", QUESTION), text_response("never")],
                        ask_tool(tmp_path, SAFE))
    dead = killed_while_asking(root, murmur_home)
    asked = lines(dead, "asked")
    assert len(asked) == 1 and asked[0]["prompt"] == PROMPT
    assert stat.S_IMODE((dead / JOURNAL).stat().st_mode) == 0o600
    done, later = resume(root, dead, [text_response("done")], "main")
    shown = events(done, "InputRequested")
    assert [e["before_restart"] for e in shown] == [True]
    again = lines(later, "asked")
    assert [q["id"] for q in again] == [asked[0]["id"]]  # the same question, the same id
    assert [a["answer"] for a in lines(later, "answered")] == ["main"]
    finished = events(done, "ToolCallFinished")
    assert len(finished) == 1 and "main" in finished[0]["output"]
    assert (later / "out" / "result.txt").read_text() == "done"
    # the record: the dead turn left nothing; the rebuilt one an assistant and a tool message,
    # then the new task and the model's answer
    record = Path(started_line(done.stdout)["record_path"])
    roles = [m["role"] for m in read_jsonl(record)]
    assert roles == ["user", "assistant", "tool", "user", "assistant"]
    assert "main" in json.dumps(read_jsonl(record)[2])
    assert [w for w in events(done, "Warning") if w["code"] == "W-RESUME-TURN"]


def test_an_unsafe_call_is_not_run_again_and_the_model_reads_why(
        wasm_capsule: WasmCapsule, tmp_path: Path, murmur_home: Path) -> None:
    root = wasm_capsule([call_response("ask", QUESTION), text_response("never")],
                        ask_tool(tmp_path, None))
    dead = killed_while_asking(root, murmur_home)
    log = tmp_path / "requests.jsonl"
    set_driver_config(root, requests_log=log)
    done, later = resume(root, dead, [text_response("understood")], "main")
    assert not events(done, "InputRequested")  # nothing was asked: the tool did not run
    assert not lines(later, "asked") and not lines(later, "answered")
    requests = [json.loads(line) for line in log.read_text().splitlines()]
    told = json.dumps([m for m in requests[-1]["messages"] if m["role"] == "tool"])
    assert "was interrupted when session" in told and "outcome is uncertain" in told
    assert "which branch?" in told and "not answered" in told
    assert (later / "out" / "result.txt").read_text() == "understood"


def test_a_journaled_answer_is_delivered_once(
        wasm_capsule: WasmCapsule, tmp_path: Path, murmur_home: Path) -> None:
    root = wasm_capsule([call_response("ask", QUESTION), text_response("never")],
                        ask_tool(tmp_path, SAFE))
    dead = killed_while_asking(root, murmur_home)
    # killed after the answer was journaled and before the tool had it (murmur-tui's own line,
    # sealed with the dead session's key after its last one)
    continued(dead, dead.name, murmur_home).answered(lines(dead, "asked")[0]["id"], "journaled")
    done, later = resume(root, dead, [text_response("done")])
    assert not events(done, "InputRequested")  # taken from the journal, not asked
    said = events(done, "InputAnswered")  # and the transcript says so
    assert [(e["answer"], e["journaled"]) for e in said] == [("journaled", True)]
    taken = lines(later, "answered")
    assert [(a["answer"], a["taken_from"]) for a in taken] == [("journaled", dead.name)]
    assert "journaled" in events(done, "ToolCallFinished")[0]["output"]
    assert [t["by_session"] for t in lines(dead, "taken")] == [later.name]
    # resumed again, the answer is not delivered a second time: the later session finished
    # the turn (the record holds it), so nothing is rebuilt
    done, third = resume(root, dead, [text_response("done")], "fresh")
    assert not events(done, "InputRequested") and not lines(third, "answered")
    assert not [w for w in events(done, "Warning") if w["code"] == "W-RESUME-TURN"]


def test_a_deadline_that_passed_while_down_ends_the_task_input_timeout(
        wasm_capsule: WasmCapsule, tmp_path: Path, murmur_home: Path) -> None:
    root = wasm_capsule([call_response("ask", QUESTION), text_response("never")],
                        ask_tool(tmp_path, SAFE),
                        extra="lifecycle:\n  input_timeout_secs: 1\n")
    dead = killed_while_asking(root, murmur_home)
    deadline = lines(dead, "asked")[0]["deadline_ms"]
    while time.time() * 1000 <= deadline:
        time.sleep(0.1)
    (root / "script.json").write_text(json.dumps([text_response("late")]))
    done = run_cli("launch", str(root), "--headless", "--json", "--resume", dead.name,
                   "--task", "go on", "--answer", "too late", timeout=120)
    assert done.returncode != 0
    trace = Path(started_line(done.stdout)["trace_path"])
    failed = [x for x in read_jsonl(trace) if x["event_type"] == "task_failed"]
    assert failed and failed[0]["cause"] == "input_timeout"
    assert not lines(trace.parent, "answered")
