"""murmur.lock and the artifact manager, end to end from `murmur-tui launch --headless`: real
components (tests/wasm/fixtures), a real local store under $MURMUR_HOME/artifacts in murmur-tui's
bare layout, real files; the lock written is version 2 (spec murmur-newest §3)."""

from __future__ import annotations

import hashlib
import shutil
import stat
from pathlib import Path

import yaml

from tests.capsules import write_capsule
from tests.conftest import read_jsonl, run_cli
from tests.responses import call_response, text_response
from tests.wasm.conftest import FIXTURES, fixture


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def publish(home: Path, name: str, version: str, component: str, *,
            description: str = "Echoes what it is given.", recorded: str | None = None) -> Path:
    """`<name>.wasm`, its `murmur.yaml` and the store's `<name>.wasm.sha256` in the home
    store; `recorded` overrides the hash the store reports."""
    folder = home / "artifacts" / name / version
    folder.mkdir(parents=True)
    wasm = folder / f"{name}.wasm"
    shutil.copy(fixture(component), wasm)
    (folder / "murmur.yaml").write_text(
        f"name: {name}\nversion: {version}\nruntime: tool\nimplementation: wasm\n"
        f"description: {description}\ntags: [echo, test]\n"
        "input_schema: '{\"type\":\"object\",\"properties\":{\"data\":{\"type\":\"string\"}}}'\n",
        encoding="utf-8")
    (folder / f"{name}.wasm.sha256").write_text(f"{recorded or sha(wasm)}  {name}.wasm\n")
    return wasm


def agent_capsule(root: Path, version: str) -> Path:
    """A capsule whose scripted model calls the store-resolved tool `echo` once."""
    return write_capsule(root, [call_response("echo", {"x": 1}), text_response("done")],
                         name="lock-test", max_turns=None, shell=(),
                         artifacts=f"  - name: echo\n    runtime: tool\n    version: '{version}'\n")


def launch(root: Path, home: Path) -> tuple[int, str, list[dict[str, object]]]:
    done = run_cli("launch", "--headless", str(root), "--task", "go",
                   "--workdir", str(root / "wd"), env={"MURMUR_HOME": str(home)})
    traces = sorted((root / "wd").rglob("trace.jsonl")) if (root / "wd").exists() else []
    return done.returncode, done.stderr, read_jsonl(traces[0]) if traces else []


def test_a_first_run_writes_the_lock_and_the_next_run_is_checked_against_it(
        tmp_path: Path) -> None:
    home = tmp_path / "home"
    wasm = publish(home, "echo", "1.0.0", "echo_tool")
    root = agent_capsule(tmp_path / "capsule", "1.0.0")
    code, err, trace = launch(root, home)
    assert code == 0, err
    lock_file = root / "murmur.lock"
    lock = yaml.safe_load(lock_file.read_text())
    assert lock == {"lock_version": 2, "artifacts": [
        {"name": "echo", "resolved_version": "1.0.0", "sha256": {"any": sha(wasm)},
         "origin": "operator"}]}
    assert stat.S_IMODE(lock_file.stat().st_mode) == 0o600
    assert [t["status"] for t in trace if t["event_type"] == "tool_call"] == ["ok"]

    # the manifest now asks for 2.0.0: refused as `mur run` refuses it (spec §2.4 step 3)
    agent_capsule(root, "2.0.0")
    shutil.rmtree(root / "wd")
    code, err, _ = launch(root, home)
    assert code == 2
    assert ("murmur.lock version mismatch for 'echo': manifest requested 2.0.0, lock pinned "
            "1.0.0") in err
    assert not (root / "wd").exists()
    # asked for again at the pinned version, it runs; an existing lock is never refreshed
    agent_capsule(root, "1.0.0")
    code, err, trace = launch(root, home)
    assert code == 0, err
    assert [t["status"] for t in trace if t["event_type"] == "tool_call"] == ["ok"]
    assert yaml.safe_load(lock_file.read_text()) == lock


def test_a_component_that_does_not_match_its_pin_is_refused_before_anything_runs(
        tmp_path: Path) -> None:
    home = tmp_path / "home"
    publish(home, "echo", "1.0.0", "echo_tool")
    root = agent_capsule(tmp_path / "capsule", "1.0.0")
    assert launch(root, home)[0] == 0
    # the stored component is replaced (and its store hash with it): the pin no longer holds
    replaced = shutil.copy(fixture("greedy_tool"), home / "artifacts/echo/1.0.0/echo.wasm")
    Path(f"{replaced}.sha256").write_text(sha(Path(replaced)))
    pinned = yaml.safe_load((root / "murmur.lock").read_text())["artifacts"][0]["sha256"]["any"]
    shutil.rmtree(root / "wd")
    code, err, _ = launch(root, home)
    assert code == 2
    assert "artifact integrity check failed for echo@1.0.0" in err
    assert f"expected sha256 (murmur.lock): {pinned}" in err
    assert pinned in err and sha(Path(replaced)) in err
    assert "Traceback" not in err
    assert not (root / "wd").exists()  # nothing ran, nothing was written


