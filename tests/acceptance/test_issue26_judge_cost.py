"""Issue 26 item 6 (judge-trust.md, "Cost"): the judge's cost apart from the system under test's —
in the run summary, in `view` (the run and one attempt) and in the HTML report; samples multiply it.

The CLI (in process), a real loopback judge reporting `usage.cost`, the store read
with sqlite3."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.loopback import JudgeServer, Reply
from tests.support.project import Project as Proj


@pytest.fixture
def proj(project: Proj) -> Proj:
    """The CLI in process (tests/conftest.py `project`): these checks read exit codes, output and
    stored rows; what is about a process (signals, pipes) still starts the real `niceeval`."""
    return project


ENV = {"JK": "sk-test-judgeCostKey0123456789abcdef"}
USAGE = {"prompt_tokens": 100_000, "completion_tokens": 0, "total_tokens": 100_000, "cost": 0.25}

AGENT = '''
from niceeval_cli import Turn, Usage, define_adapter

async def send(ctx, message):
    return Turn(input=message, message="Paris.", usage=Usage(input_tokens=10, output_tokens=0, cost_usd=2.0))

adapter = define_adapter(name="paid", send=send)
'''

EVALS = '''
from niceeval_cli.expect import closed_qa
from agent import adapter


async def capital(t):
    turn = await t.send("What is the capital of France?")
    t.check({"input": "capital?", "output": turn.message}, closed_qa("Names Paris?").at_least(1)).gate().label("paris")


capital_eval = adapter.define_eval(test=capital, name="capital", judge=True)
'''


@pytest.fixture
def judge() -> Iterator[JudgeServer]:
    server = JudgeServer().start()
    server.default = Reply.tool("Y", "names Paris", usage=USAGE)
    try:
        yield server
    finally:
        server.stop()


def _project(proj: Proj, judge: JudgeServer, samples: int = 1) -> None:
    proj.write("niceeval.toml", f'''
        [judge]
        model = "judge-m"
        base_url = "{judge.base_url}"
        api_key_env = "JK"
        samples = {samples}

        [experiments.paid]
        model = "m"

        [prices."judge-m"]
        input_per_mtok = 1
        output_per_mtok = 1
    ''')
    proj.write("agent.py", AGENT)
    proj.write("evals/e.py", EVALS)


def test_the_summary_and_the_store_keep_the_judges_cost_apart(proj: Proj, judge: JudgeServer):
    _project(proj, judge, samples=2)
    done = proj.run(env=ENV)
    assert done.returncode == 0, done.stdout + done.stderr
    (row,) = proj.sql("SELECT cost_usd, estimated_cost_usd, judge_cost_usd, judge_estimated_cost_usd, judge_tokens "
                      "FROM attempts")
    # Two samples: two reported judge costs, and 200 000 judge tokens priced at $1 per million.
    assert row == {"cost_usd": 2.0, "estimated_cost_usd": None, "judge_cost_usd": 0.5,
                   "judge_estimated_cost_usd": 0.2, "judge_tokens": 200_000}
    assert "cost      paid  $2.00 reported (1 of 1 attempts)" in done.stdout, done.stdout
    assert "judge     paid  $0.5000 reported (1 of 1 attempts) · $0.2000 estimated from [prices] (1 of 1)" \
        in done.stdout, done.stdout


def test_view_shows_the_judges_cost_apart_for_the_run_and_the_attempt(proj: Proj, judge: JudgeServer):
    _project(proj, judge)
    assert proj.run(env=ENV).returncode == 0
    view = proj.cli("view")
    assert "cost      paid  $2.00 reported" in view.stdout and "judge     paid  $0.2500 reported" in view.stdout
    (attempt,) = proj.sql("SELECT id FROM attempts")
    one = proj.cli("view", f"@{attempt['id']}")
    assert "$2.00 reported" in one.stdout and "judge cost" in one.stdout, one.stdout
    assert "$0.2500 reported · $0.1000 estimated from [prices]" in one.stdout, one.stdout


def test_the_report_shows_the_judges_cost_apart(proj: Proj, judge: JudgeServer):
    _project(proj, judge)
    assert proj.run(env=ENV).returncode == 0
    made = proj.cli("report", "--out", "report.html")
    assert made.returncode == 0, made.stderr
    page = (proj.root / "report.html").read_text(encoding="utf-8")
    assert '<dt>judge cost</dt><dd id="judge-cost">$0.2500 reported · $0.1000 estimated from prices</dd>' in page
    assert "judge $0.2500 reported (1 of 1 attempts)" in page


def test_without_a_judge_cost_nothing_new_is_shown(proj: Proj, judge: JudgeServer):
    _project(proj, judge)
    judge.default = Reply.tool("Y", "names Paris")  # no cost reported, and [prices] without the judge
    proj.write("niceeval.toml", (proj.root / "niceeval.toml").read_text().replace('[prices."judge-m"]', "[prices.x]"))
    done = proj.run(env=ENV)
    assert done.returncode == 0 and "judge     paid" not in done.stdout, done.stdout
    (row,) = proj.sql("SELECT judge_cost_usd, judge_estimated_cost_usd FROM attempts")
    assert row == {"judge_cost_usd": None, "judge_estimated_cost_usd": None}
