"""A component's own murmur.yaml, its files and `config.yaml`: read with the one safe loader,
every refusal naming the file and the line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.core.artifacts.resolve import resolve_skill, resolve_wasm
from tui.core.errors import LaunchError, YamlError
from tui.core.manifest.located_yaml import read_private
from tui.core.manifest.model import Capsule
from tui.core.manifest.reader import load_capsule
from tui.core.wasm.hooks import contract


def capsule_with(root: Path, runtime: str = "tool", source: str = "parts/search") -> Capsule:
    root.mkdir(parents=True, exist_ok=True)
    (root / "murmur.yaml").write_text(
        "name: c\nversion: '1'\nartifacts:\n"
        f"  - name: search\n    runtime: {runtime}\n    source: {source}\n", encoding="utf-8")
    return load_capsule(root)


def component(root: Path, own_manifest: str) -> None:
    folder = root / "parts" / "search"
    folder.mkdir(parents=True)
    (folder / "search.wasm").write_bytes(b"\0asm\x0d\0\x01\0")
    (folder / "murmur.yaml").write_text(own_manifest, encoding="utf-8")


def entry(capsule: Capsule) -> object:
    found = capsule.artifact("search")
    assert found is not None
    return found


def test_a_components_own_manifest_is_read_with_its_lines(tmp_path: Path,
                                                          murmur_home: Path) -> None:
    root = tmp_path / "c"
    component(root, "name: search\ndescription: Finds things.\ninput_schema: {type: object}\n")
    capsule = capsule_with(root)
    resolved = resolve_wasm(capsule, capsule.artifacts[0], murmur_home)
    assert resolved.description == "Finds things."
    assert resolved.input_schema == {"type": "object"}
    assert resolved.locate("input_schema").endswith("parts/search/murmur.yaml:3: input_schema")


@pytest.mark.parametrize("own, line, why", [
    ("name: a\ndescription: x\nname: b\n", 3, "first at line 1"),
    ("description: \"\\e[31mred\"\n", 1, "written as an escape"),
    ("input_schema: &s {properties: {self: *s}}\n", 1, "circular alias"),
    ("description: !!python/object:os.system ls\n", 1, "is not allowed"),
    ("input_schema:\n  type: object\n  default: 2024-01-01\n", 3, "expected JSON data"),
])
def test_a_hostile_component_manifest_is_refused_naming_file_and_line(
        tmp_path: Path, murmur_home: Path, own: str, line: int, why: str) -> None:
    root = tmp_path / "c"
    component(root, own)
    capsule = capsule_with(root)
    with pytest.raises(LaunchError) as info:
        resolve_wasm(capsule, capsule.artifacts[0], murmur_home)
    assert f"parts/search/murmur.yaml:{line}:" in str(info.value)
    assert why in str(info.value)


def test_a_hook_contract_refusal_names_the_line_and_key(tmp_path: Path,
                                                        murmur_home: Path) -> None:
    root = tmp_path / "c"
    component(root, "name: search\nexecution_mode: sometimes\n")
    capsule = capsule_with(root, runtime="hook")
    resolved = resolve_wasm(capsule, capsule.artifacts[0], murmur_home)
    with pytest.raises(LaunchError) as info:
        contract(resolved)
    assert "parts/search/murmur.yaml:2: execution_mode: must be blocking or async, not " \
        "'sometimes'" in str(info.value)


def test_a_source_that_loops_or_is_too_long_names_the_manifest_line(
        tmp_path: Path, murmur_home: Path) -> None:
    root = tmp_path / "c"
    root.mkdir()
    (root / "loop").symlink_to(root / "loop")
    capsule = capsule_with(root, source="loop/x.wasm")
    with pytest.raises(LaunchError) as info:
        resolve_wasm(capsule, capsule.artifacts[0], murmur_home)
    assert f"{root / 'murmur.yaml'}:4: artifacts[search]:" in str(info.value)
    deep = "/".join(["d" * 200] * 21)[:4090]  # fits the manifest; not with the folder
    capsule = capsule_with(tmp_path / "d", runtime="skill", source=deep)
    with pytest.raises(LaunchError) as info:
        resolve_skill(capsule, capsule.artifacts[0], murmur_home)
    assert "murmur.yaml:4: artifacts[search]:" in str(info.value)


SECRET = "sk-config-secret-0d9f1e2a"


@pytest.mark.parametrize("text, line", [
    (f"credentials:\n  OPENAI_API_KEY: {SECRET}\n  OPENAI_API_KEY: {SECRET}x\n", 3),
    (f"credentials:\n  OPENAI_API_KEY: !!int {SECRET}\n", 2),
    (f"credentials:\n  OPENAI_API_KEY: \"{SECRET}\\0\"\n", 2),
    (f"credentials:\n  OPENAI_API_KEY: {SECRET}\x1b\n", 2),
    (f"credentials:\n  OPENAI_API_KEY: {SECRET}\n  {SECRET}: [unclosed\n", 4),
    (f"credentials:\n  OPENAI_API_KEY: !{SECRET} x\n", 2),
    (f"credentials: &{SECRET} [*{SECRET}]\n", 1),
    (f"credentials:\n  OPENAI_API_KEY: *{SECRET}\n", 2),
])
def test_a_private_file_is_refused_without_quoting_a_byte_of_it(tmp_path: Path, text: str,
                                                                  line: int) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(YamlError) as info:
        read_private(path)
    message = str(info.value)
    assert message.startswith(f"{path}:{line}:")
    assert SECRET[3:12] not in message and "OPENAI" not in message


def test_a_private_file_that_is_not_utf8_names_the_line_only(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_bytes(b"credentials:\n  K: sk-\xe9\xff\n")
    with pytest.raises(YamlError) as info:
        read_private(path)
    assert str(info.value).startswith(f"{path}:2:") and "0xE9" not in str(info.value)


def test_a_private_file_reads_as_data(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(f"credentials:\n  OPENAI_API_KEY: {SECRET}\n", encoding="utf-8")
    assert read_private(path) == {"credentials": {"OPENAI_API_KEY": SECRET}}
    with pytest.raises(FileNotFoundError):
        read_private(tmp_path / "absent.yaml")
