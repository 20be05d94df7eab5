"""A shell command's output: read as it arrives in bounded memory, logged with a cap, keys
redacted, files private. Real commands, real files; memory measured in a separate process."""

from __future__ import annotations

import base64
import json
import os
import secrets as random
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tui.core.shell.output import CAP_BYTES, LOG_CAP_BYTES
from tui.core.shell.tool import ShellTool
from tui.core.text import secrets

MIB = 1024 * 1024


def make_tool(tmp_path: Path) -> ShellTool:
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    return ShellTool(("bash",), workdir, workdir / "logs")


def call(tool: ShellTool, command: str):  # type: ignore[no-untyped-def]
    return tool.run("bash", json.dumps({"command": command}))


FLOODS = textwrap.dedent("""\
    import json, resource, sys
    from pathlib import Path
    from tui.core.shell.tool import ShellTool

    def peak():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    def tail(path):
        with path.open("rb") as handle:
            handle.seek(-400, 2)
            return handle.read().decode()

    work = Path(sys.argv[1])
    report = {}
    tool = ShellTool(("bash",), work, work / "logs")
    tool.run("bash", json.dumps({"command": "echo warm"}))
    report["baseline"] = peak()
    runs = [("zero", tool, "head -c 400000000 /dev/zero; echo done >&2"),
            ("yes", ShellTool(("bash",), work, work / "logs", deadline_seconds=2,
                              log_cap_bytes=1024 * 1024), "yes")]
    for name, runner, command in runs:
        result = runner.run("bash", json.dumps({"command": command}))
        log = Path(result.full_output_path)
        report[name] = {"peak": peak(), "stdout_bytes": result.stdout_bytes,
                        "stdout_kept": len(result.stdout), "stopped": result.stopped,
                        "capped": result.log_capped, "log_bytes": log.stat().st_size,
                        "log_tail": tail(log), "text": result.text}
    print(json.dumps(report))
""")


def test_a_flood_of_output_keeps_memory_bounded_and_the_log_capped(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run([sys.executable, "-c", FLOODS, str(work)], capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    zero, flood = report["zero"], report["yes"]
    # 400 MB went through the supervisor; its peak memory moved by under a tenth of that
    assert zero["stdout_bytes"] == 400_000_000 and zero["stdout_kept"] == CAP_BYTES
    assert zero["peak"] - report["baseline"] < 16 * MIB
    assert zero["capped"] and zero["stopped"] is None
    assert LOG_CAP_BYTES // 2 < zero["log_bytes"] < LOG_CAP_BYTES // 2 + 4096
    assert zero["log_tail"].endswith(
        "\nStderr:\ndone\n\nExit code: 0\nLog cap reached: the log keeps the first 32 MiB of "
        "each stream; the rest was read and discarded (the command wrote 400000000 bytes to "
        "stdout and 5 bytes to stderr).\n")
    assert (f"\n\nOutput truncated. The first 32 MiB of each stream were written to "
            f"{work / 'logs'}/shell-") in zero["text"]
    assert zero["text"].endswith(".log; the rest was discarded.")
    # `yes` never ends by itself: it runs until its deadline, drained and discarded
    assert flood["stopped"] == "timeout" and flood["capped"]
    assert flood["stdout_bytes"] > 1 * MIB
    assert flood["log_bytes"] < MIB // 2 + 4096
    assert flood["peak"] - report["baseline"] < 16 * MIB
    assert "Timed out after 2 s (capabilities.limits.deadline_seconds)" in flood["log_tail"]


def test_a_key_a_command_prints_is_in_neither_the_log_nor_the_result(tmp_path: Path) -> None:
    key = "sk-shell-" + random.token_hex(20)
    secrets.remember(key)
    tool = make_tool(tmp_path)
    (tool.workdir / "key.txt").write_text(key)
    result = call(tool, "cat key.txt; echo; head -c 70000 /dev/zero | tr '\\0' a; cat key.txt; "
                        "echo; base64 -w0 key.txt; echo; cat key.txt >&2")
    assert result.truncated and result.full_output_path is not None
    log = Path(result.full_output_path).read_bytes()
    b64 = base64.b64encode(key.encode())
    for where in (log, result.text.encode()):
        assert key.encode() not in where and b64 not in where
        assert key[:20].encode() not in where
    assert log.count(b"[redacted]") == 4
    assert result.stdout.startswith("[redacted]\naaaa") and result.stderr == "[redacted]"


def test_the_log_is_private_and_keeps_stdout_then_stderr_then_the_exit(tmp_path: Path) -> None:
    tool = make_tool(tmp_path)
    tool.logs_dir.mkdir(mode=0o755)
    os.chmod(tool.logs_dir, 0o755)
    result = call(tool, f"echo first >&2; head -c {CAP_BYTES + 1} /dev/zero | tr '\\0' o; "
                        "echo last >&2; exit 4")
    assert result.full_output_path is not None
    log = Path(result.full_output_path)
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert stat.S_IMODE(tool.logs_dir.stat().st_mode) == 0o700
    assert log.read_text() == (f"$ {result.command}\nStdout:\n{'o' * (CAP_BYTES + 1)}\n"
                               "Stderr:\nfirst\nlast\n\nExit code: 4\n")
    assert [p.name for p in tool.logs_dir.iterdir()] == [log.name]  # no spool left behind


def test_a_logs_folder_planted_as_a_link_is_not_written_through(tmp_path: Path) -> None:
    tool = make_tool(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    tool.logs_dir.symlink_to(elsewhere)
    result = call(tool, f"head -c {CAP_BYTES * 2} /dev/zero")
    assert result.truncated and result.full_output_path is None
    assert result.text.endswith(f"\n\nOutput truncated. The full output could not be written: "
                                f"{tool.logs_dir}: a symbolic link, not a folder: no log is "
                                "written through it")
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("size", [1, CAP_BYTES - 1, CAP_BYTES, CAP_BYTES + 1, 3 * CAP_BYTES])
def test_the_result_keeps_the_first_16k_of_each_stream(tmp_path: Path, size: int) -> None:
    tool = make_tool(tmp_path)
    result = call(tool, f"head -c {size} /dev/zero | tr '\\0' x; "
                        f"head -c {size} /dev/zero | tr '\\0' y >&2")
    kept = min(size, CAP_BYTES)
    assert (result.stdout, result.stderr) == ("x" * kept, "y" * kept)
    assert (result.stdout_bytes, result.stderr_bytes) == (size, size)
    assert result.truncated == (size > CAP_BYTES)
    if result.truncated:
        assert result.full_output_path is not None
        text = Path(result.full_output_path).read_text()
        assert f"Stdout:\n{'x' * size}\nStderr:\n{'y' * size}\n" in text
