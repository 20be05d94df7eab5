"""Writing a scaffold as `mur new --roster` does: all of it, or nothing.

1. `./NAME` is refused (`E-NEW-003`) if anything is at that path: a directory, a file, a
   symlink (even a dangling one).
2. The files are written into a new `./.NAME.tmp-<id>`; each is read back as what it is — every
   `murmur.yaml` through the manifest reader (`load_capsule`), every `script.yaml` through the
   scripted driver's script reader, `roster.yaml` as YAML — so a scaffold that would not load
   is never left behind.
3. The folder is renamed to `./NAME`. A failure at any step (E-IO-003 for the file system's
   own) removes the temporary folder.

`./NAME` is reserved first with `mkdir` (which fails when anything is there), and the finished
folder renamed over that empty reservation: a `NAME` someone creates in between is never
replaced, and a half-written scaffold is never seen under `NAME`.

The files are the user's project files, not private session files: created as any program
creates them, `0666`/`0777` less the umask (`0644` and `0755` under the usual `022`).
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Mapping
from contextlib import suppress
from pathlib import Path

from tui.core.errors import ScaffoldError


def write_scaffold(parent: Path, name: str, files: Mapping[str, str]) -> Path:
    """Write `files` (relative path -> text) into `parent/name`, checked; return that folder."""
    target = parent / name
    if os.path.lexists(target):
        raise _exists(name)
    try:
        os.mkdir(target)  # the reservation: fails if anything got there since
    except FileExistsError:
        raise _exists(name) from None
    except OSError as exc:
        raise _cannot_write(name, exc) from None
    temp = parent / f".{name}.tmp-{secrets.token_hex(6)}"
    try:
        os.mkdir(temp)
        for relative, text in files.items():
            path = temp / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "x", encoding="utf-8", newline="\n") as file:
                file.write(text)
        check_loads(temp, files)
        os.rename(temp, target)  # over the empty reservation, which is ours
    except BaseException as exc:
        shutil.rmtree(temp, ignore_errors=True)
        with suppress(OSError):
            os.rmdir(target)  # still the empty reservation (a filled one is not removed)
        if isinstance(exc, OSError):
            raise _cannot_write(name, exc) from None
        raise
    return target


def check_loads(folder: Path, files: Mapping[str, str]) -> None:
    """Read every file of a scaffold in `folder` back as what it is; raise what its reader
    raises (ManifestError, LaunchError, YamlError)."""
    from tui.core.inference.scripted import load_script
    from tui.core.manifest.located_yaml import read
    from tui.core.manifest.model import MANIFEST_NAME
    from tui.core.manifest.reader import load_capsule

    for relative in files:
        path = folder / relative
        if path.name == MANIFEST_NAME:
            load_capsule(path)
        elif path.name == "script.yaml":
            load_script(path)
        elif path.suffix == ".yaml":
            read(path)


def _exists(name: str) -> ScaffoldError:
    return ScaffoldError(f"./{name} already exists; nothing was written (pick another name, "
                         "or move it away)", code="E-NEW-003")


def _cannot_write(name: str, exc: OSError) -> ScaffoldError:
    where = f" {exc.filename}:" if exc.filename else ""
    return ScaffoldError(f"cannot write ./{name}:{where} {exc.strerror or exc}; nothing was "
                         "left behind", code="E-IO-003")
