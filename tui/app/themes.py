"""Themes as data files: YAML with the fields of a Textual `Theme`.

Bundled themes live in `themes/` (shipped in the package); user themes in
`$MURMUR_HOME/tui/themes/*.yaml` (a user theme with a bundled theme's name replaces it). A file
that does not parse is reported and skipped: the app keeps the theme it has.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from textual.color import Color, ColorParseError
from textual.theme import Theme

from tui.core.paths import bundled

DEFAULT_THEME = "murmur-dark"
COLOR_FIELDS = ("primary", "secondary", "warning", "error", "success", "accent", "foreground",
                "background", "surface", "panel", "boost")


class ThemeError(Exception):
    """A theme file that cannot be used; the message names the file and the problem."""


@dataclass(frozen=True)
class ThemeFile:
    path: Path
    theme: Theme


def user_theme_dir(home: Path) -> Path:
    return home / "tui" / "themes"


def theme_dirs(home: Path) -> list[Path]:
    return [bundled("themes"), user_theme_dir(home)]


def load_theme(path: Path) -> Theme:
    """Read one theme file; ThemeError names what is wrong."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ThemeError(f"{path}: cannot be read ({exc})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise ThemeError(f"{path}{where}: not valid YAML") from None
    if not isinstance(data, dict):
        raise ThemeError(f"{path}: a theme is a mapping of fields (name, primary, ...)")
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not name:
        raise ThemeError(f"{path}: name must be a non-empty string")
    fields: dict[str, Any] = {"name": name}
    for key in COLOR_FIELDS:
        value = data.get(key)
        if value is None:
            continue
        try:
            Color.parse(str(value))
        except ColorParseError:
            raise ThemeError(f"{path}: {key}: {value!r} is not a color") from None
        fields[key] = str(value)
    if "primary" not in fields:
        raise ThemeError(f"{path}: primary (a color) is required")
    dark = data.get("dark", True)
    if not isinstance(dark, bool):
        raise ThemeError(f"{path}: dark must be true or false")
    variables = data.get("variables", {})
    if not isinstance(variables, dict):
        raise ThemeError(f"{path}: variables must be a mapping")
    return Theme(dark=dark, variables={str(k): str(v) for k, v in variables.items()}, **fields)


def load_all(home: Path) -> tuple[list[ThemeFile], list[str]]:
    """Every theme file (bundled first, then the user's) and the problems found."""
    found: list[ThemeFile] = []
    problems: list[str] = []
    for folder in theme_dirs(home):
        for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
            try:
                found.append(ThemeFile(path, load_theme(path)))
            except ThemeError as exc:
                problems.append(str(exc))
    return found, problems
