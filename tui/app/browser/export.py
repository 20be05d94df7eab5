"""`e`: write the open conversation to Markdown or JSON lines."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from tui.core.fs.private_files import replacing
from tui.core.record.catalog import Conversation
from tui.core.record.export import export_jsonl, export_markdown
from tui.core.text.printable import printable


def export(conversation: Conversation, target: Path) -> int:
    """Markdown, or JSON lines when the name ends in .jsonl / .json; returns the message
    count. Written to a temporary file first (mode 0600: a conversation is private), so a
    failed export leaves nothing half-done."""
    target = target.expanduser()
    with replacing(target) as fd, open(fd, "w", encoding="utf-8", closefd=False) as out:
        if target.suffix in (".jsonl", ".json"):
            return export_jsonl(conversation.path, out)
        return export_markdown(conversation, out)


class ExportScreen(ModalScreen[None]):
    CSS_PATH = "export.tcss"
    BINDINGS = [Binding("escape", "close", "Cancel")]

    def __init__(self, conversation: Conversation) -> None:
        super().__init__()
        self.conversation = conversation
        name = printable(f"{conversation.record}-{conversation.context_id}.md", False)
        default = Path.cwd() / name.replace("/", "_")
        self.path_input = Input(str(default), id="export-path")
        self.note = Static("Markdown, or JSON lines for a name ending in .jsonl. Enter writes.",
                           id="export-note", markup=False)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(printable(f"Export {self.conversation.record} / "
                                   f"{self.conversation.context_id} to:", False), markup=False)
            yield self.path_input
            yield self.note

    def on_mount(self) -> None:
        self.path_input.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        target = Path(event.value.strip())
        try:
            count = export(self.conversation, target)
        except OSError as exc:
            self.note.update(f"Could not write {target}: {exc.strerror or exc}")
            return
        self.app.notify(f"Exported {count} messages to {target}.", timeout=6)
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)
