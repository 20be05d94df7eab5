"""One turn numbering for everything a person reads: `trace show`, `steps` and `diff` number
turns from 1, as the screen and headless do, while the trace file's `turn` (and `--json`) stay
Murmur's, from 0 (Murmur v0.11 spec §6.5: `inference.turn` is 0-based and restarts per task;
`compaction`, `compaction_declined`, `skill_call`, `task_failed` carry the same `turn`)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.conftest import CapsuleFactory, read_jsonl, run_cli
from tests.e2e.test_trace_command import TASK, envelope, section
from tests.responses import text_response, tool_response


def test_headless_and_trace_show_the_same_turn_numbers(make_capsule: CapsuleFactory) -> None:
    root = make_capsule([tool_response("echo one"), tool_response("echo two", "call_2"),
                         text_response("done")])
    launched = run_cli("launch", "--headless", str(root))
    assert launched.returncode == 0, launched.stderr
    said = launched.stdout + launched.stderr
    assert re.findall(r"^turn (\d+)/10 ", said, re.MULTILINE) == ["1", "2", "3"]
    trace = read_jsonl(next((root / "workdir").glob("ses_*/trace.jsonl")))
    assert [line["turn"] for line in trace if line["event_type"] == "inference"] == [0, 1, 2]

    shown = run_cli("trace", cwd=root)
    assert shown.returncode == 0, shown.stderr
    rows = section(shown.stdout, "Tool calls")[2:]
    assert [row.split("  ")[1] for row in rows] == ["turn 1", "turn 2", "turn 3"]
    assert rows[0].startswith("  turn 1  bash ") and '{"command":"echo one"}' in rows[0]
    assert rows[2] == "  turn 3  end_turn"
    steps = run_cli("trace", "steps", cwd=root)
    assert steps.returncode == 0, steps.stderr
    turns = [line.strip() for line in steps.stdout.splitlines()
             if line.strip().startswith("turn ")]
    assert turns == ["turn 1  tool_call  bash", "turn 2  tool_call  bash", "turn 3  end_turn"]
    as_json = json.loads(run_cli("trace", "--json", cwd=root).stdout)
    assert [row["turn"] for row in as_json["sections"]["tool_calls"]] == [0, 1]  # the file's
    assert [row["turn"] for row in as_json["sections"]["turns"]] == [0, 1, 2]


def inference(n: int, turn: int, decision: str = "end_turn", **fields: Any) -> dict[str, Any]:
    return envelope("inference", n, task_id=TASK, turn=turn, input_tokens=100,
                    output_tokens=10, decision=decision, stop_reason=decision, tool_name=None,
                    **fields)


def hand_trace(path: Path, system_change: str) -> Path:
    """A session of 3 turns: a skill call in turn 0, compaction declined after turn 0 and
    fired after turn 1, its system prompt changed at turn 2, and a failed attempt at turn 2."""
    lines = [
        envelope("session_start", 0, capsule_name="hand", capsule_version="2.0.0", model="m",
                 max_turns=8),
        envelope("task_start", 1, task_id=TASK),
        inference(2, 0, "tool_call", system_sha="a" * 64, tools_sha="b" * 64,
                  message_shas=["m1" * 32]),
        envelope("skill_call", 3, task_id=TASK, turn=0, skill_name="summarise", duration_ms=7,
                 status="ok"),
        envelope("compaction_declined", 4, task_id=TASK, turn=0, tokens=1500,
                 reason="no_hook_replacement"),
        inference(5, 1, system_sha="a" * 64, tools_sha="b" * 64, message_shas=["m1" * 32]),
        envelope("compaction", 6, task_id=TASK, turn=1, tokens_before=2400, tokens_after=300),
        inference(7, 2, "error", system_sha=system_change, tools_sha="b" * 64,
                  message_shas=["m1" * 32]),
        envelope("task_failed", 8, task_id=TASK, turn=2, cause="driver_error",
                 reason="the provider said no"),
        envelope("task_end", 9, task_id=TASK, exit_status="error", duration_ms=900),
        envelope("session_end", 10, total_turns=3, total_input_tokens=300,
                 total_output_tokens=30, total_tool_calls=0, total_shell_calls=0,
                 duration_ms=1000, exit_status="error"),
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_every_turn_a_trace_names_is_read_from_1(tmp_path: Path) -> None:
    a = hand_trace(tmp_path / "a" / "trace.jsonl", "c" * 64)
    b = hand_trace(tmp_path / "b" / "trace.jsonl", "a" * 64)
    out = run_cli("trace", str(a)).stdout
    assert section(out, "Skill calls")[2] == "  turn 1  summarise 7ms ✓"
    assert section(out, "Compaction") == [
        "fired:      yes  at turn 2  (2,400 → 300 tokens)",
        "declined:   at turn 1  (1,500 tokens)  no_hook_replacement"]
    assert section(out, "Failed") == ["turn 3  driver_error  “the provider said no”"]

    steps = [line.strip() for line in run_cli("trace", "steps", str(a)).stdout.splitlines()]
    assert [line for line in steps if line.startswith("turn ")] == [
        "turn 1  tool_call", "turn 2  end_turn", "turn 3  error"]
    assert "task_failed driver_error  turn 3  the provider said no" in steps

    diff = run_cli("trace", "diff", str(a), str(b)).stdout.splitlines()
    assert "compaction             turn 2           turn 2           —" in diff
    assert ("note:          run A changes its system prompt at turn 3 (cccccccccccc…)"
            in diff)
    assert [line for line in diff if line.startswith("turn ")] == [
        "turn 1:  identical  (1 message)", "turn 2:  identical  (1 message)",
        "turn 3:  identical  (1 message)"]

    value = json.loads(run_cli("trace", "--json", str(a)).stdout)
    sections = value["sections"]
    assert [c["turn"] for c in sections["compactions"]] == [1]  # the file's own numbers
    assert [d["turn"] for d in sections["compactions_declined"]] == [0]
    assert [f["turn"] for f in sections["failed"]] == [2]
    assert value["summary"]["tasks"][0]["failures"][0]["turn"] == 2
