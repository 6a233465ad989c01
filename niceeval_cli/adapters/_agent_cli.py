"""What the `claude-code` and `codex` adapters share: a coding-agent CLI run once per `t.send`.

The CLI runs non-interactively in the attempt's sandbox workspace (docs/sandbox.md; without a
sandbox, in the directory niceeval runs in), its JSON event stream on stdout. Each CLI's module
says how to call it (`argv`) and how to read its stream (`read`); this one runs it, keeps each
session's id for the follow-up turn's resume, and refuses to call a turn observed unless the
stream ended with its final event (a crashed, killed or cut-off CLI leaves the turn unobserved)
and was kept whole (a stream past the output bound loses its middle: `capture-limit-exceeded`).

Options (`[experiments.<id>.options]`): `binary` (path or name on PATH), `model`, `args` (extra
arguments), `env` (names of variables handed to the CLI: in a docker sandbox nothing else is),
`timeout_ms`. The preflight runs `<binary> --version`: missing or broken is a setup error (exit 3).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
from abc import abstractmethod
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from .._capture import OUTPUT_LIMIT, json_lines_around_cut, run_captured
from .._credentials import looks_like_secret
from .._states import UnavailableReason
from ..authoring import Adapter, AdapterContext, InstalledVersionError, Turn
from ..traces import current_turn_trace
from ._events import stream_lines
from ._options import AdapterOptions, tail

OBSERVES = ("messages", "tool_calls")
_SESSION_KEY = "cli_session_id"  # where a session's CLI session (thread) id is kept for resume
_POSIX = os.name == "posix"
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.IGNORECASE)


class AgentCliOptions(AdapterOptions):
    binary: str | None = None
    model: str | None = None
    args: list[str] = Field(default_factory=list)
    env: list[str] = Field(default_factory=list)
    timeout_ms: int = Field(default=600_000, gt=0)

    @field_validator("env")
    @classmethod
    def _names(cls, value: list[str]) -> list[str]:
        for name in value:
            if not name or "=" in name or not name.replace("_", "a").isalnum():
                raise ValueError(f"expected names of environment variables (e.g. ANTHROPIC_API_KEY), got {name!r}")
        return value


@dataclass(frozen=True)
class Read:
    """What a CLI's stream said: the turn, whether the final event arrived, the session id."""

    turn: Turn
    complete: bool
    session_id: str | None


class AgentCliFailed(RuntimeError):
    """The CLI could not run, or ended without a stream at all (an `adapter-error`)."""


