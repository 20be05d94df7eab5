"""`murmur-tui new --roster NAME`: a formation of two capsules, as `mur new --roster` writes
one (Murmur's cli.md, "mur new --roster"; spec §7.1), driven offline by scripted drivers.

    NAME/roster.yaml          lead is the entry member; lead may call worker
    NAME/lead/murmur.yaml     capsule NAME-lead: single/exit, network.allow [localhost], bearer
    NAME/worker/murmur.yaml   capsule NAME-worker: queue/sleep, serves peers, bearer

Beyond Murmur's three files: each member's `script.yaml` (lead hands the task to worker with
the runtime-provided `call-member` tool, ends its turn while worker works, and answers with
worker's answer when it arrives; worker answers), lead's `task.md` (the formation's task when
none is given) and a `.gitignore`. The roster names its members by folder (`source:`, a
murmur-tui extension) and shows the installed form Murmur takes (`capsule:` + `version:`) in
comments.
"""

from __future__ import annotations

from tui.core.scaffold.names import check_names

VERSION = "0.1.0"
MEMBERS = ("lead", "worker")

ROSTER = """\
# The formation {name}: two capsules, made by `murmur-tui new --roster`, offline (scripted
# drivers). `murmur-tui doctor {name}` admits it as `mur run --roster` does.
# lead is the entry member: it is given the formation's task, hands it to worker with the
# runtime-provided call-member tool, and answers with what worker sends back.

roster_version: 1            # the roster format (Murmur's roster.yaml, version 1)

members:                     # every capsule of the formation; each runs with its own door
  - name: lead               # a member's name: ^[a-z][a-z0-9-]{0,31}$, unique
    source: lead             # murmur-tui: the capsule folder, relative to this file
    # Installed, the form `mur run --roster` takes, instead of source: (mur has no scripted
    # driver: name a real model, `mur build lead`, `mur install -g` the .mur.zip it writes)
    #   capsule: {name}-lead
    #   version: 0.1.0
    entry: true              # the entry member: started last and given the task; exactly one
  - name: worker
    source: worker           # murmur-tui: the capsule folder, relative to this file
    # Installed:
    #   capsule: {name}-worker
    #   version: 0.1.0

# Who may call whom with call-member; absent or [] means nobody calls anybody. The word
# `all` instead of this list would grant nothing here: `all` pairs only members that both
# serve peers (exports.peer_tasks.accept), and lead does not.
reachability:
  - from: lead
    to: [worker]             # at least one; never lead itself, never the entry member
"""

LEAD = """\
# {name}-lead: the entry member of the formation {name} (../roster.yaml). It is given the
# formation's task, hands it to worker with call-member, and answers with worker's answer.
# Every key is described in murmur-tui's docs/manifest.md (and Murmur's manifest reference).

name: {name}-lead            # the capsule's artifact name: <formation>-<member>
version: "0.1.0"             # its version; quoted, as a version is text

artifacts:
  # The model: murmur-tui's built-in scripted driver replays script.yaml, one response a
  # model turn, so the formation runs with no model and no key. For a real model, replace
  # the entry with a provider's (docs/providers.md), for example:
  #   - name: driver
  #     runtime: driver
  #     builtin: anthropic
  #     gateway:
  #       endpoint: https://api.anthropic.com
  #       api_key: ${ANTHROPIC_API_KEY}
  # and set inference.model to one of its models (claude-haiku-4-5-20251001, say).
  - name: driver
    runtime: driver
    builtin: scripted
    config:
      script: script.yaml    # relative to this folder

inference:
  transport: http            # a driver artifact answers (process: a CLI harness, not here)
  model: scripted            # the model's name, as the driver is told it
  driver:
    artifact: driver         # the artifacts entry that answers
  system_prompt: |
    You are lead, the entry member of the formation {name}. Give the task to worker with
    call-member, end your turn while it works, and when its answer arrives answer with it.

lifecycle:
  task_acceptance: single    # the formation's one task
  after_task: exit           # lead ending ends the formation

capabilities:
  network:
    allow: [localhost]       # call-member reaches worker's door through localhost; without
                             # it every call fails (W-RUN-008)

network:
  authentication:
    scheme: bearer           # a roster with a rule needs every member's door authenticated
"""

