"""Eval discovery and ids (authoring.md, "Eval files and discovery")."""

from __future__ import annotations

import os
import subprocess
import sys

PASSING = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals

@define_eval()
def {name}(t):
    t.check(1, equals(1))
"""


def eval_ids(project) -> list[str]:
    return sorted(a["eval_id"] for a in project.attempts())


def test_eval_id_is_the_module_path_relative_to_its_root(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/support/review.py", PASSING.format(name="review_case"))
    project.write("evals/smoke.py", PASSING.format(name="smoke_case"))
    assert project.run().exit_code == 0
    assert eval_ids(project) == ["smoke", "support/review"]


def test_a_module_with_several_evals_gives_each_module_id_slash_name(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/support/refunds.py", """
        from niceeval_cli import define_eval, define_score_eval

        @define_eval()
        def window(t):
            pass

        @define_score_eval(name="tone-score")
        def tone(t):
            pass

        def _plain(t):
            pass

        explicit = define_eval(test=_plain, name="explicit")
    """)
    assert project.run().exit_code == 0
    assert eval_ids(project) == ["support/refunds/explicit", "support/refunds/tone-score", "support/refunds/window"]


def test_eval_roots_come_from_niceeval_toml(project):
    project.write("niceeval.toml", '[project]\nevals = ["checks", "more"]\n')
    project.write("checks/a.py", PASSING.format(name="a"))
    project.write("more/deep/b.py", PASSING.format(name="b"))
    project.write("evals/ignored.py", PASSING.format(name="ignored"))
    assert project.run().exit_code == 0
    assert eval_ids(project) == ["a", "deep/b"]


def test_evals_can_import_project_code(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("mylib/__init__.py", "")
    project.write("mylib/pricing.py", "def total(items):\n    return sum(items)\n")
    project.write("evals/pricing.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals
        from mylib.pricing import total

        @define_eval()
        def adds_up(t):
            t.check(total([1, 2, 3]), equals(6)).label("total")
    """)
    assert project.run().exit_code == 0
    assert [r["state"] for r in project.assertions()] == ["matched"]


