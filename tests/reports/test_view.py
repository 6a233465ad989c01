"""`niceeval view`: ordering, collapsing, filters, paging, one attempt in full, output modes, safety."""

from __future__ import annotations

import re
import threading

import pytest

from niceeval_cli._states import AssertionState, AttemptState, GateState, Role, RunStatus
from niceeval_cli.store import Store, StoreError
from tests.support import view_scenarios as scenarios
from tests.support.view_builders import (
    Runs,
    judge_result,
    normalise,
    plain_console,
    render,
    result,
    show_view,
    tty_console,
)


def headings(text: str) -> list[str]:
    """The expanded attempts' first words and slots, in the order printed."""
    return re.findall(r"^([A-Z][A-Z ]+[A-Z])  (\S+ · \S+)", text, flags=re.M)


def result_states(text: str, slot: str) -> list[str]:
    block = text.split(slot, 1)[1].split("\n\n", 1)[0]
    return re.findall(r"^  [!✗?✓·] (\w+)", block, flags=re.M)


def test_attempts_come_worst_first_errored_failed_unrankable_gate_failed(runs: Runs) -> None:
    run = runs.begin(["a", "b"])
    plan = [
        ("a", "e/pass", AttemptState.PASSED, {}),
        ("b", "e/gate", AttemptState.SCORED, {"score": 1.0, "max_score": 2.0, "unavailable_weight": 0.0,
                                              "gate": GateState.FAILED}),
        ("a", "e/failed", AttemptState.FAILED, {}),
        ("b", "e/unrankable", AttemptState.UNRANKABLE, {"score": 1.0, "max_score": 3.0,
                                                        "unavailable_weight": 2.0}),
        ("a", "e/errored", AttemptState.ERRORED, {"reason": "timeout"}),
    ]
    for experiment, eval_id, state, changes in plan:
        runs.seal(runs.attempt(run, eval_id, state, experiment=experiment, **changes))
    runs.finish(run)
    assert headings(render(runs.path)) == [
        ("ERRORED", "a · e/errored#0"), ("FAILED", "a · e/failed#0"), ("UNRANKABLE", "b · e/unrankable#0"),
        ("GATE FAILED", "b · e/gate#0"),
    ]


def test_assertions_come_errored_then_failed_then_unavailable_then_the_rest_in_registration_order(
    runs: Runs,
) -> None:
    run = runs.begin()
    attempt = runs.attempt(run, "e/mixed", AttemptState.ERRORED, reason="assertion-errored")
    states = ["matched", "unavailable", "mismatched", "errored", "below", "measured", "mismatched"]
    runs.seal(attempt, *(
        result(attempt, i, s, f"r{i}", measurement=0.5 if s in ("below", "measured") else None,
               threshold=0.9 if s == "below" else None, match_kind="score" if s in ("below", "measured")
               else "boolean", reason="why" if s in ("unavailable", "errored") else None)
        for i, s in enumerate(states)
    ))
    runs.finish(run)
    text = render(runs.path)
    assert result_states(text, "e/mixed#0") == [
        "errored", "mismatched", "below", "mismatched", "unavailable", "matched", "measured",
    ]
    labels = re.findall(r"^  [!✗?✓·] \w+ +(r\d)", text, flags=re.M)
    assert labels == ["r3", "r2", "r4", "r6", "r1", "r0", "r5"]


def test_passed_attempts_take_one_line_and_all_expands_them(runs: Runs) -> None:
    scenarios.pass_style(runs)
    collapsed = render(runs.path)
    assert re.search(r"^passed  exp · support/greeting#0  @<ID\d>$", collapsed, flags=re.M)
    assert "Says hello" not in collapsed
    expanded = render(runs.path, expand=True)
    assert "PASSED  exp · support/greeting#0" in expanded
    assert "✓ matched      Says hello" in expanded


def test_measurement_shows_value_against_threshold_and_scoring_shows_contribution_of_weight(
    runs: Runs,
) -> None:
    run = runs.begin()
    attempt = runs.attempt(run, "e/score", AttemptState.UNRANKABLE, score=5.0, max_score=65.0,
                           unavailable_weight=50.0, reason="judge-timeout")
    runs.seal(
        attempt,
        result(attempt, 0, "below", "Tone", measurement=0.62, threshold=0.8, match_kind="score",
               role=Role.GATE_SCORE, weight=10.0, contribution=6.2),
        result(attempt, 1, "met", "Facts", measurement=0.92, threshold=0.8, match_kind="score"),
        result(attempt, 2, "unavailable", "Done", role=Role.SCORE, weight=50.0, reason="judge-timeout"),
        result(attempt, 3, "mismatched", "Polite", role=Role.SCORE, weight=5.0, contribution=0.0),
    )
    runs.finish(run)
    text = render(runs.path)
    assert "Tone  0.62 < 0.80 required  6.2 / 10  [gate]" in text
    assert "Facts  0.92 ≥ 0.80 required" in text
    assert "Done  — / 50" in text  # unknown keeps its weight and earns a dash, never 0
    assert "Polite  0 / 5" in text
    assert "5 of 65 · 50 unavailable · not rankable" in text


