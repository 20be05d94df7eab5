"""Benchmark: formations — their launch, the fleet watching them, a deep member's question.

Each measure compares two ways in the same run and gives their ratio:

1. Launch. A 5-member formation (the entry `lead` + 4 peers that serve peers, scripted drivers,
   capsule folders named by `source:`, `lead` may call every peer): `murmur-tui launch --roster
   DIR --headless --json`, from its process start to the entry's first `TurnStarted` line on
   stdout (its first model call; goal: under 3 s, the peers started in parallel) — against the
   same 4 peers started one after another (each `launch --headless --serve 127.0.0.1:0 --json`
   waited to its readiness line before the next), then the entry (`launch lead --headless
   --json`) to its first `TurnStarted`. The median of 3 runs each, alternating;
   `launch_parallel_peers_up_s` is the part up to the formation line (every peer's door up).
2. Fleet. 3 real formations launched together (`launch --roster --headless --serve`, 5 members
   each, 15 served sessions): each entry calls its 4 peers with `call-member`, and each peer
   streams a long answer (400 characters a second, as tests/benchmarks/fleet.py's sessions do),
   while the entry waits. The real fleet app, headless Textual at 160×48 in this process,
   watches them; once the 12 peers are all working, 10 s of its event loop's lag (the LagTicker
   of tests/benchmarks/lag.py): worst and p99 (goal: worst under 50 ms) — against the same fleet
   over 15 plain served sessions (not members), 12 streaming the same answer and 3 idle.
3. Needs you. A formation lead → coder → reviewer (launched with `--roster`): `lead` calls
   `coder`, which calls `reviewer` again and again; each of `reviewer`'s tasks asks a question
   (the `ask` tool). The time from the question being visible on `reviewer`'s door (its task's
   GetTask says input-required, polled every 2 ms; the task's id read from `reviewer`'s trace
   as it starts) to the formation's row being drawn under *Needs you* on the fleet — against a
   plain served session's question to its own row, watched by the same fleet app, the
   questions alternating (8 each; the median; goal: the formation's under 300 ms). A question
   already open at the first GetTask asked earlier than can be told: its time is not kept
   (`needs_you_kept` says how many were).

Every session runs under `nice -n 10`, so the fleet measured in this process is not starved by
the processes it watches (as fleet.py does). Measure 1 runs at normal priority: it is the
launch itself. Everything is torn down at the end (the launchers end their members; each
member's process group is killed besides).

Run: python tests/benchmarks/formation.py [launch] [fleet] [needs]   (prints one JSON object;
all three when none is named; about a minute in all)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from tests.benchmarks.fleet import LONG, Served, wait  # noqa: E402
from tests.benchmarks.lag import LagTicker  # noqa: E402
from tests.capsules import write_capsule  # noqa: E402
from tests.responses import Response, call_response, text_response  # noqa: E402
from tests.rosters import write_roster  # noqa: E402
from tui.app.fleet.app import FleetApp  # noqa: E402

V1 = {"A2A-Version": "1.0"}
ASK_TOOL = REPO / "tests" / "wasm" / "fixtures" / "ask_tool.wasm"
AUTH = "network:\n  authentication:\n    scheme: bearer\n"
SERVES = "exports:\n  peer_tasks:\n    accept: true\n"
LOCALHOST = "  network:\n    allow: [localhost]\n"
SLEEP = {"task_acceptance": "queue", "after_task": "sleep", "queue_depth": 4}
PEERS = ("p1", "p2", "p3", "p4")
STREAM = {"chunk_chars": 16, "chars_per_second": 400}
LONGER = LONG * 3  # ~25,000 characters: ~63 s at 400 a second, longer than the measuring
QUESTIONS = 8
RUNS = 3


# -- the capsules and rosters -----------------------------------------------------------------
def roster_text(entry: str, edges: dict[str, tuple[str, ...]]) -> str:
    names = [entry, *dict.fromkeys(n for callees in edges.values() for n in callees)]
    members = "".join(f"  - name: {n}\n    source: {n}\n" + ("    entry: true\n" if n == entry
                                                             else "") for n in names)
    reach = "".join(f"  - from: {a}\n    to: [{', '.join(b)}]\n" for a, b in edges.items())
    return f"roster_version: 1\nmembers:\n{members}reachability:\n{reach}"


def peer(root: Path, responses: list[Response], *, calls: bool = False,
         lifecycle: dict[str, Any] | None = None, **more: Any) -> Path:
    return write_capsule(root, responses, name=root.name, model="m", shell=(),
                         lifecycle=lifecycle or SLEEP, capabilities=LOCALHOST if calls else "",
                         extra=AUTH + SERVES, **more)


def entry(root: Path, responses: list[Response], **more: Any) -> Path:
    return write_capsule(root, responses, name=root.name, model="m", shell=(),
                         capabilities=LOCALHOST, extra=AUTH, **more)


def launch_team(folder: Path) -> Path:
    """Measure 1's formation: the entry answers at once; the peers wait at their doors."""
    entry(folder / "lead", [text_response("the formation is up")])
    for name in PEERS:
        peer(folder / name, [text_response(f"{name} did it")])
    write_roster(folder, roster_text("lead", {"lead": PEERS}))
    return folder


