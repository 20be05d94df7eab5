"""Every `murmur:*` interface version a Murmur release served loads and runs here; any other is
refused before instantiation, naming what the component has and the nearest version accepted.

The versions and where each was served: Murmur's newest notes §1.2 (served package versions by
release), §1.5 (hook@0.9.0: `message` gains `inserted-by: option<context-insertion>`;
runtime@0.4.0 `tokens`; task-io/read@0.1.0; tool-registry/invoke@0.2.0 over tool/run@0.2.0) and
seed 001 (hook@0.5.0, runtime@0.2.0 of Murmur v0.2.0). Hooks are built by componentize-py, one
per family (tests/guests/python/{first_hook,hook,newest_hook}); the refused hook and the
v0.11.0 script capsule are WAT (tests/wasm/fixtures/unknown_hook, newest_invoke_capsule).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.capsules import set_driver_config
from tests.conftest import read_jsonl, run_cli
from tests.guests.build import ToolchainUnavailable, build_guest, cache_root
from tests.responses import call_response, text_response
from tests.wasm.conftest import WasmCapsule, fixture
from tests.wasm.test_wasm_session import run, tool_entry
from tui.core.errors import IncompatibleComponent
from tui.core.events import vocabulary as ev
from tui.core.text import tokens
from tui.core.wasm import versions
from tui.core.wasm.runtime import WasmRuntime

# the hook commits replace-context on-compaction and artifacts on-inference (no binding)
CONTRACT = "commit_policy: replace-context\n"
# a 400-token window at a threshold of 0.5: every turn of these sessions is due for compaction
COMPACTING = "  compaction:\n    threshold: 0.5\ncontext:\n  max_tokens: 400\n"


@pytest.fixture(autouse=True)
def shared_compile_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each language guest compiles once per run (and once across runs), not once per test."""
    monkeypatch.setenv("MURMUR_COMPILED_CACHE", str(cache_root() / "compiled-host"))


def guest(name: str) -> Path:
    try:
        return build_guest(name)
    except ToolchainUnavailable as exc:  # componentize-py is a test dependency: never skips
        raise AssertionError(str(exc)) from None


def hook_capsule(wasm_capsule: WasmCapsule, tmp_path: Path, wasm: Path,
                 responses: list[Any], grants: str = "") -> Path:
    folder = tmp_path / "hook-versioned"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(wasm, folder / "versioned.wasm")
    (folder / "murmur.yaml").write_text("name: versioned\nversion: '1'\nruntime: hook\n"
                                        + CONTRACT)
    entry = (f"  - name: versioned\n    runtime: hook\n    source: {folder}\n"
             "    capabilities:\n      conversation: {read: true}\n" + grants)
    root = wasm_capsule(responses, tool_entry("echo", "echo_tool") + entry, extra=COMPACTING)
    set_driver_config(root, requests_log="sent.jsonl")
    return root


def compacting_session(wasm_capsule: WasmCapsule, tmp_path: Path, wasm: Path
                       ) -> tuple[Any, Any, list[dict[str, Any]], list[dict[str, Any]]]:
    """Turn 1 calls echo and is compacted (the hook's run-inference takes the next response
    as its summary); turn 2 answers and is compacted again."""
    root = hook_capsule(wasm_capsule, tmp_path, wasm, [
        call_response("echo", {"x": 1}), text_response("first summary"), text_response("done"),
        text_response("second summary")])
    result, sink = run(root)
    assert result.exit_status == "ok" and result.result == "done"
    assert result.record_path is not None
    sent = [json.loads(line) for line in (root / "sent.jsonl").read_text().splitlines()]
    return result, sink, read_jsonl(result.record_path), sent


def artifacts_of(result: Any) -> list[str]:
    path = result.paths.out / "hook-artifacts.jsonl"
    return [json.loads(line)["artifact"] for line in path.read_text().splitlines()]


def user_texts(record: list[dict[str, Any]]) -> list[str]:
    return [m["content"][0]["text"] for m in record if m["role"] == "user"]


