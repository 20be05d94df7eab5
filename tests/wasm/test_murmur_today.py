"""A capsule as a Murmur v0.11 user has it launches unchanged: its tool and its hook put in the
project store by `mur install` (spec murmur-newest §2.2: `.mur.zip` + `.sha256` +
`.meta.json`), a `murmur.lock` version 2 pinning both archives (§3: `sha256.any`,
`origin: operator`), and a hook built against `murmur:hook/lifecycle@0.9.0` with
runtime@0.4.0 (§1.2, §1.5). Run from the command line; the lock is read, never rewritten."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.conftest import read_jsonl, run_cli
from tests.murmur_store import mur_install, sha
from tests.responses import call_response, text_response
from tests.wasm.conftest import WasmCapsule, fixture
from tests.wasm.test_interface_versions import COMPACTING, CONTRACT, guest
from tui.core.text import tokens


def test_a_store_installed_capsule_with_a_v2_lock_and_a_hook_0_9_0_launches_unchanged(
        wasm_capsule: WasmCapsule, tmp_path: Path) -> None:
    hook = guest("py_newest_hook")
    entries = ("  - name: echo\n    runtime: tool\n    version: '1.0.0'\n"
               "  - name: versioned\n    runtime: hook\n    version: '1.0.0'\n"
               "    capabilities:\n      conversation: {read: true}\n")
    root = wasm_capsule([call_response("echo", {"x": 1}), text_response("first summary"),
                         text_response("done"), text_response("second summary")],
                        entries, extra=COMPACTING)
    store = root / ".murmur" / "artifacts"
    tool = mur_install(store, "echo", "1.0.0", fixture("echo_tool"))
    hooked = mur_install(store, "versioned", "1.0.0", hook, runtime="hook", more=CONTRACT)
    lock = {"lock_version": 2, "artifacts": [
        {"name": "echo", "resolved_version": "1.0.0", "sha256": {"any": sha(tool)},
         "origin": "operator"},
        {"name": "versioned", "resolved_version": "1.0.0", "sha256": {"any": sha(hooked)},
         "origin": "operator"}]}
    (root / "murmur.lock").write_text(yaml.safe_dump(lock, sort_keys=False))
    before = (root / "murmur.lock").read_bytes()

    done = run_cli("launch", "--headless", str(root), "--task", "go", "--json",
                   "--workdir", str(root / "wd"), env={"MURMUR_HOME": str(tmp_path / "home")})
    assert done.returncode == 0, done.stderr
    trace = read_jsonl(next((root / "wd").rglob("trace.jsonl")))
    assert [t["status"] for t in trace if t["event_type"] == "tool_call"] == ["ok"]
    assert not [t for t in trace if t["event_type"] == "hook_fault"]
    # the 0.9.0 hook ran: on-inference it counted with runtime/tokens@0.4.0
    artifacts = [json.loads(line)["artifact"] for line in
                 next((root / "wd").rglob("hook-artifacts.jsonl")).read_text().splitlines()]
    assert artifacts[0] == f"turn 0 tokens {tokens.count('hello world')} task-io not-granted"
    assert (root / "murmur.lock").read_bytes() == before
