"""The retry rule counted: a real Python component appends a line to a file in its workdir on
every run, so the file says how many times a call ran; the transcript says why."""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import Collect
from tests.guests.build import build_guest, cache_root
from tests.responses import call_response, text_response
from tests.wasm.conftest import WasmCapsule
from tui.core.events import vocabulary as ev
from tui.core.headless import HeadlessResponder
from tui.core.loop.launch import LaunchOptions, SessionResult
from tui.core.loop.session import Session
from tui.core.manifest.reader import load_capsule

pytestmark = pytest.mark.slow  # builds the Python test tool (componentize-py)

READ_SAFE = "    effect: read-only\n    replay: safe\n"
READ_IDEMPOTENT = "    effect: read-only\n    replay: idempotent\n"
READ_UNSAFE = "    effect: read-only\n    replay: unsafe\n"
MUTATING_IDEMPOTENT = "    effect: mutating\n    replay: idempotent\n"
MUTATING_UNSAFE = "    effect: mutating\n    replay: unsafe\n"


@pytest.fixture(autouse=True)
def shared_compile_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """The 18 MB component is compiled once for the whole run, not once per MURMUR_HOME."""
    monkeypatch.setenv("MURMUR_COMPILED_CACHE", str(cache_root() / "compiled-host"))


def tally_folder(tmp_path: Path, contract: str | None) -> Path:
    """The Python test tool as a tool folder with its own murmur.yaml (and contract)."""
    folder = tmp_path / "tally-tool"
    folder.mkdir(exist_ok=True)
    shutil.copy(build_guest("py_tool"), folder / "tally.wasm")
    text = "name: tally\ndescription: Counts its runs.\n"
    if contract is not None:
        text += f"x-murmur-tui:\n  contract:\n{contract}"
    (folder / "murmur.yaml").write_text(text, encoding="utf-8")
    return folder


def run_once(wasm_capsule: WasmCapsule, tmp_path: Path, contract: str | None,
             tool_input: dict[str, Any]) -> tuple[SessionResult, Collect, int]:
    """One session whose model calls the tally tool once, then answers; with the number of
    runs the tool's file counted."""
    folder = tally_folder(tmp_path, contract)
    root = wasm_capsule([call_response("tally", {"path": "runs.txt", **tool_input}),
                         text_response("after")],
                        f"  - name: tally\n    runtime: tool\n    source: {folder}\n")
    sink = Collect()
    responder = HeadlessResponder([], stdin=io.StringIO(""), err=io.StringIO())
    session = Session(load_capsule(root), LaunchOptions(task="go"), sinks=[sink],
                      responder=responder)
    result = session.run()
    assert result.exit_status == "ok" and result.result == "after"
    runs = result.paths.accessible / "runs.txt"
    count = len(runs.read_text(encoding="utf-8").splitlines()) if runs.exists() else 0
    return result, sink, count


def retries(sink: Collect) -> list[str]:
    return [w.text for w in sink.of(ev.Warning) if w.code == "W-TOOL-RETRY"]


def finished(sink: Collect) -> ev.ToolCallFinished:
    calls = sink.of(ev.ToolCallFinished)
    assert len(calls) == 1  # a retry is one call to the model and the transcript
    return calls[0]


CRASH = {"op": "tally-crash"}


@pytest.mark.parametrize(("contract", "runs", "why"), [
    (READ_SAFE, 2, "retried once: the failure is definitive and the tool's replay is safe"),
    (READ_IDEMPOTENT, 2,
     "retried once: the failure is definitive and the tool's replay is idempotent"),
    (READ_UNSAFE, 1, "not retried: the tool's replay is unsafe"),
    (MUTATING_IDEMPOTENT, 1, "not retried: the failure is uncertain (mutating tool, it may "
                             "have changed something before it stopped)"),
    (None, 1, "not retried: the failure is uncertain (mutating tool, it may have changed "
              "something before it stopped)"),
], ids=["safe", "idempotent", "unsafe", "mutating-idempotent", "derived"])
def test_a_trapping_call_runs_again_only_when_its_contract_allows(
        wasm_capsule: WasmCapsule, tmp_path: Path, contract: str | None, runs: int,
        why: str) -> None:
    _, sink, count = run_once(wasm_capsule, tmp_path, contract, CRASH)
    assert count == runs
    assert retries(sink) == [f"tally (c1) failed; {why}"]
    done = finished(sink)
    assert done.status == "error" and done.output.startswith("error: tally trapped")


