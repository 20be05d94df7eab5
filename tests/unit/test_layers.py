"""The rules between layers: tui.core never imports Textual or Rich (ARCHITECTURE §3), the
import graph has no cycle, and the loop's pieces import only downward and stand on their own."""

from __future__ import annotations

import ast
import builtins
import pkgutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import tui
import tui.core
import tui.core.errors


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
LOOP_LAYERS = ("state", "inbox", "launch", "journal_seal", "journal",
               "journal_read", "continuation", "report", "context",
               "hook_points", "host", "compaction", "dispatch", "rebuild", "resume", "waiting",
               "runtime", "turn", "ending", "task", "lifecycle", "setup", "session", "build")


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
    # only the one build makes a Session (the app and the commands hold one, typed)
    assert sorted(m for m in graph if "tui.core.loop.session" in graph[m]) == [
        "tui.app.app", "tui.app.sources", "tui.core.loop.build"]


def test_one_function_builds_a_session() -> None:
    """Screen, headless, follow-up and resume all go through `loop/build.py`'s one build."""
    root = Path(tui.__file__).parent
    builders = sorted(
        str(path.relative_to(root.parent)) for path in root.rglob("*.py")
        if any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
               and node.func.id == "Session"
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))))
    assert builders == ["tui/core/loop/build.py"]


def test_the_loop_pieces_load_and_work_without_a_session() -> None:
    pieces = [f"tui.core.loop.{name}" for name in LOOP_LAYERS
              if name not in ("setup", "session", "build")]
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


# -- packages ---------------------------------------------------------------------------------
def package_of(module: str, packages: set[str]) -> str:
    """The innermost package holding `module` (a package's own `__init__` is the package)."""
    if module in packages:
        return module
    return module.rpartition(".")[0]


def two_way_packages(graph: dict[str, set[str]], packages: set[str]) -> list[tuple[str, str]]:
    """Pairs of packages each importing the other. A package inside another counts as its own
    (`tui.core.loop` is not `tui.core`); a package and the one holding it may lean on each
    other (the loose modules of `tui.core` use `fs`, and `fs` raises `tui.core.errors`)."""
    edges = {(package_of(a, packages), package_of(b, packages))
             for a, targets in graph.items() for b in targets}
    return sorted((a, b) for a, b in edges if a < b and (b, a) in edges
                  and not b.startswith(a + ".") and not a.startswith(b + "."))


def packages_in(root: Path) -> set[str]:
    return {".".join(path.parent.relative_to(root.parent).parts)
            for path in root.rglob("__init__.py")}


