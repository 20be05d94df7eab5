"""Where murmur-tui finds per-user files and the files it ships."""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parents[2]  # tui/


def murmur_home() -> Path:
    """`$MURMUR_HOME`, else `~/.murmur`. Every per-user file lives under it."""
    value = os.environ.get("MURMUR_HOME")
    if value:
        return Path(value).expanduser()
    return Path.home() / ".murmur"


def compiled_cache(home: Path) -> Path:
    """Where compiled components are cached: `$MURMUR_COMPILED_CACHE`, else
    `$MURMUR_HOME/cache/compiled` (several homes — or test runs — may share one cache)."""
    value = os.environ.get("MURMUR_COMPILED_CACHE")
    return Path(value).expanduser() if value else home / "cache" / "compiled"


def bundled(name: str) -> Path:
    """A folder shipped with murmur-tui: `wit` or `themes`.

    An installed wheel carries them inside the package (`tui/_bundled/<name>`); a source
    checkout has them at the top of the repository.
    """
    installed = _PACKAGE_DIR / "_bundled" / name
    if installed.is_dir():
        return installed
    return _PACKAGE_DIR.parent / name


def demo_capsule() -> Path:
    """The bundled demo capsule folder (runs offline with the scripted driver)."""
    return _PACKAGE_DIR / "demo"
