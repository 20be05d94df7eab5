"""The fleet in a browser (`murmur-tui fleet --web`, docs/fleet.md "In a browser"): the server
(`server.py`, aiohttp and textual-serve, imported only by `--web`), the driver of each served
fleet process (`driver.py`) and what such a process does differently (`served.py`).

Nothing here is imported by a command other than `fleet`; this module imports nothing."""

from __future__ import annotations

import os

DRIVER = "tui.web.driver:ServedDriver"  # what TEXTUAL_DRIVER names in a served process
LINK_ENV = "MURMUR_TUI_WEB_LINK"  # which link a served process was opened by: full | watch


def served_link() -> str | None:
    """`full` or `watch` in a fleet process textual-serve started for a browser tab, else
    None (a fleet on a terminal)."""
    if os.environ.get("TEXTUAL_DRIVER") != DRIVER:
        return None
    return "watch" if os.environ.get(LINK_ENV) == "watch" else "full"
