"""The judge factories' fixed tables (judge.md): each kind's lettered choices and the match_config
key of its criterion. Low module: `expect` builds its judge matches from them, and the store reads
them to find and regrade stored judge results without loading the `expect` package."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["CRITERION_FIELD", "JUDGE_CHOICES"]

#: letter → measurement, exactly judge.md's table.
JUDGE_CHOICES: Mapping[str, Mapping[str, float]] = MappingProxyType({
    "closed_qa": MappingProxyType({"Y": 1.0, "N": 0.0}),
    "factuality": MappingProxyType({"A": 0.4, "B": 0.6, "C": 1.0, "D": 0.0, "E": 1.0}),
    "summarizes": MappingProxyType({"Y": 1.0, "N": 0.0}),
})

#: The match_config key holding each kind's criterion text.
CRITERION_FIELD: Mapping[str, str] = MappingProxyType({
    "closed_qa": "question",
    "factuality": "reference",
    "summarizes": "source",
})
