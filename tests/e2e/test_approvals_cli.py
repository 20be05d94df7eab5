"""Approvals from the command line: headless, a call no stored rule allows is denied (the model
reads why, the trace has Murmur's call_denied and no tool_call); a stored rule lets it run."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from tests.conftest import CapsuleFactory, read_jsonl, run_cli
from tests.responses import text_response, tool_response


def _session_dir(capsule: Path) -> Path:
    sessions = sorted((capsule / "workdir").iterdir())
    assert len(sessions) == 1
    return sessions[0]


def _launch(capsule: Path, home: Path, *extra: str) -> tuple[int, str, str]:
    done = run_cli("launch", str(capsule), "--headless", "--task", "go", *extra,
                   env={"MURMUR_HOME": str(home)})
    return done.returncode, done.stdout, done.stderr


def test_headless_denies_and_says_so_once(make_capsule: CapsuleFactory,
                                           tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    capsule = make_capsule([tool_response(f"touch {marker}", "c1"),
                            tool_response(f"touch {marker}", "c2"), text_response("ok")])
    code, out, err = _launch(capsule, tmp_path / "home", "--approve", "shell")
    assert code == 0, err
    assert not marker.exists()  # nothing ran
    assert err.count("nobody can approve in a headless run") == 1
    assert "⊘ denied $" in out
    assert "← bash" not in out  # a denied call never ran: no "← bash error · 0 ms"
    session = _session_dir(capsule)
    trace = read_jsonl(session / "trace.jsonl")
    denied = [line for line in trace if line["event_type"] == "call_denied"]
    assert len(denied) == 2
    assert denied[0]["event"] == "on-shell" and denied[0]["hook_name"] == "murmur-tui:approval"
    assert str(denied[0]["target"]).endswith("bash")
    assert "nobody can approve" in str(denied[0]["reason"])
    assert not [line for line in trace if line["event_type"] in ("tool_call", "shell")]
    end = next(line for line in trace if line["event_type"] == "session_end")
    assert end["total_tool_calls"] == 0 and end["total_shell_calls"] == 0
    turn = next(line for line in trace if line["event_type"] == "inference")
    assert denied[0]["parent_id"] == turn["event_id"]
    records = list((tmp_path / "home" / "conversations").rglob("*.jsonl"))
    assert len(records) == 1
    tool = [m for m in read_jsonl(records[0]) if m.get("role") == "tool"]
    assert len(tool) == 2 and "the user denied this call" in json.dumps(tool[0])
    assert "nobody can approve" in json.dumps(tool[0])


def test_a_stored_rule_lets_the_command_run(make_capsule: CapsuleFactory,
                                            tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    capsule = make_capsule([tool_response(f"touch {marker}", "c1"),
                            tool_response("rm -rf nothing-here", "c2"), text_response("ok")])
    home = tmp_path / "home"
    (home / "tui").mkdir(parents=True)
    (home / "tui" / "config.yaml").write_text("approve: shell\n")
    manifest = (capsule / "murmur.yaml").resolve()
    (home / "tui" / "approvals.yaml").write_text(
        f"capsules:\n  - manifest: {json.dumps(str(manifest))}\n    name: test-capsule\n"
        "    shell: [[bash, -c, touch]]\n")
    code, _, err = _launch(capsule, home)
    assert code == 0, err
    assert marker.exists()  # `bash -c touch …` was allowed by the stored rule
    trace = read_jsonl(_session_dir(capsule) / "trace.jsonl")
    kinds = [line["event_type"] for line in trace]
    assert kinds.count("shell") == 1 and kinds.count("call_denied") == 1
    denied = next(line for line in trace if line["event_type"] == "call_denied")
    assert "nobody can approve" in str(denied["reason"])


def test_the_flag_wins_over_the_config(make_capsule: CapsuleFactory, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    capsule = make_capsule([tool_response(f"touch {marker}", "c1"), text_response("ok")])
    home = tmp_path / "home"
    (home / "tui").mkdir(parents=True)
    (home / "tui" / "config.yaml").write_text("approve: all\n")
    code, _, err = _launch(capsule, home, "--approve", "off")
    assert code == 0, err
    assert marker.exists()


def test_bad_settings_are_refused_naming_the_place(make_capsule: CapsuleFactory,
                                                   tmp_path: Path) -> None:
    capsule = make_capsule([text_response("ok")])
    home = tmp_path / "home"
    (home / "tui").mkdir(parents=True)
    config = home / "tui" / "config.yaml"
    config.write_text("approve: everything\n")
    code, _, err = _launch(capsule, home)
    assert code == 2
    assert str(config) in err and "approve" in err and "shell, tools, all, off" in err
    assert "Traceback" not in err
    config.write_text("approve: all\n")
    store = home / "tui" / "approvals.yaml"
    store.write_text("capsules: {}\n")
    code, _, err = _launch(capsule, home)
    assert code == 2 and str(store) in err and "capsules" in err
    assert not (capsule / "workdir").exists()  # nothing ran


def test_stored_rules_file_is_private(tmp_path: Path) -> None:
    from tui.core.tools.approvals import ApprovalRequest, ApprovalStore

    store = ApprovalStore(tmp_path / "home")
    request = ApprovalRequest("tool", "fetch", "fetch", (), {}, ("fetch",), "/c/murmur.yaml#c")
    store.add(request)
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600
    assert store.rules("/c/murmur.yaml#c").allows(request)
    assert not store.rules("/other/murmur.yaml#c").allows(request)
