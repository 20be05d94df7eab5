"""Names in the browser's list (docs/fleet.md, "Names"): a conversation is called by the name
of the newest session that wrote it (a resumed session keeps the name of the one it resumed),
in its context column, the context id shortened after it; the filter matches it too."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tui.app.models.fitting import short_id
from tui.core import names
from tui.core.record.indexed import Sessions
from tui.core.text.printable import printable


def conversation_names(home: Path, sessions: Mapping[str, Sessions]) -> dict[str, str]:
    """`record/context` → the name of its newest session, for the conversations that have
    one (read once, off the screen's thread)."""
    kept = names.read(home)
    return {key: kept[found.latest.session_id] for key, found in sessions.items()
            if found.latest.session_id in kept}


def named_context(name: str, context_id: str) -> str:
    """The context column: `nightly build · ctx_…1a2b3c4d5` for a named conversation, its
    context id otherwise."""
    return f"{printable(name)} · {short_id(context_id)}" if name else context_id
