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

from tui.core.errors import ThemeError, YamlError
from tui.core.fs.paths import bundled
from tui.core.manifest.located_yaml import read
from tui.core.manifest.problems import describe

DEFAULT_THEME = "murmur-dark"
COLOR_FIELDS = ("primary", "secondary", "warning", "error", "success", "accent", "foreground",
                "background", "surface", "panel", "boost")


@dataclass(frozen=True)
class ThemeFile:
    path: Path
    theme: Theme


def user_theme_dir(home: Path) -> Path:
    return home / "tui" / "themes"


def theme_dirs(home: Path) -> list[Path]:
    return [bundled("themes"), user_theme_dir(home)]


def load_theme(path: Path) -> Theme:
    """Read one theme file; ThemeError names what is wrong, with the file and the line."""
    try:
        data, node = read(path)
    except FileNotFoundError:
        raise ThemeError(f"{path}: cannot be read (no such file)") from None
    except YamlError as exc:
        raise ThemeError(str(exc)) from None
    if not isinstance(data, dict) or not isinstance(node, yaml.MappingNode):
        raise ThemeError(f"{path}:1: a theme is a mapping of fields (name, primary, ...)")
    lines = {str(key.value): key.start_mark.line + 1 for key, _ in node.value
             if isinstance(key, yaml.ScalarNode)}

    def refuse(key: str, message: str) -> ThemeError:
        return ThemeError(f"{path}:{lines.get(key, 1)}: {key}: {message}")

    name = data.get("name", path.stem)
    if not isinstance(name, str) or not name:
        raise refuse("name", "must be a non-empty string")
    fields: dict[str, Any] = {"name": name}
    for key in COLOR_FIELDS:
        value = data.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise refuse(key, f"{describe(value)} is not a color")
        try:
            Color.parse(value)
        except ColorParseError:
            raise refuse(key, f"{describe(value)} is not a color") from None
        fields[key] = value
    if "primary" not in fields:
        raise ThemeError(f"{path}:1: primary (a color) is required")
    dark = data.get("dark", True)
    if not isinstance(dark, bool):
        raise refuse("dark", "must be true or false")
    variables = data.get("variables", {})
    if not isinstance(variables, dict) or not all(
            isinstance(value, (str, int, float)) for value in variables.values()):
        raise refuse("variables", "must be a mapping of names to values")
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
