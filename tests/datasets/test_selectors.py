"""Eval selectors (datasets.md, "Ids, selection, reuse"): a prefix, or a `*` / `?` glob over the
whole eval id in which brackets are literal."""

from __future__ import annotations

import pytest

from niceeval_cli._selectors import is_glob, matches, matches_any


@pytest.mark.parametrize(
    ("selector", "eval_id", "expected"),
    [
        ("refunds", "refunds[r-017]", True),
        ("refunds", "refunds-extra", True),  # a prefix is a prefix
        ("support/", "support/review", True),
        ("refunds[r-01*]", "refunds[r-017]", True),
        ("refunds[r-01*]", "refunds[r-020]", False),
        ("refunds[r-01*]", "refunds[r-0]", False),
        ("refunds[r-0?7]", "refunds[r-017]", True),
        ("*[r-017]", "a/b/refunds[r-017]", True),
        ("refunds*", "refunds", True),
        ("refunds[r-1]", "refunds[r-1]", True),  # brackets are not a character class
        ("refunds[r-1]", "refundsr", False),
        ("refunds[*", "refunds[a]b", True),
        ("*.py", "x.py", True),
        ("*.py", "xapy", False),  # a dot is a dot
        ("*", "", True),
        ("a*", "b\na", False),
        ("*a", "b\na", True),  # `*` spans any text, newlines included
    ],
)
def test_selector_matches(selector, eval_id, expected):
    assert matches(selector, eval_id) is expected


def test_a_selector_is_a_glob_only_with_star_or_question_mark():
    assert is_glob("r*") and is_glob("r?")
    assert not is_glob("refunds[r-1]")


def test_matches_any_is_true_when_one_selector_matches():
    assert matches_any(["x", "refunds[r-0*]"], "refunds[r-01]")
    assert not matches_any([], "refunds")