def test_unavailable_and_errored_entries_show_their_reason_and_judge_entries_their_explanation(
    runs: Runs,
) -> None:
    scenarios.judge(runs)
    text = render(runs.path)
    assert "judge: N: The reply talks about shipping, not refunds." in text
    assert "judge: Y: Warm and polite throughout." in text  # a passing judge entry still explains
    assert text.count("0.00 < 0.80 required") == 1  # not repeated from the stored explanation


def test_header_folds_evals_and_reports_attempt_pass_rate_per_experiment(runs: Runs) -> None:
    scenarios.multi_attempt(runs)
    text = render(runs.path)
    assert "evals     2 of 2 passed" in text  # pass@N: the flaky eval passed once
    assert "attempts  3 of 5 passed (60%)" in text
    assert "passed  exp · support/flaky  passed under pass_rule any: 1/3 passed · 33% [6%, 79%] · flaky" in text


def test_header_score_totals_say_earned_of_max_unavailable_and_rankability(runs: Runs) -> None:
    scenarios.score_style(runs)
    text = render(runs.path)
    assert "score     60 of 120 · 50 unavailable · not rankable (1 unrankable)" in text
    # The evals are worth 100 and 10: their spread is normalised (score / max) and says so.
    assert "mean 75% · min 70% · max 80% of each eval's max (maxima differ) over 2 rankable attempts" in text
    assert "gate failed in 1" in text


def test_filters_narrow_by_experiment_eval_prefix_and_state(runs: Runs) -> None:
    run = runs.begin(["a", "b"])
    for experiment in ("a", "b"):
        for eval_id, state in (("x/one", AttemptState.FAILED), ("x/two", AttemptState.PASSED),
                               ("y/one", AttemptState.ERRORED)):
            runs.seal(runs.attempt(run, eval_id, state, experiment=experiment))
    runs.finish(run)
    text = render(runs.path, experiments=["b"], eval_prefixes=["x/"])
    assert "Experiment a" not in text
    assert headings(text) == [("FAILED", "b · x/one#0")]
    assert "passed  b · x/two#0" in text
    assert "shown: --experiment b --eval x/" in text
    only_errored = render(runs.path, states=["errored"])
    assert headings(only_errored) == [("ERRORED", "a · y/one#0"), ("ERRORED", "b · y/one#0")]
    assert "passed" not in only_errored.split("Attempts, worst first")[1]


def test_an_unknown_state_filter_is_a_store_error(runs: Runs) -> None:
    scenarios.pass_style(runs)
    with pytest.raises(StoreError, match="Unknown attempt state 'broken'"):
        render(runs.path, states=["broken"])


def test_a_long_run_is_paged_and_says_how_many_attempts_it_left_out(runs: Runs) -> None:
    run = runs.begin()
    for n in range(5):
        runs.seal(runs.attempt(run, f"e/fail{n}", AttemptState.FAILED))
    for n in range(5):
        runs.seal(runs.attempt(run, f"e/ok{n}"))
    runs.finish(run)
    text = render(runs.path, limit=3)
    assert "Attempts, worst first (3 of 10 shown)" in text
    assert "… 7 more attempt(s) not shown" in text
    assert "10 attempts: 5 failed, 5 passed" in text  # the header still counts everything


def test_one_attempt_in_full_shows_evidence_explanation_audit_usage_timings_and_source(runs: Runs) -> None:
    run = runs.begin()
    attempt = runs.attempt(run, "support/clear", AttemptState.FAILED, judge_tokens=140)
    long = "x" * 5000
    runs.seal(attempt, judge_result(attempt, 0, "below", "Clear answer", role=Role.GATE, measurement=0.0,
                                    threshold=0.8, explanation=f"N: {long}"))
    runs.finish(run)
    text = render(runs.path, f"@{attempt.id[:20]}")  # a unique prefix is enough
    assert text.startswith("Attempt <ID1>  FAILED")
    assert f"N: {long}" in text  # in full: no trimming
    assert '"output": "We ship in 3 days."' in text  # evidence, pretty-printed
    assert "judge audit  model: judge-1" in text
    assert "── system ──" in text and "You grade.\n" in text and "Be fair." in text
    assert "input 120 · output 30 · judge 140 tokens" in text
    assert "duration     250 ms" in text
    assert "source       evals/support.py:10" in text
    assert "judge tokens 140" in text


