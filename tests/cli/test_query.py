"""`niceeval query [runs|attempts|assertions]` (cli.md): targets, filters, `--run`, formats,
severity-first order, read-only `--sql`, and Unicode that round-trips."""

from __future__ import annotations

import csv
import io
import json

import pytest

SEVERITY = """
from niceeval_cli import Fact, NumericMaterial, define_eval, define_score_eval
from niceeval_cli.expect import equals, satisfies, similarity


@define_eval()
def z_passed(t):
    t.check(1, equals(1)).label("z matched")


@define_eval()
def y_failed(t):
    t.check(1, equals(1)).label("y matched")
    t.check(Fact.unavailable("gone"), equals(1)).label("y unavailable record")
    t.check("abcd", similarity("wxyz").at_least(0.9)).label("y below")
    t.check(1, equals(2)).label("y mismatched")


@define_eval()
def x_errored(t):
    t.check(1, equals(2)).label("x mismatched")
    t.check(1, satisfies("explodes", lambda v: 1 / 0)).label("x errored")


@define_score_eval()
def w_unrankable(t):
    t.check(1, equals(1)).score(1).label("w matched")
    t.score(NumericMaterial.unavailable("unknown"), weight=3).label("w unavailable")


@define_score_eval()
def v_gate_failed(t):
    t.check(1, equals(1)).score(1).label("v matched")
    t.check(1, equals(2)).gate().label("v gate mismatched")


@define_score_eval()
def u_scored(t):
    t.check("abcd", similarity("abcd")).score(1).label("u measured")
"""

ATTEMPT_SEVERITY = {"errored": 0, "failed": 1, "unrankable": 2}
ASSERTION_SEVERITY = {"errored": 0, "mismatched": 1, "below": 1, "unavailable": 2}



@pytest.fixture
def ran(project, made_once):
    """Two experiments × six evals, one attempt in every state; run once (per worker: each test
    gets its own copy of the store)."""
    files = {"niceeval.toml": '[experiments.b]\nmodel = "m"\n[experiments.a]\nmodel = "m"\n', "evals/sev.py": SEVERITY}
    [run] = made_once.place(project, files, ("run",))
    assert run.exit_code == 1
    return project


def attempt_rank(row: dict) -> tuple:
    severity = ATTEMPT_SEVERITY.get(row["state"], 3 if row["gate"] == "failed" else 4)
    return (severity, row["experiment_id"], row["eval_id"], row["ordinal"])


def test_attempts_are_ordered_by_severity_then_experiment_eval_and_ordinal(ran):
    rows = ran.attempts()
    assert len(rows) == 12
    assert [(r["experiment_id"], r["eval_id"].split("/")[1]) for r in rows] == [
        ("a", "x_errored"), ("b", "x_errored"),
        ("a", "y_failed"), ("b", "y_failed"),
        ("a", "w_unrankable"), ("b", "w_unrankable"),
        ("a", "v_gate_failed"), ("b", "v_gate_failed"),
        ("a", "u_scored"), ("a", "z_passed"), ("b", "u_scored"), ("b", "z_passed"),
    ]


def test_assertions_are_ordered_by_their_own_severity_across_attempts(ran):
    rows = ran.assertions()
    attempt_order = {a["id"]: i for i, a in enumerate(ran.attempts())}
    keys = [(ASSERTION_SEVERITY.get(r["state"], 3), attempt_order[r["attempt_id"]], r["ordinal"]) for r in rows]
    assert keys == sorted(keys)
    assert [r["state"] for r in rows[:2]] == ["errored", "errored"]
    assert {r["state"] for r in rows[2:8]} == {"mismatched", "below"}
    # inside one severity: attempt order (x before y), then registration order (below before mismatched)
    failing_a = [r["label"] for r in rows if r["experiment_id"] == "a" and r["state"] in ("mismatched", "below")]
    assert failing_a == ["x mismatched", "y below", "y mismatched", "v gate mismatched"]


def test_state_failed_is_mismatched_plus_below_for_assertions(ran):
    rows = ran.assertions("--state", "failed")
    assert {r["state"] for r in rows} == {"mismatched", "below"}
    assert len(rows) == 8


