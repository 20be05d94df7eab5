"""Compaction and stateful-driver continuation in real sessions (WAT hooks, the scripted
driver recording every request it was sent)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.capsules import set_driver_config
from tests.conftest import read_jsonl
from tests.responses import call_response, text_response
from tests.wasm.conftest import WasmCapsule
from tests.wasm.test_wasm_session import hook_entry, run, tool_entry
from tui.core.events import vocabulary as ev
from tui.core.loop.compaction import rebuild, unpaired
from tui.core.record.reader import to_wit

# a window of 400 tokens at a threshold of 0.5 makes every turn of these sessions due for
# compaction; the hook asks the session's driver for each summary (the next scripted response)
COMPACTOR = "binding: on-compaction\ncommit_policy: replace-context\n"


def with_log(root: Path) -> Path:
    """Make the capsule's scripted driver write every request it receives."""
    set_driver_config(root, requests_log="sent.jsonl")
    return root / "sent.jsonl"


def compacting_capsule(wasm_capsule: WasmCapsule, tmp_path: Path, responses: list[Any],
                       contract: str = COMPACTOR) -> Path:
    hook = hook_entry("summariser", "all_hook", contract=contract, tmp=tmp_path)
    return wasm_capsule(responses, tool_entry("echo", "echo_tool") + hook,
                        extra="  compaction:\n    threshold: 0.5\ncontext:\n  max_tokens: 400\n")


def test_a_committed_compaction_replaces_the_context_and_is_recorded_beside_it(
        wasm_capsule: WasmCapsule, tmp_path: Path) -> None:
    # turn 1 calls echo; compaction is due, the hook's run-inference takes the next
    # response as its summary; turn 2 answers, and is compacted in turn
    root = compacting_capsule(wasm_capsule, tmp_path, [
        call_response("echo", {"x": 1}), text_response("the summary so far"), text_response("done"),
        text_response("second summary")])
    sent = with_log(root)
    result, sink = run(root)
    assert result.exit_status == "ok" and result.result == "done"
    compacted = sink.of(ev.Compacted)
    assert [c.turn for c in compacted] == [0, 1]
    first = compacted[0]
    assert first.turn == 0 and first.tokens_after < first.tokens_before
    requests = [json.loads(line) for line in sent.read_text().splitlines()]
    # the driver saw: turn 1 (the task), the hook's own request, turn 2 (the summary, then
    # the assistant's call and the tool result that followed it), the hook again
    assert [len(r["messages"]) for r in requests] == [1, 1, 3, 1]
    assert requests[2]["messages"][0] == {"role": "user", "content": [
        {"type": "text", "text": "the summary so far"}]}
    traced = [x for x in read_jsonl(result.paths.trace) if x["event_type"] == "compaction"]
    assert traced and traced[0]["tokens_before"] == first.tokens_before
    assert traced[0]["tokens_after"] == first.tokens_after and traced[0]["turn"] == 0
    assert result.record_path is not None
    record = read_jsonl(result.record_path)
    ids = [m["id"] for m in record]
    assert len(ids) == len(set(ids))  # the summary got a fresh id; nothing written twice
    texts = [m["content"][0].get("text") for m in record if m["role"] == "user"]
    assert texts[:2] == ["go", "the summary so far"]  # beside, not instead of, the task


def test_a_hook_without_the_replace_context_policy_declines_and_the_task_goes_on(
        wasm_capsule: WasmCapsule, tmp_path: Path) -> None:
    root = compacting_capsule(wasm_capsule, tmp_path, [
        call_response("echo", {}), text_response("ignored summary"), text_response("done"),
        text_response("ignored again")], contract="binding: on-compaction\n")
    result, sink = run(root)
    assert result.exit_status == "ok" and result.result == "done"
    declined = sink.of(ev.CompactionDeclined)
    assert declined and declined[0].reason == "no_hook_replacement"
    assert any(f.handler == "on-compaction" and f.arm == "replace-context"
               for f in sink.of(ev.HookFault))
    lines = [x for x in read_jsonl(result.paths.trace)
             if x["event_type"] == "compaction_declined"]
    assert lines[0]["reason"] == "no_hook_replacement" and lines[0]["tokens"] > 200
    assert not sink.of(ev.Compacted)


def test_a_failing_compaction_hook_fails_the_task(wasm_capsule: WasmCapsule,
                                                  tmp_path: Path) -> None:
    # the script holds nothing for the hook's run-inference: it returns err(...)
    root = compacting_capsule(wasm_capsule, tmp_path, [call_response("echo", {})])
    result, sink = run(root)
    assert result.exit_status == "failed"
    failed = sink.of(ev.TaskFailed)
    assert failed and failed[0].cause == "compaction_hook" and failed[0].turn == 0
    assert "summariser" in result.result and "ran out" in result.result
    kinds = [x["event_type"] for x in read_jsonl(result.paths.trace)]
    assert "task_failed" in kinds and kinds[-1] == "session_end"
    assert (result.paths.out / "result.txt").read_text().startswith("error: ")


def test_below_the_threshold_nothing_is_dispatched(wasm_capsule: WasmCapsule,
                                                    tmp_path: Path) -> None:
    hook = hook_entry("summariser", "all_hook", contract=COMPACTOR, tmp=tmp_path)
    root = wasm_capsule([call_response("echo", {}), text_response("done")],
                        tool_entry("echo", "echo_tool")
                        + hook, extra="context:\n  max_tokens: 100000\n")
    result, sink = run(root)
    assert result.exit_status == "ok"
    assert not sink.of(ev.Compacted) and not sink.of(ev.CompactionDeclined)


