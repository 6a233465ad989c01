"""`niceeval compare` on two real stored runs (conftest.py): classes, formats, exit codes."""

from __future__ import annotations

import csv
import io
import json

import pytest

EXPECTED = {
    ("a", "suite/regressed"): "regressed",
    ("a", "suite/score_down"): "regressed",
    ("a", "suite/gate_fails"): "regressed",
    ("a", "suite/flaky"): "regressed",
    ("a", "suite/fixed"): "fixed",
    ("a", "suite/undecided"): "undecided",
    ("a", "suite/decided"): "decided",
    ("a", "suite/still_failing"): "still-failing",
    ("a", "suite/by_experiment"): "still-failing",
    ("a", "suite/unchanged"): "unchanged",
    ("b", "suite/by_experiment"): "unchanged",
    ("a", "only_new"): "added",
    ("a", "only_base"): "removed",
}


def rows(two_runs, *args: str) -> list[dict]:
    result = two_runs.project.cli("compare", two_runs.base, two_runs.new, "--format", "json", *args)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)["pairs"]


def test_every_pair_gets_its_class(two_runs) -> None:
    got = {(r["experiment_id"], r["eval_id"]): r["class"] for r in rows(two_runs)}
    for key, cls in EXPECTED.items():
        assert got[key] == cls, key
    assert len(got) == 2 * 12  # 10 suite evals + added + removed, in both experiments


def test_rows_come_regressions_first_then_fixed_undecided_and_the_rest(two_runs) -> None:
    order = [r["class"] for r in rows(two_runs)]
    ranks = ["regressed", "fixed", "undecided", "decided", "still-failing", "unchanged", "added", "removed"]
    assert order == sorted(order, key=ranks.index)


def test_repeated_attempts_show_the_pass_rate_change_and_fold_under_their_rule(two_runs) -> None:
    flaky = next(r for r in rows(two_runs) if r["eval_id"] == "suite/flaky" and r["experiment_id"] == "a")
    assert (flaky["base_passed"], flaky["base_attempts"], flaky["new_passed"], flaky["new_attempts"]) == (3, 5, 1, 5)
    assert (flaky["base_state"], flaky["new_state"]) == ("passed", "failed")  # pass_rule 0.6
    assert flaky["changed_keys"] == ["lucky"]


def test_score_rows_carry_both_scores_and_gates(two_runs) -> None:
    by_id = {r["eval_id"]: r for r in rows(two_runs) if r["experiment_id"] == "a"}
    down = by_id["suite/score_down"]
    assert (down["base_score"], down["new_score"], down["new_max_score"]) == (8, 4, 10)
    gate = by_id["suite/gate_fails"]
    assert (gate["base_gate"], gate["new_gate"], gate["changed_keys"]) == ("passed", "failed", ["safe"])


def test_pairs_without_cases_have_a_null_case_id(two_runs) -> None:
    assert {r["case_id"] for r in rows(two_runs)} == {None}


