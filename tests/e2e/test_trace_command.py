"""`murmur-tui trace` end to end: the real CLI over traces real sessions wrote and over
hand-written ones (redundant reads, mutates, undeclared resources, a cut line, hostile input)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CapsuleFactory, read_jsonl, run_cli
from tests.responses import text_response, tool_response

SESSION = "ses_0199aaaaaaaaaaaaaaaaaaaaaaaaaaaa"
TASK = "tsk_0199bbbbbbbbbbbbbbbbbbbbbbbbbbbb"


def section(output: str, name: str) -> list[str]:
    """The lines of one section (after its `── name ──` rule, up to the next rule)."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"── {name} ─"))
    rest = lines[start + 1:]
    end = next((i for i, line in enumerate(rest) if line.startswith("── ")), len(rest))
    return [line for line in rest[:end] if line]


def sections(output: str) -> list[str]:
    return [line.split(" ")[1] if " " in line else line for line in output.splitlines()
            if line.startswith("── ")]


def refused(result: Any) -> str:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert result.stderr.startswith("murmur-tui: error: ")
    return str(result.stderr)


# -- traces real sessions wrote -----------------------------------------------------------------
def test_the_demo_session_shows_hook_failures_compaction_reopens_and_shell_calls(
        murmur_home: Path) -> None:
    launched = run_cli("launch", "--headless", "--json", "--answer", "yes")
    assert launched.returncode == 0, launched.stderr
    start = json.loads(launched.stdout.splitlines()[0])
    workdir = Path(start["workdir"])
    trace = read_jsonl(Path(start["trace_path"]))
    end = trace[-1]

    shown = run_cli("trace", str(workdir))
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert sections(out)[:3] == ["Session", "Hook", "Turns"]
    assert f"session:    {start['session_id']}" in section(out, "Session")
    assert "status:     ok" in section(out, "Session")
    faults = [line for line in trace if line["event_type"] == "hook_dispatch_error"]
    assert section(out, "Hook failures") == [
        f"✗ {f['hook_name']}  {f['event']}  {f['arm']}" for f in faults]
    assert section(out, "Turns") == [f"count:      {end['total_turns']}  (max: 6)"]
    assert f"input:      {end['total_input_tokens']:,}  " in "\n".join(section(out, "Tokens"))
    tools = section(out, "Tool calls")
    assert tools[0].startswith(f"count:      {end['total_tool_calls']}  (")
    assert any(line.startswith("  turn 2  bash ") and '✓  {"command":"printf' in line
               for line in tools)  # the file's turn 1: a person reads turns from 1
    assert section(out, "Shell calls")[:2] == ["count:      1", "exit codes: 1 ok"]
    compaction = next(line for line in trace if line["event_type"] == "compaction")
    assert section(out, "Compaction") == [
        f"fired:      yes  at turn {compaction['turn'] + 1}  "
        f"({compaction['tokens_before']:,} → {compaction['tokens_after']:,} tokens)"]
    (reopen,) = section(out, "Reopens")
    assert reopen.startswith("reopen 1  by review-hook  continued, ")
    assert "Tasks" not in sections(out)  # one task: no Tasks section

    as_json = run_cli("trace", str(workdir / "trace.jsonl"), "--json")
    assert as_json.returncode == 0, as_json.stderr
    value = json.loads(as_json.stdout)
    assert value["summary"]["session_id"] == start["session_id"]
    assert value["summary"]["exit_status"] == "ok" and value["cut_line"] is None
    assert value["sections"]["totals"]["turns"] == end["total_turns"]
    assert len(value["sections"]["hook_failures"]) == len(faults)
    assert value["sections"]["compactions"][0]["tokens_after"] == compaction["tokens_after"]
    assert value["sections"]["compactions"][0]["turn"] == compaction["turn"]  # the file's own
    assert value["redundant_calls"] == []


def test_refused_and_failed_shell_calls_from_the_capsules_own_workdir(
        make_capsule: CapsuleFactory) -> None:
    root = make_capsule([tool_response("echo x"), tool_response("exit 3", "call_2"),
                         tool_response("   ", "call_3"), text_response("done")])
    launched = run_cli("launch", "--headless", str(root))
    assert launched.returncode == 0, launched.stderr
    shown = run_cli("trace", cwd=root)  # no argument: the newest session under ./workdir
    assert shown.returncode == 0, shown.stderr
    tools = section(shown.stdout, "Tool calls")
    assert tools[0] == "count:      3  (2 ok, 1 error)  success 66.7%"
    rows = tools[2:]
    assert rows[0].startswith("  turn 1  bash ") and '✓  {"command":"echo x"}' in rows[0]
    assert rows[1].startswith("  turn 2  bash ") and "✓" in rows[1]
    assert rows[2].startswith("  turn 3  bash ") and '✗  {"command":"   "}' in rows[2]
    assert rows[3] == "  turn 4  end_turn"
    shell = section(shown.stdout, "Shell calls")
    assert shell[:2] == ["count:      2", "exit codes: 1 ok, 1 failed (exit 3)"]