class AgentCliAdapter(Adapter):
    """Runs one coding-agent CLI per `t.send`; subclasses say how to call it and read it."""

    default_binary: str

    def __init__(self, name: str, options: AgentCliOptions, version: str, root: Path) -> None:
        super().__init__(name, send=self._send_message, version=version, observes=OBSERVES)
        self.options = options
        self.root = root  # the project root: where the CLI works without a sandbox
        self.binary = _resolved(options.binary or self.default_binary, root)
        # the keys handed to the CLI are never stored: whatever it echoes of them is redacted
        self.secrets: list[str] = [value for name in options.env if (value := os.environ.get(name))
                                   and (_SECRET_NAME.search(name) or looks_like_secret(value))]
        self._version: dict[str, str] | None = None  # `--version` as read while planning, once
        self._version_error: str | None = None

    @abstractmethod
    def argv(self, message: str, resume: str | None, model: str | None) -> list[str]:
        """The command line of one turn (`resume`: the session id of the turn before, if any)."""

    @abstractmethod
    def read(self, message: str, lines: Sequence[str], state: dict[str, Any]) -> Read:
        """The turn the CLI's stdout lines describe (`state`: the session's, kept between its turns)."""

    def environment(self) -> dict[str, str]:
        """The named variables (those set) and, under `traces = "otlp"`, the turn's trace settings."""
        env = {name: os.environ[name] for name in self.options.env if os.environ.get(name)}
        trace = current_turn_trace()
        if trace is not None:
            env.update(trace.environment())
        return env

    async def _send_message(self, ctx: AdapterContext, message: str, **send_options: Any) -> Turn:
        if send_options:
            raise TypeError(f"the {self.name} adapter takes no t.send options, got {', '.join(sorted(send_options))}")
        state = ctx.session.state if ctx.session is not None else {}
        argv = self.argv(message, state.get(_SESSION_KEY), self.options.model or ctx.experiment.model)
        code, out, err = await self._run(ctx, argv)
        kept = json_lines_around_cut(out)  # past the output bound: the stream's head and tail
        lines = [line for line in stream_lines(kept) if line.strip()]
        read = self.read(message, lines, state)
        if read.session_id:
            state[_SESSION_KEY] = read.session_id
        if not read.complete:
            how = "was killed by signal" if code is not None and code < 0 else "exited with code"
            detail = f"{how} {abs(code) if code is not None and code < 0 else code}"
            if not lines:  # nothing to keep: the CLI did not run as an agent at all
                raise AgentCliFailed(f"`{shlex.join(argv[:2])}` {detail} before writing its event stream; "
                                     f"stderr tail: {tail(err, self.secrets) or '(empty)'}")
            note = f"{self.name}: the event stream ended without its final event ({detail}); the turn is unobserved"
            ctx.note(note)
        elif code not in (0, None):
            ctx.note(f"{self.name}: the CLI exited with code {code} after its final event")
        if kept != out and read.complete:
            # The final event is in the tail, but the events in the middle are lost: the calls kept
            # still count, none can be proved absent (`not_called_tool` passed over a call cut out).
            ctx.note(f"{self.name}: its event stream passed the {OUTPUT_LIMIT} bytes of output kept; the events "
                     "in the middle were left out, so the turn observes neither messages nor tool calls completely")
            turn = dataclasses.replace(read.turn, observed=frozenset())
            object.__setattr__(turn, "_tool_calls_reason", UnavailableReason.CAPTURE_LIMIT_EXCEEDED.value)
            return turn
        return read.turn

    async def _run(self, ctx: AdapterContext, argv: list[str]) -> tuple[int | None, str, str]:
        env = self.environment()
        timeout_ms = self.options.timeout_ms
        if ctx.sandbox is not None:
            result = await ctx.sandbox.run(argv, env=env or None, timeout_ms=timeout_ms)
            code, out, err, timed_out = result.exit_code, result.stdout, result.stderr, result.timed_out
            code = code if isinstance(code, int) else None
        else:
            done = await run_captured(argv, cwd=str(self.root), env={**os.environ, **env}, timeout_s=timeout_ms / 1000,
                                      new_session=_POSIX)
            code, out, err, timed_out = done.exit_code, done.stdout.text(), done.stderr.text(), done.timed_out
        if timed_out:
            ctx.note(f"{self.name}: killed after timeout_ms={timeout_ms}; the turn is unobserved")
        return code, out, err

    def installed_version(self) -> dict[str, str] | None:
        """The CLI's `--version` on this host (its first line, and a digest of all it printed): an
        upgraded CLI is a changed system under test (config.md). Read once per run; a CLI that
        cannot say is `InstalledVersionError` (its cause, as the preflight would give it)."""
        if self._version is None and self._version_error is None:
            self._version_error = self._read_version()
        if self._version_error is not None:
            raise InstalledVersionError(self._version_error)
        return self._version

    def _read_version(self) -> str | None:
        found = self._found()
        if found is None:
            return self._not_found()
        try:
            done = subprocess.run([found, "--version"], stdin=subprocess.DEVNULL, capture_output=True, timeout=30,
                                  start_new_session=_POSIX, check=False)
        except subprocess.TimeoutExpired as exc:
            return self._failed("timed out", (exc.stderr or b"").decode("utf-8", errors="replace"))
        except OSError as exc:
            return f"`{self.binary} --version` could not start: {exc}"
        if done.returncode != 0:
            return self._failed(f"exited with code {done.returncode}", done.stderr.decode("utf-8", errors="replace"))
        printed = done.stdout.decode("utf-8", errors="replace").strip()
        self._version = {"version": printed.splitlines()[0][:200] if printed else "",
                         "stdout_sha256": hashlib.sha256(done.stdout).hexdigest()}
        return None

    def _failed(self, why: str, stderr: str) -> str:
        """The cause a failed `--version` gives (planning's read and the preflight's alike)."""
        return f"`{self.binary} --version` {why}: {tail(stderr, self.secrets, 300) or '(no output)'}"

    def _found(self) -> str | None:
        """The binary on PATH, or its path; a relative path is one the project root does not hold
        (`_resolved` made the others absolute): it counts as missing, whatever the folder
        `niceeval` was typed in holds."""
        if os.sep not in self.binary:
            return shutil.which(self.binary)
        return self.binary if os.path.isabs(self.binary) and os.path.exists(self.binary) else None

    def _not_found(self) -> str:
        where = " on PATH" if os.sep not in self.binary else \
            "" if os.path.isabs(self.binary) else f" in the project root ({self.root})"
        return (f"the {self.name} adapter's binary {self.binary!r} was not found{where}; install it "
                f"({self.install_hint}) or set `binary` in the experiment's options")

    async def preflight(self) -> str | None:
        """`<binary> --version` runs: else the cause (the run stops with a setup error, exit 3).
        Already read while planning (`installed_version`): that answer stands for this run."""
        if self._version is not None or self._version_error is not None:
            return self._version_error
        found = self._found()
        if found is None:
            return self._not_found()
        try:
            done = await run_captured([found, "--version"], timeout_s=30, new_session=_POSIX)
        except OSError as exc:
            return f"`{self.binary} --version` could not start: {exc}"
        if done.timed_out or done.exit_code != 0:
            return self._failed("timed out" if done.timed_out else f"exited with code {done.exit_code}",
                                done.stderr.text())
        return None

    async def preflight_in(self, probe: Callable[[list[str]], Awaitable[Any]], where: str) -> str | None:
        """`<binary> --version` where the attempts will run it, for a sandbox whose commands do not
        run on this host (`where`: "docker image NAME"): the binary that counts is the image's.
        `probe(argv)` gives the sandbox kind's result (exit 127: not found there)."""
        result = await probe([self.binary, "--version"])
        if result.timed_out:
            return f"`{self.binary} --version` timed out in the {where}"
        if result.exit_code == 127:
            return (f"the {self.name} adapter's binary {self.binary!r} was not found in the {where}; install it "
                    f"there ({self.install_hint}) or set `binary` in the experiment's options")
        if result.exit_code != 0:
            return (f"`{self.binary} --version` exited with code {result.exit_code} in the {where}: "
                    f"{tail(result.stderr, self.secrets, 300) or '(no output)'}")
        return None

    install_hint: str = ""


def _resolved(binary: str, root: Path) -> str:
    """A relative path made a project file's absolute path (the CLI runs in the sandbox's workdir),
    taken from the project root wherever `niceeval` was typed."""
    if os.sep in binary and not os.path.isabs(binary) and (root / binary).exists():
        return str((root / binary).resolve())
    return binary


def parse_lines(lines: Sequence[str]) -> list[dict[str, Any]]:
    """The stream's JSON objects; a line that is not one (a CLI's stray warning) is skipped."""
    events = []
    for line in lines:
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):  # not JSON, or nested past what the parser reads
            continue
        if isinstance(value, dict):
            events.append(value)
    return events


def text_of(content: Any) -> str:
    """A tool result's or message's content as text (a string, or a list of text blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return "" if content is None else str(content)


__all__ = ["OBSERVES", "AgentCliAdapter", "AgentCliFailed", "AgentCliOptions", "Read", "parse_lines", "text_of"]
