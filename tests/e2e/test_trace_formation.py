"""`murmur-tui trace frm_…` end to end (murmur-newest §6.5): the real CLI over members' traces
written here in the folders a formation leaves them in — the entry's under the project's
`./workdir` (or `./.murmur`), each peer's under `$MURMUR_HOME/formations/<frm>/<member>/.murmur`
— with Murmur's line names (`session_start.formation_id`/`formation_member`,
`member_call_start`, `member_call`, `task_continued`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import run_cli

FRM = "frm_019aaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
OTHER = "frm_019bbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
LEAD = "ses_0199000000000000000000000000000a"
CODER = "ses_0199000000000000000000000000000b"
REVIEWER = "ses_0199000000000000000000000000000c"
STRANGER = "ses_0199000000000000000000000000000d"
CALL_1 = "mcl_0199000000000000000000000000001"
CALL_2 = "mcl_0199000000000000000000000000002"
CALL_3 = "mcl_0199000000000000000000000000003"


def line(kind: str, session: str, at: int, **fields: Any) -> dict[str, Any]:
    return {"event_type": kind, "event_id": f"evt_{at:032x}", "parent_id": None,
            "session_id": session, "timestamp": at, **fields}


def start(session: str, at: int, member: str | None, capsule: str,
          formation: str | None = FRM) -> dict[str, Any]:
    fields: dict[str, Any] = {"capsule_name": capsule, "capsule_version": "0.1.0", "model": "m"}
    if formation is not None:
        fields["formation_id"] = formation
    if member is not None:
        fields["formation_member"] = member
    return line("session_start", session, at, **fields)


def end(session: str, at: int, status: str) -> dict[str, Any]:
    return line("session_end", session, at, exit_status=status, total_turns=1,
                total_input_tokens=1, total_output_tokens=1, total_tool_calls=0,
                total_shell_calls=0, duration_ms=10)


def write(folder: Path, session: str, lines: list[dict[str, Any]]) -> Path:
    path = folder / session / "trace.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(item) + "\n" for item in lines), encoding="utf-8")
    return path


def formation(project: Path, home: Path) -> None:
    """lead (entry, in the project's workdir) calls coder twice; coder calls reviewer, whose
    session was killed (no session_end) mid-answer; a stranger session sits beside lead."""
    peers = home / "formations" / FRM
    write(peers / "coder" / ".murmur", CODER, [
        start(CODER, 1000, "coder", "team-worker"),
        line("task_start", CODER, 1500, task_id="tsk_c1", origin="peer"),
        line("member_call_start", CODER, 1600, call_id=CALL_3, member="reviewer",
             task_id="tsk_c1"),
        end(CODER, 9000, "formation_ended")])
    write(peers / "reviewer" / ".murmur", REVIEWER, [
        start(REVIEWER, 1100, "reviewer", "team-reviewer")])
    write(project / "workdir", LEAD, [
        start(LEAD, 1200, "lead", "team-lead"),
        line("member_call_start", LEAD, 1300, call_id=CALL_1, member="coder", task_id="tsk_l"),
        line("member_call", LEAD, 2500, call_id=CALL_1, member="coder", status="completed",
             duration_ms=1200),
        line("task_continued", LEAD, 2600, continuation_number=1, member_calls=[CALL_1],
             delegations=[], waited_ms=1300, turns_remaining=5),
        line("member_call_start", LEAD, 2700, call_id=CALL_2, member="coder", task_id="tsk_l"),
        line("member_call", LEAD, 2750, call_id=CALL_2, member="coder", status="unreachable",
             duration_ms=50),
        end(LEAD, 3000, "ok")])
    write(project / "workdir", STRANGER, [start(STRANGER, 900, None, "alone", formation=None),
                                          end(STRANGER, 950, "ok")])


def test_a_formation_lists_its_members_then_their_calls(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    formation(project, home)
    shown = run_cli("trace", FRM, cwd=project, env={"MURMUR_HOME": str(home)})
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == (
        f"formation: {FRM}\n"
        f"{CODER}  coder     team-worker@0.1.0    formation_ended\n"
        f"{REVIEWER}  reviewer  team-reviewer@0.1.0  no session_end\n"
        f"{LEAD}  lead      team-lead@0.1.0      ok\n"
        "calls:\n"
        f"{CALL_1}  lead → coder      completed    1.2s  delivered\n"
        f"{CALL_3}  coder → reviewer  running      —     not delivered\n"
        f"{CALL_2}  lead → coder      unreachable  50ms  not delivered\n")
    assert shown.stderr == ""
    # `trace show frm_…` is the same
    again = run_cli("trace", "show", FRM, cwd=project, env={"MURMUR_HOME": str(home)})
    assert again.stdout == shown.stdout


def test_json_and_the_other_places_members_are_found(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    formation(project, home)
    # the entry's sessions under ./.murmur (a --workdir run), and --workdir naming another folder
    (project / "workdir" / LEAD).rename(project / "elsewhere")
    (project / ".murmur").mkdir()
    (project / "elsewhere").rename(project / ".murmur" / LEAD)
    shown = run_cli("trace", FRM, "--json", cwd=project, env={"MURMUR_HOME": str(home)})
    assert shown.returncode == 0, shown.stderr
    found = json.loads(shown.stdout)
    assert [m["member"] for m in found["members"]] == ["coder", "reviewer", "lead"]
    assert found["members"][2]["trace"] == str(project / ".murmur" / LEAD / "trace.jsonl")
    assert found["calls"][0] == {"call_id": CALL_1, "from": "lead", "to": "coder",
                                 "status": "completed", "duration_ms": 1200, "delivered": True}
    moved = tmp_path / "runs"
    (project / ".murmur").rename(moved)
    shown = run_cli("trace", FRM, "--workdir", str(moved), cwd=project,
                    env={"MURMUR_HOME": str(home)})
    assert f"{LEAD}  lead " in shown.stdout
    # without the project, the peers are still found under $MURMUR_HOME
    alone = run_cli("trace", FRM, cwd=tmp_path, env={"MURMUR_HOME": str(home)})
    assert alone.returncode == 0 and LEAD not in alone.stdout and CODER in alone.stdout


def test_an_unreadable_member_trace_is_left_out_and_noted(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    formation(project, home)
    broken = home / "formations" / FRM / "reviewer" / ".murmur" / REVIEWER / "trace.jsonl"
    broken.write_text(json.dumps(start(REVIEWER, 1100, "reviewer", "team-reviewer"))
                      + "\n{not json}\n" + json.dumps(end(REVIEWER, 1, "ok")) + "\n",
                      encoding="utf-8")
    shown = run_cli("trace", FRM, cwd=project, env={"MURMUR_HOME": str(home)})
    assert shown.returncode == 0
    assert REVIEWER not in shown.stdout and CODER in shown.stdout
    assert shown.stderr == f"note: 1 trace(s) of {FRM} could not be read\n"


def test_a_bad_id_or_a_formation_with_no_member_here_is_E_TRC_002(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    formation(project, home)
    env = {"MURMUR_HOME": str(home)}
    for bad in ("frm_xyz", "frm_019AAAAAAAAAAAAAAAAAAAAAAAAAAAAA", FRM + "0"):
        refused = run_cli("trace", bad, cwd=project, env=env)
        assert refused.returncode == 2 and refused.stdout == ""
        assert refused.stderr == (f"murmur-tui: error: {bad!r} is not a formation id (frm_ and "
                                  "32 lowercase hex characters) [E-TRC-002]\n")
    refused = run_cli("trace", OTHER, cwd=project, env=env)
    assert refused.returncode == 2 and refused.stdout == "" and "Traceback" not in refused.stderr
    assert refused.stderr == (
        f"murmur-tui: error: no member of formation {OTHER} found (looked in "
        f"{project / 'workdir'}, {project / '.murmur'}, {home / 'formations' / OTHER}) "
        "[E-TRC-002]\n")
