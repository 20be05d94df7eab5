"""Peer consent at the door (Murmur's request order, step 3): a request that says it is a peer
capsule's task (`x-murmur-task-origin: peer`, as Murmur's runtime marks every call one capsule
makes to another) reaches a capsule only when its manifest sets `exports.peer_tasks.accept:
true`. Any other is refused `403 peer_not_accepted` with one body, byte-identical every time,
after the door token and before the path, the body or the method are looked at. A task the
capsule takes from a peer runs with origin `peer` (trace `task_start.origin`). A formation
member's call (its `mft1.` token, members.py) is a peer's whatever its headers say."""

from __future__ import annotations

from tui.core.door.auth import Refusal
from tui.core.events.kinds import TaskOrigin

HEADER = b"x-murmur-task-origin"
# the one refusal: no www-authenticate (it is not about the token), the same bytes each time
PEER_NOT_ACCEPTED = Refusal(403, "peer_not_accepted",
                            "this capsule does not accept tasks from peers", None)


def origin(headers: list[tuple[bytes, bytes]]) -> TaskOrigin:
    """`peer` when any `x-murmur-task-origin` line says so (name in any case, value trimmed),
    else `user`: the door's other origins (completions) are not peers."""
    for name, value in headers:
        if name.lower() == HEADER and value.strip().lower() == b"peer":
            return "peer"
    return "user"


def refusal(accepts: bool, headers: list[tuple[bytes, bytes]], member: bool = False
            ) -> Refusal | None:
    """The 403 for a peer's request (a member's call is one) to a capsule that does not take
    peer tasks, else None."""
    peer = member or origin(headers) == "peer"
    return PEER_NOT_ACCEPTED if not accepts and peer else None
