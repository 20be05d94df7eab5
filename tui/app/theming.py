"""The theme manager: the bundled themes and the user's (`$MURMUR_HOME/tui/themes/*.yaml`),
registered at start and reloaded when a file changes; a broken file says why and the theme in
use stays (docs/screen.md).

A plain object the app holds: it speaks to the app only through Textual's public theme API
(`register_theme`, `available_themes`, `theme`, `refresh_css`) and `notify`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.app import App

from tui.app.themes import DEFAULT_THEME, load_all, load_theme, user_theme_dir
from tui.core.errors import ThemeError
from tui.core.fs.private_files import make_private_dirs


class ThemeManager:
    """`requested`: the theme asked for (`--theme`), else the default."""

    def __init__(self, app: App[Any], home: Path, requested: str | None = None) -> None:
        self.app = app
        self.home = home
        self.requested = requested or DEFAULT_THEME
        self.files: dict[Path, str] = {}  # each user theme file and the theme it holds
        self.watched = False  # the watch is set up: an edit from now on is seen

    def register(self, *, tell: bool = True) -> None:
        """Every theme found, registered, and the requested one in use. `tell`: say what
        could not be loaded (False before the app runs: the browser sets its theme before its
        first screen mounts, so no widget is styled twice)."""
        if tell:
            make_private_dirs(user_theme_dir(self.home))
        found, problems = load_all(self.home)
        for item in found:
            self.app.register_theme(item.theme)
            self.files[item.path] = item.theme.name
        if tell:
            for problem in problems:
                self.app.notify(problem, title="Theme not loaded", severity="error", timeout=10)
        if self.requested in self.app.available_themes:
            self.app.theme = self.requested
        elif tell:
            if self.requested != DEFAULT_THEME:
                self.app.notify(f"There is no theme {self.requested!r}; using "
                                f"{DEFAULT_THEME}.", severity="warning", timeout=8)
            if DEFAULT_THEME in self.app.available_themes:
                self.app.theme = DEFAULT_THEME

    def names(self) -> list[str]:
        """The themes the palette offers: murmur-tui's own and the user's."""
        return [name for name in sorted(self.app.available_themes)
                if name.startswith("murmur-") or name in self.files.values()]

    async def watch(self) -> None:
        """Reload a theme file when it changes (run as the app's worker)."""
        from watchfiles import Change, awatch

        folders = [str(path.parent) for path in self.files] + [str(user_theme_dir(self.home))]
        # the first pass (a change, or a second without one) comes once the watch is set up
        async for changes in awatch(*dict.fromkeys(folders), debounce=200, step=50,
                                    yield_on_timeout=True, rust_timeout=1000):
            self.watched = True
            for change, changed in changes:
                if changed.endswith(".yaml") and change != Change.deleted:
                    self.reload(Path(changed))

    def reload(self, path: Path) -> None:
        """A theme file changed: use it, or say why not and keep the current theme."""
        try:
            theme = load_theme(path)
        except ThemeError as exc:
            self.app.notify(f"{exc}. Keeping the theme {self.app.theme}.",
                            title="Theme not loaded", severity="error", timeout=10)
            return
        self.app.register_theme(theme)
        self.files[path] = theme.name
        if theme.name == self.app.theme:
            self.app.refresh_css()
            self.app.notify(f"Theme {theme.name} reloaded.", timeout=3)
