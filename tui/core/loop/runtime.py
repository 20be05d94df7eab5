"""The tools the runtime provides, each where the manifest or the roster makes it, and what a
task that started calls or delegations waits on (docs/formations.md): `delegate-task` with a
non-empty `capabilities.spawn.allow`, `call-member` / `end-without-answer` for a formation's
member (`tui.core.loop.waiting`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tui.core.formation.awaiting import Arrival, Awaiting
from tui.core.formation.seat import Seat
from tui.core.fs.workdir import SessionPaths
from tui.core.loop.report import Report
from tui.core.loop.waiting import Delegations, Waiting, formation_tools
from tui.core.manifest.model import Capsule
from tui.core.tools.table import ToolTable


def runtime_tools(table: ToolTable, capsule: Capsule, target: SessionPaths, home: Path,
                  report: Report, identity: Mapping[str, str],
                  seat: Seat | None) -> Waiting | None:
    """Add the runtime's tools to `table`; what the turn loop waits with (None: no runtime tool
    starts anything a task would wait on)."""
    awaiting = Awaiting()
    delegations = _delegate_task(table, capsule, target, home, report, awaiting, identity)
    waiting = formation_tools(table, capsule, seat, report, awaiting)
    if waiting is not None:
        waiting.delegations = delegations  # a canceled task stops its children
    return waiting


def _delegate_task(table: ToolTable, capsule: Capsule, target: SessionPaths, home: Path,
                  report: Report, awaiting: Awaiting, identity: Mapping[str, str]
                  ) -> Delegations | None:
    """`delegate-task`, with a non-empty `capabilities.spawn.allow` (docs/formations.md,
    "Delegation"); None without one."""
    if capsule.capabilities.spawn_allow:
        from tui.core.formation.delegate import TOOL_NAME, DelegateTool
        from tui.core.formation.spawn_allow import targets

        def arrive(task_id: str, ident: str, name: str, outcome: str, text: str) -> None:
            awaiting.arrive(task_id, Arrival("delegation", ident, name, outcome, text))

        delegate = DelegateTool(capsule, targets(capsule), target.accessible, home, identity,
                                report.emit, lambda task, ident: awaiting.expect(
                                    task, ident, "delegation"), arrive)
        table.runtime[TOOL_NAME] = delegate
        table.closers.append(delegate.close)
        return delegate
    return None
