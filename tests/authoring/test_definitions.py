"""`define_eval` / `define_score_eval` (authoring.md, "Defining evals"): decorator or `test=`,
sync or async test functions, options."""

from __future__ import annotations

from niceeval_cli import EvalDefinition, define_eval, define_score_eval


def _test(t):  # a plain function used with test=
    return None


def test_decorator_and_test_keyword_forms_build_the_same_kind_of_definition():
    @define_eval(description="d", tags=["smoke"])
    def decorated(t):
        return None

    explicit = define_eval(test=_test, description="d", tags=["smoke"])
    scored = define_score_eval(test=_test)

    @define_score_eval()
    def scored_decorated(t):
        return None

    assert isinstance(decorated, EvalDefinition)
    assert isinstance(explicit, EvalDefinition)
    assert str(decorated.kind) == str(explicit.kind) == "pass"
    assert str(scored.kind) == str(scored_decorated.kind) == "score"
    assert decorated.name == "decorated"
    assert explicit.name == "_test"
    assert decorated.tags == explicit.tags


def test_name_option_overrides_the_function_name():
    definition = define_eval(test=_test, name="退款窗口")
    assert definition.name == "退款窗口"


def test_sync_and_async_tests_both_run(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/forms.py", """
        from niceeval_cli import define_eval, define_score_eval
        from niceeval_cli.expect import equals

        @define_eval(description="decorated, async")
        async def decorated_async(t):
            t.check(1, equals(1)).label("async")

        @define_eval()
        def decorated_sync(t):
            t.check(1, equals(1)).label("sync")

        def plain(t):
            t.check(1, equals(1)).score(2).label("explicit")

        explicit = define_score_eval(test=plain, name="explicit_score")

        async def plain_async(t):
            t.check(1, equals(1)).label("explicit async")

        explicit_async = define_eval(test=plain_async)
    """)
    result = project.run()
    assert result.exit_code == 0, result.stdout + result.stderr
    attempts = {a["eval_id"]: (a["kind"], a["state"]) for a in project.attempts()}
    assert attempts == {
        "forms/decorated_async": ("pass", "passed"),
        "forms/decorated_sync": ("pass", "passed"),
        "forms/explicit_score": ("score", "scored"),
        "forms/plain_async": ("pass", "passed"),
    }
    assert {r["label"] for r in project.assertions()} == {"async", "sync", "explicit", "explicit async"}


def test_attempts_option_sets_the_number_of_attempts(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/thrice.py", """
        from niceeval_cli import define_eval

        @define_eval(attempts=3)
        def thrice(t):
            pass
    """)
    assert project.run().exit_code == 0
    assert sorted(a["ordinal"] for a in project.attempts()) == [0, 1, 2]


def test_a_pass_eval_with_no_assertions_passes(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/empty.py", """
        from niceeval_cli import define_eval

        @define_eval()
        def empty(t):
            pass
    """)
    assert project.run().exit_code == 0
    assert [a["state"] for a in project.attempts()] == ["passed"]


def test_an_exception_in_test_code_is_errored_exception_with_type_and_message(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/raises.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        def raises(t):
            t.check(1, equals(1)).label("kept")
            raise KeyError("missing-field")
    """)
    assert project.run().exit_code == 5
    [attempt] = project.attempts()
    assert (attempt["state"], attempt["reason"]) == ("errored", "exception")
    assert "KeyError" in attempt["error"] and "missing-field" in attempt["error"]
    assert [r["label"] for r in project.assertions()] == ["kept"]
