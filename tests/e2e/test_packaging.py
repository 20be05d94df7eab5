"""`pip install .` ships everything the program reads at run time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.conftest import REPO


def test_wheel_ships_demo_wit_and_themes_and_runs_the_demo(tmp_path: Path,
                                                          murmur_home: Path) -> None:
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                    str(wheels), str(REPO)], check=True, capture_output=True, timeout=300)
    (wheel,) = wheels.glob("murmur_tui-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("tui/demo/murmur.yaml", "tui/demo/script.yaml", "tui/demo/task.md",
                   "tui/demo/components/ask-user/ask-user.wasm",
                   "tui/demo/components/ask-user/murmur.yaml",
                   "tui/demo/components/noisy-hook/noisy-hook.wasm",
                   "tui/_bundled/wit/worlds.wit", "tui/_bundled/wit/deps/tool/run.wit",
                   "tui/_bundled/themes/murmur-dark.yaml",
                   "tui/app/screens/supervisor.tcss", "tui/app/browser/conversation.tcss"):
        assert needed in names, needed
    assert any(name.endswith("entry_points.txt") for name in names)
    # install it apart from the source tree and run the demo from the installed copy
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target",
                    str(target), str(wheel)], check=True, capture_output=True, timeout=300)
    env = dict(os.environ, PYTHONPATH=str(target), MURMUR_HOME=str(murmur_home))
    script = ("import tui.core.fs.paths as p; print(p.bundled('wit')); print(p.demo_capsule())")
    where = subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path,
                           capture_output=True, text=True, check=True).stdout.split()
    assert all(Path(path).is_relative_to(target) for path in where)
    result = subprocess.run([sys.executable, "-m", "tui", "launch", "--headless", "--json",
                             "--answer", "yes"],
                            env=env, cwd=tmp_path, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    last = json.loads(result.stdout.splitlines()[-1])
    assert last["event"] == "SessionEnded" and last["exit_status"] == "ok"
