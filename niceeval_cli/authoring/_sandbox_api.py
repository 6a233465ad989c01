"""`t.sandbox`: the attempt's workspace as eval code sees it (sandbox.md, "`t.sandbox`").

Files and commands are awaited; the assertions are not: each reads the workspace at the call
(one snapshot, for docker one `docker cp`) and registers one Assertion, so a later write by the
test cannot change its result. Changes are measured against the baseline snapshot taken after
the template copy and `prepare`, before the adapter's first call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

from .._states import AssertionState
from ..expect._core import BooleanMatch, MatchResult
from ..sandbox._changes import STATUSES, Change, added_lines, changes, diff_text
from ..sandbox._spec import Command
from ..sandbox._workspace import CommandResult, FileState, Snapshot, Workspace
from ._commands import not_started, settle
from ._errors import AuthoringError, caller_location
from ._registration import AssertionHandle

__all__ = ["EVIDENCE_CHARS", "Register", "SandboxAPI", "SandboxFiles", "SandboxMember", "trim_diff"]

#: Registers one Assertion for `(subject, match)` (the test context's `_register`).
Register = Callable[[Any, BooleanMatch], AssertionHandle]

#: Characters of diff kept as evidence; the check itself always reads the whole diff.
EVIDENCE_CHARS = 8_000
_SHOWN_LINES = 5  # offending lines named in a `not_in_diff` explanation


def trim_diff(text: str, limit: int = EVIDENCE_CHARS) -> str:
    """`text` cut at a line boundary near `limit`, with a marker saying how much is not shown."""
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit) + 1 or limit
    rest = text[cut:]
    lines = rest.count("\n") + (0 if rest.endswith("\n") else 1)
    return (f"{text[:cut]}[… diff trimmed: {len(rest)} more characters ({lines} lines) not shown; "
            "the check read the whole diff]\n")


class _WorkspaceMatch(BooleanMatch):
    """A match decided by reading the workspace while it is registered (errors → `errored`)."""

    def __init__(self, name: str, config: dict[str, Any], decide: Callable[[], MatchResult], shown: str) -> None:
        super().__init__(name, config)
        self._decide = decide
        self._shown = shown

    def describe(self) -> str:
        return self._shown

    def _evaluate(self, value: Any) -> MatchResult:
        return self._decide()


def _listing(found: Sequence[Change]) -> list[dict[str, Any]]:
    return [{"path": c.path, "status": c.status, **({"binary": True} if c.binary else {})} for c in found]


class SandboxFiles:
    """The workspace's files and commands: what adapters get as `ctx.sandbox` / `sandbox=`."""

    __slots__ = ("_eval_file", "_workspace")

    def __init__(self, workspace: Workspace, eval_file: str | None = None) -> None:
        self._workspace = workspace
        self._eval_file = eval_file

    def _error(self, message: str) -> AuthoringError:
        return AuthoringError(message, caller_location(self._eval_file))

    def _path(self, path: object, member: str) -> str:
        if not isinstance(path, str) or not path.strip():
            raise self._error(f"t.sandbox.{member} needs a path relative to the workspace, got {path!r}")
        rel = PurePosixPath(path)
        if rel.is_absolute() or ".." in rel.parts:
            raise self._error(f"t.sandbox.{member}({path!r}): paths are relative to the workspace "
                              f"({self.workdir}) and stay inside it")
        return rel.as_posix()

    @property
    def kind(self) -> str:
        """`local` or `docker`."""
        return self._workspace.kind

    @property
    def workdir(self) -> str:
        """The workspace path (inside the container for docker)."""
        return self._workspace.workdir

    async def read_bytes(self, path: str) -> bytes:
        return await self._workspace.read_bytes(self._path(path, "read_bytes"))

    async def read_text(self, path: str) -> str:
        rel = self._path(path, "read_text")
        data = await self._workspace.read_bytes(rel)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UnicodeDecodeError(exc.encoding, exc.object, exc.start, exc.end,
                                     f"{rel} is not UTF-8 text; read it with t.sandbox.read_bytes") from None

    async def write_bytes(self, path: str, data: bytes) -> None:
        await self._workspace.write_bytes(self._path(path, "write_bytes"), data)

    async def write_text(self, path: str, text: str) -> None:
        if not isinstance(text, str):
            raise self._error(f"t.sandbox.write_text needs text, got {type(text).__name__}")
        await self.write_bytes(path, text.encode("utf-8", "surrogateescape"))

    async def run(self, command: Command | Sequence[str], *, cwd: str | None = None,
                  env: Mapping[str, str] | None = None, input: str | None = None,
                  timeout_ms: int | None = None) -> CommandResult:
        """Run a shell string (`sh -c`) or an argv in the workspace; a non-zero exit is a result."""
        if isinstance(command, str):
            if not command.strip():
                raise self._error("t.sandbox.run needs a command, got an empty string")
        elif not command or not all(isinstance(word, str) for word in command):
            raise self._error(f"t.sandbox.run needs a shell string or a non-empty list of strings, got {command!r}")
        if timeout_ms is not None and (isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int)
                                       or timeout_ms <= 0):
            raise self._error(f"t.sandbox.run(timeout_ms=...) needs a positive integer, got {timeout_ms!r}")
        where = self._path(cwd, "run(cwd=...)") if cwd is not None else None
        argv = command if isinstance(command, str) else tuple(command)
        try:
            result = await self._workspace.run(argv, cwd=where, env=env, input=input, timeout_ms=timeout_ms)
        except (FileNotFoundError, PermissionError) as exc:  # the program could not be started
            return not_started(exc)
        return settle(argv, result)  # a command that could not run gives no exit code to check

    def exec_argv(self, argv: Sequence[str], cwd: str | None = None) -> list[str]:
        """The host argv that runs `argv` in the workspace, to spawn it yourself (in `exec_cwd()`)."""
        return self._workspace.exec_argv(list(argv), self._path(cwd, "exec_argv") if cwd else None)

    def exec_cwd(self, cwd: str | None = None) -> str | None:
        """The host directory to spawn `exec_argv` in (None for docker: anywhere)."""
        return self._workspace.exec_cwd(self._path(cwd, "exec_cwd") if cwd else None)

    def __repr__(self) -> str:
        return f"<sandbox {self._workspace.kind} at {self.workdir}>"


