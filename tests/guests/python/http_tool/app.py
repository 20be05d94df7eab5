"""Test guest: a tool in Python (componentize-py, world `http-driver`: `murmur:tool/run` plus
wasi:http's outgoing handler) that makes one HTTP request itself, as its input says.

Built by tests/guests/build.py (`build_guest("py_http_tool")`); never committed as a binary.
`tool-input.data` is JSON `{"url": …, "method": "GET"|"POST", "headers": [[name, value], …],
"body": "…"}`. The result is passed, data = JSON `{"status": <int>, "headers": [[name, value],
…], "body": "…", "peers": $MURMUR_FORMATION_PEERS or null}`; a request the host refused (or
that failed) is failed, data = JSON `{"error": "<the error code>", "peers": …}`.
"""

from __future__ import annotations

import json
import os
from urllib.parse import urlsplit

import wit_world
import wit_world.exports
from componentize_py_types import Err
from wit_world.exports import run
from wit_world.imports import outgoing_handler, streams, types


def _result(status: run.Status, data: dict) -> run.ToolResult:  # type: ignore[type-arg]
    data["peers"] = os.environ.get("MURMUR_FORMATION_PEERS")
    return run.ToolResult(status=status, summary=None, data=json.dumps(data), data_path=None,
                          truncated=False, metadata=[], attachments=[])


def _request(args: dict) -> dict:  # type: ignore[type-arg]
    parts = urlsplit(args["url"])
    headers = types.Fields.from_list([(name, value.encode())
                                      for name, value in args.get("headers", [])])
    request = types.OutgoingRequest(headers)
    request.set_method(types.Method_Post() if args.get("method") == "POST"
                       else types.Method_Get())
    request.set_scheme(types.Scheme_Https() if parts.scheme == "https" else types.Scheme_Http())
    request.set_authority(parts.netloc)
    request.set_path_with_query((parts.path or "/") + (f"?{parts.query}" if parts.query else ""))
    body = args.get("body", "").encode()
    outgoing = request.body()
    with outgoing.write() as stream:
        if body:
            stream.blocking_write_and_flush(body)
    types.OutgoingBody.finish(outgoing, None)
    future = outgoing_handler.handle(request, None)
    with future.subscribe() as ready:
        ready.block()
    answer = future.get()
    future.__exit__(None, None, None)
    if answer is None or isinstance(answer, Err) or isinstance(answer.value, Err):
        raise RuntimeError(repr(answer))
    response = answer.value.value
    status = response.status()
    with response.headers() as fields:
        got = [[name, value.decode("utf-8", "replace")] for name, value in fields.entries()]
    incoming = response.consume()
    data = bytearray()
    with incoming.stream() as reader:
        while True:
            try:
                data += reader.blocking_read(65536)
            except Err as end:
                if isinstance(end.value, streams.StreamError_Closed):
                    break
                raise
    types.IncomingBody.finish(incoming)
    response.__exit__(None, None, None)
    return {"status": status, "headers": got, "body": data.decode("utf-8", "replace")}


class Run(wit_world.exports.Run):
    def run(self, input: run.ToolInput) -> run.ToolResult:  # noqa: A002 (WIT name)
        args = json.loads(input.data or "{}")
        try:
            return _result(run.Status.PASSED, _request(args))
        except Err as refused:  # handle() itself answered an error code
            return _result(run.Status.FAILED, {"error": repr(refused.value)})
        except RuntimeError as failed:
            return _result(run.Status.FAILED, {"error": str(failed)})
