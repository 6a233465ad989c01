"""`t.sandbox`: the attempt's workspace as eval code sees it (sandbox.md, "`t.sandbox`").

Files and commands are awaited; the assertions are not: each registers one Assertion at the
call and reads the workspace in a worker thread (the event loop, the attempt's timeout and
Ctrl-C stay live while a large workspace is read and diffed). The test's next `t.sandbox` write
or command, and its next `t.send`, wait for those reads, so a later change by the test cannot
change their result. Changes are measured against the baseline snapshot taken after the
template copy and `prepare`, before the adapter's first call.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import PurePosixPath
from typing import Any

from .._states import AssertionState, ErroredReason, UnavailableReason
from ..expect import BooleanMatch, MatchResult
from ..sandbox import (
    DELETED,
    READ_LIMIT,
    STATUSES,
    Cancel,
    Cancelled,
    Change,
    Command,
    CommandNotRun,
    CommandResult,
    FileState,
    OutsideWorkspace,
    Snapshot,
    Workspace,
    added_lines,
    changes,
    diff_lines,
    hidden,
    is_binary,
    shown_path,
    trimmed,
)
from ._commands import not_started, settle
from ._errors import AuthoringError, caller_location, exception_text
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
    """A match decided off the event loop by reading the workspace (registered at the call)."""

    def __init__(self, name: str, config: dict[str, Any], shown: str) -> None:
        super().__init__(name, config)
        self._shown = shown

    def describe(self) -> str:
        return self._shown

    def _evaluate(self, value: Any) -> MatchResult:
        return MatchResult.unavailable(UnavailableReason.CANCELLED, "the workspace was not read yet")


Decide = Callable[[Snapshot, Snapshot, Cancel], MatchResult]  # (baseline, now, cancel)


def _errored(exc: BaseException) -> MatchResult:
    return MatchResult(AssertionState.ERRORED, exception_text(exc), ErroredReason.MATCH_ERROR)


def _first(items: Sequence[str], what: str = "") -> str:
    shown = "; ".join(items[:_SHOWN_LINES])
    return shown + (f" and {len(items) - _SHOWN_LINES} more{what}" if len(items) > _SHOWN_LINES else "")


def _cancel_this_task() -> None:
    """Mark the running task cancelled, so the CancelledError raised next reads as the stop it
    is (the runner tells a stop from a CancelledError the test code raised by the task's state)."""
    try:
        task = asyncio.current_task()
    except RuntimeError:  # read from a worker thread: no task of ours to mark
        return
    if task is not None:
        task.cancel()


@contextmanager
def _signals_cancel(cancel: Cancel, caught: list[int]) -> Iterator[None]:
    """While a read blocks the event loop, Ctrl-C and SIGTERM cancel it (the loop's own handlers
    cannot run until it returns; its wakeup fd still records the signal for them)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, _frame: object) -> None:
        caught.append(signum)
        cancel.set()

    previous: dict[int, Any] = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            if signal.getsignal(sig) != signal.SIG_IGN:  # ignored for the whole run (a script's `&`): here too
                previous[sig] = signal.signal(sig, handler)
        yield
    finally:
        for number, old in previous.items():
            signal.signal(number, old)


class _SharedRead:
    """One read of the workspace for the assertions registered before it began (`t.sandbox.file_changed(...)`
    then `.not_in_diff(...)` on the next line): whichever of their threads takes the lock first reads,
    the others reuse its snapshot — one `docker cp` out of the container instead of one each. An
    assertion registered once the read has begun gets a read of its own (`_assert`)."""

    __slots__ = ("_lock", "_result", "_workspace", "began")

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace
        self._lock = threading.Lock()
        self._result: Snapshot | None = None
        self.began = False

    def snapshot(self, cancel: Cancel) -> Snapshot:
        with self._lock:
            self.began = True
            if self._result is None:
                # A read cut short (Cancelled) or failed leaves no result: the next assertion reads itself.
                self._result = self._workspace.snapshot(cancel)
            return self._result


class SandboxFiles:
    """The workspace's files and commands: what adapters get as `ctx.sandbox` / `sandbox=`."""

    __slots__ = ("_eval_file", "_workspace")

    def __init__(self, workspace: Workspace, eval_file: str | None = None) -> None:
        self._workspace = workspace
        self._eval_file = eval_file

    def _error(self, message: str) -> AuthoringError:
        return AuthoringError(message, caller_location(self._eval_file))

    def _rel(self, path: object, member: str) -> str:
        if not isinstance(path, str) or not path.strip():
            raise self._error(f"t.sandbox.{member} needs a path relative to the workspace, got {path!r}")
        if "\0" in path:  # no file is named so: a docker write stopped at the NUL and wrote another file
            raise self._error(f"t.sandbox.{member}({path!r}): a path cannot hold a NUL byte")
        rel = PurePosixPath(path)
        if rel.is_absolute() or ".." in rel.parts:
            raise self._error(f"t.sandbox.{member}({path!r}): paths are relative to the workspace "
                              f"({self.workdir}) and stay inside it")
        return rel.as_posix()

    def _path(self, path: object, member: str) -> str:
        """A path naming a file: "." (the workspace itself) is refused, never read as some file."""
        rel = self._rel(path, member)
        if rel == ".":
            raise self._error(f"t.sandbox.{member}({path!r}): {path!r} is the workspace itself, not a file; "
                              "name a file inside it")
        return rel

    @property
    def kind(self) -> str:
        """`local` or `docker`."""
        return self._workspace.kind

    @property
    def workdir(self) -> str:
        """The workspace path (inside the container for docker)."""
        return self._workspace.workdir

    def _limit(self, max_bytes: object, member: str) -> int:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes <= 0:
            raise self._error(f"t.sandbox.{member}(max_bytes=...) needs a positive integer, got {max_bytes!r}")
        return max_bytes

    async def read_bytes(self, path: str, *, max_bytes: int = READ_LIMIT) -> bytes:
        """A file's bytes; over `max_bytes` (64 MiB unless raised) an error naming it, never a cut."""
        return await self._workspace.read_bytes(self._path(path, "read_bytes"), self._limit(max_bytes, "read_bytes"))

    async def read_text(self, path: str, *, max_bytes: int = READ_LIMIT) -> str:
        """A UTF-8 file as text (same limit as `read_bytes`)."""
        rel = self._path(path, "read_text")
        data = await self._workspace.read_bytes(rel, self._limit(max_bytes, "read_text"))
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
        where = self._rel(cwd, "run(cwd=...)") if cwd is not None else None
        argv = command if isinstance(command, str) else tuple(command)
        try:
            result = await self._workspace.run(argv, cwd=None if where == "." else where, env=env, input=input,
                                               timeout_ms=timeout_ms)
        except OutsideWorkspace:
            raise  # a refused path is the eval's error, not a command that could not start
        except (FileNotFoundError, PermissionError, CommandNotRun) as exc:  # the program could not be started
            return not_started(exc)
        return settle(argv, result)  # a command that could not run gives no exit code to check

    def exec_argv(self, argv: Sequence[str], cwd: str | None = None) -> list[str]:
        """The host argv that runs `argv` in the workspace, to spawn it yourself (in `exec_cwd()`)."""
        where = self._rel(cwd, "exec_argv") if cwd else None
        return self._workspace.exec_argv(list(argv), None if where == "." else where)

    def exec_cwd(self, cwd: str | None = None) -> str | None:
        """The host directory to spawn `exec_argv` in (None for docker: anywhere)."""
        where = self._rel(cwd, "exec_cwd") if cwd else None
        return self._workspace.exec_cwd(None if where == "." else where)

    def __repr__(self) -> str:
        return f"<sandbox {self._workspace.kind} at {self.workdir}>"


class SandboxAPI(SandboxFiles):
    """What `t.sandbox` is. `register` files one Assertion (wiring is one line in the context)."""

    __slots__ = ("_baseline", "_deadline", "_read", "_reading", "_register", "_started")

    def __init__(self, workspace: Workspace, baseline: Snapshot, register: Register,
                 eval_file: str | None = None, deadline: float | None = None) -> None:
        super().__init__(workspace, eval_file)
        self._deadline = deadline  # the attempt's, in time.monotonic() seconds
        self._baseline: dict[str, FileState] = dict(baseline)
        self._register = register
        self._started = False
        self._reading: set[asyncio.Future[Any]] = set()
        self._read: _SharedRead | None = None

    def _mark_started(self) -> None:
        """The adapter was called: from now on the test's own writes count as changes."""
        self._started = True

    async def _settled(self) -> None:
        """Wait for the workspace reads of assertions already registered (never cancels them)."""
        pending = [f for f in self._reading if not f.done()]
        if pending:
            await asyncio.wait(pending)

    async def write_bytes(self, path: str, data: bytes) -> None:
        rel = self._path(path, "write_bytes")
        await self._settled()
        await self._workspace.write_bytes(rel, data)
        if not self._started:  # setting up before sending is part of the start, not a change
            self._baseline[rel] = FileState.of(data)

    async def run(self, command: Command | Sequence[str], *, cwd: str | None = None,
                  env: Mapping[str, str] | None = None, input: str | None = None,
                  timeout_ms: int | None = None) -> CommandResult:
        await self._settled()
        return await super().run(command, cwd=cwd, env=env, input=input, timeout_ms=timeout_ms)

    # -- changes ------------------------------------------------------------------------------
    def _scope(self, path: object, member: str) -> tuple[str, str]:
        """(shown, prefix) of a path the change assertions look under; "." is the whole workspace."""
        rel = self._rel(path, member)
        return rel, "" if rel == "." else rel

    def changed_paths(self) -> list[tuple[str, str]]:
        """`(path, status)` of every change since the start, sorted by path, read at the call.

        A list, so read on the spot — but never past the attempt's deadline (TimeoutError) or a
        Ctrl-C / SIGTERM (the attempt is interrupted)."""
        cancel = Cancel()
        timer = None
        if self._deadline is not None:
            timer = threading.Timer(max(0.0, self._deadline - time.monotonic()), cancel.set)
            timer.daemon = True
            timer.start()
        caught: list[int] = []
        try:
            with _signals_cancel(cancel, caught):
                now = self._workspace.snapshot(cancel)
        except Cancelled:
            if caught:  # the event loop sees the signal too (its wakeup fd) and stops the run
                _cancel_this_task()  # a stop, as the run's own handler is about to ask for
                raise asyncio.CancelledError("interrupted while reading the workspace") from None
            raise TimeoutError("t.sandbox.changed_paths(): the workspace could not be read before the attempt's "
                               "timeout") from None
        finally:
            if timer is not None:
                timer.cancel()
        return [(c.path, c.status) for c in changes(self._baseline, now)]

    def _assert(self, name: str, config: dict[str, Any], shown: str, decide: Decide) -> AssertionHandle:
        """Register now; read and decide in a worker thread. A timeout or Ctrl-C cancels the read
        (the assertion is then `unavailable`, reason `cancelled`)."""
        handle = self._register(None, _WorkspaceMatch(name, config, shown))
        reg = handle._reg
        reg.result = reg.evidence = None
        baseline = dict(self._baseline)
        if self._read is None or self._read.began:
            self._read = _SharedRead(self._workspace)
        read = self._read

        def work(cancel: Cancel) -> MatchResult:
            try:
                return decide(baseline, read.snapshot(cancel), cancel)
            except Exception as exc:
                cancel.check()  # cancelled: not an error of the workspace
                return _errored(exc)

        async def settle() -> None:
            cancel = Cancel()
            try:
                result = await asyncio.to_thread(work, cancel)
            except BaseException:
                cancel.set()
                raise
            reg.result = result
            reg.evidence = result.evidence if result.has_evidence else None

        reg.pending = asyncio.ensure_future(settle())
        self._reading.add(reg.pending)
        reg.pending.add_done_callback(self._reading.discard)
        return handle

    @staticmethod
    def _evidence(baseline: Snapshot, now: Snapshot, found: Sequence[Change], cancel: Cancel) -> str:
        return trimmed(diff_lines(baseline, now, found, cancel.check), EVIDENCE_CHARS)

    def file_exists(self, path: str) -> AssertionHandle:
        """Assertion: `path` is a file of the workspace now."""
        rel = self._path(path, "file_exists")
        shown = f"file_exists({rel!r})"

        def decide(baseline: Snapshot, now: Snapshot, cancel: Cancel) -> MatchResult:
            state = now.get(rel)
            if state is not None:
                what = f"a {state.node}" if state.node else f"{state.size} bytes"
                return MatchResult.matched(f"{rel} exists ({what})").with_evidence(
                    {"path": rel, "size": state.size, **({"node": state.node} if state.node else {})})
            inside = any(p.startswith(rel.rstrip("/") + "/") for p in now)
            why = f"{rel} is a directory, not a file" if inside else f"{rel} does not exist in the workspace"
            return MatchResult.mismatched(why).with_evidence({"path": rel, "exists": False})

        return self._assert("file_exists", {"path": rel}, shown, decide)

    def file_changed(self, path: str, status: str | None = None) -> AssertionHandle:
        """Assertion: `path` (or something under it; "." is the whole workspace) was added / modified /
        deleted since the start."""
        rel, prefix = self._scope(path, "file_changed")
        if status is not None and status not in STATUSES:
            raise self._error(f"t.sandbox.file_changed(status={status!r}): expected one of {', '.join(STATUSES)}")
        config: dict[str, Any] = {"path": rel, **({"status": status} if status else {})}
        shown = f"file_changed({rel!r}" + (f", status={status!r})" if status else ")")

        def decide(baseline: Snapshot, now: Snapshot, cancel: Cancel) -> MatchResult:
            found = changes(baseline, now, (prefix,))
            evidence = self._evidence(baseline, now, found, cancel)
            where = "the workspace" if not prefix else rel
            wanted = [c for c in found if status is None or c.status == status]
            if not wanted and (unknown := hidden(baseline, now, (prefix,))):
                return _unlisted(f"expected {where} {status or 'changed'}", unknown).with_evidence(evidence)
            if not found:
                return MatchResult.mismatched(f"{where} did not change since the start").with_evidence(evidence)
            statuses = _first([f"{shown_path(c.path)} {c.status}" for c in found])
            if not wanted:
                return MatchResult.mismatched(f"expected {where} {status}, but: {statuses}").with_evidence(evidence)
            return MatchResult.matched(statuses).with_evidence(evidence)

        return self._assert("file_changed", config, shown, decide)

    def no_changes(self, paths: str | Iterable[str] | None = None) -> AssertionHandle:
        """Assertion: nothing (or nothing under `paths`; "." is the whole workspace) changed."""
        scopes = [self._scope(p, "no_changes") for p in ([paths] if isinstance(paths, str) else (paths or ()))]
        under = [shown for shown, _ in scopes]
        prefixes = [prefix for _, prefix in scopes]
        config: dict[str, Any] = {"paths": under} if under else {}
        shown = f"no_changes({under!r})" if under else "no_changes()"

        def decide(baseline: Snapshot, now: Snapshot, cancel: Cancel) -> MatchResult:
            found = changes(baseline, now, prefixes)
            if not found and (unknown := hidden(baseline, now, prefixes)):
                return _unlisted("expected nothing changed", unknown).with_evidence("")
            if not found:
                where = f" under {', '.join(under)}" if under and all(prefixes) else ""
                return MatchResult.matched(f"nothing changed{where}").with_evidence("")
            listed = _first([f"{shown_path(c.path)} {c.status}" for c in found])
            return MatchResult.mismatched(f"{len(found)} change(s): {listed}").with_evidence(
                self._evidence(baseline, now, found, cancel))

        return self._assert("no_changes", config, shown, decide)

    def not_in_diff(self, match: BooleanMatch) -> AssertionHandle:
        """Assertion: no line the workspace diff adds matches `match` (`pattern`, `includes`, ...).

        A changed file whose content could not be read (too large, unreadable) makes it
        `unavailable` unless an added line elsewhere already matched: never a vacuous pass."""
        if not isinstance(match, BooleanMatch):
            raise self._error("t.sandbox.not_in_diff needs a text match such as pattern(...) or includes(...), "
                              f"got {type(match).__name__}")
        shown = f"not_in_diff({match.describe()})"

        def decide(baseline: Snapshot, now: Snapshot, cancel: Cancel) -> MatchResult:
            found = changes(baseline, now)
            hits: list[str] = []
            unsure: list[str] = []
            for line in added_lines(baseline, now, found, cancel.check):
                result = match.evaluate(line.text)
                if result.state is AssertionState.ERRORED:
                    return result
                if result.state is AssertionState.MATCHED:
                    (hits if line.certain else unsure).append(f"{shown_path(line.path)}:{line.number}: {line.text}")
            evidence = self._evidence(baseline, now, found, cancel)
            live = [(c, now.get(c.path)) for c in found if c.status != DELETED]
            unread = [f"{shown_path(c.path)} ({state.unread})" for c, state in live
                      if state is not None and state.unread]
            binary = sum(1 for _c, state in live if is_binary(state))
            notes = ([f"{binary} binary file(s) not searched"] if binary else []) + (
                [f"{len(unsure)} line(s) matched in file(s) whose earlier content is unknown"] if unsure else [])
            note = "".join(f"; {n}" for n in notes)
            if hits:
                return MatchResult.mismatched(
                    f"{len(hits)} added line(s) match {match.describe()}: {_first(hits)}{note}"
                ).with_evidence(evidence)
            if not unread and not unsure and (unknown := hidden(baseline, now)):
                return _unlisted(f"no added line matches {match.describe()} where it could look", unknown
                                 ).with_evidence(evidence)
            if unread or unsure:
                why = (f"could not search {len(unread)} changed file(s) whose content was not read: {_first(unread)}"
                       if unread else f"cannot tell whether these lines are new: {_first(unsure)}")
                return MatchResult.unavailable(UnavailableReason.DIFF_UNAVAILABLE, f"{why}{note}").with_evidence(
                    evidence)
            return MatchResult.matched(f"no added line matches {match.describe()}{note}").with_evidence(evidence)

        return self._assert("not_in_diff", {"match": match.name, "config": dict(match.config)}, shown, decide)


def _unlisted(text: str, folders: Sequence[str]) -> MatchResult:
    """Unavailable: what lies under these folders, which the read could not list, is unknown."""
    return MatchResult.unavailable(UnavailableReason.DIFF_UNAVAILABLE, f"{text}, but what is under "
                                   f"{_first([shown_path(f) for f in folders])} is unknown (a folder that could "
                                   "not be listed)")


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
        adapter_ctx = getattr(self, "_adapter_ctx", None)
        self._sandbox_api = SandboxAPI(workspace, baseline, register, self._eval_file,
                                       getattr(adapter_ctx, "deadline", None))
        return self._sandbox_api

    async def _sandbox_sent(self) -> None:
        """Called on `t.send`: the adapter may change the workspace, so the assertions registered
        before it read it first; the test's own writes count as changes from now on."""
        if self._sandbox_api is not None:
            await self._sandbox_api._settled()
            self._sandbox_api._mark_started()
