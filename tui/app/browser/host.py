"""What every murmur-tui app shares (the supervisor, the browser, the fleet): the Murmur home,
the theme manager, the palette's screenshot, and hosting the conversation browser — it alone
pushes the browser's screens, in answer to the requests they post
(`tui.app.browser.requests`). Each app is one class on this base: no app extends another.

The browser's screens are imported when first asked for: the supervisor starts without them."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Generic, TypeVar

from textual.app import App
from textual.notifications import SeverityLevel

from tui.app.browser.requests import (
    ContinueConversation,
    OpenConversation,
    OpenExport,
    OpenSearch,
)
from tui.app.theming import ThemeManager

Result = TypeVar("Result")


class AppBase(App[Result], Generic[Result]):
    """`home` is the Murmur home whose conversation records the browser reads; `theme` the
    theme asked for."""

    def __init__(self, home: Path, theme: str | None = None) -> None:
        super().__init__()
        self.home = home
        self.themes = ThemeManager(self, home, theme)

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Every note as plain text, whoever asks (a screen's or a widget's `notify` passes
        Textual's `markup=True` on): what notes quote — a question, a host's error, a path —
        comes from outside, and a `[/b]` in it would end the app as bad markup."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    def warn_from_thread(self, text: str) -> None:
        """One line for the user from a worker thread (a notification that could not be
        sent); nothing when the app has ended meanwhile."""
        with contextlib.suppress(RuntimeError):
            self.call_from_thread(self.notify, text, severity="warning", timeout=8)

    def action_screenshot(self, filename: str | None = None, path: str | None = None) -> None:
        """The palette's Screenshot: an SVG in the Downloads folder when there is one, else
        in the working directory; the screen says where (a folder that cannot take it, too)."""
        downloads = Path.home() / "Downloads"
        folder = Path(path) if path else downloads if downloads.is_dir() else Path.cwd()
        try:
            saved = self.save_screenshot(filename, str(folder))
        except OSError as exc:
            self.notify(f"The screenshot could not be saved in {folder}: {exc}",
                        severity="error", timeout=10)
            return
        self.notify(f"Screenshot saved: {saved}", timeout=8)

    def open_browser(self, record: str | None = None) -> None:
        """The list of conversations, over the current screen (Esc comes back). When the
        browser is open already, this goes back to its list rather than opening another."""
        from tui.app.browser.conversations import ConversationsScreen

        if any(isinstance(screen, ConversationsScreen) for screen in self.screen_stack):
            while not isinstance(self.screen, ConversationsScreen):
                self.pop_screen()
            return
        self.push_screen(ConversationsScreen(self.home, record))

    def on_open_conversation(self, request: OpenConversation) -> None:
        from tui.app.browser.conversation import ConversationScreen

        self.push_screen(ConversationScreen(request.conversation, anchor=request.anchor))

    def on_open_search(self, request: OpenSearch) -> None:
        from tui.app.browser.search import SearchScreen

        self.push_screen(SearchScreen(self.home, request.within))

    def on_open_export(self, request: OpenExport) -> None:
        from tui.app.browser.export import ExportScreen

        self.push_screen(ExportScreen(request.conversation))

    def on_continue_conversation(self, asked: ContinueConversation) -> None:
        """`r` / `R` on a screen: post what to resume, or say in a toast why nothing can."""
        from tui.app.browser.resume import request
        from tui.core.errors import CannotResume

        try:
            wanted = request(self.home, asked.conversation, asked.mode)
        except CannotResume as exc:
            self.notify(exc.text, title="Cannot resume", severity="error", timeout=10)
            return
        self.post_message(wanted)
