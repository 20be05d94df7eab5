"""What a command ends with: its exit code, and the one way a refusal is told on stderr.

Exit codes: 0 the task ended ok, 1 it ended not ok, 2 bad input (nothing ran), 130 stopped at
once by a second Ctrl-C (the files finished).
"""

from __future__ import annotations

import sys

EXIT_OK = 0
EXIT_NOT_OK = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130  # a second Ctrl-C: stopped at once (files finished)


def error(message: str) -> int:
    from tui.core.text.secrets import redact

    sys.stderr.write(f"murmur-tui: error: {redact(message)}\n")
    return EXIT_BAD_INPUT


def refused(exc: Exception, lead: str | None = None) -> int:
    """The one way an error of ours (`MurmurTuiError`: text, place, code) is told."""
    return error(f"{lead}:\n{exc}" if lead else str(exc))
