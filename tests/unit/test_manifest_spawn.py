"""`capabilities.spawn.allow` and the runtime's reserved tool names in the manifest model
(docs/manifest.md): the entries read, bad ones refused naming file, line and key, `E-MAN-003`
for a door that authenticates, `E-CAP-013` for an artifact or shell binary named as a runtime
tool."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.core.errors import ManifestError
from tui.core.manifest import model
from tui.core.manifest.reader import parse_capsule
from tui.core.manifest.runtime_tools import RUNTIME_TOOLS

FILE = Path("/capsules/demo/murmur.yaml")
HEAD = 'name: demo\nversion: "1.0.0"\n'  # lines 1-2


def capsule(block: str) -> model.Capsule:
    return parse_capsule(FILE, HEAD + block)


def refused(block: str) -> list[str]:
    with pytest.raises(ManifestError) as info:
        capsule(block)
    return str(info.value).splitlines()


def test_spawn_allow_reads_names_and_folders_in_order() -> None:
    read = capsule("capabilities:\n  spawn:\n    allow: [helper, ./reviewer, ../team/coder]\n")
    assert read.capabilities.spawn_allow == ("helper", "./reviewer", "../team/coder")
    assert read.warnings == ()
    assert capsule("").capabilities.spawn_allow == ()
    assert capsule("capabilities:\n  spawn:\n    allow: []\n").capabilities.spawn_allow == ()


@pytest.mark.parametrize(("entry", "says"), [
    ("/abs/helper", "'/abs/helper' must be a capsule folder relative to this capsule's folder "
                    "(./helper), not absolute"),
    ("Helper", "'Helper' is neither an installed capsule's name (lowercase letters, digits "
               "and '-') nor a capsule folder (a relative path such as ./helper)"),
])
def test_a_spawn_entry_that_is_neither_a_name_nor_a_folder_is_refused(entry: str,
                                                                      says: str) -> None:
    assert refused(f"capabilities:\n  spawn:\n    allow: [{entry}]\n") == [
        f"{FILE}:5: capabilities.spawn.allow: {says}"]


def test_an_entry_listed_twice_is_refused() -> None:
    assert refused("capabilities:\n  spawn:\n    allow: [helper, helper]\n") == [
        f"{FILE}:5: capabilities.spawn.allow: 'helper' is listed twice"]


def test_an_authenticated_door_cannot_delegate() -> None:
    lines = refused("network:\n  authentication:\n    scheme: bearer\n"
                    "capabilities:\n  spawn:\n    allow: [helper]\n")
    assert lines == [f"{FILE}:3: network: network.authentication cannot be combined with a "
                     "non-empty capabilities.spawn.allow: a capsule whose door authenticates (a "
                     "formation member's) cannot delegate; drop one of the two [E-MAN-003]"]
    # an empty grant is no grant: the two go together
    read = capsule("network:\n  authentication:\n    scheme: bearer\n"
                   "capabilities:\n  spawn:\n    allow: []\n")
    assert read.network.authentication is not None


@pytest.mark.parametrize("name", RUNTIME_TOOLS)
def test_an_artifact_named_as_a_runtime_tool_is_refused(name: str) -> None:
    lines = refused(f"artifacts:\n  - name: {name}\n    runtime: tool\n    source: t.wasm\n")
    assert lines == [f"{FILE}:4: artifacts: '{name}' is the name of a tool the runtime "
                     f"provides ({', '.join(RUNTIME_TOOLS)}); choose another name [E-CAP-013]"]


def test_a_shell_binary_named_as_a_runtime_tool_is_refused() -> None:
    lines = refused("capabilities:\n  shell:\n    allow: [bash, call-member]\n")
    assert lines == [f"{FILE}:5: capabilities.shell.allow: 'call-member' is the name of a tool "
                     f"the runtime provides ({', '.join(RUNTIME_TOOLS)}); choose another name "
                     "[E-CAP-013]"]


def test_the_delegation_deadline_is_read() -> None:
    assert capsule("").lifecycle.delegation_deadline_secs == 600
    read = capsule("lifecycle:\n  delegation_deadline_secs: 90\n")
    assert read.lifecycle.delegation_deadline_secs == 90
    assert refused("lifecycle:\n  delegation_deadline_secs: 0\n")[0].startswith(
        f"{FILE}:4: lifecycle.delegation_deadline_secs:")
