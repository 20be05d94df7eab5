"""Test guest: an inference driver in Python (componentize-py, world `http-driver`: the
driver world plus wasi:http's outgoing handler) that calls an OpenAI-compatible endpoint itself.

Built by tests/guests/build.py (`build_guest("py_http_driver")`); never committed as a binary.
It POSTs Murmur's request, as a non-streamed chat completion, to
`$MURMUR_INFERENCE_ENDPOINT/chat/completions` — the credential gateway — with no key of its
own (it sends `authorization: Bearer guest-has-no-key`, which the gateway must replace), and
maps the answer to Murmur's response JSON. It prints the names and values of the environment it
sees to stderr (the artifact's log), so a test can check that no key reached it. A status other
than 200 is returned as a failed result whose data is the provider's body.
"""

from __future__ import annotations

import json
import os
import sys
from urllib.parse import urlsplit

import wit_world
import wit_world.exports
from componentize_py_types import Err
from wit_world.exports import run
from wit_world.imports import chunks, outgoing_handler, streams, types


def _result(status: run.Status, data: str) -> run.ToolResult:
    return run.ToolResult(status=status, summary=None, data=data, data_path=None,
                          truncated=False, metadata=[], attachments=[])


def _post(url: str, body: bytes) -> tuple[int, bytes]:
    parts = urlsplit(url)
    headers = types.Fields.from_list([("content-type", b"application/json"),
                                      ("authorization", b"Bearer guest-has-no-key")])
    request = types.OutgoingRequest(headers)
    request.set_method(types.Method_Post())
    request.set_scheme(types.Scheme_Https() if parts.scheme == "https" else types.Scheme_Http())
    request.set_authority(parts.netloc)
    request.set_path_with_query(parts.path + (f"?{parts.query}" if parts.query else ""))
    outgoing = request.body()
    with outgoing.write() as stream:
        for start in range(0, len(body), 4096):
            stream.blocking_write_and_flush(body[start:start + 4096])
    types.OutgoingBody.finish(outgoing, None)
    future = outgoing_handler.handle(request, None)
    with future.subscribe() as ready:
        ready.block()
    answer = future.get()
    future.__exit__(None, None, None)
    if answer is None or isinstance(answer, Err) or isinstance(answer.value, Err):
        raise RuntimeError(f"the request failed: {answer!r}")
    response = answer.value.value
    status = response.status()
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
    return status, bytes(data)


def _murmur_response(answer: dict) -> dict:  # type: ignore[type-arg]
    choice = (answer.get("choices") or [{}])[0]
    message = choice.get("message") or {}
    content = []
    if message.get("content"):
        content.append({"type": "text", "text": message["content"]})
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        content.append({"type": "tool_call", "id": call.get("id"), "name": function.get("name"),
                        "input": json.loads(function.get("arguments") or "{}")})
    stop = "tool_call" if message.get("tool_calls") else "end_turn"
    usage = answer.get("usage") or {}
    return {"stop_reason": stop, "content": content,
            "usage": {"input_tokens": usage.get("prompt_tokens", 0),
                      "output_tokens": usage.get("completion_tokens", 0)}}


class Run(wit_world.exports.Run):
    def run(self, input: run.ToolInput) -> run.ToolResult:  # noqa: A002 (WIT name)
        print("http_driver env " + json.dumps(dict(os.environ), sort_keys=True),
              file=sys.stderr, flush=True)
        endpoint = os.environ.get("MURMUR_INFERENCE_ENDPOINT")
        if not endpoint:
            return _result(run.Status.ERROR, "MURMUR_INFERENCE_ENDPOINT is not set")
        request = json.loads(input.data or "{}")
        messages = [{"role": "system", "content": request.get("system", "")}]
        for message in request.get("messages", []):
            text = "\n".join(b.get("text", "") for b in message.get("content", [])
                             if b.get("type") == "text")
            if message.get("role") == "tool":
                messages.append({"role": "tool", "tool_call_id": message.get("tool_call_id"),
                                 "content": text})
            else:
                messages.append({"role": message.get("role"), "content": text})
        body = json.dumps({"model": request.get("model"), "messages": messages,
                           "max_tokens": request.get("max_tokens")}).encode()
        status, data = _post(endpoint.rstrip("/") + "/chat/completions", body)
        if status != 200:
            return _result(run.Status.FAILED, data.decode("utf-8", "replace"))
        response = _murmur_response(json.loads(data))
        for block in response["content"]:
            if block["type"] == "text":
                chunks.emit_chunk(block["text"])
        return _result(run.Status.PASSED, json.dumps(response))
