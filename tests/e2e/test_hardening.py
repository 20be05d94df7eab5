"""The supervisor's own process keeps what it holds from the commands it starts: a shell
command — running with the user's own rights — cannot read the supervisor's environment
(`/proc/<pid>/environ`), where a process that has not hardened itself can be read."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO

PROBE = ("cat /proc/$PPID/environ >/dev/null 2>&1 && echo PARENT-READABLE || echo PARENT-DENIED;"
         " cat /proc/$$/environ >/dev/null 2>&1 && echo SELF-READABLE")
NOBODY = 65534

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="process hardening is Linux's prctl")


def runnable_as(uid: int) -> tuple[list[str], dict[str, str]] | None:
    """An interpreter a user can run with this project importable, or None."""
    site = sysconfig.get_paths()["purelib"]
    path = os.pathsep.join([str(REPO), site])
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (sys.executable, f"/usr/bin/{version}"):
        try:
            probe = subprocess.run([candidate, "-c", "import tui.core.session, wasmtime, yaml"],
                                   capture_output=True, env=dict(os.environ, PYTHONPATH=path),
                                   preexec_fn=_as(uid), check=False, timeout=60)
        except OSError:  # this user may not run it (it lives in another user's home)
            continue
        if probe.returncode == 0:
            return [candidate], {"PYTHONPATH": path}
    return None


def _as(uid: int) -> Callable[[], None] | None:
    if os.geteuid() != 0:
        return None

    def drop() -> None:
        os.setgid(uid)
        os.setuid(uid)

    return drop


@pytest.fixture
def plain_user_folder() -> Iterator[Path]:
    """A folder the plain user owns (root may read any process: the test runs as `nobody`)."""
    folder = Path(tempfile.mkdtemp(prefix="murmur-hardening-"))
    folder.chmod(0o755)
    if os.geteuid() == 0:
        os.chown(folder, NOBODY, NOBODY)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_shell_command_cannot_read_the_supervisors_environment(
        plain_user_folder: Path) -> None:
    uid = NOBODY if os.geteuid() == 0 else os.geteuid()
    interpreter = runnable_as(uid)
    if interpreter is None:
        pytest.skip("no Python interpreter the plain user can run with this project")
    command, env = interpreter
    capsule = plain_user_folder / "capsule"
    script = ('[{"stop_reason": "tool_call", "content": [{"type": "tool_call", "id": "c1", '
              '"name": "bash", "input": {"command": "' + PROBE.replace('"', '\\"') + '"}}]}, '
              '{"stop_reason": "end_turn", "content": [{"type": "text", "text": "done"}]}]')
    manifest = ("name: hardening\nversion: '1'\nartifacts:\n  - name: d\n    runtime: driver\n"
                "    builtin: scripted\n    config: {script: script.json}\n"
                "capabilities:\n  shell:\n    allow: [bash]\n"
                "inference:\n  model: m\n  driver:\n    artifact: d\n")
    done = subprocess.run(
        [*command, "-c", f"import os, sys; os.makedirs({str(capsule)!r}); "
         f"open({str(capsule / 'script.json')!r}, 'w').write({script!r}); "
         f"open({str(capsule / 'murmur.yaml')!r}, 'w').write({manifest!r}); "
         "from tui.cli import main; sys.exit(main(['launch', sys.argv[1], '--headless']))",
         str(capsule)],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        env=dict(env, PATH=os.environ.get("PATH", "/usr/bin:/bin"),
                 MURMUR_HOME=str(plain_user_folder / "home"), SUPERVISOR_ONLY="x" * 12),
        preexec_fn=_as(uid))
    assert done.returncode == 0, done.stdout + done.stderr
    records = list((plain_user_folder / "home").rglob("conversation.jsonl"))
    record = records[0].read_text()
    # reading an environ works for what the command owns; the supervisor's is refused
    assert "Stdout:\\nPARENT-DENIED\\nSELF-READABLE\\n" in record, record
