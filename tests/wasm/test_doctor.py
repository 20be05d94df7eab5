"""`murmur-tui doctor [CAPSULE]` from the command line, on real components in real stores: one
in Murmur's `.mur.zip` layout (spec murmur-newest §2.2), one missing, one that neither Murmur
v0.11.0 nor murmur-tui loads (it exports `murmur:tool/run@0.3.0`, which no release served:
§1.2), and one only Murmur refuses (`tool/run@0.1.0`, retired by v0.9.0: §1.2)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from tests.capsules import write_capsule
from tests.conftest import run_cli
from tests.murmur_store import mur_install
from tests.responses import text_response
from tests.wasm.conftest import fixture

W_REG_003 = ("mur run refuses these at launch (warning[W-REG-003], "
             "https://docs.murmur.nexus/murmur-nexus/murmur/reference/diagnostics/#w-reg-003)")


def entries(*names: str) -> str:
    return "".join(f"  - name: {name}\n    runtime: tool\n    version: '1.0.0'\n"
                   for name in names)


def capsule(root: Path, *names: str) -> Path:
    return write_capsule(root, [text_response("done")], name="doctor-test", max_turns=None,
                         shell=(), artifacts=entries(*names))


def bare(home: Path, name: str, component: str) -> Path:
    """murmur-tui's bare layout in the global store: `<name>.wasm` and its sidecar."""
    folder = home / "artifacts" / name / "1.0.0"
    folder.mkdir(parents=True)
    wasm = Path(shutil.copy(fixture(component), folder / f"{name}.wasm"))
    (folder / f"{name}.wasm.sha256").write_text(hashlib.sha256(wasm.read_bytes()).hexdigest())
    return wasm


def block(out: str, label: str) -> str:
    """The lines doctor printed for one artifact (its line and those indented under it)."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line[2:].startswith(f"{label} "))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith("    ")),
               len(lines))
    return "\n".join(lines[start:end])


def test_doctor_shows_a_good_a_missing_and_a_refused_artifact(tmp_path: Path,
                                                              murmur_home: Path) -> None:
    root = capsule(tmp_path / "capsule", "echo", "ghost", "future", "old")
    archive = mur_install(root / ".murmur" / "artifacts", "echo", "1.0.0", fixture("echo_tool"))
    future = bare(murmur_home, "future", "future_tool")
    mur_install(murmur_home / "artifacts", "old", "1.0.0", fixture("old_tool"))
    done = run_cli("doctor", str(root))
    assert done.returncode == 1, done.stderr
    out = done.stdout
    assert block(out, "echo@1.0.0") == (
        f"✓ echo@1.0.0   tool   project   {archive}\n"
        "    exports murmur:tool/run@0.2.0\n"
        "    Murmur v0.11.0: loads\n"
        "    murmur-tui: loads")
    ghost = block(out, "ghost@1.0.0")
    assert ghost.startswith("✗ ghost@1.0.0   tool   not resolved\n")
    assert "no component found" in ghost and "ghost-1.0.0.mur.zip" in ghost
    assert "[E-RUN-008]" in ghost
    refused = block(out, "future@1.0.0").splitlines()
    assert refused[:3] == [
        f"✗ future@1.0.0   tool   global   {future}",
        "    exports murmur:tool/run@0.3.0",
        "    Murmur v0.11.0: refuses — built against murmur:tool/run@0.3.0, this mur serves "
        "murmur:tool@0.2.0"]
    # murmur-tui's own refusal, as a launch would word it (whatever versions it accepts)
    assert refused[3].startswith("    murmur-tui: refuses — future.wasm exports "
                                 "murmur:tool/run@0.3.0")
    assert "    Murmur v0.11.0: refuses — built against murmur:tool/run@0.1.0, this mur " \
           "serves murmur:tool@0.2.0" in block(out, "old@1.0.0")
    tail = out[out.index("\nInterface versions\n"):].splitlines()
    assert tail[2:5] == [
        "⚠  future@1.0.0   global   exports murmur:tool/run@0.3.0 — this mur serves "
        "murmur:tool@0.2.0",
        "⚠  old@1.0.0   global   exports murmur:tool/run@0.1.0 — this mur serves "
        "murmur:tool@0.2.0",
        W_REG_003]
    assert tail[-1] == "3 of 5 artifact(s) would not load"
    assert not (root / "murmur.lock").exists()  # doctor looks; it pins nothing


def test_doctor_json_and_a_capsule_that_loads_everywhere(tmp_path: Path,
                                                         murmur_home: Path) -> None:
    root = capsule(tmp_path / "capsule", "echo")
    mur_install(murmur_home / "artifacts", "echo", "1.0.0", fixture("echo_tool"))
    done = run_cli("doctor", str(root), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is True and report["murmur_release"] == "0.11.0"
    echo = next(a for a in report["artifacts"] if a["name"] == "echo")
    assert echo["resolved"]["store"] == "global"
    assert echo["resolved"]["file"].endswith("echo/1.0.0/echo-1.0.0.mur.zip")
    assert echo["exports"] == ["murmur:tool/run@0.2.0"] and echo["imports"] == []
    assert echo["murmur"] == {"loads": True, "refusals": [], "unread": None}
    assert echo["murmur_tui"] == {"loads": True, "refusal": None}
    text = run_cli("doctor", str(root))
    assert text.returncode == 0 and text.stdout.endswith("all 2 artifact(s) would load\n")


def test_doctor_on_a_folder_without_a_capsule_is_bad_input(tmp_path: Path) -> None:
    done = run_cli("doctor", str(tmp_path / "nowhere"))
    assert done.returncode == 2
    assert "no such file" in done.stderr and "Traceback" not in done.stderr


def test_doctor_says_current_murmur_refuses_a_v1_lock_that_murmur_tui_still_runs(
        tmp_path: Path, murmur_home: Path) -> None:
    """Spec §3: version 1 is refused by current Murmur (`E-RUN-003`, its fix hint); murmur-tui
    reads it, so the artifact itself resolves and loads here."""
    root = capsule(tmp_path / "capsule", "echo")
    archive = mur_install(murmur_home / "artifacts", "echo", "1.0.0", fixture("echo_tool"))
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    text = (f"lock_version: 1\nartifacts:\n- name: echo\n  resolved_version: 1.0.0\n"
            f"  sha256:\n    wasm: {digest}\n")
    (root / "murmur.lock").write_text(text)
    done = run_cli("doctor", str(root))
    assert done.returncode == 1, done.stderr
    assert ("    Murmur v0.11.0: refuses — invalid murmur.lock: unsupported lock_version 1 "
            "(expected 2) — delete murmur.lock and run `mur install` to regenerate it "
            "[E-RUN-003]") in done.stdout
    assert block(done.stdout, "echo@1.0.0").startswith(f"✓ echo@1.0.0   tool   global   "
                                                       f"{archive}")
    assert done.stdout.endswith("murmur.lock would be refused by Murmur v0.11.0 (above)\n")
    assert (root / "murmur.lock").read_text() == text
