"""The top-level `exports:` block -> `Exports`: what a capsule offers other capsules.

    exports:
      peer_tasks:
        accept: true     # tasks from peer capsules (formation members) are taken

murmur-tui reads `peer_tasks.accept` (roster admission asks it of every member another one
calls, spec murmur-newest §7.1); `files` and `peer_files` are Murmur's and accepted silently.
"""

from __future__ import annotations

from tui.core.manifest.model import Exports
from tui.core.manifest.yaml_section import Section


def read_exports(section: Section | None) -> Exports:
    if section is None:
        return Exports()
    accept = Exports.peer_tasks_accept
    peer_tasks = section.section("peer_tasks")
    if peer_tasks is not None:
        accept = peer_tasks.boolean("accept", accept)
        peer_tasks.finish()
    section.mark_known("files", "peer_files")
    section.finish()
    return Exports(peer_tasks_accept=accept)
