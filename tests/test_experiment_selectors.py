"""Experiment selectors (`niceeval_cli/_selectors.py`): one rule for `run -e` and every reader's
`--experiment` — an exact id selects that experiment alone, a selector ending in `/` selects the
group of ids starting with it — and its SQL form agreeing with it on every pair of a small
alphabet and on arbitrary text."""

from __future__ import annotations

import itertools
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from niceeval_cli._selectors import (
    experiment_sql,
    is_experiment_group,
    selects_any_experiment,
    selects_experiment,
)


@pytest.mark.parametrize(
    ("selector", "experiment_id", "selected"),
    [
        ("models/a", "models/a", True),  # an exact id
        ("models/", "models/a", True),  # a group
        ("models/", "models/b/deep", True),
        ("models/", "modelsz", False),  # a group ends at its `/`
        ("models/", "models", False),  # the group's name alone is not in it
        ("models", "models/a", False),  # an id never selects a longer id
        ("models", "models", True),
        ("support", "support/offline", False),  # so `support` stays addressable beside its variants
        ("mod", "models/a", False),
        ("models/a", "models/ab", False),
        ("gpt-4", "gpt-4o", False),
        ("Models/", "models/a", False),  # case-sensitive, as ids are
        ("a_b", "axb", False),  # `_` and `%` are ordinary characters, never SQL wildcards
        ("a%/", "a%/x", True),
        ("a%/", "abc/x", False),
        ("*", "anything", False),  # no globs for experiments
        ("", "", True),
        ("", "x", False),
    ],
)
def test_the_rule(selector: str, experiment_id: str, selected: bool) -> None:
    assert selects_experiment(selector, experiment_id) is selected
    assert _sql_selects(selector, [experiment_id]) == ([experiment_id] if selected else [])


def test_a_group_is_a_selector_ending_in_a_slash() -> None:
    assert is_experiment_group("models/")
    assert not is_experiment_group("models")
    assert not is_experiment_group("models/a")


def test_several_selectors_add_up() -> None:
    assert selects_any_experiment(["local", "models/"], "models/x")
    assert selects_any_experiment(["local", "models/"], "local")
    assert not selects_any_experiment(["local", "models/"], "remote")
    assert not selects_any_experiment([], "local")


def _sql_selects(selector: str, ids: list[str]) -> list[str]:
    """The ids `experiment_sql` keeps, asked of a real SQLite table."""
    con = sqlite3.connect(":memory:")
    try:
        con.execute("CREATE TABLE e (id TEXT NOT NULL)")
        con.executemany("INSERT INTO e VALUES (?)", [(i,) for i in ids])
        rows = con.execute(f"SELECT id FROM e WHERE {experiment_sql(selector, 'e.id', ':p0')} ORDER BY rowid",
                           {"p0": selector}).fetchall()
        return [row[0] for row in rows]
    finally:
        con.close()


def test_sql_agrees_with_the_rule_on_every_pair_of_a_small_alphabet() -> None:
    """Every selector and id of up to 3 characters over letters, `/`, and SQL's wildcards."""
    alphabet = "ab/_%"
    texts = ["".join(t) for n in range(4) for t in itertools.product(alphabet, repeat=n)]
    con = sqlite3.connect(":memory:")
    try:
        con.execute("CREATE TABLE e (id TEXT NOT NULL)")
        con.executemany("INSERT INTO e VALUES (?)", [(t,) for t in texts])
        for selector in texts:
            rows = con.execute(f"SELECT id FROM e WHERE {experiment_sql(selector, 'e.id', ':p0')}",
                               {"p0": selector}).fetchall()
            assert sorted(r[0] for r in rows) == sorted(t for t in texts if selects_experiment(selector, t)), selector
    finally:
        con.close()


# Any text an id can be stored as: no NUL (SQLite's length() stops there), no lone surrogates.
_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12)


@settings(max_examples=300, deadline=None)
@given(selector=_TEXT, experiment_id=_TEXT, group=st.booleans())
def test_sql_agrees_with_the_rule_on_any_text(selector: str, experiment_id: str, group: bool) -> None:
    if group:
        selector += "/"
    for candidate in (experiment_id, selector + experiment_id, selector):
        assert _sql_selects(selector, [candidate]) == ([candidate] if selects_experiment(selector, candidate) else [])
