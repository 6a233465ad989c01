"""Authoring errors (authoring.md): raised at the offending call, naming the file and line; the
Attempt is sealed `errored` with reason `authoring-error`, results registered earlier are kept."""

from __future__ import annotations

import pytest


def assert_authoring_error(sealed, line: int) -> None:
    assert sealed.attempt["state"] == "errored"
    assert sealed.attempt["reason"] == "authoring-error"
    assert f"e.py:{line}" in sealed.attempt["error"]


@pytest.mark.parametrize(
    "call",
    [
        't.check("only the subject")',
        't.check("a", equals("a"), "extra")',
        "t.check()",
        't.check(subject="a", match=equals("a"))',
    ],
)
def test_check_takes_exactly_two_arguments(run_one, line_of, call):
    src = f"""
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        def arity(t):
            t.check("a", equals("a")).label("first")
            {call}  # offending
            t.check("a", equals("a")).label("never registered")
    """
    sealed = run_one(src)
    assert_authoring_error(sealed, line_of(src, "# offending"))
    assert sealed.labels == ["first"]
    assert sealed.by_label("first")["state"] == "matched"


def test_check_with_something_that_is_not_a_match_is_an_authoring_error(run_one, line_of):
    src = """
        from niceeval_cli import define_eval

        @define_eval()
        def not_a_match(t):
            t.check("a", "a")  # offending
    """
    assert_authoring_error(run_one(src), line_of(src, "# offending"))


@pytest.mark.parametrize(
    "call",
    [
        't.check({"input": "q", "output": "a"}, closed_qa("Is it clear?"))',
        't.check("answer", closed_qa("Is it clear?").at_least(0.8)).gate()',
        't.closed_qa("answer", "Is it clear?")',
        't.factuality("answer", "the reference")',
        't.summarizes("summary", "the source")',
    ],
)
def test_judge_assertion_without_judge_declared_is_an_authoring_error_at_the_call(run_one, line_of, call):
    src = f"""
        from niceeval_cli import define_eval
        from niceeval_cli.expect import closed_qa, equals

        @define_eval()
        def undeclared(t):
            t.check(1, equals(1)).label("before")
            {call}  # offending
            t.check(1, equals(1)).label("after")
    """
    sealed = run_one(src)
    assert_authoring_error(sealed, line_of(src, "# offending"))
    assert "judge" in sealed.attempt["error"]
    assert sealed.labels == ["before"]


def test_authoring_error_in_a_score_eval_keeps_earned_points_as_partial_score(run_one, line_of):
    src = """
        from niceeval_cli import define_score_eval
        from niceeval_cli.expect import equals

        @define_score_eval()
        def partial(t):
            t.check(1, equals(1)).score(4).label("earned")
            t.check(1, equals(1)).label("x").label("y")  # offending
    """
    sealed = run_one(src)
    assert_authoring_error(sealed, line_of(src, "# offending"))
    assert sealed.attempt["score"] is None
    assert sealed.attempt["partial_score"] == 4
    assert sealed.by_label("earned")["contribution"] == 4


def test_authoring_error_raised_in_a_helper_names_the_eval_call_site_file(run_one):
    sealed = run_one(
        """
        from niceeval_cli import define_eval
        from helpers.checks import check_twice_labelled

        @define_eval()
        def via_helper(t):
            check_twice_labelled(t)
        """,
        files={
            "helpers/__init__.py": "",
            "helpers/checks.py": """
                from niceeval_cli.expect import equals

                def check_twice_labelled(t):
                    t.check(1, equals(1)).label("a").label("b")
            """,
        },
    )
    assert sealed.attempt["reason"] == "authoring-error"
    assert "checks.py:4" in sealed.attempt["error"] or "e.py:6" in sealed.attempt["error"]


def test_unknown_define_eval_option_fails_the_module_import_naming_file_and_line(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/e.py", """
        from niceeval_cli import define_eval

        @define_eval(descripton="misspelt option")
        def misspelt(t):
            pass
    """)
    result = project.run()
    assert result.exit_code == 2
    assert "e.py" in result.stderr
    assert ":3" in result.stderr
    assert "descripton" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
