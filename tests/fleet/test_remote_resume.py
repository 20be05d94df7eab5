"""`r` on a gone session of another host resumes nothing here: its workdir, trace and journal
are on that machine, so the note says where to resume it, and no launch is started."""

from __future__ import annotations

from pathlib import Path

from tui.app.fleet.launching import resumable
from tui.app.fleet.model import FleetSession


def test_a_gone_session_of_another_host_is_resumed_there_not_here(murmur_home: Path) -> None:
    session = FleetSession("ses_019f00000000000000000000000000aa", "http://10.0.0.7:7401",
                           host="build-3", capsule="builder")
    session.connect("gone", "no longer found on build-3", dead=True)
    said = resumable(murmur_home, session, [session], [])
    assert said == ("ses_019f00000000000000000000000000aa ran on build-3: resume it there "
                    "(murmur-tui launch CAPSULE --resume ses_019f00000000000000000000000000aa "
                    "--serve …).")
