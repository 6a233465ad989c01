"""An eval's history is found by its identity (module id, name; plus the case id), whatever id it
showed; attempts stored without an identity (before schema 5) by their eval id alone."""

from __future__ import annotations

from niceeval_cli.store import EvalRef


def test_history_follows_the_identity_when_the_shown_id_changes(project):
    run = project.begin_run()
    alone = project.seal(project.attempt(run, eval_id="grow", eval_module="grow", eval_name="first"))
    # Another eval that once showed the same id (module `grow.py` gone, `grow/` folder in its place).
    project.seal(project.attempt(run, eval_id="grow/first", eval_module="grow/first", eval_name="main"))

    latest = project.store.latest_attempts("exp", [EvalRef("grow/first", "grow", "first")])
    assert list(latest) == [("grow/first", 0)] and latest[("grow/first", 0)].id == alone.id
    assert latest[("grow/first", 0)].eval_id == "grow/first"  # keyed by the id asked for


def test_a_case_is_its_evals_identity_plus_its_case_id(project):
    run = project.begin_run()
    c1 = project.seal(project.attempt(run, eval_id="ds[c1]", case_id="c1", eval_module="ds", eval_name="answers"))
    project.seal(project.attempt(run, eval_id="ds[c2]", case_id="c2", eval_module="ds", eval_name="answers"))
    latest = project.store.latest_attempts("exp", [EvalRef("ds/answers[c1]", "ds", "answers", "c1"),
                                                   EvalRef("ds/answers[c3]", "ds", "answers", "c3")])
    assert {key: a.id for key, a in latest.items()} == {("ds/answers[c1]", 0): c1.id}


def test_attempts_without_identity_are_found_by_their_eval_id_only(project):
    run = project.begin_run()
    old = project.seal(project.attempt(run, eval_id="grow", ended_at="2025-01-01T00:00:00.000Z"))
    refs = [EvalRef("grow", "grow", "first"), EvalRef("grow/first", "grow", "first")]
    latest = project.store.latest_attempts("exp", refs)
    # Its eval id `grow` cannot say which eval it was: only the eval showing `grow` gets it.
    assert {key: a.id for key, a in latest.items()} == {("grow", 0): old.id}

    # A newer attempt with an identity wins over the old one, whichever way it is found.
    new = project.seal(project.attempt(run, eval_id="grow/first", eval_module="grow", eval_name="first"))
    latest = project.store.latest_attempts("exp", refs)
    assert {key: a.id for key, a in latest.items()} == {("grow", 0): new.id, ("grow/first", 0): new.id}


def test_a_lookup_by_eval_id_alone_finds_every_attempt_of_that_id(project):
    run = project.begin_run()
    a = project.seal(project.attempt(run, eval_id="evals/a", eval_module="evals", eval_name="a"))
    assert project.store.latest_attempts("exp", ["evals/a"])[("evals/a", 0)].id == a.id
