"""The built-in `command` adapter: one subprocess per `t.send`, message on stdin, reply on stdout.

    [experiments.cli-agent]
    adapter = "command"
    [experiments.cli-agent.options]
    argv = ["python", "agent.py", "--quiet"]
    timeout_ms = 30000        # default 60000; the process (group) is killed when it is exceeded
    cwd = "agent"             # optional working directory (relative to the project root, the default)
    output = "ndjson"         # optional: "text" (default) or "ndjson" (the event protocol)

With `output = "text"` the reply is stdout decoded as UTF-8 with trailing newlines removed, and
nothing else is observed. With `output = "ndjson"` each stdout line is one event object and the
last line is `{"type": "final", "message": ..., "status"?: ..., "usage"?: {...}}`
(docs/adapters.md, "The event protocol"); a malformed line is an error naming its number. A non-zero exit raises an
error carrying the exit code and the tail of stderr; the runner records it as the Attempt's
`adapter-error`. A timeout raises too (the Attempt is `errored`, never `failed`).

Without a sandbox the command runs in the project root (or `cwd` below it), wherever `niceeval`
was typed: `python app/agent.py` is the project's `app/agent.py`, the file the fingerprint hashed.
In a sandbox (docs/sandbox.md) the command runs inside the attempt's workspace: in its workdir,
for docker through `docker exec` (adapters/_in_sandbox.py).
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from .._capture import json_lines_around_cut, run_captured
from .._states import UnavailableReason
from ..authoring import Adapter, AdapterContext, Turn
from ..traces import current_turn_trace
from ._events import OBSERVES_EVENTS, turn_from_ndjson
from ._in_sandbox import host_argv, run_in_sandbox
from ._options import AdapterOptions, load_error, parse_options, tail

VERSION = "1"
_POSIX = os.name == "posix"


class CommandOptions(AdapterOptions):
    argv: list[str] = Field(min_length=1)
    timeout_ms: int = Field(default=60_000, gt=0)
    cwd: str | None = None
    output: Literal["text", "ndjson"] = "text"

    @field_validator("argv")
    @classmethod
    def _non_empty_words(cls, value: list[str]) -> list[str]:
        if any(not word for word in value):
            raise ValueError("every word of argv must be non-empty text")
        return value


class CommandFailed(RuntimeError):
    """The command exited non-zero or timed out (an `adapter-error`)."""


def _named_files(options: CommandOptions, where: Path) -> tuple[Path, ...]:
    """The files argv names (a word, or the value of `--flag=value`, or the module after `-m`),
    where the command looks for them (`where`, its working directory): the runner keeps those
    inside the project as the system under test's identity."""
    found: list[Path] = []
    for index, word in enumerate(options.argv):
        value = word.partition("=")[2]
        candidates = [word, value] if value else [word]
        module = _RUN_MODULE.fullmatch(options.argv[index - 1]) if index else None
        if module is not None and not module.group(1):  # `python -m app.agent`: the module's files
            candidates += _module_run(word)
        joined = _RUN_MODULE.fullmatch(word) if index else None
        if joined is not None and joined.group(1):  # `python -mapp.agent`, `python -Bm app.agent`'s kin
            candidates += _module_run(joined.group(1))
        for candidate in candidates:
            path = where / candidate  # an absolute word stays itself
            try:
                named = path.is_file()
            except OSError:  # not a path at all (an inline script longer than a file name can be)
                named = False
            if named and path not in found:
                found.append(path)
    return tuple(found)


#: Python's `-m`, alone, after its flags that take no value (`-Bm`, `-um`), or joined to its
#: module (`-mapp.agent`): group 1 is the joined module, empty when the next word is the module.
_RUN_MODULE = re.compile(r"-[bBdEiIOPqRsSuv]*m(.*)")


def _module_run(dotted: str) -> list[str]:
    """The files `python -m <dotted>` may run, relative to the folder it starts in: each package's
    `__init__.py` on the way, then the module, or the package's `__main__.py`."""
    parts = dotted.split(".")
    if not all(part.isidentifier() for part in parts):
        return []
    packages = ["/".join(parts[:count]) for count in range(1, len(parts) + 1)]
    return [f"{package}/__init__.py" for package in packages] + [f"{packages[-1]}.py", f"{packages[-1]}/__main__.py"]


