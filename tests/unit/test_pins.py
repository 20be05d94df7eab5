"""`murmur.lock` as Murmur reads and writes it (spec murmur-newest §3): version 2 read, written
and round-tripped, version 1 (Murmur v0.2.0) read and never rewritten, and each malformed entry
refused in Murmur's words, naming the file and the entry."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tui.core.artifacts.pins import Lock, Pin, check_pin, platform_tag, read_lock
from tui.core.errors import LockError

A, B, C = "a" * 64, "b" * 64, "c" * 64


def lock_at(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "murmur.lock"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_version_2_lock_is_read_with_every_shape_of_pin(tmp_path: Path) -> None:
    """§3's example: `any`, a `platforms` map, and a runtime pin with its session."""
    path = lock_at(tmp_path, f"""lock_version: 2
artifacts:
  - name: echo-tool
    resolved_version: 0.0.1
    sha256:
      any: {A.upper()}
    origin: operator
  - name: native-tool
    resolved_version: 0.1.0
    sha256:
      platforms:
        linux-x86_64: {B}
        darwin-aarch64: {C}
  - name: pulled-tool
    resolved_version: 1.2.3
    sha256:
      any: {C}
    origin: runtime
    session: ses_0190a1b2
""")
    lock = read_lock(path)
    assert lock is not None and lock.version == 2
    assert lock.pins == (
        Pin("echo-tool", "0.0.1", A),
        Pin("native-tool", "0.1.0", None, (("linux-x86_64", B), ("darwin-aarch64", C))),
        Pin("pulled-tool", "1.2.3", C, (), "runtime", "ses_0190a1b2"),
    )
    native = lock.pin("native-tool")
    assert native is not None
    assert native.expected("darwin-aarch64") == C and native.expected("windows-x86_64") is None


def test_a_version_1_lock_of_murmur_0_2_0_is_read(tmp_path: Path) -> None:
    """v0.2.0's `LOCK_VERSION = 1` with `sha256: {wasm}` (spec §3, baseline)."""
    path = lock_at(tmp_path, f"lock_version: 1\nartifacts:\n- name: echo\n"
                             f"  resolved_version: 1.0.0\n  sha256:\n    wasm: {A}\n")
    lock = read_lock(path)
    assert lock is not None and lock.version == 1
    assert lock.pins == (Pin("echo", "1.0.0", A),)


def test_a_version_2_lock_round_trips_through_its_text(tmp_path: Path) -> None:
    path = tmp_path / "murmur.lock"
    lock = Lock(path, (Pin("echo", "1.0.0", A),
                       Pin("native", "0.1.0", None, (("linux-x86_64", B),)),
                       Pin("pulled", "2.0.0", C, (), "runtime", "ses_1")))
    lock.write()
    assert read_lock(path) == lock
    assert yaml.safe_load(path.read_text()) == {"lock_version": 2, "artifacts": [
        {"name": "echo", "resolved_version": "1.0.0", "sha256": {"any": A},
         "origin": "operator"},
        {"name": "native", "resolved_version": "0.1.0",
         "sha256": {"platforms": {"linux-x86_64": B}}, "origin": "operator"},
        {"name": "pulled", "resolved_version": "2.0.0", "sha256": {"any": C},
         "origin": "runtime", "session": "ses_1"}]}
    assert path.stat().st_mode & 0o777 == 0o600


def test_a_version_1_lock_is_never_rewritten(tmp_path: Path) -> None:
    text = f"lock_version: 1\nartifacts:\n- name: echo\n  resolved_version: '1'\n" \
           f"  sha256:\n    wasm: {A}\n"
    path = lock_at(tmp_path, text)
    lock = read_lock(path)
    assert lock is not None
    with pytest.raises(LockError, match=r"version-1 lock .* does not rewrite it: delete "
                                        r"murmur\.lock and run `mur install`"):
        lock.upsert(Pin("other", "1", B)).write()
    assert path.read_text() == text


