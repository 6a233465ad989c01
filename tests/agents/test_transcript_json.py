"""A tool call's input and output are stored as compact JSON written by json's C encoder made once
(authoring/_transcript.py): byte for byte what `json.JSONEncoder` writes, and the same refusals."""

from __future__ import annotations

import json
import math

import pytest

from niceeval_cli.authoring._transcript import _ENCODE, stored_json

_REFERENCE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


@pytest.mark.parametrize("value", [
    {"q": "marker-1 hello", "k": 3}, {"hits": [1, 2]}, "plain", "é ☃ \u2028 \"quoted\"\n", 1.5, 1e300, -0.0, 10**30,
    [1, "é", None, True, False], {"a": {"b": [1.0, {"c": []}]}}, {1: 2, "x": None}, [], {},
])
def test_plain_json_is_written_as_the_encoder_class_writes_it(value):
    assert _ENCODE(value) == _REFERENCE(value)
    assert json.loads(_ENCODE(value)) == json.loads(_REFERENCE(value))


@pytest.mark.parametrize("value", [math.nan, math.inf, {"a": object()}, [{1, 2}]])
def test_what_is_not_plain_json_is_refused_as_the_encoder_class_refuses_it(value):
    with pytest.raises((TypeError, ValueError)) as ours:
        _ENCODE(value)
    with pytest.raises((TypeError, ValueError)) as reference:
        _REFERENCE(value)
    assert ours.type is reference.type


def test_a_cycle_is_refused_and_stored_json_still_stores_something():
    cycle: dict = {}
    cycle["self"] = cycle
    with pytest.raises((RecursionError, ValueError)):
        _ENCODE(cycle)
    stored = stored_json(cycle)
    assert stored is not None and json.loads(stored) is not None