def test_state_filter_for_attempts_and_repeatable_states(ran):
    assert {r["state"] for r in ran.attempts("--state", "failed")} == {"failed"}
    rows = ran.attempts("--state", "errored", "--state", "unrankable")
    assert sorted(r["state"] for r in rows) == ["errored", "errored", "unrankable", "unrankable"]
    assert [r["state"] for r in ran.assertions("--state", "unavailable")] == ["unavailable"] * 4


def test_experiment_eval_and_limit_filters(ran):
    rows = ran.attempts("--experiment", "b")
    assert {r["experiment_id"] for r in rows} == {"b"}
    assert len(rows) == 6
    rows = ran.assertions("--eval", "sev/y_", "--experiment", "a")
    assert sorted(r["label"] for r in rows) == sorted(["y matched", "y unavailable record", "y below", "y mismatched"])
    worst = ran.assertions("--limit", "3")
    assert len(worst) == 3
    assert worst == ran.assertions()[:3]


def test_targets_and_default_target_is_assertions(ran):
    runs = ran.query("runs")
    assert len(runs) == 1
    assert {"id", "started_at", "ended_at", "status", "argv", "niceeval_version", "exit_code"} <= set(runs[0])
    assert runs[0]["status"] == "finished"
    assert runs[0]["exit_code"] == 1
    default = ran.cli("query", "--format", "json")
    assert json.loads(default.stdout) == ran.assertions()


ATTEMPT_COLUMNS = {
    "id", "run_id", "experiment_id", "eval_id", "ordinal", "kind", "state", "reason", "score", "max_score",
    "unavailable_weight", "partial_score", "gate", "stop_cause", "error", "fingerprint", "started_at",
    "ended_at", "duration_ms", "input_tokens", "output_tokens", "judge_tokens", "relation",
}
ASSERTION_COLUMNS = {
    "id", "attempt_id", "ordinal", "key", "label", "group_name", "role", "weight", "contribution", "state",
    "measurement", "threshold", "reason", "explanation", "match_name", "match_config", "evidence",
    "source_file", "source_line", "or_stop", "judge_audit", "judge_tokens",
}


def test_rows_carry_the_contract_columns(ran):
    assert ATTEMPT_COLUMNS <= set(ran.attempts()[0])
    assert ASSERTION_COLUMNS <= set(ran.assertions()[0])


def test_default_run_is_the_latest_and_run_all_spans_every_run(ran):
    first_run = ran.query("runs")[0]["id"]
    assert ran.run("--rerun-all", "sev/z_").exit_code == 0
    latest = ran.query("runs", "--limit", "1")[0]["id"]
    assert latest != first_run
    assert {r["run_id"] for r in ran.attempts()} == {latest}
    assert len(ran.attempts()) == 2
    assert len(ran.attempts("--run", "all")) == 14
    assert len(ran.attempts("--run", first_run)) == 12
    assert len(ran.attempts("--run", first_run[:20])) == 12  # a unique prefix is enough
    assert len(ran.query("runs", "--run", "all")) == 2


def test_unknown_run_id_is_a_usage_error(ran):
    result = ran.cli("query", "attempts", "--run", "NO-SUCH-RUN", "--format", "json")
    assert result.exit_code == 2
    assert "NO-SUCH-RUN" in result.stderr


def test_ndjson_is_one_object_per_line_and_the_default_when_not_a_tty(ran):
    expected = ran.attempts()
    explicit = ran.cli("query", "attempts", "--format", "ndjson")
    default = ran.cli("query", "attempts")
    assert [json.loads(line) for line in explicit.stdout.splitlines()] == expected
    assert default.stdout == explicit.stdout


def test_csv_has_a_header_row_then_rows(ran):
    result = ran.cli("query", "attempts", "--format", "csv")
    assert result.exit_code == 0
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    expected = ran.attempts()
    assert len(rows) == len(expected)
    assert [r["id"] for r in rows] == [r["id"] for r in expected]
    assert [r["state"] for r in rows] == [r["state"] for r in expected]