def test_the_newest_of_several_sessions_is_shown_and_none_is_a_clear_error(
        make_capsule: CapsuleFactory, tmp_path: Path) -> None:
    root = make_capsule([text_response("one")])
    assert run_cli("launch", "--headless", str(root)).returncode == 0
    assert run_cli("launch", "--headless", str(root)).returncode == 0
    newest = max(path.name for path in (root / "workdir").iterdir())
    shown = run_cli("trace", str(root / "workdir"))
    assert shown.returncode == 0, shown.stderr
    assert f"session:    {newest}" in shown.stdout
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no session here" in refused(run_cli("trace", cwd=empty))
    assert "no trace.jsonl in this folder" in refused(run_cli("trace", str(empty)))
    assert "no such file or folder" in refused(run_cli("trace", str(empty / "nope")))


# -- hand-written traces --------------------------------------------------------------------------
def envelope(event_type: str, n: int, **fields: Any) -> dict[str, Any]:
    return {"event_type": event_type, "event_id": f"evt_{n:032x}", "parent_id": None,
            "session_id": SESSION, "timestamp": 1_767_225_600_000 + n, **fields}


def write_trace(path: Path, calls: list[dict[str, Any]], *, end: bool = True,
                tail: bytes = b"") -> Path:
    lines = [envelope("session_start", 0, capsule_name="hand", capsule_version="2.0.0",
                      model="m", max_turns=8),
             envelope("task_start", 1, task_id=TASK)]
    for n, call in enumerate(calls, start=2):
        line = envelope("tool_call", n, task_id=TASK, duration_ms=3, status="ok",
                        tool_call_id=None, input_bytes=2, output_bytes=2)
        line.update(call)
        lines.append(line)
    if end:
        lines.append(envelope("session_end", 99, total_turns=4, total_input_tokens=1200,
                              total_output_tokens=30, total_tool_calls=len(calls),
                              total_shell_calls=0, duration_ms=2500, exit_status="ok"))
    path.write_bytes(b"".join(json.dumps(line).encode() + b"\n" for line in lines) + tail)
    return path