@pytest.mark.parametrize("entry, message", [
    ("sha256: {}", "pins no hash (expected either sha256.any or sha256.platforms)"),
    (f"sha256: {{any: {A}, platforms: {{linux-x86_64: {B}}}}}",
     "pins both sha256.any and sha256.platforms (expected exactly one)"),
    (f"sha256: {{any: {A}}}\n    origin: runtime", ".session: must be a string"),
    (f"sha256: {{any: {A}}}\n    origin: operator\n    session: ses_1",
     ".session: only a runtime pin names the session"),
    (f"sha256: {{any: {A}}}\n    origin: peer", ".origin: must be operator or runtime"),
    ("sha256: {any: '  '}", ".sha256.any: is empty"),
])
def test_a_malformed_version_2_entry_is_refused_naming_it(tmp_path: Path, entry: str,
                                                          message: str) -> None:
    path = lock_at(tmp_path, f"lock_version: 2\nartifacts:\n  - name: echo\n"
                             f"    resolved_version: '1'\n    {entry}\n")
    with pytest.raises(LockError) as info:
        read_lock(path)
    assert f"{path}: artifacts[0]" in str(info.value) and message in str(info.value)
    assert info.value.code == "E-RUN-003"


def test_another_lock_version_is_refused_with_murmurs_fix(tmp_path: Path) -> None:
    path = lock_at(tmp_path, "lock_version: 3\nartifacts: []\n")
    with pytest.raises(LockError, match=r"invalid murmur.lock: unsupported lock_version 3 "
                                        r"\(expected 2; .*\) — delete murmur.lock and run "
                                        "`mur install` to regenerate it"):
        read_lock(path)


def test_a_runtime_pin_never_demotes_an_operator_one_and_platforms_join(tmp_path: Path
                                                                        ) -> None:
    """§3 Behaviour: installing on a second machine adds its platform's key; a runtime pin
    never demotes an operator entry nor relabels an earlier pull; a new version replaces."""
    lock = Lock(tmp_path / "murmur.lock", (
        Pin("echo", "1", A), Pin("native", "1", None, (("linux-x86_64", B),)),
        Pin("pulled", "1", C, (), "runtime", "ses_first")))
    lock = lock.upsert(Pin("echo", "1", A, (), "runtime", "ses_2"))
    lock = lock.upsert(Pin("native", "1", None, (("darwin-aarch64", C),)))
    lock = lock.upsert(Pin("pulled", "1", C, (), "runtime", "ses_second"))
    assert lock.pins == (
        Pin("echo", "1", A),
        Pin("native", "1", None, (("linux-x86_64", B), ("darwin-aarch64", C))),
        Pin("pulled", "1", C, (), "runtime", "ses_first"))
    adopted = lock.upsert(Pin("pulled", "2", A))
    assert adopted.pin("pulled") == Pin("pulled", "2", A)  # `mur install` adopts a pull


def test_a_pin_is_checked_in_murs_words(tmp_path: Path) -> None:
    """§2.4 step 3: `artifact integrity check failed for name@version` with the expected and
    actual hashes, and `has no sha256 for 'name' on <platform>`."""
    lock, file = tmp_path / "murmur.lock", tmp_path / "echo.wasm"
    check_pin(Pin("echo", "1", A), lock, "1", A, file)
    with pytest.raises(LockError) as info:
        check_pin(Pin("echo", "1", A), lock, "1", B, file)
    assert "artifact integrity check failed for echo@1" in str(info.value)
    assert f"expected sha256 (murmur.lock): {A}" in str(info.value)
    assert f"actual sha256 (on disk): {B}" in str(info.value)
    other = "plan9-mips" if platform_tag() != "plan9-mips" else "plan9-arm"
    with pytest.raises(LockError, match=f"murmur.lock has no sha256 for 'echo' on "
                                        f"{platform_tag()}: it pins {other}"):
        check_pin(Pin("echo", "1", None, ((other, A),)), lock, "1", A, file)
