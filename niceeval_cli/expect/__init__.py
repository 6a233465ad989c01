"""Pure, reusable Match factories (`from niceeval_cli import expect`)."""

from ._collections import count_where, every, filter_where, map_each, map_value, some
from ._core import BooleanMatch, Interval, MatchError, MatchResult, ScoreMatch, ThresholdedScoreMatch
from ._facts import Fact, FactUnavailable, Material, NumericMaterial
from ._judge import closed_qa, factuality, summarizes
from ._logic import and_, not_, or_
from ._material import Capture, define_context_match, define_material_match
from ._promptfoo import from_promptfoo
from ._tools import json_match, tool_match
from ._values import (
    at_least,
    at_most,
    between,
    define_score_match,
    define_value_match,
    equals,
    excludes,
    greater_than,
    includes,
    is_defined,
    is_false,
    is_true,
    less_than,
    matches,
    pattern,
    satisfies,
    similarity,
)

__all__ = [
    "BooleanMatch",
    "Capture",
    "Fact",
    "FactUnavailable",
    "Interval",
    "MatchError",
    "MatchResult",
    "Material",
    "NumericMaterial",
    "ScoreMatch",
    "ThresholdedScoreMatch",
    "and_",
    "at_least",
    "at_most",
    "between",
    "closed_qa",
    "count_where",
    "define_context_match",
    "define_material_match",
    "define_score_match",
    "define_value_match",
    "equals",
    "every",
    "excludes",
    "factuality",
    "filter_where",
    "from_promptfoo",
    "greater_than",
    "includes",
    "is_defined",
    "is_false",
    "is_true",
    "json_match",
    "less_than",
    "map_each",
    "map_value",
    "matches",
    "not_",
    "or_",
    "pattern",
    "satisfies",
    "similarity",
    "some",
    "summarizes",
    "tool_match",
]
