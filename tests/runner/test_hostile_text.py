"""Issue 9.1 / 9.2: hostile text and out-of-range numbers never abort a run.

A lone surrogate cannot be stored as UTF-8 and 10**30 does not fit SQLite's int64: the text is
stored with U+FFFD in place of the offending code points, the usage is treated as unreported, the
fact is said in the attempt's notes, and every other attempt runs and seals."""

from __future__ import annotations

import json

from niceeval_cli._records import AttemptRecord
from niceeval_cli.runner import ExecutorContext, SealedAttempt, SlotSpec, register_executor
from niceeval_cli.runner._inprocess import InProcessExecutor

SURROGATE_EVALS = r'''
from niceeval_cli import define_adapter, define_eval
from niceeval_cli.expect import equals

adapter = define_adapter(name="hostile", create=lambda ctx: {"message": "lone \ud800 reply"})


@define_eval()
def a_passes(t):
    t.check(1, equals(1))


@define_eval()
def b_label_and_value(t):
    t.check("lone \udfff value", equals("lone \udfff value")).label("label \ud800")


@define_eval(adapter=adapter)
def c_adapter_reply(t):
    t.check(t.facts["message"], equals("something else"))


@define_eval()
def d_raises(t):
    raise ValueError("bad \ud800 input")


@define_eval()
def e_passes(t):
    t.check(2, equals(2))
'''


def test_a_lone_surrogate_anywhere_never_aborts_the_run(project):
    project.write("niceeval.toml", "[project]\nmax_concurrency = 1\n")
    project.write("evals/hostile.py", SURROGATE_EVALS)
    result = project.run()
    assert result.exit_code == 1, result.stderr  # c fails definitely; nothing aborted (not 4)
    attempts = {a["eval_id"]: a for a in project.attempts()}
    assert {e: a["state"] for e, a in attempts.items()} == {
        "hostile/a_passes": "passed",
        "hostile/b_label_and_value": "passed",
        "hostile/c_adapter_reply": "failed",
        "hostile/d_raises": "errored",
        "hostile/e_passes": "passed",
    }
    assert "bad \ufffd input" in attempts["hostile/d_raises"]["error"]
    assert project.query("runs")[0]["status"] == "finished"
    labels = {r["label"] for r in project.assertions()}
    assert "label \ufffd" in labels
    evidence = " ".join(json.dumps(r["evidence"], ensure_ascii=False) for r in project.assertions())
    assert "\ud800" not in evidence and "\udfff" not in evidence


def test_replaced_code_points_are_said_in_the_attempts_notes(run_library, project):
    project.write("niceeval.toml", "[project]\nmax_concurrency = 1\n")
    project.write("evals/hostile.py", SURROGATE_EVALS)
    outcome, seen = run_library()
    assert outcome.exit_code == 1
    assert outcome.replaced_code_points >= 3
    notes = json.loads(seen.attempt("hostile/b_label_and_value").notes or "[]")
    assert any("U+FFFD" in note for note in notes), notes
    assert seen.attempt("hostile/a_passes").notes is None


USAGE_EVALS = '''
from niceeval_cli import define_adapter, define_eval
from niceeval_cli.expect import equals


def create(ctx):
    ctx.record_usage(input_tokens=10**30, output_tokens=7)
    return {"ok": True}


adapter = define_adapter(name="greedy", create=create)


@define_eval(adapter=adapter)
def a_huge_usage(t):
    t.check(t.usage.input_tokens, equals(1)).label("input tokens")
    t.check(t.usage.output_tokens, equals(7)).label("output tokens")


@define_eval()
def b_passes(t):
    t.check(1, equals(1))
'''


