"""Attempts and their assertion results, shaped for display (`view`, the run summary, JUnit bodies)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from ... import outcomes
from ..._records import AssertionResult, AttemptRecord
from ..._states import AssertionState, AttemptState, EvalKind, GateState, Relation
from .._safe import visible
from .._tally import attempt_word
from .cost import attempt_cost_text, attempt_judge_cost_text
from .text import TEXT_LIMIT, duration, name, num, when

REST_LIMIT = 20  # passing results shown per expanded attempt before "… N more"
_REST = outcomes.assertion_severity(AssertionState.MATCHED)  # "the rest": settled without a problem
#: The judge factories (expect._judge.JUDGE_CHOICES); a judge result's match config carries its scale version.
JUDGE_MATCHES = frozenset({"closed_qa", "factuality", "summarizes"})

MARKS = {
    AssertionState.ERRORED: "!", AssertionState.MISMATCHED: "✗", AssertionState.BELOW: "✗",
    AssertionState.UNAVAILABLE: "?", AssertionState.MATCHED: "✓", AssertionState.MET: "✓",
    AssertionState.MEASURED: "·",
}


# ── pieces of text ───────────────────────────────────────────────────────────────────────


def score_text(attempt: AttemptRecord) -> str:
    """`45 of 100 · 50 unavailable · not rankable`: never a fabricated complete zero."""
    if EvalKind(attempt.kind) is not EvalKind.SCORE:
        return ""
    if attempt.state == AttemptState.ERRORED:
        earned = f"partial {num(attempt.partial_score)}" if attempt.partial_score is not None else "no score"
        return f"{earned} of {num(attempt.max_score)} · not rankable"
    text = f"{num(attempt.score)} of {num(attempt.max_score)}"
    if attempt.unavailable_weight:
        text += f" · {num(attempt.unavailable_weight)} unavailable"
    if attempt.state == AttemptState.UNRANKABLE:
        text += " · not rankable"
    if attempt.gate == GateState.FAILED:
        text += " · points kept"
    return text


def slot_name(attempt: AttemptRecord) -> str:
    return f"{name(attempt.experiment_id)} · {name(attempt.eval_id)}#{attempt.ordinal}"


def reused_from(attempt: AttemptRecord) -> str | None:
    """The run that sealed a reused attempt (an attempt read under a run that referenced it)."""
    relation = getattr(attempt, "relation", Relation.ORIGIN)  # AttemptRow has it; a fresh record does not
    return attempt.run_id if relation == Relation.REFERENCE else None


def is_judge(result: AssertionResult) -> bool:
    return result.match_name in JUDGE_MATCHES and '"scale_version"' in (result.match_config or "")


def result_name(result: AssertionResult) -> str:
    label = result.label or result.key
    if result.group_name:
        return f"{name(result.group_name)} / {name(label)}"
    return name(label)


def measurement_text(result: AssertionResult) -> str | None:
    """`0.62 < 0.80 required` (thresholded), `0.62` (recorded), or the missing value with its
    threshold; a sampled judge adds how many of its samples agree (`· 3 of 5 samples agree`)."""
    shown = _measured_text(result)
    agreeing = agreement_text(result)
    if agreeing is None:
        return shown
    return agreeing if shown is None else f"{shown} · {agreeing}"


def _measured_text(result: AssertionResult) -> str | None:
    m, t = result.measurement, result.threshold
    if m is None:
        return None if t is None else f"— ({t:.2f} required)"
    if t is None:
        return f"{m:.2f}"
    return f"{m:.2f} {'≥' if m >= t else '<'} {t:.2f} required"


def agreement_text(result: AssertionResult) -> str | None:
    """`3 of 5 samples agree` (judge.samples > 1: of the samples that yielded a measurement)."""
    agreement, samples = result.agreement, result.judge_samples
    if not isinstance(agreement, (int, float)) or not isinstance(samples, int) or samples < 1:
        return None
    return f"{round(agreement * samples)} of {samples} samples agree"


def scoring_text(result: AssertionResult) -> str | None:
    """`contribution / weight`; an unavailable entry keeps its weight and earns `—`, never 0."""
    if result.role not in outcomes.SCORING_ROLES or result.weight is None:
        return None
    return f"{num(result.contribution)} / {num(result.weight)}"


def role_tag(result: AssertionResult) -> str | None:
    tags = []
    if result.role in outcomes.GATE_ROLES:
        tags.append("gate")
    if result.or_stop:
        tags.append("or_stop")
    return f"[{', '.join(tags)}]" if tags else None


def _explanation(result: AssertionResult) -> str | None:
    """The explanation without the measurement prefix the threshold already printed."""
    text = result.explanation
    if not text:
        return None
    shown = _measured_text(result)
    if shown and text.startswith(shown):
        text = text[len(shown):].lstrip("; ").strip()
    if not text or _restates(text, result.reason):
        return None
    return text


def _restates(text: str, reason: str | None) -> bool:
    """`score unavailable: completion-unobserved` says nothing the `reason:` line does not."""
    return reason is not None and reason in text and len(text) <= len(reason) + 24 and "\n" not in text


# ── view-models ──────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class AttemptHeading:
    """`FAILED  exp · eval#0  <score>  (reused from run X)  @ATTEMPT_ID`."""

    word: str  # attempt_word: passed, failed, errored, scored, unrankable, gate failed, gate unavailable
    slot: str  # `experiment · eval#ordinal`, escaped
    score: str  # score_text, "" for a pass-style attempt
    reused_from: str | None  # the run that sealed it, when this run reused it
    attempt_id: str


@dataclass(frozen=True)
class AssertionLine:
    """`✗ below  Clear answer  0.62 < 0.80 required  1 / 2  [gate]`, then its detail lines."""

    mark: str
    state: str
    name: str
    measurement: str | None  # measurement vs threshold
    points: str | None  # contribution / weight
    role: str | None  # `[gate]`, `[gate, or_stop]`
    reason: str | None
    explanation: str | None  # multi-line text, escaped and trimmed
    judge: bool  # the explanation is a judge's reasoning
    source: str | None  # `file:line`, shown for results that did not settle cleanly


@dataclass(frozen=True)
class AttemptBlock:
    """An expanded attempt: heading, why it ended as it did, then its results worst first."""

    heading: AttemptHeading
    reason: str | None
    error: str | None  # multi-line
    stop_cause: str | None
    assertions: tuple[AssertionLine, ...]
    hidden_passing: int  # passing results left out (`view @ATTEMPT_ID` shows them)
    no_assertions: bool  # a finished attempt that registered none


@dataclass(frozen=True)
class CollapsedAttempt:
    """A passed (or cleanly scored) attempt on one line."""

    word: str
    slot: str
    score: str
    attempt_id: str
    reused_from: str | None


def attempt_heading(attempt: AttemptRecord) -> AttemptHeading:
    return AttemptHeading(attempt_word(attempt.state, attempt.gate), slot_name(attempt), score_text(attempt),
                          reused_from(attempt), attempt.id)


def assertion_line(result: AssertionResult, *, text_limit: int | None = TEXT_LIMIT) -> AssertionLine:
    state = AssertionState(result.state)
    settled_ok = outcomes.assertion_severity(state) == _REST
    judge = is_judge(result)
    explanation = _explanation(result)
    return AssertionLine(
        mark=MARKS.get(state, "·"), state=state.value, name=result_name(result),
        measurement=measurement_text(result), points=scoring_text(result), role=role_tag(result),
        reason=name(result.reason, text_limit) if result.reason else None,
        explanation=visible(explanation, text_limit) if explanation and (judge or not settled_ok) else None,
        judge=judge,
        source=(f"{name(result.source_file)}:{result.source_line or '?'}"
                if not settled_ok and result.source_file else None),
    )


def attempt_block(
    attempt: AttemptRecord, results: Sequence[AssertionResult], *, rest_limit: int | None = REST_LIMIT,
    text_limit: int | None = TEXT_LIMIT,
) -> AttemptBlock:
    lines: list[AssertionLine] = []
    hidden = shown_rest = 0
    for result in results:
        if outcomes.assertion_severity(result.state) == _REST:
            if rest_limit is not None and shown_rest >= rest_limit:
                hidden += 1
                continue
            shown_rest += 1
        lines.append(assertion_line(result, text_limit=text_limit))
    return AttemptBlock(
        heading=attempt_heading(attempt),
        reason=name(attempt.reason, text_limit) if attempt.reason else None,
        error=visible(attempt.error, text_limit) if attempt.error else None,
        stop_cause=name(attempt.stop_cause, text_limit) if attempt.stop_cause else None,
        assertions=tuple(lines),
        hidden_passing=hidden,
        no_assertions=not results and attempt.state != AttemptState.ERRORED,
    )


def collapsed_attempt(attempt: AttemptRecord) -> CollapsedAttempt:
    return CollapsedAttempt(attempt_word(attempt.state, attempt.gate), slot_name(attempt), score_text(attempt),
                            attempt.id, reused_from(attempt))


# ── one attempt in full (`view @ATTEMPT_ID`) ─────────────────────────────────────────────


@dataclass(frozen=True)
class DetailField:
    label: str
    value: str  # full text, escaped, may span lines


@dataclass(frozen=True)
class ResultDetail:
    number: int
    mark: str
    state: str
    name: str
    fields: tuple[DetailField, ...]


@dataclass(frozen=True)
class AttemptDetail:
    """Everything sealed for one attempt, in full (escaped, never trimmed)."""

    attempt_id: str
    word: str
    fields: tuple[DetailField, ...]
    results: tuple[ResultDetail, ...]


def _tokens(value: int | None) -> str:
    return "not reported" if value is None else f"{value:,}"


def attempt_detail(attempt: AttemptRecord, results: Sequence[AssertionResult]) -> AttemptDetail:
    kind = "score-style" if attempt.kind == EvalKind.SCORE else "pass-style"
    fields = [
        ("eval", f"{name(attempt.eval_id, None)} #{attempt.ordinal} ({kind})"),
        ("experiment", name(attempt.experiment_id, None)),
        ("case", name(attempt.case_id, None) if attempt.case_id is not None else ""),
        ("case value", visible(_pretty_json(attempt.case_value), None) if attempt.case_value is not None else ""),
        ("case metadata", visible(_pretty_json(attempt.case_metadata), None) if attempt.case_metadata else ""),
        ("run", f"{attempt.run_id} (the run that executed and sealed it)"),
        ("score", score_text(attempt)),
        ("gate", str(attempt.gate) if attempt.gate is not None and attempt.kind == EvalKind.SCORE else ""),
        ("reason", visible(attempt.reason, None) if attempt.reason else ""),
        ("error", visible(attempt.error, None) if attempt.error else ""),
        ("stopped", visible(attempt.stop_cause, None) if attempt.stop_cause else ""),
        ("started", when(attempt.started_at)),
        ("ended", when(attempt.ended_at)),
        ("duration", duration(attempt.duration_ms)),
        ("usage", f"input {_tokens(attempt.input_tokens)} · output {_tokens(attempt.output_tokens)} · "
                  f"judge {_tokens(attempt.judge_tokens)} tokens"),
        ("cost", attempt_cost_text(attempt)),
        ("judge cost", attempt_judge_cost_text(attempt)),
        ("fingerprint", attempt.fingerprint),
        ("notes", visible(_notes_text(attempt.notes), None) if attempt.notes else ""),
        ("traceback", visible(attempt.traceback.rstrip(), None) if attempt.traceback else ""),
    ]
    return AttemptDetail(
        attempt.id, attempt_word(attempt.state, attempt.gate),
        tuple(DetailField(label, value) for label, value in fields if value),
        tuple(_result_detail(n, r) for n, r in enumerate(results, 1)),
    )


def _result_detail(number: int, result: AssertionResult) -> ResultDetail:
    state = AssertionState(result.state)
    fields = [("key", name(result.key, None)),
              ("role", f"{result.role}" + (" · or_stop" if result.or_stop else "")),
              ("match", f"{name(result.match_name, None)} ({result.match_kind}) "
                        f"{visible(result.match_config, None, single_line=True)}"),
              ("measurement", measurement_text(result)),
              ("points", scoring_text(result)),
              ("reason", visible(result.reason, None) if result.reason else None),
              ("explanation", visible(result.explanation, None) if result.explanation else None),
              ("evidence", visible(_pretty_json(result.evidence), None) if result.evidence is not None else None),
              ("source", f"{name(result.source_file, None)}:{result.source_line or '?'}"
                         if result.source_file else None),
              ("judge audit", visible(_audit_text(result.judge_audit), None) if result.judge_audit else None),
              ("judge tokens", _tokens(result.judge_tokens) if result.judge_tokens is not None else None)]
    return ResultDetail(number, MARKS.get(state, "·"), state.value, result_name(result),
                        tuple(DetailField(label, value) for label, value in fields if value))


def _notes_text(notes: str) -> str:
    """`attempts.notes` is a JSON list of sentences (what sealing changed); one per line."""
    try:
        items = json.loads(notes)
    except ValueError:
        return notes
    return "\n".join(map(str, items)) if isinstance(items, list) else notes


def _pretty_json(text: str) -> str:
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return text


def _audit_text(text: str) -> str:
    """The judge request as readable messages, then the raw response as JSON."""
    try:
        audit = json.loads(text)
        messages = audit["request"]["messages"]
        parts = [f"model: {audit['request'].get('model')}"]
        for message in messages:
            parts.append(f"── {message.get('role')} ──\n{message.get('content')}")
        parts.append("── response ──\n" + json.dumps(audit.get("response"), indent=2, ensure_ascii=False))
        return "\n".join(parts)
    except (ValueError, KeyError, TypeError, AttributeError):
        return _pretty_json(text)