def call(turn: int, tool: str, effect: str | None = None, resource: str | None = None,
         **tool_input: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {"turn": turn, "tool_name": tool, "input": tool_input}
    if effect is not None:
        fields["state_effect"] = effect
    if resource is not None:
        fields["resource_id"] = resource
    return fields


def test_redundant_reads_and_the_mutate_between_them(tmp_path: Path) -> None:
    path = write_trace(tmp_path / "trace.jsonl", [
        call(0, "read-file", "read", "README.md", path="README.md"),
        call(1, "read-file", "read", "README.md", path="README.md"),  # redundant: re-reads 0
        call(2, "write-file", "mutate", "README.md", path="README.md"),
        call(3, "read-file", "read", "README.md", path="README.md"),  # fresh after the write
        call(3, "lookup", "read", "sym://Foo"),
        call(4, "lookup", "read", "sym://Foo"),  # redundant: re-reads 3
    ])
    shown = run_cli("trace", str(path))
    assert shown.returncode == 0, shown.stderr
    assert section(shown.stdout, "Redundant calls") == [  # the file's turns, read from 1
        "count:      2",
        "  turn 2  read-file  README.md  (re-reads turn 1)",
        "  turn 5  lookup  sym://Foo  (re-reads turn 4)",
    ]
    value = json.loads(run_cli("trace", str(path), "--json").stdout)
    assert value["redundant_calls"] == [
        {"turn": 1, "tool_name": "read-file", "resource": "README.md", "prior_turn": 0},
        {"turn": 4, "tool_name": "lookup", "resource": "sym://Foo", "prior_turn": 3}]


def test_undeclared_resources_fall_back_to_path_keys_or_are_ignored(tmp_path: Path) -> None:
    path = write_trace(tmp_path / "trace.jsonl", [
        call(0, "cat", "read", File_Path="notes.md"),
        call(1, "cat", "read", filename="other.md", PATH="notes.md"),  # path outranks filename
        call(2, "grep", "read", pattern="x"),  # no resource: left out
        call(3, "bash", None, command="rm notes.md"),  # no resource: forgets nothing
        call(4, "cat", "read", file="notes.md"),  # still redundant: re-reads 1
        call(5, "touch", None, path="notes.md"),  # undeclared effect: forgets notes.md
        call(6, "cat", "read", path="notes.md"),
    ])
    shown = run_cli("trace", str(path))
    assert shown.returncode == 0, shown.stderr
    assert section(shown.stdout, "Redundant calls") == [
        "count:      2",
        "  turn 2  cat  notes.md  (re-reads turn 1)",
        "  turn 5  cat  notes.md  (re-reads turn 2)",
    ]


def test_a_long_input_is_cut_at_120_characters(tmp_path: Path) -> None:
    path = write_trace(tmp_path / "trace.jsonl", [call(0, "write", "mutate", text="é" * 300)])
    shown = run_cli("trace", str(path))
    row = section(shown.stdout, "Tool calls")[2]
    inline = row.split("✓  ", 1)[1]
    assert inline == ('{"text":"' + "é" * 300)[:120] + "…"


def test_a_cut_last_line_is_read_and_said(tmp_path: Path) -> None:
    path = write_trace(tmp_path / "trace.jsonl",
                       [call(0, "read-file", "read", path="a"), call(1, "read-file", "read",
                                                                       path="a")],
                       end=False, tail=b'{"event_type":"tool_call","turn":2,"tool_na')
    shown = run_cli("trace", str(path))
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == "trace ends in a cut line (the session was stopped); 4 lines read"
    assert "status:     not ended" in section(shown.stdout, "Session")
    assert section(shown.stdout, "Redundant calls")[0] == "count:      1"
    value = json.loads(run_cli("trace", str(path), "--json").stdout)
    assert value["cut_line"] == 5 and value["summary"]["finished"] is False


@pytest.mark.parametrize(("content", "where", "says"), [
    (b"not json\n", ":2", "not JSON"),
    (b"[1, 2]\n", ":2", "not a JSON object"),
    (json.dumps(envelope("tool_call", 5, task_id=TASK, turn=0, tool_name="x",
                         duration_ms="3", status="ok")).encode() + b"\n", ":2: duration_ms",
     "expected a non-negative integer"),
    (json.dumps(envelope("tool_call", 5, task_id=TASK, turn=0, tool_name="x", duration_ms=3,
                         status="ok", resource_id=7)).encode() + b"\n", ":2: resource_id",
     "expected a string"),
    (json.dumps(envelope("shell", 5, task_id=TASK, exit_code="1", duration_ms=3)).encode() + b"\n",
     ":2: exit_code", "expected an integer"),
    (b'{"a":' * 200 + b"1" + b"}" * 200 + b"\n", ":2", "nested deeper"),
], ids=["not-json", "not-an-object", "count-as-string", "resource-as-number",
        "exit-code-as-string", "nested-too-deep"])
def test_hostile_lines_are_refused_naming_file_and_line(
        tmp_path: Path, content: bytes, where: str, says: str) -> None:
    path = tmp_path / "trace.jsonl"
    start = envelope("session_start", 0, capsule_name="h", capsule_version="1", model="m",
                     max_turns=1)
    path.write_bytes(json.dumps(start).encode() + b"\n" + content)
    message = refused(run_cli("trace", str(path)))
    assert f"{path}{where}" in message and says in message


def test_a_huge_line_is_refused_without_reading_it_whole(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    path.write_bytes(b'{"event_type":"session_start","x":"' + b"a" * (17 * 1024 * 1024))
    message = refused(run_cli("trace", str(path)))
    assert f"{path}:1" in message and "longer than 16 MiB" in message


def test_a_trace_without_a_session_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    path.write_text(json.dumps(envelope("task_start", 1, task_id=TASK)) + "\n")
    assert "no session_start" in refused(run_cli("trace", str(path)))


def test_no_key_byte_is_printed(tmp_path: Path, murmur_home: Path) -> None:
    key = "sk-test-" + "k3y" * 12
    config = murmur_home / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"credentials:\n  OTHER_KEY: {key}-config\n")
    config.chmod(0o600)
    path = write_trace(tmp_path / "trace.jsonl", [
        call(0, "fetch", "read", f"https://x/?k={key}", header=f"Bearer {key}"),
        call(1, "fetch", "read", f"https://x/?k={key}", note=f"{key}-config"),
        call(2, "fetch", None, None, auth=f"Authorization: Bearer {'z' * 30}"),
    ])
    for args in ((), ("--json",)):
        shown = run_cli("trace", str(path), *args, env={"OPENAI_API_KEY": key})
        assert shown.returncode == 0, shown.stderr
        assert key not in shown.stdout and "k3yk3y" not in shown.stdout
        assert "z" * 30 not in shown.stdout
        assert "[redacted]" in shown.stdout
