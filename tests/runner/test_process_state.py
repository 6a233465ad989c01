"""Eval code runs in the `niceeval` process (the in-process executor) and may change what the
process shares: sys.stdout, the working directory. The run's own output and files stay where the
user asked for them. Each test is a real `niceeval` process."""

from __future__ import annotations

import os
from pathlib import Path

from tests.support.project import Project

EVALS = """
import os, sys
from niceeval_cli import define_eval
from niceeval_cli.expect import equals

@define_eval
def a_{name}(t):
    {statement}
    t.check(1, equals(1))

@define_eval
def b_fails(t):
    t.check(1, equals(2))
"""


def _project(tmp_path: Path, name: str, statement: str) -> Project:
    proj = Project(tmp_path / "proj")
    proj.write("niceeval.toml", "[project]\nmax_concurrency = 1\n")
    proj.write("evals/ex.py", EVALS.format(name=name, statement=statement))
    return proj


def test_eval_code_that_closes_or_replaces_sys_stdout_leaves_the_run_output_whole(tmp_path: Path) -> None:
    """Closing sys.stdout ended the run with an internal error (exit 4) once its summary was
    printed; replacing it with /dev/null silenced every line after that attempt."""
    for name, statement in (("closes", "sys.stdout.close()"), ("replaces", "sys.stdout = open(os.devnull, 'w')")):
        proj = _project(tmp_path / name, name, statement)
        run = proj.run(timeout=120)
        out = run.stdout + run.stderr
        assert run.returncode == 1, out
        assert "failed     default · ex/b_fails#0" in run.stdout, out
        assert "1 failed, 1 passed · exit 1" in run.stdout, out


def test_a_relative_junit_path_is_where_the_run_started_though_eval_code_changed_directory(tmp_path: Path) -> None:
    """`--junit report.xml` after an eval's `os.chdir(...)` was written in that other directory."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proj = _project(tmp_path, "moves", f"os.chdir({str(elsewhere)!r})")
    run = proj.run("--junit", "report.xml", timeout=120)
    assert run.returncode == 1, run.stdout + run.stderr
    assert (proj.root / "report.xml").is_file()
    assert not os.listdir(elsewhere)


def test_a_recursion_limit_set_by_the_test_is_given_back_when_it_returns(tmp_path: Path) -> None:
    """`sys.setrecursionlimit(40)` in a test left NiceEval's own code unable to describe the
    attempt: the run ended with an internal error (exit 4) and sealed nothing after it."""
    proj = Project(tmp_path / "proj")
    proj.write("niceeval.toml", "[project]\nmax_concurrency = 1\n")
    proj.write("evals/ex.py", """
import sys
from niceeval_cli import define_eval
from niceeval_cli.expect import equals

@define_eval
def a_lowers_the_limit(t):
    sys.setrecursionlimit(40)
    t.check({"a": [1, {"b": 2}]}, equals({"a": [1, {"b": 3}]}))

@define_eval
def b_sees_the_limit(t):
    t.check(sys.getrecursionlimit() > 100, equals(True))
    t.check(1, equals(2))
""")
    run = proj.run(timeout=120)
    assert run.returncode == 1, run.stdout + run.stderr
    states = {r["eval_id"]: r["state"] for r in proj.sql("SELECT eval_id, state FROM attempts")}
    assert states == {"ex/a_lowers_the_limit": "errored", "ex/b_sees_the_limit": "failed"}
    [matched] = proj.sql("SELECT state FROM assertion_results WHERE ordinal = 0 AND attempt_id = "
                         "(SELECT id FROM attempts WHERE eval_id = 'ex/b_sees_the_limit')")
    assert matched["state"] == "matched"
