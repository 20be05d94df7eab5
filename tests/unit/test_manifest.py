"""murmur.yaml -> Capsule: defaults, every block, and refusals that name file, key and line."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tui.core.errors import ManifestError, Problem
from tui.core.fs.paths import demo_capsule
from tui.core.manifest.located_yaml import MAX_FILE_BYTES
from tui.core.manifest.model import MIB
from tui.core.manifest.reader import load_capsule, parse_capsule
from tui.core.manifest.yaml_loader import MAX_ALIAS_VALUES, MAX_DEPTH
from tui.core.text.secrets import redact

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


def test_capsule_name_must_be_one_path_segment() -> None:
    # it names the record, and the session's folder under $MURMUR_HOME/workdirs
    error = refused(MINIMAL.replace("name: demo", "name: my/capsule"))
    assert error.problems[0].code == "E-CAP-011"
    error = refused(MINIMAL.replace("name: demo", "name: ../../escape") +
                    "context:\n  record_store: mine\n")
    assert error.problems[0].key == "name" and "workdirs" in error.problems[0].message
    fine = parse_capsule(FILE, MINIMAL + "context:\n  record_store: mine\n")
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


# -- hostile YAML: every problem a refusal naming the file, the line and the key ------------

def only(error: ManifestError) -> Problem:
    assert len(error.problems) == 1, error.problems
    problem = error.problems[0]
    assert problem.file == FILE and problem.line is not None
    return problem


@pytest.mark.parametrize("char", ["\x00", "\x1b", "\x07", "\x7f", "\x9b", "\ufffe"])
def test_a_raw_control_character_is_refused_with_its_line_and_column(char: str) -> None:
    problem = only(refused(MINIMAL.replace("model: m1", f"model: m{char}1")))
    assert problem.line == 9
    assert "column 11" in problem.message and f"U+{ord(char):04X}" in problem.message


@pytest.mark.parametrize("escape", ["\\0", "\\e[2J", "\\x07", "\\ud800", "\\udfff"])
def test_an_escape_that_makes_a_control_character_or_surrogate_names_the_key(
        escape: str) -> None:
    problem = only(refused(MINIMAL.replace("model: m1", f'model: "m{escape}"')))
    assert (problem.key, problem.line) == ("inference.model", 9)
    assert "written as an escape" in problem.message


def test_a_lone_surrogate_in_a_key_is_refused() -> None:
    problem = only(refused(MINIMAL + '  "\\ud83d": 1\n'))
    assert problem.line == 11 and "surrogate" in problem.message


@pytest.mark.parametrize("value", ["!!python/object:os.system ls",
                                   "!!python/object/apply:os.system [ls]",
                                   "!!python/name:os.system ''", "!custom thing",
                                   "!!map [1]", "!<tag:example.com,2000:x> 1"])
def test_tags_outside_plain_data_are_refused_naming_the_key(value: str) -> None:
    problem = only(refused(MINIMAL.replace("model: m1", f"model: {value}")))
    assert (problem.key, problem.line) == ("inference.model", 9)
    assert "is not allowed" in problem.message


@pytest.mark.parametrize("value, shown", [("!!binary aGVsbG8=", "binary data"),
                                          ("!!set {a, b}", "a set"),
                                          ("2024-01-01",
                                           '2024-01-01 (quote it: model: "2024-01-01")'),
                                          ("2024-01-01T10:00:00Z", "2024-01-01 10:00:00"),
                                          ("!!timestamp 2001-12-14", "2001-12-14"),
                                          ("yes", '(quote it: model: "yes")')])
def test_other_yaml_types_where_a_string_belongs_are_typed_problems(value: str,
                                                                    shown: str) -> None:
    problem = only(refused(MINIMAL.replace("model: m1", f"model: {value}")))
    assert (problem.key, problem.line) == ("inference.model", 9)
    assert problem.message.startswith("expected a string, got ") and shown in problem.message


@pytest.mark.parametrize("value", ["!!int abc", "!!float xyz", "!!bool maybe",
                                   "!!timestamp soon", "9" * 5000,
                                   "2024-13-45"])
def test_a_value_that_does_not_match_its_type_is_refused(value: str) -> None:
    problem = only(refused(MINIMAL.replace("max_turns: 10", "").replace(
        "  model: m1", f"  model: m1\n  max_turns: {value}")))
    assert (problem.key, problem.line) == ("inference.max_turns", 10)
    assert "is not a valid" in problem.message


@pytest.mark.parametrize("depth", [65, 1000, 100_000])
def test_deep_flow_nesting_is_refused_at_the_cap(depth: int) -> None:
    problem = only(refused(MINIMAL + f"  params: {{x: {'[' * depth}1{']' * depth}}}\n"))
    assert problem.line == 11 and problem.key.startswith("inference.params.x[0]")
    assert f"deeper than {MAX_DEPTH} levels" in problem.message


def test_deep_block_nesting_is_refused_at_the_cap() -> None:
    lines = "".join(" " * (2 * level) + f"k{level}:\n" for level in range(3000))
    problem = only(refused("name: demo\nversion: '1'\n" + lines))
    assert problem.line == 3 + MAX_DEPTH - 1
    assert problem.key.startswith("k0.k1.k2")


def test_nesting_at_the_cap_is_read() -> None:
    depth = MAX_DEPTH - 4  # the top mapping, inference, params and the 1 count as levels
    capsule = parse_capsule(FILE, MINIMAL + f"  params: {{x: {'[' * depth}1{']' * depth}}}\n")
    assert capsule.inference is not None and "x" in capsule.inference.params


def test_an_alias_cannot_smuggle_nesting_past_the_cap() -> None:
    half = MAX_DEPTH // 2 + 2
    text = (MINIMAL + f"  params:\n    a: &deep {'[' * half}1{']' * half}\n"
            f"    b: {'[' * half}*deep{']' * half}\n")
    problem = only(refused(text))
    assert problem.line == 13 and "*deep" in problem.message


@pytest.mark.parametrize("value", ["&loop [*loop]", "&loop {a: [1, *loop]}",
                                   "&loop {<<: *loop}"])
def test_a_circular_alias_is_refused_naming_its_line(value: str) -> None:
    problem = only(refused(MINIMAL + f"  params: {{x: {value}}}\n"))
    assert problem.line == 11 and "circular alias" in problem.message


def test_a_billion_laughs_is_refused_before_it_expands() -> None:
    bomb = ['  l0: &l0 "lol"']
    bomb += [f"  l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 10)}]" for n in range(1, 10)]
    text = MINIMAL + "  params:\n" + "\n".join("  " + line for line in bomb) + "\n"
    problem = only(refused(text))
    assert f"more than {MAX_ALIAS_VALUES} values" in problem.message
    assert 12 <= (problem.line or 0) <= 20  # the alias that went over, not the end of the file


def test_aliases_within_the_budget_and_merge_keys_work() -> None:
    text = ("name: demo\nversion: '1'\n"
            "base: &limits {memory_bytes: 1048576, deadline_seconds: 5}\n"
            "artifacts:\n"
            "  - {name: drv, runtime: driver, builtin: scripted, config: {script: s.yaml}}\n"
            "  - name: t\n    version: '1'\n    capabilities:\n"
            "      limits: {<<: *limits, deadline_seconds: 9}\n"
            "capabilities:\n  limits: *limits\n"
            "inference: {model: m, driver: {artifact: drv}}\n")
    capsule = parse_capsule(FILE, text)
    assert capsule.capabilities.limits.memory_bytes == 1048576
    tool = capsule.artifact("t")
    assert tool is not None and tool.capabilities is not None
    assert tool.capabilities.limits.deadline_seconds == 9  # its own key wins over the merge
    assert [w.key for w in capsule.warnings] == ["base"]


def test_a_duplicate_key_is_refused_naming_both_lines() -> None:
    problem = only(refused(MINIMAL + "  model: m2\n"))
    assert (problem.key, problem.line) == ("inference.model", 11)
    assert "first at line 9" in problem.message


def test_duplicate_keys_are_found_everywhere() -> None:
    text = MINIMAL.replace("name: demo\n", "name: demo\nname: again\n").replace(
        "{script: s.yaml}", "{script: s.yaml, script: t.yaml}")
    error = refused(text)
    assert [(p.key, p.line) for p in error.problems] == [
        ("name", 2), ("artifacts[0].config.script", 8)]


def test_a_list_as_a_key_is_refused() -> None:
    problem = only(refused(MINIMAL + "  ? [a, b]\n  : 1\n"))
    assert problem.line == 11 and "cannot be a key" in problem.message


def test_an_overlong_or_nul_path_is_refused_naming_the_key() -> None:
    long_name = "a" * 300
    long_path = "/".join(["abcdefgh"] * 600)
    for value, why in [(long_name, "a file name of 300 bytes"),
                       (long_path, "a path of 5399 bytes"), ('""', "is empty")]:
        error = refused(MINIMAL + f"  system_prompt_file: {value}\n")
        problem = only(error)
        assert (problem.key, problem.line) == ("inference.system_prompt_file", 11)
        assert why in problem.message
    text = MINIMAL.replace("builtin: scripted", f"builtin: scripted\n    source: {long_name}")
    problem = only(refused(text))
    assert (problem.key, problem.line) == ("artifacts[0].source", 7)


def test_a_system_prompt_file_that_is_not_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    (tmp_path / "latin1.md").write_bytes(b"caf\xe9\n")
    for name, why in [("folder", "not a regular file"), ("latin1.md", "not UTF-8"),
                      ("/dev/zero", "not a regular file")]:
        with pytest.raises(ManifestError) as info:
            parse_capsule(tmp_path / "murmur.yaml", MINIMAL + f"  system_prompt_file: {name}\n")
        problem = info.value.problems[0]
        assert (problem.key, problem.line) == ("inference.system_prompt_file", 11)
        assert why in problem.message and problem.code == "E-RUN-009"


def test_a_manifest_that_is_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "murmur.yaml"
    path.write_bytes(MINIMAL.encode().replace(b"model: m1", b"model: m\xff1"))
    with pytest.raises(ManifestError) as info:
        load_capsule(tmp_path)
    problem = info.value.problems[0]
    assert problem.line == 9 and "not UTF-8" in problem.message and "column 11" in problem.message


def test_a_manifest_larger_than_the_cap_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "murmur.yaml"
    path.write_text(MINIMAL + "  system_prompt: " + "x" * MAX_FILE_BYTES + "\n")
    with pytest.raises(ManifestError) as info:
        load_capsule(tmp_path)
    assert info.value.problems[0].line == 11
    assert f"larger than {MAX_FILE_BYTES} bytes" in str(info.value)


def test_numbers_a_session_could_not_use_are_refused() -> None:
    error = refused(MINIMAL + "  max_tokens: 0x" + "f" * 40 + "\ncapabilities:\n  limits:\n"
                    "    deadline_seconds: .inf\n    memory_bytes: 1e400\n")
    assert [(p.key, p.line) for p in error.problems] == [
        ("inference.max_tokens", 11), ("capabilities.limits.deadline_seconds", 14),
        ("capabilities.limits.memory_bytes", 15)]
    assert "expected an integer <= 9223372036854775807" in error.problems[0].message
    assert "finite" in error.problems[1].message


@pytest.mark.parametrize("value, key", [("{when: 2024-01-01}", "when"),
                                        ("{blob: !!binary aGk=}", "blob"),
                                        ("{n: .nan}", "n"), ("{deep: {a: [1, !!set {x}]}}",
                                                             "deep.a[1]"),
                                        ("{big: 0x" + "f" * 20 + "}", "big")])
def test_free_form_config_must_be_json_data(value: str, key: str) -> None:
    problem = only(refused(MINIMAL + f"  params: {value}\n"))
    assert (problem.key, problem.line) == (f"inference.params.{key}", 11)


# -- checks that used to wait for session setup ----------------------------------------------

HTTP = """\
name: demo
version: "1"
artifacts:
  - name: model
    runtime: driver
    builtin: openai
    gateway: {endpoint: "http://127.0.0.1:9/v1", keyless: true}
    config:
      stream: false
      read_timeout_s: 12.5
