"""How a side reads in the terminal: verdicts, scores, gates, repeated attempts, absence."""

from __future__ import annotations

import io
import json

from rich.console import Console

from niceeval_cli._states import AttemptState, EvalKind, GateState, RunStatus
from niceeval_cli.app.compare import CompareResult
from niceeval_cli.comparison import AttemptFacts, compare, fold_side
from niceeval_cli.reports.compare_output import print_comparison, side_text, write_comparison
from niceeval_cli.store import RunRow

P, F = AttemptState.PASSED, AttemptState.FAILED


def run(run_id: str) -> RunRow:
    return RunRow(id=run_id, started_at="2026-01-01T00:00:00Z", ended_at=None, status=RunStatus.FINISHED, argv=(),
                  niceeval_version=None, exit_code=0, config_file=None, experiments=("x",))


def pas(state: AttemptState, eval_id: str = "e", ordinal: int = 0, case_id: str | None = None) -> AttemptFacts:
    return AttemptFacts("x", eval_id, EvalKind.PASS, state, ordinal=ordinal, case_id=case_id)


def sco(score: float, gate: GateState = GateState.NONE, state: AttemptState = AttemptState.SCORED) -> AttemptFacts:
    return AttemptFacts("x", "s", EvalKind.SCORE, state, gate=gate, score=score, max_score=10.0)


def test_side_text_says_verdict_score_gate_and_pass_count() -> None:
    assert side_text(None) == "—"
    assert side_text(fold_side([pas(P)])) == "passed"
    assert side_text(fold_side([pas(P, ordinal=0), pas(F, ordinal=1)])) == "passed (1/2 passed)"
    assert side_text(fold_side([sco(7.0)])) == "7/10"
    assert side_text(fold_side([sco(4.5, GateState.FAILED)])) == "gate failed 4.50/10"
    assert side_text(fold_side([sco(3.0, state=AttemptState.UNRANKABLE)])) == "unrankable 3/10"


def test_terminal_names_cases_and_escapes_control_characters() -> None:
    result = CompareResult(run("B"), run("N"), compare([pas(P, "ev\x1b[31m", case_id="c1")],
                                                       [pas(F, "ev\x1b[31m", case_id="c1")]))
    out = io.StringIO()
    print_comparison(Console(file=out, width=200), result)
    text = out.getvalue()
    assert "\x1b" not in text and "\\x1b[31m[c1]" in text
    assert "Regressed (1)" in text


def test_machine_formats_keep_the_stored_text_unchanged() -> None:
    result = CompareResult(run("B"), run("N"), compare([pas(P, "ev\x1b")], [pas(F, "ev\x1b")]))
    out = io.StringIO()
    write_comparison(out, result, "ndjson")
    assert json.loads(out.getvalue().splitlines()[0])["eval_id"] == "ev\x1b"


def test_terminal_shows_a_pass_rate_change_even_when_the_result_is_the_same() -> None:
    base = [pas(P, ordinal=0), pas(P, ordinal=1), pas(P, ordinal=2)]
    new = [pas(P, ordinal=0), pas(F, ordinal=1), pas(F, ordinal=2)]
    result = CompareResult(run("B"), run("N"), compare(base, new))
    assert result.comparison.pairs[0].cls.value == "unchanged"  # pass_rule "any": still passed
    out = io.StringIO()
    print_comparison(Console(file=out, width=200), result)
    assert "Same result, pass rate changed (1)" in out.getvalue()
    assert "passed (3/3 passed) → passed (1/3 passed)" in out.getvalue()
