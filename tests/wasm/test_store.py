"""Stores as `mur install` writes them (spec murmur-newest §2) and `murmur.lock` version 2 (§3),
end to end from `murmur-tui launch --headless`: real components (tests/wasm/fixtures) packed
into real `.mur.zip` archives with their `.sha256` and `.meta.json` (tests/murmur_store.py), in
a capsule's project store and the global one, real files."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
import yaml

from tests.murmur_store import archive_bytes, mur_install, sha
from tests.wasm.conftest import fixture
from tests.wasm.test_lock import agent_capsule, launch, reports, script_capsule, tools_dir
from tui.core.artifacts.archive import unpack
from tui.core.artifacts.pins import platform_tag
from tui.core.artifacts.store import Payload
from tui.core.errors import LaunchError


def calls(trace: list[dict[str, object]]) -> list[object]:
    return [t["status"] for t in trace if t["event_type"] == "tool_call"]


def test_a_capsule_whose_tool_sits_only_in_its_project_store_launches_and_pins_the_zip(
        tmp_path: Path) -> None:
    """§2.1 project store `.murmur/artifacts/`; §2.4: the lock pins the archive's sha256 as
    `sha256.any`, `origin: operator` (§3)."""
    root = agent_capsule(tmp_path / "capsule", "1.0.0")
    archive = mur_install(root / ".murmur" / "artifacts", "echo", "1.0.0", fixture("echo_tool"))
    code, err, trace = launch(root, tmp_path / "home")
    assert code == 0, err
    assert calls(trace) == ["ok"]
    assert yaml.safe_load((root / "murmur.lock").read_text()) == {
        "lock_version": 2, "artifacts": [
            {"name": "echo", "resolved_version": "1.0.0", "sha256": {"any": sha(archive)},
             "origin": "operator"}]}
    # a second run checks the archive against that pin and runs again, the lock untouched
    before = (root / "murmur.lock").read_bytes()
    code, err, trace = launch(root, tmp_path / "home")
    assert code == 0, err
    assert calls(trace) == ["ok"] and (root / "murmur.lock").read_bytes() == before


def test_a_platform_tagged_archive_in_the_global_store_is_found_and_pinned_per_platform(
        tmp_path: Path) -> None:
    """§2.2: `<name>-<version>-<os>-<arch>.mur.zip` is looked for first; §3: its pin is
    `sha256.platforms.<tag>`."""
    home = tmp_path / "home"
    mur_install(home / "artifacts", "echo", "1.0.0", fixture("greedy_tool"))  # untagged
    tagged = mur_install(home / "artifacts", "echo", "1.0.0", fixture("echo_tool"),
                         platform=platform_tag())
    root = agent_capsule(tmp_path / "capsule", "1.0.0")
    code, err, trace = launch(root, home)
    assert code == 0, err
    assert calls(trace) == ["ok"]
    entry = yaml.safe_load((root / "murmur.lock").read_text())["artifacts"][0]
    assert entry["sha256"] == {"platforms": {platform_tag(): sha(tagged)}}


def test_a_tampered_archive_is_refused_with_murmurs_words_before_anything_runs(
        tmp_path: Path) -> None:
    """§2.4 step 6: `artifact integrity mismatch for N@V: expected E, got A`."""
    home = tmp_path / "home"
    archive = mur_install(home / "artifacts", "echo", "1.0.0", fixture("echo_tool"))
    recorded = sha(archive)
    archive.write_bytes(archive_bytes("echo", "1.0.0", fixture("greedy_tool")))
    root = agent_capsule(tmp_path / "capsule", "1.0.0")
    code, err, _ = launch(root, home)
    assert code == 2
    assert (f"artifact integrity mismatch for echo@1.0.0: expected {recorded}, got "
            f"{sha(archive)}") in err
    assert "[E-REG-002]" in err and "Traceback" not in err
    assert not (root / "wd").exists() and not (root / "murmur.lock").exists()


def test_an_empty_sidecar_is_refused(tmp_path: Path) -> None:
    """§2.2: `artifact N@V has an empty sha256 sidecar`."""
    home = tmp_path / "home"
    archive = mur_install(home / "artifacts", "echo", "1.0.0", fixture("echo_tool"))
    archive.with_name("echo-1.0.0.sha256").write_text("  \n")
    code, err, _ = launch(agent_capsule(tmp_path / "capsule", "1.0.0"), home)
    assert code == 2 and "artifact echo@1.0.0 has an empty sha256 sidecar" in err


def test_a_v1_lock_of_murmur_0_2_0_is_honoured_and_never_rewritten(tmp_path: Path) -> None:
    """§3 baseline: v0.2.0 pinned the archive's hash as `sha256.wasm`; a v1 lock is read, its
    pin checked against the archive, and the file left as it is."""
    home = tmp_path / "home"
    archive = mur_install(home / "artifacts", "echo", "1.0.0", fixture("echo_tool"))
    root = agent_capsule(tmp_path / "capsule", "1.0.0")
    text = (f"lock_version: 1\nartifacts:\n- name: echo\n  resolved_version: 1.0.0\n"
            f"  sha256:\n    wasm: {sha(archive)}\n")
    (root / "murmur.lock").write_text(text)
    code, err, trace = launch(root, home)
    assert code == 0, err
    assert calls(trace) == ["ok"]
    assert (root / "murmur.lock").read_text() == text


def test_a_pull_from_a_zip_store_pins_origin_runtime_with_the_session(tmp_path: Path) -> None:
    """§2.3/§3: a capsule's `manage.pull()` writes `origin: runtime` and its `session`."""
    home = tmp_path / "home"
    archive = mur_install(home / "artifacts", "pulled-echo", "1.0.0", fixture("echo_tool"))
    root = script_capsule(tmp_path / "capsule")
    code, err, trace = launch(root, home)
    assert code == 0, err
    assert reports(trace)[:3] == [("echo", {"data": "pulled-echo"}),
                                  ("pulled-echo", {"data": "hi from pull"}),
                                  ("echo", {"data": "Echoes what it is given."})]  # packed
    session = next(t["session_id"] for t in trace if t["event_type"] == "session_start")
    assert yaml.safe_load((root / "murmur.lock").read_text()) == {
        "lock_version": 2, "artifacts": [
            {"name": "pulled-echo", "resolved_version": "1.0.0",
             "sha256": {"any": sha(archive)}, "origin": "runtime", "session": session}]}
    assert sha(tools_dir(root) / "pulled-echo" / "pulled-echo.wasm") == sha(fixture("echo_tool"))