def test_a_replacement_with_an_unanswered_tool_call_is_declined() -> None:
    # what a hook hands back, as WIT messages: an assistant call with no result
    call_message = {"role": "assistant", "id": "msg_1", "content": [
        {"type": "tool_call", "id": "t1", "name": "bash", "input": {}}]}
    result_message = {"role": "tool", "id": "msg_2", "tool_call_id": "t1", "is_error": False,
                      "content": [{"type": "text", "text": "ok"}]}

    class Item:
        def __init__(self, message: dict[str, Any]) -> None:
            wit = to_wit(message)
            self.role, self.content = wit.role, wit.content
            setattr(self, "source-id", "src")

    alone = rebuild([Item(call_message)])
    paired = rebuild([Item(call_message), Item(result_message)])
    assert unpaired(alone) and not unpaired(paired)
    assert paired[1]["tool_call_id"] == "t1" and paired[1]["source_id"] == "src"
    assert paired[0]["id"] != "msg_1" and paired[0]["id"].startswith("msg_")


def continuing(text: str, continuation_id: str | None) -> dict[str, Any]:
    response = text_response(text)
    if continuation_id is not None:
        response["metadata"] = {"continuation_id": continuation_id}
    return response


def calling(call_id: str, continuation_id: str | None) -> dict[str, Any]:
    response = call_response("echo", {"n": call_id}, call_id=call_id)
    if continuation_id is not None:
        response["metadata"] = {"continuation_id": continuation_id}
    return response


def test_a_continuing_driver_is_sent_only_what_is_new(wasm_capsule: WasmCapsule) -> None:
    root = wasm_capsule([calling("a", "conv-1"), calling("b", "conv-1"), calling("c", ""),
                         calling("d", "conv-2"), continuing("done", None)],
                        tool_entry("echo", "echo_tool"), extra="  max_turns: 8\n")
    sent = with_log(root)
    result, _ = run(root)
    assert result.exit_status == "ok"
    requests = [json.loads(line) for line in sent.read_text().splitlines()]
    # the driver acknowledged what it was sent, not its own reply (Murmur's rule): turn 1 the
    # task; 2 its call and the call's result; 3 likewise; turn 3 returned an empty id, so 4 is
    # a full resend (7 messages); 5 the call and result after what 4 was sent
    assert [len(r["messages"]) for r in requests] == [1, 2, 2, 7, 2]
    assert [r.get("continuation_id") for r in requests] == [
        None, "conv-1", "conv-1", None, "conv-2"]
    assert [m["role"] for m in requests[1]["messages"]] == ["assistant", "tool"]
    assert requests[1]["messages"][0]["content"][0]["id"] == "a"
    assert requests[1]["messages"][1]["tool_call_id"] == "a"
    # the tokens are the full context's, whatever went over the wire
    turns = [x for x in read_jsonl(result.paths.trace) if x["event_type"] == "inference"]
    assert turns[1]["input_tokens"] < turns[2]["input_tokens"] < turns[3]["input_tokens"]
    assert [len(t["message_ids"]) for t in turns] == [1, 3, 5, 7, 9]


def test_a_compaction_drops_the_continuation(wasm_capsule: WasmCapsule,
                                             tmp_path: Path) -> None:
    root = compacting_capsule(wasm_capsule, tmp_path, [
        calling("a", "conv-1"), text_response("short summary"), continuing("done", None),
        text_response("final summary")])
    sent = with_log(root)
    result, sink = run(root)
    assert result.exit_status == "ok" and sink.of(ev.Compacted)
    requests = [json.loads(line) for line in sent.read_text().splitlines()]
    # after the compaction: a full resend of the new context, and no continuation id
    assert "continuation_id" not in requests[2]
    assert len(requests[2]["messages"]) == 3


def test_a_compact_resume_goes_through_the_on_compaction_hook(
        wasm_capsule: WasmCapsule, tmp_path: Path) -> None:
    from tests.fakes import Collect
    from tui.core.fs.paths import murmur_home
    from tui.core.loop.launch import LaunchOptions
    from tui.core.loop.session import Session
    from tui.core.manifest.reader import load_capsule
    from tui.core.session_index import Resume, find

    hook = hook_entry("summariser", "all_hook", contract=COMPACTOR, tmp=tmp_path)
    root = wasm_capsule([call_response("echo", {"n": 1}), text_response("the first is done")],
                        tool_entry("echo", "echo_tool") + hook)
    first, _ = run(root, task="do the first thing")
    assert first.exit_status == "ok"
    # the resumed session's script: the hook's summary, then the answer to the new task
    (root / "script.json").write_text(json.dumps([text_response("summary: the first thing is done"),
                                                  text_response("and the second")]))
    sent = with_log(root)
    sink = Collect()
    resumed = Session(load_capsule(root), LaunchOptions(
        task="now the second", resume=Resume(find(murmur_home(), "@1"), "compact")),
        sinks=[sink]).run()
    assert resumed.exit_status == "ok" and resumed.result == "and the second"
    requests = [json.loads(line) for line in sent.read_text().splitlines()]
    # the hook saw the whole earlier conversation; the task's request holds its summary only
    hook_request, task_request = requests
    assert len(hook_request["messages"]) == 1  # the hook's own prompt, built from it
    texts = [b.get("text") for m in task_request["messages"] for b in m["content"]]
    assert texts == ["summary: the first thing is done", "now the second"]
    (compacted,) = sink.of(ev.Compacted)
    assert compacted.tokens_after < compacted.tokens_before
