"""Components built by real toolchains — Python (componentize-py), JavaScript
(componentize-qjs), Rust (rustc + the preview1 adapter) — run through whole headless sessions
from the command line, exactly as a user's own components would.

Guests are built during the test run and cached (tests/guests/build.py); compiled code is
shared between tests through MURMUR_COMPILED_CACHE, so each compiles once per run (and once
across runs).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.capsules import write_capsule
from tests.conftest import read_jsonl, run_cli
from tests.guests.build import ToolchainUnavailable, build_guest, cache_root
from tests.responses import call_response, text_response

pytestmark = pytest.mark.slow

REQUIRED = os.environ.get("MURMUR_REQUIRE_GUESTS", "")


def guest(name: str) -> Path:
    try:
        return build_guest(name)
    except ToolchainUnavailable as exc:
        if REQUIRED == "all" or name in REQUIRED.split(","):
            raise
        pytest.skip(f"{name}: {exc}")


def env_for(home: Path) -> dict[str, str]:
    return {"MURMUR_HOME": str(home),
            "MURMUR_COMPILED_CACHE": str(cache_root() / "compiled-host")}


def capsule(root: Path, steps: list[dict[str, Any]], entries: str, extra: str = "") -> Path:
    return write_capsule(root, steps, name="guests", model="m", max_turns=20, shell=(),
                         artifacts=entries, extra=extra)


def launch(root: Path, home: Path, *answers: str) -> tuple[int, list[dict[str, Any]], str]:
    args = ["launch", str(root), "--headless", "--json", "--task", "exercise the guests"]
    for text in answers:
        args += ["--answer", text]
    result = run_cli(*args, env=env_for(home), timeout=600)
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    return result.returncode, events, result.stderr


def of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == kind]


def test_python_tool_and_hook_run_a_whole_session(tmp_path: Path, murmur_home: Path) -> None:
    tool, hook = guest("py_tool"), guest("py_hook")
    entries = (f"  - name: pytool\n    runtime: tool\n    source: {tool}\n"
               "    config: {greeting: hi}\n"
               "    capabilities:\n      env: {allow: [GUEST_VISIBLE, GUEST_API_KEY]}\n"
               "      limits: {memory_bytes: 67108864}\n"
               f"  - name: pyhook\n    runtime: hook\n    source: {hook}\n"
               "    capabilities:\n      conversation: {read: true}\n")
    steps = [call_response("pytool", {"op": "echo", "n": 1}, "a"),
             call_response("pytool", {"op": "ask", "prompt": "Proceed?"}, "b"),
             call_response("pytool", {"op": "write", "path": "note.txt", "text": "hello"}, "c"),
             call_response("pytool", {"op": "read", "path": "note.txt"}, "d"),
             call_response("pytool", {"op": "stream"}, "e"),
             call_response("pytool", {"op": "env"}, "f"),
             call_response("pytool", {"op": "report", "path": "report.md", "text": "# Report"},
                           "r"),
             call_response("pytool", {"op": "crash"}, "g"),
             call_response("pytool", {"op": "hog"}, "h"),
             text_response("all exercised")]
    root = capsule(tmp_path / "py", steps, entries,
                   extra="")
    manifest = (root / "murmur.yaml").read_text().replace(
        "    artifact: script-driver\n",
        "    artifact: script-driver\n    config: {temperature: 0}\n")
    (root / "murmur.yaml").write_text(manifest)
    os.environ["GUEST_VISIBLE"] = "yes"
    os.environ["GUEST_HIDDEN"] = "secret"
    os.environ["GUEST_API_KEY"] = "allowed-by-name-but-credential-shaped"
    try:
        code, events, stderr = launch(root, murmur_home, "go ahead")
    finally:
        del os.environ["GUEST_VISIBLE"], os.environ["GUEST_HIDDEN"], os.environ["GUEST_API_KEY"]
    assert code == 0, stderr
    assert "panicked" not in stderr
    finished = {e["call_id"]: e for e in of(events, "ToolCallFinished")}
    assert '"n": 1' in finished["a"]["output"]
    assert of(events, "InputRequested")[0]["prompt"] == "Proceed?"
    assert "go ahead" in finished["b"]["output"]
    assert (finished["c"]["state_effect"], finished["c"]["resource_id"]) == ("mutate",
                                                                            "note.txt")
    assert "hello" in finished["d"]["output"] and finished["d"]["state_effect"] == "read"
    # a tool's chunks are its call's progress, not the model's answer
    assert "".join(e["text"] for e in of(events, "ToolProgress") if e["call_id"] == "e") == \
        "py chunk"
    assert "py chunk" not in "".join(e["text"] for e in of(events, "TextDelta"))
    seen_env = json.loads(finished["f"]["output"].split("\n")[1])
    assert seen_env.get("GUEST_VISIBLE") == "yes" and "GUEST_HIDDEN" not in seen_env
    assert "GUEST_API_KEY" not in seen_env  # allowed by name, never passed: credential-shaped
    assert all(k.startswith("MURMUR_") or k == "GUEST_VISIBLE" for k in seen_env)
    assert seen_env["MURMUR_ARTIFACT_CONFIG"] == '{"greeting":"hi"}'
    assert seen_env["MURMUR_INFERENCE_DRIVER_CONFIG"] == '{"temperature":0}'
    assert "# Report" in finished["r"]["output"]  # read from the data-path file
    assert finished["g"]["status"] == "error" and "pytool trapped" in finished["g"]["output"]
    assert finished["h"]["status"] == "error"
    assert "out of memory: pytool hit its 64 MiB limit" in finished["h"]["output"]
    start = of(events, "SessionStarted")[0]
    workdir = Path(start["workdir"])
    assert (workdir / "note.txt").read_text() == "hello"
    log = (workdir / "logs" / "pytool.log").read_text()
    assert "tool_py stdout" in log and "tool_py stderr" in log
    artifacts = (workdir / "out" / "hook-artifacts.jsonl").read_text().splitlines()
    assert json.loads(artifacts[0])["artifact"] == "turn 0"
    assert not any(f["handler"] == "on-task-start" for f in of(events, "HookFault"))
    assert of(events, "SessionEnded")[0]["exit_status"] == "ok"


def test_javascript_tool_and_hook(tmp_path: Path, murmur_home: Path) -> None:
    tool, hook = guest("js_tool"), guest("js_hook")
    entries = (f"  - name: jstool\n    runtime: tool\n    source: {tool}\n"
               f"  - name: jshook\n    runtime: hook\n    source: {hook}\n")
    steps = [call_response("jstool", {"op": "echo", "v": "x"}, "a"),
             call_response("jstool", {"op": "ask", "prompt": "Name?"}, "b"),
             call_response("jstool", {"op": "fail"}, "c"), text_response("done")]
    code, events, stderr = launch(capsule(tmp_path / "js", steps, entries), murmur_home,
                                  "Ada")
    assert code == 0, stderr
    finished = {e["call_id"]: e for e in of(events, "ToolCallFinished")}
    assert '"v":"x"' in finished["a"]["output"].replace(" ", "")
    assert "Ada" in finished["b"]["output"]
    assert finished["c"]["status"] == "error"
    workdir = Path(of(events, "SessionStarted")[0]["workdir"])
    artifacts = (workdir / "out" / "hook-artifacts.jsonl").read_text().splitlines()
    assert {json.loads(line)["artifact"] for line in artifacts} == {"js"}


def test_rust_tool_importing_wasi_cli_and_io(tmp_path: Path, murmur_home: Path) -> None:
    tool = guest("rust_tool")
    entries = f"  - name: rusty\n    runtime: tool\n    source: {tool}\n"
    steps = [call_response("rusty", {"op": "echo", "k": 2}, "a"),
             call_response("rusty", {"op": "ask", "prompt": "Ok?"}, "b"),
             call_response("rusty", {"op": "write", "path": "r.txt", "text": "from rust"}, "c"),
             call_response("rusty", {"op": "env"}, "d"),
             call_response("rusty", {"op": "crash"}, "e"), text_response("done")]
    code, events, stderr = launch(capsule(tmp_path / "rs", steps, entries), murmur_home, "yes")
    assert code == 0, stderr
    finished = {e["call_id"]: e for e in of(events, "ToolCallFinished")}
    assert '"k"' in finished["a"]["output"]
    assert "yes" in finished["b"]["output"]
    workdir = Path(of(events, "SessionStarted")[0]["workdir"])
    assert (workdir / "r.txt").read_text() == "from rust"
    assert "MURMUR_SESSION_ID" in finished["d"]["output"]
    assert finished["e"]["status"] == "error" and "trapped" in finished["e"]["output"]
    trace = read_jsonl(workdir / "trace.jsonl")
    assert trace[-1]["event_type"] == "session_end" and trace[-1]["exit_status"] == "ok"


def test_compiled_code_is_reused_by_the_next_launch(tmp_path: Path, murmur_home: Path) -> None:
    tool = guest("py_tool")
    root = capsule(tmp_path / "again",
                   [call_response("t", {"op": "echo"}, "a"), text_response("done")],
                   f"  - name: t\n    runtime: tool\n    source: {tool}\n")
    launch(root, murmur_home)  # compiles, or finds the shared cache warm
    shutil.rmtree(root / "workdir")
    code, events, _ = launch(root, murmur_home)
    assert code == 0
    assert not of(events, "Progress")  # a cached component is not compiled again


def test_a_huge_prompt_from_a_tool_is_cut_before_it_reaches_python(tmp_path: Path,
                                                                   murmur_home: Path) -> None:
    """A string a component hands to a host import is lifted up to 1 MiB: the question shown
    to the human (and every event and line after it) holds no more than that."""
    tool = guest("py_tool")
    entries = f"  - name: pytool\n    runtime: tool\n    source: {tool}\n"
    # 3 MiB of UTF-8 made by the tool (a call's own input is bounded at 1 MiB before it runs),
    # a character across the cut
    root = capsule(tmp_path / "ask",
                   [call_response("pytool", {"op": "ask", "prompt": "é", "repeat": 3 << 19}, "a"),
                    text_response("done")],
                   entries)
    code, events, stderr = launch(root, murmur_home, "fine")
    assert code == 0, stderr
    asked = of(events, "InputRequested")[0]["prompt"]
    assert len(asked.encode()) <= 1 << 20 and set(asked) == {"é"}
    assert "fine" in of(events, "ToolCallFinished")[0]["output"]