class SandboxAPI(SandboxFiles):
    """What `t.sandbox` is. `register` files one Assertion (wiring is one line in the context)."""

    __slots__ = ("_baseline", "_register", "_started")

    def __init__(self, workspace: Workspace, baseline: Snapshot, register: Register,
                 eval_file: str | None = None) -> None:
        super().__init__(workspace, eval_file)
        self._baseline: dict[str, FileState] = dict(baseline)
        self._register = register
        self._started = False

    def _mark_started(self) -> None:
        """The adapter was called: from now on the test's own writes count as changes."""
        self._started = True

    async def write_bytes(self, path: str, data: bytes) -> None:
        rel = self._path(path, "write_bytes")
        await self._workspace.write_bytes(rel, data)
        if not self._started:  # setting up before sending is part of the start, not a change
            self._baseline[rel] = FileState.of(data)

    # -- changes ------------------------------------------------------------------------------
    def _changes(self, under: Sequence[str] = ()) -> tuple[Snapshot, list[Change]]:
        now = self._workspace.snapshot()
        return now, changes(self._baseline, now, under)

    def changed_paths(self) -> list[tuple[str, str]]:
        """`(path, status)` of every change since the start, sorted by path, read at the call."""
        return [(c.path, c.status) for c in self._changes()[1]]

    def _assert(self, name: str, config: dict[str, Any], shown: str,
                decide: Callable[[], MatchResult]) -> AssertionHandle:
        return self._register(None, _WorkspaceMatch(name, config, decide, shown))

    def file_exists(self, path: str) -> AssertionHandle:
        """Assertion: `path` is a file of the workspace now."""
        rel = self._path(path, "file_exists")
        shown = f"file_exists({rel!r})"

        def decide() -> MatchResult:
            now = self._workspace.snapshot()
            state = now.get(rel)
            if state is not None:
                return MatchResult.matched(f"{rel} exists ({state.size} bytes)").with_evidence(
                    {"path": rel, "size": state.size})
            inside = sorted(p for p in now if p.startswith(rel.rstrip("/") + "/"))
            why = f"{rel} is a directory, not a file" if inside else f"{rel} does not exist in the workspace"
            return MatchResult.mismatched(why).with_evidence({"path": rel, "exists": False})

        return self._assert("file_exists", {"path": rel}, shown, decide)

    def file_changed(self, path: str, status: str | None = None) -> AssertionHandle:
        """Assertion: `path` (or something under it) was added / modified / deleted since the start."""
        rel = self._path(path, "file_changed")
        if status is not None and status not in STATUSES:
            raise self._error(f"t.sandbox.file_changed(status={status!r}): expected one of {', '.join(STATUSES)}")
        config: dict[str, Any] = {"path": rel, **({"status": status} if status else {})}
        shown = f"file_changed({rel!r}" + (f", status={status!r})" if status else ")")

        def decide() -> MatchResult:
            now, found = self._changes((rel,))
            evidence = trim_diff(diff_text(self._baseline, now, found))
            if not found:
                return MatchResult.mismatched(f"{rel} did not change since the start").with_evidence(evidence)
            statuses = ", ".join(f"{c.path} {c.status}" for c in found[:_SHOWN_LINES])
            more = f" and {len(found) - _SHOWN_LINES} more" if len(found) > _SHOWN_LINES else ""
            if status is not None and not any(c.status == status for c in found):
                return MatchResult.mismatched(f"expected {rel} {status}, but: {statuses}{more}").with_evidence(evidence)
            return MatchResult.matched(f"{statuses}{more}").with_evidence(evidence)

        return self._assert("file_changed", config, shown, decide)

    def no_changes(self, paths: str | Iterable[str] | None = None) -> AssertionHandle:
        """Assertion: nothing (or nothing under `paths`) changed since the start."""
        under = [self._path(p, "no_changes") for p in ([paths] if isinstance(paths, str) else (paths or ()))]
        config: dict[str, Any] = {"paths": under} if under else {}
        shown = f"no_changes({under!r})" if under else "no_changes()"

        def decide() -> MatchResult:
            now, found = self._changes(under)
            if not found:
                where = f" under {', '.join(under)}" if under else ""
                return MatchResult.matched(f"nothing changed{where}").with_evidence("")
            listed = ", ".join(f"{c.path} {c.status}" for c in found[:_SHOWN_LINES])
            more = f" and {len(found) - _SHOWN_LINES} more" if len(found) > _SHOWN_LINES else ""
            return MatchResult.mismatched(f"{len(found)} change(s): {listed}{more}").with_evidence(
                trim_diff(diff_text(self._baseline, now, found)))

        return self._assert("no_changes", config, shown, decide)

    def not_in_diff(self, match: BooleanMatch) -> AssertionHandle:
        """Assertion: no line the workspace diff adds matches `match` (`pattern`, `includes`, ...)."""
        if not isinstance(match, BooleanMatch):
            raise self._error("t.sandbox.not_in_diff needs a text match such as pattern(...) or includes(...), "
                              f"got {type(match).__name__}")
        shown = f"not_in_diff({match.describe()})"

        def decide() -> MatchResult:
            now, found = self._changes()
            hits: list[str] = []
            for path, number, line in added_lines(self._baseline, now):
                result = match.evaluate(line)
                if result.state is AssertionState.ERRORED:
                    return result
                if result.state is AssertionState.MATCHED:
                    hits.append(f"{path}:{number}: {line}")
            evidence = trim_diff(diff_text(self._baseline, now, found))
            skipped = sum(1 for c in found if c.binary)
            note = f"; {skipped} binary file(s) not searched" if skipped else ""
            if hits:
                shown_hits = "; ".join(hits[:_SHOWN_LINES])
                more = f" and {len(hits) - _SHOWN_LINES} more" if len(hits) > _SHOWN_LINES else ""
                return MatchResult.mismatched(
                    f"{len(hits)} added line(s) match {match.describe()}: {shown_hits}{more}{note}"
                ).with_evidence(evidence)
            return MatchResult.matched(f"no added line matches {match.describe()}{note}").with_evidence(evidence)

        return self._assert("not_in_diff", {"match": match.name, "config": dict(match.config)}, shown, decide)



_UNDECLARED = (
    "t.sandbox needs a sandbox, but this eval runs without one; declare it on the eval "
    "(define_eval(sandbox=local_sandbox(template=...)) or docker_sandbox(image=...)) or in "
    "[experiments.<id>.sandbox] of niceeval.toml"
)


class SandboxMember:
    """`t.sandbox`, mixed into the test context; the runner attaches the live workspace."""

    _sandbox_api: SandboxAPI | None = None
    _eval_file: str | None

    @property
    def sandbox(self) -> SandboxAPI:
        """The attempt's workspace: files, commands and change assertions (docs/sandbox.md)."""
        if self._sandbox_api is None:
            raise AuthoringError(_UNDECLARED, caller_location(self._eval_file))
        return self._sandbox_api

    def _attach_sandbox(self, workspace: Workspace, baseline: Snapshot, register: Register) -> SandboxAPI:
        self._sandbox_api = SandboxAPI(workspace, baseline, register, self._eval_file)
        return self._sandbox_api

    def _sandbox_sent(self) -> None:
        """Called on `t.send`: the test's own writes count as changes from now on."""
        if self._sandbox_api is not None:
            self._sandbox_api._mark_started()