def test_an_attempt_id_without_the_at_sign_is_shown_too(runs: Runs) -> None:
    scenarios.pass_style(runs)
    attempt = runs.sealed[next(iter(runs.sealed))][1]
    assert render(runs.path, attempt.id).startswith("Attempt <ID1>  FAILED")


def test_unknown_and_ambiguous_ids_are_store_errors_naming_the_id(runs: Runs) -> None:
    scenarios.multi_attempt(runs)
    with pytest.raises(StoreError, match="No run with id 'NOPE'"):
        render(runs.path, "NOPE")
    with pytest.raises(StoreError, match="No attempt with id 'NOPE'"):
        render(runs.path, "@NOPE")
    with pytest.raises(StoreError, match="ambiguous"):
        render(runs.path, "@0")


def test_hostile_text_never_reaches_a_terminal_as_control_sequences(runs: Runs) -> None:
    scenarios.hostile(runs)
    console, buffer = tty_console(120)
    show_view(runs.path, None, console=console)
    out = buffer.getvalue()
    for raw in ("\x1b[2J", "\x1b[31m in", "\x1b]0;", "\x07", "\r", "\u202e"):
        assert raw not in out
    assert "\\x1b[2J" in out and "\\r" in out and "\\u202e" in out
    assert "\x1b[" in out  # rich's own colours are there: this is the TTY mode


def test_no_color_in_a_terminal_prints_no_escape_sequences_at_all(runs: Runs) -> None:
    scenarios.hostile(runs)
    console, buffer = tty_console(120, no_color=True)
    show_view(runs.path, None, console=console)
    out = buffer.getvalue()
    assert "\x1b" not in out
    assert "╭" not in out  # no boxes either
    assert "FAILED  exp · support/hostile#0" in out


def test_long_text_is_trimmed_with_a_marker_saying_how_much_was_left_out(runs: Runs) -> None:
    scenarios.hostile(runs)
    text = render(runs.path)
    assert "… [+9600 chars]" in text


def test_a_terminal_wraps_long_lines_at_its_width_and_keeps_the_indent(runs: Runs) -> None:
    scenarios.hostile(runs)
    console, buffer = tty_console(60, no_color=True)
    show_view(runs.path, None, console=console)
    lines = buffer.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 60
    words = [line for line in lines if line.strip().startswith("word word")]
    assert len(words) > 5 and all(line.startswith("      word") for line in words)


def test_chinese_text_lines_up_by_terminal_cells(runs: Runs) -> None:
    from rich.cells import cell_len

    scenarios.hostile(runs)
    for console, buffer in (plain_console(), tty_console(100, no_color=True)):
        show_view(runs.path, None, console=console)
        passed = [line for line in buffer.getvalue().splitlines() if line.startswith("passed")]
        assert len(passed) == 2
        columns = {cell_len(line[: line.index("@")]) for line in passed}
        assert len(columns) == 1, passed


def test_view_reads_while_a_run_is_writing(runs: Runs) -> None:
    run = runs.begin()
    runs.seal(runs.attempt(run, "e/first", AttemptState.FAILED))
    text = render(runs.path)  # the writer's connection is open, the run still `running`
    assert "running" in text and "still running" in text
    assert "FAILED  exp · e/first#0" in text

    errors: list[BaseException] = []

    def read() -> None:
        try:
            for _ in range(20):
                render(runs.path)
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    reader = threading.Thread(target=read)
    reader.start()
    for n in range(40):
        runs.seal(runs.attempt(run, f"e/more{n}"))
    reader.join()
    assert errors == []
    runs.finish(run, 1, status=RunStatus.FINISHED)
    assert "41 attempts: 1 failed, 40 passed" in render(runs.path)


def test_a_run_without_attempts_says_so(runs: Runs) -> None:
    run = runs.begin(["exp"])
    runs.finish(run, 3, status=RunStatus.SETUP_ERROR)
    text = render(runs.path)
    assert "setup-error · exit 3 (setup error)" in text
    assert "no attempts (not dispatched, or filtered out)" in text
    assert "No attempts were sealed in this run." in text


def test_no_runs_yet_is_a_store_error(tmp_path) -> None:
    Store.open(tmp_path / "r.db").close()
    with pytest.raises(StoreError, match="No runs yet"):
        render(tmp_path / "r.db")


def test_view_never_writes_to_the_store(runs: Runs) -> None:
    scenarios.pass_style(runs)
    before = runs.path.stat().st_mtime_ns
    console, _ = plain_console()
    show_view(runs.path, None, console=console)
    assert runs.path.stat().st_mtime_ns == before
    assert normalise("01ARZ3NDEKTSV4RRFFQ69G5FAV x") == "<ID1> x"


def test_every_assertion_state_has_a_mark() -> None:
    from niceeval_cli.reports.viewmodels.attempt import MARKS

    assert set(MARKS) == set(AssertionState)