WORKER = """\
# {name}-worker: the member lead may call in the formation {name} (../roster.yaml). It waits
# at its door while the formation runs and answers each task a member sends it.
# Every key is described in murmur-tui's docs/manifest.md (and Murmur's manifest reference).

name: {name}-worker          # the capsule's artifact name: <formation>-<member>
version: "0.1.0"             # its version; quoted, as a version is text

artifacts:
  # The model: murmur-tui's built-in scripted driver replays script.yaml (lead's murmur.yaml
  # shows how to name a real model instead).
  - name: driver
    runtime: driver
    builtin: scripted
    config:
      script: script.yaml    # relative to this folder

inference:
  transport: http            # a driver artifact answers (process: a CLI harness, not here)
  model: scripted            # the model's name, as the driver is told it
  driver:
    artifact: driver         # the artifacts entry that answers
  system_prompt: |
    You are worker, a member of the formation {name}. Do the task you are given and answer.

lifecycle:
  task_acceptance: queue     # tasks from other members wait their turn
  after_task: sleep          # it waits at its door while the formation runs

exports:
  peer_tasks:
    accept: true             # it serves peers: the roster's rule calls worker

network:
  authentication:
    scheme: bearer           # a roster with a rule needs every member's door authenticated
"""

# worker's answer; lead's last turn quotes it as it came back ({{member:worker}})
WORKER_ANSWER = "Hello from worker, the member of {name} that lead calls."

LEAD_SCRIPT = """\
# What lead's scripted driver answers, one item a model turn, in order: each is a response as
# a Murmur driver returns it (stop_reason, content blocks, optional usage).

# 1. Hand the task to worker: call-member answers at once (`Called worker: started`).
- stop_reason: tool_call
  content:
    - type: text
      text: I'll give this to worker.
    - type: tool_call
      id: call_member_1
      name: call-member        # runtime-provided: the roster lets lead call worker
      input:
        member: worker
        task: Say hello to the formation {name}, in one sentence.

# 2. End the turn while worker works: the task waits for its answer.
- stop_reason: end_turn
  content:
    - type: text
      text: worker has the task; I'll answer when its answer arrives.

# 3. worker's answer arrives (one user message, fenced member:worker): answer with it. The
#    scripted driver puts what worker said where {{member:worker}} stands.
- stop_reason: end_turn
  content:
    - type: text
      text: "worker answered: {{member:worker}}"
"""

WORKER_SCRIPT = """\
# What worker's scripted driver answers, one item a model turn, in order. Each task a member
# sends takes the next item: add items for more tasks.

- stop_reason: end_turn
  content:
    - type: text
      text: "{answer}"
"""

TASK = "Ask worker to say hello, and tell me what it said.\n"

GITIGNORE = """\
# Each session's files (trace.jsonl, out/, logs/), written beside the capsules.
workdir/
.murmur/
"""


def formation_files(name: str) -> dict[str, str]:
    """The formation's files, path (relative to the formation folder) -> text; E-NEW-002
    when `name`, `name-lead` or `name-worker` is not an artifact name."""
    check_names([name, *(f"{name}-{member}" for member in MEMBERS)])
    answer = WORKER_ANSWER.replace("{name}", name)
    texts = {
        "roster.yaml": ROSTER,
        "lead/murmur.yaml": LEAD,
        "lead/script.yaml": LEAD_SCRIPT,
        "lead/task.md": TASK,
        "worker/murmur.yaml": WORKER,
        "worker/script.yaml": WORKER_SCRIPT,
        ".gitignore": GITIGNORE,
    }
    return {path: text.replace("{answer}", answer).replace("{name}", name)
            for path, text in texts.items()}