def test_the_package_check_finds_two_packages_importing_each_other(tmp_path: Path) -> None:
    for name in ("pkg", "pkg/one", "pkg/two"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("")
    (tmp_path / "pkg/one/a.py").write_text("from pkg.two import b\n")
    (tmp_path / "pkg/two/b.py").write_text("x = 1\n")
    (tmp_path / "pkg/two/c.py").write_text("def later():\n    from pkg.one.a import y\n")
    (tmp_path / "pkg/top.py").write_text("from pkg.one import a\n")  # a parent and its child
    (tmp_path / "pkg/one/d.py").write_text("from pkg import top\n")
    root = tmp_path / "pkg"
    assert two_way_packages(import_graph(root), packages_in(root)) == [("pkg.one", "pkg.two")]


def test_no_two_packages_import_each_other() -> None:
    root = Path(tui.__file__).parent
    assert two_way_packages(import_graph(root), packages_in(root)) == []


def test_the_core_keeps_at_most_eight_loose_modules() -> None:
    loose = sorted(path.stem for path in Path(tui.core.__file__).parent.glob("*.py")
                   if path.name != "__init__.py")
    assert len(loose) <= 8, f"modules directly in tui/core: {loose}"

# -- the house: one error base, one name a class, short modules ---------------------------------
TUI = Path(tui.__file__).parent
BASE = "MurmurTuiError"
MAX_MODULE_LINES = 400


def module_trees(root: Path) -> dict[Path, ast.Module]:
    return {path: ast.parse(path.read_text(encoding="utf-8"), str(path))
            for path in sorted(root.rglob("*.py"))}


def _base_name(node: ast.expr) -> str:
    """`Exception` for `Exception`, `YAMLError` for `yaml.YAMLError`."""
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def exceptions_outside(root: Path, base: str) -> list[str]:
    """Every exception class defined under `root` (at any depth: a class in a function counts)
    that does not derive from `base`, as `path:Name`. An exception class is one whose bases
    lead, through classes defined here, to a built-in exception or to a library's (a base
    named `…Error` or `…Exception` from outside)."""
    bases: dict[str, list[str]] = {}
    where: dict[str, list[str]] = {}
    for path, tree in module_trees(root).items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases.setdefault(node.name, []).extend(_base_name(b) for b in node.bases)
                where.setdefault(node.name, []).append(f"{path.relative_to(root.parent)}")

    def builtin_exception(name: str) -> bool:
        value = getattr(builtins, name, None)
        return isinstance(value, type) and issubclass(value, BaseException)

    def reaches(name: str, goal: Callable[[str], bool], seen: frozenset[str]) -> bool:
        return any(goal(b) or (b in bases and b not in seen and reaches(b, goal, seen | {b}))
                   for b in bases.get(name, []))

    def foreign_exception(name: str) -> bool:
        return builtin_exception(name) or (name not in bases and
                                           name.endswith(("Error", "Exception")))

    return sorted(f"{place}:{name}" for name in bases if name != base
                  and reaches(name, foreign_exception, frozenset({name}))
                  and not reaches(name, lambda b: b == base, frozenset({name}))
                  for place in where[name])


def twice_defined(root: Path) -> dict[str, list[str]]:
    """Class names defined at the top of more than one module under `root`."""
    where: dict[str, list[str]] = {}
    for path, tree in module_trees(root).items():
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                where.setdefault(node.name, []).append(str(path.relative_to(root.parent)))
    return {name: places for name, places in sorted(where.items()) if len(places) > 1}


def test_the_house_checks_find_what_they_look_for(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "errors.py").write_text(
        "class MurmurTuiError(Exception): ...\nclass Known(MurmurTuiError): ...\n"
        "class Both(MurmurTuiError, OSError): ...\n")
    (package / "a.py").write_text(
        "import yaml\nclass Stray(ValueError): ...\nclass Deeper(Stray): ...\n"
        "class Library(yaml.YAMLError): ...\nclass Plain: ...\nclass Known: ...\n"
        "def f():\n    class Hidden(Exception): ...\n")
    assert exceptions_outside(package, "MurmurTuiError") == [
        "pkg/a.py:Deeper", "pkg/a.py:Hidden", "pkg/a.py:Library", "pkg/a.py:Stray"]
    assert twice_defined(package) == {"Known": ["pkg/a.py", "pkg/errors.py"]}


def test_every_exception_under_tui_derives_from_the_one_base_and_lives_in_errors() -> None:
    assert exceptions_outside(TUI, BASE) == []
    errors = TUI / "core" / "errors"
    ours = {name for name, value in vars(tui.core.errors).items()
            if isinstance(value, type) and issubclass(value, BaseException)}
    elsewhere = [f"{path.relative_to(TUI.parent)}:{node.name}"
                 for path, tree in module_trees(TUI).items() if errors not in path.parents
                 for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
                 and any(_base_name(b) in ours for b in node.bases)]
    assert elsewhere == []


def test_no_class_name_is_defined_twice_under_tui() -> None:
    assert twice_defined(TUI) == {}


def test_no_module_under_tui_is_over_400_lines() -> None:
    long = {str(path.relative_to(TUI.parent)): lines for path in sorted(TUI.rglob("*.py"))
            if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert long == {}
