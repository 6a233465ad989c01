"""Per-attempt timeout (config.md; outcomes.md): an Attempt over its deadline is `errored`,
reason `timeout`, with the results it registered before the deadline kept."""

from __future__ import annotations

import time

import pytest

SLOW = """
import asyncio
from niceeval_cli import define_eval, define_score_eval
from niceeval_cli.expect import equals

@define_eval({options})
async def slow_pass(t):
    t.check(1, equals(1)).label("before the wait")
    await asyncio.sleep(30)
    t.check(1, equals(1)).label("after the wait")
"""


def _only_attempt(project):
    [attempt] = project.attempts()
    return attempt


@pytest.mark.parametrize(
    ("options", "toml", "args"),
    [
        ("timeout_ms=200", "[project]\n", ()),
        ("", "[project]\ntimeout_ms = 200\n", ()),
        ("", "[experiments.local]\ntimeout_ms = 200\n", ()),
        ("timeout_ms=60000", "[project]\n", ("--timeout", "200")),
    ],
    ids=["eval-option", "project", "experiment", "cli-flag-overrides-eval"],
)
def test_an_attempt_over_its_timeout_is_errored_timeout_with_earlier_results_kept(project, options, toml, args):
    project.write("niceeval.toml", toml)
    project.write("evals/slow.py", SLOW.format(options=options))
    began = time.monotonic()
    result = project.run(*args)
    assert time.monotonic() - began < 10
    assert result.exit_code == 5
    attempt = _only_attempt(project)
    assert (attempt["state"], attempt["reason"]) == ("errored", "timeout")
    assert attempt["duration_ms"] < 5_000
    labels = [r["label"] for r in project.assertions()]
    assert labels == ["before the wait"]


def test_a_timed_out_score_attempt_keeps_its_points_as_partial_score(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/slow_score.py", """
        import asyncio
        from niceeval_cli import define_score_eval
        from niceeval_cli.expect import equals

        @define_score_eval(timeout_ms=200)
        async def slow_score(t):
            t.check(1, equals(1)).score(3).label("earned")
            await asyncio.sleep(30)
            t.check(1, equals(1)).score(7).label("never")
    """)
    assert project.run().exit_code == 5
    attempt = _only_attempt(project)
    assert (attempt["state"], attempt["reason"]) == ("errored", "timeout")
    assert attempt["score"] is None
    assert attempt["partial_score"] == 3


def test_a_slow_adapter_create_is_cut_by_the_timeout(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("slow_app.py", """
        import asyncio
        from niceeval_cli import define_adapter

        async def create(ctx):
            await asyncio.sleep(30)

        adapter = define_adapter(name="slow", create=create)
    """)
    project.write("evals/observe.py", """
        from slow_app import adapter

        @adapter.define_eval(timeout_ms=200)
        def observe(t):
            pass
    """)
    assert project.run().exit_code == 5
    attempt = _only_attempt(project)
    assert (attempt["state"], attempt["reason"]) == ("errored", "timeout")


def test_an_attempt_within_its_timeout_is_unaffected(project):
    project.write("niceeval.toml", "[project]\ntimeout_ms = 5000\n")
    project.write("evals/quick.py", """
        import asyncio
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        async def quick(t):
            await asyncio.sleep(0.01)
            t.check(1, equals(1))
    """)
    assert project.run().exit_code == 0
    assert _only_attempt(project)["state"] == "passed"


def test_a_blocking_sync_test_over_its_timeout_is_errored_timeout(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/blocking.py", """
        import time
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval(timeout_ms=200)
        def blocking(t):
            t.check(1, equals(1)).label("before the wait")
            time.sleep(1.0)
    """)
    project.run()
    attempt = _only_attempt(project)
    assert (attempt["state"], attempt["reason"]) == ("errored", "timeout")


def test_a_blocking_sync_create_over_its_timeout_is_errored_timeout(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("blocking_app.py", """
        import time
        from niceeval_cli import define_adapter

        def create(ctx):
            time.sleep(1.0)

        adapter = define_adapter(name="blocking", create=create)
    """)
    project.write("evals/observe.py", """
        from blocking_app import adapter

        @adapter.define_eval(timeout_ms=200)
        def observe(t):
            pass
    """)
    project.run()
    attempt = _only_attempt(project)
    assert (attempt["state"], attempt["reason"]) == ("errored", "timeout")
