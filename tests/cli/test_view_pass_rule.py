"""`view` folds each eval's attempts under the pass rule its run used (stored on the run's slots)."""

from __future__ import annotations

import pytest

FLAKY = """
    from niceeval_cli import define_eval
    from niceeval_cli.expect import equals

    calls = []

    @define_eval(attempts=3, pass_rule={rule!r})
    def flaky(t):
        calls.append(1)
        t.check(len(calls) == 1, equals(False)).label("not the first try")
"""


@pytest.mark.parametrize(("rule", "code", "header"), [
    ("any", 0, "evals     1 of 1 passed"),
    ("all", 1, "evals     0 of 1 passed · 1 failed"),
])
def test_view_folds_attempts_under_the_rule_of_their_run(project, rule, code, header) -> None:
    project.write("niceeval.toml", "[project]\nmax_concurrency = 1\n")
    project.write("evals/flaky.py", FLAKY.format(rule=rule))
    assert project.run().exit_code == code
    shown = project.cli("view")
    assert shown.exit_code == 0
    assert header in shown.stdout
    assert "2 of 3 passed" in shown.stdout  # the attempt pass rate does not depend on the rule
