"""`murmur-tui doctor` beside a `roster.yaml`: the `Roster` block, as `mur doctor` prints it
(spec murmur-newest §7.2) — the file, one line per member (its capsule, the entry, whether it
serves peers, whether its door authenticates) and who may call whom; or the first admission
check the roster fails, with exit 1. Admission itself is `tui.core.formation.admission`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tui.core.formation.admission import Admitted
from tui.core.formation.roster import ROSTER_FILE, RosterRefusal

GAP = "   "


def roster_beside(target: Path) -> Path | None:
    """The roster `doctor TARGET` is about: TARGET when it is a roster file, the `roster.yaml`
    in TARGET when it is a folder holding one; else None."""
    if target.is_dir():
        found = target / ROSTER_FILE
        return found.absolute() if found.is_file() else None
    return target.absolute() if target.name == ROSTER_FILE else None


def roster_block(path: Path, result: Admitted | RosterRefusal) -> str:
    """The block's text."""
    lines = ["Roster", f"  file: {path}"]
    if isinstance(result, RosterRefusal):
        lines.append(f"  ✗  {result.short}")
        return "\n".join(lines) + "\n"
    lines.extend(f"  {line}" for line in member_lines(result))
    lines.append(f"  reachability: {reachability(result)}")
    return "\n".join(lines) + "\n"


def roster_json(path: Path, result: Admitted | RosterRefusal) -> dict[str, Any]:
    """`--json`'s `roster` object."""
    if isinstance(result, RosterRefusal):
        return {"file": str(path), "admitted": False, "members": [], "edges": [],
                "refusal": {"code": result.code, "message": result.text,
                            "line": result.line, "member": result.member}}
    return {"file": str(path), "admitted": True, "refusal": None,
            "reachability": "all" if result.roster.reach_all else "rules",
            "members": [{"name": m.name, "capsule": m.label, "entry": m.entry,
                         "where": m.where, "serves_peers": m.serves_peers,
                         "authenticated": m.authenticated} for m in result.members],
            "edges": [list(edge) for edge in result.edges]}


def member_lines(admitted: Admitted) -> list[str]:
    rows = [(m.name, m.label, "entry" if m.entry else "",
             "serves peers" if m.serves_peers else "refuses peers",
             "authenticated door" if m.authenticated else "public door")
            for m in admitted.members]
    widths = [max(len(row[column]) for row in rows) for column in range(4)]
    return [GAP.join([*(cell.ljust(width) for cell, width in zip(row[:4], widths, strict=True)),
                      row[4]]) for row in rows]


def reachability(admitted: Admitted) -> str:
    edges = ", ".join(f"{caller} → {callee}" for caller, callee in admitted.edges) or "none"
    return f"(all): {edges}" if admitted.roster.reach_all else edges
