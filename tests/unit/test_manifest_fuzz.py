"""Hostile manifests: a Capsule or a refusal naming the file and a line, never an exception.

The same mutations drive the hypothesis property (bounded) and a plain random loop that counts
outcomes over many manifests:

    python -m tests.unit.test_manifest_fuzz 6000
"""

from __future__ import annotations

import json
import random
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tui.core.errors import ManifestError
from tui.core.manifest.model import Capsule
from tui.core.manifest.reader import load_capsule

BASE = """\
name: fuzz-capsule
version: "1.0.0"
description: a capsule to break
artifacts:
  - name: model
    runtime: driver
    builtin: openai
    gateway:
      endpoint: http://127.0.0.1:9/v1
      keyless: true
    config:
      stream: false
      read_timeout_s: 30
  - name: search
    version: "0.2.0"
    runtime: tool
    source: tools/search
    config: {depth: 2, roots: [src, docs]}
    capabilities:
      env: {allow: [LANG]}
      limits: {memory_bytes: 1048576, deadline_seconds: 5}
  - name: recall
    version: "0.1.0"
    runtime: hook
    on_overflow: block
    capabilities:
      conversation: {read: true}
capabilities:
  network: {allow: ["https://api.github.com"]}
  filesystem: {read_only: [tests], scope: src}
  shell: {allow: [bash, git]}
  env: {allow: [LANG, TERM]}
  limits: {memory_bytes: 4194304, table_elements: 1000, instances: 10}
context:
  max_tokens: 200000
  record: on
  record_store: fuzz
  retain: {max_messages: 200, max_age: 30d}
  images: {max_bytes: 1000}
  seed_budget: 0.2
inference:
  model: test-model
  max_turns: 5
  max_tokens: 1024
  driver: {artifact: model, config: {temperature: 0}}
  system_prompt_file: prompt.md
  compaction:
    threshold: 0.85
    model: small
    system_prompt: "Summarise."
  retry: {max_attempts: 2, initial_backoff_ms: 10, max_backoff_ms: 20}
  params: {top_p: 0.9}
lifecycle:
  input_timeout_secs: 300
  conversation: threaded
  max_task_reopens: 2
  task_acceptance: queue
  queue_depth: 3
trace: {capture: content}
"""

CONTROL = [chr(c) for c in (*range(0, 9), 11, 12, *range(14, 32), 0x7F, 0x85, 0x9B)] + [
    "\u2028", "\u2029", "\ufeff", "\ufffe", "\x00"]
SCALARS = [
    "~", "null", "true", "off", "yes", "0", "-1", "1e400", ".inf", "-.inf", ".nan", "0x1F",
    "0o17", "1:20:30", "2024-01-01", "2024-01-01T10:00:00Z", "''", '""', "'0'",
    "9" * 5000, "0x" + "f" * 5000, ":".join(["59"] * 3000), '"\\ud800"', '"\\udfff x"',
    '"a\\0b"', '"\\x1b[2J\\x1b[31m"', '"\\e]0;title\\a"', '"/' + "a" * 5000 + '"',
    '"' + "a/" * 3000 + '"', '"' + "x" * 300 + '"', "!!binary aGVsbG8=", "!!set {a, b}",
    "!!omap [a: 1, b: 2]", "!!pairs [a: 1]", "!!timestamp 2001-12-14",
    "!!timestamp nonsense", "!!int abc", "!!float xyz", "!!bool maybe", "!!null x",
    "!!str [1]", "!!python/object:os.system ls", "!!python/name:os.system ''",
    "!unknown tag", "!!map [1]", "!!seq {a: 1}", "!<tag:yaml.org,2002:int> 1",
    "[1, {a: b}, [c]]", "{a: 1, a: 2}", "{? [a] : b}", "{? {a: 1} : b}", "[]", "{}",
    "&x [*x]", "&y {k: *y}", "*undefined", "<<: 1", '"' + "é" * 2000 + '"', "-", "- a",
    "|\n  block\n  text", ">-\n  folded", "? a\n: b",
]


def laughs(depth: int, width: int) -> str:
    lines = ['l0: &l0 "lol"']
    for level in range(1, depth + 1):
        refs = ", ".join(f"*l{level - 1}" for _ in range(width))
        lines.append(f"l{level}: &l{level} [{refs}]")
    return "\n".join(lines) + "\n"


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _value_line(rng: random.Random, lines: list[str]) -> int:
    keyed = [i for i, line in enumerate(lines) if ":" in line]
    return rng.choice(keyed)


def flip_bytes(rng: random.Random, text: str) -> bytes:
    data = bytearray(text.encode("utf-8"))
    for _ in range(rng.randint(1, 8)):
        data[rng.randrange(len(data))] = rng.randrange(256)
    return bytes(data)


def insert_control(rng: random.Random, text: str) -> str:
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(text))
        text = text[:at] + rng.choice(CONTROL) + text[at:]
    return text


