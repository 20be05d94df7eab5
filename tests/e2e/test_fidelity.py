"""What real Murmur capsules expect of the runtime, end to end from `launch --headless`:
a script capsule sees a tool's own result, the shell knows who it is, compaction without a
hook is declared, `task_acceptance: none` with no task ends at once, and MURMUR.md is laid out.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from tests.capsules import set_driver_config
from tests.conftest import CapsuleFactory, read_jsonl, run_cli
from tests.e2e.test_language_guests import env_for, guest
from tests.responses import text_response, tool_response


def events_of(stdout: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


@pytest.mark.slow  # builds two Python guests (componentize-py)
def test_a_script_capsule_sees_the_tools_own_result(tmp_path: Path, murmur_home: Path) -> None:
    tool = guest("py_tool")
    root = tmp_path / "script-capsule"
    root.mkdir()
    shutil.copy(guest("py_capsule"), root / "capsule.wasm")
    (root / "murmur.yaml").write_text(
        "name: script\nversion: '1'\nartifacts:\n"
        f"  - name: py-tool\n    runtime: tool\n    source: {tool}\n"
        "    capabilities:\n      limits: {memory_bytes: 134217728}\n")
    result = run_cli("launch", str(root), "--headless", "--json", env=env_for(murmur_home),
                     timeout=600)
    assert result.returncode == 0, result.stderr
    events = events_of(result.stdout)
    start = next(e for e in events if e["event"] == "SessionStarted")
    written = json.loads((Path(str(start["workdir"])) / "out" / "result.txt").read_text())
    # the tool returned summary "echo" and the input as data: both arrive as they were
    assert written["echo"]["status"] == "passed" and written["echo"]["summary"] == "echo"
    assert json.loads(written["echo"]["data"]) == {"op": "echo", "x": 1}
    assert written["echo"]["truncated"] is False
    assert written["echo"]["metadata"][0][0] == "log_path"
    # a result with no data keeps data none and its own summary
    assert written["write"]["data"] is None and written["write"]["summary"] == "wrote note.txt"
    assert ["state_effect", "mutate"] in written["write"]["metadata"]
    assert "not declared in manifest allowlist" in written["undeclared"]["error"]
    finished = [e for e in events if e["event"] == "ToolCallFinished"]
    assert [e["tool_name"] for e in finished] == ["py-tool", "py-tool"]


def test_the_shell_knows_which_capsule_and_session_it_runs_in(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    command = 'printf "%s|%s|%s|%s" "$MURMUR_CAPSULE_NAME" "$MURMUR_CAPSULE_VERSION" ' \
              '"$MURMUR_SESSION_ID" "$MURMUR_INFERENCE_MODEL"'
    root = make_capsule([tool_response(command), text_response("done")], name="who-am-i")
    result = run_cli("launch", str(root), "--headless", "--json", "--task", "who")
    assert result.returncode == 0, result.stderr
    events = events_of(result.stdout)
    session_id = events[0]["session_id"]
    shell = next(e for e in events if e["event"] == "ShellExecuted")
    assert shell["stdout"] == f"who-am-i|1.0.0|{session_id}|test-model"


def test_compaction_due_with_no_hook_is_declared_once_a_turn(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    root = make_capsule([tool_response("true"), text_response("done")],
                        extra="context:\n  max_tokens: 100\n")
    result = run_cli("launch", str(root), "--headless", "--json", "--task", "go")
    assert result.returncode == 0, result.stderr
    start = events_of(result.stdout)[0]
    trace = read_jsonl(Path(str(start["trace_path"])))
    declined = [x for x in trace if x["event_type"] == "compaction_declined"]
    assert [(x["turn"], x["reason"]) for x in declined] == [(0, "no_hook_replacement"),
                                                            (1, "no_hook_replacement")]
    log = (Path(str(start["trace_path"])).parent / "logs" / "bootstrap.log").read_text()
    assert log.count("[compaction] threshold reached but no hook returned replace-context; "
                     "continuing without compaction") == 2


def test_task_acceptance_none_without_a_task_starts_and_ends_at_once(
        make_capsule: CapsuleFactory, murmur_home: Path, tmp_path: Path) -> None:
    requests = tmp_path / "requests.jsonl"
    root = make_capsule([text_response("never sent")],
                        extra="lifecycle:\n  task_acceptance: none\n  shell_grace_secs: 0\n")
    set_driver_config(root, requests_log=requests)
    started = time.monotonic()
    result = run_cli("launch", str(root), "--headless", "--json")
    elapsed = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    kinds = [e["event"] for e in events_of(result.stdout)]
    assert kinds[0] == "SessionStarted" and kinds[-1] == "SessionEnded"
    assert "TaskStarted" not in kinds and "TurnStarted" not in kinds
    assert not requests.exists()  # no inference call was made
    assert events_of(result.stdout)[-1]["exit_status"] == "ok"
    assert elapsed < 30  # a generous bound: it ends, it does not wait for a task


def test_the_workdir_has_a_murmur_md(make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    skill = "  - name: tidy\n    runtime: skill\n    source: skills/tidy\n"
    root = make_capsule([text_response("done")], shell=("bash", "git"))
    (root / "skills" / "tidy").mkdir(parents=True)
    (root / "skills" / "tidy" / "skill.md").write_text("Tidy `up`\nthe workdir.\n")
    manifest = (root / "murmur.yaml").read_text().replace(
        "artifacts:\n", "artifacts:\n" + skill)
    (root / "murmur.yaml").write_text(manifest + "context:\n  max_tokens: 50000\n")
    result = run_cli("launch", str(root), "--headless", "--json", "--task", "hi")
    assert result.returncode == 0, result.stderr
    start = events_of(result.stdout)[0]
    text = (Path(str(start["workdir"])) / "MURMUR.md").read_text()
    assert text.index("## Identity") < text.index("## Capsule")
    assert f"- Session ID: {start['session_id']}" in text
    assert "- Capsule: test-capsule v1.0.0" in text and "- Model: test-model" in text
    assert "50000 tokens (compaction not configured)" in text
    assert "- `bash`" in text and "- `git`" in text
    assert "**tidy** — Tidy up" in text  # the publisher's text on one line, no backticks
