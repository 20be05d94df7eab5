"""The names a scaffold takes: Murmur's artifact name rule, and why a name breaks it.

`mur new --roster NAME` refuses with `E-NEW-002` a `NAME`, `NAME-lead` or `NAME-worker` that is
not an artifact name: lowercase letters, digits and `-`, not starting or ending with `-`, at
most 100 characters (Murmur's cli.md, `mur new --roster`). `murmur-tui new NAME` holds its one
capsule name to the same rule, so a scaffolded capsule can be built and installed as it is.
"""

from __future__ import annotations

from collections.abc import Iterable

from tui.core.errors import ScaffoldError
from tui.core.text.printable import printable

MAX_ARTIFACT_NAME = 100  # characters
RULE = ("lowercase letters, digits and '-', not starting or ending with '-', at most "
        f"{MAX_ARTIFACT_NAME} characters")
_ALLOWED = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")


def artifact_name_problem(name: str) -> str | None:
    """Why `name` is not an artifact name, in words; None when it is one."""
    if not name:
        return "it is empty"
    if len(name) > MAX_ARTIFACT_NAME:
        return f"it is {len(name)} characters long"
    bad = next((char for char in name if char not in _ALLOWED), None)
    if bad is not None:
        kind = "an uppercase letter" if bad.isupper() else \
            "a space" if bad == " " else "a character"
        return f"it contains {kind} ({_quoted(bad)})"
    if name.startswith("-"):
        return "it starts with '-'"
    if name.endswith("-"):
        return "it ends with '-'"
    return None


def check_names(names: Iterable[str]) -> None:
    """Raise `ScaffoldError` (E-NEW-002) for the first name that is not an artifact name."""
    for name in names:
        problem = artifact_name_problem(name)
        if problem is not None:
            raise ScaffoldError(f"{_quoted(name)} is not an artifact name ({RULE}): {problem}",
                                code="E-NEW-002")


def _quoted(text: str) -> str:
    """`text` quoted, shown with nothing a terminal would act on and cut when it is long."""
    shown = printable(text, keep_newlines=False)
    return f"'{shown}'" if len(shown) <= 60 else f"'{shown[:57]}...'"
