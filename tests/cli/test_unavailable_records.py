"""A check recorded without deciding (no `.gate()` in a pass-style eval) that could not be measured
decides no verdict — and the run says so, instead of "everything passed" alone: a note counts them
by reason and names the query that lists them; `--json`'s `run.finished` carries the counts. Only
the attempts the run executed count (a reused attempt's were told by the run that made it)."""

from __future__ import annotations

import json

JUDGED = """
from niceeval_cli import define_eval
from niceeval_cli.expect import closed_qa, includes

@define_eval(judge=True)
def recorded(t):
    t.check("4", includes("4"))
    t.check({"input": "2 + 2?", "output": "4"}, closed_qa("Is it correct?"))
    t.check({"input": "3 + 3?", "output": "6"}, closed_qa("Is it correct?"))

@define_eval
def plain(t):
    t.check("4", includes("4"))
"""

#: The judge's key variable is left unset: each judge check comes back `judge-key-unresolved`.
TOML = '[project]\n\n[judge]\nmodel = "judge-m"\nbase_url = "http://127.0.0.1:9/v1"\napi_key_env = "UNSET_JUDGE_KEY"\n'
NOTE = ("note: 2 results recorded without deciding could not be measured (judge-key-unresolved × 2); no verdict "
        "rests on them (`.gate()` makes a check decide): niceeval query assertions --state unavailable")


def test_a_run_that_passed_says_which_recorded_checks_could_not_be_measured(project) -> None:
    project.write("niceeval.toml", TOML)
    project.write("evals/judged.py", JUDGED)
    result = project.run(env={"UNSET_JUDGE_KEY": None, "COLUMNS": "400"})
    assert result.exit_code == 0, result.stdout + result.stderr  # nothing decided rests on the judge
    assert NOTE in result.stdout, result.stdout
    count_line = next(line for line in result.stdout.splitlines() if line.startswith("run "))
    assert count_line.endswith("2 evals: 2 passed · exit 0 (everything passed)")

    again = project.run("--json", env={"UNSET_JUDGE_KEY": None})  # all reused: nothing executed here
    finished = json.loads(again.stdout.splitlines()[-1])
    assert (finished["event"], finished["reused"], finished["unavailable_records"]) == ("run.finished", 2, {})
    assert "recorded without deciding" not in again.stderr

    fresh = project.run("--rerun-all", "--json", env={"UNSET_JUDGE_KEY": None})
    finished = json.loads(fresh.stdout.splitlines()[-1])
    assert finished["unavailable_records"] == {"judge-key-unresolved": 2}


def test_a_gated_check_that_could_not_be_measured_is_the_verdicts_business_not_the_notes(project) -> None:
    project.write("niceeval.toml", TOML)
    gated = JUDGED.replace('closed_qa("Is it correct?"))', 'closed_qa("Is it correct?").at_least(1)).gate()')
    project.write("evals/judged.py", gated)
    result = project.run(env={"UNSET_JUDGE_KEY": None, "COLUMNS": "400"})
    assert result.exit_code == 5, result.stdout + result.stderr  # undecided: the eval errored
    assert "recorded without deciding" not in result.stdout
    rows = project.sql("SELECT r.role, r.state, r.reason FROM assertion_results r WHERE r.match_name = 'closed_qa'")
    assert rows == [{"role": "gate", "state": "unavailable", "reason": "judge-key-unresolved"}] * 2, rows
