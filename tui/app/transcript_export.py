"""`e` on the supervisor screen, or the palette's "Export the transcript": the transcript as
Markdown — every task the screen holds, each its own section — written to
`<session>-transcript.md` in the current directory (mode 0600, replaced whole), and a toast
saying where. The Markdown is the transcript model's (`tui.app.models.transcript_text`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.command import DiscoveryHit, Hit, Hits, Provider

from tui.app.models.transcript_text import write_markdown

if TYPE_CHECKING:
    from textual.screen import Screen

    from tui.app.models.transcript import TranscriptModel

NAME = "Export the transcript"
HELP = "Every task on screen, as Markdown, to <session>-transcript.md in this directory"


def export_path(model: TranscriptModel, folder: Path) -> Path | None:
    """Where the export goes: `<session>-transcript.md` in `folder` (None: no session yet)."""
    session_id = model.session.session_id
    if not session_id:
        return None
    return folder / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', session_id)}-transcript.md"


def export_transcript(screen: Screen[Any], model: TranscriptModel) -> Path | None:
    """Write the export and say where (or why not) in a toast; the path written."""
    try:
        target = export_path(model, Path.cwd())
    except OSError as exc:  # the directory murmur-tui was started in is gone
        screen.notify(f"Could not export the transcript: {exc.strerror or exc}",
                      severity="error", timeout=10)
        return None
    if target is None:
        screen.notify("Nothing to export yet: no session has started.", timeout=4)
        return None
    try:
        write_markdown(model, target)
    except OSError as exc:
        screen.notify(f"Could not write {target}: {exc.strerror or exc}", severity="error",
                      timeout=10)
        return None
    count = model.block.number if model.block is not None else 0
    screen.notify(f"Transcript ({count} task{'s' if count != 1 else ''}) written to "
                  f"{target}.", timeout=8)
    return target


class TranscriptCommands(Provider):
    """The export in the command palette of the screen that has a transcript."""

    def _export(self) -> None:
        action = getattr(self.screen, "action_export_transcript", None)
        if action is not None:
            action()

    async def discover(self) -> Hits:
        yield DiscoveryHit(NAME, self._export, help=HELP)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        score = matcher.match(NAME)
        if score > 0:
            yield Hit(score, matcher.highlight(NAME), self._export, help=HELP)
