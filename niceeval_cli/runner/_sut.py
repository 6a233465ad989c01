"""The system under test's identity (config.md): what of the agent enters the fingerprint.

A result may be reused only while the code that produced it is unchanged, the agent's as much as
the eval's. NiceEval hashes what it can see — the project files the adapter names (the python
callable's module, openai-chat's `tools` / `tool_handlers` modules, the files in a command's
argv, a custom adapter's module) with the project modules they import — and what the experiment
declares: `inputs` globs, a `version` string, the output of a `version_command` — and, for an
adapter running an installed program on this host (a coding agent's CLI), that program's
`--version`. The identity is
per experiment (and adapter), made once per run and shared by every slot: a 20 000-eval plan
reads each file and runs each command once.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import subprocess
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, NamedTuple

from .._capture import kill_group
from .._errors import SetupError
from .._project_sources import ProjectSources, glob_files, reference_files
from ..authoring import Adapter, InstalledVersionError
from ..config import ConfigError, ExperimentConfig, ProjectConfig

#: How long a `version_command` may take: it runs before anything is planned.
VERSION_COMMAND_TIMEOUT_S = 120
#: Never part of `inputs`, whatever a glob matches: they change with every run or are not the project's.
_NEVER_INPUTS = frozenset({".git", "__pycache__", ".niceeval"})


class SutIdentity(NamedTuple):
    """The fingerprint parts of an experiment's system under test, and whether they are only its
    configuration (a network adapter without `inputs`, `version` or `version_command`)."""

    parts: dict[str, Any]
    config_only: bool


class SutIdentities:
    """Each experiment's SutIdentity, made once per run (per experiment and adapter)."""

    def __init__(self, project: ProjectConfig, store: Path | None = None) -> None:
        self.project = project
        self.sources = ProjectSources(project.root)
        self._store_files = (
            {store.resolve().with_name(store.name + tail) for tail in ("", "-wal", "-shm", "-journal")}
            if store is not None else set()
        )
        self._made: dict[tuple[str, int, bool, bool], SutIdentity] = {}
        self._declared: dict[str, dict[str, Any]] = {}
        self._outputs: dict[str, str] = {}  # version_command → sha256 of its stdout (run once)

    def of(self, experiment: ExperimentConfig, adapter: Adapter | None, *, own: bool,
           on_host: bool = True) -> SutIdentity:
        """`own`: the adapter is the eval's own (`define_eval(adapter=...)`), whose code is in the
        eval's sources already; the experiment's declarations still apply. `on_host`: the adapter's
        programs run on this host (no sandbox, or one whose commands run here); in a docker
        sandbox the image's id, part of the fingerprint already, identifies what is installed."""
        key = (experiment.id, id(adapter), own, on_host)
        made = self._made.get(key)
        if made is None:
            made = self._made[key] = self._make(experiment, adapter, own, on_host)
        return made

    def _make(self, experiment: ExperimentConfig, adapter: Adapter | None, own: bool, on_host: bool) -> SutIdentity:
        files: list[Path] = []
        if adapter is not None and not own:
            files += adapter.sut_files
            if experiment.adapter is not None and ":" in experiment.adapter:  # a custom adapter's module
                files += reference_files(experiment.adapter)
        declared = self._declared_parts(experiment)
        # As scripts (a command's argv): a file's own folder is searched for its imports too. For
        # a module that only adds a sibling shadowing a top-level name, never one that is missed.
        parts: dict[str, Any] = {"sut": self.sources.files(files, scripts=True), **declared}
        installed = self._installed(adapter) if adapter is not None and not own and on_host else None
        if installed is not None:
            parts["installed"] = dict(installed)
        configured = adapter is not None and not own and experiment.adapter is not None
        config_only = configured and not declared and installed is None \
            and (bool(adapter and adapter.remote) or not parts["sut"])
        return SutIdentity(parts, config_only)

    def _installed(self, adapter: Adapter) -> Any:
        """The adapter's installed program's version (a coding agent's CLI), read once per run. A
        program that cannot say is unknown, and unknown never matches: its slots execute (none is
        reused), and the adapter's preflight, given the same answer, stops them with a setup error
        while the other experiments run."""
        try:
            return adapter.installed_version()
        except InstalledVersionError as exc:
            return {"unreadable": str(exc), "this_run": uuid.uuid4().hex}

    def _declared_parts(self, experiment: ExperimentConfig) -> dict[str, Any]:
        declared = self._declared.get(experiment.id)
        if declared is None:
            declared = {}
            if experiment.inputs is not None:
                declared["inputs"] = self._inputs(experiment)
            if experiment.version is not None:
                declared["version"] = experiment.version
            if experiment.version_command is not None:
                command = experiment.version_command
                output = self._outputs.get(command)
                if output is None:
                    output = self._outputs[command] = self._run_version_command(experiment.id, command)
                declared["version_command"] = {"command": command, "stdout_sha256": output}
            self._declared[experiment.id] = declared
        return declared

    def _inputs(self, experiment: ExperimentConfig) -> dict[str, str]:
        """The files `inputs` matches (its content by path); a glob matching nothing is an error:
        it would identify nothing while looking like it does."""
        root = self.sources.root
        found: list[Path] = []
        for pattern in experiment.inputs or ():
            matched = [path for path in glob_files(root, pattern, _NEVER_INPUTS) if self._is_input(path)]
            if not matched:
                folder = (root / pattern).is_dir()
                every = "**" if pattern.strip("/") in ("", ".") else pattern.rstrip("/") + "/**"
                hint = (f"it names a folder: write {every!r} for every file in it"
                        if folder else "fix the glob (relative to the project root) or remove it")
                raise ConfigError(
                    f"{self._where()}: [experiments.{experiment.id}] inputs: {pattern!r} matches no file under "
                    f"{root}; {hint}."
                )
            found += matched
        return self.sources.contents(found)

    def _is_input(self, path: Path) -> bool:
        if not path.is_file() or _NEVER_INPUTS & set(path.relative_to(self.sources.root).parts):
            return False
        return path.resolve() not in self._store_files  # the store changes with every run

    def _run_version_command(self, experiment_id: str, command: str) -> str:
        """sha256 of the command's stdout, run in the project root; a failure is a setup error."""
        where = f"[experiments.{experiment_id}] version_command {command!r}"
        why = "the run needs its output to tell whether earlier results still stand"
        try:
            returncode, stdout_sha256, stderr = _hashed_output(command, self.sources.root)
        except subprocess.TimeoutExpired:
            raise SetupError(f"{self._where()}: {where} did not finish within {VERSION_COMMAND_TIMEOUT_S} s; "
                             f"{why}. Nothing was run.") from None
        except OSError as exc:
            raise SetupError(f"{self._where()}: {where} could not start ({exc.strerror}); {why}. "
                             "Nothing was run.") from None
        if returncode != 0:
            stderr_tail = stderr.decode("utf-8", errors="replace").strip()[-500:]
            raise SetupError(
                f"{self._where()}: {where} failed with exit code {returncode} in {self.sources.root}"
                f"{f' (stderr: {stderr_tail})' if stderr_tail else ''}; {why}. Fix the command or remove it. "
                "Nothing was run."
            )
        return stdout_sha256

    def _where(self) -> str:
        return str(self.project.file or "niceeval.toml")


