"""The bounds of `delegate-task` (docs/formations.md, "Delegation"): the spawn envelope (a child
asking for more than its parent is refused before it starts), canceling the task that delegated
(its children stopped), and `stop` / `cancel` listing a session's live delegations. Real child
processes, scripted drivers, real files."""

from __future__ import annotations

from pathlib import Path

from tests.capsules import write_capsule
from tests.e2e.test_delegation import (
    Running,
    call_of,
    delegate,
    helper_capsule,
    parent_capsule,
    trace,
)
from tests.responses import text_response
from tests.rosters import install_capsule
from tui.core.events import vocabulary as ev


# -- the spawn envelope ----------------------------------------------------------------------------
def _refused(running: Running) -> tuple[str, str | None]:
    """The call's result and the delegation's reason, once it was refused."""
    ended = running.ended()
    result = running.finish()
    assert ended.outcome == "refused" and ended.delegation_id is None
    assert not running.sink.of(ev.DelegationStarted)
    assert not (result.paths.accessible / ".murmur" / "children").exists()  # nothing started
    line = next(x for x in trace(result.paths.trace) if x["event_type"] == "delegation")
    assert (line["outcome"], line["reason"]) == ("refused", ended.reason)
    finished = call_of(running.sink)
    assert finished.status == "error"
    return finished.output, ended.reason


def test_a_child_that_may_run_more_binaries_is_refused_naming_the_key(
        tmp_path: Path, murmur_home: Path) -> None:
    helper_capsule(tmp_path / "parent" / "helper", shell=("ls", "curl"))
    running = Running(write_capsule(
        tmp_path / "parent", [delegate(), text_response("refused")], name="parent",
        version="0.1.0", shell=("ls",), capabilities="  spawn:\n    allow: [./helper]",
        lifecycle={"task_acceptance": "queue", "after_task": "sleep"}))
    output, reason = _refused(running)
    assert reason == ("capabilities.shell.allow: the child asks for curl, which this session "
                      "may not run")
    assert output == f"error: delegate-task: {reason}"


def test_every_axis_the_child_exceeds_is_named(tmp_path: Path, murmur_home: Path) -> None:
    helper_capsule(tmp_path / "parent" / "helper", capabilities="\n".join([
        "  network:", "    allow: [api.example.com, 'https://docs.example.com']",
        "  env:", "    allow: [LANG, EDITOR]",
        "  shell:", "    allow: [ls]", "    strip_env: ['CORP_*']",
        "  spawn:", "    allow: [./grandchild, other]",
        "  filesystem:", "    scope: out"]))
    write_capsule(tmp_path / "parent" / "helper" / "grandchild", [text_response("g")],
                  name="grandchild", version="0.1.0", shell=())
    running = Running(parent_capsule(
        tmp_path / "parent", [delegate(), text_response("refused")],
        allow="[./helper, ./helper/grandchild]",
        capabilities_more="\n".join([
            "  network:", "    allow: [docs.example.com]",
            "  env:", "    allow: [LANG]",
            "  shell:", "    allow: [ls]", "    strip_env: ['CORP_*', '*_CERT']",
            "  filesystem:", "    scope: data", "    read_only: [data/keys]"])))
    _output, reason = _refused(running)
    assert reason == "; ".join([
        "capabilities.network.allow: the child asks for api.example.com, which this session "
        "may not reach",
        "capabilities.shell.strip_env: the child does not strip *_CERT, which this session "
        "strips",
        "capabilities.env.allow: the child asks for EDITOR, which this session may not pass "
        "to its components",
        "capabilities.spawn.allow: the child asks for other, which this session may not start",
        "capabilities.filesystem.scope: the child asks for out, where this session is held "
        "to data",
        "capabilities.filesystem.read_only: the child may write data/keys, which this "
        "session may only read"])


def test_a_hooks_own_network_counts_as_the_childs(tmp_path: Path, murmur_home: Path) -> None:
    helper_capsule(tmp_path / "parent" / "helper", artifacts="\n".join([
        "  - name: watcher", "    runtime: hook", "    source: {fixtures}/bare_hook.wasm",
        "    capabilities:", "      network:", "        allow: [evil.example.net]"]))
    running = Running(parent_capsule(tmp_path / "parent",
                                     [delegate(), text_response("refused")]))
    _output, reason = _refused(running)
    assert reason == ("artifacts[watcher].capabilities.network.allow: the child asks for "
                      "evil.example.net, which this session may not reach")


def test_a_child_within_the_envelope_runs(tmp_path: Path, murmur_home: Path) -> None:
    """Narrower on every axis: a covered destination, fewer binaries, more stripped, a scope
    inside the parent's, the parent's read-only tree read-only (from above)."""
    helper_capsule(tmp_path / "parent" / "helper", capabilities="\n".join([
        "  network:", "    allow: ['https://docs.example.com']",
        "  shell:", "    allow: [ls]", "    strip_env: ['CORP_*', 'X_*']",
        "  filesystem:", "    scope: data/mine", "    read_only: [data]"]))
    running = Running(parent_capsule(
        tmp_path / "parent", [delegate(), text_response("delegated"),
                              text_response("done")],
        capabilities_more="\n".join([
            "  network:", "    allow: [docs.example.com]",
            "  shell:", "    allow: [ls, cat]", "    strip_env: ['CORP_*']",
            "  filesystem:", "    scope: data", "    read_only: [data/keys]"])))
    ended = running.ended()
    running.finish()
    assert (ended.outcome, ended.reason) == ("completed", None)


def test_an_installed_child_is_held_to_the_envelope_too(tmp_path: Path,
                                                        murmur_home: Path) -> None:
    helper = helper_capsule(tmp_path / "build" / "helper", capabilities="\n".join([
        "  env:", "    allow: [HOME]"]))
    install_capsule(murmur_home / "artifacts", "helper", "0.1.0", helper)
    running = Running(parent_capsule(tmp_path / "parent", [delegate(), text_response("no")],
                                     allow="[helper]"))
    _output, reason = _refused(running)
    assert reason == ("capabilities.env.allow: the child asks for HOME, which this session "
                      "may not pass to its components")

