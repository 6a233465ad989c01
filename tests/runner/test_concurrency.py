"""`max_concurrency` (config.md): at most that many attempts are in flight at once — and the
runner does use that many. Measured with a counter shared by the attempts in the eval module.

Without timing: each attempt waits at a gate until the bound is reached (as many attempts in
flight at once as the runner may have), so a busy machine that starts attempts slowly still
reaches it, and a runner that never does fails the test by the gate's timeout with what it saw.
While the first attempts wait there, a runner over its bound would start one more, which the
counter sees (and again for a moment after the gate opens)."""

from __future__ import annotations

from pathlib import Path

import pytest

#: The gate's wait before it reports the bound as never reached.
GATE_TIMEOUT_S = 30

BUSY = """
import asyncio
import time
from pathlib import Path
from niceeval_cli import define_eval

BOUND = {bound}
STATE = {{"now": 0, "peak": 0}}
HERE = Path(__file__).resolve().parent.parent
PEAK, NEVER = HERE / "peak.txt", HERE / "never-reached.txt"


async def busy(t):
    STATE["now"] += 1
    STATE["peak"] = max(STATE["peak"], STATE["now"])
    deadline = time.monotonic() + {timeout}
    while STATE["peak"] < BOUND:  # the gate: until BOUND attempts were in flight at once
        if time.monotonic() > deadline:
            NEVER.write_text(f"at most {{STATE['peak']}} attempts in flight at once; waited {timeout} s for {{BOUND}}")
            break
        await asyncio.sleep(0.005)
    await asyncio.sleep(0.02)  # a runner over its bound starts another meanwhile: the counter sees it
    PEAK.write_text(str(STATE["peak"]))
    STATE["now"] -= 1


first = define_eval(test=busy, name="first", attempts=4)
second = define_eval(test=busy, name="second", attempts=4)
"""


def _busy(bound: int) -> str:
    return BUSY.format(bound=bound, timeout=GATE_TIMEOUT_S)


def _peak(root: Path) -> int:
    never = root / "never-reached.txt"
    assert not never.exists(), never.read_text()
    return int((root / "peak.txt").read_text())


@pytest.mark.parametrize(
    ("toml", "args", "peak"),
    [
        ("[project]\nmax_concurrency = 1\n", (), 1),
        ("[project]\nmax_concurrency = 3\n", (), 3),
        ("[project]\nmax_concurrency = 6\n", ("--max-concurrency", "2"), 2),
        ("[project]\n", ("--max-concurrency", "8"), 8),
    ],
    ids=["project-1", "project-3", "flag-overrides-project", "flag-8"],
)
def test_max_concurrency_bounds_attempts_in_flight(project, toml, args, peak):
    project.write("niceeval.toml", toml)
    project.write("evals/busy.py", _busy(peak))
    assert project.run(*args).exit_code == 0
    assert len(project.attempts()) == 8
    assert _peak(project.root) == peak


def test_default_max_concurrency_runs_attempts_concurrently_but_bounded(project):
    """The default is 4 (docs/configuration.md): reached, never exceeded."""
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/busy.py", _busy(4))
    assert project.run().exit_code == 0
    assert _peak(project.root) == 4


def test_sync_create_functions_also_run_concurrently(project):
    project.write("niceeval.toml", "[project]\nmax_concurrency = 4\n")
    project.write("blocking_app.py", """
        import threading
        import time
        from pathlib import Path
        from niceeval_cli import define_adapter

        GATE = threading.Condition()
        STATE = {"now": 0, "peak": 0}
        HERE = Path(__file__).resolve().parent
        PEAK, NEVER = HERE / "peak.txt", HERE / "never-reached.txt"

        def create(ctx):  # each create call blocks its thread until 4 are in flight at once
            with GATE:
                STATE["now"] += 1
                STATE["peak"] = max(STATE["peak"], STATE["now"])
                GATE.notify_all()
                if not GATE.wait_for(lambda: STATE["peak"] >= 4, timeout=TIMEOUT):
                    NEVER.write_text(f"at most {STATE['peak']} create calls at once; waited TIMEOUT s for 4")
            time.sleep(0.02)  # a runner over its bound starts another meanwhile
            with GATE:
                PEAK.write_text(str(STATE["peak"]))
                STATE["now"] -= 1

        adapter = define_adapter(name="blocking", create=create)
    """.replace("TIMEOUT", str(GATE_TIMEOUT_S)))
    project.write("evals/observe.py", """
        from blocking_app import adapter

        @adapter.define_eval(attempts=4)
        def observe(t):
            pass
    """)
    assert project.run().exit_code == 0
    assert _peak(project.root) == 4


QUICK = """
from niceeval_cli import define_eval


def make(i):
    def test(t):
        t.check(f"answer {i}", includes(str(i)))
    return test


from niceeval_cli.expect import includes

for i in range(300):
    globals()[f"quick_{i:03d}"] = define_eval(test=make(i), name=f"quick_{i:03d}")
"""


def test_quick_attempts_share_commits_yet_every_one_is_sealed_before_it_is_told(project, monkeypatch):
    """Group commit (runner/_sealer.py): 300 quick attempts take far fewer transactions than
    attempts; the audience hears of each only once it is in the store, and all are sealed."""
    from niceeval_cli.config import load_config
    from niceeval_cli.discovery import discover
    from niceeval_cli.runner import NullEvents, RunRequest, run
    from niceeval_cli.store import Store

    commits: list[int] = []
    original = Store.seal_attempts

    def counting(self, sealed):
        commits.append(len(sealed))
        return original(self, sealed)

    class Checking(NullEvents):
        told = 0
        in_store = 0

        def sealed(self, run_id, slot, attempt, results):
            with Store.open(project.root / ".niceeval" / "results.db", readonly=True) as store:
                self.in_store += any(
                    a.id == attempt.id for a in store.attempts_for_run(run_id, eval_prefix=[attempt.eval_id]))
            self.told += 1

    monkeypatch.setattr(Store, "seal_attempts", counting)
    project.write("niceeval.toml", "[project]\nmax_concurrency = 2\n")
    project.write("evals/quick.py", QUICK)
    monkeypatch.chdir(project.root)
    config = load_config(project.root / "niceeval.toml")
    recorder = Checking()
    outcome = run(RunRequest(project=config, evals=discover(config.eval_roots, config.root)), recorder)

    assert outcome.exit_code == 0 and outcome.counts == {"passed": 300}
    assert recorder.told == 300 and recorder.in_store == 300
    assert len(project.attempts()) == 300
    # Attempts share transactions: how many share one depends on how busy the machine is (on a quiet
    # one ~10 at a time, under four pytest workers on two cores as few as 2), never on luck that a
    # commit holds one attempt each.
    assert sum(commits) >= 290 and max(commits) >= 2 and len(commits) < sum(commits), commits
