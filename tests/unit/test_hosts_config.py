"""`hosts:` in fleet.yaml, `fleet --host NAME=URL`, and where a host's token comes from: good
entries load in order, a broken one is one problem naming the file, the entry and the key
(never its value), and the others still load."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tui.core.errors import HostEntryRefused, HostTokenRefused
from tui.core.hosts.config import HostConfig, host_argument, load_hosts
from tui.core.hosts.tokens import TokenSource
from tui.core.text.secrets import redact

SECRET = "tok-Zq81-very-secret"


def write(home: Path, text: str) -> Path:
    (home / "tui").mkdir(parents=True, exist_ok=True)
    file = home / "tui" / "fleet.yaml"
    file.write_text(text)
    return file


def test_no_file_and_no_hosts_key_are_no_hosts(murmur_home: Path) -> None:
    assert load_hosts(murmur_home).hosts == ()
    write(murmur_home, "notify:\n  desktop: false\n")
    loaded = load_hosts(murmur_home)
    assert loaded.hosts == () and loaded.problems == ()


def test_good_entries_load_in_their_order_with_their_token_sources(murmur_home: Path) -> None:
    write(murmur_home, """\
notify: {desktop: false}
hosts:
  - name: build-3
    doors: [http://build-3:7401, "10.0.0.7:7402", https://door.example/murmur/]
    token_command: [ssh, build-3, murmur-tui, token]
  - name: cluster
    discover: [sh, -c, "kubectl get pods -o json | jq -c ."]
    token_file: cluster.token
    address: 10.1.2.3
    interval: 30
  - name: lab
    doors: ["[::1]:7000"]
    token_env: LAB_TOKEN
  - name: open
    discover: [ssh, lab, murmur-tui, ps, --json]
""")
    loaded = load_hosts(murmur_home)
    assert loaded.problems == ()
    assert [host.name for host in loaded.hosts] == ["build-3", "cluster", "lab", "open"]
    build, cluster, lab, open_ = loaded.hosts
    assert build.doors == ("http://build-3:7401", "http://10.0.0.7:7402",
                           "https://door.example/murmur")
    assert build.token == TokenSource("command", argv=("ssh", "build-3", "murmur-tui", "token"))
    assert build.where == "build-3:7401 +2"
    assert cluster.discover == ("sh", "-c", "kubectl get pods -o json | jq -c .")
    assert cluster.token == TokenSource("file", path=murmur_home / "tui" / "cluster.token")
    assert (cluster.address, cluster.interval, cluster.where) == ("10.1.2.3", 30.0, "sh")
    assert lab.doors == ("http://[::1]:7000",) and lab.token == TokenSource("env",
                                                                            variable="LAB_TOKEN")
    assert open_.token == TokenSource() and open_.interval == 5.0


def test_a_broken_entry_is_one_problem_naming_file_entry_and_key_and_the_others_load(
        murmur_home: Path) -> None:
    file = write(murmur_home, f"""\
hosts:
  - name: good
    doors: [http://127.0.0.1:7401]
  - name: typo
    door: [http://127.0.0.1:7402]
  - name: both
    doors: [http://a:1]
    discover: [true]
  - name: shell
    discover: "ssh x murmur-tui ps --json"
  - name: two-tokens
    doors: [http://a:1]
    token_file: /t
    token_env: T
  - name: user
    doors: ["http://me:{SECRET}@a:1"]
  - name: ""
    doors: [http://a:1]
  - name: good
    doors: [http://127.0.0.1:7409]
  - just a string
  - name: "zero\\u200bwidth"
    doors: [http://a:1]
  - name: far
    doors: [http://a:1]
    address: 10.0.0.1
  - name: slow
    discover: [x]
    interval: 0.1
""")
    loaded = load_hosts(murmur_home)
    assert [host.name for host in loaded.hosts] == ["good"]
    assert list(loaded.problems) == [f"{file}: {entry}; this host is not shown" for entry in [
        "hosts[1] (typo): unknown key door (known: name, doors, discover, token_file, "
        "token_env, token_command, address, interval)",
        "hosts[2] (both): expected either doors (door URLs) or discover (a command), "
        "exactly one",
        "hosts[3] (shell): discover: expected a list (argv), run without a shell; for a "
        "pipeline write [sh, -c, \"…\"]",
        "hosts[4] (two-tokens): token_env: a host has one token source; token_file is given "
        "too",
        "hosts[5] (user): doors[0]: not a door URL: it names no host, or a user",
        "hosts[6]: name: a host's name is not empty ('' is this machine)",
        "hosts[7] (good): name: another host above has this name; names are unique",
        "hosts[8]: expected a mapping (name, and doors or discover)",
        "hosts[9]: name: a host's name holds only printable characters",
        "hosts[10] (far): address: only a discovered host has one (doors name theirs)",
        "hosts[11] (slow): interval: expected a number of seconds from 1 to 3600"]]
    assert SECRET not in "".join(loaded.problems)


def test_a_file_that_is_not_yaml_or_hosts_not_a_list_is_named_without_quoting_it(
        murmur_home: Path) -> None:
    write(murmur_home, f"hosts: [\n  token: {SECRET}\n")
    loaded = load_hosts(murmur_home)
    assert loaded.hosts == () and len(loaded.problems) == 1
    assert "fleet.yaml" in loaded.problems[0] and SECRET not in loaded.problems[0]
    write(murmur_home, "hosts: {name: x}\n")
    assert load_hosts(murmur_home).problems[0].endswith(
        "hosts: expected a list of hosts (name, and doors or discover); no host beyond this "
        "machine is shown")


def test_a_host_argument_is_name_equals_a_door_url() -> None:
    host = host_argument("build-3=http://127.0.0.2:7401/", SECRET)
    assert host == HostConfig("build-3", ("http://127.0.0.2:7401",),
                              token=TokenSource("given", token=SECRET))
    assert SECRET not in repr(host)  # a token is never in a repr (a log line, a traceback)
    assert host_argument("b=127.0.0.2:7401", None).token == TokenSource()
    for bad, why in [("http://x:1", "expected NAME=URL (build-3=http://build-3:7401)"),
                     ("=http://x:1", "its name: a host's name is not empty ('' is this "
                                     "machine)"),
                     ("b=ftp://x:1", "its URL: not a door URL: its scheme is not http or "
                                     "https"),
                     ("b=http://x:99999", "its URL: not a door URL: its port is not 1 to "
                                          "65535"),
                     ("b=x\x1b:1", "its URL: expected a door URL (http://host:port) of "
                                   "printable ASCII"),
                     ("b=http://[::1", "its URL: not a door URL: its host is not a name or "
                                       "an address"),
                     ("b=http://[zz]:1", "its URL: not a door URL: its host is not a name or "
                                         "an address")]:
        with pytest.raises(HostEntryRefused) as refused:
            host_argument(bad, None)
        assert refused.value.text == why


def test_token_sources_give_a_checked_token_and_say_why_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    file = tmp_path / "token"
    file.write_text(SECRET + "\n")
    assert TokenSource("file", path=file).read("ses_1") == SECRET
    assert redact(f"x {SECRET} y") == "x [redacted] y"  # remembered as it was read
    file.write_text("two words\n")
    with pytest.raises(HostTokenRefused, match=r"expected one token on one line; it holds a "
                                           r"space"):
        TokenSource("file", path=file).read()
    with pytest.raises(HostTokenRefused, match="no such file"):
        TokenSource("file", path=tmp_path / "none").read()
    monkeypatch.delenv("HOST_TOKEN", raising=False)
    with pytest.raises(HostTokenRefused, match=r"token_env: \$HOST_TOKEN is not set"):
        TokenSource("env", variable="HOST_TOKEN").read()
    monkeypatch.setenv("HOST_TOKEN", SECRET)
    assert TokenSource("env", variable="HOST_TOKEN").read() == SECRET
    # a command gets the session id appended; its stdout is the token
    script = tmp_path / "token.py"
    script.write_text("import sys\nprint('tok-for-' + sys.argv[1])\n")
    command = TokenSource("command", argv=(sys.executable, str(script)))
    assert command.read("ses_abc") == "tok-for-ses_abc"
    script.write_text(f"import sys\nprint('{SECRET}')\nprint('no such session', "
                      "file=sys.stderr)\nsys.exit(3)\n")
    with pytest.raises(HostTokenRefused) as refused:
        command.read("ses_abc")
    assert refused.value.text == (f"token_command: {os.path.basename(sys.executable)} exited "
                                  "with status 3: no such session")
    assert TokenSource().read("ses_abc") is None
