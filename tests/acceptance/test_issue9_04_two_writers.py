"""Issue 9, item 4: two `niceeval run` processes on one store both finish — one recording hundreds
of reused slots while the other seals attempts as fast as it can — with no "database is locked",
no exit 2 and no run left `running`."""

from __future__ import annotations

import pytest

from tests.support.project import Project

EVALS = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import includes


@define_eval(attempts=200)
async def seeded(t):
    t.check("yes", includes("y")).label("has y")
'''

FRESH = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import includes


@define_eval(attempts=100)
async def fresh(t):
    t.check("yes", includes("y")).label("has y")
'''


@pytest.mark.slow
def test_two_runs_that_both_reuse_and_seal_on_one_store_both_finish(proj: Project) -> None:
    proj.write("niceeval.toml", "[project]\nmax_concurrency = 16\n")
    proj.write("evals/seeded.py", EVALS)
    seed = Project(proj.root, in_process=True).run("--junit", "seed.xml")  # the two writers below are processes
    assert seed.returncode == 0, seed.stdout + seed.stderr
    proj.write("evals/fresh.py", FRESH)

    for round_ in range(2):  # round 0: both reuse `seeded` and seal `fresh`; round 1: both rerun all
        flags = [] if round_ == 0 else ["--rerun-all"]
        procs = [proj.popen("run", *flags, env={"NO_COLOR": "1"}) for _ in range(2)]
        outs = [p.communicate(timeout=180) for p in procs]
        for proc, (out, err) in zip(procs, outs, strict=True):
            assert proc.returncode == 0, (round_, proc.returncode, out[-2000:], err[-2000:])
            assert "locked" not in out + err and "Traceback" not in err, err
    runs = proj.sql("SELECT status, exit_code FROM runs ORDER BY id")
    assert runs == [{"status": "finished", "exit_code": 0}] * 5
    slots = proj.sql("SELECT r.id, count(s.attempt_id) AS n FROM runs r LEFT JOIN run_slots s ON s.run_id = r.id "
                     "GROUP BY r.id ORDER BY r.id")
    assert [s["n"] for s in slots] == [200, 300, 300, 300, 300]
    reused = proj.sql("SELECT count(*) AS n FROM run_slots WHERE relation = 'reference'")[0]["n"]
    # round 0: each run reused the 200 seeded slots (and, if it planned after the other sealed some
    # `fresh` attempts, those too); round 1 reused nothing
    assert 400 <= reused <= 500, reused
