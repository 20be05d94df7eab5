"""`murmur-tui doctor [CAPSULE|ROSTER_DIR]`: every artifact a capsule declares (and its
`capsule.wasm`), where it resolved or why not, the interfaces the component itself exports and
imports, and whether Murmur's current release and murmur-tui would each load it.

Murmur's verdict is its rule (`tui.core.artifacts.served`): exactly the one version of each
`murmur:*` package the release serves, worded as `mur doctor` words it (`W-REG-003`).
murmur-tui's verdict is no rule of its own: the component goes through what a session does with
it — resolved (store, sidecar, lock), loaded through the compile cache, its interfaces checked
(`tui.core.wasm.versions`), a hook's contract read, and an instance made in a sandbox — and the
first refusal is shown as the session would show it. Exit 0 when every artifact would load in
both, 1 when one would not, 2 when the capsule cannot be read. Beside a `roster.yaml` (or
given one) it prints the `Roster` block (`doctor_roster`) after the capsule's report, if the
folder holds a capsule too; a roster that is not admitted exits 1.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui.commands.exits import EXIT_NOT_OK, EXIT_OK

if TYPE_CHECKING:
    from tui.core.artifacts.resolve import ResolvedArtifact
    from tui.core.artifacts.served import MurmurRefusal
    from tui.core.manifest.model import Capsule
    from tui.core.wasm.runtime import WasmRuntime

ROLES = {"tool": "tool", "driver": "driver", "hook": "hook"}


def add_parser(commands: Any) -> None:
    doctor = commands.add_parser(
        "doctor", help="check a capsule's artifacts: where each resolved, its interface "
                       "versions, and whether Murmur and murmur-tui would load it",
        description="For every artifact the capsule declares: where it resolved (project "
                    "store, global store, source) or why not, the interfaces the component "
                    "exports and imports, and whether current Murmur and murmur-tui would "
                    "each load it. Exits 1 when one would not load.")
    doctor.add_argument("capsule", nargs="?", type=Path, default=Path("."), metavar="CAPSULE",
                        help="a capsule folder or its murmur.yaml, or a folder holding "
                        "roster.yaml or the roster itself (default: the current folder)")
    doctor.add_argument("--json", action="store_true", help="one JSON object")


@dataclass
class Check:
    """One artifact, as doctor found it."""

    name: str
    version: str | None
    role: str
    where: str | None = None  # project | global | source | capsule | builtin
    file: str | None = None  # the archive or file it resolved to
    problem: str | None = None  # why it did not resolve
    exports: list[str] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)
    unread: str | None = None  # why its interfaces could not be read
    murmur: list[MurmurRefusal] = field(default_factory=list)  # what Murmur would not link
    refusal: str | None = None  # murmur-tui's, as a session would say it

    @property
    def label(self) -> str:
        return f"{self.name}@{self.version}" if self.version else self.name

    @property
    def murmur_loads(self) -> bool:
        return self.problem is None and self.unread is None and not self.murmur

    @property
    def tui_loads(self) -> bool:
        return self.problem is None and self.refusal is None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "runtime": self.role,
                "resolved": ({"store": self.where, "file": self.file}
                             if self.problem is None else None),
                "problem": self.problem, "exports": self.exports, "imports": self.imports,
                "murmur": {"loads": self.murmur_loads,
                           "refusals": [u.line for u in self.murmur],
                           "unread": self.unread},
                "murmur_tui": {"loads": self.tui_loads, "refusal": self.refusal}}


def run(args: argparse.Namespace) -> int:
    from tui.commands.doctor_roster import roster_beside
    from tui.core.artifacts.pins import REGENERATE, lock_path, read_lock
    from tui.core.artifacts.served import CURRENT_RELEASE
    from tui.core.errors import LockError
    from tui.core.fs.paths import murmur_home
    from tui.core.manifest.reader import load_capsule

    home = murmur_home()
    roster = roster_beside(args.capsule)
    if roster is not None and not (args.capsule / "murmur.yaml").is_file():
        return with_roster(args, roster, home, None, True)
    capsule = load_capsule(args.capsule)  # a ManifestError is told by main (exit 2)
    lock_refused: str | None = None  # why current Murmur would refuse the lock itself
    try:
        lock = read_lock(lock_path(capsule.root))
        lock_line = ("none (the first run pins every store artifact)" if lock is None else
                     f"version {lock.version}, {len(lock.pins)} pin(s)")
        if lock is not None and lock.version == 1:
            lock_refused = ("invalid murmur.lock: unsupported lock_version 1 (expected 2) — "
                            f"{REGENERATE} [E-RUN-003]")
            lock_line += (f" (Murmur v0.2.0's; murmur-tui reads it and never rewrites it)\n"
                          f"    Murmur v{CURRENT_RELEASE}: refuses — {lock_refused}")
    except LockError as exc:
        lock_line = f"refused: {exc}"
    checks = examine(capsule, home)
    ok = lock_refused is None and all(c.murmur_loads and c.tui_loads for c in checks)
    report = {"capsule": {"name": capsule.name, "version": capsule.version,
                          "manifest": str(capsule.manifest_path)},
              "lock": lock_line, "lock_murmur_refusal": lock_refused,
              "murmur_release": CURRENT_RELEASE, "ok": ok,
              "artifacts": [c.to_json() for c in checks]}
    text = render(capsule, lock_line, checks, lock_refused is not None)
    if roster is not None:
        return with_roster(args, roster, home, (report, text), ok)
    sys.stdout.write(json.dumps(report, ensure_ascii=False) + "\n" if args.json else text)
    return EXIT_OK if ok else EXIT_NOT_OK


def with_roster(args: argparse.Namespace, roster: Path, home: Path,
                capsule: tuple[dict[str, Any], str] | None, ok: bool) -> int:
    """The capsule's report (when the folder holds one too), then the `Roster` block; exit 1
    when the roster is not admitted."""
    from tui.commands.doctor_roster import roster_block, roster_json
    from tui.core.formation.admission import Admitted, admit

    result = admit(roster, home)
    ok = ok and isinstance(result, Admitted)
    if args.json:
        report = dict(capsule[0]) if capsule else {}
        report.update(roster=roster_json(roster, result), ok=ok)
        sys.stdout.write(json.dumps(report, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write((capsule[1] + "\n" if capsule else "") + roster_block(roster, result))
    return EXIT_OK if ok else EXIT_NOT_OK


def examine(capsule: Capsule, home: Path) -> list[Check]:
    """Every declared artifact (and the script capsule's component), checked."""
    from tui.core.artifacts.resolve import locate, resolve_wasm
    from tui.core.errors import MurmurTuiError

    checks: list[Check] = []
    components: list[tuple[Check, ResolvedArtifact | None, Path]] = []
    for entry in capsule.artifacts:
        check = Check(entry.name, entry.version, entry.runtime)
        checks.append(check)
        if entry.builtin is not None:
            check.where, check.file = "builtin", f"builtin: {entry.builtin}"
            continue
        try:
            if entry.runtime == "skill":
                found = locate(capsule, entry, home, "skill")
                check.where, check.file = found.where, str(found.archive or found.file)
                continue
            resolved = resolve_wasm(capsule, entry, home)
        except MurmurTuiError as exc:
            check.problem = str(exc)
            continue
        check.where, check.file = resolved.where, str(resolved.archive or resolved.wasm)
        components.append((check, resolved, resolved.wasm))
    script = capsule.root / "capsule.wasm"  # a script capsule's own component (as setup finds it)
    if script.is_file():
        check = Check("capsule.wasm", None, "capsule", "capsule", str(script))
        checks.append(check)
        components.append((check, None, script))
    if components:
        probe(capsule, home, components)
    return checks


def probe(capsule: Capsule, home: Path,
          components: list[tuple[Check, ResolvedArtifact | None, Path]]) -> None:
    """Read each component's interfaces and try it as a session would."""
    from tui.core.fs.paths import compiled_cache
    from tui.core.wasm.runtime import WasmRuntime

    runtime = WasmRuntime(compiled_cache(home))
    try:
        with tempfile.TemporaryDirectory(prefix="murmur-tui-doctor-") as scratch:
            for check, resolved, wasm in components:
                try_load(runtime, capsule, check, resolved, wasm, Path(scratch))
    finally:
        runtime.close()


def try_load(runtime: WasmRuntime, capsule: Capsule, check: Check,
             resolved: ResolvedArtifact | None, wasm: Path, scratch: Path) -> None:
    from tui.core.artifacts.served import unserved
    from tui.core.errors import MurmurTuiError
    from tui.core.manifest.model import Artifact
    from tui.core.wasm import versions
    from tui.core.wasm.guest import Guest
    from tui.core.wasm.sandbox import sandbox

    try:
        loaded = runtime.load(wasm)
    except MurmurTuiError as exc:
        check.unread = check.refusal = str(exc)
        return
    check.exports, check.imports = sorted(loaded.exports), sorted(loaded.imports)
    check.murmur = unserved(loaded.imports, loaded.exports)
    role = ROLES.get(check.role, "capsule")
    entry = (resolved.entry if resolved is not None
             else Artifact(name="capsule", version=None, runtime="tool", line=None))
    try:
        export = versions.check(wasm, role, loaded.imports, loaded.exports)
        if resolved is not None and role == "hook":
            from tui.core.wasm.hooks import contract

            contract(resolved)
        box = sandbox(capsule, entry, workdir=scratch, logs=scratch, extra_env={})
        Guest(runtime, loaded, export, box, check.name).close()
    except MurmurTuiError as exc:
        check.refusal = str(exc)


def render(capsule: Capsule, lock_line: str, checks: list[Check],
           lock_refused: bool = False) -> str:
    from tui.core.artifacts.served import CURRENT_RELEASE, W_REG_003

    out = [f"{capsule.name} {capsule.version} ({capsule.manifest_path})",
           f"murmur.lock: {lock_line}", ""]
    for check in checks:
        good = check.murmur_loads and check.tui_loads
        mark = "✓" if good else "✗"
        if check.problem is not None:
            out.append(f"{mark} {check.label}   {check.role}   not resolved")
            out.extend(f"    {line}" for line in check.problem.splitlines())
            continue
        out.append(f"{mark} {check.label}   {check.role}   {check.where}   {check.file}")
        if check.where == "builtin" or check.role == "skill":
            out.append("    no component: nothing to link")
            continue
        out.extend(_interfaces(check))
        murmur = ("loads" if check.murmur_loads else
                  f"refuses — {check.unread}" if check.unread else
                  f"refuses — built against {check.murmur[0].interface}, "
                  f"{check.murmur[0].reason}" + _more(len(check.murmur) - 1))
        out.append(f"    Murmur v{CURRENT_RELEASE}: {murmur}")
        tui = "loads" if check.tui_loads else f"refuses — {check.refusal}"
        out.append(f"    murmur-tui: {tui}")
    stale = [(c, u) for c in checks for u in c.murmur]
    if stale:
        out += ["", "Interface versions"]
        out += [f"⚠  {c.label}   {c.where}   {u.line}" for c, u in stale]
        out.append(W_REG_003)
    failing = [c for c in checks if not (c.murmur_loads and c.tui_loads)]
    out.append("")
    out.append(f"{len(failing)} of {len(checks)} artifact(s) would not load"
               if failing else f"all {len(checks)} artifact(s) would load")
    if lock_refused:
        out.append(f"murmur.lock would be refused by Murmur v{CURRENT_RELEASE} (above)")
    return "\n".join(out) + "\n"


def _more(count: int) -> str:
    return f" (and {count} more, under Interface versions)" if count else ""


def _interfaces(check: Check) -> list[str]:
    lines = []
    for direction, names in (("exports", check.exports), ("imports", check.imports)):
        own = [n for n in names if not n.startswith("wasi:")]
        wasi = len(names) - len(own)
        shown = ", ".join(own) or "nothing of Murmur's"
        if wasi:
            shown += f" (+ {wasi} wasi:*)"
        if names or direction == "exports":
            lines.append(f"    {direction} {shown}")
    return lines
