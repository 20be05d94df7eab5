"""The supervisor's themes: the bundled ones and the user's (`$MURMUR_HOME/tui/themes/*.yaml`),
registered at start and reloaded when a file changes; a broken file says why and the theme in
use stays (docs/screen.md)."""

from __future__ import annotations

from pathlib import Path

from tui.app.browser.host import BrowserHost
from tui.app.themes import DEFAULT_THEME, load_all, load_theme, user_theme_dir
from tui.core.errors import ThemeError
from tui.core.fs.private_files import make_private_dirs


class ThemeHost(BrowserHost):
    def __init__(self, home: Path, theme: str | None = None) -> None:
        super().__init__(home)
        self.requested_theme = theme or DEFAULT_THEME
        self.theme_files: dict[Path, str] = {}
        self.themes_watched = False  # the watch is set up: an edit from now on is seen

    def _register_themes(self) -> None:
        make_private_dirs(user_theme_dir(self.home))
        found, problems = load_all(self.home)
        for item in found:
            self.register_theme(item.theme)
            self.theme_files[item.path] = item.theme.name
        for problem in problems:
            self.notify(problem, title="Theme not loaded", severity="error", timeout=10)
        if self.requested_theme in self.available_themes:
            self.theme = self.requested_theme
        else:
            if self.requested_theme != DEFAULT_THEME:
                self.notify(f"There is no theme {self.requested_theme!r}; using "
                            f"{DEFAULT_THEME}.", severity="warning", timeout=8)
            if DEFAULT_THEME in self.available_themes:
                self.theme = DEFAULT_THEME

    async def _watch_themes(self) -> None:
        from watchfiles import Change, awatch

        folders = [str(path.parent) for path in self.theme_files] + \
            [str(user_theme_dir(self.home))]
        # the first pass (a change, or a second without one) comes once the watch is set up
        async for changes in awatch(*dict.fromkeys(folders), debounce=200, step=50,
                                    yield_on_timeout=True, rust_timeout=1000):
            self.themes_watched = True
            for change, changed in changes:
                if changed.endswith(".yaml") and change != Change.deleted:
                    self.reload_theme(Path(changed))

    def reload_theme(self, path: Path) -> None:
        """A theme file changed: use it, or say why not and keep the current theme."""
        try:
            theme = load_theme(path)
        except ThemeError as exc:
            self.notify(f"{exc}. Keeping the theme {self.theme}.", title="Theme not loaded",
                        severity="error", timeout=10)
            return
        self.register_theme(theme)
        self.theme_files[path] = theme.name
        if theme.name == self.theme:
            self.refresh_css()
            self.notify(f"Theme {theme.name} reloaded.", timeout=3)
