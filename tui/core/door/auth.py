"""The door's bearer tokens (Murmur's `network.authentication`, agent-card.md "Security").

A capsule declaring `network.authentication: {scheme: bearer}` gets an `operator` token with
every scope, and one token per credential under `credentials` with the scopes it lists. A door
bound to an address other than loopback with no `network.authentication` gets an operator token
anyway: nobody off the host reaches a session without one. Tokens are minted with
`secrets.token_urlsafe` and registered with the one redaction at once, so no log, trace,
event or output ever holds one. The manifest reader checks the block
(tui/core/manifest/network.py); a bad one refuses the manifest before any door starts.

`authenticate` then `authorize` answer in Murmur's order: no `Authorization` header, a header
that is not `Bearer <token>` or names a token this session did not mint (or more than one
header), then the method's scope. A formation member's door (its `Seat`) also takes the `mft1.`
tokens the launcher minted for its callers, as the credential `member:<caller>` (members.py).
A refusal is a plain HTTP status with `{"error", "message"}` and a
`www-authenticate` header, never a JSON-RPC envelope.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui.core.door import members
from tui.core.manifest.model import A2A_03_SCOPES, DOOR_SCOPES, OPERATOR, Capsule
from tui.core.text.secrets import remember

if TYPE_CHECKING:
    from tui.core.formation.seat import Seat

SCOPES: tuple[str, ...] = DOOR_SCOPES
OLD_SCOPES = A2A_03_SCOPES


@dataclass(frozen=True)
class Credential:
    name: str
    scopes: frozenset[str]
    token: str
    member: str | None = None  # `member:<caller>`: a formation token's caller (members.py)

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


def declared_credentials(source: Capsule | Path) -> dict[str, frozenset[str]] | None:
    """The capsule's `network.authentication`, read from its manifest model: None when it
    declares none, else each credential's scopes. The manifest reader has checked the block
    (a bad one refuses the manifest, naming file, line and key); given a manifest's path, the
    manifest is read again (a ManifestError if it no longer reads)."""
    if isinstance(source, Path):
        from tui.core.manifest.reader import load_capsule

        source = load_capsule(source)
    authentication = source.network.authentication
    if authentication is None:
        return None
    return {item.name: frozenset(item.scopes) for item in authentication.credentials}


class Tokens:
    """The door's tokens; an empty one is a public door (it ignores `Authorization`)."""

    def __init__(self, realm: str, credentials: list[Credential], seat: Seat | None = None
                 ) -> None:
        self.realm = realm
        self.credentials = credentials
        self.seat = seat  # a formation member's door also takes its callers' mft1. tokens

    @classmethod
    def mint(cls, realm: str, declared: dict[str, frozenset[str]] | None, loopback: bool,
             seat: Seat | None = None) -> Tokens:
        if declared is None and loopback:
            return cls(realm, [], seat)
        minted = [Credential(OPERATOR, frozenset(SCOPES), secrets.token_urlsafe(32))]
        minted += [Credential(name, scopes, secrets.token_urlsafe(32))
                   for name, scopes in (declared or {}).items()]
        for credential in minted:
            remember(credential.token)
        return cls(realm, minted, seat)

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
        token = token.strip()
        for credential in self.credentials:
            if hmac.compare_digest(credential.token.encode(), token.encode()):
                return credential
        if self.seat is not None and members.is_member_token(token):
            return self._member(self.seat, token, invalid)
        return invalid

    def _member(self, seat: Seat, token: str, invalid: Refusal) -> Credential | Refusal:
        """A caller member's formation token: the credential `member:<caller>`, or 403
        `not_permitted` when it was minted for another door, else `invalid`."""
        found = members.caller_of(seat, token)
        if found is None:
            return invalid
        caller, here = found
        if not here:
            return Refusal(403, "not_permitted", members.not_permitted(caller),
                           f'Bearer realm="{self.realm}", error="insufficient_scope"')
        remember(token)  # a task that echoes it is told back `[redacted]`
        return Credential(f"member:{caller}", members.MEMBER_SCOPES, token, member=caller)

    def authorize(self, credential: Credential | None, method: str) -> Refusal | None:
        """Whether `credential` reaches `method` (403 with the scope it lacks)."""
        if credential is not None and credential.member is not None:
            if method in credential.scopes:
                return None
            return Refusal(403, "not_permitted", members.not_permitted(credential.member, method),
                           f'Bearer realm="{self.realm}", error="insufficient_scope", '
                           f'scope="{method}"')
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