def streaming_team(folder: Path) -> Path:
    """Measure 2's formation: the entry calls its 4 peers at once, each streams a long answer."""
    calls = {"stop_reason": "tool_call", "content": [
        {"type": "tool_call", "id": f"c{n}", "name": "call-member",
         "input": {"member": name, "task": "write it out in full"}}
        for n, name in enumerate(PEERS)]}
    entry(folder / "lead", [calls, text_response("waiting on my peers"),
                            text_response("all done")])
    for name in PEERS:
        peer(folder / name, [text_response(LONGER)], driver_config=STREAM)
    write_roster(folder, roster_text("lead", {"lead": PEERS}))
    return folder


def chain_team(folder: Path) -> Path:
    """Measure 3's formation: lead → coder → reviewer; coder calls reviewer once per question,
    and each of reviewer's tasks asks one."""
    call = call_response("call-member", {"member": "coder", "task": "fix it"}, "c1")
    entry(folder / "lead", [call, text_response("coder has it"), text_response("done")],
          max_turns=4)
    review = call_response("call-member", {"member": "reviewer", "task": "review it"}, "c1")
    peer(folder / "coder", [review, text_response("reviewer has it")] * (QUESTIONS + 2)
         + [text_response("fixed")], calls=True, max_turns=4 * QUESTIONS)
    asks = [call_response("ask", {"q": "ship it?"}, "q"), text_response("reviewed")]
    peer(folder / "reviewer", asks * (QUESTIONS + 2), tools={"ask": ASK_TOOL},
         max_turns=4 * QUESTIONS, lifecycle={**SLEEP, "input_timeout_secs": 300})
    write_roster(folder, roster_text("lead", {"lead": ("coder",), "coder": ("reviewer",)}))
    return folder


# -- processes --------------------------------------------------------------------------------
class Proc:
    """A murmur-tui process whose stdout is read line by line as it comes, each line noted with
    the monotonic time it arrived."""

    def __init__(self, argv: list[str], home: Path, cwd: Path, nice: bool = False) -> None:
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            (["nice", "-n", "10"] if nice else []) + [sys.executable, "-m", "tui", *argv],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
            env={**os.environ, "MURMUR_HOME": str(home)}, cwd=cwd)
        self.lines: list[tuple[float, str]] = []
        self.changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for raw in iter(self.process.stdout.readline, b""):
            with self.changed:
                self.lines.append((time.monotonic(), raw.decode("utf-8", "replace")))
                self.changed.notify_all()
        with self.changed:
            self.changed.notify_all()

    def first(self, test: Any, within: float = 120.0) -> tuple[float, dict[str, Any]]:
        """The first JSON line `test` accepts, and when it came."""
        deadline = time.monotonic() + within
        with self.changed:
            while True:
                for at, line in self.lines:
                    if line.startswith("{"):
                        found = json.loads(line)
                        if test(found):
                            return at, found
                if self.process.poll() is not None and self.process.stdout is not None \
                        and self.process.stdout.closed:
                    break
                if not self.changed.wait(max(0.0, deadline - time.monotonic())) and \
                        time.monotonic() > deadline:
                    break
        raise SystemExit(f"no such line from {self.process.args!r}: " +
                         "".join(line for _, line in self.lines[-10:]))

    def end(self) -> None:
        """SIGTERM (a launcher ends its members), then SIGKILL; and every member's group."""
        groups = [p["pid"] for _, line in self.lines if line.startswith('{"entry"')
                  for p in json.loads(line)["peers"]]
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(30)
        for group in groups:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGKILL)