def test_a_hook_of_murmur_v0_4_to_v0_11_sees_inserted_by_and_gets_tokens(
        wasm_capsule: WasmCapsule, tmp_path: Path) -> None:
    """hook@0.9.0 + runtime@0.4.0 (inference, tokens) + task-io@0.1.0 + conversation@0.2.0."""
    wasm = guest("py_newest_hook")
    result, sink, record, sent = compacting_session(wasm_capsule, tmp_path, wasm)
    assert not sink.of(ev.HookFault)
    assert [c.turn for c in sink.of(ev.Compacted)] == [0, 1]
    # runtime/tokens@0.4.0 counts as the host does; task-io answers without the grant
    assert artifacts_of(result)[0] == (f"turn 0 tokens {tokens.count('hello world')} "
                                       "task-io not-granted")
    # the first summary entered the context marked by its insertion; the second compaction's
    # event handed it back to the hook with `inserted-by: replace-context`
    assert user_texts(record)[1:] == ["first summary [inserted-by replace-context: 0]",
                                      "second summary [inserted-by replace-context: 1]"]
    summaries = [m for m in record if m["role"] == "user"][1:]
    assert all(m["inserted_by"] == "replace-context" for m in summaries)
    # the replacement reached the loop: turn 2's request opens with it, unmarked (a driver
    # never sees the record's own keys)
    assert sent[2]["messages"][0] == {"role": "user", "content": [
        {"type": "text", "text": "first summary [inserted-by replace-context: 0]"}]}


def test_a_granted_task_io_read_answers_no_task(wasm_capsule: WasmCapsule,
                                                tmp_path: Path) -> None:
    root = hook_capsule(wasm_capsule, tmp_path, guest("py_newest_hook"),
                        [text_response("done"), text_response("summary")],
                        grants="      task_io: {read: true}\n")
    result, _ = run(root)
    assert result.exit_status == "ok"
    assert artifacts_of(result)[0].endswith("task-io no-task")


def test_a_hook_of_murmur_v0_2_0_still_works(wasm_capsule: WasmCapsule,
                                             tmp_path: Path) -> None:
    """hook@0.5.0 over runtime@0.2.0 (seed 001): `message` is role and content only, and its
    task-start-event has none of the later fields."""
    wasm = guest("py_first_hook")
    result, sink, record, sent = compacting_session(wasm_capsule, tmp_path, wasm)
    assert not sink.of(ev.HookFault)
    assert [c.turn for c in sink.of(ev.Compacted)] == [0, 1]
    assert artifacts_of(result)[0] == "turn 0 v0.2.0"
    texts = user_texts(record)
    assert texts[1].startswith("first summary [") and texts[2].startswith("second summary [")
    assert sent[2]["messages"][0]["content"][0]["text"] == texts[1]


def test_a_hook_of_murmur_tuis_0_8_0_set_still_works(wasm_capsule: WasmCapsule,
                                                     tmp_path: Path) -> None:
    """hook@0.8.0 + runtime@0.2.0 + conversation@0.1.0: murmur-tui's earlier hook set."""
    result, sink, record, _ = compacting_session(wasm_capsule, tmp_path, guest("py_hook"))
    assert not sink.of(ev.HookFault)
    assert [c.turn for c in sink.of(ev.Compacted)] == [0, 1]
    assert artifacts_of(result)[0] == "turn 0"
    assert user_texts(record)[1:] == ["first summary", "second summary"]


def test_a_script_capsule_of_murmur_v0_11_invokes_tools(wasm_capsule: WasmCapsule) -> None:
    """tool-registry/invoke@0.2.0: tool/run@0.2.0's tool-result, attachments included."""
    root = wasm_capsule(None, tool_entry("echo", "echo_tool") + tool_entry("old", "old_tool"),
                        driver="")
    manifest = (root / "murmur.yaml").read_text()
    (root / "murmur.yaml").write_text(manifest[:manifest.index("inference:")])
    shutil.copy(fixture("newest_invoke_capsule"), root / "capsule.wasm")
    result, sink = run(root)
    assert result.exit_status == "ok"
    calls = sink.of(ev.ToolCallFinished)
    assert [(c.tool_name, c.status) for c in calls] == [("echo", "ok")]
    assert calls[0].input == {"data": "from capsule"}


