"""What a test run may leave in the checkout: nothing. Every test writes under its own
`tmp_path`; a file that appears in the tree during a run (a temp folder made in the working
directory, a journal written beside the capsule) would be committed by the next `git add .`."""

from __future__ import annotations

import subprocess
from pathlib import Path


def untracked(root: Path) -> set[str] | None:
    """The files under `root` that git sees as neither tracked nor ignored, as paths from the
    checkout's top; None when `root` is not in a git checkout (a source tarball) or git is
    missing, where there is nothing to compare with."""
    try:
        done = subprocess.run(
            # no optional locks: several test workers ask at once, and none may take the
            # index's lock from another
            ["git", "--no-optional-locks", "-C", str(root), "status", "--porcelain=v1", "-z",
             "--untracked-files=all", "--", "."],
            capture_output=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    entries = done.stdout.decode("utf-8", "replace").split("\0")
    return {entry[3:] for entry in entries if entry.startswith("?? ")}


def left_behind(before: set[str], after: set[str]) -> str:
    """The complaint for files that appeared during the run, or "" when none did."""
    new = sorted(after - before)
    if not new:
        return ""
    shown = ", ".join(new[:20]) + (f" and {len(new) - 20} more" if len(new) > 20 else "")
    return (f"the test run left {len(new)} file(s) in the checkout, outside any tmp_path: "
            f"{shown}")
