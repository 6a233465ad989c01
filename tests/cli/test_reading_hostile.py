"""The reading commands against what a user's shell and a hostile store do to them (cli.md):
a reader that stops early (`| head`) ends every command quietly with exit 0, and `query --sql`
answers whatever a SELECT can return, as its formats promise, without an internal error."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.support.project import NICEEVAL, Project, base_env

EVALS = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals


@define_eval()
def passes(t):
    t.check(1, equals(1)).label("one is one")


@define_eval()
def fails(t):
    t.check(1, equals(2)).label("one is two")
"""


@pytest.fixture
def ran(project: Project, made_once) -> Project:
    """Two runs of two evals (one failing): enough rows for every reading command."""
    files = {"niceeval.toml": "[project]\n", "evals/two.py": EVALS}
    first, second = made_once.place(project, files, ("run",), ("run", "--rerun-all"))
    assert (first.exit_code, second.exit_code) == (1, 1)
    return project


def into_closed_pipe(proj: Project, *args: str) -> subprocess.CompletedProcess[str]:
    """`niceeval ARGS | head` where head has already gone: stdout is a pipe nobody reads, so
    the first write fails with a broken pipe, every time (no race with a reader's exit)."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([*NICEEVAL, *args], cwd=proj.root, env=base_env(None), stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write)


def run_ids(proj: Project) -> list[str]:
    return [row["id"] for row in proj.sql("SELECT id FROM runs ORDER BY started_at, id")]


@pytest.mark.parametrize("args", [
    ("query", "--format", "table"),
    ("query", "attempts", "--format", "table"),
    ("query", "--sql", "SELECT id FROM attempts", "--format", "table"),
    ("view",),
    ("compare", "BASE", "NEW"),
    ("judge", "agreement"),
    ("report", "--out", "/dev/stdout"),
])
def test_a_reader_that_went_away_ends_every_reading_command_with_exit_0(ran: Project, args: tuple[str, ...]) -> None:
    base, new = run_ids(ran)
    args = tuple(base if a == "BASE" else new if a == "NEW" else a for a in args)
    done = into_closed_pipe(ran, *args)
    assert done.returncode == 0, (args, done.returncode, done.stderr)
    assert "Traceback" not in done.stderr and "Broken pipe" not in done.stderr, done.stderr
