"""Docker for tests: the locally built test images, and containers scoped to what a test made.

Whether Docker is usable (skip outside CI, fail inside) is decided in tests/support/components.py with
every other real component. The images are built by `.ci/docker.sh` (never pulled).
"""

from __future__ import annotations

import contextlib
import secrets
import shlex
import shutil
import sqlite3
import subprocess
from pathlib import Path

from tests.support.components import PYTHON_IMAGE, SHELL_IMAGE, need_docker

__all__ = ["PYTHON_IMAGE", "SHELL_IMAGE", "docker_logging_to", "docker_seeing_only", "need_docker",
           "niceeval_containers", "processes_running", "unique_seconds"]

LABEL = "niceeval.sandbox"


def _ps(*filters: str) -> list[str]:
    done = subprocess.run(["docker", "ps", "-aq", *(f"--filter={f}" for f in filters)],
                          capture_output=True, text=True, timeout=30, check=False)
    return done.stdout.split()


def niceeval_containers(*, owner: int | None = None, store: Path | None = None, name: str | None = None) -> list[str]:
    """NiceEval's containers (running or not) that THIS test made: those created by process `owner`,
    by a run sealed in `store`, or whose name contains `name`.

    Never every container on the daemon: another process (a second test run, a developer's own
    `niceeval run`) may be using the same daemon and image at the same time.
    """
    if owner is None and store is None and name is None:
        raise TypeError("niceeval_containers(): say which containers are this test's (owner=, store= or name=)")
    found: list[str] = []
    if owner is not None:
        found += _ps(f"label={LABEL}", f"label={LABEL}.owner={owner}")
    if name is not None:
        found += _ps(f"label={LABEL}", f"name={name}")
    if store is not None:
        with contextlib.closing(sqlite3.connect(f"file:{Path(store).resolve()}?mode=ro", uri=True)) as db:
            runs = [row[0] for row in db.execute("SELECT id FROM runs")]
        for run in runs:
            found += _ps(f"label={LABEL}", f"label={LABEL}.run={run}")
    return sorted(set(found))


def unique_seconds() -> str:
    """A `sleep` duration no other test run uses at the same time, so `processes_running("sleep", n)`
    finds only this test's processes (the process table is the whole machine's)."""
    return str(10_000_000 + secrets.randbelow(89_999_999))


def processes_running(*argv: str) -> list[int]:
    """Pids (host-wide, containers included) whose command line is exactly `argv`: give the
    processes an argv of their own (`unique_seconds`) — another test run may be on this machine."""
    wanted = "\0".join(argv).encode() + b"\0"
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if (entry / "cmdline").read_bytes() == wanted:
                found.append(int(entry.name))
        except OSError:
            continue  # gone meanwhile
    return found


def docker_seeing_only(run_id: str | None, folder: Path, *, label: str | None = None) -> str:
    """A `docker` for NICEEVAL_DOCKER whose `ps` lists only the containers of run `run_id` (or,
    given `label`, only those carrying that `key=value` label).

    `niceeval sandbox list|prune` look at every NiceEval container on the machine; a test that
    prunes must remove only what it made, never a parallel test's kept container. This wrapper
    (written into the test's own `folder`) adds a label filter to `docker ps` and passes every
    other command to the real docker unchanged."""
    real = shutil.which("docker") or "docker"
    script = folder / "docker-seeing-one-run"
    only = label or f"{LABEL}.run={run_id}"
    script.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = ps ]; then exec {shlex.quote(real)} "$@" --filter label={shlex.quote(only)}; fi\n'
        f'exec {shlex.quote(real)} "$@"\n',
        encoding="utf-8",
    )
    script.chmod(0o755)
    return str(script)


def docker_logging_to(log: Path, folder: Path, *, name: str = "docker-logging") -> str:
    """A `docker` for NICEEVAL_DOCKER that appends each command line it is given to `log` and passes
    it to the real docker: what a run asked of the daemon, call by call (written into `folder` as
    `name`; named `docker` in a folder put first on PATH, it is the `docker` a user has)."""
    real = shutil.which("docker") or "docker"
    script = folder / name
    script.write_text(f'#!/bin/sh\necho "$*" >> {shlex.quote(str(log))}\nexec {shlex.quote(real)} "$@"\n',
                      encoding="utf-8")
    script.chmod(0o755)
    return str(script)
