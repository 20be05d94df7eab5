"""The door's bearer tokens (Murmur's `network.authentication`, agent-card.md "Security").

A capsule declaring `network.authentication: {scheme: bearer}` gets an `operator` token with
every scope, and one token per credential under `credentials` with the scopes it lists. A door
bound to an address other than loopback with no `network.authentication` gets an operator token
anyway: nobody off the host reaches a session without one. Tokens are minted with
`secrets.token_urlsafe` and registered with the one redaction at once, so no log, trace,
event or output ever holds one.

`check` answers in Murmur's order: no `Authorization` header, a header that is not
`Bearer <token>` or names a token this session did not mint (or more than one header), then
the method's scope. A refusal is a plain HTTP status with `{"error", "message"}` and a
`www-authenticate` header, never a JSON-RPC envelope.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui.core.errors import LaunchError
from tui.core.secrets import remember

SCOPES = ("SendMessage", "SendStreamingMessage", "stream/watch", "GetTask", "CancelTask",
          "session/stop", "resources/files")
OLD_SCOPES = {"message/send": "SendMessage", "message/stream": "SendStreamingMessage",
              "tasks/get": "GetTask", "tasks/cancel": "CancelTask"}
OPERATOR = "operator"


@dataclass(frozen=True)
class Credential:
    name: str
    scopes: frozenset[str]
    token: str

    def __repr__(self) -> str:  # never the token
        return f"Credential({self.name!r}, scopes={sorted(self.scopes)})"


@dataclass(frozen=True)
class Refusal:
    status: int
    error: str
    message: str
    authenticate: str | None

    def body(self) -> dict[str, str]:
        return {"error": self.error, "message": self.message}


def declared_credentials(manifest: Path) -> dict[str, frozenset[str]] | None:
    """`network.authentication` of the manifest: None when it declares none, else each
    credential's scopes (LaunchError naming file and key for a bad block)."""
    from tui.core.manifest.located_yaml import read

    try:
        document, _ = read(manifest, quiet=True)
    except Exception:  # the manifest reader has already accepted this file
        return None
    network = document.get("network") if isinstance(document, dict) else None
    auth = network.get("authentication") if isinstance(network, dict) else None
    if auth is None:
        return None
    where = f"{manifest}: network.authentication"
    if not isinstance(auth, dict) or auth.get("scheme") != "bearer":
        raise LaunchError(f"{where}.scheme: must be bearer (the one scheme a door takes)")
    declared = auth.get("credentials") or {}
    if isinstance(declared, list):  # [{name, scopes}] as well as {name: {scopes}}
        declared = {item.get("name"): item for item in declared if isinstance(item, dict)}
    if not isinstance(declared, dict):
        raise LaunchError(f"{where}.credentials: must map each credential's name to its "
                          "scopes")
    found: dict[str, frozenset[str]] = {}
    for name, entry in declared.items():
        scopes = entry.get("scopes") if isinstance(entry, dict) else entry
        key = f"{where}.credentials.{name}"
        if not isinstance(name, str) or not name or name == OPERATOR:
            raise LaunchError(f"{key}: a credential needs a name other than operator")
        if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
            raise LaunchError(f"{key}.scopes: must be a list of method names")
        for scope in scopes:
            if scope in OLD_SCOPES:
                raise LaunchError(f"{key}.scopes: {scope} is an A2A 0.3 name; this door "
                                  f"speaks 1.0 (use {OLD_SCOPES[scope]})")
            if scope not in SCOPES:
                raise LaunchError(f"{key}.scopes: {scope!r} is not a scope (scopes: "
                                  f"{', '.join(SCOPES)})")
        found[name] = frozenset(scopes)
    return found


class Tokens:
    """The door's tokens; an empty one is a public door (it ignores `Authorization`)."""

    def __init__(self, realm: str, credentials: list[Credential]) -> None:
        self.realm = realm
        self.credentials = credentials

    @classmethod
    def mint(cls, realm: str, declared: dict[str, frozenset[str]] | None, loopback: bool
             ) -> Tokens:
        if declared is None and loopback:
            return cls(realm, [])
        minted = [Credential(OPERATOR, frozenset(SCOPES), secrets.token_urlsafe(32))]
        minted += [Credential(name, scopes, secrets.token_urlsafe(32))
                   for name, scopes in (declared or {}).items()]
        for credential in minted:
            remember(credential.token)
        return cls(realm, minted)

    @property
    def active(self) -> bool:
        return bool(self.credentials)

    @property
    def operator(self) -> str | None:
        return self.credentials[0].token if self.credentials else None

    def authenticate(self, headers: list[tuple[bytes, bytes]]) -> Credential | Refusal | None:
        """The caller's credential (None on a public door), or why it is refused (401)."""
        if not self.active:
            return None
        values = [value for name, value in headers if name.lower() == b"authorization"]
        if not values:
            return Refusal(401, "unauthenticated", "this door requires a bearer token",
                           f'Bearer realm="{self.realm}"')
        invalid = Refusal(401, "invalid_token", "the bearer token is not valid for this "
                          "session", f'Bearer realm="{self.realm}", error="invalid_token"')
        if len(values) > 1:
            return invalid
        scheme, _, token = values[0].decode("latin-1").strip().partition(" ")
        if scheme.lower() != "bearer" or not token:
            return invalid
        for credential in self.credentials:
            if hmac.compare_digest(credential.token.encode(), token.strip().encode()):
                return credential
        return invalid

    def authorize(self, credential: Credential | None, method: str) -> Refusal | None:
        """Whether `credential` reaches `method` (403 with the scope it lacks)."""
        if credential is None or method == "GetExtendedAgentCard" or \
                method in credential.scopes or method not in SCOPES:
            return None
        return Refusal(403, "insufficient_scope",
                       f"credential '{credential.name}' does not reach {method}",
                       f'Bearer realm="{self.realm}", error="insufficient_scope", '
                       f'scope="{method}"')


def refusal_headers(refusal: Refusal) -> list[tuple[str, str]]:
    headers = [("content-type", "application/json")]
    if refusal.authenticate is not None:
        headers.append(("www-authenticate", refusal.authenticate))
    return headers


def describe(tokens: Tokens) -> dict[str, Any]:
    """What the door's tokens are, without any token (for the readiness line)."""
    return {"authenticated": tokens.active,
            "credentials": [c.name for c in tokens.credentials]}
