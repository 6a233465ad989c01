"""`max_concurrency` (config.md): at most that many attempts are in flight at once — and the
runner does use that many. Measured with a counter shared by the attempts in the eval module."""

from __future__ import annotations

import pytest

BUSY = """
import asyncio
from pathlib import Path
from niceeval_cli import define_eval

STATE = {"now": 0, "peak": 0}
PEAK = Path(__file__).resolve().parent.parent / "peak.txt"


async def busy(t):
    STATE["now"] += 1
    STATE["peak"] = max(STATE["peak"], STATE["now"])
    PEAK.write_text(str(STATE["peak"]))
    await asyncio.sleep(0.05)
    STATE["now"] -= 1


first = define_eval(test=busy, name="first", attempts=4)
second = define_eval(test=busy, name="second", attempts=4)
"""


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
    project.write("evals/busy.py", BUSY)
    assert project.run(*args).exit_code == 0
    assert len(project.attempts()) == 8
    assert int((project.root / "peak.txt").read_text()) == peak


def test_default_max_concurrency_runs_attempts_concurrently_but_bounded(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/busy.py", BUSY)
    assert project.run().exit_code == 0
    peak = int((project.root / "peak.txt").read_text())
    assert 1 < peak < 8


def test_sync_create_functions_also_run_concurrently(project):
    project.write("niceeval.toml", "[project]\nmax_concurrency = 4\n")
    project.write("blocking_app.py", """
        import threading
        import time
        from pathlib import Path
        from niceeval_cli import define_adapter

        LOCK = threading.Lock()
        STATE = {"now": 0, "peak": 0}
        PEAK = Path(__file__).resolve().parent / "peak.txt"

        def create(ctx):
            with LOCK:
                STATE["now"] += 1
                STATE["peak"] = max(STATE["peak"], STATE["now"])
                PEAK.write_text(str(STATE["peak"]))
            time.sleep(0.1)
            with LOCK:
                STATE["now"] -= 1

        adapter = define_adapter(name="blocking", create=create)
    """)
    project.write("evals/observe.py", """
        from blocking_app import adapter

        @adapter.define_eval(attempts=4)
        def observe(t):
            pass
    """)
    assert project.run().exit_code == 0
    assert int((project.root / "peak.txt").read_text()) == 4


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