def insert_escape(rng: random.Random, text: str) -> str:
    """A double-quoted scalar with an escape YAML turns into a control char or a surrogate."""
    lines = _lines(text)
    index = _value_line(rng, lines)
    key = lines[index].split(":", 1)[0]
    escape = rng.choice(["\\0", "\\ud800", "\\udc00", "\\x07", "\\e", "\\x85", "\\u2028",
                         "\\U0010ffff", "\\x00\\x00"])
    lines[index] = f'{key}: "a{escape}b"\n'
    return "".join(lines)


def deep_nesting(rng: random.Random, text: str) -> str:
    depth = rng.choice([50, 64, 65, 101, 300, 1000, 5000])
    lines = _lines(text)
    index = _value_line(rng, lines)
    key = lines[index].split(":", 1)[0]
    opener, closer = rng.choice([("[", "]"), ("{a: ", "}"), ("[{a: ", "}]")])
    lines[index] = f"{key}: {opener * depth}1{closer * depth}\n"
    if rng.random() < 0.3:  # block style, indented
        block = "".join(" " * (2 * i) + f"k{i}:\n" for i in range(min(depth, 3000)))
        lines.append("deep:\n" + "".join("  " + line for line in block.splitlines(True)))
        lines.append(" " * (2 * min(depth, 3000) + 2) + "v: 1\n")
    return "".join(lines)


def anchors(rng: random.Random, text: str) -> str:
    lines = _lines(text)
    index = _value_line(rng, lines)
    key = lines[index].split(":", 1)[0]
    choice = rng.randrange(6)
    if choice == 0:
        lines[index] = f"{key}: &loop [*loop]\n"
    elif choice == 1:
        lines[index] = f"{key}: &loop {{a: [1, *loop]}}\n"
    elif choice == 2:  # a billion laughs, where the reader walks the value
        bomb = laughs(rng.randint(3, 7), rng.randint(2, 10))
        top = bomb.count("\n") - 1
        lines[index] = f"{key}: *l{top}\n"
        return bomb + "".join(lines)
    elif choice == 3:
        lines[index] = f"{key}: *nowhere\n"
    elif choice == 4:
        lines.insert(0, "shared: &shared {memory_bytes: 1024, stream: true}\n")
        lines[index + 1] = f"{key}: *shared\n"
    else:
        lines.insert(0, "base: &base {a: 1}\n")
        lines[index + 1] = f"{key}: {{<<: *base, b: 2}}\n"
    return "".join(lines)


def duplicate_key(rng: random.Random, text: str) -> str:
    lines = _lines(text)
    index = _value_line(rng, lines)
    lines.insert(index + rng.randint(1, 3), lines[index])
    return "".join(lines)


def huge_string(rng: random.Random, text: str) -> str:
    lines = _lines(text)
    index = _value_line(rng, lines)
    key = lines[index].split(":", 1)[0]
    size = rng.choice([10_000, 100_000, 300_000])
    lines[index] = f"{key}: {rng.choice('ax/é')* size}\n"
    return "".join(lines)


def odd_value(rng: random.Random, text: str) -> str:
    lines = _lines(text)
    index = _value_line(rng, lines)
    key = lines[index].split(":", 1)[0]
    value = rng.choice(SCALARS)
    if "\n" in value:
        indent = len(key) - len(key.lstrip()) + 2
        value = value.replace("\n", "\n" + " " * indent)
    lines[index] = f"{key}: {value}\n"
    return "".join(lines)


def random_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(8 if depth < 4 else 5)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return rng.choice([0, -1, 1, 2**63, 2**64 + 1, -(2**70)])
    if kind == 2:
        return rng.choice([0.0, -0.5, 1e308, float("inf")])
    if kind in (3, 4):
        return "".join(rng.choice("ab/.-_ é\t\\\"'$:{}") for _ in range(rng.randint(0, 12)))
    if kind == 5:
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {str(random_value(rng, depth + 1)): random_value(rng, depth + 1)
            for _ in range(rng.randint(0, 3))}


def random_structure(rng: random.Random, text: str) -> str:
    """A random JSON-shaped value (YAML flow style) in place of some key's value."""
    lines = _lines(text)
    index = _value_line(rng, lines)
    key = lines[index].split(":", 1)[0]
    value = json.dumps(random_value(rng), ensure_ascii=rng.random() < 0.5)
    lines[index] = f"{key}: {value}\n"
    return "".join(lines)


Mutation = Callable[[random.Random, str], "str | bytes"]
MUTATIONS: dict[str, Mutation] = {
    "flip_bytes": flip_bytes, "insert_control": insert_control, "insert_escape": insert_escape,
    "deep_nesting": deep_nesting, "anchors": anchors, "duplicate_key": duplicate_key,
    "huge_string": huge_string, "odd_value": odd_value, "random_structure": random_structure,
}


