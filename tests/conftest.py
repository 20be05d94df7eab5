"""Shared fixtures: a private MURMUR_HOME per test, capsules written to temp folders, and a
guard that the run leaves no file in the checkout."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.capsules import write_capsule
from tests.leftovers import left_behind, untracked
from tests.providers.server import Provider

REPO = Path(__file__).resolve().parent.parent


def _signals_reach_children() -> None:
    """Tests send SIGINT, SIGTERM and SIGHUP to the processes they start and check what a
    user's signal does. A run started in the background of a script (`.ci/run &`) inherits
    SIGINT ignored, one under `nohup` SIGHUP, and an ignored signal stays ignored through
    exec: each such child would sit the signal out. A handler that does nothing keeps this
    run deaf to it, as it was started, while every child starts with the signal's default
    (exec resets a caught signal), as under a terminal."""
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(number) == signal.SIG_IGN:
            signal.signal(number, _ignore)


def _ignore(signum: int, frame: object) -> None:
    """Caught, not ignored: see `_signals_reach_children`."""


_signals_reach_children()

# pytest's `timeout` (pyproject.toml) ends a test that hangs. A slow test builds components:
# on a loaded machine a build, or the wait for another worker's build of the same guest (a
# file lock), outlasts that, so a slow test gets this long instead.
SLOW_TIMEOUT = 1200


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("slow") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(SLOW_TIMEOUT))


@pytest.fixture(scope="session", autouse=True)
def leaves_no_file_behind() -> Iterator[None]:
    """The checkout holds, after the run, no file it did not hold before: a test that writes
    outside its tmp_path fails the run, naming the file. Each xdist worker runs this for its
    own share, so a file written by any worker is named by every worker running at the time."""
    before = untracked(REPO)
    yield
    if before is None:
        return
    after = untracked(REPO)
    if after is not None and (complaint := left_behind(before, after)):
        pytest.fail(complaint, pytrace=False)


@pytest.fixture(autouse=True)
def murmur_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own MURMUR_HOME; nothing touches the real ~/.murmur."""
    home = tmp_path / "murmur-home"
    monkeypatch.setenv("MURMUR_HOME", str(home))
    return home


CapsuleFactory = Callable[..., Path]


@pytest.fixture
def make_capsule(tmp_path: Path) -> CapsuleFactory:
    """`write_capsule` (tests/capsules.py) into `tmp_path / folder` ("capsule")."""

    def make(responses: list[dict[str, Any]] | None = None, *, folder: str = "capsule",
             **options: Any) -> Path:
        return write_capsule(tmp_path / folder, responses, **options)

    return make


def started_line(stdout: str) -> dict[str, Any]:
    """The `SessionStarted` line of a `launch --json` run's stdout (warnings may come first)."""
    for line in stdout.splitlines():
        if line.startswith("{") and '"SessionStarted"' in line:
            value = json.loads(line)
            if value.get("event") == "SessionStarted":
                return dict(value)
    raise AssertionError(f"no SessionStarted line in: {stdout[:2000]}")


def run_cli(*args: str, env: dict[str, str] | None = None, input_text: str | None = None,
            cwd: Path | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run `murmur-tui` as a user would: a real subprocess of this interpreter."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "tui", *args], capture_output=True, text=True,
        env=full_env, input=input_text if input_text is not None else "", cwd=cwd,
        timeout=timeout,
    )


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


@pytest.fixture
def provider() -> Iterator[Provider]:
    """A model provider on loopback (tests/providers/server.py), stopped after the test."""
    server = Provider().start()
    yield server
    server.stop()
