"""What the supervisor's own process does to keep what it holds (provider keys, the gateway's
secret) from the commands and components it starts.

On Linux the process marks itself not dumpable (`prctl(PR_SET_DUMPABLE, 0)`): its
`/proc/<pid>/environ`, `/proc/<pid>/mem` and the rest become root's, so a shell command it runs —
with the user's own rights — cannot read its environment or memory, nor attach a debugger to
it, and it writes no core dump. It is done when `launch` starts and by every `ShellTool` (a
process that runs commands protects itself, however it was started). Elsewhere this does
nothing (docs/security.md says what remains).
"""

from __future__ import annotations

import ctypes
import sys

PR_SET_DUMPABLE = 4
PR_GET_DUMPABLE = 3


_done = False


def make_undumpable() -> bool:
    """True when the process is now not dumpable (cheap after the first call)."""
    global _done
    if _done:
        return True
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        _done = int(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)) == 0 and \
            int(libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False
    return _done