inference: {model: m, driver: {artifact: model}}
"""


def test_http_driver_settings_are_read_typed() -> None:
    capsule = parse_capsule(FILE, HTTP)
    driver = capsule.driver
    assert driver is not None and driver.http is not None
    assert driver.http.stream is False and driver.http.read_timeout_s == 12.5
    default = parse_capsule(FILE, HTTP.replace("      stream: false\n      read_timeout_s: 12.5\n",
                                               "      {}\n"))
    assert default.driver is not None and default.driver.http is not None
    assert default.driver.http.stream is True and default.driver.http.read_timeout_s == 300


@pytest.mark.parametrize("setting, line, why", [
    ("stream: 'yes'", 9, "true or false"),
    ("read_timeout_s: 0", 10, "seconds > 0"),
    ("read_timeout_s: .inf", 10, "finite"),
    ("read_timeout_s: '30'", 10, "seconds > 0")])
def test_a_bad_http_driver_setting_names_its_line(setting: str, line: int, why: str) -> None:
    key = setting.split(":")[0]
    text = HTTP.replace(f"{key}: {'false' if key == 'stream' else '12.5'}", setting)
    problem = only(refused(text))
    assert (problem.key, problem.line) == (f"artifacts[0].config.{key}", line)
    assert why in problem.message


def test_a_misspelt_builtin_driver_setting_is_warned() -> None:
    capsule = parse_capsule(FILE, HTTP.replace("read_timeout_s", "read_timeout"))
    assert [(w.key, w.line, w.code) for w in capsule.warnings] == [
        ("artifacts[0].config.read_timeout", 10, "W-SEC-019")]


def test_the_scripted_driver_config_is_checked_at_load() -> None:
    error = refused(MINIMAL.replace("{script: s.yaml}", "{chunk_chars: 0, chars_per_second: -1}"))
    assert [(p.key, p.line) for p in error.problems] == [
        ("artifacts[0].config.script", 7), ("artifacts[0].config.chunk_chars", 7),
        ("artifacts[0].config.chars_per_second", 7)]
    error = refused(MINIMAL.replace("{script: s.yaml}", "~"))
    assert [(p.key, p.line) for p in error.problems] == [("artifacts[0].config.script", 7)]
    error = refused(MINIMAL.replace("{script: s.yaml}", "{script: s.yaml, skip_played: 1}"))
    assert [(p.key, p.line) for p in error.problems] == [("artifacts[0].config.skip_played", 7)]
    known = parse_capsule(FILE, MINIMAL.replace("{script: s.yaml}",
                                                "{script: s.yaml, skip_played: true}"))
    assert not known.warnings  # a known key, not a misspelling


# -- secrets -------------------------------------------------------------------------------

def test_a_credential_shaped_env_allow_is_warned_naming_the_key_and_line() -> None:
    capsule = parse_capsule(FILE, MINIMAL + "capabilities:\n  env:\n"
                            "    allow: [LANG, OPENAI_API_KEY, aws_region]\n")
    warnings = [w for w in capsule.warnings if w.code == "W-SEC-024"]
    assert [(w.key, w.line) for w in warnings] == [("capabilities.env.allow", 13)] * 2
    assert "'OPENAI_API_KEY'" in warnings[0].message and "'aws_region'" in warnings[1].message


def test_a_literal_api_key_is_redacted_from_the_moment_it_is_read() -> None:
    key = "sk-literal-manifest-key-5e1f0c"
    parse_capsule(FILE, HTTP.replace("keyless: true", f"api_key: {key}"))
    assert redact(f"the provider said: bad key {key}") == "the provider said: bad key [redacted]"
    reference = "${PROVIDER_KEY}"
    parse_capsule(FILE, HTTP.replace("keyless: true", f"api_key: '{reference}'"))
    assert redact(f"api_key: {reference}") == f"api_key: {reference}"


# -- the command line ------------------------------------------------------------------------

def test_launch_refuses_a_hostile_manifest_with_exit_2_and_a_location(tmp_path: Path) -> None:
    bomb = "".join(f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 9)}]\n" for n in range(1, 12))
    hostile = ('l0: &l0 "lol"\n' + bomb + "name: &loop [*loop]\nversion: '1'\n"
               "version: '2'\n")
    (tmp_path / "murmur.yaml").write_text(hostile, encoding="utf-8")
    done = run_cli("launch", str(tmp_path), "--headless", "--task", "t")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert f"{tmp_path / 'murmur.yaml'}:" in done.stderr
    assert "aliases here expand to more than" in done.stderr


def test_the_delegation_deadline_is_600_seconds_unless_the_lifecycle_says_otherwise() -> None:
    assert parse_capsule(FILE, MINIMAL).lifecycle.delegation_deadline_secs == 600
    set_to = parse_capsule(FILE, MINIMAL + "lifecycle:\n  delegation_deadline_secs: 90\n")
    assert set_to.lifecycle.delegation_deadline_secs == 90 and set_to.warnings == ()
    problem = only(refused(MINIMAL + "lifecycle:\n  delegation_deadline_secs: 0\n"))
    assert (problem.line, problem.key, problem.message) == (
        12, "lifecycle.delegation_deadline_secs", "expected a number of seconds > 0, got 0")
