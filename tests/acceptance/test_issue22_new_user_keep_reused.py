"""Issue 22, item 5: `--keep-sandbox failed` on a run whose failure would be reused kept nothing,
silently. The failed slot is executed again (plan reason `keep-sandbox`, said by `run --dry`) so
its workspace is kept; a passing one is still reused. The CLI (in process), the store read
with sqlite3, the kept directory looked at on disk."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support.project import Project


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process (tests/conftest.py `project`): these checks read exit codes, output and
    stored rows; what is about a process (signals, pipes) still starts the real `niceeval`."""
    return project


EVALS = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import equals


@define_eval()
async def bad(t):
    await t.sandbox.write_text("left.txt", "what the agent left\\n")
    t.check(1, equals(2)).label("fails")


@define_eval()
async def good(t):
    t.check(1, equals(1)).label("passes")
'''


def _kept(proj: Project, run_id: str) -> dict[str, str]:
    rows = proj.sql("SELECT a.eval_id, a.sandbox FROM attempts a WHERE a.run_id = ?", (run_id,))
    return {r["eval_id"]: json.loads(r["sandbox"])["kept"] for r in rows
            if r["sandbox"] and json.loads(r["sandbox"]).get("kept")}


def test_keep_sandbox_failed_runs_a_reused_failure_again_and_keeps_its_workspace(proj: Project) -> None:
    proj.write("niceeval.toml", '[experiments.e]\n[experiments.e.sandbox]\nkind = "local"\n')
    proj.write("evals/w.py", EVALS)
    first = proj.run(env={"NO_COLOR": "1"})
    assert first.returncode == 1, first.stdout + first.stderr

    dry = proj.run("--dry", "--json", "--keep-sandbox", "failed")
    assert dry.returncode == 0, dry.stderr
    [planned] = [json.loads(line) for line in dry.stdout.splitlines() if '"run.planned"' in line]
    decisions = {s["eval_id"]: (s["decision"], s["plan_reason"]) for s in planned["slots"]}
    assert decisions == {"w/bad": ("execute", "keep-sandbox"), "w/good": ("reuse", "reused")}, decisions
    human = proj.run("--dry", "--keep-sandbox", "failed", env={"NO_COLOR": "1"})
    assert "keep-sandbox" in human.stdout and "no sandbox to keep" in human.stdout, human.stdout

    kept_run = proj.run("--keep-sandbox", "failed", env={"NO_COLOR": "1"})
    try:
        assert kept_run.returncode == 1, kept_run.stdout + kept_run.stderr
        [run] = proj.sql("SELECT id FROM runs ORDER BY started_at DESC LIMIT 1")
        slots = {r["eval_id"]: (r["relation"], r["plan_reason"]) for r in proj.sql(
            "SELECT eval_id, relation, plan_reason FROM run_slots WHERE run_id = ?", (run["id"],))}
        assert slots == {"w/bad": ("origin", "keep-sandbox"), "w/good": ("reference", "reused")}, slots
        kept = _kept(proj, run["id"])
        assert list(kept) == ["w/bad"], kept
        assert (Path(kept["w/bad"]) / "left.txt").read_text() == "what the agent left\n"
        assert kept["w/bad"] in kept_run.stdout and "--keep-sandbox" in kept_run.stdout, kept_run.stdout
    finally:
        for where in _kept(proj, proj.sql("SELECT id FROM runs ORDER BY started_at DESC LIMIT 1")[0]["id"]).values():
            shutil.rmtree(Path(where).parent, ignore_errors=True)

    # without the flag, the new failure is reused as before
    again = proj.run("--dry", "--json")
    [planned] = [json.loads(line) for line in again.stdout.splitlines() if '"run.planned"' in line]
    assert {s["decision"] for s in planned["slots"]} == {"reuse"}