def turn_started(line: dict[str, Any]) -> bool:
    return line.get("event") == "TurnStarted"


def ready(line: dict[str, Any]) -> bool:
    return "url" in line and "session_id" in line and "event" not in line


def parallel(team: Path, home: Path) -> tuple[float, float]:
    """To the formation line (every peer's door answers), and to the entry's first turn."""
    launcher = Proc(["launch", "--roster", str(team), "--headless", "--json", "--task", "go"],
                    home, REPO)
    try:
        peers, _ = launcher.first(lambda line: "formation_id" in line)
        at, _ = launcher.first(turn_started)
        return peers - launcher.started, at - launcher.started
    finally:
        launcher.end()


def sequential(team: Path, home: Path, run: int) -> float:
    started = time.monotonic()
    procs: list[Proc] = []
    try:
        for name in PEERS:
            workdir = home / "sequential" / f"{run}-{name}"
            workdir.mkdir(parents=True)
            procs.append(Proc(["launch", str(team / name), "--headless", "--serve",
                               "127.0.0.1:0", "--json", "--workdir", str(workdir)], home, REPO))
            procs[-1].first(ready)
        lead = Proc(["launch", str(team / "lead"), "--headless", "--json", "--task", "go"],
                    home, team)
        procs.append(lead)
        at, _ = lead.first(turn_started)
        return at - started
    finally:
        for proc in procs:
            proc.end()


def launches(base: Path) -> dict[str, Any]:
    team = launch_team(base / "launch-team")
    home = base / "launch-home"
    fast: list[float] = []
    doors: list[float] = []
    slow: list[float] = []
    for run in range(RUNS):
        peers, entry_turn = parallel(team, home)
        fast.append(entry_turn)
        doors.append(peers)
        slow.append(sequential(team, home, run))
    p, s = statistics.median(fast), statistics.median(slow)
    return {"launch_parallel_s": round(p, 2), "launch_sequential_s": round(s, 2),
            "launch_ratio": round(s / p, 2),
            "launch_parallel_runs_s": [round(x, 2) for x in fast],
            # of which: to the formation line, every peer's door up and answering
            "launch_parallel_peers_up_s": round(statistics.median(doors), 2),
            "launch_sequential_runs_s": [round(x, 2) for x in slow]}


# -- the fleet --------------------------------------------------------------------------------
class Timed(FleetApp):
    """The fleet app, noting when each row (a session's, or a formation's `frm:…`) is first
    drawn under Needs you."""

    needs_at: dict[str, float]

    def _drain(self) -> None:
        super()._drain()
        now = time.monotonic()
        under = False
        for key in self.fleet.lines:
            if key.startswith("group:"):
                under = key == "group:needs"
            elif under:
                self.needs_at.setdefault(key, now)


def timed(home: Path) -> Timed:
    app = Timed(home)
    app.needs_at = {}
    return app


def working(app: FleetApp, count: int) -> bool:
    return sum(s.group == "working" and s.connection == "live"
               for s in app.sessions.values()) >= count


async def lag_over(app: Any, pilot: Any, seconds: float = 10.0) -> LagTicker:
    ticker = LagTicker()
    ticker.start(app)
    await pilot.pause(1.0)
    ticker.reset()
    await asyncio.sleep(seconds)
    return ticker


async def formations_fleet(base: Path) -> dict[str, Any]:
    home = base / "fleet-home"
    launchers = [Proc(["launch", "--roster", str(streaming_team(base / f"team{n}")),
                       "--headless", "--json", "--serve", "127.0.0.1:0", "--task", "go"],
                      home, REPO, nice=True) for n in range(3)]
    try:
        for launcher in launchers:
            launcher.first(lambda line: "formation_id" in line, within=180)
        app = timed(home)
        async with app.run_test(size=(160, 48)) as pilot:
            await wait(lambda: len(app.sessions) == 15 and working(app, 12), within=180)
            members = sum(bool(s.formation_id) for s in app.sessions.values())
            ticker = await lag_over(app, pilot)
            still = sum(s.group == "working" for s in app.sessions.values())
        worst, p99 = ticker.worst_ms, ticker.p99_ms
        return {"fleet_sessions": len(app.sessions), "fleet_members": members,
                "fleet_working_at_end": still, "fleet_worst_lag_ms": worst,
                "fleet_p99_lag_ms": p99}
    finally:
        for launcher in launchers:
            launcher.end()


