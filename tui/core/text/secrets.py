"""Keeping keys out of everything murmur-tui writes: one redaction, every encoding.

Every key murmur-tui resolves (a provider key from `config.yaml`, the environment or a literal
in a manifest) and every per-session secret it mints is registered here, once per process.
`redact` replaces, in any text, each registered secret in the forms it can take on its way
out — raw, JSON-escaped, URL-encoded (upper- and lower-case hex), hex, and base64 (standard
and URL-safe, at each of the three byte alignments it can have inside a longer base64 text) —
and the value of any `Authorization` / `Proxy-Authorization` / `x-api-key` / `api-key` header
written as `name: value` or `name=value`. Whatever matches becomes `[redacted]`.

Text that arrives in pieces (a streamed answer, a component's log output, a relayed HTTP
body) goes through a `StreamRedactor`, which holds back the tail of a piece while it could
still be the start of a secret, so a key split across two pieces is still caught.

`credential_shaped` is the environment rule: names a component or a shell command never
receives, even when a manifest allows them by name (docs/security.md).
"""

from __future__ import annotations

import base64
import binascii
import fnmatch
import json
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar
from urllib.parse import quote, quote_plus

from tui.core.errors.base import scrub_with

REDACTED = "[redacted]"
T = TypeVar("T", str, bytes)
MIN_SECRET = 4  # shorter values are not secrets worth hiding (and would shred every text)
MIN_ENCODED = 8  # an encoded form shorter than this is not looked for
MAX_ENCODED_SECRET = 4096  # a longer secret is looked for as itself only (raw, JSON, URL, hex)

# Murmur's CREDENTIAL_ENV_PATTERNS (crates/capsule-runtime/src/shell.rs), plus `*_TOKEN`,
# `*_SECRET`, `*_PASSWORD` and the other common spellings of a credential's name.
CREDENTIAL_ENV_PATTERNS = (
    "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GOOGLE_API_KEY", "HUGGING_FACE_HUB_TOKEN",
    "NEXUS_API_KEY", "AWS_*", "GITHUB_TOKEN", "GH_TOKEN", "DOCKER_*", "KUBECONFIG",
    "NPM_TOKEN", "PYPI_TOKEN", "CARGO_REGISTRY_TOKEN", "*_API_KEY",
    "*_APIKEY", "*_TOKEN", "*_SECRET", "*_SECRET_KEY", "*_PASSWORD", "*_PASSWD",
    "*_CREDENTIALS", "*_PRIVATE_KEY", "*_ACCESS_KEY",
)

_HEADER = re.compile(
    r"(?i)\b(authorization|proxy-authorization|x-api-key|api-key)"
    r"(\"?'?\s*[:=]\s*\"?'?)"
    r"((?:bearer|basic|token)\s+)?"
    r"([^\s\"',;&}\]]+)")
_HEADER_BYTES = re.compile(_HEADER.pattern.encode())
_HEADER_HINT = re.compile(r"(?i)authorization|api-key")


def credential_shaped(name: str, extra: Iterable[str] = ()) -> bool:
    """Whether an environment variable's name looks like it holds a credential (case does
    not matter; `extra` adds patterns, e.g. `capabilities.shell.strip_env`)."""
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, pattern.upper())
               for pattern in (*CREDENTIAL_ENV_PATTERNS, *extra))


def encoded_forms(secret: str) -> set[str]:
    """The literal forms of `secret` that `redact` looks for (the secret itself included);
    its base64 forms are `base64_cores`."""
    forms = {secret}
    data = secret.encode("utf-8")
    forms.add(json.dumps(secret)[1:-1])
    forms.add(json.dumps(secret, ensure_ascii=False)[1:-1])
    for encoded in (quote(secret, safe=""), quote_plus(secret, safe="")):
        forms.add(encoded)
        forms.add(re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), encoded))
    forms.add(binascii.hexlify(data).decode())
    forms.add(binascii.hexlify(data).decode().upper())
    return {form for form in forms if form == secret or len(form) >= MIN_ENCODED}