def test_a_pull_into_a_v1_project_is_refused_and_the_lock_left_alone(tmp_path: Path) -> None:
    """A v1 lock is never silently rewritten: a pull it does not pin is refused, naming the
    way to regenerate the lock (docs/files.md)."""
    home = tmp_path / "home"
    mur_install(home / "artifacts", "pulled-echo", "1.0.0", fixture("echo_tool"))
    root = script_capsule(tmp_path / "capsule")
    text = "lock_version: 1\nartifacts: []\n"
    (root / "murmur.lock").write_text(text)
    code, err, trace = launch(root, home)
    assert code == 0, err
    said = reports(trace)[0][1]
    assert isinstance(said, dict)
    assert said["data"].startswith("failed to pin pulled-echo@1.0.0: ")
    assert "version-1 lock" in said["data"] and "mur install" in said["data"]
    assert (root / "murmur.lock").read_text() == text
    assert not (tools_dir(root) / "pulled-echo").exists()


@pytest.mark.parametrize("entries, why", [
    ({"../echo.wasm": b"\0asm", "/abs.wasm": b"\0asm", "lib/echo.wasm": b"\0asm"},
     "holds no root *.wasm [E-BLD-003]"),
    ({"bin/echo": b"\x7fELF"}, "is a native payload (bin/echo)"),
])
def test_an_archive_is_unpacked_only_from_its_root_entries(tmp_path: Path,
                                                           entries: dict[str, bytes],
                                                           why: str) -> None:
    """§2.2 hardening: entry names with a leading `/` or any `..` are never selected."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("murmur.yaml", "name: echo\n")
        for name, data in entries.items():
            archive.writestr(name, data)
    payload = Payload("echo", "1.0.0", tmp_path / "echo-1.0.0.mur.zip", "zip")
    with pytest.raises(LaunchError) as info:
        unpack(payload, buffer.getvalue(), "d" * 64, tmp_path / "home", "wasm")
    assert why in str(info.value)
    assert not (tmp_path / "home").exists()


def test_an_archives_manifest_is_read_once_and_a_damaged_copy_is_read_again(
        tmp_path: Path) -> None:
    """The packed `murmur.yaml` is what the model sees of the tool (description, schema); the
    JSON kept beside the unpacked archive is used only while it names the text it came from."""
    from tui.core.artifacts.resolve import resolve_wasm
    from tui.core.manifest.reader import load_capsule

    home = tmp_path / "home"
    root = agent_capsule(tmp_path / "capsule", "1.0.0")
    mur_install(root / ".murmur" / "artifacts", "echo", "1.0.0", fixture("echo_tool"),
                description="Packed description.")
    capsule = load_capsule(root)
    entry = capsule.artifact("echo")
    assert entry is not None
    first = resolve_wasm(capsule, entry, home)
    assert first.description == "Packed description." and first.where == "project"
    assert first.locate("description").startswith(f"{first.archive}!murmur.yaml:")
    kept = first.wasm.parent / ".murmur.yaml.json"
    assert kept.is_file()
    kept.write_text('{"stamp": {"size": 1, "crc32": 2}, "data": {"description": "stale"}, '
                    '"lines": {}}')
    again = resolve_wasm(capsule, entry, home)
    assert again.description == "Packed description."
    assert again.input_schema == {"type": "object",
                                  "properties": {"data": {"type": "string"}}}


def test_a_skill_installed_by_mur_install_is_read_from_its_archive(tmp_path: Path) -> None:
    """§2.2: a skill's archive carries `skill.md` / `SKILL.md` at its root."""
    from tui.core.artifacts.resolve import resolve_skill
    from tui.core.manifest.reader import load_capsule

    home = tmp_path / "home"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("murmur.yaml", "name: house-style\nversion: '1.0.0'\nruntime: skill\n")
        archive.writestr("SKILL.md", "Write short lines.\n")
    mur_install(home / "artifacts", "house-style", "1.0.0", fixture("echo_tool"),
                runtime="skill", data=buffer.getvalue())
    root = agent_capsule(tmp_path / "capsule", "1.0.0")
    manifest = root / "murmur.yaml"
    manifest.write_text(manifest.read_text().replace(
        "artifacts:\n",
        "artifacts:\n  - name: house-style\n    runtime: skill\n    version: '1.0.0'\n", 1))
    capsule = load_capsule(root)
    entry = capsule.artifact("house-style")
    assert entry is not None
    assert resolve_skill(capsule, entry, home).read_text() == "Write short lines.\n"
