"""The one rule between layers: tui.core never imports Textual or Rich (ARCHITECTURE §3)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import tui.core


def core_modules() -> list[str]:
    return sorted(
        info.name
        for info in pkgutil.walk_packages(tui.core.__path__, prefix="tui.core.")
    )


def test_core_has_modules_to_check() -> None:
    names = core_modules()
    assert "tui.core.loop.session" in names
    assert "tui.core.manifest" in names


def test_core_imports_neither_textual_nor_rich() -> None:
    modules = core_modules()
    script = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "", f"tui.core pulled in: {result.stdout.strip()}"


def test_headless_launch_path_imports_neither_textual_nor_rich() -> None:
    script = (
        "import sys\n"
        "import tui.cli\n"
        "from tui.core import headless\nfrom tui.core.loop import session\n"
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('textual', 'rich'))))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == ""