def test_a_lock_without_the_entry_or_of_another_version_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    publish(home, "echo", "1.0.0", "echo_tool")
    root = agent_capsule(tmp_path / "capsule", "1.0.0")
    (root / "murmur.lock").write_text("lock_version: 1\nartifacts: []\n")
    code, err, _ = launch(root, home)
    assert code == 2 and "murmur.lock missing artifact entry for 'echo'" in err
    (root / "murmur.lock").write_text("lock_version: 7\nartifacts: []\n")
    code, err, _ = launch(root, home)
    assert code == 2 and "unsupported lock_version 7 (expected 2" in err


def script_capsule(root: Path) -> Path:
    """A script capsule (manage_capsule) with the declared tool `echo` it reports through."""
    root.mkdir(parents=True)
    (root / "murmur.yaml").write_text(
        "name: manage-test\nversion: '1.0.0'\nartifacts:\n"
        f"  - name: echo\n    runtime: tool\n    source: {FIXTURES}/echo_tool.wasm\n",
        encoding="utf-8")
    shutil.copy(fixture("manage_capsule"), root / "capsule.wasm")
    return root


def tools_dir(root: Path) -> Path:
    """The session's `tools/` folder (beside its trace)."""
    return sorted((root / "wd").rglob("trace.jsonl"))[0].parent / "tools"


def reports(trace: list[dict[str, object]]) -> list[tuple[object, object]]:
    return [(t["tool_name"], t["input"]) for t in trace if t["event_type"] == "tool_call"]


def test_a_script_capsule_pulls_a_tool_from_the_local_store_and_invokes_it(
        tmp_path: Path) -> None:
    home = tmp_path / "home"
    wasm = publish(home, "pulled-echo", "1.0.0", "echo_tool")
    root = script_capsule(tmp_path / "capsule")
    code, err, trace = launch(root, home)
    assert code == 0, err
    calls = [t for t in trace if t["event_type"] == "tool_call"]
    assert reports(trace) == [
        ("echo", {"data": "pulled-echo"}),                      # pull answered the summary
        ("pulled-echo", {"data": "hi from pull"}),              # invoked in the same session
        ("echo", {"data": "Echoes what it is given."}),         # describe read its manifest
        ("echo", {"data": "not implemented (query: anything)"}),
        ("echo", {"data": "not implemented (name: pulled-echo)"}),
        ("echo", {"data": "artifact-manager/search and remove are not implemented"}),
        ("echo", {"data": "echo"}), ("echo", {"data": "pulled-echo"}),  # list
    ]
    assert calls[1]["status"] == "ok"
    installed = tools_dir(root) / "pulled-echo"
    assert sha(installed / "pulled-echo.wasm") == sha(wasm)
    assert "description: Echoes what it is given." in (installed / "murmur.yaml").read_text()
    session = next(t["session_id"] for t in trace if t["event_type"] == "session_start")
    assert yaml.safe_load((root / "murmur.lock").read_text())["artifacts"] == [
        {"name": "pulled-echo", "resolved_version": "1.0.0", "sha256": {"any": sha(wasm)},
         "origin": "runtime", "session": session}]


def test_a_tampered_store_entry_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    home = tmp_path / "home"
    wasm = publish(home, "pulled-echo", "1.0.0", "echo_tool", recorded="ab" * 32)
    root = script_capsule(tmp_path / "capsule")
    code, err, trace = launch(root, home)
    assert code == 0, err  # the pull's err is the capsule's to handle; the session goes on
    said = reports(trace)[0][1]
    assert isinstance(said, dict)
    assert said["data"].startswith("artifact integrity check failed for pulled-echo@1.0.0")
    assert "ab" * 32 in said["data"] and sha(wasm) in said["data"]
    # the invoke of the tool that was never installed is refused before it becomes a call
    assert "pulled-echo" not in [name for name, _ in reports(trace)]
    assert reports(trace)[1] == ("echo", {"data": "artifact 'pulled-echo' is not installed"})
    assert not (tools_dir(root) / "pulled-echo").exists()
    assert not (root / "murmur.lock").exists()


def test_a_pull_that_disagrees_with_the_pin_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    publish(home, "pulled-echo", "1.0.0", "echo_tool")
    root = script_capsule(tmp_path / "capsule")
    (root / "murmur.lock").write_text(
        "lock_version: 1\nartifacts:\n- name: pulled-echo\n  resolved_version: 0.9.0\n"
        f"  sha256:\n    wasm: {'cd' * 32}\n")
    before = (root / "murmur.lock").read_text()
    code, err, trace = launch(root, home)
    assert code == 0, err
    said = reports(trace)[0][1]
    assert isinstance(said, dict)
    assert said["data"].startswith("murmur.lock conflict for 'pulled-echo': pinned "
                                   "pulled-echo@0.9.0")
    assert not (tools_dir(root) / "pulled-echo").exists()
    assert (root / "murmur.lock").read_text() == before
