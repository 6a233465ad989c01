"""Real runs through the CLI of an agent (a transcript with tool calls) and a dataset eval (cases):
`compare` pairs each case by its id, and the report shows the cases grouped and the transcript."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.project import Project

pytestmark = pytest.mark.slow

EVALS = '''
import os
from niceeval_cli import ToolCall, Turn, define_adapter, define_eval
from niceeval_cli.expect import equals, includes

def side():
    return os.environ.get("NE_SIDE", "base")

async def send(ctx, message):
    amount = 30 if side() == "base" else 14
    return Turn(input=message, message=f"Refunded {amount} days. <script>window.__pwned = 1</script>",
                events=[ToolCall("lookup_order", input={"order": "A1"}, output={"paid": 30}),
                        ToolCall("refund", input={"order": "A1", "days": amount})])

shop = define_adapter(name="shop", send=send, observes=("messages", "tool_calls"))

@shop.define_eval()
async def refund(t):
    turn = await t.send("Refund order A1")
    turn.called_tool("refund").gate()
    t.check(turn.message, includes("30 days")).label("States 30 days")

CASES = {"c1": 1, "c2": 2, "c3": 3}
if side() == "new":
    CASES = {"c1": 1, "c2": 2, "c4": 4}

@define_eval(cases=CASES)
def parity(t, case):
    flip = side() == "new" and t.case_id in ("c1", "c2")
    t.check(case % 2 == 1, equals(not flip)).label("odd as expected")
'''


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Project, str, str]]:
    project = Project(tmp_path_factory.mktemp("agents") / "proj", in_process=True)
    project.write("niceeval.toml", "[project]\nmax_concurrency = 1\n")
    project.write("evals/shop.py", EVALS)
    assert project.run(env={"NE_SIDE": "base"}).exit_code == 1
    base = project.query("runs")[0]["id"]
    for name in [n for n in sys.modules if n.endswith("shop") or "evals" in n]:  # CASES are read at import
        module = sys.modules[name]
        if str(project.root.resolve()) in (getattr(module, "__file__", None) or ""):
            del sys.modules[name]
    assert project.run("--rerun-all", env={"NE_SIDE": "new"}).exit_code == 1
    new = project.query("runs")[0]["id"]
    try:
        yield project, base, new
    finally:
        project.forget()


def test_cases_pair_by_case_id_across_real_runs(runs) -> None:
    project, base, new = runs
    result = project.cli("compare", base, new, "--format", "json")
    assert result.exit_code == 0, result.stderr
    got = {(r["eval_id"], r["case_id"]): r["class"] for r in json.loads(result.stdout)["pairs"]}
    assert got["shop/refund", None] == "regressed"
    cases = {k[1]: v for k, v in got.items() if k[1] is not None}
    # the check flips for c1 and c2: odd c1 stops passing, even c2 starts
    assert cases == {"c1": "regressed", "c2": "fixed", "c3": "removed", "c4": "added"}, got
    assert all(eval_id.startswith("shop/parity[") for eval_id, case in got if case is not None)


def test_report_groups_real_cases_and_shows_the_real_transcript(runs, tmp_path: Path) -> None:
    project, base, new = runs
    out = tmp_path / "r.html"
    assert project.cli("report", new, "--baseline", base, "--out", str(out)).exit_code == 0
    html = out.read_text(encoding="utf-8")
    assert "shop/parity <span class=\"dim\">(3 cases)</span>" in html and "1/3 cases" in html
    data = json.loads(html[html.index('id="niceeval-data">') + len('id="niceeval-data">'):].split("</script>")[0])
    refund = next(a for a in data["attempts"] if a.get("turns"))
    turn = refund["turns"][0]
    assert turn["message"].startswith("Refunded 14 days. <script>")
    assert [e["name"] for e in turn["events"]] == ["lookup_order", "refund"]
    assert "<script>window.__pwned" not in html[:html.index('id="niceeval-data"')]