def test_an_eval_imported_into_another_module_is_not_a_second_eval(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/base.py", PASSING.format(name="base_case"))
    project.write("evals/reexport.py", """
        from evals.base import base_case
        from niceeval_cli import define_eval

        @define_eval()
        def own(t):
            pass
    """)
    assert project.run().exit_code == 0
    assert eval_ids(project) == ["base", "reexport"]


def test_unicode_module_paths_and_names_become_ids(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/支持/评审.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval(name="退款窗口")
        def 退款(t):
            t.check(1, equals(1)).label("说明了三十天")

        @define_eval()
        def 语气(t):
            t.check(1, equals(1))
    """)
    assert project.run().exit_code == 0
    assert eval_ids(project) == ["支持/评审/语气", "支持/评审/退款窗口"]


def test_eval_id_clash_is_a_configuration_error_naming_both_files(project):
    project.write("niceeval.toml", '[project]\nevals = ["evals", "more"]\n')
    project.write("evals/support.py", PASSING.format(name="one"))
    project.write("more/support.py", PASSING.format(name="two"))
    result = project.run()
    assert result.exit_code == 2
    assert "support" in result.stderr
    assert "evals/support.py" in result.stderr
    assert "more/support.py" in result.stderr
    assert "Traceback" not in result.stderr


def test_two_evals_with_the_same_name_in_one_module_clash(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/dup.py", """
        from niceeval_cli import define_eval

        @define_eval(name="same")
        def first(t):
            pass

        @define_eval(name="same")
        def second(t):
            pass
    """)
    result = project.run()
    assert result.exit_code == 2
    assert "same" in result.stderr
    assert "dup.py" in result.stderr


def test_import_error_exits_2_naming_the_file_line_and_exception(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/fine.py", PASSING.format(name="fine"))
    project.write("evals/broken.py", """
        from niceeval_cli import define_eval

        import not_a_real_module_xyz
    """)
    result = project.run()
    assert result.exit_code == 2
    assert "broken.py" in result.stderr
    assert ":3" in result.stderr
    assert "not_a_real_module_xyz" in result.stderr
    assert "ModuleNotFoundError" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_exception_raised_at_import_names_the_file_and_line(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/boom.py", """
        from niceeval_cli import define_eval

        CASES = {"a": 1}
        SELECTED = CASES["b"]
    """)
    result = project.run()
    assert result.exit_code == 2
    assert "boom.py:4" in result.stderr
    assert "KeyError" in result.stderr


def test_syntax_error_exits_2_naming_the_file_and_line(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/typo.py", """
        from niceeval_cli import define_eval

        @define_eval()
        def typo(t)
            pass
    """)
    result = project.run()
    assert result.exit_code == 2
    assert "typo.py:4" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_a_broken_module_runs_nothing_no_partial_silent_skip(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/fine.py", PASSING.format(name="fine"))
    assert project.run().exit_code == 0
    [before] = project.query("runs")
    project.write("evals/zz_broken.py", "raise RuntimeError('half-written eval')\n")
    result = project.run("--rerun-all")
    assert result.exit_code == 2
    assert "zz_broken.py:1" in result.stderr
    assert "half-written eval" in result.stderr
    assert [r["id"] for r in project.query("runs")] == [before["id"]]


def test_a_module_and_a_folder_of_the_same_name_are_both_discovered(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/support.py", PASSING.format(name="shared"))
    project.write("evals/support/review.py", PASSING.format(name="review"))
    result = project.run()
    assert result.exit_code == 0, result.stderr
    assert eval_ids(project) == ["support", "support/review"]


def test_a_package_folder_does_not_silently_hide_a_module_of_the_same_name(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/support.py", PASSING.format(name="shared"))
    project.write("evals/support/__init__.py", "")
    project.write("evals/support/review.py", PASSING.format(name="review"))
    result = project.run()
    assert result.exit_code == 0, result.stderr
    assert eval_ids(project) == ["support", "support/review"]


def test_an_installed_package_named_like_the_eval_root_does_not_shadow_it(project, tmp_path):
    site = tmp_path / "site"
    (site / "evals").mkdir(parents=True)
    (site / "evals" / "__init__.py").write_text("")
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/smoke.py", PASSING.format(name="smoke"))
    result = subprocess.run(
        [sys.executable, "-m", "niceeval_cli.cli", "run"],
        cwd=project.root, capture_output=True, text=True, timeout=60,
        env={**os.environ, "PYTHONPATH": str(site), "NO_COLOR": "1"},
    )
    assert result.returncode == 0, result.stderr


def test_folders_and_files_that_are_not_python_identifiers_still_give_ids(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/my-suite/smoke-test.py", PASSING.format(name="smoke"))
    project.write("evals/my-suite/2nd.py", PASSING.format(name="second"))
    assert project.run().exit_code == 0
    assert eval_ids(project) == ["my-suite/2nd", "my-suite/smoke-test"]


def test_the_evals_of_one_module_share_one_record_of_it(project):
    """A run keeps every discovered eval to its end: a module's file and source digest are held
    once for all its evals, and an eval's id is made from them when read."""
    from niceeval_cli.discovery import discover

    project.write("evals/many.py", """
        from niceeval_cli import define_eval

        def _test(t):
            pass

        first, second, third = (define_eval(test=_test, name=n) for n in ("a", "b", "c"))
    """)
    project.write("evals/one.py", PASSING.format(name="only"))
    found = discover([project.root / "evals"], project.root)
    assert [d.id for d in found] == ["many/a", "many/b", "many/c", "one"]
    many = [d for d in found if d.id.startswith("many/")]
    assert len({id(d.module) for d in many}) == 1
    assert {(d.file.name, d.source_sha256) for d in many} == {("many.py", many[0].module.source_sha256)}
    assert found[3].module is not many[0].module and found[3].eval_id == "one"


def test_ids_of_modules_that_interleave_come_in_id_order(project):
    """`a.py`'s evals `a/x`, `a/z` and the module `a/y.py` (`a/y`): a module's evals are not a run."""
    from niceeval_cli.discovery import discover

    project.write("evals/a.py", """
        from niceeval_cli import define_eval

        def _test(t):
            pass

        z, x = define_eval(test=_test, name="z"), define_eval(test=_test, name="x")
    """)
    project.write("evals/a/y.py", PASSING.format(name="only"))
    project.write("evals/b.py", PASSING.format(name="b"))
    assert [d.id for d in discover([project.root / "evals"], project.root)] == ["a/x", "a/y", "a/z", "b"]


def test_an_id_given_by_a_module_and_by_an_eval_of_another_is_named_with_both_files(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/a.py", """
        from niceeval_cli import define_eval

        def _test(t):
            pass

        b, c = define_eval(test=_test, name="b"), define_eval(test=_test, name="c")
    """)
    project.write("evals/a/b.py", PASSING.format(name="only"))
    result = project.run()
    assert result.exit_code == 2
    assert "'a/b' is defined twice: in evals/a/b.py and in evals/a.py" in result.stderr  # in path order


def test_one_eval_bound_to_two_names_is_one_eval(project):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/aliases.py", """
        from niceeval_cli import define_eval

        @define_eval()
        def first(t):
            pass

        alias = first

        @define_eval()
        def second(t):
            pass
    """)
    assert project.run().exit_code == 0
    assert eval_ids(project) == ["aliases/first", "aliases/second"]


def test_an_eval_pasted_under_the_same_function_name_is_refused_not_silently_lost(project):
    """The second `def a` rebinds the module's name `a`: discovery would see only the second
    eval. One error at its line, exit 2, nothing run; evals defined in a loop stay allowed."""
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/ok.py", PASSING.format(name="ok"))
    project.write("evals/pasted.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        def refunds(t):
            t.check(1, equals(2))

        @define_eval(tags=["smoke"])
        def refunds(t):
            t.check(1, equals(1))
    """)
    run = project.run()
    assert run.exit_code == 2, (run.stdout, run.stderr)
    assert run.stderr.strip() == (
        "niceeval: eval module evals/pasted.py failed to load: evals/pasted.py:8: 'refunds' is defined "
        "twice in this module (lines 4 and 8): the second `def refunds` replaces the first, whose eval "
        "would never run; rename one"
    )
    assert not project.store.exists()
    project.write("evals/pasted.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        for limit in (1, 2):
            @define_eval(name=f"limit_{limit}")
            def check(t, limit=limit):
                t.check(limit, equals(limit))
            globals()[f"limit_{limit}"] = check
    """)
    assert project.run().exit_code == 0
    assert eval_ids(project) == ["ok", "pasted/limit_1", "pasted/limit_2"]
