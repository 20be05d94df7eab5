"""What the fleet's notes quote comes from outside — a host's name in fleet.yaml, a discovery
command's stderr, a question — and is shown as written: a `[/bold]` in it is text, not markup
that ends the app."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.waits import wait_until
from tui.app.fleet.app import FleetApp


def said(app: FleetApp) -> list[str]:
    return [str(note.message) for note in app._notifications]


async def test_brackets_from_a_hosts_name_and_its_commands_stderr_are_shown_as_written(
        tmp_path: Path, murmur_home: Path) -> None:
    refusing = tmp_path / "refusing.py"
    refusing.write_text("import sys\nsys.stderr.write('ssh: connect to host [/bold] port 22: "
                        "refused\\n')\nsys.exit(255)\n")
    fleet_yaml = murmur_home / "tui" / "fleet.yaml"
    fleet_yaml.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fleet_yaml.write_text(
        "hosts:\n"
        "  - name: \"build[/b]\"\n    doors: []\n"
        f"  - name: lab\n    discover: ['{sys.executable}', '{refusing}']\n")
    fleet_yaml.chmod(0o600)
    app = FleetApp(murmur_home)
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        await wait_until(pilot, lambda: any("[/bold]" in note for note in said(app)),
                         what=lambda: said(app))
        assert any("hosts[0] (build[/b])" in note for note in said(app)), said(app)
        assert app.hosts["lab"].state == "unreachable"
        await pilot.pause()
    assert app.return_code in (None, 0)
