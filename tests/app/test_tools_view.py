"""The Tools pane (key 5): every tool of a real session — a WebAssembly tool with a declared
contract, one with a derived contract, a shell binary — one row each, and the highlighted
tool's whole contract and fingerprint below, at 80×24 (the pane switcher) and side by side."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.app.conftest import leave_prompt, settle
from tests.app.test_prompt import start
from tests.capsules import write_capsule
from tests.responses import text_response
from tests.waits import wait_until
from tests.wasm.conftest import FIXTURES
from tui.app.app import SupervisorApp
from tui.app.widgets.tools_pane import short_capabilities


def capsule(tmp_path: Path) -> Path:
    """`spin` declares its contract in its folder's murmur.yaml; `echo` is a bare .wasm
    (derived); `ls` is an allowed shell binary (built in)."""
    folder = tmp_path / "spin-tool"
    folder.mkdir()
    shutil.copy(FIXTURES / "spin_tool.wasm", folder / "spin.wasm")
    (folder / "murmur.yaml").write_text(
        "name: spin\ndescription: Spins.\nx-murmur-tui:\n  contract:\n    effect: read-only\n"
        "    replay: idempotent\n    capabilities: [filesystem.read]\n", encoding="utf-8")
    return write_capsule(tmp_path / "capsule", [text_response("done")], name="tools-view",
                         max_turns=None, shell=("ls",),
                         tools={"spin": folder, "echo": FIXTURES / "echo_tool.wasm"})


def visible_rows(app: SupervisorApp) -> list[str]:
    """The tool rows as the terminal shows them (the drawn strips, trimmed)."""
    rows = app.supervisor.tool_list.rows
    return [rows.render_line(y).text.rstrip() for y in range(rows.row_count)]


@pytest.mark.parametrize("size", [(80, 24), (160, 40)])
async def test_key_5_lists_every_tool_and_shows_one_whole(
        murmur_home: Path, tmp_path: Path, size: tuple[int, int]) -> None:
    app = SupervisorApp(murmur_home)
    start(app, capsule(tmp_path))
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: app.result is not None, within=60)
        await settle(pilot)
        pane = app.supervisor.tool_list
        await leave_prompt(pilot)  # out of the prompt: the pane comes forward, in focus
        await pilot.press("5")
        await wait_until(pilot, lambda: pane.rows.is_on_screen and pane.rows.has_focus)
        await settle(pilot)
        table = json.loads((Path(app.result.paths.tools) / "contracts.json").read_text())
        rows = visible_rows(app)
        assert [row.split()[:6] for row in rows] == [
            ["echo", "wasm", "mutating", "unsafe", "derived", table["echo"]["fingerprint"][:12]],
            ["ls", "shell", "mutating", "unsafe", "built-in", table["ls"]["fingerprint"][:12]],
            ["spin", "wasm", "read-only", "idempotent", "declared",
             table["spin"]["fingerprint"][:12]],
        ]
        if size[0] == 80:  # the pane takes the whole width: every column fits, capabilities too
            assert rows[0].endswith(" fs.rw") and rows[1].endswith(" env.r fs.rw exec")
            assert rows[2].endswith(" fs.r") and all(len(row) <= 80 for row in rows)
        # the highlighted tool's whole contract: the first row at first, then the one chosen
        assert "contract: derived" in pane.detail_text
        await pilot.press("end")
        await wait_until(pilot, lambda: pane.detail_text.startswith("spin — WebAssembly tool"))
        detail = pane.detail_text.splitlines()
        assert "contract: declared in the tool's own murmur.yaml (x-murmur-tui.contract)" in detail
        assert "effect: read-only" in detail
        assert any(line.startswith("replay: idempotent — ") for line in detail)
        assert detail[detail.index("capabilities:") + 1] == "  filesystem.read"
        assert f"fingerprint: sha256 {table['spin']['fingerprint']}" in detail
        assert len(table["spin"]["fingerprint"]) == 64
        # the detail is on the screen, not only in the widget
        assert pane.query_one("#tool-detail").region.height > 0


async def test_a_session_without_contracts_says_so(murmur_home: Path, tmp_path: Path) -> None:
    app = SupervisorApp(murmur_home)
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.supervisor.tool_list
        pane.read_contracts(tmp_path / "tools" / "contracts.json")
        await leave_prompt(pilot)
        await pilot.press("5")
        await settle(pilot)
        assert pane.rows.row_count == 0
        assert pane.detail_text.startswith("No tools to show. ")
        assert "contracts.json: no such file" in pane.detail_text


def test_short_capabilities_pair_reads_and_writes() -> None:
    assert short_capabilities(("environment.read", "filesystem.read", "filesystem.write",
                               "process.execute")) == "env.r fs.rw exec"
    assert short_capabilities(()) == "none"
    assert short_capabilities(("network.access", "secrets.read")) == "net secrets"
