"""Ctrl-C / SIGTERM (cli.md): stop dispatching, seal in-flight attempts `errored` with reason
`interrupted`, record nothing for attempts that had not started, mark the run `interrupted`,
exit 130 — and lose nothing sealed earlier. Driven through a real `niceeval run` subprocess."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

EVALS = """
import asyncio
from niceeval_cli import define_eval, define_score_eval
from niceeval_cli.expect import equals


@define_eval()
def a_fast(t):
    t.check(1, equals(1)).label("quick")


@define_eval()
async def b_slow(t):
    t.check(1, equals(1)).label("before the wait")
    await asyncio.sleep(60)


@define_score_eval()
async def c_slow_score(t):
    t.check(1, equals(1)).score(2).label("earned")
    await asyncio.sleep(60)


@define_eval()
async def d_never_started(t):
    await asyncio.sleep(60)
"""


def _read_events_until(proc: subprocess.Popen[str], done) -> list[dict]:
    events = []
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.strip():
            events.append(json.loads(line))
            if done(events):
                return events
    raise AssertionError(f"run ended before the expected events: {events}")


@contextlib.contextmanager
def _run_json(project, module: str = "niceeval_cli.cli") -> Iterator[subprocess.Popen[str]]:
    """`niceeval run --json` in the project, a real process (`python -m module`), killed by its
    pid if the test leaves it running."""
    proc = subprocess.Popen(
        [sys.executable, "-m", module, "run", "--json"], cwd=project.root,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "NO_COLOR": "1"},
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupt_seals_in_flight_attempts_as_interrupted_and_exits_130(project, sig):
    project.write("niceeval.toml", "[project]\nmax_concurrency = 2\n")
    project.write("evals/work.py", EVALS)
    with _run_json(project) as proc:
        def both_slow_started(events):
            sealed = {e["attempt"]["eval_id"] for e in events if e["event"] == "attempt.sealed"}
            started = {e["eval_id"] for e in events if e["event"] == "attempt.started"}
            return "work/a_fast" in sealed and {"work/b_slow", "work/c_slow_score"} <= started

        before = _read_events_until(proc, both_slow_started)
        # a reader works while the run is going, and sees what is sealed so far
        assert [a["eval_id"] for a in project.attempts()] == ["work/a_fast"]
        assert project.query("runs")[0]["status"] == "running"
        proc.send_signal(sig)
        rest, stderr = proc.communicate(timeout=20)
    assert proc.returncode == 130, stderr
    events = before + [json.loads(line) for line in rest.splitlines() if line.strip()]
    assert events[-1]["event"] == "run.finished"
    assert events[-1]["exit_code"] == 130

    [run] = project.query("runs")
    assert run["status"] == "interrupted"
    assert run["exit_code"] == 130
    attempts = {a["eval_id"]: a for a in project.attempts()}
    assert set(attempts) == {"work/a_fast", "work/b_slow", "work/c_slow_score"}  # d never started
    assert attempts["work/a_fast"]["state"] == "passed"
    for eval_id in ("work/b_slow", "work/c_slow_score"):
        assert (attempts[eval_id]["state"], attempts[eval_id]["reason"]) == ("errored", "interrupted")
    assert attempts["work/c_slow_score"]["partial_score"] == 2
    labels = {r["label"]: r["state"] for r in project.assertions()}
    assert labels == {"quick": "matched", "before the wait": "matched", "earned": "matched"}


def test_interrupt_exits_promptly_while_a_sync_adapter_blocks(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/blocking.py", """
        import time
        from niceeval_cli import define_adapter

        def create(ctx):
            time.sleep(4)

        adapter = define_adapter(name="blocking", create=create)

        @adapter.define_eval()
        def blocking(t):
            pass
    """)
    with _run_json(project) as proc:
        _read_events_until(proc, lambda events: events[-1]["event"] == "attempt.started")
        time.sleep(0.2)  # let the worker thread enter the blocking call
        proc.send_signal(signal.SIGINT)
        signalled = time.monotonic()
        proc.communicate(timeout=20)
        waited = time.monotonic() - signalled
    assert proc.returncode == 130
    assert waited < 2.0


IGNORING_EVALS = """
import asyncio, signal
from niceeval_cli import define_eval
from niceeval_cli.expect import equals

@define_eval()
def a_ignores_signals(t):
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    t.check(1, equals(1))

@define_eval()
async def b_slow(t):
    await asyncio.sleep(60)
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_eval_code_that_ignores_the_signals_does_not_take_ctrl_c_away_from_the_run(project, sig):
    """Eval code runs in the `niceeval` process: one `signal.signal(SIGINT, SIG_IGN)` left Ctrl-C
    and SIGTERM without effect for the rest of the run (it ran on to its end)."""
    project.write("niceeval.toml", "[project]\nmax_concurrency = 1\n")
    project.write("evals/work.py", IGNORING_EVALS)
    with _run_json(project) as proc:
        _read_events_until(proc, lambda events: any(
            e["event"] == "attempt.started" and e["eval_id"] == "work/b_slow" for e in events))
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=20)
    assert proc.returncode == 130, stderr
    attempts = {a["eval_id"]: a for a in project.attempts()}
    assert (attempts["work/b_slow"]["state"], attempts["work/b_slow"]["reason"]) == ("errored", "interrupted")


SPINNING_EVALS = """
from niceeval_cli import define_eval

@define_eval(timeout_ms=500)
def spins(t):
    while True:
        pass
"""


def test_a_second_signal_ends_a_run_held_by_a_test_that_never_returns(project):
    """A plain `def` test spinning in `while True` holds the event loop: no timeout can cut it
    off and the run never got to its Ctrl-C handler, so neither Ctrl-C nor SIGTERM — however
    often — ended the process; only SIGKILL did."""
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/work.py", SPINNING_EVALS)
    with _run_json(project, "niceeval_cli") as proc:
        _read_events_until(proc, lambda events: any(e["event"] == "attempt.started" for e in events))
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        assert proc.poll() is None  # one signal: the loop is asked to stop, and cannot yet
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=20)
    assert proc.returncode == 130, stderr
    assert "niceeval: interrupted; results sealed before this point are kept." in stderr