def base64_cores(secret: str) -> set[tuple[str, bool]]:
    """(core, mixed_start) for each alignment of `secret` inside a base64 text: the base64
    characters that depend on the secret's bytes alone, standard and URL-safe. The groups on
    either side of a core mix the secret's first or last bytes with their neighbours'; the
    pattern swallows them too (`mixed_start`: a group before the core holds secret bits)."""
    data = secret.encode("utf-8")
    cores: set[tuple[str, bool]] = set()
    for offset in range(3):
        padded = b"\0" * offset + data
        whole = base64.b64encode(padded).decode()
        core = whole[(4 if offset else 0):4 * (len(padded) // 3)]
        if len(core) >= MIN_ENCODED:
            cores.add((core, offset > 0))
            cores.add((core.replace("+", "-").replace("/", "_"), offset > 0))
    return cores


_B64 = "[A-Za-z0-9+/_-]"


@dataclass(frozen=True)
class _Table:
    """What `Secrets` looks for, built once per added secret and swapped in whole."""

    pattern: re.Pattern[str]
    pattern_bytes: re.Pattern[bytes]
    needles: tuple[str, ...]  # every match holds one of these: no needle, no regex pass
    needles_bytes: tuple[bytes, ...]
    longest: int  # the longest needle, in bytes

    @classmethod
    def build(cls, known: Iterable[str]) -> _Table:
        forms: set[str] = set()
        cores: set[tuple[str, bool]] = set()
        for secret in known:
            forms |= encoded_forms(secret)
            if len(secret) <= MAX_ENCODED_SECRET:
                cores |= base64_cores(secret)
        literal = sorted(forms, key=len, reverse=True)
        patterns = [(f"(?:{_B64}{{4}})?" if mixed else "") + re.escape(core)
                    + f"{_B64}{{0,4}}={{0,2}}"
                    for core, mixed in sorted(cores, key=lambda item: -len(item[0]))]
        patterns += [re.escape(form) for form in literal]
        needles = tuple(dict.fromkeys(literal + sorted({core for core, _ in cores})))
        encoded = tuple(needle.encode("utf-8") for needle in needles)
        return cls(re.compile("|".join(patterns)), re.compile("|".join(patterns).encode()),
                   needles, encoded, max(len(needle) for needle in encoded))


class Secrets:
    """The registry of secrets one process keeps out of what it writes. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: set[str] = set()
        self._built: _Table | None = None
        self._stale = False  # a secret came since the table was built

    def add(self, secret: str | None) -> None:
        """Remember a secret (a no-op for None, short values, or one already known). The
        table is built again when it is next used: many secrets at once cost one build."""
        if not secret or len(secret) < MIN_SECRET or secret in self._known:
            return
        with self._lock:
            self._known.add(secret)
            self._stale = True

    @property
    def _table(self) -> _Table | None:
        if self._stale:
            with self._lock:
                if self._stale:
                    self._built = _Table.build(self._known)
                    self._stale = False
        return self._built

    @property
    def active(self) -> bool:
        return bool(self._known)

    def redact(self, text: str, headers: bool = True) -> str:
        """`text` with every known secret (in every form) and, unless `headers` is False,
        every auth header value replaced by `[redacted]`."""
        table = self._table
        if table is not None and any(needle in text for needle in table.needles):
            text = table.pattern.sub(REDACTED, text)
        return redact_headers(text) if headers else text

    def redact_bytes(self, data: bytes, headers: bool = True) -> bytes:
        table = self._table
        if table is not None and any(needle in data for needle in table.needles_bytes):
            data = table.pattern_bytes.sub(REDACTED.encode(), data)
        return redact_headers_bytes(data) if headers else data

    def redact_value(self, value: Any) -> Any:
        """A JSON-like value with every string in it redacted (the same object when nothing
        changed)."""
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            changed = False
            out: dict[Any, Any] = {}
            for key, item in value.items():
                new = self.redact_value(item)
                changed = changed or new is not item
                out[key] = new
            return out if changed else value
        if isinstance(value, (list, tuple)):
            items = [self.redact_value(item) for item in value]
            if all(new is old for new, old in zip(items, value, strict=True)):
                return value
            return type(value)(items) if isinstance(value, tuple) else items
        return value

    def held_back(self, text: str) -> int:
        """How many characters at the end of `text` could begin a secret (0: none)."""
        table = self._table
        return 0 if table is None else _held_back(text, table.needles, table.longest)

    def held_back_bytes(self, data: bytes) -> int:
        table = self._table
        return 0 if table is None else _held_back(data, table.needles_bytes, table.longest)


def _held_back(text: Any, needles: tuple[Any, ...], longest: int) -> int:
    """The length of the longest tail of `text` that is a proper start of a needle."""
    tail = text[-(longest - 1):] if longest > 1 else text[:0]
    best = 0
    for needle in needles:
        first = needle[:1]
        at = tail.find(first)
        while at != -1 and len(tail) - at > best:
            size = len(tail) - at
            if size < len(needle) and needle.startswith(tail[at:]):
                best = size
                break
            at = tail.find(first, at + 1)
    return best


def redact_headers_bytes(data: bytes) -> bytes:
    """`redact_headers` for bytes."""
    lowered = data.lower()
    if b"authorization" not in lowered and b"api-key" not in lowered:
        return data
    return _HEADER_BYTES.sub(lambda m: m.group(1) + m.group(2) + (m.group(3) or b"")
                             + REDACTED.encode(), data)


def redact_headers(text: str) -> str:
    """`text` with the value of every auth header in it replaced by `[redacted]`."""
    if _HEADER_HINT.search(text) is None:
        return text
    return _HEADER.sub(_header_replacement, text)


def _header_replacement(match: re.Match[str]) -> str:
    return match.group(1) + match.group(2) + (match.group(3) or "") + REDACTED


SECRETS = Secrets()


def remember(secret: str | None) -> None:
    SECRETS.add(secret)


def redact(text: str, headers: bool = True) -> str:
    return SECRETS.redact(text, headers)


def redact_bytes(data: bytes, headers: bool = True) -> bytes:
    return SECRETS.redact_bytes(data, headers)


def redact_value(value: Any) -> Any:
    return SECRETS.redact_value(value)


class _Pieces(Generic[T]):
    """Redacts what arrives in pieces: `feed` returns what can be passed on now, `flush` the
    rest once the stream ends. The tail of a piece that could begin a secret waits for the
    next piece."""

    def __init__(self, empty: T, secrets: Secrets) -> None:
        self._secrets = secrets
        self._pending: T = empty
        self._empty: T = empty

    def _redact(self, piece: T, headers: bool) -> T:
        raise NotImplementedError

    def _headers(self, piece: T) -> T:
        raise NotImplementedError

    def _held_back(self, piece: T) -> int:
        raise NotImplementedError

    def feed(self, piece: T) -> T:
        if not self._secrets.active and not self._pending:
            return self._redact(piece, True)
        whole = self._redact(self._pending + piece, False)
        hold = self._held_back(whole)
        self._pending = whole[len(whole) - hold:] if hold else self._empty
        return self._headers(whole[:len(whole) - hold] if hold else whole)

    def flush(self) -> T:
        rest, self._pending = self._pending, self._empty
        return self._redact(rest, True) if rest else self._empty


class StreamRedactor(_Pieces[str]):
    """Text that arrives in pieces (a streamed answer, a tool's chunks)."""

    def __init__(self, secrets: Secrets = SECRETS) -> None:
        super().__init__("", secrets)

    def _redact(self, piece: str, headers: bool) -> str:
        return self._secrets.redact(piece, headers)

    def _headers(self, piece: str) -> str:
        return redact_headers(piece)

    def _held_back(self, piece: str) -> int:
        return self._secrets.held_back(piece)


class ByteStreamRedactor(_Pieces[bytes]):
    """Bytes that arrive in pieces (a relayed HTTP body, a log written in chunks)."""

    def __init__(self, secrets: Secrets = SECRETS) -> None:
        super().__init__(b"", secrets)

    def _redact(self, piece: bytes, headers: bool) -> bytes:
        return self._secrets.redact_bytes(piece, headers)

    def _headers(self, piece: bytes) -> bytes:
        return redact_headers_bytes(piece)

    def _held_back(self, piece: bytes) -> int:
        return self._secrets.held_back_bytes(piece)


scrub_with(redact)  # an error quoting a door's answer is redacted as it is made
