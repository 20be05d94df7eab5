"""Errors in what murmur-tui reads: capsules, manifests, config and theme files, keys, files
on disk, JSON lines, journals and traces."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui.core.errors.base import MurmurTuiError, Problem, Where

if TYPE_CHECKING:
    import yaml


# -- launch: a capsule, option or file that cannot start a session (exit 2) -------------------
class LaunchError(MurmurTuiError):
    """Bad input that cannot start a session (the command exits 2); the message names it."""

    default_code = "E-LAUNCH"


class NameRefused(LaunchError):
    """A session's name that cannot be one (`--name`, a rename): the text says why."""


class ContextInUse(LaunchError):
    """Another session is writing this context."""


class LockError(LaunchError):
    """A `murmur.lock` that cannot be read, or an artifact that does not match its pin."""

    default_code = "E-RUN-003"


class ScaffoldError(MurmurTuiError):
    """`new` refused to write a scaffold (Murmur's E-NEW-002 a bad name, E-NEW-003 a path
    that exists, E-IO-003 a write that failed); nothing is left behind."""

    default_code = "E-NEW"


class YamlError(MurmurTuiError):
    """The file was refused; every problem names the file and, where there is one, the line."""

    default_code = "E-YAML"
    text_names_place = True  # each line already names its own place

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(problem) for problem in problems),
                         where=problems[0].where if problems else None)

    @property
    def problem(self) -> Problem:
        return self.problems[0]


class YamlRefusal(MurmurTuiError):
    """A YAML document murmur-tui will not read, found while composing it (at `mark`, `path`)."""

    default_code = "E-YAML"

    def __init__(self, mark: yaml.Mark, path: str, message: str, quiet: str) -> None:
        super().__init__(message)
        self.mark = mark
        self.path = path
        self.message = message
        self.quiet = quiet  # the message without any quoted text (for files that hold keys)


class RosterShapeError(MurmurTuiError):
    """A `roster.yaml` whose shape Murmur refuses (`E-ROS-001`); `where.line` is the line."""

    default_code = "E-ROS-001"


class SeatError(MurmurTuiError):
    """A formation channel line that is not a member's seat (`E-RUN-046`); never names a token."""

    default_code = "E-RUN-046"


class TokenRefused(MurmurTuiError):
    """An `mft1.` formation token that is malformed or not signed by the formation's key; the
    text says what is wrong with it, never a byte of it."""

    default_code = "E-TOKEN"


class FormationError(MurmurTuiError):
    """A formation whose members could not all start (`E-RUN-045`); what started is ended."""

    default_code = "E-RUN-045"


class ManifestError(MurmurTuiError):
    """The manifest was refused; each problem names file, line and key (`where`: the first's)."""

    default_code = "E-MANIFEST"
    text_names_place = True  # each line already names its own place

    def __init__(self, problems: list[Problem], warnings: list[Problem] | None = None) -> None:
        self.problems = problems
        self.warnings = warnings or []
        super().__init__("\n".join(str(problem) for problem in problems),
                         where=problems[0].where if problems else None)


class NetworkAllowError(MurmurTuiError):
    """A `capabilities.network.allow` entry that cannot be read."""

    default_code = "E-MANIFEST"


class ApprovalConfigError(MurmurTuiError):
    """`approve:` in config.yaml, `--approve` or approvals.yaml is wrong (the text names it)."""

    default_code = "E-CONFIG"
    text_names_place = True


class ThemeError(MurmurTuiError):
    """A theme file that cannot be used; the message names the file and the problem."""

    default_code = "E-THEME"


class CredentialError(MurmurTuiError):
    """No key could be found (names where it looked)."""

    default_code = "E-CREDENTIAL"


# -- files and text read from disk or the wire ------------------------------------------------
class FileRefused(MurmurTuiError):
    """Why a file is not read, in words for a note ("it is a link")."""

    default_code = "E-READ"


class NotAFile(MurmurTuiError, OSError):
    """What is at the name is not a regular file murmur-tui may write; `strerror` says which."""

    default_code = "E-WRITE"

    def __init__(self, errno: int, strerror: str, filename: str) -> None:
        OSError.__init__(self, errno, strerror, filename)  # an OSError to every `except OSError`
        self.text, self.where, self.code, self._show_code = strerror, Where(filename), \
            self.default_code, False

    def __str__(self) -> str:
        return OSError.__str__(self)


class NotJson(MurmurTuiError, ValueError):
    """A line is not JSON Murmur would read; the message says why."""

    default_code = "E-JSON"


class BadJsonSyntax(NotJson):
    """Not JSON at all (as opposed to JSON serde_json refuses: too deep, a number too big)."""


class ConversationReadError(MurmurTuiError):
    """`invalid-cursor` or `unavailable: <reason>`: the WIT error string, its code and text."""

    default_code = "unavailable"

    def __init__(self, error: str, *, where: Where | None = None) -> None:
        super().__init__(error, where=where)
        self.code = error  # `where` names the record file when one could not be read

    def render(self) -> str:
        return self.text  # exactly the WIT error string: a hook compares it


class JournalUnreadable(MurmurTuiError):
    """The turn journal cannot be checked at all (why, in words for the resume warning)."""

    default_code = "W-RESUME"


class CannotResume(MurmurTuiError):
    """Why a conversation cannot be continued from here."""

    default_code = "E-RESUME"


# -- traces ---------------------------------------------------------------------------------
class TraceNotFound(MurmurTuiError):
    """No trace where one was asked for (Murmur's E-TRC-002)."""

    default_code = "E-TRC-002"


class TraceFormatError(MurmurTuiError):
    """A trace line that is not a JSON object, or a file that is not a trace (E-TRC-001)."""

    default_code = "E-TRC-001"


class TraceWriteError(MurmurTuiError):
    """The trace could not be written (Murmur's E-RUN-007): the session ends."""

    default_code = "E-RUN-007"
    text_names_place = True  # the text already names the trace file


class CalleeUnknown(MurmurTuiError):
    """No reachable door for a formation member's callee; the text says why."""


class WebRefused(MurmurTuiError):
    """`fleet --web` given a place it cannot serve on; the text says why (exit 2)."""

    default_code = "E-WEB"
