"""The executor seam (issue 10.1): a slot crosses a process boundary as a plain-data SlotSpec,
and a worker that has only the spec runs the attempt; the driver alone seals."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import pickle
import subprocess
import sys
from collections.abc import Iterator

import pytest

from niceeval_cli.runner import (
    DEFAULT_EXECUTOR,
    ExecutorContext,
    RerunMode,
    RunOutcome,
    SealedAttempt,
    SlotSpec,
    executor_names,
    register_executor,
)
from tests.support.project import Project
from tests.support.run_library import Recorder, library_runner

EVALS = """
from niceeval_cli import define_adapter, define_eval, define_score_eval
from niceeval_cli.expect import equals

adapter = define_adapter(name="echo", create=lambda ctx: {"attempt": ctx.attempt, "model": ctx.experiment.model})


@define_eval(adapter=adapter, attempts=2)
def a_own_adapter(t):
    t.check(t.facts["attempt"] in (0, 1), equals(True)).label("ordinal seen")


@define_eval()
def b_experiment_adapter(t):
    t.check(t.facts["model"], equals("m-1")).label("model")


@define_score_eval()
def c_scored(t):
    t.check(1, equals(1)).score(3).label("three")


@define_eval()
def d_fails(t):
    t.check(1, equals(2)).label("wrong")
"""

WORKER = """
import asyncio, pickle, sys
from niceeval_cli.runner import execute_spec
spec = pickle.load(sys.stdin.buffer)
sys.stdout.buffer.write(pickle.dumps(asyncio.run(execute_spec(spec))))
"""


class SubprocessExecutor:
    """Each attempt in a fresh Python process that receives the pickled spec and nothing else."""

    def __init__(self, context: ExecutorContext) -> None:
        self.specs: list[SlotSpec] = []

    async def submit(self, spec: SlotSpec) -> SealedAttempt:
        self.specs.append(spec)
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", WORKER, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, cwd=spec.project_root, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )
        out, err = await proc.communicate(pickle.dumps(spec))
        assert proc.returncode == 0, err.decode()
        sealed = pickle.loads(out)
        assert isinstance(sealed, SealedAttempt)
        return sealed

    async def aclose(self) -> None:
        pass


made: list[SubprocessExecutor] = []


def _factory(context: ExecutorContext) -> SubprocessExecutor:
    made.append(SubprocessExecutor(context))
    return made[-1]


register_executor("subprocess-test", _factory)


def _project(project) -> None:  # type: ignore[no-untyped-def]
    project.write("niceeval.toml", """
        [project]
        max_concurrency = 2

        [experiments.m]
        adapter = "evals.support:adapter"
        model = "m-1"
    """)
    project.write("evals/work.py", EVALS)
    project.write("evals/support.py", """
        from niceeval_cli import define_adapter
        adapter = define_adapter(name="model", create=lambda ctx: {"model": ctx.experiment.model, "attempt": 0})
    """)


def test_the_inprocess_executor_is_the_registered_default() -> None:
    assert DEFAULT_EXECUTOR == "inprocess"
    assert "inprocess" in executor_names()


@dataclasses.dataclass(frozen=True)
class BothWays:
    project: Project
    inprocess: RunOutcome
    elsewhere: RunOutcome
    seen: Recorder
    executor: SubprocessExecutor


@pytest.fixture(scope="module")
def both_ways(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BothWays]:
    """The project run in process, then all over again by the subprocess executor (a Python
    process per attempt, ~0.5 s of CPU each): once for the module, whose checks only read it."""
    project = Project(tmp_path_factory.mktemp("executor") / "proj", in_process=True)
    _project(project)
    try:
        with pytest.MonkeyPatch.context() as monkeypatch:
            run_library = library_runner(project, monkeypatch)
            inprocess, _ = run_library()
            elsewhere, seen = run_library(executor="subprocess-test", mode=RerunMode.ALL)
        yield BothWays(project, inprocess, elsewhere, seen, made[-1])
    finally:
        project.forget()


@pytest.mark.slow
def test_a_worker_with_only_the_spec_runs_attempts_the_driver_seals(both_ways: BothWays) -> None:
    inprocess, elsewhere, seen = both_ways.inprocess, both_ways.elsewhere, both_ways.seen
    assert elsewhere.exit_code == inprocess.exit_code == 1
    assert elsewhere.counts == inprocess.counts == {"passed": 3, "failed": 1, "scored": 1}
    stored = both_ways.project.attempts("--run", elsewhere.run_id)
    assert sorted((a["eval_id"], a["ordinal"], a["state"]) for a in stored) == [
        ("work/a_own_adapter", 0, "passed"), ("work/a_own_adapter", 1, "passed"),
        ("work/b_experiment_adapter", 0, "passed"), ("work/c_scored", 0, "scored"), ("work/d_fails", 0, "failed"),
    ]
    assert {a["run_id"] for a in stored} == {elsewhere.run_id}
    assert len(seen.sealed_attempts) == 5  # sealed and told by the driver


def test_a_spec_is_plain_data(both_ways: BothWays) -> None:
    spec = both_ways.executor.specs[0]  # what a worker process received
    as_json = json.loads(json.dumps(dataclasses.asdict(spec)))
    assert as_json["eval_file"].endswith("work.py") and as_json["run_id"]
    assert pickle.loads(pickle.dumps(spec)) == spec
