"""Outcome rules (outcomes.md): assertion results → an Attempt's verdict or score.

Pure functions only. The runner calls `decide_attempt` once when sealing; `view`, `query`,
JUnit and the exit code read what was decided (stored) and never re-decide. The severity
tables (`_severity.py`) are the one home of the reading order: the Python functions and the SQL CASE
expressions the store sorts by are both built from them.
"""

from __future__ import annotations

from ._attempt import (
    BOOLEAN_MATCH,
    EXECUTION_REASONS,
    GATE_ROLES,
    SCORE_MATCH,
    SCORING_ROLES,
    SHORT_STATES,
    AttemptOutcome,
    EntryLike,
    Execution,
    ScoreAttemptLike,
    contribution,
    decide_attempt,
    is_clean,
    recorded_only,
)
from ._folds import (
    DEFAULT_PASS_RULE,
    EvalFold,
    IntervalRule,
    PassRule,
    ScoreSummary,
    fold_pass_eval,
    is_undecided,
    not_pass_style,
    parse_pass_rule,
    pass_verdict,
    settled_verdict,
    stored_pass_rule,
    summarize_scores,
    undecided_text,
)
from ._run import (
    EvalDecision,
    OutcomeRow,
    PassedEvalsRow,
    RunDecision,
    decide_run,
    run_exit_code,
)
from ._severity import (
    ASSERTION_SEVERITY_SQL,
    ATTEMPT_SEVERITY_SQL,
    assertion_severity,
    assertion_severity_sql,
    attempt_severity,
    attempt_severity_sql,
)

__all__ = [
    "ASSERTION_SEVERITY_SQL",
    "ATTEMPT_SEVERITY_SQL",
    "BOOLEAN_MATCH",
    "DEFAULT_PASS_RULE",
    "EXECUTION_REASONS",
    "GATE_ROLES",
    "SCORE_MATCH",
    "SCORING_ROLES",
    "SHORT_STATES",
    "AttemptOutcome",
    "EntryLike",
    "EvalDecision",
    "EvalFold",
    "Execution",
    "IntervalRule",
    "OutcomeRow",
    "PassRule",
    "PassedEvalsRow",
    "RunDecision",
    "ScoreAttemptLike",
    "ScoreSummary",
    "assertion_severity",
    "assertion_severity_sql",
    "attempt_severity",
    "attempt_severity_sql",
    "contribution",
    "decide_attempt",
    "decide_run",
    "fold_pass_eval",
    "is_clean",
    "is_undecided",
    "not_pass_style",
    "parse_pass_rule",
    "pass_verdict",
    "recorded_only",
    "run_exit_code",
    "settled_verdict",
    "stored_pass_rule",
    "summarize_scores",
    "undecided_text",
]
