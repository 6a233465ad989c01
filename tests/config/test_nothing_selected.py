"""Issue 9.19: "nothing selected" says which prefix, tag or experiment entry matched nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from niceeval_cli.config import explain_nothing_selected, load_config

Write = Callable[[str], Path]

EVALS = {"support/refund": ("smoke",), "support/greeting": ("smoke", "tone"), "billing/invoice": ()}


def test_a_prefix_that_matches_no_eval_is_named_with_the_closest_id(write_config: Write) -> None:
    project = load_config(cwd=write_config(""))
    message = explain_nothing_selected(project, EVALS, eval_prefixes=["suport/refund"])
    assert message.startswith("nothing selected: ")
    assert 'the eval prefix "suport/refund" matches no eval id (did you mean "support/refund"?)' in message
    assert "discovered 3 eval(s)" in message and "`niceeval list`" in message


def test_a_tag_no_eval_carries_is_named_with_the_tags_in_use(write_config: Write) -> None:
    project = load_config(cwd=write_config(""))
    message = explain_nothing_selected(project, EVALS, tags=["slow"])
    assert 'the tag "slow" is carried by no eval (tags in use: smoke, tone)' in message


def test_an_experiment_evals_entry_that_matches_nothing_is_named(write_config: Write) -> None:
    project = load_config(cwd=write_config('[experiments.prod]\nevals = ["shipping/"]\ntags = ["fast"]\n'))
    message = explain_nothing_selected(project, EVALS, experiments=["prod"])
    assert '[experiments.prod] evals entry "shipping/" matches no eval id' in message
    assert '[experiments.prod] tags entry "fast" is carried by no eval' in message


def test_filters_that_each_match_but_not_together_say_so(write_config: Write) -> None:
    project = load_config(cwd=write_config(""))
    message = explain_nothing_selected(project, EVALS, eval_prefixes=["billing/"], tags=["smoke"])
    assert "each filter matches some eval, but no eval passes all of them together" in message


def test_without_a_niceeval_toml_it_suggests_niceeval_init(tmp_path: Path) -> None:
    project = load_config(cwd=tmp_path)
    message = explain_nothing_selected(project, {})
    assert f"no eval was discovered under {tmp_path / 'evals'}" in message
    assert "No niceeval.toml was found" in message and "run `niceeval init`" in message
