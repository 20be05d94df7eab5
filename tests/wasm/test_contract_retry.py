"""The retry rule with a real timing-out component, contracts.json at start, call bounds."""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from tests.fakes import Collect
from tests.responses import call_response, text_response
from tests.wasm.conftest import FIXTURES, WasmCapsule
from tui.core.errors import LaunchError
from tui.core.events import vocabulary as ev
from tui.core.headless import HeadlessResponder
from tui.core.loop.launch import LaunchOptions, SessionResult
from tui.core.loop.session import Session
from tui.core.manifest.reader import load_capsule


def run(root: Path) -> tuple[SessionResult, Collect]:
    sink = Collect()
    responder = HeadlessResponder([], stdin=io.StringIO(""), err=io.StringIO())
    session = Session(load_capsule(root), LaunchOptions(task="go"), sinks=[sink],
                      responder=responder)
    return session.run(), sink


def spin_folder(tmp_path: Path, contract: str | None) -> Path:
    """The spinning fixture as a tool folder with its own murmur.yaml."""
    folder = tmp_path / "spin-tool"
    folder.mkdir(exist_ok=True)
    shutil.copy(FIXTURES / "spin_tool.wasm", folder / "spin.wasm")
    text = "name: spin\ndescription: Spins.\n"
    if contract is not None:
        text += f"x-murmur-tui:\n  contract:\n{contract}"
    (folder / "murmur.yaml").write_text(text, encoding="utf-8")
    return folder


def spin_capsule(wasm_capsule: WasmCapsule, folder: Path) -> Path:
    return wasm_capsule([call_response("spin", {}), text_response("after")],
                        f"  - name: spin\n    runtime: tool\n    source: {folder}\n"
                        "    capabilities:\n      limits: {deadline_seconds: 0.2}\n")


def retries(sink: Collect) -> list[str]:
    return [w.text for w in sink.of(ev.Warning) if w.code == "W-TOOL-RETRY"]


@pytest.mark.parametrize(("contract", "retried", "why"), [
    ("    effect: read-only\n    replay: safe\n", True,
     "retried once: the failure is definitive and the tool's replay is safe"),
    ("    effect: read-only\n    replay: idempotent\n", True,
     "retried once: the failure is definitive and the tool's replay is idempotent"),
    ("    effect: read-only\n    replay: unsafe\n", False,
     "not retried: the tool's replay is unsafe"),
    ("    effect: mutating\n    replay: idempotent\n", False,
     "not retried: the failure is uncertain (mutating tool"),
    (None, False, "not retried: the failure is uncertain (mutating tool"),
])
def test_a_timed_out_call_is_retried_only_when_its_contract_allows(
        wasm_capsule: WasmCapsule, tmp_path: Path, contract: str | None, retried: bool,
        why: str) -> None:
    root = spin_capsule(wasm_capsule, spin_folder(tmp_path, contract))
    result, sink = run(root)
    assert result.exit_status == "ok" and result.result == "after"
    said = retries(sink)
    assert len(said) == 1 and said[0].startswith("spin (c1) failed; " + why)
    finished = sink.of(ev.ToolCallFinished)
    assert len(finished) == 1 and finished[0].status == "error"
    assert "out of time" in finished[0].output


def test_contracts_and_fingerprints_are_written_at_start(wasm_capsule: WasmCapsule,
                                                         tmp_path: Path) -> None:
    folder = spin_folder(tmp_path, "    effect: read-only\n    replay: safe\n"
                         "    capabilities: [filesystem.read]\n")
    root = wasm_capsule([text_response("done")],
                        f"  - name: spin\n    runtime: tool\n    source: {folder}\n"
                        f"  - name: echo\n    runtime: tool\n    source: "
                        f"{FIXTURES}/echo_tool.wasm\n",
                        extra="capabilities:\n  shell:\n    allow: [ls]\n")
    result, _ = run(root)
    path = result.paths.tools / "contracts.json"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    table = json.loads(path.read_text(encoding="utf-8"))
    assert table["spin"]["source"] == "declared"
    assert (table["spin"]["effect"], table["spin"]["replay"]) == ("read-only", "safe")
    assert table["echo"]["source"] == "derived"
    assert (table["echo"]["effect"], table["echo"]["replay"]) == ("mutating", "unsafe")
    assert table["ls"]["source"] == "built-in" and "process.execute" in table["ls"][
        "capabilities"]
    assert len({entry["fingerprint"] for entry in table.values()}) == 3
    assert [table[n]["kind"] for n in ("spin", "echo", "ls")] == ["wasm", "wasm", "shell"]


def test_a_bad_contract_stops_the_launch_naming_the_line(wasm_capsule: WasmCapsule,
                                                         tmp_path: Path) -> None:
    folder = spin_folder(tmp_path, "    effect: sometimes\n    replay: safe\n")
    root = spin_capsule(wasm_capsule, folder)
    with pytest.raises(LaunchError) as raised:
        run(root)
    assert str(raised.value).startswith(
        f"{folder / 'murmur.yaml'}:5: x-murmur-tui.contract.effect: 'sometimes' is not one of")


def test_a_call_input_over_one_mib_is_not_run(wasm_capsule: WasmCapsule) -> None:
    root = wasm_capsule([call_response("echo", {"x": "a" * (1 << 20)}), text_response("done")],
                        f"  - name: echo\n    runtime: tool\n    source: "
                        f"{FIXTURES}/echo_tool.wasm\n")
    result, sink = run(root)
    assert result.exit_status == "ok"
    finished = sink.of(ev.ToolCallFinished)[0]
    assert finished.status == "error"
    assert finished.output.startswith("error: the call's input is 1048584 bytes; the limit is "
                                      "1048576 (1 MiB), so echo was not run")


def test_a_declared_capability_the_capsule_does_not_grant_is_warned_at_start(
        wasm_capsule: WasmCapsule, tmp_path: Path) -> None:
    folder = spin_folder(tmp_path, "    effect: mutating\n    replay: unsafe\n"
                                   "    capabilities: [network.access]\n")
    root = spin_capsule(wasm_capsule, folder)
    _, sink = run(root)
    said = [w.text for w in sink.of(ev.Warning) if w.code == "W-TOOL-CAPABILITY"]
    assert len(said) == 1 and "network.access" in said[0] and "spin" in said[0]
    assert sink.events.index(next(e for e in sink.events if isinstance(e, ev.Warning) and
                                  e.code == "W-TOOL-CAPABILITY")) < \
        sink.events.index(sink.of(ev.TaskStarted)[0])  # said at start, before any task
