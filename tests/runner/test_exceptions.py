"""Whatever eval code raises, the Attempt is sealed `errored` (outcomes.md: reason `exception`, type
and message in `error`) and the rest of the run goes on."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    "statement",
    ['raise ValueError("bad value")', "1 / 0", 'import json; json.loads("{")', 'assert False, "plain assert"'],
)
def test_an_exception_in_test_code_is_errored_and_other_attempts_still_run(project, statement):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/ex.py", f"""
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        def a_passes(t):
            t.check(1, equals(1))

        @define_eval()
        def b_raises(t):
            t.check(1, equals(1)).label("kept")
            {statement}

        @define_eval()
        def c_passes(t):
            t.check(1, equals(1))
    """)
    assert project.run().exit_code == 5
    attempts = {a["eval_id"]: a for a in project.attempts()}
    assert attempts["ex/b_raises"]["state"] == "errored"
    assert attempts["ex/b_raises"]["reason"] == "exception"
    assert attempts["ex/b_raises"]["error"]
    assert attempts["ex/a_passes"]["state"] == attempts["ex/c_passes"]["state"] == "passed"


def test_sys_exit_in_test_code_is_an_errored_attempt_not_the_run_exit_code(project):
    project.write("niceeval.toml", "[project]\nmax_concurrency = 1\n")
    project.write("evals/ex.py", """
        import sys
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        def a_fails(t):
            t.check(1, equals(2))

        @define_eval()
        def b_exits(t):
            sys.exit(0)
    """)
    assert project.run().exit_code == 1
    attempts = {a["eval_id"]: a for a in project.attempts()}
    assert attempts["ex/a_fails"]["state"] == "failed"
    assert attempts["ex/b_exits"]["state"] == "errored"
    assert project.query("runs")[0]["status"] == "finished"


def test_eval_code_that_stops_the_event_loop_costs_nothing_but_its_own_attempt(project):
    """`asyncio.get_running_loop().stop()` in eval code ended the run with an internal error (exit 4)."""
    project.write("niceeval.toml", "[project]\nmax_concurrency = 1\n")
    project.write("evals/ex.py", """
        import asyncio
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        async def a_stops_the_loop(t):
            asyncio.get_running_loop().stop()
            t.check(1, equals(1))

        @define_eval()
        def b_fails(t):
            t.check(1, equals(2))
    """)
    result = project.run()
    assert result.exit_code == 1, result.stdout + result.stderr
    attempts = {a["eval_id"]: a for a in project.attempts()}
    assert attempts["ex/a_stops_the_loop"]["state"] == "passed"
    assert attempts["ex/b_fails"]["state"] == "failed"


def test_an_exception_whose_text_raises_recurses_or_is_huge_is_described_and_bounded(project):
    """Eval code's exception is the user's: its `__str__` raising made the attempt read "the
    executor failed: ValueError: ..." (where it was raised lost), one returning 10 MB stored 10 MB
    in the attempt's `error`; a match's exception of that kind did the same."""
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/ex.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals, satisfies

        class Raises(Exception):
            def __str__(self):
                raise ValueError("its own bug")

        class Recurses(Exception):
            def __str__(self):
                return str(self)

        class Huge(Exception):
            def __str__(self):
                return "x" * 10_000_000

        def predicate(value):
            raise Raises()

        @define_eval()
        def a_raises(t):
            raise Raises()

        @define_eval()
        def b_recurses(t):
            raise Recurses()

        @define_eval()
        def c_huge(t):
            raise Huge()

        @define_eval()
        def d_in_a_match(t):
            t.check(1, satisfies("odd", predicate))
            t.check(1, equals(1))
    """)
    assert project.run().exit_code == 5
    attempts = {a["eval_id"]: a for a in project.attempts()}
    assert attempts["ex/a_raises"]["error"] == "Raises: <its str() raised ValueError> (at evals/ex.py:21)"
    assert attempts["ex/b_recurses"]["error"] == "Recurses: <its str() raised RecursionError> (at evals/ex.py:25)"
    huge = attempts["ex/c_huge"]["error"]
    assert huge.startswith("Huge: xxx") and "… [+9996000 chars]" in huge and len(huge) < 5000
    assert {a["reason"] for a in attempts.values()} == {"exception", "assertion-errored"}
    errored = project.sql("SELECT explanation FROM assertion_results WHERE state = 'errored'")
    assert [r["explanation"] for r in errored] == ["Raises: <its str() raised ValueError>"]
