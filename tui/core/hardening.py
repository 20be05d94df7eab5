"""What the supervisor's own process does to keep what it holds (provider keys, the gateway's
secret) from the commands and components it starts.

On Linux the process marks itself not dumpable (`prctl(PR_SET_DUMPABLE, 0)`): its
`/proc/<pid>/environ`, `/proc/<pid>/mem` and the rest become root's, so a shell command it runs —
with the user's own rights — cannot read its environment or memory, nor attach a debugger to
it. Elsewhere this does nothing (docs/security.md says what remains).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

PR_SET_DUMPABLE = 4
PR_GET_DUMPABLE = 3


def make_undumpable() -> bool:
    """True when the process is now not dumpable."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return int(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)) == 0 and \
            int(libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False
