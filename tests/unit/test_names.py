"""`$MURMUR_HOME/tui/names.json` read as hostile input and written so no name is lost: a link,
a file that is not JSON or not an object, a name that `--name` would refuse and an id that is
no session id are not shown; the file is 0600, and two writers keep both names."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from tui.core import names
from tui.core.errors import NameRefused


def test_what_is_not_a_name_is_never_read_from_the_file(tmp_path: Path) -> None:
    path = names.names_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text('{"ses_a": "ok", "ses_b": "\\u001b]0;x\\u0007", "ses_c": 5, '
                    '"../x": "path", "ses_d": "' + "y" * 65 + '"}')
    assert names.read(tmp_path) == {"ses_a": "ok"}
    path.write_text("[1, 2]")
    assert names.read(tmp_path) == {}
    path.write_text("{not json")
    assert names.read(tmp_path) == {}
    path.unlink()
    target = tmp_path / "elsewhere.json"
    target.write_text('{"ses_a": "through a link"}')
    os.symlink(target, path)
    assert names.read(tmp_path) == {}  # never followed


def test_a_name_is_kept_0600_and_two_writers_lose_nothing(tmp_path: Path) -> None:
    threads = [threading.Thread(target=names.give, args=(tmp_path, f"ses_{n:03}", f"n{n}"))
               for n in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert names.read(tmp_path) == {f"ses_{n:03}": f"n{n}" for n in range(40)}
    assert names.names_path(tmp_path).stat().st_mode & 0o777 == 0o600
    assert not list(names.names_path(tmp_path).parent.glob("*.writing-*"))


def test_the_record_key_shows_until_a_rename_wins(tmp_path: Path) -> None:
    assert names.name_of(tmp_path, "ses_a", {"name": "from the record"}) == "from the record"
    assert names.name_of(tmp_path, "ses_a", {"name": "bad\nname"}) is None
    names.give(tmp_path, "ses_a", "renamed")
    assert names.name_of(tmp_path, "ses_a", {"name": "from the record"}) == "renamed"


@pytest.mark.parametrize(("name", "why"), [
    ("", "a session's name cannot be empty"),
    (" padded", "a session's name cannot start or end with a space"),
    ("tab\there", "a session's name holds only printable characters; this one holds U+0009"),
    ("\x9b31m", "a session's name holds only printable characters; this one holds U+009B"),
    ("\udcff", "a session's name holds only printable characters; this one holds U+DCFF"),
])
def test_a_name_that_is_not_printable_text_is_refused(name: str, why: str) -> None:
    with pytest.raises(NameRefused) as refused:
        names.checked(name)
    assert refused.value.text == why


def test_a_kept_name_follows_the_file_and_reads_it_only_when_it_changed(
        tmp_path: Path) -> None:
    """KeptName (the door's card, the open screen): a rename shows at the next look, a file
    left as it was is not read again, and `given` stands in while the file says nothing."""
    kept = names.KeptName(tmp_path, "ses_a", given="from the card")
    assert kept.current() == "from the card"  # no file yet
    names.give(tmp_path, "ses_b", "other")
    assert kept.current() == "from the card"  # the file names another session only
    names.give(tmp_path, "ses_a", "nightly")
    assert kept.current() == "nightly"
    names.give(tmp_path, "ses_a", "release 2.1")
    assert kept.current() == "release 2.1"
    path = names.names_path(tmp_path)
    stat = path.stat()
    # rewritten in place to the same size, its stamp put back: to a stat it is the same file,
    # so it is not read again
    path.write_text(path.read_text().replace("release 2.1", "release 2.2"))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size and path.stat().st_ino == stat.st_ino
    assert kept.current() == "release 2.1"
    assert names.KeptName(tmp_path, "ses_a").current() == "release 2.2"  # a first read
    path.unlink()
    assert kept.current() == "from the card"
    assert names.KeptName(tmp_path, "ses_a", given="bad\x1b").current() is None
