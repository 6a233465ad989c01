"""Which attempt a lost Ray worker died of (`_ray_loss.blame`): the rule, without a cluster."""

from __future__ import annotations

from niceeval_cli.runner._ray_loss import Blame, blame


def test_the_attempt_holding_the_loop_is_the_one_that_died():
    assert blame("a", {"a", "b"}, "a") is Blame.DIED


def test_an_attempt_in_flight_while_another_held_the_loop_is_innocent():
    assert blame("b", {"a", "b"}, "a") is Blame.INNOCENT


def test_the_only_attempt_in_flight_is_the_one_that_died():
    assert blame("a", {"a"}, None) is Blame.DIED


def test_several_in_flight_and_no_holder_cannot_be_told():
    assert blame("a", {"a", "b"}, None) is Blame.UNKNOWN
