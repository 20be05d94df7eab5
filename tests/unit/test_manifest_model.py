"""The manifest's classes are the one place its defaults and choices are written: what a manifest
that leaves a key out gets, what a closed-set key allows, and how a refusal is raised."""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path
from typing import Any, get_args

import pytest

from tests.conftest import run_cli
from tui.core.errors import ManifestError, MurmurTuiError, Where, YamlError
from tui.core.manifest import model
from tui.core.manifest.located_yaml import read
from tui.core.manifest.reader import load_capsule, parse_capsule

FILE = Path("/capsules/demo/murmur.yaml")

# Every block present, none of the defaulted keys set: the reader, not the class, fills them.
EMPTY_BLOCKS = """\
name: demo
version: "1.0.0"
artifacts:
  - name: drv
    runtime: driver
    builtin: openai
    gateway: {endpoint: "http://127.0.0.1:9/v1"}
    config: {}
capabilities:
  limits: {}
context:
  images: {}
inference:
  model: m1
  driver: {artifact: drv}
  compaction: {}
  retry: {}
lifecycle: {}
trace: {}
"""

NO_BLOCKS = """\
name: demo
version: "1.0.0"
artifacts:
  - {name: drv, runtime: driver, builtin: scripted, config: {script: s.yaml}}
inference:
  model: m1
  driver: {artifact: drv}
"""


def field_default(item: dataclasses.Field[Any]) -> Any:
    if item.default is not dataclasses.MISSING:
        return item.default
    if item.default_factory is not dataclasses.MISSING:
        return item.default_factory()
    return dataclasses.MISSING


def read_values(capsule: model.Capsule) -> dict[type, Any]:
    assert capsule.inference is not None and capsule.driver is not None
    return {
        model.Lifecycle: capsule.lifecycle,
        model.ContextSettings: capsule.context,
        model.Inference: capsule.inference,
        model.Limits: capsule.capabilities.limits,
        model.Compaction: capsule.inference.compaction,
        model.Retry: capsule.inference.retry,
        model.TraceSettings: capsule.trace,
    }


@pytest.mark.parametrize("text", [EMPTY_BLOCKS, NO_BLOCKS], ids=["empty-blocks", "no-blocks"])
def test_every_defaulted_field_reads_as_its_class_default(text: str) -> None:
    capsule = parse_capsule(FILE, text)
    checked = 0
    for cls, value in read_values(capsule).items():
        for item in dataclasses.fields(cls):
            default = field_default(item)
            if default is dataclasses.MISSING:
                continue
            assert getattr(value, item.name) == default, f"{cls.__name__}.{item.name}"
            checked += 1
    assert checked >= 25  # the classes above hold this many defaulted fields


def test_a_built_in_http_driver_gets_the_http_settings_defaults() -> None:
    entry = parse_capsule(FILE, EMPTY_BLOCKS).driver
    assert entry is not None and entry.http == model.HttpSettings()
    assert entry.on_overflow == next(item.default for item in dataclasses.fields(model.Artifact)
                                     if item.name == "on_overflow")


CHOICES = [
    # (block to append, key path, line of the key, the Literal it reads)
    ("lifecycle:\n  conversation: sometimes\n", "lifecycle.conversation", 9,
     model.Conversation),
    ("lifecycle:\n  task_acceptance: many\n", "lifecycle.task_acceptance", 9,
     model.TaskAcceptance),
    ("lifecycle:\n  after_task: nap\n", "lifecycle.after_task", 9, model.AfterTask),
    ("trace:\n  capture: everything\n", "trace.capture", 9, model.Capture),
    ("  transport: carrier-pigeon\n", "inference.transport", 8, model.Transport),
]


@pytest.mark.parametrize(("block", "key", "line", "alias"), CHOICES,
                         ids=[key for _, key, _, _ in CHOICES])
def test_a_bad_choice_names_file_line_key_and_the_allowed_values(
    block: str, key: str, line: int, alias: Any
) -> None:
    with pytest.raises(ManifestError) as info:
        parse_capsule(FILE, NO_BLOCKS + block)
    bad = block.rsplit(": ", 1)[1].strip()
    allowed = ", ".join(get_args(alias))
    assert str(info.value) == f"{FILE}:{line}: {key}: expected one of {allowed}; got {bad!r}"


def test_every_allowed_choice_is_read_as_itself() -> None:
    for conversation in get_args(model.Conversation):
        for capture in get_args(model.Capture):
            text = NO_BLOCKS + (f"lifecycle:\n  conversation: {conversation}\n"
                                f"trace:\n  capture: {capture}\n")
            capsule = parse_capsule(FILE, text)
            assert (capsule.lifecycle.conversation, capsule.trace.capture) == (conversation,
                                                                               capture)


def test_an_artifact_runtime_and_overflow_outside_their_choices_are_refused() -> None:
    text = NO_BLOCKS.replace("runtime: driver,", "runtime: daemon, on_overflow: spill,")
    with pytest.raises(ManifestError) as info:
        parse_capsule(FILE, text)
    messages = str(info.value)
    assert f"expected one of {', '.join(model.RUNTIMES)}; got 'daemon'" in messages
    assert f"expected one of {', '.join(model.OVERFLOWS)}; got 'spill'" in messages


def test_manifest_error_is_a_murmur_tui_error_with_code_and_place() -> None:
    with pytest.raises(ManifestError) as info:
        parse_capsule(FILE, NO_BLOCKS + "lifecycle:\n  conversation: sometimes\n")
    error = info.value
    assert isinstance(error, MurmurTuiError)
    assert error.code == "E-MANIFEST"
    assert error.where == Where(FILE, 9, "lifecycle.conversation")
    assert str(error) == str(error.problems[0])  # the text says the place once, no code tag


def test_a_manifest_that_is_no_file_is_placed_at_the_file(tmp_path: Path) -> None:
    with pytest.raises(ManifestError) as info:
        load_capsule(tmp_path / "missing")
    assert info.value.where == Where((tmp_path / "missing").resolve(), None, None)
    assert info.value.code == "E-MANIFEST"


def test_yaml_error_is_a_murmur_tui_error_placed_at_its_first_problem(tmp_path: Path) -> None:
    target = tmp_path / "theme.yaml"
    target.write_text("a: 1\nb: [1, 2\n", encoding="utf-8")
    with pytest.raises(YamlError) as info:
        read(target)
    error = info.value
    assert isinstance(error, MurmurTuiError) and error.code == "E-YAML"
    assert error.where is not None and error.where.file == target
    assert error.where.line == error.problem.line and error.where.line is not None
    assert str(error) == "\n".join(str(problem) for problem in error.problems)


def test_the_cli_prints_a_bad_choice_as_before(tmp_path: Path) -> None:
    (tmp_path / "murmur.yaml").write_text(
        textwrap.dedent(NO_BLOCKS) + "lifecycle:\n  conversation: sometimes\n", encoding="utf-8")
    done = run_cli("launch", str(tmp_path), "--headless", "--task", "t")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert (f"the manifest was refused:\n{tmp_path / 'murmur.yaml'}:9: lifecycle.conversation: "
            "expected one of stateless, threaded; got 'sometimes'") in done.stderr
    assert "E-MANIFEST" not in done.stderr
