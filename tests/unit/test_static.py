"""ruff and mypy are part of the suite: a lint or type error fails the build."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO


def test_ruff_is_clean() -> None:
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "tui", "tests"], cwd=REPO,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_is_clean() -> None:
    result = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental"], cwd=REPO,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
