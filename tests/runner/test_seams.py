"""Issue 24.6: the judge reaches the runner through a seam (a registered `Grader`, named to the run
like the executor), and an executor kind is registered together with its check."""

from __future__ import annotations

import re
import textwrap
from typing import Any, ClassVar

import pytest

from niceeval_cli._errors import UsageError
from niceeval_cli._registry import DEFAULT_GRADER, EXECUTORS, GRADERS
from niceeval_cli.config import RunOverrides, load_config
from niceeval_cli.discovery import discover
from niceeval_cli.judge import Grader, JudgeGrade, JudgeService, Sampled, create_grader, register_grader
from niceeval_cli.runner import ExecutorKind, RunRequest, check_executor, register_executor, run
from tests.support.components import need_ray
from tests.support.loopback import JudgeServer, Reply
from tests.support.project import Project

JUDGED = """
from niceeval_cli import define_eval
from niceeval_cli.expect import closed_qa, equals


@define_eval(judge=True)
def judged(t):
    qa = {"input": "capital of France?", "output": "Paris"}
    t.check(qa, closed_qa("names Paris").at_least(1)).gate().label("paris")


@define_eval()
def plain(t):
    t.check(1, equals(1)).label("one")
"""


class _Counting(JudgeService):
    """The real HTTP judge, counting what the run asked of it through the seam."""

    made: ClassVar[list[_Counting]] = []

    def __init__(self) -> None:
        super().__init__()
        self.graded: list[str] = []
        self.closed = False
        _Counting.made.append(self)

    async def grade(self, match: Any, material: object, settings: Any) -> JudgeGrade:
        graded = await super().grade(match, material, settings)
        self.graded.append(f"{match.describe()} -> {graded.measurement}")
        return graded

    async def aclose(self) -> None:
        self.closed = True
        await super().aclose()


register_grader("counting-test", _Counting)


def _request(project: Project, server: JudgeServer, evals: str, monkeypatch: pytest.MonkeyPatch) -> RunRequest:
    project.write("niceeval.toml", textwrap.dedent(f"""
        [judge]
        model = "judge-m"
        base_url = "{server.base_url}"
        api_key_env = "JK"
    """))
    project.write("evals/e.py", evals)
    monkeypatch.setenv("JK", "sk-test-seamJudgeKey0123456789")
    monkeypatch.chdir(project.root)
    config = load_config(project.root / "niceeval.toml")
    return RunRequest(project=config, evals=discover(config.eval_roots, config.root), overrides=RunOverrides())


def test_the_run_grades_through_the_grader_it_is_handed(
    project: Project, judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge_server.default = Reply.tool("N", "it names Lyon")
    _Counting.made.clear()
    outcome = run(_request(project, judge_server, JUDGED, monkeypatch), grader="counting-test")
    assert outcome.exit_code == 1  # the judge said no
    (grader,) = _Counting.made  # one grader for the whole run, closed at its end
    assert len(grader.graded) == 1 and grader.graded[0].endswith("-> 0.0") and grader.closed
    assert len(judge_server.grading_requests) == 1


def test_a_run_without_a_judge_makes_no_grader(
    project: Project, judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    _Counting.made.clear()
    only_plain = JUDGED.replace("@define_eval(judge=True)\ndef judged", "def not_an_eval")
    outcome = run(_request(project, judge_server, only_plain, monkeypatch), grader="counting-test")
    assert outcome.exit_code == 0 and _Counting.made == []


def test_the_default_grader_is_the_http_judge_asked_judge_samples_times() -> None:
    assert DEFAULT_GRADER in GRADERS
    grader: Grader = create_grader()
    assert isinstance(grader, Sampled) and isinstance(grader.inner, JudgeService)


def test_an_unknown_grader_names_the_known_ones() -> None:
    with pytest.raises(LookupError, match=DEFAULT_GRADER):
        create_grader("no-such-grader")


def test_an_executor_kind_is_registered_with_its_check() -> None:
    def refuse(options: Any) -> None:
        raise UsageError(f"--executor picky-test refuses {dict(options)}")

    register_executor("picky-test", lambda context: None, refuse)  # type: ignore[arg-type,return-value]
    kind = EXECUTORS.get("picky-test")
    assert isinstance(kind, ExecutorKind) and kind.check is refuse
    with pytest.raises(UsageError, match=re.escape("refuses {'x': 1}")):
        check_executor("picky-test", {"x": 1})


def test_the_ray_executor_registers_its_check_with_it() -> None:
    need_ray()  # `[test]` has no Ray: skipped with the reason there (and failed in CI)
    check_executor("ray", {})  # Ray is installed here: its check passes, and registered it
    kind = EXECUTORS.get("ray")
    assert isinstance(kind, ExecutorKind) and kind.check.__module__ == "niceeval_cli.runner._ray"
