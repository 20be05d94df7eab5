"""The footer of the supervisor and the browser, fitted to the terminal's width: a key that does
not fit is left out whole, the least important first, so that what shows is never cut mid-word
and Help (F1), Quit (Ctrl+Q, shown once: it works wherever the focus is) and Back always
show — every key is in the help screen and the palette (docs/screen.md)."""

from __future__ import annotations

from textual.widgets import Footer
from textual.widgets._footer import FooterKey

# the actions the footer keeps first, most important first; any other comes after them, in
# the order the bindings give (the palette's key is named by its action, `command_palette`)
IMPORTANCE = ("help", "quit", "back", "back_or_quit", "answer", "cancel_turn", "focus_prompt",
              "command_palette", "switch_view", "copy_result", "browse", "focus_queue", "fleet",
              "jump")


def _rank(action: str) -> int:
    name = action.rpartition(".")[2].partition("(")[0]
    return IMPORTANCE.index(name) if name in IMPORTANCE else len(IMPORTANCE)


def _cells(key: FooterKey) -> int:
    """The columns the key takes: its label, its own padding and border, its margin."""
    return key.render().cell_len + key.styles.gutter.width + key.styles.margin.width


class FittedFooter(Footer):
    """Textual's footer, which cuts what passes its width, showing only the keys that fit."""

    async def recompose(self) -> None:
        await super().recompose()
        self.fit()

    def on_resize(self) -> None:
        self.fit()

    def fit(self) -> None:
        """Show the most important keys that fit in the width, each whole; hide the rest."""
        keys = [child for child in self.children if isinstance(child, FooterKey)]
        width = self.size.width
        if not keys or width <= 0:
            return
        room = width
        shown: set[int] = set()
        for position in sorted(range(len(keys)), key=lambda i: (_rank(keys[i].action), i)):
            cells = _cells(keys[position])
            if cells <= room:
                shown.add(position)
                room -= cells
        for position, key in enumerate(keys):
            key.display = position in shown

