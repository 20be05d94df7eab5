"""murmur.yaml -> Capsule: defaults, every block, and refusals that name file, key and line."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tui.core.manifest import MIB, ManifestError, load_capsule, parse_capsule
from tui.core.paths import demo_capsule

FILE = Path("/capsules/demo/murmur.yaml")

MINIMAL = """\
name: demo
version: "1.0.0"
artifacts:
  - name: drv
    runtime: driver
    builtin: scripted
    config: {script: s.yaml}
inference:
  model: m1
  driver: {artifact: drv}
"""


def refused(text: str) -> ManifestError:
    with pytest.raises(ManifestError) as info:
        parse_capsule(FILE, textwrap.dedent(text))
    return info.value


def test_minimal_manifest_gets_murmur_defaults() -> None:
    capsule = parse_capsule(FILE, MINIMAL)
    assert capsule.name == "demo" and capsule.version == "1.0.0"
    assert capsule.inference is not None
    assert capsule.inference.max_turns == 10
    assert capsule.inference.max_tokens == 8192
    assert capsule.inference.compaction.threshold == 0.98
    assert capsule.inference.retry.max_attempts == 3
    assert capsule.inference.retry.initial_backoff_ms == 500
    assert capsule.inference.retry.max_backoff_ms == 8000
    assert capsule.lifecycle.max_task_reopens == 1
    assert capsule.lifecycle.conversation == "stateless"
    assert capsule.lifecycle.task_acceptance == "single"
    assert capsule.lifecycle.input_timeout_secs is None
    assert capsule.context.record is True
    assert capsule.record_store == "demo"
    assert capsule.trace.capture == "meta"
    assert capsule.capabilities.limits.memory_bytes == 512 * MIB
    assert capsule.driver is not None and capsule.driver.builtin == "scripted"
    assert capsule.warnings == ()


def test_full_manifest_reads_every_block(tmp_path: Path) -> None:
    (tmp_path / "prompt.md").write_text("Be brief.\n", encoding="utf-8")
    text = textwrap.dedent("""\
        name: repo-helper
        version: "0.1.0"
        artifacts:
          - name: murmur-driver-anthropic
            version: "1.0.0"
            runtime: driver
            gateway:
              endpoint: https://api.anthropic.com
              api_key: ${ANTHROPIC_API_KEY}
            config: {prompt_cache: enabled}
          - name: murmur-hook-recall
            version: "0.1.0"
            runtime: hook
            on_overflow: block
            capabilities:
              conversation: {read: true}
              filesystem: {scope: notes}
        capabilities:
          network: {allow: [https://api.github.com]}
          filesystem: {read_only: [tests], scope: src}
          shell: {allow: [bash, git]}
          env: {allow: [LANG]}
          limits: {memory_bytes: 1048576, deadline_seconds: 30}
        context:
          max_tokens: 200000
          record: off
          record_store: repo
          retain: {max_messages: 2000, max_age: 30d}
          images: {max_bytes: 1000}
        inference:
          model: claude-opus-4-5
          max_turns: 25
          max_tokens: 4096
          driver: {artifact: murmur-driver-anthropic, config: {temperature: 0}}
          system_prompt_file: prompt.md
          compaction: {threshold: 0.85, model: small, dump_summaries: true}
          retry: {max_attempts: 5, initial_backoff_ms: 100, max_backoff_ms: 2000}
        lifecycle:
          input_timeout_secs: 300
          conversation: threaded
          max_task_reopens: 2
          task_acceptance: queue
        trace: {capture: content}
        """)
    capsule = parse_capsule(tmp_path / "murmur.yaml", text)
    assert capsule.warnings == ()
    driver = capsule.driver
    assert driver is not None and driver.gateway is not None
    assert driver.gateway.endpoint == "https://api.anthropic.com"
    assert driver.gateway.api_key == "${ANTHROPIC_API_KEY}"
    assert driver.config == {"prompt_cache": "enabled"}
    hook = capsule.artifact("murmur-hook-recall")
    assert hook is not None and hook.capabilities is not None
    assert hook.capabilities.conversation_read is True
    assert hook.capabilities.filesystem_scope == "notes"
    assert hook.on_overflow == "block"
    caps = capsule.capabilities
    assert caps.shell_allow == ("bash", "git")
    assert caps.network_allow == ("https://api.github.com",)
    assert caps.filesystem_read_only == ("tests",) and caps.filesystem_scope == "src"
    assert caps.limits.memory_bytes == 1048576 and caps.limits.deadline_seconds == 30
    assert capsule.context.record is False and capsule.record_store == "repo"
    assert capsule.context.retain is not None
    assert capsule.context.retain.max_age_seconds == 30 * 86400
    assert capsule.context.images_max_bytes == 1000
    inference = capsule.inference
    assert inference is not None
    assert inference.system_prompt == "Be brief.\n"
    assert inference.driver_config == {"temperature": 0}
    assert inference.compaction.threshold == 0.85 and inference.compaction.dump_summaries
    assert inference.retry.max_attempts == 5
    assert capsule.lifecycle.input_timeout_secs == 300
    assert capsule.lifecycle.conversation == "threaded"
    assert capsule.trace.capture == "content"


def test_unknown_keys_are_warned_with_their_line_never_refused() -> None:
    capsule = parse_capsule(FILE, MINIMAL + "colour: blue\ninference_extra: 1\n")
    warnings = [str(w) for w in capsule.warnings]
    assert f"{FILE}:11: colour: unknown key, ignored [W-SEC-019]" in warnings
    assert any("inference_extra" in w and ":12:" in w for w in warnings)


def test_nested_unknown_key_is_warned_with_its_path() -> None:
    capsule = parse_capsule(FILE, MINIMAL + "  temprature: 0.2\n")
    assert [w.key for w in capsule.warnings] == ["inference.temprature"]
    assert capsule.warnings[0].line == 11


def test_wrong_type_names_file_key_and_line() -> None:
    error = refused(MINIMAL + "  max_turns: ten\n")
    assert str(error) == f"{FILE}:11: inference.max_turns: expected an integer, got 'ten'"


def test_missing_required_key_is_named() -> None:
    error = refused(MINIMAL.replace('version: "1.0.0"\n', ""))
    assert len(error.problems) == 1
    assert error.problems[0].key == "version"
    assert "required" in error.problems[0].message


def test_missing_model_is_named_at_the_inference_block() -> None:
    error = refused(MINIMAL.replace("  model: m1\n", ""))
    assert [(p.key, p.line) for p in error.problems] == [("inference.model", 8)]


def test_a_number_where_a_string_belongs_suggests_quoting() -> None:
    error = refused(MINIMAL.replace('version: "1.0.0"', "version: 1.0"))
    assert 'quote it: version: "1.0"' in str(error)
    assert error.problems[0].line == 2


@pytest.mark.parametrize("store", ['".."', '"a/b"', '".hidden"', '""'])
def test_bad_record_store_segment_is_refused_naming_the_field(store: str) -> None:
    error = refused(MINIMAL + f"context:\n  record_store: {store}\n")
    problem = error.problems[0]
    assert problem.key == "context.record_store"
    assert problem.line == 12
    assert problem.code == "E-CAP-011"
    assert "single path segment" in problem.message


def test_unreadable_yaml_names_the_line() -> None:
    error = refused("name: demo\nversion: [1, 2\ninference: {\n")
    assert error.problems[0].file == FILE
    assert error.problems[0].line is not None
    assert "not valid YAML" in str(error)


def test_a_list_at_the_top_is_refused() -> None:
    error = refused("- name: demo\n")
    assert "expected a mapping" in str(error)


def test_several_problems_are_all_reported_in_line_order() -> None:
    error = refused(MINIMAL + "  max_tokens: -3\nlifecycle:\n  conversation: forked\n")
    assert [p.key for p in error.problems] == ["inference.max_tokens", "lifecycle.conversation"]
    assert "threaded" in error.problems[1].message


def test_driver_must_name_a_driver_entry() -> None:
    error = refused(MINIMAL.replace("artifact: drv", "artifact: nope"))
    assert error.problems[0].key == "inference.driver.artifact"
    assert "'nope'" in error.problems[0].message and "drv" in error.problems[0].message


def test_wasm_driver_needs_a_gateway() -> None:
    text = MINIMAL.replace("    builtin: scripted\n    config: {script: s.yaml}\n",
                           '    version: "1.0.0"\n')
    error = refused(text)
    assert "gateway" in str(error)


def test_unknown_builtin_driver_lists_the_builtins() -> None:
    error = refused(MINIMAL.replace("builtin: scripted", "builtin: telepathy"))
    assert "built-in: scripted" in str(error)


def test_removed_inference_endpoint_points_at_the_gateway() -> None:
    error = refused(MINIMAL + "  endpoint: https://x\n")
    assert error.problems[0].code == "E-MAN-003"
    assert "gateway" in error.problems[0].message


def test_system_prompt_file_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ManifestError) as info:
        parse_capsule(tmp_path / "murmur.yaml", MINIMAL + "  system_prompt_file: gone.md\n")
    assert info.value.problems[0].code == "E-RUN-009"
    assert "gone.md" in str(info.value)


def test_system_prompt_and_file_together_are_refused() -> None:
    error = refused(MINIMAL + "  system_prompt: hi\n  system_prompt_file: p.md\n")
    assert "not both" in str(error)


def test_inline_system_prompt_is_trimmed() -> None:
    capsule = parse_capsule(FILE, MINIMAL + "  system_prompt: |\n    Be kind.\n\n")
    assert capsule.inference is not None and capsule.inference.system_prompt == "Be kind."


def test_record_accepts_yaml_on_and_off() -> None:
    off = parse_capsule(FILE, MINIMAL + "context:\n  record: off\n")
    assert off.context.record is False
    on = parse_capsule(FILE, MINIMAL + "context:\n  record: 'on'\n")
    assert on.context.record is True


def test_empty_retain_block_is_refused() -> None:
    error = refused(MINIMAL + "context:\n  retain: {}\n")
    assert error.problems[0].key == "context.retain"


def test_empty_shell_allow_is_refused() -> None:
    error = refused(MINIMAL + "capabilities:\n  shell:\n    allow: []\n")
    assert error.problems[0].key == "capabilities.shell.allow"


def test_filesystem_scope_must_stay_inside_the_workdir() -> None:
    error = refused(MINIMAL + "capabilities:\n  filesystem:\n    scope: ../up\n")
    assert error.problems[0].code == "E-CAP-002"


def test_hook_grant_block_requires_the_read_boolean() -> None:
    text = MINIMAL.replace("artifacts:\n", "artifacts:\n  - name: h\n    version: '1'\n"
                           "    runtime: hook\n    capabilities:\n      conversation: {}\n")
    error = refused(text)
    assert error.problems[0].key == "artifacts[0].capabilities.conversation.read"


def test_capsule_wide_conversation_grant_is_inert_and_warned() -> None:
    capsule = parse_capsule(FILE, MINIMAL + "capabilities:\n  conversation: {read: true}\n")
    assert capsule.capabilities.conversation_read is False
    assert [w.code for w in capsule.warnings] == ["W-SEC-016"]


def test_artifact_names_follow_murmur_rules() -> None:
    error = refused(MINIMAL.replace("name: drv", "name: Drv_1"))
    assert "is not an artifact name" in str(error)


def test_duplicate_artifact_names_are_refused() -> None:
    text = MINIMAL + "  max_turns: 3\n"
    text = text.replace("artifacts:\n", "artifacts:\n  - name: drv\n    version: '1'\n")
    error = refused(text)
    assert "declared twice" in str(error)


def test_threshold_must_be_a_fraction() -> None:
    error = refused(MINIMAL + "  compaction:\n    threshold: 1.5\n")
    assert error.problems[0].key == "inference.compaction.threshold"


def test_capsule_name_must_be_a_segment_when_it_names_the_record() -> None:
    error = refused(MINIMAL.replace("name: demo", "name: my/capsule"))
    assert error.problems[0].code == "E-CAP-011"
    fine = parse_capsule(FILE, MINIMAL.replace("name: demo", "name: my/capsule") +
                         "context:\n  record_store: mine\n")
    assert fine.record_store == "mine"


def test_missing_manifest_file_is_a_clear_refusal(tmp_path: Path) -> None:
    with pytest.raises(ManifestError) as info:
        load_capsule(tmp_path)
    assert "murmur.yaml" in str(info.value) and "no such file" in str(info.value)


def test_bundled_demo_capsule_loads_cleanly() -> None:
    capsule = load_capsule(demo_capsule())
    assert capsule.name == "murmur-demo"
    assert capsule.warnings == ()
    assert capsule.capabilities.shell_allow == ("bash",)