class CommandAdapter(Adapter):
    """Runs `argv` once per `t.send`."""

    remote = False  # the program runs here: the project files its argv names are its identity

    def __init__(self, options: CommandOptions, where: Path) -> None:
        super().__init__("command", send=self._send_message, version=VERSION,
                         observes=OBSERVES_EVENTS if options.output == "ndjson" else ())
        self.options = options
        self.where = where  # its working directory on this host: the project root, or `cwd` below it
        self.secrets: list[str] = []
        self._shown = shlex.join(options.argv)
        self._host_argv = host_argv(options.argv, where)  # for a local sandbox: project files by absolute path
        self.sut_files = _named_files(options, where)

    async def _send_message(self, ctx: AdapterContext, message: str, **send_options: Any) -> Turn:
        if send_options:
            raise TypeError(
                f"the command adapter takes no t.send options, got {', '.join(sorted(send_options))}"
            )
        if ctx.sandbox is not None:
            code, out, err = await self._in_sandbox(ctx.sandbox, message)
        else:
            code, out, err = await self._on_host(message)
        if code is not None and not isinstance(code, int):  # unavailable: it never ran (sandbox.md)
            raise CommandFailed(f"command `{self._shown}` could not run: {getattr(code, 'reason', code)}")
        if code != 0:
            how = f"was killed by signal {-code}" if code is not None and code < 0 else f"exited with code {code}"
            stderr = tail(err, self.secrets)
            raise CommandFailed(f"command `{self._shown}` {how}; stderr tail: {stderr or '(empty)'}")
        text = out
        if self.options.output == "ndjson":
            kept = json_lines_around_cut(text)
            turn = turn_from_ndjson(message, kept, f"command `{self._shown}`")
            if kept != text:  # output past the bound: the events in the middle are lost, so what is
                # left can prove no call absent (`not_called_tool` passed over a call cut out)
                turn = dataclasses.replace(turn, observed=frozenset())
                object.__setattr__(turn, "_tool_calls_reason", UnavailableReason.CAPTURE_LIMIT_EXCEEDED.value)
            return turn
        return Turn(input=message, message=text.rstrip("\r\n"), observed=frozenset())


    async def _on_host(self, message: str) -> tuple[int | None, str, str]:
        """Its own process group (a timeout also ends its children); stdout and stderr capped
        (their first and last 2 MiB kept, the cut marked); killed at `timeout_ms`, and the step
        ends then even if an escaped child holds the pipes."""
        trace = current_turn_trace()  # traces = "otlp": the exporter's settings and the turn's TRACEPARENT
        env = {**os.environ, **trace.environment()} if trace is not None else None
        done = await run_captured(self.options.argv, cwd=str(self.where), env=env, input=message.encode("utf-8"),
                                  timeout_s=self.options.timeout_ms / 1000, new_session=_POSIX)
        if done.timed_out:
            raise self._timed_out()
        return done.exit_code, done.stdout.text(), done.stderr.text()

    async def _in_sandbox(self, sandbox: Any, message: str) -> tuple[int | None, str, str]:
        """In the attempt's workspace (docs/sandbox.md): cwd = workdir, docker through `docker exec`."""
        trace = current_turn_trace()
        result = await run_in_sandbox(sandbox, self.options.argv, message=message, timeout_ms=self.options.timeout_ms,
                                      resolved=self._host_argv, env=trace.environment() if trace is not None else None)
        if result.timed_out:
            raise self._timed_out()
        return result.exit_code, result.stdout, result.stderr

    def _timed_out(self) -> CommandFailed:
        return CommandFailed(
            f"command `{self._shown}` did not finish within timeout_ms={self.options.timeout_ms} and was killed"
        )


def build(options: Mapping[str, Any], experiment_id: str, root: Path) -> CommandAdapter:
    """The `command` adapter of one experiment (a program not on PATH is a load error): it runs in
    `root`, the project root, or in its `cwd` option taken from there."""
    parsed = parse_options(CommandOptions, options, experiment_id, "command")
    program = parsed.argv[0]
    if os.sep not in program and (os.altsep is None or os.altsep not in program):
        if shutil.which(program) is None:
            raise load_error(experiment_id, "command", "argv",
                             f"the program {program!r} is not found on PATH")
    where = root / Path(parsed.cwd).expanduser() if parsed.cwd is not None else root  # an absolute cwd stays itself
    if not where.is_dir():
        raise load_error(experiment_id, "command", "cwd",
                         f"{parsed.cwd!r} is not a directory (a relative cwd is taken from the project root, {root})")
    return CommandAdapter(parsed, where)