def test_table_format_lists_the_rows(ran):
    result = ran.cli("query", "runs", "--format", "table")
    assert result.exit_code == 0
    assert "status" in result.stdout


def test_table_format_shows_attempt_values(ran):
    result = ran.cli("query", "attempts", "--format", "table")
    assert result.exit_code == 0
    assert "x_errored" in result.stdout
    assert "unrankable" in result.stdout


def test_unknown_format_or_target_is_a_usage_error(ran):
    assert ran.cli("query", "attempts", "--format", "yaml").exit_code == 2
    assert ran.cli("query", "things", "--format", "json").exit_code == 2


def test_sql_runs_a_read_only_select(ran):
    result = ran.cli(
        "query", "--format", "json", "--sql",
        "SELECT state, count(*) AS n FROM attempts GROUP BY state ORDER BY state",
    )
    assert result.exit_code == 0
    assert json.loads(result.stdout) == [
        {"state": "errored", "n": 2}, {"state": "failed", "n": 2}, {"state": "passed", "n": 2},
        {"state": "scored", "n": 4}, {"state": "unrankable", "n": 2},
    ]


@pytest.mark.parametrize(
    "statement",
    [
        "DELETE FROM assertion_results",
        "UPDATE attempts SET state = 'passed'",
        "INSERT INTO runs (id) VALUES ('x')",
        "DROP TABLE attempts",
        "WITH x AS (SELECT 1) DELETE FROM runs",
        "SELECT 1; DELETE FROM runs",
        "PRAGMA user_version = 99",
        "ATTACH DATABASE 'other.db' AS other",
    ],
)
def test_sql_that_writes_is_rejected_with_exit_2_and_changes_nothing(ran, statement):
    before = (ran.attempts("--run", "all"), ran.assertions("--run", "all"), ran.query("runs"))
    result = ran.cli("query", "--format", "json", "--sql", statement)
    assert result.exit_code == 2
    assert result.stderr
    assert "Traceback" not in result.stderr
    assert (ran.attempts("--run", "all"), ran.assertions("--run", "all"), ran.query("runs")) == before


def test_invalid_sql_is_a_usage_error(ran):
    result = ran.cli("query", "--format", "json", "--sql", "SELECT * FROM no_such_table")
    assert result.exit_code == 2
    assert "no_such_table" in result.stderr


def test_chinese_eval_names_labels_and_keys_round_trip(project):
    project.write("niceeval.toml", "[experiments.\"本地\"]\nmodel = \"m\"\n")
    project.write("evals/客服.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals, includes

        @define_eval(name="退款窗口")
        def refund(t):
            t.check("退款期限是 30 天", includes("30 天")).label("说明了退款期限").key("退款-期限")
            with t.group("语气"):
                t.check("您好", equals("你好")).label("礼貌问候")

        @define_eval(name="配送")
        def shipping(t):
            pass
    """)
    assert project.run().exit_code == 1
    rows = {r["label"]: r for r in project.assertions()}
    assert rows["说明了退款期限"]["key"] == "退款-期限"
    assert rows["说明了退款期限"]["eval_id"] == "客服/退款窗口"
    assert rows["说明了退款期限"]["experiment_id"] == "本地"
    assert rows["礼貌问候"]["group_name"] == "语气"
    assert rows["礼貌问候"]["evidence"] == "您好"  # a JSON column is a JSON value, not text
    assert {a["eval_id"] for a in project.attempts()} == {"客服/退款窗口", "客服/配送"}
    ndjson = project.cli("query", "assertions", "--format", "ndjson").stdout
    assert "说明了退款期限" in ndjson  # not \\u-escaped
    csv_rows = list(csv.DictReader(io.StringIO(project.cli("query", "assertions", "--format", "csv").stdout)))
    assert {r["label"] for r in csv_rows} == {"说明了退款期限", "礼貌问候"}
    filtered = project.assertions("--eval", "客服/退款", "--experiment", "本地", "--state", "failed")
    assert [r["label"] for r in filtered] == ["礼貌问候"]
