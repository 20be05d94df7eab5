"""One session, many tasks (spec §1.7): `--task` given again queues tasks in order; with
`after_task: sleep` stdin lines are further tasks; `threaded` carries the context from task
to task in memory, `stateless` starts each empty. One trace frames them all."""

from __future__ import annotations

import json
from pathlib import Path

from tests.capsules import set_driver_config
from tests.conftest import CapsuleFactory, read_jsonl, run_cli
from tests.responses import text_response


def with_log(root: Path, log: Path) -> None:
    set_driver_config(root, requests_log=log)


def lifecycle(conversation: str, after_task: str = "exit", depth: int = 4) -> str:
    return (f"lifecycle:\n  task_acceptance: queue\n  queue_depth: {depth}\n"
            f"  after_task: {after_task}\n  conversation: {conversation}\n")


def started(stdout: str) -> dict[str, object]:
    return json.loads(stdout.splitlines()[0])


def test_three_tasks_run_in_order_in_one_session_and_one_trace(
        make_capsule: CapsuleFactory, tmp_path: Path, murmur_home: Path) -> None:
    root = make_capsule([text_response(f"answer {n}") for n in (1, 2, 3)],
                        extra=lifecycle("threaded"))
    log = tmp_path / "requests.jsonl"
    with_log(root, log)
    done = run_cli("launch", str(root), "--headless", "--json", "--task", "first",
                   "--task", "second", "--task", "third")
    assert done.returncode == 0, done.stderr
    trace = read_jsonl(Path(str(started(done.stdout)["trace_path"])))
    kinds = [x["event_type"] for x in trace]
    assert kinds.count("session_start") == 1 and kinds.count("session_end") == 1
    starts = [x for x in trace if x["event_type"] == "task_start"]
    ends = [x for x in trace if x["event_type"] == "task_end"]
    assert len(starts) == len(ends) == 3
    assert [s["task_id"] for s in starts] == [e["task_id"] for e in ends]
    assert all(e["exit_status"] == "ok" for e in ends)
    assert trace[-1]["total_turns"] == 3
    # threaded: each task's request holds the context so far, kept in memory
    requests = [json.loads(line) for line in log.read_text().splitlines()]
    texts = [[b["text"] for m in r["messages"] for b in m["content"] if b["type"] == "text"]
             for r in requests]
    assert texts[2] == ["first", "answer 1", "second", "answer 2", "third"]
    workdir = Path(str(started(done.stdout)["workdir"]))
    out = workdir / "out"
    for task, answer in zip(starts, ("answer 1", "answer 2", "answer 3"), strict=True):
        assert (out / f"result_{task['task_id']}.txt").read_text() == answer
    assert (out / "result.txt").read_text() == "answer 3"
    assert not (workdir / "task.md").exists()  # under queue, removed after each task


def test_a_stateless_session_starts_each_task_empty(
        make_capsule: CapsuleFactory, tmp_path: Path, murmur_home: Path) -> None:
    root = make_capsule([text_response("one"), text_response("two")],
                        extra=lifecycle("stateless"))
    log = tmp_path / "requests.jsonl"
    with_log(root, log)
    done = run_cli("launch", str(root), "--headless", "--task", "first", "--task", "second")
    assert done.returncode == 0, done.stderr
    requests = [json.loads(line) for line in log.read_text().splitlines()]
    assert [len(r["messages"]) for r in requests] == [1, 1]
    assert requests[1]["messages"][0]["content"][0]["text"] == "second"


def test_with_after_task_sleep_stdin_lines_are_further_tasks(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    root = make_capsule([text_response(f"reply {n}") for n in (1, 2, 3)],
                        extra=lifecycle("threaded", after_task="sleep"))
    done = run_cli("launch", str(root), "--headless", "--json", "--task", "hello",
                   input_text="what next?\n\nand then?\n")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    tasks = [e for e in events if e["event"] == "TaskStarted"]
    assert [(t["text"], t["source"]) for t in tasks] == [
        ("hello", "task_md"), ("what next?", "a2a"), ("and then?", "a2a")]
    assert [e["result"] for e in events if e["event"] == "TaskEnded"] == [
        "reply 1", "reply 2", "reply 3"]
    assert events[-1]["event"] == "SessionEnded" and events[-1]["exit_status"] == "ok"


def test_the_first_task_that_fails_decides_the_sessions_status(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    failing = {"stop_reason": "error", "content": [], "error": "the provider said no"}
    root = make_capsule([failing, text_response("fine")], extra=lifecycle("threaded"))
    done = run_cli("launch", str(root), "--headless", "--json", "--task", "a", "--task", "b")
    assert done.returncode == 1
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e["exit_status"] for e in events if e["event"] == "TaskEnded"] == ["failed", "ok"]
    assert events[-1]["exit_status"] == "failed"


def test_more_tasks_than_the_lifecycle_takes_are_refused_at_launch(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    single = make_capsule([text_response("x")], folder="single")
    done = run_cli("launch", str(single), "--headless", "--task", "a", "--task", "b")
    assert done.returncode == 2
    assert "--task was given 2 times" in done.stderr and "task_acceptance is single" \
        in done.stderr
    shallow = make_capsule([text_response("x")], extra=lifecycle("threaded", depth=1),
                           folder="shallow")
    done = run_cli("launch", str(shallow), "--headless", "--task", "a", "--task", "b",
                   "--task", "c")
    assert done.returncode == 2 and "lifecycle.queue_depth is 1" in done.stderr
