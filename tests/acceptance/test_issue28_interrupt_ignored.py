"""A `niceeval` started with Ctrl-C ignored keeps ignoring it (docs/cli.md, "Ctrl-C at any moment").

A shell script's background job (`niceeval run &`) starts with SIGINT ignored, so that the Ctrl-C
meant for the script's foreground leaves it running; every program keeps such a signal ignored
(CPython itself does). NiceEval's own handlers, installed from its first line and again around a
run, used to take SIGINT back: the background run was interrupted all the same.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.support.project import Project, signal_and_read, wait_for

pytestmark = pytest.mark.slow

EVAL = """
import time
from niceeval_cli import define_eval
from niceeval_cli.expect import equals


@define_eval()
def slow(t):
    time.sleep(1.5)
    t.check(1, equals(1))
"""


def _ignoring_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _stored_running(proj: Project) -> bool:
    try:
        return proj.store.exists() and bool(proj.sql("SELECT 1 FROM runs WHERE status = 'running'"))
    except sqlite3.OperationalError:  # the store's file is there, its tables not yet
        return False


def _run_signalled(proj: Project, delay: float | None, sig: int) -> subprocess.CompletedProcess[str]:
    """`niceeval run` started with SIGINT ignored, sent `sig` after `delay` s (None: once the run is
    stored `running`, however slow the start)."""
    proc = proj.popen("run", env={"NO_COLOR": "1"}, preexec_fn=_ignoring_sigint)
    if delay is None:
        wait_for(lambda: proc.poll() is not None or _stored_running(proj), timeout=30)
    else:
        time.sleep(delay)
    _, out, err = signal_and_read(proc, sig)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_a_run_started_with_ctrl_c_ignored_runs_to_its_end(tmp_path: Path) -> None:
    delays = (0.05, 0.3, None)  # the start-up, the command line and imports, the run itself
    projects = []
    for i in range(len(delays)):
        proj = Project(tmp_path / f"p{i}")
        proj.write("niceeval.toml", "[project]\n")
        proj.write("evals/slow.py", EVAL)
        projects.append(proj)
    with ThreadPoolExecutor(max_workers=len(delays)) as pool:
        done = list(pool.map(lambda job: _run_signalled(job[0], job[1], signal.SIGINT),
                             zip(projects, delays, strict=True)))
    for proj, delay, result in zip(projects, delays, done, strict=True):
        when = "the run" if delay is None else f"{delay} s"
        assert result.returncode == 0, f"SIGINT at {when}: rc {result.returncode}\n{result.stderr[-1500:]}"
        assert "interrupted" not in result.stderr
        assert [r["status"] for r in proj.sql("SELECT status FROM runs")] == ["finished"]
        assert [r["state"] for r in proj.sql("SELECT state FROM attempts")] == ["passed"]


def test_sigterm_still_stops_a_run_whose_ctrl_c_is_ignored(tmp_path: Path) -> None:
    proj = Project(tmp_path / "p")
    proj.write("niceeval.toml", "[project]\n")
    proj.write("evals/slow.py", EVAL)
    result = _run_signalled(proj, None, signal.SIGTERM)
    assert result.returncode == 130, result.stderr[-1500:]
    assert "Traceback" not in result.stderr
    assert [r["status"] for r in proj.sql("SELECT status FROM runs")] == ["interrupted"]
