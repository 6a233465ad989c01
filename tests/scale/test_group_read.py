"""Reading a shard group once: `Store.read_run` hands back what the group's verdict was decided
from (nothing to decide from when the verdict `merge` stored for these members is used), and
`view` decides it from the header's own outcome groups (read on a second connection) — the page
is the one the plain path builds, filters or not, complete group or not, stored verdict or not."""

from __future__ import annotations

import dataclasses

import pytest

from niceeval_cli.app.view import RunPage, ViewFilters, build_page, load_view
from niceeval_cli.store import GroupOutcome, Store, groups


@pytest.fixture(params=["complete", "missing a shard"])
def merged(suite, request, built):
    return built.merged((1, 2, 3) if request.param == "complete" else (1, 3), suite.root)


@pytest.fixture(params=["stored", "decided on read"])
def verdict(merged, request, monkeypatch):
    """How the group's verdict is had: the one `merge` stored, or (a verdict stored by another
    NiceEval version is not used) decided from the sealed rows on every read."""
    if request.param == "decided on read":
        monkeypatch.setattr(groups, "__version__", "0.0.0+another")
    return request.param


def test_read_run_returns_what_the_group_was_decided_from(merged, verdict):
    with Store.open(merged, readonly=True) as store:
        read = store.read_run("ci-7")
        assert read.run == store.resolve_run("ci-7")
        assert read.groups == (None if verdict == "stored" else store.outcome_rows("ci-7"))
        assert read.not_run == store.not_run("ci-7")
        assert read.run.not_run == len(read.not_run)
        plain = store.read_run(read.run.member_run_ids[0])
        assert (plain.groups, plain.not_run) == (None, None)


def test_a_group_outcome_read_elsewhere_decides_the_same_and_a_stale_one_is_not_used(merged, verdict):
    with Store.open(merged, readonly=True) as store:
        expected = store.read_run("ci-7")._replace(groups=store.outcome_rows("ci-7"))
        outcome = store.group_outcome("ci-7")
        assert outcome is not None
        assert (outcome.decision is None) == (verdict == "stored")  # a stored verdict is not decided again
        assert store.read_run("ci-7", outcome=lambda: outcome) == expected
        stale = GroupOutcome(outcome.members[1:], outcome.groups[1:], outcome.decision)
        assert store.read_run("ci-7", outcome=lambda: stale) == expected  # other members: read again
        assert store.group_outcome("no-such-group") is None


@pytest.mark.parametrize("filters", [
    ViewFilters(), ViewFilters(experiments=["default"]), ViewFilters(eval_prefixes=["many/s"]),
    ViewFilters(eval_prefixes=["many/e0", "many/boom"]), ViewFilters(states=["failed"]),
])
def test_view_of_a_group_is_the_page_the_plain_path_builds(merged, verdict, filters):
    page = load_view(merged, "ci-7", filters)
    with Store.open(merged, readonly=True) as store:
        plain = build_page(store, store.resolve_run("ci-7"), filters)
    assert isinstance(page, RunPage)
    assert dataclasses.asdict(page) == dataclasses.asdict(plain)
    assert page.run.is_group and page.groups
    assert len(page.not_run_slots) == (page.run.not_run or 0)
