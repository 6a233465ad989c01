"""The one renderer of sealed results: `view`, `view @ATTEMPT`, the run summary and JUnit bodies.

Pure: functions turn typed rows into `Line`s (indent + rich Text with styles); `_out` decides
how they reach a terminal (styled and wrapped in a TTY, plain and unwrapped otherwise). Every
piece of stored text passes through `visible()` here, so nothing from the system under test or a
judge can reach the terminal as a control sequence.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from rich.cells import cell_len
from rich.text import Text

from .. import outcomes
from .._records import AssertionResult, AttemptRecord
from .._states import AssertionState, AttemptState, EvalKind, GateState, Relation
from ._safe import visible
from ._tally import attempt_word, is_ok

#: Default trims (characters) for the list views; `view @ATTEMPT_ID` shows everything.
NAME_LIMIT = 160
TEXT_LIMIT = 400
REST_LIMIT = 20  # passing results shown per expanded attempt before "… N more"
DETAIL_INDENT = 6
_REST = outcomes.assertion_severity(AssertionState.MATCHED)  # "the rest": settled without a problem

STYLES = {
    "passed": "green", "scored": "green", "matched": "green", "met": "green", "measured": "cyan",
    "failed": "bold red", "mismatched": "bold red", "below": "bold red", "gate failed": "bold red",
    "errored": "bold magenta", "unrankable": "yellow", "unavailable": "yellow", "gate unavailable": "yellow",
}
MARKS = {
    AssertionState.ERRORED: "!", AssertionState.MISMATCHED: "✗", AssertionState.BELOW: "✗",
    AssertionState.UNAVAILABLE: "?", AssertionState.MATCHED: "✓", AssertionState.MET: "✓",
    AssertionState.MEASURED: "·",
}
_EXIT_MEANING = {
    0: "everything passed", 1: "a definite failure", 2: "usage or configuration error", 3: "setup error",
    4: "internal error", 5: "something could not be decided", 130: "interrupted",
}


@dataclass(frozen=True)
class Line:
    """One logical output line; wrapped lines in a TTY keep the indent."""

    text: Text
    indent: int = 0


def line(*parts: str | tuple[str, str], indent: int = 0) -> Line:
    """A line from plain strings and (text, style) pairs. Callers pass text already made visible."""
    text = Text()
    for part in parts:
        if isinstance(part, tuple):
            text.append(part[0], style=part[1])
        else:
            text.append(part)
    return Line(text, indent)


def blank() -> Line:
    return Line(Text(), 0)


def pad(text: str, width: int) -> str:
    """Left-align in terminal cells (a CJK character takes two), not in characters."""
    return text + " " * max(0, width - cell_len(text))


def num(x: float | None) -> str:
    """Scores and weights: whole numbers as such, else up to two decimals; missing as an em dash."""
    if x is None:
        return "—"
    if float(x).is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.2f}".rstrip("0").rstrip(".")


def name(text: object, limit: int | None = NAME_LIMIT) -> str:
    """Ids, labels, keys: one line, escaped, trimmed with a marker."""
    return visible(text, limit, single_line=True)


def when(iso: str | None) -> str:
    if not iso:
        return "—"
    return iso.replace("T", " ").split(".")[0].rstrip("Z") + " UTC"


def took(started: str | None, ended: str | None) -> str | None:
    try:
        start = datetime.fromisoformat((started or "").replace("Z", "+00:00"))
        end = datetime.fromisoformat((ended or "").replace("Z", "+00:00"))
    except ValueError:
        return None
    return duration((end - start).total_seconds() * 1000)


def duration(ms: float | None) -> str:
    if ms is None:
        return "—"
    if ms < 1000:
        return f"{ms:.1f} ms" if ms < 10 else f"{ms:.0f} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    return f"{int(ms // 60_000)} min {ms % 60_000 / 1000:.0f} s"


# ── attempts ─────────────────────────────────────────────────────────────────────────────


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


def _reused_from(attempt: AttemptRecord) -> str | None:
    relation = getattr(attempt, "relation", Relation.ORIGIN)
    return attempt.run_id if relation == Relation.REFERENCE else None


def attempt_heading(attempt: AttemptRecord) -> Line:
    """`FAILED  exp · eval#0  <score>  (reused from run X)  @ATTEMPT_ID`."""
    word = attempt_word(attempt.state, attempt.gate)
    parts: list[str | tuple[str, str]] = [(word.upper(), STYLES.get(word, "")), "  ", (slot_name(attempt), "bold")]
    score = score_text(attempt)
    if score:
        parts += ["  ", score]
    reused = _reused_from(attempt)
    if reused:
        parts += ["  ", (f"(reused from run {reused})", "cyan")]
    parts += ["  ", (f"@{attempt.id}", "dim")]
    return line(*parts)


def attempt_lines(
    attempt: AttemptRecord, results: Sequence[AssertionResult], *, rest_limit: int | None = REST_LIMIT,
    text_limit: int | None = TEXT_LIMIT, note_hidden: bool = True,
) -> list[Line]:
    """An expanded attempt: heading, why it ended as it did, then its results worst first."""
    lines = [attempt_heading(attempt)]
    lines += _attempt_reason(attempt, text_limit, indent=2)
    hidden = shown_rest = 0
    for result in results:
        if outcomes.assertion_severity(result.state) == _REST:
            if rest_limit is not None and shown_rest >= rest_limit:
                hidden += 1
                continue
            shown_rest += 1
        lines += assertion_lines(result, text_limit=text_limit)
    if hidden and note_hidden:
        lines.append(line((f"… {hidden} more passing result(s); niceeval view @{attempt.id} shows all", "dim"),
                          indent=2))
    if not results and attempt.state != AttemptState.ERRORED:
        lines.append(line(("no assertions were registered", "dim"), indent=2))
    return lines


def _attempt_reason(attempt: AttemptRecord, text_limit: int | None, *, indent: int) -> list[Line]:
    lines = []
    if attempt.reason:
        lines.append(line(("reason: ", "dim"), name(attempt.reason, text_limit), indent=indent))
    if attempt.error:
        lines += text_block(attempt.error, text_limit, indent=indent, first="error: ")
    if attempt.stop_cause:
        lines.append(line(("stopped by or_stop: ", "dim"), name(attempt.stop_cause, text_limit), indent=indent))
    return lines


def collapsed_lines(attempts: Sequence[AttemptRecord]) -> list[Line]:
    """Passed (and cleanly scored) attempts, one aligned line each."""
    if not attempts:
        return []
    words = [attempt_word(a.state, a.gate) for a in attempts]
    names = [slot_name(a) for a in attempts]
    scores = [score_text(a) for a in attempts]
    word_w = max(cell_len(w) for w in words)
    name_w = min(max(cell_len(n) for n in names), 70)
    score_w = max(cell_len(s) for s in scores)
    lines = []
    for attempt, word, slot, score in zip(attempts, words, names, scores, strict=True):
        parts: list[str | tuple[str, str]] = [(pad(word, word_w), STYLES.get(word, "")), "  ", pad(slot, name_w)]
        if score_w:
            parts += ["  ", pad(score, score_w)]
        reused = _reused_from(attempt)
        parts += ["  ", (f"@{attempt.id}", "dim")]
        if reused:
            parts += ["  ", (f"(reused from run {reused})", "cyan")]
        lines.append(line(*parts))
    return lines


# ── assertion results ────────────────────────────────────────────────────────────────────


_JUDGE_MATCHES = frozenset({"closed_qa", "factuality", "summarizes"})  # expect._judge.JUDGE_CHOICES


def is_judge(result: AssertionResult) -> bool:
    """A judge assertion: its match config carries the judge scale version (expect._judge)."""
    return result.match_name in _JUDGE_MATCHES and '"scale_version"' in (result.match_config or "")


def result_name(result: AssertionResult) -> str:
    label = result.label or result.key
    if result.group_name:
        return f"{name(result.group_name)} / {name(label)}"
    return name(label)


def measurement_text(result: AssertionResult) -> str | None:
    """`0.62 < 0.80 required` (thresholded), `0.62` (recorded), or the missing value with its threshold."""
    m, t = result.measurement, result.threshold
    if m is None:
        return None if t is None else f"— ({t:.2f} required)"
    if t is None:
        return f"{m:.2f}"
    return f"{m:.2f} {'≥' if m >= t else '<'} {t:.2f} required"


def scoring_text(result: AssertionResult) -> str | None:
    """`contribution / weight`; an unavailable entry keeps its weight and earns `—`, never 0."""
    if result.role not in outcomes.SCORING_ROLES or result.weight is None:
        return None
    return f"{num(result.contribution)} / {num(result.weight)}"


def _role_tag(result: AssertionResult) -> str | None:
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
    shown = measurement_text(result)
    if shown and text.startswith(shown):
        text = text[len(shown):].lstrip("; ").strip()
    if not text or _restates(text, result.reason):
        return None
    return text


def _restates(text: str, reason: str | None) -> bool:
    """`score unavailable: completion-unobserved` says nothing the `reason:` line does not."""
    return reason is not None and reason in text and len(text) <= len(reason) + 24 and "\n" not in text


def assertion_lines(result: AssertionResult, *, text_limit: int | None = TEXT_LIMIT) -> list[Line]:
    """`✗ below       Clear answer  0.62 < 0.80 required  [gate]`, then reason / explanation / source."""
    state = AssertionState(result.state)
    word = state.value
    parts: list[str | tuple[str, str]] = [
        (MARKS.get(state, "·"), STYLES.get(word, "")), " ", (pad(word, 11), STYLES.get(word, "")), "  ",
        result_name(result),
    ]
    for extra in (measurement_text(result), scoring_text(result), _role_tag(result)):
        if extra:
            parts += ["  ", extra]
    lines = [line(*parts, indent=2)]
    settled_ok = outcomes.assertion_severity(state) == _REST
    if result.reason:
        lines.append(line(("reason: ", "dim"), name(result.reason, text_limit), indent=DETAIL_INDENT))
    explanation = _explanation(result)
    judge = is_judge(result)
    if explanation and (judge or not settled_ok):
        lines += text_block(explanation, text_limit, indent=DETAIL_INDENT, first="judge: " if judge else "")
    if not settled_ok and result.source_file:
        lines.append(line((f"at {name(result.source_file)}:{result.source_line or '?'}", "dim"),
                          indent=DETAIL_INDENT))
    return lines


def text_block(text: str, limit: int | None, *, indent: int, first: str = "") -> list[Line]:
    """Multi-line stored text, escaped and trimmed; continuation lines align under the first."""
    shown = visible(text, limit)
    rows = shown.split("\n")
    out = [line((first, "dim"), rows[0], indent=indent)] if first else [line(rows[0], indent=indent)]
    out += [line(row, indent=indent + cell_len(first)) for row in rows[1:]]
    return out


# ── one attempt in full (`view @ATTEMPT_ID`) ─────────────────────────────────────────────

_FIELD_W = 13
_RESULT_INDENT = 5


def _field(label: str, value: str, *, indent: int = 2, style: str = "") -> list[Line]:
    rows = value.split("\n")
    out = [line((pad(label, _FIELD_W), "dim"), (rows[0], style), indent=indent)]
    out += [line(row, indent=indent + _FIELD_W) for row in rows[1:]]
    return out


def _tokens(value: int | None) -> str:
    return "not reported" if value is None else f"{value:,}"


def detail_lines(attempt: AttemptRecord, results: Sequence[AssertionResult]) -> list[Line]:
    """Everything sealed for one attempt, full text (escaped, never trimmed)."""
    word = attempt_word(attempt.state, attempt.gate)
    out = [line(("Attempt ", "bold"), (attempt.id, "bold"), "  ", (word.upper(), STYLES.get(word, "")))]
    kind = "score-style" if attempt.kind == EvalKind.SCORE else "pass-style"
    out += _field("eval", f"{name(attempt.eval_id, None)} #{attempt.ordinal} ({kind})")
    out += _field("experiment", name(attempt.experiment_id, None))
    out += _field("run", f"{attempt.run_id} (the run that executed and sealed it)")
    score = score_text(attempt)
    if score:
        out += _field("score", score)
    if attempt.gate is not None and attempt.kind == EvalKind.SCORE:
        out += _field("gate", str(attempt.gate))
    if attempt.reason:
        out += _field("reason", visible(attempt.reason, None))
    if attempt.error:
        out += _field("error", visible(attempt.error, None))
    if attempt.stop_cause:
        out += _field("stopped", visible(attempt.stop_cause, None))
    out += _field("started", when(attempt.started_at))
    out += _field("ended", when(attempt.ended_at))
    out += _field("duration", duration(attempt.duration_ms))
    out += _field("usage", f"input {_tokens(attempt.input_tokens)} · output {_tokens(attempt.output_tokens)} · "
                           f"judge {_tokens(attempt.judge_tokens)} tokens")
    if attempt.cost_usd is not None or attempt.estimated_cost_usd is not None:
        out += _field("cost", " · ".join(part for part in (
            f"${attempt.cost_usd:.4f} reported" if attempt.cost_usd is not None else "",
            f"${attempt.estimated_cost_usd:.4f} estimated from [prices]"
            if attempt.estimated_cost_usd is not None else "") if part))
    out += _field("fingerprint", attempt.fingerprint)
    out.append(blank())
    out.append(line((f"Assertions ({len(results)}, worst first)", "bold")))
    if not results:
        out.append(line(("no assertions were registered", "dim"), indent=2))
    for number, result in enumerate(results, 1):
        out.append(blank())
        out += _result_detail(number, result)
    return out


def _result_detail(number: int, result: AssertionResult) -> list[Line]:
    state = AssertionState(result.state)
    head = [line(
        f"{number}. ", (MARKS.get(state, "·"), STYLES.get(state.value, "")), " ",
        (state.value, STYLES.get(state.value, "")), "  ", (result_name(result), "bold"), indent=0,
    )]
    out = head
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
    for label, value in fields:
        if value:
            out += _field(label, value, indent=_RESULT_INDENT)
    return out


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


# ── the run header ───────────────────────────────────────────────────────────────────────


def exit_text(code: int | None) -> str:
    if code is None:
        return "no exit code yet"
    meaning = _EXIT_MEANING.get(code)
    return f"exit {code} ({meaning})" if meaning else f"exit {code}"


def counts_text(words: dict[str, int]) -> str:
    return ", ".join(f"{n} {w}" for w, n in words.items()) or "none"


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def percent(rate: float | None) -> str:
    return "—" if rate is None else f"{rate * 100:.0f}%"


def join(items: Iterable[str]) -> str:
    return " · ".join(i for i in items if i)


__all__ = [
    "Line", "assertion_lines", "attempt_heading", "attempt_lines", "blank", "collapsed_lines", "detail_lines",
    "is_ok", "line", "measurement_text", "num", "pad", "score_text", "scoring_text",
]
