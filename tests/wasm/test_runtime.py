"""The engine, the compile cache, version checks and the guest wrapper, on real components."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from tests.wasm.conftest import FIXTURES, fixture
from tui.core.cancel import CancelToken
from tui.core.errors import ComponentLoadError, GuestFailure, IncompatibleComponent, TrapGuest
from tui.core.wasm import calls, versions
from tui.core.wasm.guest import Guest, Sandbox
from tui.core.wasm.runtime import WasmRuntime
from tui.core.wasm.values import plain, record


@pytest.fixture
def runtime(tmp_path: Path) -> WasmRuntime:
    rt = WasmRuntime(tmp_path / "compiled")
    yield rt
    rt.close()


def sandbox(tmp_path: Path, **changes: object) -> Sandbox:
    values: dict[str, object] = {
        "log_path": tmp_path / "logs" / "t.log", "memory_bytes": 64 << 20,
        "deadline_seconds": 10.0, "limits_key": "capabilities.limits",
        "preopen": None,
    }
    values.update(changes)
    return Sandbox(**values)  # type: ignore[arg-type]


def run_tool(runtime: WasmRuntime, name: str, tmp_path: Path, data: str | None = "hi",
             context: calls.CallContext | None = None, **changes: object) -> dict[str, object]:
    loaded = runtime.load(fixture(name))
    export = versions.check(loaded.path, "tool", loaded.imports, loaded.exports)
    guest = Guest(runtime, loaded, export, sandbox(tmp_path, **changes), name)
    try:
        result = guest.call("run", record(data=data, log_path=None),
                            context=context or calls.CallContext(name, "tool"))
    finally:
        guest.close()
    value = plain(result)
    assert isinstance(value, dict)
    return value


def test_compiled_code_is_cached_and_reused_across_runtimes(tmp_path: Path) -> None:
    first = WasmRuntime(tmp_path / "compiled")
    assert first.load(fixture("echo_tool")).source == "compiled"
    assert first.load(fixture("echo_tool")).source == "memory"
    first.close()
    cached = list((tmp_path / "compiled").glob("*.cwasm"))
    assert len(cached) == 1 and cached[0].with_suffix(".json").is_file()
    second = WasmRuntime(tmp_path / "compiled")
    loaded = second.load(fixture("echo_tool"))
    assert loaded.source == "cache"
    assert "murmur:tool/run@0.2.0" in loaded.exports
    second.close()


@pytest.mark.parametrize("damage", ["garbage", "truncate", "foreign-stamp", "no-stamp"])
def test_a_damaged_or_foreign_cache_file_is_recompiled(tmp_path: Path, damage: str) -> None:
    first = WasmRuntime(tmp_path / "compiled")
    first.load(fixture("echo_tool"))
    first.close()
    (cwasm,) = (tmp_path / "compiled").glob("*.cwasm")
    stamp = cwasm.with_suffix(".json")
    if damage == "garbage":
        cwasm.write_bytes(b"\x7fELF" + b"\x00garbage" * 1000)
    elif damage == "truncate":
        cwasm.write_bytes(cwasm.read_bytes()[:1000])
    elif damage == "foreign-stamp":
        meta = json.loads(stamp.read_text())
        meta["wasmtime"] = "0.0.1"
        stamp.write_text(json.dumps(meta))
    else:
        stamp.unlink()
    again = WasmRuntime(tmp_path / "compiled")
    loaded = again.load(fixture("echo_tool"))
    assert loaded.source == "compiled"
    assert again.load(fixture("echo_tool")).source == "memory"
    again.close()
    third = WasmRuntime(tmp_path / "compiled")
    assert third.load(fixture("echo_tool")).source == "cache"
    third.close()


def test_a_stamp_that_lies_about_matching_bytes_still_cannot_crash(tmp_path: Path) -> None:
    """Bytes that pass the stamp but that wasmtime refuses are compiled again."""
    first = WasmRuntime(tmp_path / "compiled")
    first.load(fixture("echo_tool"))
    first.close()
    (cwasm,) = (tmp_path / "compiled").glob("*.cwasm")
    bogus = b"not a compiled component at all" * 10
    cwasm.write_bytes(bogus)
    import zlib

    from tui.core.wasm.cache import WASMTIME_VERSION
    cwasm.with_suffix(".json").write_text(json.dumps(
        {"size": len(bogus), "crc32": zlib.crc32(bogus), "wasmtime": WASMTIME_VERSION}))
    again = WasmRuntime(tmp_path / "compiled")
    assert again.load(fixture("echo_tool")).source == "compiled"
    again.close()


def test_a_file_that_is_not_a_component_is_a_clear_error(runtime: WasmRuntime,
                                                         tmp_path: Path) -> None:
    bad = tmp_path / "bad.wasm"
    bad.write_bytes(b"\x00asm\x01\x00\x00\x00garbage")
    with pytest.raises(ComponentLoadError, match=r"bad\.wasm: not a WebAssembly component"):
        runtime.load(bad)
    with pytest.raises(ComponentLoadError, match="cannot be read"):
        runtime.load(tmp_path / "missing.wasm")


def test_large_components_announce_their_first_compile(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from tui.core.wasm import cache

    monkeypatch.setattr(cache, "LARGE_COMPONENT_BYTES", 100)
    said: list[str] = []
    rt = WasmRuntime(tmp_path / "compiled", said.append)
    rt.load(fixture("echo_tool"))
    rt.load(fixture("echo_tool"))
    rt.close()
    assert len(said) == 1 and "compiling echo_tool.wasm" in said[0]


def test_both_tool_versions_are_accepted(runtime: WasmRuntime) -> None:
    for name, expected in (("echo_tool", "murmur:tool/run@0.2.0"),
                           ("old_tool", "murmur:tool/run@0.1.0")):
        loaded = runtime.load(fixture(name))
        assert versions.check(loaded.path, "tool", loaded.imports, loaded.exports) == expected


def test_old_tool_runs_and_has_no_attachments(runtime: WasmRuntime, tmp_path: Path) -> None:
    result = run_tool(runtime, "old_tool", tmp_path, data='{"a":1}')
    assert result["status"] == "passed" and result["data"] == '{"a":1}'
    assert "attachments" not in result


def test_another_version_is_refused_naming_found_accepted_and_rebuild(
        runtime: WasmRuntime) -> None:
    loaded = runtime.load(fixture("future_tool"))
    with pytest.raises(IncompatibleComponent) as info:
        versions.check(loaded.path, "tool", loaded.imports, loaded.exports)
    message = str(info.value)
    assert "future_tool.wasm exports murmur:tool/run@0.3.0" in message
    assert "murmur:tool/run@0.2.0 or @0.1.0" in message
    assert "rebuild it against the WIT" in message


def test_a_component_in_the_wrong_role_is_refused(runtime: WasmRuntime) -> None:
    loaded = runtime.load(fixture("all_hook"))
    with pytest.raises(IncompatibleComponent, match="is not a tool"):
        versions.check(loaded.path, "tool", loaded.imports, loaded.exports)
    with pytest.raises(IncompatibleComponent, match=r"imports murmur:task/task@9\.9\.9"):
        versions.check(loaded.path, "hook", frozenset({"murmur:task/task@9.9.9"}),
                       loaded.exports)


def test_echo_returns_data_and_metadata(runtime: WasmRuntime, tmp_path: Path) -> None:
    result = run_tool(runtime, "echo_tool", tmp_path, data='{"x":1}')
    assert result["data"] == '{"x":1}'
    assert result["metadata"] == [("state_effect", "read"), ("resource_id", "echo:last")]


def test_deadline_interrupts_a_spinning_tool(runtime: WasmRuntime, tmp_path: Path) -> None:
    with pytest.raises(GuestFailure) as info:
        run_tool(runtime, "spin_tool", tmp_path, deadline_seconds=0.2,
                 limits_key="artifacts[spin].capabilities.limits")
    assert info.value.kind == "deadline"
    assert info.value.reason == ("out of time: spin_tool ran past its 0.2 s deadline "
                                 "(artifacts[spin].capabilities.limits.deadline_seconds)")


def test_memory_limit_stops_a_hog(runtime: WasmRuntime, tmp_path: Path) -> None:
    with pytest.raises(GuestFailure) as info:
        run_tool(runtime, "hog_tool", tmp_path, memory_bytes=4 << 20)
    assert info.value.kind == "memory"
    assert info.value.reason \
        == "out of memory: hog_tool hit its 4 MiB limit (capabilities.limits.memory_bytes)"


def test_a_host_import_exception_reaches_the_caller_per_thread(runtime: WasmRuntime,
                                                               tmp_path: Path) -> None:
    class Asker:
        def __init__(self, tag: str) -> None:
            self.tag = tag

        def ask(self, tool_name: str, prompt: str) -> str:
            raise LookupError(self.tag)

    loaded = runtime.load(fixture("ask_tool"))
    export = versions.check(loaded.path, "tool", loaded.imports, loaded.exports)
    wrong: list[str] = []

    def worker(tag: str) -> None:
        for _ in range(40):
            guest = Guest(runtime, loaded, export, sandbox(tmp_path), "ask")
            try:
                guest.call("run", record(data="q", log_path=None),
                           context=calls.CallContext("ask", "tool", Asker(tag)))  # type: ignore[arg-type]
            except LookupError as exc:
                if str(exc) != tag:
                    wrong.append(f"{tag} got {exc}")
            finally:
                guest.close()

    threads = [threading.Thread(target=worker, args=(f"thread-{n}",)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []


def test_a_trapped_guest_is_poisoned_and_says_so(runtime: WasmRuntime, tmp_path: Path) -> None:
    loaded = runtime.load(fixture("spin_tool"))
    guest = Guest(runtime, loaded, "murmur:tool/run@0.2.0",
                  sandbox(tmp_path, deadline_seconds=0.05), "spin")
    with pytest.raises(GuestFailure):
        guest.call("run", record(data=None, log_path=None),
                   context=calls.CallContext("spin", "tool"))
    with pytest.raises(GuestFailure, match="trapped earlier"):
        guest.call("run", record(data=None, log_path=None),
                   context=calls.CallContext("spin", "tool"))
    guest.close()


def test_escape_attempt_is_refused_by_the_preopen(runtime: WasmRuntime, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    result = run_tool(runtime, "escape_tool", tmp_path, preopen=work)
    assert result["status"] == "failed" and str(result["data"]).startswith("refused: ")
    assert not (tmp_path / "escaped.txt").exists()
    assert list(work.iterdir()) == []


def test_request_input_outside_a_tool_traps(runtime: WasmRuntime, tmp_path: Path) -> None:
    with pytest.raises(TrapGuest, match="available to tools"):
        run_tool(runtime, "ask_tool", tmp_path, context=calls.CallContext("x", "hook"))


def test_fixtures_folder_is_complete() -> None:
    names = {path.stem for path in FIXTURES.glob("*.wasm")}
    assert {"echo_tool", "ask_tool", "spin_tool", "hog_tool", "escape_tool", "attach_tool",
            "stream_driver", "trap_driver", "all_hook", "bare_hook", "invoke_capsule",
            "old_tool", "future_tool"} <= names


def test_strings_of_any_content_cross_into_a_component_and_back(runtime: WasmRuntime,
                                                                 tmp_path: Path) -> None:
    # murmur-tui copies strings into wasmtime's C API itself (tui/core/wasm/conversion.py)
    for data in ["", "a", "héllo ✓ 🙂 \u0000 end", "x" * 300_000]:
        assert run_tool(runtime, "echo_tool", tmp_path, data=data)["data"] == data


def test_a_long_compaction_event_is_handed_to_a_hook_again_and_again(tmp_path: Path) -> None:
    # the event's type is read once and reused for every message and every later call
    from tui.core.loop.compaction import compaction_event

    runtime = WasmRuntime(tmp_path / "compiled")
    wasm = fixture("all_hook")
    loaded = runtime.load(wasm)
    export = versions.check(wasm, "hook", loaded.imports, loaded.exports)
    guest = Guest(runtime, loaded, export, sandbox(tmp_path), "hook")
    messages = [{"role": "user", "id": f"msg_{n}", "content": [{"type": "text",
                                                                "text": f"é{n}"}]}
                for n in range(300)]
    event = compaction_event(messages, 10, 0.5, None, None)
    asked: list[str] = []

    class Services:
        def run_inference(self, hook_name: str, request: list[dict[str, object]],
                          system_prompt: str | None, model: str | None
                          ) -> tuple[str, str, int, int]:
            asked.append(hook_name)
            return f"summary {len(asked)}", "m", 1, 1

    try:
        for n in (1, 2, 3):
            context = calls.CallContext("hook", "hook", Services())  # type: ignore[arg-type]
            result = guest.call("on-compaction", event, context=context)
            assert result.tag == "replace-context"
            assert [m.content for m in result.payload] == [f"summary {n}"]
    finally:
        guest.close()
        runtime.close()
    assert asked == ["hook", "hook", "hook"]


def test_a_cancel_that_came_before_the_call_is_not_lost(runtime: WasmRuntime,
                                                       tmp_path: Path) -> None:
    """Canceling trips a running component's deadline; a cancel that lands between the tool
    call's start and the component's first instruction must stop it too (the fresh deadline a
    call sets would otherwise let it spin for all of it)."""
    loaded = runtime.load(fixture("spin_tool"))
    export = versions.check(loaded.path, "tool", loaded.imports, loaded.exports)
    guest = Guest(runtime, loaded, export, sandbox(tmp_path, deadline_seconds=60.0), "spin")
    cancel = CancelToken()
    cancel.set()
    try:
        with pytest.raises(GuestFailure) as stopped:
            guest.call("run", record(data="", log_path=None),
                       context=calls.CallContext("spin", "tool"), cancel=cancel)
    finally:
        guest.close()
    assert stopped.value.kind == "canceled" and "canceled" in stopped.value.reason