def _hashed_output(command: str, cwd: Path) -> tuple[int, str, bytes]:
    """Run `command` in a shell: its exit code, the SHA-256 of its stdout, the end of its stderr.

    Both streams are read as they come and neither is held (`cat data/*.jsonl` may print
    gigabytes): stdout is hashed, stderr keeps its last bytes. Past the deadline the command's
    whole process group is killed, and TimeoutExpired raised."""
    deadline = time.monotonic() + VERSION_COMMAND_TIMEOUT_S
    process = subprocess.Popen(command, shell=True, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, start_new_session=True)
    sha, tail = hashlib.sha256(), bytearray()
    readers = [threading.Thread(target=_read, args=(process.stdout, sha.update), daemon=True),
               threading.Thread(target=_read, args=(process.stderr, functools.partial(_keep_end, tail)), daemon=True)]
    try:
        for reader in readers:
            reader.start()
        for reader in readers:
            reader.join(max(deadline - time.monotonic(), 0))
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(max(deadline - time.monotonic(), 0))
        if process.returncode is None or any(reader.is_alive() for reader in readers):
            # still at work, or a process it left behind holds its output open
            raise subprocess.TimeoutExpired(command, VERSION_COMMAND_TIMEOUT_S)
    except BaseException:  # the deadline, or Ctrl-C: its own session gets no signal from the terminal
        kill_group(process.pid)
        process.wait()
        raise
    return process.returncode, sha.hexdigest(), bytes(tail)


def _read(stream: IO[bytes] | None, take: Callable[[bytes], object]) -> None:
    if stream is None:
        return
    with stream:
        while chunk := stream.read(1 << 16):
            take(chunk)


def _keep_end(tail: bytearray, chunk: bytes) -> None:
    tail += chunk
    del tail[:-2000]