def test_an_unknown_version_is_refused_naming_it_and_the_nearest(tmp_path: Path) -> None:
    runtime = WasmRuntime(tmp_path / "compiled")
    try:
        loaded = runtime.load(fixture("unknown_hook"))
        with pytest.raises(IncompatibleComponent) as info:
            versions.check(loaded.path, "hook", loaded.imports, loaded.exports)
    finally:
        runtime.close()
    message = str(info.value)
    assert message.startswith("unknown_hook.wasm exports murmur:hook/lifecycle@0.10.0; ")
    assert "the nearest is murmur:hook/lifecycle@0.9.0 (Murmur v0.4.0 to v0.11.0)" in message


def test_the_refusal_is_what_a_launch_prints(wasm_capsule: WasmCapsule,
                                             murmur_home: Path) -> None:
    root = wasm_capsule([text_response("never")],
                        "  - name: watcher\n    runtime: hook\n"
                        "    source: {fixtures}/unknown_hook.wasm\n")
    done = run_cli("launch", str(root), "--headless", "--task", "t")
    assert done.returncode == 2
    assert "unknown_hook.wasm exports murmur:hook/lifecycle@0.10.0" in done.stderr
    assert "the nearest is murmur:hook/lifecycle@0.9.0" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(("name", "nearest"), [
    ("murmur:hook/lifecycle@0.7.0", "murmur:hook/lifecycle@0.8.0"),
    ("murmur:hook/lifecycle@0.6.0", "murmur:hook/lifecycle@0.5.0"),
    ("murmur:hook/lifecycle@1.0.0", "murmur:hook/lifecycle@0.9.0"),
    ("murmur:hook/lifecycle", "murmur:hook/lifecycle@0.9.0"),
])
def test_the_nearest_version_of_an_export(name: str, nearest: str) -> None:
    found = versions.unserved("hook", frozenset(), frozenset({name}))
    assert [(u.direction, u.nearest) for u in found] == [("exports", nearest)]


def test_an_import_of_another_version_names_the_nearest_linked() -> None:
    found = versions.unserved("hook", frozenset({"murmur:runtime/inference@0.5.0",
                                                 "murmur:conversation/read@0.3.0"}),
                              frozenset({"murmur:hook/lifecycle@0.9.0"}))
    assert [(u.name, u.nearest) for u in found] == [
        ("murmur:conversation/read@0.3.0", "murmur:conversation/read@0.2.0"),
        ("murmur:runtime/inference@0.5.0", "murmur:runtime/inference@0.4.0")]


def test_a_process_driver_is_named_for_what_it_is() -> None:
    with pytest.raises(IncompatibleComponent) as info:
        versions.check(Path("claude.wasm"), "driver", frozenset(),
                       frozenset({"murmur:driver/process@0.6.0"}))
    assert "claude.wasm exports murmur:driver/process@0.6.0: it is a process driver" in \
        str(info.value)


def test_every_linked_version_is_wit_murmur_tui_ships() -> None:
    """Each version the table links has its WIT in wit/ (one place: the table and wit/)."""
    shipped = set()
    for path in Path(__file__).resolve().parents[2].joinpath("wit").rglob("*.wit"):
        text = path.read_text(encoding="utf-8")
        package = next(line.split()[1].rstrip(";") for line in text.splitlines()
                       if line.startswith("package "))
        namespace, _, version = package.partition("@")
        for line in text.splitlines():
            if line.startswith("interface "):
                interface = line.split()[1]
                shipped.add(f"{namespace.replace('%', '')}/{interface}@{version}")
    assert set(versions.linked()) <= shipped, set(versions.linked()) - shipped