def test_usage_outside_int64_is_unreported_and_the_run_goes_on(project, run_library):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/usage.py", USAGE_EVALS)
    outcome, seen = run_library()
    assert outcome.status == "finished"
    assert outcome.usage_unreported == 1  # the summary can warn
    huge = seen.attempt("usage/a_huge_usage")
    assert huge.state == "errored" and huge.reason == "evidence-unavailable"
    assert huge.input_tokens is None and huge.output_tokens == 7
    assert any("input_tokens" in note and "unreported" in note for note in json.loads(huge.notes or "[]"))
    results = {r.label: r for r in seen.sealed_results[seen.sealed_attempts.index(huge)]}
    assert results["input tokens"].state == "unavailable"
    assert results["input tokens"].reason == "usage-unreported"
    assert results["output tokens"].state == "matched"
    stored = {a["eval_id"]: a for a in project.attempts()}
    assert stored["usage/a_huge_usage"]["input_tokens"] is None
    assert stored["usage/b_passes"]["state"] == "passed"


class _HostileExecutor(InProcessExecutor):
    """Returns records that cannot be stored for one eval, and raises for another."""

    async def submit(self, spec: SlotSpec) -> SealedAttempt:
        produced = await super().submit(spec)
        if spec.eval_id.endswith("b_unstorable"):
            bad = AttemptRecord(**{**produced.attempt.__dict__, "duration_ms": object()})  # type: ignore[arg-type]
            return SealedAttempt(bad, produced.results)
        if spec.eval_id.endswith("c_executor_raises"):
            raise RuntimeError("the worker died")
        return produced


def _hostile(context: ExecutorContext) -> _HostileExecutor:
    return _HostileExecutor(context)


register_executor("hostile-test", _hostile)


def test_whatever_an_executor_or_sealing_raises_costs_that_attempt_alone(project, run_library):
    project.write("niceeval.toml", "[project]\nmax_concurrency = 1\n")
    project.write("evals/seal.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        def a_passes(t):
            t.check(1, equals(1))

        @define_eval()
        def b_unstorable(t):
            t.check(1, equals(1))

        @define_eval()
        def c_executor_raises(t):
            t.check(1, equals(1))

        @define_eval()
        def d_passes(t):
            t.check(1, equals(1))
    """)
    outcome, _ = run_library(executor="hostile-test")
    assert outcome.status == "finished" and outcome.exit_code == 5
    attempts = {a["eval_id"]: a for a in project.attempts()}
    assert attempts["seal/a_passes"]["state"] == attempts["seal/d_passes"]["state"] == "passed"
    for eval_id, says in (("seal/b_unstorable", "could not be sealed"), ("seal/c_executor_raises", "the worker died")):
        assert attempts[eval_id]["state"] == "errored"
        assert attempts[eval_id]["reason"] == "exception"
        assert says in attempts[eval_id]["error"]
    assert outcome.counts == {"passed": 2, "errored": 2}  # exit 5: the two errored evals are undecided


def test_the_summary_warns_when_usage_was_out_of_range(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/usage.py", USAGE_EVALS)
    result = project.run()
    assert "warning: 1 token count outside the range a store can hold" in result.stdout, result.stdout
    assert project.query("runs")[0]["status"] == "finished"


def test_a_huge_expected_value_is_stored_within_bounds_and_a_huge_int_never_breaks_sealing(project):
    """The expected value is part of the stored match config: `equals("x" * 10_000_000)` stored
    10 MB per attempt, and an int of 4400 digits (past Python's int-to-text limit) errored its
    attempt at sealing as "the executor failed: ValueError"."""
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/big.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        def a_long_text(t):
            t.check("y", equals("x" * 10_000_000))

        @define_eval()
        def b_huge_int(t):
            t.check(7, equals(10**4400))
    """)
    assert project.run().exit_code == 1  # a definite failure (a), whatever else errored
    attempts = {a["eval_id"]: a for a in project.attempts()}
    assert attempts["big/a_long_text"]["state"] == "failed"
    assert "executor" not in (attempts["big/b_huge_int"]["error"] or "")
    sizes = project.sql("SELECT length(match_config) AS size FROM assertion_results")
    assert sizes and max(row["size"] for row in sizes) <= 64 * 1024, sizes
