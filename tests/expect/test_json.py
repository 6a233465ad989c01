"""to_jsonable / canonical_json: everything stored is JSON, and the same value gives one text."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from enum import Enum

from pydantic import BaseModel

from niceeval_cli._states import AssertionState
from niceeval_cli.expect import Fact, Interval, Material, NumericMaterial
from niceeval_cli.expect._json import canonical_json, to_jsonable


@dataclass(frozen=True)
class Speech:
    actor_id: str
    hp: Fact[float]


class Color(Enum):
    RED = "red"


class Item(BaseModel):
    name: str
    tags: set[str]


def test_plain_json_values_are_unchanged() -> None:
    value = {"a": [1, 2.5, "x", None, True], "b": {"c": False}}
    assert to_jsonable(value) == value


def test_dataclasses_and_nested_facts() -> None:
    assert to_jsonable(Speech("agent", Fact.unavailable("hp-unobserved"))) == {
        "actor_id": "agent",
        "hp": {"state": "unavailable", "reason": "hp-unobserved"},
    }
    assert to_jsonable(Fact.available(Speech("a", Fact.available(3)))) == {
        "state": "available",
        "value": {"actor_id": "a", "hp": {"state": "available", "value": 3}},
    }


def test_numeric_material_material_and_interval() -> None:
    assert to_jsonable(NumericMaterial.available(2.5)) == {"state": "available", "value": 2.5}
    assert to_jsonable(NumericMaterial.unavailable("usage-unreported")) == {
        "state": "unavailable",
        "reason": "usage-unreported",
    }
    assert to_jsonable(Material.partial([1, 2], "deadline")) == {
        "state": "partial",
        "items": [1, 2],
        "reason": "deadline",
    }
    assert to_jsonable(Material.complete(())) == {"state": "complete", "items": [], "reason": None}
    assert to_jsonable(Interval(3, math.inf)) == {"lo": 3, "hi": "inf"}


def test_pydantic_models_enums_and_containers() -> None:
    assert to_jsonable(Item(name="box", tags={"b"})) == {"name": "box", "tags": ["b"]}
    assert to_jsonable(Color.RED) == "red"
    assert to_jsonable(AssertionState.MATCHED) == "matched"
    assert to_jsonable((1, (2, 3))) == [1, [2, 3]]
    assert to_jsonable({3, 1, 2}) == [1, 2, 3]
    assert to_jsonable({1: "a", None: "b", Color.RED: "c", (1, 2): "d"}) == {
        "1": "a",
        "null": "b",
        "red": "c",
        "[1, 2]": "d",
    }


def test_non_finite_floats_become_strings() -> None:
    assert to_jsonable([math.inf, -math.inf, math.nan]) == ["inf", "-inf", "nan"]


def test_anything_else_becomes_its_repr_and_functions_their_name() -> None:
    class Opaque:
        def __repr__(self) -> str:
            return "<opaque>"

    def read_hp() -> None:
        pass

    assert to_jsonable(Opaque()) == "<opaque>"
    assert to_jsonable(b"\x00") == "b'\\x00'"
    assert to_jsonable(read_hp) == read_hp.__qualname__


def test_a_self_containing_value_does_not_recurse_forever() -> None:
    loop: list[object] = [1]
    loop.append(loop)
    assert to_jsonable(loop) == [1, "<cycle>"]
    shared = [1]
    assert to_jsonable([shared, shared]) == [[1], [1]]  # repeated, not cyclic


def test_result_is_always_serialisable() -> None:
    weird = {"f": math.nan, "s": {Color.RED}, "d": Speech("代理", Fact.available(math.inf)), "o": object()}
    json.dumps(to_jsonable(weird), allow_nan=False)


def test_canonical_json_is_stable_compact_and_keeps_unicode() -> None:
    assert canonical_json({"b": 1, "a": [1, 2]}) == '{"a":[1,2],"b":1}'
    assert canonical_json({"a": [1, 2], "b": 1}) == canonical_json({"b": 1, "a": (1, 2)})
    assert canonical_json({"名": "值"}) == '{"名":"值"}'
    assert canonical_json({"x": math.inf}) == '{"x":"inf"}'
