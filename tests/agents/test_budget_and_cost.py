"""`run --budget USD` and cost per experiment (agents.md, "Cost")."""

from __future__ import annotations

import json

AGENT = '''
from niceeval_cli import Turn, Usage, define_adapter

async def send(ctx, message, cost=1.0):
    return Turn(input=message, message="ok", usage=Usage(input_tokens=500_000, output_tokens=0, cost_usd=cost))

adapter = define_adapter(name="paid", send=send)
'''

EVALS = '''
from niceeval_cli.expect import equals
from agent import adapter

def make(i, ok):
    async def test(t):
        turn = await t.send(f"q{i}")
        t.check(turn.message, equals("ok" if ok else "no")).label("answer")
    return test

for i in range(5):
    globals()[f"e{i}"] = adapter.define_eval(test=make(i, OK), name=f"e{i}")
'''

TOML = ('[project]\nmax_concurrency = 1\n[experiments.paid]\nmodel = "m"\n'
        '[prices.m]\ninput_per_mtok = 1\noutput_per_mtok = 1\n')


def _project(project, ok: bool = True):
    project.write("niceeval.toml", TOML)
    project.write("agent.py", AGENT)
    project.write("evals/e.py", EVALS.replace("OK", str(ok)))


def test_budget_stops_dispatch_lists_unstarted_slots_and_exits_5_without_a_failure(project):
    _project(project)
    run = project.run("--budget", "2.5")
    assert run.exit_code == 5, (run.stdout, run.stderr)
    attempts = project.attempts()
    assert len(attempts) == 3 and {a["state"] for a in attempts} == {"passed"}
    [row] = project.query("runs")
    assert (row["status"], row["budget_usd"], row["exit_code"]) == ("budget-exhausted", 2.5, 5)
    assert "budget exhausted: $3.00 spent of $2.50; 2 slot(s) not started: paid · e/e3#0, paid · e/e4#0" in run.stdout


def test_budget_exhausted_after_a_definite_failure_exits_1(project):
    _project(project, ok=False)
    run = project.run("--budget", "1")
    assert run.exit_code == 1, (run.stdout, run.stderr)
    assert len(project.attempts()) == 1
    assert project.query("runs")[0]["status"] == "budget-exhausted"


def test_a_budget_that_is_not_reached_changes_nothing(project):
    _project(project)
    run = project.run("--budget", "100")
    assert run.exit_code == 0, (run.stdout, run.stderr)
    assert project.query("runs")[0]["status"] == "finished"


def test_budget_counts_estimates_when_no_cost_is_reported(project):
    _project(project)
    project.write("agent.py", AGENT.replace("cost=1.0", "cost=None"))
    run = project.run("--budget", "0.9")  # each attempt is estimated at $0.50
    assert run.exit_code == 5, (run.stdout, run.stderr)
    assert len(project.attempts()) == 2


def test_budget_in_the_json_finished_event(project):
    _project(project)
    run = project.run("--budget", "1.5", "--json")
    finished = next(json.loads(x) for x in run.stdout.splitlines() if '"run.finished"' in x)
    assert (finished["status"], finished["budget_usd"], finished["spent_usd"]) == ("budget-exhausted", 1.5, 2.0)
    assert finished["unstarted"] == ["paid · e/e2#0", "paid · e/e3#0", "paid · e/e4#0"]


def test_the_summary_shows_reported_and_estimated_cost_per_experiment_apart(project):
    _project(project)
    run = project.run()
    assert "cost      paid  $5.00 reported (5 of 5 attempts) · $2.50 estimated from [prices] (5 of 5)" in run.stdout


def test_a_negative_budget_is_a_usage_error(project):
    _project(project)
    assert project.run("--budget", "-1").exit_code == 2


def test_t_usage_reads_reported_and_estimated_cost_apart(project):
    _project(project)
    project.write("evals/e.py", '''
from niceeval_cli.expect import equals
from agent import adapter

@adapter.define_eval()
async def usage(t):
    t.check(t.usage.cost_usd, equals(0)).label("before any turn")
    await t.send("a", cost=0.25)
    await t.send("b", cost=0.5)
    t.check(t.usage.cost_usd, equals(0.75)).label("reported")
    t.check(t.usage.estimated_cost_usd, equals(1.0)).label("estimated")
    await t.send("c", cost=None)
    t.check(t.usage.cost_usd, equals(0.75)).label("a turn without cost")
''')
    project.run()
    rows = {r["label"]: (r["state"], r["reason"]) for r in project.assertions()}
    assert rows == {
        "before any turn": ("unavailable", "cost-unreported"),
        "reported": ("matched", None),
        "estimated": ("matched", None),
        "a turn without cost": ("unavailable", "cost-unreported"),
    }


