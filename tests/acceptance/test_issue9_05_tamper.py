"""Issue 9, item 5: the store file itself refuses rewriting sealed rows — `INSERT OR REPLACE` /
`REPLACE INTO` included (REPLACE deletes without firing DELETE triggers) — and a finished run's
row and slots never change. Tampering goes through the real `sqlite3` shell."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.support.components import need_command
from tests.support.project import Project

EVALS = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import includes


@define_eval(attempts=2)
async def wrong(t):
    t.check("no", includes("y")).label("has y")
'''

SLOT = "SELECT run_id, experiment_id, eval_id, ordinal FROM run_slots LIMIT 1"
TAMPERING = {
    "replace-attempt": "INSERT OR REPLACE INTO attempts SELECT * FROM attempts LIMIT 1",
    "replace-into-attempt": "REPLACE INTO attempts SELECT * FROM attempts LIMIT 1",
    "replace-result": "REPLACE INTO assertion_results SELECT * FROM assertion_results LIMIT 1",
    "update-attempt": "UPDATE attempts SET state = 'passed'",
    "delete-attempt": "DELETE FROM attempts",
    "update-result": "UPDATE assertion_results SET state = 'matched'",
    "delete-result": "DELETE FROM assertion_results",
    "replace-run": "REPLACE INTO runs SELECT * FROM runs",
    "update-finished-run": "UPDATE runs SET exit_code = 0",
    "reopen-finished-run": "UPDATE runs SET status = 'running'",
    "delete-run": "DELETE FROM runs",
    "replace-slot": "REPLACE INTO run_slots SELECT * FROM run_slots LIMIT 1",
    "update-slot": "UPDATE run_slots SET relation = 'reference'",
    "delete-slot": "DELETE FROM run_slots",
    "add-slot-to-finished-run": "INSERT INTO run_slots SELECT run_id, experiment_id, eval_id, 99, attempt_id, "
                                "relation, plan_reason, pass_rule FROM run_slots LIMIT 1",
    "replace-plan": "REPLACE INTO run_plan SELECT * FROM run_plan LIMIT 1",
    "delete-plan": "DELETE FROM run_plan",
}


@pytest.fixture(scope="module")
def sealed(tmp_path_factory: pytest.TempPathFactory) -> Project:
    proj = Project(tmp_path_factory.mktemp("tamper") / "proj", in_process=True)  # what the store holds is checked
    proj.write("evals/wrong.py", EVALS)
    res = proj.run()
    assert res.returncode == 1, res.stdout + res.stderr
    return proj


def _dump(path: str) -> str:
    return subprocess.run(["sqlite3", path, ".dump"], capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("statement", list(TAMPERING.values()), ids=list(TAMPERING))
def test_sealed_rows_and_finished_runs_refuse_rewrites_through_sqlite3(sealed: Project, statement: str,
                                                                      tmp_path) -> None:
    need_command("sqlite3")
    copy = tmp_path / "copy.db"
    shutil.copy(sealed.store, copy)
    before = _dump(str(copy))
    res = subprocess.run(["sqlite3", str(copy), statement], capture_output=True, text=True)
    assert res.returncode != 0, f"{statement!r} was accepted"
    assert _dump(str(copy)) == before
