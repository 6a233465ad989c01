"""Issue 22, items 4 and 5: what a new user hit, replayed from the outside (real `niceeval`
subprocesses, stores read with sqlite3). Items 6's tool-output parts live in
test_issue22_tool_outputs.py."""

from __future__ import annotations

import json
import re

from outside import Proj

GATED_AND_UNRANKABLE = '''
from niceeval_cli import Fact, define_score_eval
from niceeval_cli.expect import equals


@define_score_eval()
async def gated(t):
    t.check(1, equals(2)).gate().label("must hold")
    t.check(1, equals(1)).score(3).label("earned")
    t.check(Fact.unavailable("no-signal"), equals(1)).score(5).label("unknown")
'''


def test_an_unrankable_score_attempt_whose_gate_failed_says_gate_failed_everywhere(proj: Proj) -> None:
    proj.write("niceeval.toml", "[experiments.base]\n")
    proj.write("evals/gs.py", GATED_AND_UNRANKABLE)
    res = proj.run(env={"NO_COLOR": "1"})
    assert res.returncode == 1, res.stdout + res.stderr
    assert proj.sql("SELECT state, gate FROM attempts") == [{"state": "unrankable", "gate": "failed"}]
    attempt_line = next(line for line in res.stdout.splitlines() if "gs#0" in line)
    assert "gate failed" in attempt_line, res.stdout
    count_line = next(line for line in res.stdout.splitlines() if line.startswith("run "))
    counts = count_line.split(" · exit")[0]  # the counts themselves, not only the exit's explanation
    assert "unrankable (gate failed)" in counts, count_line

    view = proj.cli("view", env={"NO_COLOR": "1"})
    assert view.returncode == 0, view.stderr
    heading = next(line for line in view.stdout.splitlines() if "gs#0" in line)
    assert "GATE FAILED" in heading.upper() and heading.startswith("UNRANKABLE"), view.stdout
    assert re.search(r"1 attempt: 1 unrankable \(gate failed\)", view.stdout), view.stdout

    # a failed gate is what `--state gate-failed` finds, whatever the attempt's state
    only = proj.cli("view", "--state", "gate-failed", env={"NO_COLOR": "1"})
    assert "gs#0" in only.stdout, only.stdout
    rows = json.loads(proj.cli("query", "attempts", "--state", "gate-failed", "--format", "json").stdout)
    assert [r["state"] for r in rows] == ["unrankable"]


def test_a_case_value_that_is_not_json_names_the_eval_and_the_case(proj: Proj) -> None:
    proj.write("niceeval.toml", "")
    proj.write("evals/q.csv", "id,when\nr-1,2024-01-01\n")
    proj.write("evals/refunds.py", '''
        import datetime

        from niceeval_cli import Case, define_eval
        from niceeval_cli.datasets import load_csv
        from niceeval_cli.expect import equals


        @define_eval(cases=load_csv("q.csv", types={"when": datetime.date.fromisoformat}))
        async def by_csv(t, case):
            t.check(1, equals(1))


        @define_eval(cases=[Case("c-2", {"when": datetime.date(2024, 1, 1)})])
        async def by_case(t, case):
            t.check(1, equals(1))
    ''')
    res = proj.run()
    assert res.returncode == 2, res.stdout + res.stderr
    assert "eval 'by_csv'" in res.stderr and "case 'r-1' (evals/q.csv:2)" in res.stderr, res.stderr
    assert "not JSON" in res.stderr and "Traceback" not in res.stderr, res.stderr
    proj.write("evals/q.csv", "id,when\nr-1,2024\n")
    proj.write("evals/refunds.py", (proj.root / "evals/refunds.py").read_text().replace(
        'types={"when": datetime.date.fromisoformat}', 'types={"when": int}'))
    res = proj.run()
    assert res.returncode == 2, res.stdout + res.stderr
    assert "eval 'by_case'" in res.stderr and "case 'c-2'" in res.stderr and "not JSON" in res.stderr, res.stderr
