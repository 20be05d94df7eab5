"""`murmur-tui trace` naming sessions by Murmur's addresses, and `trace steps|diff|report`, on
a workdir of sessions written in Murmur's trace format (spec §6.1 addresses, §6.5 `mur trace`,
§9.4 the `event_id`/`parent_id` envelope and the wire hashes; a v0.2.0 trace, without the
envelope, for the flat `steps`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli

# four sessions, oldest first; ids sort by creation time as UUIDv7s do
OLD = "ses_019ad00000007000800000000000d399"
MID = "ses_019ad00000017000800000000001d399"
MULTI = "ses_019ad00000027000800000000000beef"
OPEN = "ses_019ad00000037000800000000000cafe"


class Writer:
    """One session's trace, line by line, with Murmur's envelope (or without, `flat`)."""

    def __init__(self, session: str, flat: bool = False) -> None:
        self.session, self.flat = session, flat
        self.lines: list[dict[str, Any]] = []

    def add(self, kind: str, parent: str | None, **fields: Any) -> str:
        event_id = f"evt_{self.session[4:12]}{len(self.lines):024x}"
        line: dict[str, Any] = {"event_type": kind, "session_id": self.session,
                                "timestamp": 1_000 + len(self.lines), **fields}
        if not self.flat:
            line.update(event_id=event_id, parent_id=parent)
        self.lines.append(line)
        return event_id

    def write(self, workdir: Path) -> Path:
        folder = workdir / self.session
        folder.mkdir(parents=True)
        path = folder / "trace.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines))
        return path


def session(workdir: Path, session_id: str, *, turns: int, tool_ms: int, system: str,
            messages: list[str], tasks: int = 1, ended: bool = True, flat: bool = False) -> None:
    w = Writer(session_id, flat)
    root = w.add("session_start", None, capsule_name="demo", capsule_version="0.1.0",
                 model="m", max_turns=10)
    total_in = total_out = 0
    for number in range(tasks):
        task = f"tsk_{session_id[4:12]}{number:024x}"
        node = w.add("task_start", root, task_id=task, context_id="ctx_" + "1" * 32,
                     source="a2a")
        for turn in range(turns):
            last = turn == turns - 1
            inference = w.add("inference", node, task_id=task, turn=turn,
                              input_tokens=100 + turn, output_tokens=10,
                              decision="end_turn" if last else "tool_call",
                              tool_name=None if last else "read_file",
                              system_sha=system, tools_sha="b" * 64,
                              message_shas=messages[:turn + 1])
            total_in, total_out = total_in + 100 + turn, total_out + 10
            if not last:
                w.add("tool_call", inference, task_id=task, turn=turn, tool_name="read_file",
                      input={"path": "notes.md"}, duration_ms=tool_ms, status="ok",
                      state_effect="read")
        if ended:
            w.add("task_end", node, task_id=task, exit_status="ok", duration_ms=500,
                  turns=turns, input_tokens=total_in, output_tokens=total_out)
    if ended:
        w.add("session_end", root, total_turns=turns * tasks, total_input_tokens=total_in,
              total_output_tokens=total_out, total_tool_calls=(turns - 1) * tasks,
              total_shell_calls=0, duration_ms=1500, exit_status="ok")
    w.write(workdir)


@pytest.fixture
def capsule(tmp_path: Path) -> Path:
    """A capsule folder whose `workdir/` holds four sessions (the newest did not end)."""
    root = tmp_path / "capsule"
    workdir = root / "workdir"
    m = ["m0" * 32, "m1" * 32, "m2" * 32, "m3" * 32]
    session(workdir, OLD, turns=3, tool_ms=20, system="a" * 64, messages=m)
    session(workdir, MID, turns=2, tool_ms=40, system="a" * 64, messages=[m[0], "mX" * 32])
    session(workdir, MULTI, turns=4, tool_ms=10, system="c" * 64, messages=m, tasks=2)
    session(workdir, OPEN, turns=1, tool_ms=10, system="c" * 64, messages=m, ended=False)
    return root


def shown(*args: str, cwd: Path, code: int = 0) -> Any:
    result = run_cli("trace", *args, cwd=cwd)
    assert result.returncode == code, (args, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    return result


def test_each_address_form_names_one_session_or_is_refused_by_name(capsule: Path) -> None:
    assert f"session:    {OPEN}" in shown("@1", cwd=capsule).stdout
    assert f"session:    {MULTI}" in shown("@2", cwd=capsule).stdout
    assert f"session:    {MULTI}" in shown("BEEF", cwd=capsule).stdout  # any case
    assert f"session:    {OLD}" in shown("0d399", cwd=capsule).stdout
    assert f"session:    {MID}" in shown("show", MID, cwd=capsule).stdout
    path = capsule / "workdir" / OLD / "trace.jsonl"
    assert f"session:    {OLD}" in shown(str(path), cwd=capsule).stdout
    assert f"session:    {OLD}" in shown(f"workdir/{OLD}", cwd=capsule).stdout
    assert f"session:    {OPEN}" in shown("workdir", cwd=capsule).stdout  # a bare folder name
    elsewhere = capsule.parent
    assert f"session:    {MID}" in shown("@3", "--workdir", str(capsule / "workdir"),
                                         cwd=elsewhere).stdout

    ambiguous = shown("d399", cwd=capsule, code=2).stderr
    assert "ambiguous: 'd399' matches 2 sessions — provide more characters" in ambiguous
    assert f"  {MID}\n  {OLD}" in ambiguous and "[E-TRC-002]" in ambiguous
    unknown = shown("f00d", cwd=capsule, code=2).stderr
    assert f"no session found matching suffix 'f00d' in {capsule / 'workdir'}" in unknown
    assert "[E-TRC-002]" in unknown
    missing = f"ses_{'0' * 32}"
    assert f"session {missing} not found in" in shown(missing, cwd=capsule, code=2).stderr
    assert "@9 is out of range — " in shown("@9", cwd=capsule, code=2).stderr
    assert "has 4 sessions" in shown("@9", cwd=capsule, code=2).stderr
    assert "'@0' is not an ordinal" in shown("@0", cwd=capsule, code=2).stderr
    assert "'d39' is too short" in shown("d39", cwd=capsule, code=2).stderr
    assert "no such file or folder" in shown("workdir/nope", cwd=capsule, code=2).stderr
    assert "no sessions in" in shown("@1", "--workdir", str(elsewhere / "none"),
                                     cwd=elsewhere, code=2).stderr


def test_steps_is_the_session_task_turn_tree_and_flat_for_a_trace_without_event_ids(
        capsule: Path, tmp_path: Path) -> None:
    out = shown("steps", "beef", "--verbose", cwd=capsule).stdout.splitlines()
    assert out[0] == f"Session {MULTI}  (2 tasks, 8 turns)"
    task = f"task tsk_{MULTI[4:12]}…  ctx_11111111…  (a2a)"
    assert out[1:4] == ["", task, "  turn 1  tool_call  read_file"]  # the file's turn 0
    assert out[4] == '    tool_call  read_file  10ms  ✓  "notes.md"'
    assert out.count(task) == 2 and out.count("  turn 4  end_turn") == 2
    plain = shown("steps", "0d399", cwd=capsule).stdout
    assert "    tool_call  read_file  20ms  ✓\n" in plain and '"notes.md"' not in plain

    old = tmp_path / "old"  # Murmur v0.2.0 wrote no event_id / parent_id
    session(old, OLD, turns=3, tool_ms=820, system="a" * 64, messages=[], flat=True)
    flat = shown("steps", "--workdir", str(old), cwd=tmp_path).stdout.splitlines()
    assert flat[:2] == [f"Session {OLD}  (3 turns)", ""]
    assert flat[2] == "  1  tool_call    read_file   820ms"
    assert flat[4] == "  3  end_turn     —           —"
    assert "takes no --last" in shown("steps", "--last", "2", cwd=capsule, code=2).stderr


def test_diff_compares_the_metrics_and_finds_where_the_prompts_diverge(capsule: Path) -> None:
    out = shown("diff", "0d399", "1d399", cwd=capsule).stdout.splitlines()
    assert out[0].split() == ["Metric", "Run", "A", "Run", "B", "Delta"]
    rows = {line[:22].strip(): line[22:].split(None, 2) for line in out[2:16]}
    assert rows["turns"] == ["3", "2", "-1 (B better)"]
    assert rows["input tokens"] == ["303", "201", "-102 (B better)"]
    assert rows["avg tool latency"] == ["20ms", "40ms", "+20ms (A better)"]
    assert rows["tool success rate"] == ["100.0%", "100.0%", "="]
    assert rows["exit status"] == ["ok", "ok", "—"]
    prefix = out[out.index("── Prefix divergence ────────────────────────────") + 1:]
    assert prefix == [
        "system prompt: identical  aaaaaaaaaaaa…",
        "tool schemas:  identical  bbbbbbbbbbbb…",
        "turn 1:  identical  (1 message)",
        "turn 2:  diverges at message 1  A m1m1m1m1m1m1…  B mXmXmXmXmXmX…",
        "turn 3:  only in run A",
    ]
    default = shown("diff", cwd=capsule).stdout  # @2 @1: the two newest
    assert "exit status            ok               not ended" in default
    assert "takes 0 or 2 sessions, got 1" in shown("diff", "@1", cwd=capsule, code=2).stderr
    both = shown("diff", "f00d", "@9", cwd=capsule, code=2).stderr
    assert "before: no session found matching suffix 'f00d'" in both and "after: @9" in both


def test_report_sums_up_the_ended_sessions_and_says_what_it_skipped(
        capsule: Path, tmp_path: Path) -> None:
    result = shown("report", cwd=capsule)
    out = result.stdout.splitlines()
    assert result.stderr == "note: skipped 1 incomplete session(s)\n"  # the one not ended
    assert out[0] == f"Session {OLD[:12]}...  1.5s  3 turns"
    assert f"Sessions: 3  ({capsule / 'workdir'})" in out
    stats = {line[:22].strip(): line[22:].split() for line in out if line[:1].isalpha()}
    assert stats["turns"] == ["4.3", "2.6", "2.0", "8.0"]
    assert stats["redundant calls"] == ["2.0", "2.2", "0.0", "5.0"]
    assert "  ok                       3  (100.0%)" in out
    tasks = out[out.index("── Per-task averages (multi-task sessions only) ──────────────"):]
    assert tasks[-1] == "Tasks: 2" and tasks[3].split() == ["task", "turns", "4.0", "0.0",
                                                           "4.0", "4.0"]
    assert "Sessions: 2  (" in shown("report", "--last", "3", cwd=capsule).stdout
    assert "Sessions: 1  (" in shown("report", "0d399", cwd=capsule).stdout
    # these session ids were minted in 2025: none in the last hour
    assert "no sessions matched --since 1h" in shown("report", "--since", "1h", cwd=capsule,
                                                     code=2).stderr
    assert "expected <N>m, <N>h, or <N>d" in shown("report", "--since", "2w", cwd=capsule,
                                                   code=2).stderr
    assert "cannot be combined" in shown("report", "@1", "--last", "1", cwd=capsule,
                                         code=2).stderr
    assert "workdir not found" in shown("report", cwd=tmp_path, code=2).stderr
    (tmp_path / "empty" / "workdir").mkdir(parents=True)
    assert "no sessions found in workdir" in shown("report", cwd=tmp_path / "empty",
                                                   code=2).stderr
