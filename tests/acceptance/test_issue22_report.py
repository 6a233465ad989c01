"""Issue 22, item 5 (the HTML report, as a new user read it): the cost per experiment that the
header and the terminal have; score cells coloured and marked by the score's standing (a 1-of-6
score is never green with ✓); the rows where experiments differ above the rows where all passed,
all-passing case groups folded; the baseline run named in the header.

The CLI (in process: `niceeval run` / `niceeval report`) writes the store and the page; a real
headless Chromium reads what a person sees (text, order, computed colours)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.browser import chromium_context
from tests.support.project import Project


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process (tests/conftest.py `project`): these checks read exit codes, output and
    stored rows; what is about a process (signals, pipes) still starts the real `niceeval`."""
    return project


pytestmark = pytest.mark.slow

TOML = """
[project]
max_concurrency = 2

[experiments.alpha]
adapter = "python"
model = "model-a"
options = { callable = "agent:reply", kwargs = { good = false } }

[experiments.beta]
adapter = "python"
model = "model-b"
options = { callable = "agent:reply", kwargs = { good = true } }
"""

AGENT = '''
def reply(message, good=False):
    return {"message": "ok" if good else "meh", "usage": {"input_tokens": 10, "output_tokens": 5,
            "cost_usd": 0.0125 if good else 0.0025}}
'''

EVALS = '''
from niceeval_cli import define_eval, define_score_eval
from niceeval_cli.expect import equals

CASES = {f"c{i:02d}": i for i in range(48)}


@define_eval(cases=CASES)
async def all_pass(t, case):
    turn = await t.send("hi")
    t.check(turn.message in ("ok", "meh"), equals(True)).label("answers")


@define_score_eval(cases={f"q{i:02d}": i for i in range(12)})
async def quality(t, case):
    turn = await t.send("hi")
    good = turn.message == "ok" or case != 11  # only the last case tells the experiments apart
    t.check(True, equals(True)).score(1).label("answered")
    t.check(good, equals(True)).score(5).label("good answer")


@define_eval()
async def stable(t):
    await t.send("hi")
    t.check(1, equals(1)).label("one")
'''


@pytest.fixture(scope="module")
def reported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    proj = Project(tmp_path_factory.mktemp("issue22-report") / "proj", in_process=True)
    proj.write("niceeval.toml", TOML)
    proj.write("agent.py", AGENT)
    proj.write("evals/app.py", EVALS)
    first = proj.run()
    assert first.returncode == 0, first.stdout + first.stderr
    base = proj.sql("SELECT id FROM runs ORDER BY id")[-1]["id"]
    second = proj.run("--rerun-all", env={"NO_COLOR": "1"})
    assert second.returncode == 0, second.stdout + second.stderr
    made = proj.cli("report", "--baseline", base)
    assert made.returncode == 0, made.stderr
    with chromium_context(tmp_path_factory.mktemp("profile")) as context:
        page = context.new_page()
        page.goto(Path(made.stdout.strip()).resolve().as_uri())
        page.wait_for_function("() => document.getElementById('attempts').dataset.complete")
        yield {"proj": proj, "page": page, "base": base, "run_output": second.stdout}


def test_each_experiment_shows_the_cost_the_header_and_the_terminal_have(reported: dict[str, Any]) -> None:
    page = reported["page"]
    assert "$0.9150 reported" in page.inner_text("#run-header")
    view = reported["proj"].cli("view", env={"NO_COLOR": "1"}).stdout
    for experiment, cost in (("alpha", "$0.1525"), ("beta", "$0.7625")):  # 61 attempts each
        row = page.inner_text(f"#experiments tr[data-experiment='{experiment}']")
        assert cost in row and "reported" in row, row
        assert cost in view, view
    versus = page.inner_text("#compare-experiments table.side-by-side")
    assert "$0.1525" in versus and "$0.7625" in versus, versus


def _cell(page: Any, case: str, column: int) -> dict[str, str]:
    return page.evaluate(
        """([caseId, column]) => {
            const row = document.querySelector(`#matrix tr.case-row[data-case="${caseId}"]`);
            const td = row.querySelectorAll('td')[column];
            return {text: td.innerText, color: getComputedStyle(td).color, title: td.title};
        }""", [case, column])


def test_a_low_score_is_neither_green_nor_marked_passed(reported: dict[str, Any]) -> None:
    page = reported["page"]
    low = _cell(page, "q11", 0)  # alpha: 1 of 6
    high = _cell(page, "q11", 1)  # beta: 6 of 6
    assert "1/6" in low["text"] and "✓" not in low["text"], low
    assert "6/6" in high["text"], high
    green = page.evaluate("getComputedStyle(document.querySelector('#matrix td.s-passed')).color")
    assert low["color"] != green and high["color"] == green, (low, high, green)
    assert "low" in low["title"] and "high" in high["title"]
    assert "low score" in low["text"]  # said in words too, not by colour alone
    badge = page.evaluate("""() => {
        const li = document.querySelector("#attempts > li[data-eval='app/quality[q11]'][data-experiment='alpha']");
        const b = li.querySelector('summary .badge');
        return {text: b.innerText, color: getComputedStyle(b).color};
    }""")
    assert "✓" not in badge["text"] and badge["color"] != green, badge


def test_rows_where_the_experiments_differ_come_before_rows_where_all_passed(reported: dict[str, Any]) -> None:
    page = reported["page"]
    evals = page.eval_on_selector_all("#matrix tbody.eval-group", "els => els.map(e => e.dataset.eval)")
    assert evals.index("app/quality") < evals.index("app/all_pass"), evals
    assert evals.index("app/quality") < evals.index("app/stable"), evals
    cases = page.eval_on_selector_all("#matrix tbody[data-eval='app/quality'] tr.case-row",
                                      "els => els.map(e => e.dataset.case)")
    assert cases[0] == "q11" and len(cases) == 12, cases  # the one case that differs, above 11 alike


def test_an_all_passing_case_group_is_folded_and_opens_on_demand(reported: dict[str, Any]) -> None:
    page = reported["page"]
    group = page.locator("#matrix tbody.eval-group[data-eval='app/all_pass']")
    rows = group.locator("tr.case-row")
    assert rows.count() == 48
    assert not any(rows.nth(i).is_visible() for i in range(0, 48, 7))
    button = group.locator("button.expand")
    assert button.is_visible() and "48" in button.inner_text()
    button.click()
    assert rows.first.is_visible() and rows.nth(47).is_visible()
    button.click()
    assert not rows.first.is_visible()
    # a group whose experiments differ stays open
    differing = page.locator("#matrix tbody.eval-group[data-eval='app/quality'] tr.case-row")
    assert differing.first.is_visible()


def test_the_header_names_the_baseline_run_it_compares_with(reported: dict[str, Any]) -> None:
    page = reported["page"]
    header = page.inner_text("#run-header")
    assert "baseline run" in header and reported["base"] in header, header
    link = page.locator("#run-header a[href='#compare-baseline']")
    assert link.count() == 1 and "unchanged" in link.inner_text()
    assert reported["base"] in page.inner_text("#compare-baseline h2")
