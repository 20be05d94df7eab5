"""`murmur:message/send@0.1.0`, for script capsules: `send(peer-url, message)` hands the
message to `tui.core.a2a.send` (the peer checked against the capsule's
`capabilities.network.allow` first) and returns the peer's immediate `task-result`, or the
reason as the call's `err`. A sent task is reported through the session
(`HostServices.delegated`: a `Delegated` event and Murmur's `a2a_send` trace line). Called
from anything but a script capsule, it traps."""

from __future__ import annotations

from functools import partial
from typing import Any

from wasmtime.component import Record

from tui.core.a2a import send as delegation
from tui.core.errors import DelegationError, TrapGuest
from tui.core.fs.paths import murmur_home
from tui.core.running.tokens import token_at
from tui.core.wasm.calls import current
from tui.core.wasm.values import record

SEND = "murmur:message/send@0.1.0"


def send(peer_url: str, message: Any) -> Record | str:
    context = current()
    if context.kind != "capsule":
        raise TrapGuest(f"{SEND} is available to script capsules, not to a {context.kind} "
                        f"({context.artifact})")
    outgoing = delegation.Outgoing(message_id=getattr(message, "message-id"),
                                   context_id=getattr(message, "context-id"),
                                   text=message.text)
    try:
        result = delegation.send(peer_url, outgoing, context.network,
                                 partial(token_at, murmur_home()))
    except DelegationError as exc:
        return exc.text
    if context.services is not None:
        context.services.delegated(peer_url, outgoing.message_id, result.task_id,
                                   result.context_id, result.state)
    return record(task_id=result.task_id, context_id=result.context_id, state=result.state)