def test_new_defaults_to_the_latest_run(two_runs) -> None:
    result = two_runs.project.cli("compare", two_runs.base, "--format", "json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["pairs"] == rows(two_runs)


def test_ndjson_and_csv_carry_the_same_rows(two_runs) -> None:
    expected = rows(two_runs)
    nd = two_runs.project.cli("compare", two_runs.base, "--format", "ndjson")
    lines = [json.loads(line) for line in nd.stdout.splitlines()]
    assert [{k: v for k, v in line.items() if k != "row"} for line in lines if line["row"] == "pair"] == expected
    out = two_runs.project.cli("compare", two_runs.base, "--format", "csv").stdout
    table = list(csv.DictReader(io.StringIO(out)))
    assert [(r["class"], r["eval_id"]) for r in table] == [(r["class"], r["eval_id"]) for r in expected]
    assert json.loads(table[0]["changed_keys"]) == expected[0]["changed_keys"]


def test_terminal_lists_regressions_first_and_summarises_the_rest_as_counts(two_runs) -> None:
    result = two_runs.project.cli("compare", two_runs.base)
    assert result.exit_code == 0
    out = result.stdout
    assert out.index("Regressed (8)") < out.index("Fixed (2)") < out.index("Undecided now (2)")
    assert "passed (3/5 passed) → failed (1/5 passed)" in out
    assert "8/10 → 4/10" in out
    assert "3 still-failing · 3 unchanged · 2 added · 2 removed" in out
    assert "suite/unchanged" not in out  # counted, not listed


@pytest.mark.parametrize(("flags", "code"), [
    ((), 0),
    (("--fail-on", "regressed"), 1),
    (("--fail-on", "undecided"), 1),
    (("--fail-on", "regressed", "--fail-on", "undecided"), 1),
    (("--fail-on", "removed"), 1),
])
def test_fail_on_exits_1_when_a_pair_is_in_a_chosen_class(two_runs, flags, code) -> None:
    assert two_runs.project.cli("compare", two_runs.base, *flags).exit_code == code


def test_fail_on_passes_when_nothing_is_in_the_class(two_runs) -> None:
    # the new run against itself: every pair unchanged or still failing
    result = two_runs.project.cli("compare", two_runs.new, two_runs.new, "--fail-on", "regressed",
                                  "--fail-on", "undecided")
    assert result.exit_code == 0, result.stdout


def test_ids_may_be_unique_prefixes(two_runs) -> None:
    common = 0
    while two_runs.base[: common + 1] == two_runs.new[: common + 1]:
        common += 1
    base = two_runs.base[: common + 1].lower()
    result = two_runs.project.cli("compare", base, "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["pairs"] == rows(two_runs)


@pytest.mark.parametrize("args", [
    ("NOSUCHRUN",),
    ("01",),  # both runs start with it: ambiguous
    ("{base}", "NOSUCHRUN"),
    ("{base}", "--fail-on", "worse"),
    ("{base}", "--format", "xml"),
    ("--experiments", "a", "zzz"),
    ("--experiments", "a", "a"),
    ("--experiments", "a", "b", "{base}", "{new}"),
    (),
])
def test_unknown_or_ambiguous_ids_and_bad_flags_exit_2_with_one_paragraph(two_runs, args) -> None:
    filled = [a.format(base=two_runs.base, new=two_runs.new) for a in args]
    result = two_runs.project.cli("compare", *filled)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("niceeval: ") or "Usage" in result.stderr


def test_ambiguous_prefix_names_the_matches(two_runs) -> None:
    result = two_runs.project.cli("compare", "01")
    assert "ambiguous" in result.stderr and two_runs.base in result.stderr


def test_experiments_compare_a_as_base_with_b_as_new_in_one_run(two_runs) -> None:
    result = two_runs.project.cli("compare", "--experiments", "a", "b", "--format", "json")
    assert result.exit_code == 0, result.stderr
    got = json.loads(result.stdout)["pairs"]
    assert got[0]["class"] == "fixed" and got[0]["eval_id"] == "suite/by_experiment"
    assert (got[0]["base_experiment_id"], got[0]["experiment_id"]) == ("a", "b")
    assert {r["class"] for r in got[1:]} <= {"unchanged", "still-failing"}


def test_experiments_terminal_shows_totals_and_b_wins_first(two_runs) -> None:
    result = two_runs.project.cli("compare", "--experiments", "a", "b", two_runs.base)
    assert result.exit_code == 0
    out = result.stdout
    # the base run: a fails by_experiment, b passes it
    # over decided evals: the suite's one undecided eval is said beside, not counted
    assert "a: 15 attempts · evals 5/8 passed (62%) · 1 undecided" in out
    assert "b: 15 attempts · evals 6/8 passed (75%) · 1 undecided" in out
    assert out.index("Totals") < out.index("b wins (fixed) (1)")
    assert "suite/by_experiment   failed → passed" in out


def test_experiments_fail_on_regressed_sees_b_losses(two_runs) -> None:
    assert two_runs.project.cli("compare", "--experiments", "b", "a", "--fail-on", "regressed").exit_code == 1
    assert two_runs.project.cli("compare", "--experiments", "a", "b", "--fail-on", "regressed").exit_code == 0
