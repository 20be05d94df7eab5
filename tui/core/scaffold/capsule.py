"""`murmur-tui new NAME`: the files of one fresh capsule, which runs offline at once.

The capsule is driven by murmur-tui's built-in scripted driver (its `script.yaml` is two model
turns: a look at the workdir with `ls`, then an answer), ships its own `task.md` so a bare
`murmur-tui launch NAME` has a task, and a `.gitignore` for the session folders it writes
beside itself (`workdir/`). Its manifest says in comments how to give it a real model.
"""

from __future__ import annotations

from tui.core.scaffold.names import check_names

VERSION = "0.1.0"

MANIFEST = """\
# {name}: a capsule made by `murmur-tui new`. It runs offline as it is:
#   murmur-tui launch {name}              the supervisor screen
#   murmur-tui launch {name} --headless   one line per event, for scripts
# Every key is described in murmur-tui's docs/manifest.md (and Murmur's manifest reference).

name: {name}                 # the capsule's artifact name
version: "0.1.0"             # its version; quoted, as a version is text

artifacts:
  # The model: murmur-tui's built-in scripted driver replays script.yaml, one response a
  # model turn, so the capsule runs with no model and no key. For a real model, replace the
  # entry with a provider's (docs/providers.md), for example:
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

capabilities:
  shell:
    allow: [ls]              # the programs the model may run: one tool a program

inference:
  model: scripted            # the model's name, as the driver is told it
  max_turns: 4               # the most model turns one task may take
  driver:
    artifact: driver         # the artifacts entry that answers
  system_prompt: |
    You are {name}. Look before you answer, and answer briefly.

lifecycle:
  task_acceptance: single    # one task: --task, else this folder's task.md
  after_task: exit           # the session ends with its task
"""

SCRIPT = """\
# What the scripted driver answers, one item a model turn, in order: each is a response as
# a Murmur driver returns it (stop_reason, content blocks, optional usage). Edit it to
# rehearse a conversation, or give the capsule a real model (murmur.yaml says how).

- stop_reason: tool_call
  content:
    - type: text
      text: Let me look at the workdir first.
    - type: tool_call
      id: call_look_1
      name: ls                 # a program capabilities.shell.allow lets the model run
      input:
        command: "-A"

- stop_reason: end_turn
  content:
    - type: text
      text: >-
        I am {name}, a capsule made by murmur-tui new. The listing above is my workdir,
        where my commands run. My answers come from script.yaml until murmur.yaml names a
        real model.
"""

TASK = "Look at your workdir and say what you are.\n"

GITIGNORE = """\
# Each session's files (trace.jsonl, out/, logs/), written beside the capsule.
workdir/
"""


def capsule_files(name: str) -> dict[str, str]:
    """The capsule's files, path (relative to the capsule folder) -> text; E-NEW-002 when
    `name` is not an artifact name."""
    check_names([name])
    return {
        "murmur.yaml": MANIFEST.replace("{name}", name),
        "script.yaml": SCRIPT.replace("{name}", name),
        "task.md": TASK,
        ".gitignore": GITIGNORE,
    }
