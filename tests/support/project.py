"""The one project driver: a throwaway NiceEval project on disk, driven through the real CLI.

`Project(root)` starts the real console script in a subprocess (this checkout first on
PYTHONPATH), as the hidden outside-in checks do: real pipes, exit codes, signals, a store file read
with sqlite3. `Project(root, in_process=True)` invokes the same CLI in this interpreter through
typer's CliRunner instead (tests/support/cli_runner.py; fast; the `project` fixture of
tests/conftest.py): its results have the same `returncode`/`stdout`/`stderr` (plus
`exit_code`). Everything else — `write`, `store`, `sql`, `query_json` — is the same in both ways.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parents[2]
_SCRIPT = Path(sys.executable).with_name("niceeval")
#: argv that starts the real CLI (the installed console script, else the same entry point).
NICEEVAL: list[str] = (
    [str(_SCRIPT)] if _SCRIPT.exists()
    else [sys.executable, "-c", "import sys; from niceeval_cli.cli import main; sys.argv[0] = 'niceeval'; main()"]
)
#: How the shell that ran pytest would shape the CLI's output: never passed on to it.
DISPLAY_VARIABLES = ("FORCE_COLOR", "COLUMNS", "LINES")
_SCRUBBED = ("OPENAI_API_KEY", "LOCAL_JUDGE_API_KEY", *DISPLAY_VARIABLES)


def base_env(extra: Mapping[str, str | None] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED}
    env["PYTHONPATH"] = str(REPO)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    for key, value in (extra or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


@dataclass(frozen=True)
class Result:
    """What one in-process CLI call gave back (the same names as `subprocess.CompletedProcess`)."""

    exit_code: int
    stdout: str
    stderr: str

    @property
    def returncode(self) -> int:
        return self.exit_code


@dataclass(frozen=True)
class Sealed:
    """What `niceeval run` sealed for a module holding exactly one eval (`Project.run_one`)."""

    run: Any  # the Result or CompletedProcess of the run
    attempt: dict[str, Any]
    results: list[dict[str, Any]]  # in registration order

    def by_label(self, label: str) -> dict[str, Any]:
        found = [r for r in self.results if r["label"] == label]
        assert len(found) == 1, (label, self.results)
        return found[0]

    @property
    def labels(self) -> list[str | None]:
        return [r["label"] for r in self.results]


class Project:
    """A project folder on disk; `run`/`cli` start the real `niceeval` in it (see the module doc)."""

    def __init__(self, root: Path, *, in_process: bool = False) -> None:
        self.root = root
        self.in_process = in_process
        root.mkdir(parents=True, exist_ok=True)

    def write(self, rel: str, text: str) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    def cli(self, *args: str, env: Mapping[str, str | None] | None = None, timeout: float = 120,
            stdin: str | None = None) -> Any:
        """`niceeval ARGS` in the project folder, output captured separately.

        A `subprocess.CompletedProcess`, or (in process) a `Result`: both have `returncode`."""
        if self.in_process:
            return self.invoke(*args, env=env, stdin=stdin)
        return subprocess.run([*NICEEVAL, *args], cwd=self.root, env=base_env(env), capture_output=True,
                              text=True, encoding="utf-8", errors="backslashreplace", timeout=timeout,
                              input=stdin)

    def invoke(self, *args: str, env: Mapping[str, str | None] | None = None, stdin: str | None = None) -> Result:
        """`niceeval ARGS` in this interpreter (typer's CliRunner), in the project folder.

        Each call starts as a new process would: what the last one changed dies with it — the
        environment (a `.env` it loaded, the variables `env` set), the working directory, `sys.argv`
        (`["niceeval", *args]` meanwhile) and the project's imported modules — so a test may edit
        the project between calls. It sees the environment a subprocess would (`base_env`): without
        the judge keys, FORCE_COLOR, COLUMNS and LINES of the shell that started pytest, unless
        `env` gives them. A `TMPDIR` in `env` is where its temporary files go, as in a new process
        (`tempfile` reads it once per interpreter: its cached folder is set aside meanwhile)."""
        import tempfile

        from niceeval_cli.cli import app
        from tests.support.cli_runner import CliRunner

        runner = CliRunner()
        old = Path.cwd()
        environ = dict(os.environ)
        argv = sys.argv
        tempdir = tempfile.tempdir
        if (env or {}).get("TMPDIR"):
            tempfile.tempdir = None  # read again from the environment the call gets
        sys.argv = ["niceeval", *args]  # a run stores its argv[1:] (runs.argv), as the console script's
        os.chdir(self.root)
        try:
            result = runner.invoke(app, list(args), env={**dict.fromkeys(_SCRUBBED), **(env or {})}, input=stdin,
                                   catch_exceptions=False)
        finally:
            os.chdir(old)
            sys.argv = argv
            tempfile.tempdir = tempdir
            _restore_environ(environ)
            self.forget()
        return Result(result.exit_code, result.stdout, result.stderr)

    def shell(self, script: str, env: Mapping[str, str | None] | None = None,
              timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Run a bash script in the project folder; `niceeval` there is the real CLI."""
        prelude = f"niceeval() {{ {' '.join(_quote(a) for a in NICEEVAL)} \"$@\"; }}\n"
        return subprocess.run(["bash", "-c", prelude + script], cwd=self.root, env=base_env(env),
                              capture_output=True, text=True, encoding="utf-8", errors="backslashreplace",
                              timeout=timeout)

    def popen(self, *args: str, env: Mapping[str, str | None] | None = None, **kw: Any) -> subprocess.Popen[str]:
        kw.setdefault("stdout", subprocess.PIPE)
        kw.setdefault("stderr", subprocess.PIPE)
        return subprocess.Popen([*NICEEVAL, *args], cwd=self.root, env=base_env(env), text=True,
                                encoding="utf-8", errors="backslashreplace", **kw)

    def run(self, *args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
        return self.cli("run", *args, **kw)

    @property
    def store(self) -> Path:
        return self.root / ".niceeval" / "results.db"

    def sql(self, statement: str, params: Sequence[Any] = (), store: Path | None = None) -> list[dict[str, Any]]:
        """Rows read straight from the store file (read-only, no NiceEval code involved)."""
        con = sqlite3.connect(f"file:{store or self.store}?mode=ro", uri=True, timeout=30)
        con.row_factory = sqlite3.Row
        try:
            return [dict(r) for r in con.execute(statement, params)]
        finally:
            con.close()

    def query_json(self, *args: str) -> Any:
        res = self.cli("query", *args, "--format", "json")
        assert res.returncode == 0, res.stderr
        return json.loads(res.stdout)

    def query(self, target: str = "attempts", *args: str) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = self.query_json(target, *args)
        return rows

    def attempts(self, *args: str) -> list[dict[str, Any]]:
        return self.query("attempts", *args)

    def assertions(self, *args: str) -> list[dict[str, Any]]:
        return self.query("assertions", *args)

    def run_one(self, source: str, *args: str, toml: str = "[project]\n",
                files: dict[str, str] | None = None) -> Sealed:
        """Write `source` as the project's one eval module (with `toml` and `files`), run it, and
        read back its one sealed attempt and its results in registration order."""
        self.write("niceeval.toml", toml)
        for rel, text in (files or {}).items():
            self.write(rel, text)
        self.write("evals/e.py", source)
        run = self.run(*args)
        assert run.returncode in (0, 1, 5), (run.returncode, run.stdout, run.stderr)
        attempts = self.attempts()
        assert len(attempts) == 1, attempts
        results = sorted(self.assertions(), key=lambda r: r["ordinal"])
        return Sealed(run, attempts[0], results)

    def forget(self) -> None:
        """Undo what an in-process run leaves in this interpreter: discovery puts the project's
        root on sys.path and imports its modules; afterwards the root leaves sys.path and those
        modules are forgotten, so a later test's `app.py` is never served from this one's cache."""
        forget_project(self.root)


def _restore_environ(saved: Mapping[str, str]) -> None:
    """Put the environment back as `saved` had it, touching only what changed (a thread of the
    test reading it meanwhile never sees it emptied)."""
    for key in [key for key in os.environ if key not in saved]:
        del os.environ[key]
    for key, value in saved.items():
        if os.environ.get(key) != value:
            os.environ[key] = value


#: Module name → (a weak reference to the module, its `__file__`), for the modules that have a file:
#: every in-process call looks at each of the worker's ~1 500 modules, and reading their files
#: again each time cost ~10 ms a call. A module whose object changed (imported anew) is read again.
_FILES: dict[str, tuple[weakref.ref[ModuleType], str]] = {}


def forget_project(root: Path) -> None:
    """See `Project.forget` (also for projects that are not driven through `Project`)."""
    resolved = str(root.resolve())
    sys.path[:] = [entry for entry in sys.path if entry != resolved]
    doomed = []
    for name, module in list(sys.modules.items()):
        known = _FILES.get(name)
        if known is None or known[0]() is not module:
            file = getattr(module, "__file__", None)
            if not (file and isinstance(module, ModuleType)):  # a namespace package: its paths, each time
                if module_is_under(module, resolved):
                    doomed.append(name)
                continue
            known = _FILES[name] = (weakref.ref(module), str(file))
        if known[1].startswith(resolved):
            doomed.append(name)
    for name in doomed:
        sys.modules.pop(name, None)
        _FILES.pop(name, None)


def module_is_under(module: object, folder: str) -> bool:
    """The module was imported from `folder`: its file, or — a namespace package (a folder without
    `__init__.py`, such as a project's `helpers/`) has no file — one of its package paths."""
    file = getattr(module, "__file__", None)
    if file:
        return str(file).startswith(folder)
    try:
        return any(str(entry).startswith(folder) for entry in getattr(module, "__path__", None) or ())
    except KeyError:  # a namespace package's path is recomputed from its parent's: the parent was
        return True  # forgotten already, so this one is a leftover of the same throwaway project


def _quote(arg: str) -> str:
    return "'" + arg.replace("'", "'\\''") + "'"


def wait_for(predicate: Callable[[], bool], timeout: float = 60, every: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(every)


def sealed_count(proj: Project) -> int:
    if not proj.store.exists():
        return 0
    try:
        return int(proj.sql("SELECT count(*) AS n FROM attempts")[0]["n"])
    except sqlite3.OperationalError:
        return 0


def signal_and_read(proc: subprocess.Popen[str], sig: int, timeout: float = 60) -> tuple[bool, str, str]:
    """Send `sig` to a process this test started, if it still runs, and read it to its end: (whether
    it was signalled, stdout, stderr). Killed, by its pid, if it does not end in `timeout`."""
    try:
        signalled = proc.poll() is None
        if signalled:
            proc.send_signal(sig)
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return signalled, out, err


def stop(proc: subprocess.Popen[str], sig: int = signal.SIGKILL) -> None:
    """Stop a process this test started, by its pid."""
    if proc.poll() is None:
        os.kill(proc.pid, sig)
    proc.communicate(timeout=60)
