"""Hostile components, in real sessions: the data path, store limits, result and attachment
caps, and what they cost the host in memory (peak RSS of a real subprocess session)."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.benchmarks.hostile import FIXTURES, session_peak_rss, write_capsule
from tests.conftest import read_jsonl
from tests.fakes import Collect
from tests.guests.build import ToolchainUnavailable, build_guest
from tests.wasm.conftest import fixture
from tui.core.errors import GuestFailure
from tui.core.events import vocabulary as ev
from tui.core.loop.launch import LaunchOptions, SessionResult
from tui.core.loop.session import Session
from tui.core.manifest.reader import load_capsule
from tui.core.text import secrets
from tui.core.wasm.guest import Guest, Sandbox
from tui.core.wasm.runtime import Census, WasmRuntime, census

MIB = 1 << 20
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 600


def run(tmp_path: Path, tool_input: dict[str, Any], *, fixture: str = "flood_tool",
        limits: str = "", extra: str = "", work: Path | None = None
        ) -> tuple[SessionResult, Collect]:
    root = write_capsule(tmp_path / "capsule", tool_input, fixture=fixture, limits=limits,
                         extra=extra)
    sink = Collect()
    session = Session(load_capsule(root), LaunchOptions(task="go", workdir=work), sinks=[sink])
    return session.run(), sink


def finished(sink: Collect) -> ev.ToolCallFinished:
    (only,) = sink.of(ev.ToolCallFinished)
    return only


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


# -- the data path ----------------------------------------------------------------------------


@pytest.mark.parametrize(("words", "reason"), [
    # a link the component plants itself, at the last segment and at a folder on the way
    ("link=../secret.txt name=evil path=evil", "[data-path evil refused: it is a link]"),
    ("link=.. name=up path=up/secret.txt", "[data-path up/secret.txt refused: up is a link]"),
    ("path=../secret.txt", "[data-path ../secret.txt refused: the path is outside the work "
                           "folder]"),
    ("path=sub/../../secret.txt", "refused: the path is outside the work folder]"),
])
def test_the_data_path_never_leaves_the_work_folder(tmp_path: Path, work: Path, words: str,
                                                     reason: str) -> None:
    (tmp_path / "secret.txt").write_text("the host's secret\n")
    (work / "sub").mkdir()
    result, sink = run(tmp_path, {"q": words}, fixture="path_tool", work=work)
    assert result.exit_status == "ok"
    output = finished(sink).output
    assert reason in output
    assert "the host's secret" not in output
    assert result.record_path is not None
    assert "the host's secret" not in result.record_path.read_text()


@pytest.mark.parametrize(("name", "reason"), [
    ("fifo", "it is a FIFO (named pipe)"),
    ("sub", "it is a folder"),
    ("zero", "it is a link"),             # a link to /dev/zero the work folder holds
    ("/dev/zero", "the path is absolute"),
    ("/etc/hostname", "the path is absolute"),
    ("missing.txt", "no such file"),
    ("notes.txt/x", "notes.txt is not a folder"),
])
def test_only_a_regular_file_is_read_and_nothing_hangs(tmp_path: Path, work: Path, name: str,
                                                       reason: str) -> None:
    os.mkfifo(work / "fifo")  # nobody ever writes to it: opening it blocking would hang
    (work / "sub").mkdir()
    (work / "zero").symlink_to("/dev/zero")
    (work / "notes.txt").write_text("notes")
    result, sink = run(tmp_path, {"q": f"path={name}"}, fixture="path_tool", work=work)
    assert result.exit_status == "ok"
    assert f"[data-path {name} refused: {reason}" in finished(sink).output


def test_a_device_node_in_the_work_folder_is_refused(tmp_path: Path, work: Path) -> None:
    try:
        os.mknod(work / "null", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs privileges this run does not have")
    _, sink = run(tmp_path, {"q": "path=null"}, fixture="path_tool", work=work)
    assert "[data-path null refused: it is a device]" in finished(sink).output


def test_a_300_mib_data_path_file_is_cut_at_the_cap_and_kept(tmp_path: Path,
                                                             work: Path) -> None:
    big = work / "out" / "big.log"
    big.parent.mkdir()
    with big.open("wb") as handle:
        handle.write("é".encode() * (MIB // 2 + 10))  # a character across the 1 MiB cut
        handle.truncate(300 * MIB)                    # sparse: costs no disk
    result, sink = run(tmp_path, {"q": "path=out/big.log"}, fixture="path_tool", work=work)
    output = finished(sink).output
    assert result.exit_status == "ok"
    assert output.count("é") == MIB // 2
    assert (f"[truncated: true — data-path out/big.log is {300 * MIB} bytes; the first 1 MiB "
            f"is above (the result cap); the whole file is kept at {big}]") in output
    assert big.stat().st_size == 300 * MIB
    assert finished(sink).output_bytes < MIB + 4096 and finished(sink).truncated


def test_the_data_path_file_costs_the_cap_not_its_size(tmp_path: Path) -> None:
    def peak(size: int, folder: str) -> int:
        work = tmp_path / folder / "work"
        work.mkdir(parents=True)
        with (work / "big.log").open("wb") as handle:
            handle.truncate(size)
        root = write_capsule(tmp_path / folder / "capsule", {"q": "path=big.log"},
                             fixture="path_tool")
        rss, code, stdout = session_peak_rss(root, tmp_path / folder / "home",
                                             "--workdir", str(work))
        assert code == 0, stdout
        return rss

    small, huge = peak(2 * MIB, "small"), peak(300 * MIB, "huge")
    assert huge - small < 32 * MIB  # it was over 300 MiB when the whole file was read


def test_attachments_are_opened_the_same_way(tmp_path: Path, work: Path) -> None:
    (tmp_path / "outside.png").write_bytes(PNG)
    os.mkfifo(work / "pipe.png")
    _, sink = run(tmp_path, {"q": "link=.. name=up attach=up/outside.png"},
                       fixture="path_tool", work=work)
    assert "[attachment up/outside.png refused: up is a link]" in finished(sink).output
    assert finished(sink).attachments == ()
    _, sink = run(tmp_path / "again", {"q": "attach=pipe.png"}, fixture="path_tool", work=work)
    assert "[attachment pipe.png refused: it is a FIFO (named pipe)]" in finished(sink).output


# -- store limits ---------------------------------------------------------------------------


def test_all_memories_together_stay_within_memory_bytes(tmp_path: Path) -> None:
    result, sink = run(tmp_path, {"q": "memories=1000"}, fixture="greedy_tool",
                       limits=f"{{memory_bytes: {64 * MIB}}}")
    assert result.exit_status == "ok"
    output = finished(sink).output
    pages = [int(n) for n in output.split("pages: ")[1].split("\n")[0].split()]
    assert len(pages) == 4
    assert sum(pages) * 65536 <= 64 * MIB  # each of the four got a quarter
    assert min(pages) >= 200                # and used it


@pytest.mark.parametrize(("name", "counted"), [
    ("greedy_tool", Census(memories=4, tables=1, modules=1)),
    ("echo_tool", Census(memories=1, tables=0, modules=1)),
    ("escape_tool", Census(memories=1, tables=1, modules=4)),   # the adapter imports memory
    ("cloned_memories", Census(memories=1, tables=0, modules=1)),
])
def test_the_census_counts_what_the_modules_define(name: str, counted: Census) -> None:
    assert census(fixture(name).read_bytes()) == counted


@pytest.mark.slow
@pytest.mark.parametrize(("name", "memories"), [("py_tool", 1), ("js_tool", 2),
                                                ("rust_tool", 1)])
def test_real_guests_define_the_memories_the_docs_say(name: str, memories: int) -> None:
    try:
        wasm = build_guest(name)
    except ToolchainUnavailable as exc:
        pytest.skip(f"{name}: {exc}")
    assert census(wasm.read_bytes()).memories == memories


def test_a_module_instantiated_again_cannot_take_another_share(tmp_path: Path) -> None:
    runtime = WasmRuntime(tmp_path / "compiled")
    try:
        loaded = runtime.load(fixture("cloned_memories"))
        with pytest.raises(GuestFailure) as info:
            Guest(runtime, loaded, "murmur:tool/run@0.2.0",
                  Sandbox(log_path=tmp_path / "c.log", memory_bytes=64 * MIB,
                          deadline_seconds=10, limits_key="capabilities.limits"), "cloned")
    finally:
        runtime.close()
    assert info.value.kind == "limit"
    assert info.value.reason == (
        "cloned could not start: it creates more memories than its modules define (1); "
        "capabilities.limits.memory_bytes is split across the memories a component defines")


def test_a_table_cannot_grow_past_table_elements(tmp_path: Path) -> None:
    _, sink = run(tmp_path, {"q": "table=1000000"}, fixture="greedy_tool",
                  limits="{table_elements: 5000}")
    assert "table: 4001 refused" in finished(sink).output


def test_tables_over_the_limit_at_start_fail_naming_the_key(tmp_path: Path) -> None:
    _, sink = run(tmp_path, {}, fixture="escape_tool", limits="{table_elements: 10}")
    assert finished(sink).status == "error"
    assert finished(sink).output == (
        "error: t could not start: a table of 14 elements is over "
        "artifacts[t].capabilities.limits.table_elements (10)")


def test_too_many_instances_fail_naming_the_key(tmp_path: Path) -> None:
    result, sink = run(tmp_path, {}, fixture="escape_tool", limits="{instances: 3}")
    assert result.exit_status == "ok"
    assert finished(sink).output == (
        "error: t could not start: it needs at least 4 instances, over "
        "artifacts[t].capabilities.limits.instances (3)")


# -- results and attachments ----------------------------------------------------------------


def test_a_long_result_is_cut_at_1_mib_and_says_so(tmp_path: Path) -> None:
    result, sink = run(tmp_path, {"q": f"bytes={3 * MIB}"})
    assert result.exit_status == "ok"
    call = finished(sink)
    assert call.status == "ok" and call.truncated
    assert call.output.count("x") == MIB
    assert (f"[truncated: true — the result's data was {3 * MIB} bytes; the first 1 MiB is "
            "above (the result cap)]") in call.output
    assert result.record_path is not None
    longest = max(len(line) for line in result.record_path.read_text().splitlines())
    assert longest < MIB + 4096
    assert max(len(line) for line in result.paths.trace.read_text().splitlines()) < MIB + 4096


def test_a_result_under_the_cap_is_whole(tmp_path: Path) -> None:
    _, sink = run(tmp_path, {"q": f"bytes={MIB}"})
    assert finished(sink).output.count("x") == MIB
    assert "truncated" not in finished(sink).output and not finished(sink).truncated


def test_a_huge_metadata_list_keeps_its_first_entries(tmp_path: Path) -> None:
    _, sink = run(tmp_path, {"q": "metadata=100000"})
    assert finished(sink).status == "ok"
    assert "[metadata: 100000 entries; only the first 64 were kept]" in finished(sink).output


def test_a_thousand_attachments_are_capped_in_count_and_bytes(tmp_path: Path,
                                                              work: Path) -> None:
    (work / "a.png").write_bytes(PNG)  # 608 bytes; four times max_bytes is 4,000
    result, sink = run(tmp_path, {"q": "attachments=1000"}, work=work,
                       extra="context:\n  images:\n    max_bytes: 1000\n")
    call = finished(sink)
    assert call.status == "ok"
    assert len(call.attachments) == 6      # 6 x 608 fits in 4,000; a seventh does not
    assert call.output.count("[attachment a.png refused: the call's images would pass 4000 "
                             "bytes together (4 × context.images.max_bytes)]") == 10
    assert "[attachments: 1000 named; only the first 16 were checked (at most 16 per call)]" \
        in call.output
    assert result.record_path is not None
    tool_line = read_jsonl(result.record_path)[2]
    assert [block["type"] for block in tool_line["content"]] == ["text"] + ["image"] * 6
    assert len(list((result.record_path.parent / "attachments").iterdir())) == 1


def test_a_driver_result_over_the_cap_fails_the_turn_clearly(tmp_path: Path) -> None:
    root = tmp_path / "capsule"
    root.mkdir()
    (root / "murmur.yaml").write_text(
        "name: hostile\nversion: '1'\nartifacts:\n"
        f"  - name: t\n    runtime: driver\n    source: {FIXTURES}/flood_tool.wasm\n"
        "    gateway: {endpoint: 'https://models.example'}\n"
        "inference:\n  model: m\n  driver: {artifact: t}\n")
    sink = Collect()
    result = Session(load_capsule(root), LaunchOptions(task=f"bytes={2 * MIB}"),
                     sinks=[sink]).run()
    assert result.exit_status == "failed"
    (failed,) = sink.of(ev.TaskFailed)
    assert failed.cause == "malformed_response"
    assert failed.reason == (f"driver t: its result's data is {2 * MIB} bytes, over the 1 MiB "
                             "result cap; the response JSON would be cut, so the turn fails")


# -- peak RSS -------------------------------------------------------------------------------


def test_a_100_mib_result_costs_at_most_three_times_the_memory_limit(tmp_path: Path) -> None:
    limit = 128 * MIB
    base, code, _ = session_peak_rss(
        write_capsule(tmp_path / "small", {"q": "bytes=1024"}, limits=f"{{memory_bytes: {limit}}}"),
        tmp_path / "home-small")
    assert code == 0
    peak, code, stdout = session_peak_rss(
        write_capsule(tmp_path / "big", {"q": f"bytes={100 * MIB}"},
                      limits=f"{{memory_bytes: {limit}}}"),
        tmp_path / "home-big")
    assert code == 0, stdout
    assert "t ok" in stdout
    # the component's own memory plus wasmtime's two copies while lifting; murmur-tui itself
    # keeps 1 MiB of it (the tool returned 100 MiB: it was over 5 GiB before the cap)
    assert peak - base < 3 * limit


def test_four_memories_cost_one_memory_limit(tmp_path: Path) -> None:
    limit = 64 * MIB
    base, code, _ = session_peak_rss(
        write_capsule(tmp_path / "idle", {"q": "memories=0"}, fixture="greedy_tool",
                      limits=f"{{memory_bytes: {limit}}}"), tmp_path / "home-idle")
    assert code == 0
    peak, code, stdout = session_peak_rss(
        write_capsule(tmp_path / "greedy", {"q": "memories=1000"}, fixture="greedy_tool",
                      limits=f"{{memory_bytes: {limit}}}"), tmp_path / "home-greedy")
    assert code == 0, stdout
    assert peak - base < 1.5 * limit  # each memory alone would have had the whole limit


# -- the component's log ----------------------------------------------------------------------


def test_the_log_is_private_and_redacted_even_split_across_writes(tmp_path: Path) -> None:
    key = "sk-hostile-" + os.urandom(12).hex()
    secrets.remember(key)
    result, _ = run(tmp_path, {"q": f"say={key}"}, fixture="path_tool")
    log = result.paths.logs / "t.log"
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    text = log.read_text()
    assert key not in text and key[:len(key) // 2] not in text
    assert "[redacted]" in text