def plain_capsule(root: Path, streams: bool) -> Path:
    return write_capsule(root, [text_response(LONGER)] * 2 if streams else [text_response("ok")],
                         name=root.name, model="m", shell=(), lifecycle=SLEEP,
                         driver_config=STREAM if streams else None)


def start_served(roots: list[Path], base: Path, home: Path) -> list[Served]:
    out = [Served(root, home, base / f"{root.name}.log") for root in roots]
    deadline = time.monotonic() + 180
    while not all(s.ready() for s in out):
        if time.monotonic() > deadline:
            raise SystemExit("sessions did not start")
        time.sleep(0.1)
    return out


async def plain_fleet(base: Path) -> dict[str, Any]:
    home = base / "plain-home"
    roots = [plain_capsule(base / f"plain{n}", n < 12) for n in range(15)]
    served = start_served(roots, base, home)
    try:
        app = timed(home)
        async with app.run_test(size=(160, 48)) as pilot:
            await wait(lambda: len(app.sessions) == 15 and all(
                s.connection == "live" for s in app.sessions.values()), within=180)
            for door in served[:12]:
                await asyncio.to_thread(door.send, "write it out in full")
            await wait(lambda: working(app, 12), within=60)
            ticker = await lag_over(app, pilot)
        return {"plain_sessions": len(served), "plain_worst_lag_ms": ticker.worst_ms,
                "plain_p99_lag_ms": ticker.p99_ms}
    finally:
        for door in served:
            door.close()


# -- a deep member's question -----------------------------------------------------------------
def asking(rpc: Any, task_id: str) -> tuple[float, bool]:
    """When the task is first seen asking (GetTask every 2 ms), and whether it already asked at
    the first read: then it asked earlier than measured, and the time is not kept."""
    first = True
    while True:
        task = rpc("GetTask", {"id": task_id})["result"]
        if task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED":
            return time.monotonic(), first
        first = False
        time.sleep(0.002)


