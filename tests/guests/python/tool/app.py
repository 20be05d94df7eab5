"""Test guest: a murmur tool in Python (componentize-py, world `tool`).

Built by tests/guests/build.py (`build_guest("py_tool")`); never committed as a binary.
`tool-input.data` is JSON `{"op": ...}`:

* echo   -> passed, data = the input JSON (keys sorted), metadata [("log_path", ...)]
* ask    -> request-input(input["prompt"] * input.get("repeat", 1)); passed, data = the answer
* write  -> writes input["text"] to input["path"] under the preopened "."; passed,
            metadata [("state_effect", "mutate"), ("resource_id", path)]
* read   -> passed, data = the file's text,
            metadata [("state_effect", "read"), ("resource_id", path)]
* fail   -> failed, data "asked to fail"
* crash  -> uncaught exception: the guest traps
* stream -> emit-chunk("py "), emit-chunk("chunk"); passed
* progress -> emit-chunk("waiting for <path>\n"), then waits (at most 60 s) until the file
            input["path"] exists, emit-chunk("found it\n"); passed, data "found" (else failed)
* env    -> passed, data = JSON of the environment the guest sees
* report -> writes input["text"] to input["path"] and returns it as data-path (no data)
* hog    -> allocates 1 MiB blocks until the memory limit: MemoryError, the guest traps
* tally  -> appends one line to input["path"] under "." (each run of the op counts itself);
            passed, data = the number of lines the file now has
* tally-crash -> appends the line, then an uncaught exception: the guest traps
* tally-fail  -> appends the line, then returns input.get("status", "failed") ("failed" or
            "error"), data "failed after N runs", metadata [("failure", input["failure"])]
            (the failure key docs/wit.md names: "definitive" or "uncertain")
  Both fail only while the file has at most input["times"] lines, when given; a later run
  passes as `tally` does (a call that fails once, then works).
* other  -> error, with a message

Every call prints "tool_py stdout" to stdout and "tool_py stderr" to stderr.
"""

from __future__ import annotations

import json
import sys

import wit_world
import wit_world.exports
from wit_world.exports import run
from wit_world.imports import chunks, task


def _result(
    status: run.Status,
    data: str | None,
    summary: str | None = None,
    metadata: list[tuple[str, str]] | None = None,
) -> run.ToolResult:
    return run.ToolResult(
        status=status,
        summary=summary,
        data=data,
        data_path=None,
        truncated=False,
        metadata=metadata or [],
        attachments=[],
    )


def _tally(path: str) -> int:
    """Appends one line to `path`; the number of lines it now has."""
    with open(path, "a", encoding="utf-8") as f:
        f.write("ran\n")
    with open(path, encoding="utf-8") as f:
        return len(f.readlines())


def _error(message: str) -> run.ToolResult:
    return _result(run.Status.ERROR, message, summary=message)


class Run(wit_world.exports.Run):
    def run(self, input: run.ToolInput) -> run.ToolResult:  # noqa: A002 (WIT name)
        print("tool_py stdout", flush=True)
        print("tool_py stderr", file=sys.stderr, flush=True)
        try:
            args = json.loads(input.data or "")
        except ValueError as exc:
            return _error(f"input is not JSON: {exc}")
        if not isinstance(args, dict):
            return _error("input is not a JSON object")
        op = args.get("op")

        if op == "report":
            path = str(args["path"])
            with open(path, "w", encoding="utf-8") as f:
                f.write(str(args.get("text", "")))
            return run.ToolResult(status=run.Status.PASSED, summary="see data-path", data=None,
                                  data_path=path, truncated=False, metadata=[],
                                  attachments=[])
        if op in ("tally", "tally-crash", "tally-fail"):
            count = _tally(str(args["path"]))
            if "times" in args and count > int(args["times"]):
                op = "tally"
            if op == "tally-crash":
                raise RuntimeError(f"tool_py asked to crash after {count} runs")
            if op == "tally-fail":
                status = run.Status.ERROR if args.get("status") == "error" else run.Status.FAILED
                return _result(status, f"failed after {count} runs", summary="failed",
                               metadata=[("failure", str(args["failure"]))])
            return _result(run.Status.PASSED, str(count), summary=f"run {count}")
        if op == "env":
            import os

            return _result(run.Status.PASSED, json.dumps(dict(os.environ), sort_keys=True))
        if op == "hog":
            blocks = []
            while True:
                blocks.append(bytearray(1 << 20))
        if op == "echo":
            return _result(run.Status.PASSED, json.dumps(args, sort_keys=True), summary="echo",
                           metadata=[("log_path", input.log_path or "")])
        if op == "ask":  # `repeat`: the prompt that many times (a huge one from a small call)
            prompt = str(args.get("prompt", "")) * int(args.get("repeat", 1))
            answer = task.request_input(prompt)
            return _result(run.Status.PASSED, answer, summary="asked")
        if op == "write":
            path = str(args["path"])
            with open(path, "w", encoding="utf-8") as f:
                f.write(str(args.get("text", "")))
            return _result(run.Status.PASSED, None, summary=f"wrote {path}",
                           metadata=[("state_effect", "mutate"), ("resource_id", path)])
        if op == "read":
            path = str(args["path"])
            with open(path, encoding="utf-8") as f:
                text = f.read()
            return _result(run.Status.PASSED, text, summary=f"read {path}",
                           metadata=[("state_effect", "read"), ("resource_id", path)])
        if op == "fail":
            return _result(run.Status.FAILED, "asked to fail", summary="failed")
        if op == "crash":
            raise RuntimeError("tool_py asked to crash")
        if op == "progress":
            import os
            import time

            path = str(args["path"])
            chunks.emit_chunk(f"waiting for {path}\n")
            for _ in range(1200):
                if os.path.exists(path):
                    chunks.emit_chunk("found it\n")
                    return _result(run.Status.PASSED, "found", summary="found")
                time.sleep(0.05)
            return _result(run.Status.FAILED, "never found", summary="never found")
        if op == "stream":
            chunks.emit_chunk("py ")
            chunks.emit_chunk("chunk")
            return _result(run.Status.PASSED, "streamed", summary="streamed")
        return _error(f"unknown op: {op!r}")
