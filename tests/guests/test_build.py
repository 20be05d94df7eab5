"""Build each real-language guest (tests/guests/build.py) and smoke-test it with plain
wasmtime-py: no murmur host code, only a Linker with WASI p2 plus the murmur imports.

The Python guests must build wherever the [test] extra is installed. The JS and Rust guests
skip when their toolchain is missing, unless MURMUR_REQUIRE_GUESTS names them ("all", or a
comma list such as "js_tool,rust_tool"), which turns that skip into a failure.

Run with `-s` (or `-rP`) to see each guest's build time, size and import/export names.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from wasmtime import Config, Engine, Store, WasiConfig, WasmtimeError
from wasmtime.component import (
    Component,
    ComponentInstanceType,
    FuncType,
    Instance,
    Linker,
    Record,
    Variant,
)

from tests.guests.build import (
    GUESTS,
    BuildInfo,
    ToolchainUnavailable,
    build_guest,
    build_guest_info,
    compile_cached,
    guest_cache,
    wasi_adapter,
)

pytestmark = pytest.mark.slow

# The host engine runs with epoch interruption, which is compiled into the code: smoke-test
# (and cache) the code that the host will really run.
ENGINE_TAG = "epoch_interruption=1"

TOOL_RUN = "murmur:tool/run@0.2.0"
TASK = "murmur:task/task@0.1.0"
CHUNKS = "murmur:text/chunks@0.1.0"
LIFECYCLE = "murmur:hook/lifecycle@0.8.0"
INFERENCE = "murmur:runtime/inference@0.2.0"
READ = "murmur:conversation/read@0.1.0"
HANDLERS = ("on-stage", "on-session-start", "on-task-start", "on-inference", "on-tool-call",
            "on-shell", "on-compaction", "on-task-end", "on-session-end")

ALWAYS_REQUIRED = {"py_tool", "py_hook"}  # componentize-py is a test dependency


def _required(name: str) -> bool:
    wanted = {w.strip() for w in os.environ.get("MURMUR_REQUIRE_GUESTS", "").split(",")}
    return name in ALWAYS_REQUIRED or "all" in wanted or name in wanted


# ---- building and compiling, once per session -------------------------------------------

@dataclass
class Built:
    info: BuildInfo
    component: Component
    compile_seconds: float
    compile_hit: bool
    imports: dict[str, list[str]]
    exports: dict[str, list[str]]


def _names(engine: Engine, externs: dict[str, Any]) -> dict[str, list[str]]:
    """{top-level name: the functions in it} (types left out; [] for a top-level function)."""
    out: dict[str, list[str]] = {}
    for name, ext in externs.items():
        ty = ext.ty
        if isinstance(ty, ComponentInstanceType):
            out[name] = sorted(n for n, e in ty.exports(engine).items()
                               if isinstance(e.ty, FuncType))
        else:
            out[name] = []
    return out


@pytest.fixture(scope="session")
def engine() -> Engine:
    cfg = Config()
    cfg.epoch_interruption = True
    return Engine(cfg)


@pytest.fixture(scope="session")
def built(engine: Engine) -> Callable[[str], Built]:
    done: dict[str, Built] = {}

    def get(name: str) -> Built:
        if name not in done:
            try:
                info = build_guest_info(name)
            except ToolchainUnavailable as exc:
                if _required(name):
                    pytest.fail(f"{name} must build here: {exc}")
                pytest.skip(f"{name}: {exc}")
            t0 = time.perf_counter()
            component, hit = compile_cached(engine, ENGINE_TAG, info.path)
            seconds = time.perf_counter() - t0
            ctype = component.type
            b = Built(info, component, seconds, hit, _names(engine, ctype.imports(engine)),
                      _names(engine, ctype.exports(engine)))
            done[name] = b
            print(f"\n[{name}] {info.size:,} B; {'cached' if info.cached else 'built'} in "
                  f"{info.seconds:.2f} s (the build took {info.build_seconds:.2f} s); compiled "
                  f"{'from cache' if hit else 'cold'} in {seconds:.3f} s")
            for kind, names in (("imports", b.imports), ("exports", b.exports)):
                print(f"[{name}] {kind}: " + "; ".join(
                    f"{n} {{{', '.join(fs)}}}" if fs else n for n, fs in names.items()))
        return done[name]

    return get


# ---- a bare-bones host --------------------------------------------------------------------

def rec(**fields: Any) -> Record:
    """A Record with kebab-case attributes, as wasmtime-py lowers them."""
    r = Record()
    for k, v in fields.items():
        setattr(r, k.replace("_", "-"), v)
    return r


@dataclass
class Host:
    """The murmur imports, recording what the guest asked for."""

    answer: str = "forty-two"
    read_result: Any = "not-granted"        # a message-page Record (ok) or a str (err)
    inference_text: str = "the summary"
    prompts: list[str] = field(default_factory=list)
    chunks: list[str] = field(default_factory=list)
    reads: list[tuple[str | None, int]] = field(default_factory=list)
    inference_requests: list[Record] = field(default_factory=list)

    def linker(self, engine: Engine) -> Linker:
        linker = Linker(engine)
        linker.add_wasip2()
        with linker.root() as root:
            with root.add_instance(TASK) as inst:
                inst.add_func("request-input", self._request_input)
            with root.add_instance(CHUNKS) as inst:
                inst.add_func("emit-chunk", lambda _s, chunk: self.chunks.append(chunk))
                inst.add_func("emit-thinking-chunk",
                              lambda _s, chunk: self.chunks.append("thinking:" + chunk))
            with root.add_instance(INFERENCE) as inst:
                inst.add_func("run-inference", self._run_inference)
            with root.add_instance(READ) as inst:
                inst.add_func("read-messages", self._read_messages)
            # `inference` and `read` use lifecycle's `message`, so language-built hooks import
            # the whole lifecycle interface: satisfy it with stubs that trap if ever called.
            with root.add_instance(LIFECYCLE) as inst:
                for handler in HANDLERS:
                    inst.add_func(handler, _trap_stub(handler))
        return linker

    def _request_input(self, _store: Any, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.answer

    def _read_messages(self, _store: Any, cursor: str | None, limit: int) -> Any:
        self.reads.append((cursor, limit))
        return self.read_result

    def _run_inference(self, _store: Any, request: Record) -> Record:
        self.inference_requests.append(request)
        return rec(text=self.inference_text, model_used="test-model", input_tokens=12,
                   output_tokens=3)


def _trap_stub(handler: str) -> Callable[..., Any]:
    def stub(_store: Any, *_args: Any) -> Any:
        raise WasmtimeError(f"the host does not implement the {handler} import")
    return stub


@dataclass
class Session:
    store: Store | None
    instance: Instance | None
    stdout: list[bytes]
    stderr: list[bytes]

    def call(self, iface: str, func: str, *args: Any) -> Any:
        assert self.store is not None and self.instance is not None
        self.store.set_epoch_deadline(1 << 40)
        idx = self.instance.get_export_index(self.store, iface)
        assert idx is not None, f"no export {iface}"
        fidx = self.instance.get_export_index(self.store, func, idx)
        assert fidx is not None, f"no export {iface}#{func}"
        f = self.instance.get_func(self.store, fidx)
        assert f is not None
        return f(self.store, *args)

    def out(self) -> str:
        return b"".join(self.stdout).decode()

    def err(self) -> str:
        return b"".join(self.stderr).decode()


@pytest.fixture
def start(engine: Engine) -> Iterator[Callable[..., Session]]:
    sessions: list[Session] = []

    def make(component: Component, host: Host, *, workdir: Path | None = None,
             env: list[tuple[str, str]] | None = None) -> Session:
        out: list[bytes] = []
        err: list[bytes] = []
        store = Store(engine)
        wasi = WasiConfig()
        wasi.stdout_custom = out.append
        wasi.stderr_custom = err.append
        if env:
            wasi.env = env
        if workdir is not None:
            wasi.preopen_dir(str(workdir), ".", True)
        store.set_wasi(wasi)  # always: a WASI call without it aborts the process
        store.set_epoch_deadline(1 << 40)
        instance = host.linker(engine).instantiate(store, component)
        s = Session(store, instance, out, err)
        sessions.append(s)
        return s

    yield make
    for s in sessions:  # drop stores before exit: avoids a wasmtime panic at interpreter exit
        s.instance = None
        s.store = None
    gc.collect()


def tool_input(data: dict[str, Any] | None, log_path: str | None = None) -> Record:
    return rec(data=None if data is None else json.dumps(data), log_path=log_path)


def plain(result: Record) -> dict[str, Any]:
    return {k: getattr(result, k) for k in vars(result)}


# ---- build and cache ------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(GUESTS))
def test_guest_builds_and_a_second_build_reuses_it(name: str, built: Callable[[str], Built],
                                                  engine: Engine) -> None:
    first = built(name)
    assert first.info.path.is_file() and first.info.path.stat().st_size == first.info.size
    assert first.info.path.is_relative_to(guest_cache())
    again = build_guest_info(name)
    assert again.cached and again.path == first.info.path and again.key == first.info.key
    assert build_guest(name) == first.info.path
    # The serialized native code is reused too.
    t0 = time.perf_counter()
    _, hit = compile_cached(engine, ENGINE_TAG, first.info.path)
    assert hit, "the second load must come from tests/.cache/compiled"
    print(f"\n[{name}] cache hit: build_guest {again.seconds * 1000:.1f} ms, "
          f"compile_cached {1000 * (time.perf_counter() - t0):.1f} ms")


@pytest.mark.parametrize("name", ["py_tool", "js_tool", "rust_tool"])
def test_tool_guests_export_run_and_import_task(name: str, built: Callable[[str], Built]) -> None:
    b = built(name)
    assert b.exports[TOOL_RUN] == ["run"]
    assert b.imports[TASK] == ["request-input"]


def test_rust_tool_imports_wasi_cli_and_io_like_rust_built_components(
        built: Callable[[str], Built]) -> None:
    b = built("rust_tool")
    wasi = [n for n in b.imports if n.startswith("wasi:")]
    assert any(n.startswith("wasi:cli/environment@0.2.") for n in wasi), wasi
    assert any(n.startswith("wasi:cli/stdout@0.2.") for n in wasi), wasi
    assert any(n.startswith("wasi:io/streams@0.2.") for n in wasi), wasi
    assert b.imports[CHUNKS] == ["emit-chunk"]
    assert set(b.imports) - set(wasi) == {TASK, CHUNKS}


@pytest.mark.parametrize("name", ["py_hook", "js_hook"])
def test_hook_guests_export_all_nine_handlers(name: str, built: Callable[[str], Built]) -> None:
    b = built(name)
    assert sorted(b.exports[LIFECYCLE]) == sorted(HANDLERS)
    # The implicit whole-interface import that language-built hooks carry (wasm-hosting §2).
    assert sorted(b.imports.get(LIFECYCLE, [])) == sorted(HANDLERS)


def test_concurrent_builds_share_one_cache_entry(tmp_path: Path) -> None:
    """Two processes building the same guest into an empty cache: one builds, one waits and
    reuses; the file is whole either way."""
    name = next((n for n in ("js_tool", "rust_tool") if _available(n)), "py_tool")
    env = dict(os.environ, MURMUR_TEST_CACHE=str(tmp_path / "cache"))
    if name == "rust_tool":
        env["MURMUR_WASI_ADAPTER"] = str(wasi_adapter())  # no second download
    cmd = [sys.executable, "-m", "tests.guests.build", name]
    repo = Path(__file__).resolve().parents[2]
    procs = [subprocess.Popen(cmd, cwd=repo, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    lines = sorted(o[0].strip() for o in outs)
    assert [line.split()[1] for line in lines] == ["built", "cached"], lines
    wasm = list((tmp_path / "cache" / "guests").glob(f"{name}-*.wasm"))
    assert len(wasm) == 1 and wasm[0].read_bytes()[:8] == b"\0asm\x0d\x00\x01\x00"
    assert not list((tmp_path / "cache" / "guests").glob(".build-*"))


def _available(name: str) -> bool:
    try:
        GUESTS[name].tools()
    except ToolchainUnavailable:
        return False
    return True


# ---- tools ------------------------------------------------------------------------------------

TOOLS = ["py_tool", "js_tool", "rust_tool"]
FILE_TOOLS = ["py_tool", "rust_tool"]  # the JS tool has echo/ask/fail only
PRINTS = {"py_tool": "tool_py", "rust_tool": "tool_rust"}


@pytest.mark.parametrize("name", TOOLS)
def test_tool_echo_ask_fail_and_unknown(name: str, built: Callable[[str], Built],
                                        start: Callable[..., Session]) -> None:
    host = Host(answer="blue")
    s = start(built(name).component, host)

    r = s.call(TOOL_RUN, "run", tool_input({"op": "echo", "x": [1, "two"]}, log_path="/l.log"))
    assert r.status == "passed"
    assert json.loads(r.data) == {"op": "echo", "x": [1, "two"]}
    assert ("log_path", "/l.log") in r.metadata
    assert getattr(r, "data-path") is None and r.truncated is False and r.attachments == []

    r = s.call(TOOL_RUN, "run", tool_input({"op": "ask", "prompt": "favourite colour?"}))
    assert (r.status, r.data) == ("passed", "blue")
    assert host.prompts == ["favourite colour?"]

    r = s.call(TOOL_RUN, "run", tool_input({"op": "fail"}))
    assert (r.status, r.data) == ("failed", "asked to fail")

    r = s.call(TOOL_RUN, "run", tool_input({"op": "dance"}))
    assert r.status == "error" and "unknown op" in r.data

    r = s.call(TOOL_RUN, "run", tool_input(None))
    assert r.status == "error"

    # many calls on one instance: guest-side allocation and post-return keep working
    for i in range(20):
        r = s.call(TOOL_RUN, "run", tool_input({"op": "echo", "i": i, "s": "é" * i}))
        assert json.loads(r.data)["i"] == i


@pytest.mark.parametrize("name", FILE_TOOLS)
def test_tool_writes_and_reads_its_preopened_folder(name: str, built: Callable[[str], Built],
                                                    start: Callable[..., Session],
                                                    tmp_path: Path) -> None:
    s = start(built(name).component, Host(), workdir=tmp_path)
    r = s.call(TOOL_RUN, "run", tool_input({"op": "write", "path": "notes.txt",
                                            "text": "hello ünïcode\n"}))
    assert r.status == "passed", r.data
    assert r.metadata == [("state_effect", "mutate"), ("resource_id", "notes.txt")]
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "hello ünïcode\n"

    (tmp_path / "in.txt").write_text("from the host", encoding="utf-8")
    r = s.call(TOOL_RUN, "run", tool_input({"op": "read", "path": "in.txt"}))
    assert (r.status, r.data) == ("passed", "from the host")
    assert r.metadata == [("state_effect", "read"), ("resource_id", "in.txt")]


@pytest.mark.parametrize("name", FILE_TOOLS)
def test_tool_streams_chunks_and_prints_to_stdout_and_stderr(
        name: str, built: Callable[[str], Built], start: Callable[..., Session]) -> None:
    host = Host()
    s = start(built(name).component, host)
    r = s.call(TOOL_RUN, "run", tool_input({"op": "stream"}))
    assert r.status == "passed"
    lead = "py " if name == "py_tool" else "rust "
    assert host.chunks == [lead, "chunk"]
    assert f"{PRINTS[name]} stdout" in s.out()
    assert f"{PRINTS[name]} stderr" in s.err()
    assert f"{PRINTS[name]} stdout" not in s.err()


@pytest.mark.parametrize("name", FILE_TOOLS)
def test_tool_crash_traps_and_poisons_the_instance(name: str, built: Callable[[str], Built],
                                                   start: Callable[..., Session]) -> None:
    s = start(built(name).component, Host())
    with pytest.raises(WasmtimeError) as trap:
        s.call(TOOL_RUN, "run", tool_input({"op": "crash"}))
    assert "unreachable" in str(trap.value)
    assert "asked to crash" in s.err()  # the guest's traceback / panic message
    with pytest.raises(WasmtimeError, match="cannot enter component instance"):
        s.call(TOOL_RUN, "run", tool_input({"op": "echo"}))


def test_rust_tool_reads_the_wasi_environment(built: Callable[[str], Built],
                                              start: Callable[..., Session]) -> None:
    s = start(built("rust_tool").component, Host(), env=[("MURMUR_X", "1"), ("LANG", "C")])
    r = s.call(TOOL_RUN, "run", tool_input({"op": "env"}))
    assert r.status == "passed"
    assert json.loads(r.data) == {"LANG": "C", "MURMUR_X": "1"}


def test_tool_without_a_preopen_cannot_touch_files(built: Callable[[str], Built],
                                                   start: Callable[..., Session]) -> None:
    s = start(built("rust_tool").component, Host())
    r = s.call(TOOL_RUN, "run", tool_input({"op": "write", "path": "x.txt", "text": "x"}))
    assert r.status == "error" and "cannot write" in r.data


# ---- hooks ------------------------------------------------------------------------------------

def message(role: str, text: str, id_: str | None = None) -> Record:
    return rec(role=role, content=json.dumps([{"type": "text", "text": text}]), id=id_,
               source_id=None)


EVENTS: dict[str, Any] = {
    "on-stage": lambda: rec(shell_allow=["bash", "git"]),
    "on-session-start": lambda: rec(capsule_name="c", capsule_version="1.0.0",
                                    session_id="sess-1", model="m", capabilities=["shell"]),
    "on-task-start": lambda: rec(task_id="t1", context_id="ctx", source="cli", input_bytes=10,
                                 budget_tokens=1000, context_window=8000, prior_tokens=0),
    "on-inference": lambda: rec(turn=7, input_tokens=100, output_tokens=20, decision="tool",
                                tool_name="shell", prompt=None, output="ok", tools=None),
    "on-tool-call": lambda: rec(turn=7, tool_name="shell", input_bytes=5, output_bytes=9,
                                duration_ms=12, status="passed"),
    "on-shell": lambda: rec(turn=7, binary="bash", command="ls", exit_code=-1, stdout="a",
                            stderr="", stdout_bytes=1, stderr_bytes=0, duration_ms=3),
    "on-compaction": lambda: rec(messages=[message("user", "hi", "m1"),
                                           message("assistant", "hello", "m2")],
                                 session_tokens=7000, threshold=0.875, model=None,
                                 system_prompt="be brief"),
    "on-task-end": lambda: rec(task_id="t1", exit_status="ok"),
    "on-session-end": lambda: rec(total_turns=3, total_input_tokens=2**40,
                                  total_output_tokens=5, total_tool_calls=1,
                                  total_shell_calls=1, duration_ms=99, exit_status="ok"),
}


def test_py_hook_handlers(built: Callable[[str], Built], start: Callable[..., Session]) -> None:
    host = Host(inference_text="short summary")
    s = start(built("py_hook").component, host)

    for handler in ("on-stage", "on-tool-call", "on-shell", "on-task-end", "on-session-end"):
        assert s.call(LIFECYCLE, handler, EVENTS[handler]()) == Variant("none"), handler

    assert s.call(LIFECYCLE, "on-session-start", EVENTS["on-session-start"]()) == Variant("none")
    assert "hook_py session start sess-1" in s.err()

    assert s.call(LIFECYCLE, "on-inference", EVENTS["on-inference"]()) == Variant("artifact",
                                                                               "turn 7")

    # on-task-start: the host's read error comes back as the hook's err
    host.read_result = "not-granted"
    assert s.call(LIFECYCLE, "on-task-start", EVENTS["on-task-start"]()) == \
        "read failed: not-granted"
    host.read_result = rec(messages=[message("user", "hi", "m1")], next_cursor=None, total=1)
    assert s.call(LIFECYCLE, "on-task-start", EVENTS["on-task-start"]()) == Variant("none")
    assert host.reads == [(None, 3), (None, 3)]

    out = s.call(LIFECYCLE, "on-compaction", EVENTS["on-compaction"]())
    assert isinstance(out, Variant) and out.tag == "replace-context"
    (msg,) = out.payload or []
    assert (msg.role, msg.id, getattr(msg, "source-id")) == ("user", None, None)
    assert json.loads(msg.content) == [{"type": "text", "text": "short summary"}]
    (request,) = host.inference_requests
    sent = plain(request)
    assert len(sent["messages"]) == 1 and sent["messages"][0].role == "user"
    assert sent["system-prompt"] == "be brief" and sent["model"] is None


def test_js_hook_handlers(built: Callable[[str], Built], start: Callable[..., Session]) -> None:
    s = start(built("js_hook").component, Host())
    for handler in HANDLERS:
        got = s.call(LIFECYCLE, handler, EVENTS[handler]())
        want = Variant("artifact", "js") if handler == "on-inference" else Variant("none")
        assert got == want, handler
