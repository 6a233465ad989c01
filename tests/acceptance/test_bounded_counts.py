"""A count a slip of the keyboard makes huge is a configuration error, reported before anything runs.

`attempts = 100000000` (or `--attempts`, `define_eval(attempts=...)`, `[run] max_attempts`,
`judge.samples`) planned that many slots: the real `niceeval run` sat growing until the machine
ran out of memory, with nothing said. Now each is refused in one paragraph naming where it was
given and what fits (1 to 1000 attempts, 1 to 100 samples), exit 2, with nothing recorded; the
bound itself is taken.
"""

from __future__ import annotations

import pytest

from tests.support.project import Project

ONE_EVAL = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals


@define_eval({options})
def one(t):
    t.check(1, equals(1))
"""


@pytest.mark.parametrize(
    ("toml", "options", "args", "message"),
    [
        ("[project]\nattempts = 100000000\n", "", ["run"],
         "niceeval.toml: [project] attempts: expected an integer from 1 to 1000, got 100000000."),
        ("[project]\n", "", ["run", "--attempts", "100000000"],
         "--attempts: expected an integer from 1 to 1000, got 100000000."),
        ("[project]\n", "attempts=100_000_000", ["run"], "an integer from 1 to 1000"),
        ("[project]\n[run]\nmax_attempts = 5000\n", "", ["run", "--until-decided"],
         "[run] max_attempts: expected an integer from 1 to 1000, got 5000."),
        ("[project]\n", "", ["run", "--until-decided", "--max-attempts", "5000"],
         "--max-attempts: expected an integer from 1 to 1000, got 5000"),
        ('[project]\n[judge]\nmodel = "m"\nsamples = 1000\n', "", ["run"],
         "[judge] samples: expected an integer from 1 to 100, got 1000."),
    ],
)
def test_a_huge_count_is_one_paragraph_and_exit_2_before_anything_runs(
    proj: Project, toml: str, options: str, args: list[str], message: str,
) -> None:
    proj.write("niceeval.toml", toml)
    proj.write("evals/one.py", ONE_EVAL.format(options=options))
    result = proj.cli(*args, timeout=60)  # a real process: the old code never came back
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr and result.stderr.count("niceeval:") == 1, result.stderr
    assert not (proj.root / ".niceeval" / "results.db").exists()


def test_the_bound_itself_is_taken(proj: Project) -> None:
    proj.write("niceeval.toml", "[project]\nattempts = 1000\n")
    proj.write("evals/one.py", ONE_EVAL.format(options=""))
    result = proj.cli("run", "--dry", timeout=120)
    assert result.returncode == 0, result.stderr
    assert "1000 slot(s): 1000 to execute, 0 to reuse" in result.stdout, result.stdout[-500:]
