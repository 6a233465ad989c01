"""Sandboxed projects driven from the outside (issues 22 and 23): a `command` adapter whose argv
is the "agent", a template, the real `niceeval` in a subprocess, local and docker variants.

Docker variants skip with the reason where no daemon (or test image) is present; CI fails instead
(tests/support/docker.py). Leftovers are looked up by this test's own run ids and temp folder
only, so another process using the same daemon cannot fail them.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.project import Project

KINDS = ["local", "docker"]


def need_kind(kind: str) -> None:
    """Skip (outside CI) a docker variant without a daemon or the test image."""
    if kind == "docker":
        from tests.support.docker import SHELL_IMAGE, need_docker

        need_docker(SHELL_IMAGE)


def sandbox_project(proj: Project, kind: str, agent: str, evals: str, *, timeout_ms: int = 60_000,
                    template: dict[str, str] | None = None) -> Project:
    """A project whose experiment runs the shell script `agent` inside the sandbox."""
    from tests.support.docker import SHELL_IMAGE

    for rel, text in (template or {"README.md": "# demo\n"}).items():
        proj.write(f"repo/{rel}", text)
    docker = f'kind = "docker"\nimage = "{SHELL_IMAGE}"\n' if kind == "docker" else ""
    proj.write("niceeval.toml", (
        f"[project]\ntimeout_ms = {timeout_ms}\n\n[experiments.agent]\nadapter = \"command\"\n"
        f"[experiments.agent.options]\nargv = {json.dumps(['sh', '-c', agent])}\n"
        f"[experiments.agent.sandbox]\ntemplate = \"repo\"\n{docker}"
    ))
    proj.write("evals/e.py", evals)
    return proj


def env_for(tmp: Path) -> dict[str, str | None]:
    """Local workspaces in this test's own temp folder (to look for leftovers there only)."""
    tmp.mkdir(parents=True, exist_ok=True)
    return {"TMPDIR": str(tmp)}


def assertions(proj: Project) -> dict[str, dict[str, Any]]:
    """Sealed assertion rows by label, read with sqlite3."""
    rows = proj.sql("SELECT label, state, reason, explanation, evidence FROM assertion_results")
    return {r["label"]: r for r in rows}


def attempts(proj: Project) -> list[dict[str, Any]]:
    return proj.sql("SELECT id, run_id, eval_id, state, reason, error FROM attempts ORDER BY eval_id")


def containers_of(proj: Project) -> list[str]:
    """Containers (running or not) of this project's runs, found by their run label."""
    try:
        runs = proj.sql("SELECT id FROM runs") if proj.store.exists() else []
    except sqlite3.OperationalError:  # the store is still being created
        runs = []
    found: list[str] = []
    for row in runs:
        done = subprocess.run(["docker", "ps", "-aq", "--filter", f"label=niceeval.sandbox.run={row['id']}"],
                              capture_output=True, text=True, timeout=30, check=False)
        found += done.stdout.split()
    return found


def kind_of(request: pytest.FixtureRequest) -> str:
    """The `kind` fixture's value (each test module declares `kind` with `params=KINDS`)."""
    need_kind(str(request.param))
    return str(request.param)
