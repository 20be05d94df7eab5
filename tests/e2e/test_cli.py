"""`murmur-tui launch --headless` end to end: real subprocesses, real files."""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path

from tests.conftest import CapsuleFactory, read_jsonl, run_cli
from tests.responses import text_response, tool_response


def test_demo_runs_headless_json_and_leaves_murmur_files(murmur_home: Path) -> None:
    result = run_cli("launch", "--headless", "--json", "--answer", "yes")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    kinds = [e["event"] for e in events]
    assert kinds[0] == "SessionStarted" and kinds[-1] == "SessionEnded"
    for needed in ("TaskStarted", "TextDelta", "ThinkingDelta", "ToolCallFinished",
                   "ShellExecuted", "InputRequested", "InputAnswered", "HookFault", "Compacted",
                   "TaskReopened", "TaskEnded"):
        assert needed in kinds
    asked = next(e for e in events if e["event"] == "InputRequested")
    assert asked["tool_name"] == "ask-user" and "shall it list the workdir" in asked["prompt"]
    tool = next(e for e in events if e["event"] == "ToolCallFinished")
    assert "The user answered: yes" in tool["output"]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    start, end = events[0], events[-1]
    assert end["exit_status"] == "ok"
    workdir = Path(start["workdir"])
    assert workdir.parent == murmur_home / "workdirs" / "murmur-demo"
    # trace: the §2 envelope and a framed session
    trace = read_jsonl(Path(start["trace_path"]))
    assert trace[0]["event_type"] == "session_start"
    assert trace[-1]["event_type"] == "session_end"
    assert trace[0]["session_id"] == start["session_id"] == workdir.name
    # the demo's hooks: a recorded fault, a committed compaction, a reopened task
    kinds_traced = [line["event_type"] for line in trace]
    assert "hook_dispatch_error" in kinds_traced
    compaction = next(line for line in trace if line["event_type"] == "compaction")
    assert compaction["tokens_after"] < compaction["tokens_before"]
    assert kinds_traced.index("compaction") < kinds_traced.index("task_reopened")
    assert any(line.get("origin") == "hook:summarise-hook" for line in trace
               if line["event_type"] == "inference")
    # record: §3 lines under MURMUR_HOME, 0700 folders
    record = Path(start["record_path"])
    assert record.is_relative_to(murmur_home / "conversations" / "murmur-demo")
    messages = read_jsonl(record)
    # the summary is recorded beside what it replaced; then the answer, the reviewer's
    # request and the checked answer
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant", "tool",
                                             "user", "assistant", "user", "assistant"]
    assert messages[5]["content"][0]["text"].startswith("Summary so far")
    assert all(re.fullmatch(r"msg_[0-9a-f]{32}", m["id"]) for m in messages)
    assert stat.S_IMODE(record.parent.stat().st_mode) == 0o700
    # result: §5.7, the final answer's text
    answer = (workdir / "out" / "result.txt").read_text()
    task_end = next(e for e in events if e["event"] == "TaskEnded")
    assert answer == task_end["result"] and answer.startswith("Checked: the workdir holds")


def test_demo_human_output(murmur_home: Path) -> None:
    result = run_cli("launch", "--headless", "--task", "Say what is here.", "--answer", "no")
    assert result.returncode == 0, result.stderr
    assert "task tsk_" in result.stdout and ": Say what is here." in result.stdout
    assert "? ask-user asks: The demo tool would like to know" in result.stdout
    assert "answered: no" in result.stdout
    assert "! hook noisy-hook on-tool-call: returned artifact" in result.stdout
    assert "→ bash" in result.stdout and "session ok" in result.stdout


def test_demo_asks_on_stdin_when_no_answer_is_given(murmur_home: Path) -> None:
    result = run_cli("launch", "--headless", "--json", input_text="sure\n")
    assert result.returncode == 0, result.stderr
    assert "ask-user asks: The demo tool would like to know" in result.stderr
    answered = [json.loads(line) for line in result.stdout.splitlines()
                if '"InputAnswered"' in line]
    assert answered[0]["answer"] == "sure"


def test_broken_manifest_exits_2_naming_file_key_and_line(tmp_path: Path) -> None:
    capsule = tmp_path / "broken"
    capsule.mkdir()
    (capsule / "murmur.yaml").write_text("name: broken\nversion: '1'\ninference:\n"
                                         "  model: m\n  max_turns: lots\n")
    result = run_cli("launch", str(capsule), "--headless")
    assert result.returncode == 2
    assert f"{capsule / 'murmur.yaml'}:5: inference.max_turns: expected an integer" \
        in result.stderr
    assert result.stdout == ""
    assert not (capsule / "workdir").exists()


def test_unreadable_yaml_exits_2(tmp_path: Path) -> None:
    capsule = tmp_path / "bad"
    capsule.mkdir()
    (capsule / "murmur.yaml").write_text("name: [unclosed\n")
    result = run_cli("launch", str(capsule), "--headless")
    assert result.returncode == 2 and "not valid YAML" in result.stderr


def test_missing_capsule_exits_2(tmp_path: Path) -> None:
    result = run_cli("launch", str(tmp_path / "nowhere"), "--headless")
    assert result.returncode == 2 and "no such file" in result.stderr


def test_bad_context_exits_2_and_creates_nothing(make_capsule: CapsuleFactory,
                                                 murmur_home: Path) -> None:
    root = make_capsule([text_response("x")])
    result = run_cli("launch", str(root), "--headless", "--context", "a/b")
    assert result.returncode == 2 and "single path segment" in result.stderr
    assert not murmur_home.exists() and not (root / "workdir").exists()


def test_failed_task_exits_1(make_capsule: CapsuleFactory) -> None:
    root = make_capsule([tool_response("true")])
    result = run_cli("launch", str(root), "--headless", "--task", "t")
    assert result.returncode == 1
    assert "driver_error" in result.stdout


def test_manifest_path_and_task_file_work(make_capsule: CapsuleFactory, tmp_path: Path) -> None:
    root = make_capsule([tool_response("cat task.md"), text_response("ok")])
    task = tmp_path / "task.txt"
    task.write_text("from a file")
    result = run_cli("launch", str(root / "murmur.yaml"), "--headless", "--json",
                     "--task-file", str(task))
    assert result.returncode == 0, result.stderr
    shell = next(json.loads(line) for line in result.stdout.splitlines()
                 if '"ShellExecuted"' in line)
    assert shell["stdout"] == "from a file"


def test_warnings_reach_stderr_not_stdout_json(make_capsule: CapsuleFactory) -> None:
    root = make_capsule([text_response("x")], extra="mystery_key: 1\n")
    result = run_cli("launch", str(root), "--headless", "--json")
    assert result.returncode == 0
    warnings = [json.loads(line) for line in result.stdout.splitlines()
                if '"Warning"' in line]
    assert warnings and "mystery_key" in warnings[0]["text"]
    human = run_cli("launch", str(root), "--headless")
    assert "warning:" in human.stderr and "mystery_key" in human.stderr


def test_launch_without_a_terminal_runs_headless_and_says_so(murmur_home: Path) -> None:
    result = run_cli("launch", "--task", "hello", "--answer", "yes")
    assert result.returncode == 0, result.stderr
    assert "not a terminal; running headless" in result.stderr
    assert "session ok" in result.stdout
