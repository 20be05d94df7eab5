"""What a test run may leave in the checkout: nothing. Every test writes under its own
`tmp_path`; a file that appears in the tree during a run (a temp folder made in the working
directory, a journal written beside the capsule) would be committed by the next `git add .`.

Watched: the checkout's top (a file there, or a folder of its own) and everything under
`tui/`, where such strays land. The other tracked folders (tests/, docs/, …) are where a
person works while the suite runs: a file written there in the meantime is not the run's."""

from __future__ import annotations

import subprocess
from pathlib import Path

WATCHED_FOLDERS = ("tui",)


def _git(root: Path, *args: str) -> str | None:
    try:
        # no optional locks: several test workers ask at once, and none may take the index's
        # lock from another
        done = subprocess.run(["git", "--no-optional-locks", "-C", str(root), *args],
                              capture_output=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None


def untracked(root: Path) -> set[str] | None:
    """The watched files under `root` that git sees as neither tracked nor ignored, as paths
    from the checkout's top; None when `root` is not in a git checkout (a source tarball) or
    git is missing, where there is nothing to compare with."""
    status = _git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", ".")
    folders = _git(root, "ls-tree", "-d", "--name-only", "HEAD")
    if status is None:
        return None
    tracked = set((folders or "").split()) - set(WATCHED_FOLDERS)
    paths = {entry[3:] for entry in status.split("\0") if entry.startswith("?? ")}
    return {path for path in paths if path.split("/", 1)[0] not in tracked}


def left_behind(before: set[str], after: set[str]) -> str:
    """The complaint for files that appeared during the run, or "" when none did."""
    new = sorted(after - before)
    if not new:
        return ""
    shown = ", ".join(new[:20]) + (f" and {len(new) - 20} more" if len(new) > 20 else "")
    return (f"the test run left {len(new)} file(s) in the checkout, outside any tmp_path: "
            f"{shown}")