@pytest.mark.parametrize(("contract", "stated", "runs", "why"), [
    (READ_SAFE, "uncertain", 1,
     "not retried: the tool says the failure is uncertain (it may have changed something)"),
    (MUTATING_IDEMPOTENT, "uncertain", 1,
     "not retried: the tool says the failure is uncertain (it may have changed something)"),
    (READ_SAFE, "definitive", 2,
     "retried once: the tool says the failure is definitive and its replay is safe"),
    (MUTATING_IDEMPOTENT, "definitive", 2,
     "retried once: the tool says the failure is definitive and its replay is idempotent"),
    (MUTATING_UNSAFE, "definitive", 1, "not retried: the tool's replay is unsafe"),
], ids=["safe-uncertain", "idempotent-uncertain", "safe-definitive", "idempotent-definitive",
        "unsafe-definitive"])
@pytest.mark.parametrize("status", ["failed", "error"])
def test_a_failure_the_tool_states_decides_with_its_replay(
        wasm_capsule: WasmCapsule, tmp_path: Path, contract: str, stated: str, runs: int,
        why: str, status: str) -> None:
    _, sink, count = run_once(wasm_capsule, tmp_path, contract,
                              {"op": "tally-fail", "failure": stated, "status": status})
    assert count == runs
    assert retries(sink) == [f"tally (c1) failed; {why}"]
    done = finished(sink)
    assert done.status == "error" and f"failed after {runs} runs" in done.output


@pytest.mark.parametrize("tool_input", [CRASH, {"op": "tally-fail", "failure": "definitive"}],
                         ids=["trap", "stated"])
def test_a_call_that_fails_again_on_its_retry_runs_twice_and_the_model_reads_so(
        wasm_capsule: WasmCapsule, tmp_path: Path, tool_input: dict[str, Any]) -> None:
    _, sink, count = run_once(wasm_capsule, tmp_path, READ_SAFE, tool_input)
    assert count == 2  # never a third time
    assert len(retries(sink)) == 1
    done = finished(sink)
    assert done.status == "error"
    said = "the tool said its failure was" if tool_input["op"] == "tally-fail" else \
        "its failure was"
    assert done.output.endswith(
        f"[tally ran twice: the first attempt failed and was retried once ({said} definitive, "
        "its replay is safe); the retry failed too and is not run again — this is the second "
        "attempt's result]" + ("\n</untrusted-content>" if tool_input["op"] == "tally-fail"
                               else ""))


@pytest.mark.parametrize("op", ["tally-crash", "tally-fail"])
def test_a_retry_that_passes_is_what_the_model_reads(wasm_capsule: WasmCapsule,
                                                     tmp_path: Path, op: str) -> None:
    _, sink, count = run_once(wasm_capsule, tmp_path, READ_SAFE,
                              {"op": op, "times": 1, "failure": "definitive"})
    assert count == 2
    assert len(retries(sink)) == 1
    done = finished(sink)
    assert done.status == "ok" and "2" in done.output and "failed" not in done.output


def test_a_call_that_passes_first_time_runs_once_and_says_nothing(wasm_capsule: WasmCapsule,
                                                                  tmp_path: Path) -> None:
    _, sink, count = run_once(wasm_capsule, tmp_path, READ_SAFE, {"op": "tally"})
    assert count == 1
    assert retries(sink) == []
    assert finished(sink).status == "ok"


def test_a_failure_value_other_than_the_two_kinds_is_ignored(wasm_capsule: WasmCapsule,
                                                             tmp_path: Path) -> None:
    _, sink, count = run_once(wasm_capsule, tmp_path, READ_SAFE,
                              {"op": "tally-fail", "failure": "maybe"})
    assert count == 1
    assert retries(sink) == []  # an ordinary failed result, no rule applied
    assert finished(sink).status == "error"
