"""Where a session's files go (spec §5.7, docs/files.md).

Two folders that coincide unless `--workdir` is given:
- the *accessible* workdir: the tools' current folder, `task.md`, `.capsule-home/`,
  `logs/shell-<ms>.log`;
- the *session* workdir: `trace.jsonl`, `out/result.txt`, `logs/bootstrap.log`,
  `logs/hook-<name>.log`, `tools/<name>/murmur.yaml`.

Without `--workdir` both are `<capsule>/workdir/<session-id>/`; the bundled demo (whose folder
may be read-only, inside the installed package) uses `$MURMUR_HOME/workdirs/<name>/<session-id>/`.
With `--workdir D` the accessible workdir is `D` and the session workdir `D/.murmur/<session-id>/`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from tui.core.fs import paths
from tui.core.fs.private_files import make_private_dirs, write_private
from tui.core.manifest.model import KEY_REFERENCE, Capsule
from tui.core.text.secrets import redact, remember


@dataclass(frozen=True)
class SessionPaths:
    accessible: Path
    session: Path

    @property
    def trace(self) -> Path:
        return self.session / "trace.jsonl"

    @property
    def out(self) -> Path:
        return self.session / "out"

    @property
    def result(self) -> Path:
        return self.out / "result.txt"

    @property
    def logs(self) -> Path:
        return self.session / "logs"

    @property
    def shell_logs(self) -> Path:
        return self.accessible / "logs"

    @property
    def bootstrap_log(self) -> Path:
        return self.logs / "bootstrap.log"

    @property
    def tools(self) -> Path:
        return self.session / "tools"

    def create(self) -> None:
        """Every folder the session needs; those it creates are 0700."""
        for folder in (self.accessible, self.session, self.out, self.logs):
            make_private_dirs(folder)


def session_paths(capsule_root: Path, capsule_name: str, session_id: str,
                  workdir: Path | None, home: Path) -> SessionPaths:
    if workdir is not None:
        accessible = workdir.resolve()
        return SessionPaths(accessible, accessible / ".murmur" / session_id)
    if _is_bundled(capsule_root) or not os.access(capsule_root, os.W_OK):
        folder = home / "workdirs" / capsule_name / session_id
    else:
        folder = capsule_root / "workdir" / session_id
    return SessionPaths(folder, folder)


def _is_bundled(capsule_root: Path) -> bool:
    try:
        return capsule_root.resolve() == paths.demo_capsule().resolve()
    except OSError:
        return False


def write_result(target: SessionPaths, text: str, task_id: str | None = None) -> None:
    """`out/result.txt` (and `out/result_<task>.txt` for threaded tasks), written atomically,
    redacted."""
    text = redact(text)
    names = ["result.txt"] + ([f"result_{task_id}.txt"] if task_id else [])
    for name in names:
        write_private(target.out / name, text)


def write_manifest_copy(capsule: Capsule, target: Path) -> None:
    """The workdir's copy of `murmur.yaml` (Murmur writes one for the model to read), with any
    literal key in it — a gateway `api_key` that is not `${NAME}` — replaced by `[redacted]`."""
    for entry in capsule.artifacts:
        key = entry.gateway.api_key if entry.gateway is not None else None
        if key and not KEY_REFERENCE.match(key):
            remember(key)
    text = capsule.manifest_path.read_text(encoding="utf-8")
    write_private(target, redact(text, headers=False))