def test_judge_tokens_count_toward_the_budget_when_the_judge_model_has_a_price(project, judge_server, monkeypatch):
    from tests.support.loopback import Reply

    monkeypatch.setenv("NICEEVAL_BUDGET_JUDGE_KEY", "budget-judge-key-1234")
    judge_server.default = Reply.tool("Y", usage={"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120})
    project.write("niceeval.toml", (
        '[project]\nmax_concurrency = 1\n'
        f'[judge]\nmodel = "judge-m"\nbase_url = "{judge_server.base_url}"\napi_key_env = "NICEEVAL_BUDGET_JUDGE_KEY"\n'
        '[prices."judge-m"]\ninput_per_mtok = 10000\noutput_per_mtok = 10000\n'  # 120 tokens = $1.20
    ))
    project.write("evals/e.py", '''
from niceeval_cli import define_eval
from niceeval_cli.expect import closed_qa

def make(i):
    def test(t):
        t.check({"input": "q", "output": f"a{i}"}, closed_qa("Clear?").at_least(0.5)).label("clear")
    return test

for i in range(4):
    globals()[f"j{i}"] = define_eval(test=make(i), name=f"j{i}", judge=True)
''')
    run = project.run("--budget", "2")
    assert run.exit_code == 5, (run.stdout, run.stderr)
    assert len(project.attempts()) == 2  # $1.20, then $2.40 ≥ $2: no third attempt
    assert project.query("runs")[0]["status"] == "budget-exhausted"


def test_a_budget_that_is_not_a_finite_amount_is_a_usage_error_before_anything_runs(project):
    _project(project)
    for value, shown in (("inf", "inf"), ("1e309", "inf"), ("nan", "nan"), ("-1", "-1")):
        run = project.run("--budget", value, "--json")
        assert run.exit_code == 2, (value, run.stdout, run.stderr)
        assert f"--budget: expected an amount of US dollars, a finite number ≥ 0 such as 2.50, got {shown}" in (
            run.stdout + run.stderr), value
    assert not (project.root / ".niceeval").exists()  # nothing planned, no store made


def test_a_price_so_high_that_an_estimate_overflows_is_a_configuration_error(project):
    _project(project)
    project.write("agent.py", AGENT.replace("cost=1.0", "cost=None"))  # estimated from [prices]
    project.write("niceeval.toml", TOML.replace("input_per_mtok = 1", "input_per_mtok = 1e308"))
    run = project.run("--budget", "3", "--json")
    # it ran: 500 000 tokens at 1e308 $/Mtok estimated `Infinity`, written so into the JSON events
    assert run.exit_code == 2, (run.stdout, run.stderr)
    assert ("[prices.m] input_per_mtok: expected a number of US dollars per million tokens from 0 to "
            "1,000,000, got 1e+308") in run.stdout + run.stderr
    assert "Infinity" not in run.stdout


def test_attempts_the_budget_cannot_count_are_said_so(project):
    """No reported cost and no [prices] for the model: the budget never moves. The run said nothing
    about its budget at all, so `--budget 1` read as a cap it could never be."""
    _project(project)
    project.write("agent.py", AGENT.replace("cost=1.0", "cost=None"))
    project.write("niceeval.toml", TOML.replace('model = "m"', 'model = "unpriced"'))
    run = project.run("--budget", "1")
    assert run.exit_code == 0, (run.stdout, run.stderr)
    assert ("budget: 5 attempts reported no cost and had no estimate (no [prices] for their model): "
            "--budget could not count what they spent") in run.stdout, run.stdout
    finished = next(json.loads(x) for x in project.run("--budget", "1", "--rerun-all", "--json").stdout.splitlines()
                    if '"run.finished"' in x)
    assert (finished["spent_usd"], finished["uncounted"]) == (0.0, 5)
    project.write("niceeval.toml", TOML)  # priced: every attempt estimated, nothing to say
    assert "reported no cost" not in project.run("--budget", "100", "--rerun-all").stdout
