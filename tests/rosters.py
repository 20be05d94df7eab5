"""Rosters for tests: the committed fixtures (tests/fixtures/rosters/, one folder per admission
case, members named by `source:` from tests/fixtures/rosters/members/), and a capsule
installed as `mur install` installs one (spec murmur-newest §2.2): under
`<store>/<name>/<version>/`, `<name>-<version>.mur.zip` holding the capsule's `murmur.yaml` and
the files beside it, its `.sha256` (of the zip's bytes) and `.meta.json`."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

ROSTERS = Path(__file__).resolve().parent / "fixtures" / "rosters"
MEMBERS = ROSTERS / "members"


def capsule_archive(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(folder.iterdir()):
            if file.is_file():
                archive.writestr(file.name, file.read_bytes())
    return buffer.getvalue()


def install_capsule(store: Path, name: str, version: str, folder: Path) -> Path:
    """Install the capsule at `folder` into `store` (a project's `.murmur/artifacts` or
    `$MURMUR_HOME/artifacts`) as `name@version`; returns the archive."""
    target = store / name / version
    target.mkdir(parents=True, exist_ok=True)
    data = capsule_archive(folder)
    archive = target / f"{name}-{version}.mur.zip"
    archive.write_bytes(data)
    (target / f"{name}-{version}.sha256").write_text(hashlib.sha256(data).hexdigest())
    meta = {"name": name, "version": version, "runtime": "static",
            "artifact_runtime": "capsule", "platforms": [], "tags": []}
    (target / f"{name}-{version}.meta.json").write_text(json.dumps({"meta": meta}, indent=2))
    return archive


def write_roster(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "roster.yaml"
    path.write_text(text, encoding="utf-8")
    return path
