"""Builders for sealed assertion results, so each test states only what it is about."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest

from niceeval_cli._records import AssertionResult
from niceeval_cli._states import AssertionState, Role

EntryFactory = Callable[..., AssertionResult]

_BOOLEAN_STATES = {AssertionState.MATCHED, AssertionState.MISMATCHED}


@pytest.fixture
def entry() -> EntryFactory:
    """`entry(state, role=..., weight=..., ...)` → a real AssertionResult (the runner's record)."""
    ordinals = itertools.count()

    def make(
        state: AssertionState,
        role: Role = Role.RECORD,
        *,
        weight: float | None = None,
        measurement: float | None = None,
        or_stop: bool = False,
        reason: str | None = None,
        label: str | None = None,
        match_kind: str | None = None,
    ) -> AssertionResult:
        ordinal = next(ordinals)
        if match_kind is None:
            match_kind = "boolean" if state in _BOOLEAN_STATES else "score"
        return AssertionResult(
            id=f"r{ordinal}",
            attempt_id="a1",
            ordinal=ordinal,
            key=label or f"line-{ordinal}",
            label=label,
            group_name=None,
            role=role,
            weight=weight,
            contribution=None,
            state=state,
            measurement=measurement,
            threshold=None,
            reason=reason,
            explanation=None,
            match_name="test",
            match_config="{}",
            evidence=None,
            source_file=None,
            source_line=None,
            or_stop=or_stop,
            match_kind=match_kind,
        )

    return make
