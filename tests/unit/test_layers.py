"""The rules between layers: tui.core never imports Textual or Rich (ARCHITECTURE §3), the
import graph has no cycle, and the loop's pieces import only downward and stand on their own."""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import tui
import tui.core


def core_modules() -> list[str]:
    return sorted(
        info.name
        for info in pkgutil.walk_packages(tui.core.__path__, prefix="tui.core.")
    )


def test_core_has_modules_to_check() -> None:
    names = core_modules()
    assert "tui.core.loop.session" in names
    assert "tui.core.manifest" in names


def test_core_imports_neither_textual_nor_rich() -> None:
    modules = core_modules()
    script = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "", f"tui.core pulled in: {result.stdout.strip()}"


def test_headless_launch_path_imports_neither_textual_nor_rich() -> None:
    script = (
        "import sys\n"
        "import tui.commands.main\n"
        "from tui.core import headless\nfrom tui.core.loop import session\n"
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('textual', 'rich'))))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == ""


# -- the import graph ---------------------------------------------------------------------------
def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports, read from the source: imports inside
    functions and under TYPE_CHECKING count too (a cycle hidden in a function is a cycle)."""
    modules: dict[str, Path] = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                anchor = package
                for _ in range(max(node.level - 1, 0)):
                    anchor = anchor.rpartition(".")[0]
                head = (f"{anchor}.{node.module}" if node.module else anchor) if node.level \
                    else node.module or ""
                targets = [head] + [f"{head}.{alias.name}" for alias in node.names]
            for target in targets:
                found = resolve(target)
                if found and found != name and not name.startswith(found + "."):
                    graph[name].add(found)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_import(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg import b\n")
    (package / "b.py").write_text("def later():\n    from pkg.c import x\n")
    (package / "c.py").write_text("from pkg.a import y\n")
    (package / "d.py").write_text("from pkg import a\n")
    assert cycles(import_graph(package)) == [["pkg.a", "pkg.b", "pkg.c"]]


def test_the_import_graph_of_tui_has_no_cycle() -> None:
    assert cycles(import_graph(Path(tui.__file__).parent)) == []


# The loop's layers, lowest first: a module imports only loop modules before it.
LOOP_LAYERS = ("state", "inbox", "launch", "journal_seal", "journal", "journal_read",
               "continuation", "report", "context",
               "hook_points", "host", "compaction", "dispatch", "rebuild", "turn", "ending", "task",
               "lifecycle", "setup", "session")


def test_the_loop_imports_only_downward() -> None:
    graph = import_graph(Path(tui.__file__).parent)
    loop = {f"tui.core.loop.{name}": rank for rank, name in enumerate(LOOP_LAYERS)}
    assert set(loop) == {name for name in graph if name.startswith("tui.core.loop.")}
    upward = [(module, target) for module, rank in loop.items() for target in graph[module]
              if target in loop and loop[target] >= rank]
    assert upward == []
    outside = [module for module in graph if module.startswith("tui.core.")
               and not module.startswith("tui.core.loop") and
               any(target.startswith("tui.core.loop") and target != "tui.core.loop.state"
                   for target in graph[module])]
    assert outside == []  # the rest of the core sits below the loop (its leaf, state, aside)
    # a leaf indeed: the loop's state stands on the events' closed sets alone
    assert graph["tui.core.loop.state"] <= {"tui.core.frozen", "tui.core.events.kinds"}
    assert sorted(m for m in graph if "tui.core.loop.session" in graph[m]) == [
        "tui.app.app", "tui.app.sources", "tui.commands.main"]  # only commands build a Session


def test_the_loop_pieces_load_and_work_without_a_session() -> None:
    pieces = [f"tui.core.loop.{name}" for name in LOOP_LAYERS if name not in ("setup",
                                                                              "session")]
    script = (
        "import importlib, sys\n"
        f"for name in {pieces!r}:\n"
        "    importlib.import_module(name)\n"
        "from tui.core.loop.state import Usage\n"
        "assert (Usage(1) + Usage(2)).turns == 3\n"
        "print(','.join(m for m in ('tui.core.loop.session', 'tui.core.loop.setup', 'wasmtime')"
        " if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == ""
