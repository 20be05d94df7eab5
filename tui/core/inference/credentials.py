"""Provider keys: where they come from, and keeping them out of everything murmur-tui writes.

An `api_key` of `${NAME}` is looked up in `credentials:` of `$MURMUR_HOME/config.yaml` — re-read
whenever the file changes, so a rotated key is picked up without a restart — and then in the
environment (`W-SEC-027`: a key from the environment is read once and warned about). A literal
key works, with a warning. `keyless: true` sends no key. Every key that was ever handed out is
registered with the one redaction (`tui.core.text.secrets`), which keeps it — in every
encoding — out of everything murmur-tui writes. A `config.yaml` that other users can read is
warned about (`W-SEC-028`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tui.core.errors import CredentialError, YamlError
from tui.core.manifest.located_yaml import read_private
from tui.core.manifest.model import KEY_REFERENCE
from tui.core.text import secrets

REDACTED = secrets.REDACTED


@dataclass(frozen=True)
class Key:
    value: str | None  # None: keyless
    source: str  # "config.yaml", "environment", "literal", "keyless"


class Credentials:
    def __init__(self, home: Path, warn: Callable[[str, str], None] | None = None) -> None:
        self.config = home / "config.yaml"
        self._warn = warn or (lambda code, text: None)
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self._table: dict[str, str] = {}
        self._warned: set[str] = set()

    def resolve(self, api_key: str | None, keyless: bool, where: str) -> Key:
        """The key for an `api_key` setting, read fresh (config.yaml is re-read if it
        changed)."""
        if keyless:
            return Key(None, "keyless")
        if not api_key:
            raise CredentialError(f"{where}: no api_key (set api_key: ${{NAME}} and put NAME "
                                  f"under credentials: in {self.config}, or keyless: true)")
        match = KEY_REFERENCE.match(api_key)
        if match is None:
            self._warn_once(where, "W-SEC-027", f"{where}: api_key is a literal key in the "
                            "manifest; use ${NAME} with credentials: in config.yaml")
            return self._remember(Key(api_key, "literal"))
        name = match.group(1)
        table = self._credentials()
        if name in table:
            return self._remember(Key(table[name], "config.yaml"))
        if os.environ.get(name):
            self._warn_once(name, "W-SEC-027", f"{where}: the key {name} comes from the "
                            f"environment; credentials: in {self.config} is preferred")
            return self._remember(Key(os.environ[name], "environment"))
        raise CredentialError(f"{where}: no credential {name}: not under credentials: in "
                              f"{self.config}, nor in the environment")

    def redact(self, text: str) -> str:
        return secrets.redact(text)

    def _remember(self, key: Key) -> Key:
        secrets.remember(key.value)
        return key

    def _warn_once(self, what: str, code: str, text: str) -> None:
        if what not in self._warned:
            self._warned.add(what)
            self._warn(code, text)

    def _credentials(self) -> dict[str, str]:
        try:
            info = self.config.stat()
        except OSError:
            return {}
        stamp = (info.st_mtime_ns, info.st_size)
        with self._lock:
            if stamp == self._stamp:
                return self._table
        if info.st_mode & 0o077:
            self._warn_once("config-mode", "W-SEC-028", f"{self.config} can be read by other "
                            f"users (mode {info.st_mode & 0o777:o}); it holds keys: "
                            f"chmod 600 {self.config}")
        try:
            data = read_private(self.config) or {}  # its errors never quote the file
        except FileNotFoundError:
            data = {}
        except OSError as exc:
            raise CredentialError(f"{self.config}: cannot read credentials: "
                                  f"{exc.strerror or exc}") from None
        except YamlError as exc:
            raise CredentialError(str(exc)) from None
        found = data.get("credentials") if isinstance(data, dict) else None
        table = {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}
        with self._lock:
            self._stamp, self._table = stamp, table
        return table
