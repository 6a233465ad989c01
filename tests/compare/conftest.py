"""Two real runs of a throwaway project, with one eval per comparison class.

The evals read `NE_SIDE` (base | new) when they run, so the second run (`--rerun-all`: the
sources did not change, nothing may be reused) behaves differently; files added and deleted
between the runs make the `added` and `removed` pairs. Experiments `a` and `b` differ by an
option, for `compare --experiments`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.support.project import Project

TOML = """
[project]
max_concurrency = 1

[experiments.a]
options = { better = false }

[experiments.b]
options = { better = true }
"""

SUITE = '''
import os
from niceeval_cli import Fact, define_eval, define_score_eval
from niceeval_cli.expect import equals

def side():
    return os.environ.get("NE_SIDE", "base")

def better(t):
    return bool(t.experiment.options.get("better"))

@define_eval()
def regressed(t):
    t.check(side() == "base", equals(True)).key("works").label("Works")

@define_eval()
def fixed(t):
    t.check(side() == "new", equals(True)).key("works")

@define_eval()
def undecided(t):
    t.check(1 if side() == "base" else Fact.unavailable("log-missing"), equals(1)).key("log")

@define_eval()
def decided(t):
    t.check(Fact.unavailable("log-missing") if side() == "base" else 1, equals(1)).key("log")

@define_eval()
def still_failing(t):
    t.check(1, equals(2)).key("never")

@define_eval()
def unchanged(t):
    t.check(1, equals(1)).key("always")

@define_score_eval()
def score_down(t):
    t.score(0.8 if side() == "base" else 0.4, weight=10).key("quality")

@define_score_eval()
def gate_fails(t):
    t.check(side() == "base", equals(True)).gate().key("safe")
    t.check(1, equals(1)).score(5).key("points")

calls = {"flaky": 0}

@define_eval(attempts=5, pass_rule=0.6)
def flaky(t):
    n = calls["flaky"] % 5
    calls["flaky"] += 1
    t.check(n < (3 if side() == "base" else 1), equals(True)).key("lucky")

@define_eval()
def by_experiment(t):
    t.check(better(t), equals(True)).key("better")
'''

ONLY_BASE = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import equals

@define_eval()
def removed(t):
    t.check(1, equals(1))
'''

ONLY_NEW = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import equals

@define_eval()
def added(t):
    t.check(1, equals(1))
'''


@dataclass(frozen=True)
class TwoRuns:
    project: Project
    base: str
    new: str


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TwoRuns]:
    project = Project(tmp_path_factory.mktemp("compare") / "proj", in_process=True)
    project.write("niceeval.toml", TOML)
    project.write("evals/suite.py", SUITE)
    project.write("evals/only_base.py", ONLY_BASE)
    first = project.run(env={"NE_SIDE": "base"})
    assert first.exit_code in (1, 5), first.stderr
    base = project.query("runs")[0]["id"]
    (project.root / "evals/only_base.py").unlink()
    project.write("evals/only_new.py", ONLY_NEW)
    second = project.run("--rerun-all", env={"NE_SIDE": "new"})
    assert second.exit_code in (1, 5), second.stderr
    new = project.query("runs")[0]["id"]
    assert new != base
    try:
        yield TwoRuns(project, base, new)
    finally:
        project.forget()