class Door:
    """A member's door spoken to with the operator's token from its running record."""

    def __init__(self, home: Path, peer: dict[str, Any]) -> None:
        kept = json.loads((home / "running" / f"{peer['session_id']}.json").read_text())
        self.client = httpx.Client(base_url=peer["url"], timeout=30, trust_env=False,
                                   headers={**V1, "Authorization": f"Bearer {kept['door_token']}"})
        self.trace = Path(peer["workdir"]) / ".murmur" / peer["session_id"] / "trace.jsonl"
        self.read = 0  # how far the trace has been read

    def rpc(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        return dict(self.client.post("/", json=body).json())

    def next_task(self) -> str:
        """The id of the next task to start at this member (its trace's next `task_start`)."""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.trace.exists():
                with self.trace.open("rb") as handle:
                    handle.seek(self.read)
                    more = handle.read()
                whole = more[: more.rfind(b"\n") + 1]
                self.read += len(whole)
                for line in whole.splitlines():
                    if b'"task_start"' in line:
                        return str(json.loads(line)["task_id"])
            time.sleep(0.002)
        raise SystemExit(f"no new task at {self.trace}")

    def answer(self, task_id: str) -> None:
        task = self.rpc("GetTask", {"id": task_id})["result"]
        message = {"messageId": f"m{time.monotonic_ns()}", "role": "ROLE_USER",
                   "parts": [{"text": "yes"}], "taskId": task_id,
                   "contextId": task["contextId"]}
        assert "result" in self.rpc("SendMessage", {"message": message})


def ms(how: Any, values: list[float]) -> float | None:
    return round(how(values) * 1000, 1) if values else None


async def questions(base: Path) -> dict[str, Any]:
    home = base / "needs-home"
    launcher = Proc(["launch", "--roster", str(chain_team(base / "chain")), "--headless",
                     "--json", "--serve", "127.0.0.1:0", "--task", "go"], home, REPO,
                    nice=True)
    asks = [call_response("ask", {"q": "go on?"}, "q"), text_response("thanks")] * QUESTIONS
    root = write_capsule(base / "plain-ask", asks, name="plain-ask", model="m", shell=(),
                         tools={"ask": ASK_TOOL},
                         extra="lifecycle:\n  task_acceptance: queue\n  after_task: sleep\n"
                               "  input_timeout_secs: 300\n")
    [plain] = start_served([root], base, home)
    try:
        _, line = launcher.first(lambda found: "formation_id" in found, within=180)
        row = f"frm:{line['formation_id']}"
        reviewer = Door(home, next(p for p in line["peers"] if p["name"] == "reviewer"))
        app = timed(home)
        deep: list[float] = []
        flat: list[float] = []
        unseen: list[float] = []  # questions already open at the first GetTask: not kept
        plain_unseen: list[float] = []
        blockers: set[str] = set()
        async with app.run_test(size=(160, 48)):
            await wait(lambda: len(app.sessions) == 4 and all(
                s.connection == "live" for s in app.sessions.values()), within=180)
            for _ in range(QUESTIONS):
                # the formation's: reviewer's next task (coder's next call) asks
                task_id = await asyncio.to_thread(reviewer.next_task)
                app.needs_at.pop(row, None)
                asked, late = await asyncio.to_thread(asking, reviewer.rpc, task_id)
                await wait(lambda: row in app.needs_at, within=30)
                shown = app.fleet.lines[row].formation
                assert shown is not None and shown.blocker is not None
                blockers.add(shown.blocker.member)
                (unseen if late else deep).append(app.needs_at[row] - asked)
                await asyncio.to_thread(reviewer.answer, task_id)
                await wait(lambda: app.fleet.lines[row].formation is not None and
                           app.fleet.lines[row].formation.group != "needs")  # type: ignore
                # the plain session's
                app.needs_at.pop(plain.session_id, None)
                task = await asyncio.to_thread(plain.send, "ask")
                asked, late = await asyncio.to_thread(asking, plain.rpc, task["id"])
                await wait(lambda: plain.session_id in app.needs_at, within=30)
                (plain_unseen if late else flat).append(app.needs_at[plain.session_id] - asked)
                await asyncio.to_thread(plain.send, "yes", taskId=task["id"],
                                        contextId=task["contextId"])
                await wait(lambda: app.sessions[plain.session_id].group != "needs")
        d, f = ms(statistics.median, deep), ms(statistics.median, flat)
        return {"needs_you_ms": d, "plain_needs_you_ms": f,
                "needs_you_ratio": round(d / f, 2) if d is not None and f else None,
                "needs_you_worst_ms": ms(max, deep), "plain_needs_you_worst_ms": ms(max, flat),
                "questions_each": QUESTIONS, "needs_you_kept": len(deep),
                "plain_needs_you_kept": len(flat), "needs_you_blocker": sorted(blockers)}
    finally:
        launcher.end()
        plain.close()


def main() -> None:
    parts = sys.argv[1:] or ["launch", "fleet", "needs"]
    result: dict[str, Any] = {"load_average": [round(x, 2) for x in os.getloadavg()]}
    goals: dict[str, bool] = {}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        if "launch" in parts:
            result.update(launches(base))
            goals["launch_parallel_under_3_s"] = result["launch_parallel_s"] < 3.0
        if "fleet" in parts:
            result.update(asyncio.run(formations_fleet(base)))
            result.update(asyncio.run(plain_fleet(base)))
            plain = result["plain_worst_lag_ms"]
            result["lag_ratio"] = round(result["fleet_worst_lag_ms"] / plain, 2) if plain else None
            goals["fleet_worst_lag_under_50_ms"] = result["fleet_worst_lag_ms"] < 50
        if "needs" in parts:
            result.update(asyncio.run(questions(base)))
            goals["needs_you_under_300_ms"] = (result["needs_you_ms"] or 1e9) < 300
    result["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    result["goals_met"] = goals
    print(json.dumps(result))


if __name__ == "__main__":
    threading.excepthook = lambda args: None  # a watcher thread torn down at exit says nothing
    main()
