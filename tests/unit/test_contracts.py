"""Tool contracts: declared in a tool's own murmur.yaml, derived from its grants, refused with
the file, line and key; the retry rule over effect x replay x failure kind; bounds."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tui.core.errors import LaunchError
from tui.core.manifest.model import Artifact, Capabilities, Capsule
from tui.core.tools import contracts
from tui.core.tools.contracts import ToolContract


def _declared(tmp_path: Path, text: str) -> ToolContract | None:
    path = tmp_path / "murmur.yaml"
    path.write_text(text, encoding="utf-8")
    return contracts.read(yaml.safe_load(text) or {}, path)


@pytest.mark.parametrize(("block", "expected"), [
    ("effect: read-only\n    replay: safe\n", ("read-only", "safe", ())),
    ("effect: mutating\n    replay: idempotent\n    capabilities: [network.access, "
     "filesystem.write, network.access]\n",
     ("mutating", "idempotent", ("filesystem.write", "network.access"))),
    ("effect: mutating\n    replay: unsafe\n    capabilities: []\n", ("mutating", "unsafe", ())),
])
def test_a_declared_contract_is_read(tmp_path: Path, block: str,
                                     expected: tuple[str, str, tuple[str, ...]]) -> None:
    found = _declared(tmp_path, f"name: t\nx-murmur-tui:\n  contract:\n    {block}")
    assert found is not None and found.source == "declared"
    assert (found.effect, found.replay, found.capabilities) == expected


def test_no_block_declares_nothing(tmp_path: Path) -> None:
    assert _declared(tmp_path, "name: t\ndescription: d\n") is None


@pytest.mark.parametrize(("block", "line", "key", "words"), [
    ("effect: readonly\n    replay: safe\n", 4, "x-murmur-tui.contract.effect", "'readonly'"),
    ("effect: mutating\n    replay: maybe\n", 5, "x-murmur-tui.contract.replay", "'maybe'"),
    ("effect: mutating\n", 3, "x-murmur-tui.contract", "has no replay"),
    ("effect: mutating\n    replay: safe\n    capabilities: [disk]\n", 6,
     "x-murmur-tui.contract.capabilities", "'disk' is not a capability"),
    ("effect: mutating\n    replay: safe\n    retry: 3\n", 6, "x-murmur-tui.contract.retry",
     "not a contract key"),
    ("effect: read-only\n    replay: safe\n    capabilities: [filesystem.write]\n", 4,
     "x-murmur-tui.contract.effect", "contradicts"),
])
def test_a_bad_contract_names_file_line_and_key(tmp_path: Path, block: str, line: int, key: str,
                                                words: str) -> None:
    with pytest.raises(LaunchError) as raised:
        _declared(tmp_path, f"name: t\nx-murmur-tui:\n  contract:\n    {block}")
    message = str(raised.value)
    assert message.startswith(f"{tmp_path / 'murmur.yaml'}:{line}: {key}: ")
    assert words in message


def _entry(caps: Capabilities | None = None) -> Artifact:
    return Artifact(name="t", version="1.0.0", runtime="tool", line=1, capabilities=caps)


@pytest.mark.parametrize(("capsule_caps", "entry_caps", "granted"), [
    (Capabilities(), None, ("filesystem.read", "filesystem.write")),
    (Capabilities(network_allow=("example.com",)), None,
     ("filesystem.read", "filesystem.write", "network.access")),
    (Capabilities(network_allow=("example.com",)),
     Capabilities(network_declared=True), ("filesystem.read", "filesystem.write")),
    (Capabilities(env_allow=("HOME",)), None,
     ("environment.read", "filesystem.read", "filesystem.write")),
])
def test_an_undeclared_tool_is_derived_mutating_and_unsafe(
        capsule_caps: Capabilities, entry_caps: Capabilities | None,
        granted: tuple[str, ...]) -> None:
    capsule = Capsule(name="c", version="1", manifest_path=Path("murmur.yaml"),
                      capabilities=capsule_caps)
    derived = contracts.derive(capsule, _entry(entry_caps))
    assert derived == ToolContract("mutating", "unsafe", granted, "derived")
    assert "(derived)" in derived.line()


def test_a_declared_capability_not_granted_is_named() -> None:
    declared = ToolContract("read-only", "safe", ("network.access", "filesystem.read"),
                            "declared")
    assert contracts.ungranted(declared, ("filesystem.read", "filesystem.write")) == (
        "network.access",)


def test_the_fingerprint_changes_with_every_part_but_not_capability_order() -> None:
    base = ToolContract("mutating", "unsafe", ("a.b", "c.d"), "declared")
    first = contracts.fingerprint(b"wasm", "desc", {"type": "object"}, base)
    same = contracts.fingerprint(b"wasm", "desc", {"type": "object"},
                                 ToolContract("mutating", "unsafe", ("c.d", "a.b"), "derived"))
    assert first == same and len(first) == 64
    others = {
        contracts.fingerprint(b"wasm2", "desc", {"type": "object"}, base),
        contracts.fingerprint(b"wasm", "desc2", {"type": "object"}, base),
        contracts.fingerprint(b"wasm", "desc", {"type": "string"}, base),
        contracts.fingerprint(b"wasm", "desc", {"type": "object"},
                              ToolContract("read-only", "unsafe", ("a.b", "c.d"), "declared")),
        contracts.fingerprint(b"wasm", "desc", {"type": "object"},
                              ToolContract("mutating", "safe", ("a.b", "c.d"), "declared")),
        contracts.fingerprint(b"wasm", "desc", {"type": "object"},
                              ToolContract("mutating", "unsafe", ("a.b",), "declared")),
    }
    assert first not in others and len(others) == 6


@pytest.mark.parametrize("effect", contracts.EFFECTS)
@pytest.mark.parametrize("replay", contracts.REPLAYS)
@pytest.mark.parametrize("stated", [None, "definitive", "uncertain"])
def test_the_retry_rule(effect: contracts.Effect, replay: contracts.Replay,
                        stated: str | None) -> None:
    contract = ToolContract(effect, replay, (), "declared")
    kind = contracts.failure_kind(contract, trapped=True, stated=stated)
    assert kind == (stated or ("definitive" if effect == "read-only" else "uncertain"))
    retry, why = contracts.retry_decision(contract, kind)
    assert retry == (kind == "definitive" and replay != "unsafe")
    assert why.startswith("retried once" if retry else "not retried")
    assert (kind in why) or (replay in why)


def test_an_overflow_is_cut_with_a_note() -> None:
    text = "é" * 3000  # 6000 bytes
    cut = contracts.cut(text, contracts.MAX_PROGRESS_BYTES, "this progress message")
    kept, note = cut.split("\n[truncated: ")
    assert len(kept.encode()) <= 4096 and kept == "é" * 2048
    assert note == "this progress message was 6000 bytes; the first 4096 are above]"
    assert contracts.cut("short", 4096, "x") == "short"
