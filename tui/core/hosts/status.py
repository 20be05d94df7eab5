"""What the fleet knows of one host: whether its sessions can be found, and why not.

The fleet's own machine is the host named "" (shown as "this machine"); the others come from
`$MURMUR_HOME/tui/fleet.yaml`'s `hosts:` and from `fleet --host NAME=URL`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal

LOCAL = ""  # the host name of the fleet's own machine
LOCAL_LABEL = "this machine"

HostState = Literal["connecting", "ok", "unreachable"]


@dataclass
class HostStatus:
    """One host as the fleet sees it. `where` says where it is looked for (a door's
    `host:port`, or the discovery command's program) and never holds a token; `retry_at` is the
    monotonic time of the next try while unreachable."""

    name: str
    where: str = ""
    state: HostState = "connecting"
    why: str = ""
    retry_at: float | None = None
    failures: int = 0  # tries in a row that failed (the back-off grows with it)
    since: float = field(default_factory=time.monotonic)  # in this state since

    @property
    def label(self) -> str:
        return self.name or LOCAL_LABEL
