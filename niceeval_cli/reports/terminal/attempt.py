"""Attempt view-models → terminal Lines (`view`, the run summary, JUnit bodies)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len

from ..viewmodels.attempt import AssertionLine, AttemptBlock, AttemptDetail, AttemptHeading, CollapsedAttempt
from .lines import DETAIL_INDENT, STYLES, Line, Part, blank, line, pad, text_block

_FIELD_W = 13
_RESULT_INDENT = 5


def heading_line(heading: AttemptHeading, note: str | None = None) -> Line:
    parts: list[Part] = [(heading.word.upper(), STYLES.get(heading.word, "")), "  ", (heading.slot, "bold")]
    if heading.score:
        parts += ["  ", heading.score]
    if heading.reused_from:
        parts += ["  ", (f"(reused from run {heading.reused_from})", "cyan")]
    parts += ["  ", (f"@{heading.attempt_id}", "dim")]
    if note:
        parts += ["  ", (note, "dim")]
    return line(*parts)


def block_lines(block: AttemptBlock, *, note_hidden: bool = True, note: str | None = None) -> list[Line]:
    lines = [heading_line(block.heading, note)]
    if block.reason:
        lines.append(line(("reason: ", "dim"), block.reason, indent=2))
    if block.error:
        lines += text_block(block.error, indent=2, first="error: ")
    if block.stop_cause:
        lines.append(line(("stopped by or_stop: ", "dim"), block.stop_cause, indent=2))
    for assertion in block.assertions:
        lines += assertion_lines(assertion)
    if block.hidden_passing and note_hidden:
        lines.append(line((f"… {block.hidden_passing} more passing result(s); niceeval view "
                           f"@{block.heading.attempt_id} shows all", "dim"), indent=2))
    if block.no_assertions:
        lines.append(line(("no assertions were registered", "dim"), indent=2))
    return lines


def assertion_lines(a: AssertionLine) -> list[Line]:
    style = STYLES.get(a.state, "")
    parts: list[Part] = [(a.mark, style), " ", (pad(a.state, 11), style), "  ", a.name]
    for extra in (a.measurement, a.points, a.role):
        if extra:
            parts += ["  ", extra]
    lines = [line(*parts, indent=2)]
    if a.reason:
        lines.append(line(("reason: ", "dim"), a.reason, indent=DETAIL_INDENT))
    if a.explanation:
        lines += text_block(a.explanation, indent=DETAIL_INDENT, first="judge: " if a.judge else "")
    if a.source:
        lines.append(line((f"at {a.source}", "dim"), indent=DETAIL_INDENT))
    return lines


def collapsed_lines(attempts: Sequence[CollapsedAttempt]) -> list[Line]:
    """Passed (and cleanly scored) attempts, one aligned line each."""
    if not attempts:
        return []
    word_w = max(cell_len(a.word) for a in attempts)
    name_w = min(max(cell_len(a.slot) for a in attempts), 70)
    score_w = max(cell_len(a.score) for a in attempts)
    lines = []
    for a in attempts:
        parts: list[Part] = [(pad(a.word, word_w), STYLES.get(a.word, "")), "  ", pad(a.slot, name_w)]
        if score_w:
            parts += ["  ", pad(a.score, score_w)]
        parts += ["  ", (f"@{a.attempt_id}", "dim")]
        if a.reused_from:
            parts += ["  ", (f"(reused from run {a.reused_from})", "cyan")]
        lines.append(line(*parts))
    return lines


def _field(label: str, value: str, *, indent: int = 2) -> list[Line]:
    rows = value.split("\n")
    out = [line((pad(label, _FIELD_W), "dim"), rows[0], indent=indent)]
    out += [line(row, indent=indent + _FIELD_W) for row in rows[1:]]
    return out


def detail_lines(detail: AttemptDetail) -> list[Line]:
    """`view @ATTEMPT_ID`: everything sealed for one attempt."""
    out = [line(("Attempt ", "bold"), (detail.attempt_id, "bold"), "  ",
                (detail.word.upper(), STYLES.get(detail.word, "")))]
    for field in detail.fields:
        out += _field(field.label, field.value)
    out.append(blank())
    out.append(line((f"Assertions ({len(detail.results)}, worst first)", "bold")))
    if not detail.results:
        out.append(line(("no assertions were registered", "dim"), indent=2))
    for result in detail.results:
        out.append(blank())
        style = STYLES.get(result.state, "")
        out.append(line(f"{result.number}. ", (result.mark, style), " ", (result.state, style), "  ",
                        (result.name, "bold")))
        for field in result.fields:
            out += _field(field.label, field.value, indent=_RESULT_INDENT)
    return out
