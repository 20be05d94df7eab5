"""Formation tokens at a member's door (spec murmur-newest §5.2, §7.5).

A session served as a formation member (its `Seat`) holds the formation's verifying key. A
bearer token `mft1.…` the launcher minted for an edge `caller → this member` is then the
credential `member:<caller>`, reaching only `SendMessage` (a peer task, traced with
`caller_member`), and `GetTask` / `CancelTask` on the tasks that member sent; any other method is
`403 not_permitted`. A well-signed token for another member's door (or another formation) is `403
not_permitted` before anything else is looked at; a malformed or forged one is `401
invalid_token`, the answer to any bearer the door does not know. A door without a seat never
reads `mft1.` tokens: they are bearers it does not know.

Nothing here says a byte of the token: the refusals name the caller the token claims, once its
signature holds, and no more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui.core.formation.seat import Seat

PREFIX = "mft1."
# FORMATION_CALL_SCOPES: what a caller member's token reaches (streaming never)
MEMBER_SCOPES = frozenset({"SendMessage", "GetTask", "CancelTask"})


def is_member_token(token: str) -> bool:
    return token.startswith(PREFIX)


def caller_of(seat: Seat, token: str) -> tuple[str, bool] | None:
    """The caller a formation token names, and whether it was minted for this member's door
    (this formation, `to` this member); None for a token that is malformed or not signed by
    the formation's key."""
    from tui.core.errors import TokenRefused
    from tui.core.formation.tokens import verify

    try:
        claims = verify(token, seat.verify_key)
    except TokenRefused:
        return None
    return claims.caller, claims.formation == seat.formation_id and claims.callee == seat.member


def not_permitted(caller: str, method: str | None = None) -> str:
    """The message of a 403 `not_permitted`: a token for another door, or a method beyond a
    member's scopes."""
    if method is None:
        return f"member '{caller}' may not call this capsule"
    return f"member '{caller}' may not call {method} on this capsule"
