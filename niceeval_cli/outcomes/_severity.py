"""The reading order: one home for the Python sort keys and the SQL CASE expressions the store sorts by."""

from __future__ import annotations

import re
from collections.abc import Mapping

from .._states import AssertionState, AttemptState, GateState

# ── reading order (one home for Python and SQL) ───────────────────────────────────────────

_ATTEMPT_STATE_SEVERITY: Mapping[AttemptState, int] = {
    AttemptState.ERRORED: 0,
    AttemptState.FAILED: 1,
    AttemptState.UNRANKABLE: 2,
}
_GATE_FAILED_SEVERITY = 3  # a scored attempt whose gate failed (earned points kept)
_ATTEMPT_REST_SEVERITY = 4

_ASSERTION_STATE_SEVERITY: Mapping[AssertionState, int] = {
    AssertionState.ERRORED: 0,
    AssertionState.MISMATCHED: 1,
    AssertionState.BELOW: 1,
    AssertionState.UNAVAILABLE: 2,
}
_ASSERTION_REST_SEVERITY = 3


def attempt_severity(state: AttemptState | str, gate: GateState | str | None) -> int:
    """0 errored, 1 failed, 2 unrankable, 3 scored with gate failed, 4 the rest (worst first)."""
    state = AttemptState(state)
    if state in _ATTEMPT_STATE_SEVERITY:
        return _ATTEMPT_STATE_SEVERITY[state]
    if gate is not None and GateState(gate) is GateState.FAILED:
        return _GATE_FAILED_SEVERITY
    return _ATTEMPT_REST_SEVERITY


def assertion_severity(state: AssertionState | str) -> int:
    """0 errored, 1 mismatched/below, 2 unavailable, 3 the rest (worst first)."""
    return _ASSERTION_STATE_SEVERITY.get(AssertionState(state), _ASSERTION_REST_SEVERITY)


_COLUMN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?")


def _column(name: str) -> str:
    if not _COLUMN.fullmatch(name):
        raise ValueError(f"not a column name: {name!r}")
    return name


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def attempt_severity_sql(state_col: str = "state", gate_col: str = "gate") -> str:
    """A SQL CASE expression equal to `attempt_severity` (for the store's ORDER BY)."""
    state_col, gate_col = _column(state_col), _column(gate_col)
    whens = [f"WHEN {state_col} = {_literal(s)} THEN {n}" for s, n in _ATTEMPT_STATE_SEVERITY.items()]
    whens.append(f"WHEN {gate_col} = {_literal(GateState.FAILED)} THEN {_GATE_FAILED_SEVERITY}")
    return f"CASE {' '.join(whens)} ELSE {_ATTEMPT_REST_SEVERITY} END"


def assertion_severity_sql(state_col: str = "state") -> str:
    """A SQL CASE expression equal to `assertion_severity` (for the store's ORDER BY)."""
    state_col = _column(state_col)
    whens = [f"WHEN {state_col} = {_literal(s)} THEN {n}" for s, n in _ASSERTION_STATE_SEVERITY.items()]
    return f"CASE {' '.join(whens)} ELSE {_ASSERTION_REST_SEVERITY} END"


ATTEMPT_SEVERITY_SQL = attempt_severity_sql()
ASSERTION_SEVERITY_SQL = assertion_severity_sql()