def mutate(rng: random.Random, rounds: int) -> tuple[bytes, list[str]]:
    text: str | bytes = BASE
    applied: list[str] = []
    for _ in range(rounds):
        name = rng.choice(sorted(MUTATIONS))
        if isinstance(text, bytes):
            text = text.decode("utf-8", errors="replace")
        text = MUTATIONS[name](rng, text)
        applied.append(name)
    data = text if isinstance(text, bytes) else text.encode("utf-8", errors="surrogatepass")
    return data, applied


def _strings_and_json(value: Any) -> None:
    """What the session does with a loaded capsule's values: encode every string as UTF-8,
    write every free-form mapping as JSON."""
    if isinstance(value, str):
        value.encode("utf-8")
    elif isinstance(value, Path):
        str(value).encode("utf-8")
    elif is_dataclass(value) and not isinstance(value, type):
        for item in fields(value):
            _strings_and_json(getattr(value, item.name))
    elif isinstance(value, dict):
        json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")
        for item in value.values():
            _strings_and_json(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _strings_and_json(item)


def _kind(message: str) -> str:
    """A problem's message without its particulars, to count problems by kind."""
    return re.sub(r"'.*?'|\S*/\S*|0x[0-9a-f]+|\d+", "_", message)[:80]


def outcome(folder: Path, data: bytes) -> str:
    """"capsule", "refused", or why the manifest broke the reader."""
    manifest = folder / "murmur.yaml"
    manifest.write_bytes(data)
    try:
        capsule = load_capsule(folder)
    except ManifestError as exc:
        try:
            str(exc).encode("utf-8")
        except UnicodeError:
            return "refusal that cannot be written as UTF-8"
        for problem in [*exc.problems, *exc.warnings]:
            if problem.file != manifest.resolve() or not problem.line or problem.line < 1:
                return "unlocated: " + _kind(problem.message)
        return "refused"
    except Exception as exc:
        return f"crash: {type(exc).__name__}"
    assert isinstance(capsule, Capsule)
    try:
        _strings_and_json(capsule)
    except Exception as exc:
        return f"unusable capsule: {type(exc).__name__}"
    for warning in capsule.warnings:
        if warning.line is None:
            return "unlocated warning: " + _kind(warning.message)
    return "capsule"


def capsule_folder(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "prompt.md").write_text("Be brief.\n", encoding="utf-8")
    return root


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(rng=st.randoms(use_true_random=False), rounds=st.integers(min_value=1, max_value=3))
def test_a_mutated_manifest_loads_or_is_refused_with_file_and_line(
        tmp_path: Path, rng: random.Random, rounds: int) -> None:
    data, applied = mutate(rng, rounds)
    result = outcome(capsule_folder(tmp_path / "capsule"), data)
    assert result in ("capsule", "refused"), f"{applied}: {result}"


SLOW = 2.0  # seconds; a refusal should be immediate


KEYED_LINES = [index for index, line in enumerate(BASE.splitlines()) if ":" in line]
JSON_LIKE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
    | st.binary(max_size=8) | st.dates(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.text(max_size=8) | st.integers(), inner, max_size=4),
    max_leaves=12)


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(line=st.sampled_from(KEYED_LINES), value=JSON_LIKE)
def test_any_value_in_any_key_loads_or_is_refused_with_file_and_line(
        tmp_path: Path, line: int, value: Any) -> None:
    lines = BASE.splitlines(keepends=True)
    key = lines[line].split(":", 1)[0]
    rendered = yaml.safe_dump(value, default_flow_style=True, allow_unicode=False, width=10**6)
    lines[line] = f"{key}: {rendered.removesuffix(chr(10) + '...' + chr(10)).strip()}\n"
    data = "".join(lines).encode("utf-8", errors="surrogatepass")
    result = outcome(capsule_folder(tmp_path / "capsule"), data)
    assert result in ("capsule", "refused"), f"{key}: {value!r}: {result}"


def main(count: int, seed: int = 0) -> int:
    rng = random.Random(seed)
    tally: Counter[str] = Counter()
    by_mutation: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as scratch:
        folder = capsule_folder(Path(scratch) / "capsule")
        for _ in range(count):
            data, applied = mutate(rng, rng.randint(1, 3))
            started = time.monotonic()
            result = outcome(folder, data)
            if result in ("capsule", "refused") and time.monotonic() - started > SLOW:
                result = f"took over {SLOW:.0f} s"
            tally[result] += 1
            if result not in ("capsule", "refused"):
                by_mutation[applied[-1]] += 1
    broken = sum(n for what, n in tally.items() if what not in ("capsule", "refused"))
    print(f"{count} mutated manifests: {tally['capsule']} loaded, {tally['refused']} refused "
          f"with file and line, {broken} broke the reader")
    for what, n in tally.most_common():
        if what not in ("capsule", "refused"):
            print(f"  {n:5d}  {what}")
    for what, n in by_mutation.most_common():
        print(f"  last mutation {what}: {n}")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000))
