"""Issue 9.6, 9.15, 9.17, 9.18: a run tells the truth about itself.

Signals during start-up end the run `interrupted` (exit 130); the outcome says how many planned
slots never started and why slots were not reused; an exception in eval code is located in the
project, with a trimmed traceback kept."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from niceeval_cli.runner import RerunMode

SLOW_ADAPTER = """
import os
import pathlib
import time

from niceeval_cli import define_adapter

if os.environ.get("SLOW_START"):
    pathlib.Path("importing-adapter").write_text("now")
    time.sleep(3)

adapter = define_adapter(name="slow-start", create=lambda ctx: {"ok": True})
"""

EVALS = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals


@define_eval()
def a(t):
    t.check(t.facts["ok"], equals(True))


@define_eval()
def b(t):
    t.check(1, equals(1))
"""


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_during_start_up_and_reuse_bookkeeping_ends_the_run_interrupted(project, sig):
    project.write("niceeval.toml", '[project]\n\n[experiments.slow]\nadapter = "slowadapter:adapter"\n')
    project.write("slowadapter.py", SLOW_ADAPTER)
    project.write("evals/work.py", EVALS)
    command = [sys.executable, "-m", "niceeval_cli.cli", "run"]
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": os.pathsep.join([str(project.root), *sys.path])}
    first = subprocess.run(command, cwd=project.root, env=env, capture_output=True, text=True, timeout=60)
    assert first.returncode == 0, first.stderr
    marker = Path(project.root, "importing-adapter")
    proc = subprocess.Popen(command, cwd=project.root, env={**env, "SLOW_START": "1"},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert marker.exists(), "the run never reached planning"
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, stderr
    runs = project.query("runs")
    assert [(r["status"], r["exit_code"]) for r in runs] == [("interrupted", 130), ("finished", 0)]
    assert all(r["status"] != "running" for r in runs)


def test_the_outcome_counts_planned_slots_that_never_started(project, run_library):
    project.write("niceeval.toml", "[project]\nmax_concurrency = 1\n")
    project.write("evals/stop.py", """
        import asyncio
        import os
        import signal
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        async def a_interrupts(t):
            t.check(1, equals(1))
            os.kill(os.getpid(), signal.SIGINT)
            await asyncio.sleep(10)

        @define_eval()
        def b_never(t):
            t.check(1, equals(1))

        @define_eval()
        def c_never(t):
            t.check(1, equals(1))
    """)
    outcome, _ = run_library()
    assert (outcome.status, outcome.exit_code) == ("interrupted", 130)
    assert outcome.planned == 3
    assert outcome.not_run == 2
    assert outcome.read is not None  # decided from its sealed rows, handed to the app's summary read
    assert [a["eval_id"] for a in project.attempts()] == ["stop/a_interrupts"]


def test_the_outcome_says_why_nothing_was_reused(project, run_library):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/r.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        def a_passes(t):
            t.check(1, equals(1))

        @define_eval()
        def b_errors(t):
            raise RuntimeError("flaky")
    """)
    first, _ = run_library()
    assert first.plan is not None and (first.plan.reasons, first.plan.reused) == ({"new": 2}, 0)
    again, _ = run_library()
    assert again.plan is not None and (again.plan.reasons, again.plan.reused) == ({"previous-errored": 1}, 1)
    assert again.reused == 1
    everything, _ = run_library(mode=RerunMode.ALL)
    assert everything.plan is not None and (everything.plan.reasons, everything.plan.mode) == ({"rerun": 2}, "all")
    assert everything.reused == 0


def test_an_exception_is_located_at_the_deepest_frame_inside_the_project(project, run_library):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/_helpers.py", """
        import json

        def parse(text):
            return json.loads(text)
    """)
    project.write("evals/ex.py", """
        from niceeval_cli import define_eval
        from evals._helpers import parse

        @define_eval()
        def broken_json(t):
            parse("{")
    """)
    result = project.run()
    assert result.exit_code == 5
    [attempt] = project.attempts()
    assert attempt["reason"] == "exception"
    assert attempt["error"].startswith("JSONDecodeError: Expecting property name")
    assert attempt["error"].endswith("(at evals/_helpers.py:4)"), attempt["error"]
    _, seen = run_library(mode=RerunMode.ALL)
    trace = seen.attempt("ex").traceback or ""
    assert 'File "evals/ex.py", line 6, in broken_json' in trace
    assert 'File "evals/_helpers.py", line 4, in parse' in trace
    assert "json.decoder.JSONDecodeError" in trace
    assert "niceeval_cli" not in trace and "asyncio" not in trace
    lines = trace.splitlines()
    assert lines[0] == "Traceback (most recent call last):" and len(lines) < 15, trace
    assert json.loads(seen.attempt("ex").notes or "[]") == []


def test_view_of_an_attempt_shows_its_stored_traceback_with_project_frames(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/ex.py", """
        import json
        from niceeval_cli import define_eval

        @define_eval()
        def broken_json(t):
            json.loads("{")
    """)
    assert project.run().exit_code == 5
    [attempt] = project.attempts()
    assert 'File "evals/ex.py", line 6, in broken_json' in attempt["traceback"]
    shown = project.cli("view", "@" + attempt["id"])
    assert shown.exit_code == 0, shown.stderr
    assert "traceback" in shown.stdout
    assert 'File "evals/ex.py", line 6, in broken_json' in shown.stdout
    assert "json.decoder.JSONDecodeError" in shown.stdout
