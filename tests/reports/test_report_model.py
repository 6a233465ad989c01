"""The report's view-model (pure): matrix order, dataset cases grouped under their eval, payload."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from niceeval_cli._states import AttemptState, EvalKind, GateState, RunStatus
from niceeval_cli.app.report import AttemptTexts, ReportData
from niceeval_cli.comparison import AttemptFacts
from niceeval_cli.reports.html import render_page
from niceeval_cli.reports.html._details import Limits
from niceeval_cli.reports.html._model import build_page
from niceeval_cli.store import RunRow

from .conftest import PAYLOAD

RUN = RunRow(id="R1", started_at="2026-01-01T00:00:00Z", ended_at="2026-01-01T00:01:00Z",
             status=RunStatus.FINISHED, argv=("run",), niceeval_version="0.1.0", exit_code=1, config_file=None,
             experiments=("x",))


def attempt(n: int, eval_id: str, state: str, case_id: str | None = None, kind: str = "pass", **kw: Any) -> dict:
    row = {"id": f"A{n}", "run_id": "R1", "experiment_id": "x", "eval_id": eval_id, "ordinal": 0, "kind": kind,
           "state": state, "gate": None, "score": None, "max_score": None, "unavailable_weight": None,
           "partial_score": None, "reason": None, "duration_ms": 12.0, "case_id": case_id,
           "fingerprint_parts": '{"eval_options": {"tags": ["t1"]}, "model": "m"}', "relation": "origin"}
    row.update(kw)
    return row


RESULT_COLUMNS = ["key", "label", "state", "role", "weight", "contribution", "measurement", "threshold"]


def data(rows: list[dict], results: dict[str, list[list[Any]]] | None = None) -> ReportData:
    """Rows as the store gives them; each attempt's results (RESULT_COLUMNS) served by `details`."""
    facts = [AttemptFacts(experiment_id=r["experiment_id"], eval_id=r["eval_id"], kind=EvalKind(r["kind"]),
                          state=AttemptState(r["state"]), gate=None if r["gate"] is None else GateState(r["gate"]),
                          score=r["score"], max_score=r["max_score"], case_id=r["case_id"],
                          duration_ms=r["duration_ms"]) for r in rows]
    if results is None:
        results = {r["id"]: [["k", "a label", "matched" if r["state"] == "passed" else "mismatched", "gate", None,
                              None, None, None]] for r in rows}

    @contextmanager
    def details(limit: int) -> Iterator[Any]:
        yield lambda attempt_id: AttemptTexts(attempt_id, {}, RESULT_COLUMNS, results.get(attempt_id, []))

    return ReportData(store_path=Path("results.db"), run=RUN, attempts=rows, facts=facts,
                      details=details)


def payload(page: Any) -> dict[str, Any]:
    """The page's data as the page script parses it."""
    return json.loads("".join(page.payload()))


def test_cases_are_grouped_under_their_eval_with_a_case_pass_rate() -> None:
    rows = [attempt(1, "qa", "failed", "c2"), attempt(2, "qa", "passed", "c1"), attempt(3, "qa", "passed", "c3"),
            attempt(4, "plain", "passed")]
    page = build_page(data(rows))
    qa = next(r for r in page.matrix if r.eval_id == "qa")
    assert [c.case_id for c in qa.cases] == ["c2", "c1", "c3"]  # worst case first
    assert qa.cells[0].text == "2/3 cases" and qa.cells[0].word == "failed"
    assert [r.eval_id for r in page.matrix] == ["qa", "plain"]


def test_matrix_rows_are_worst_first() -> None:
    rows = [attempt(1, "a_ok", "passed"), attempt(2, "b_err", "errored", reason="exception"),
            attempt(3, "c_fail", "failed"), attempt(4, "d_unknown", "errored", reason="evidence-unavailable")]
    page = build_page(data(rows))
    assert [r.eval_id for r in page.matrix] == ["b_err", "d_unknown", "c_fail", "a_ok"]
    unknown = next(r for r in page.matrix if r.eval_id == "d_unknown")
    assert unknown.cells[0].word == "unavailable"


def test_rendered_matrix_shows_case_rows_and_attempt_case_ids() -> None:
    rows = [attempt(1, "qa", "failed", "case-7"), attempt(2, "qa", "passed", "case-8")]
    html = render_page(build_page(data(rows)))
    assert 'data-case="case-7"' in html and "(2 cases)" in html
    assert "case case-7" in html


def test_an_eval_of_one_case_says_so_in_the_singular() -> None:
    html = render_page(build_page(data([attempt(1, "qa", "passed", "only"), attempt(2, "other", "failed")])))
    assert "qa <span class=\"dim\">(1 case)</span>" in html and "(1 cases)" not in html
    assert "show the case (passed)" in html


def test_payload_sends_each_distinct_value_once() -> None:
    rows = [attempt(i, f"e{i}", "passed") for i in range(50)]
    sent = payload(build_page(data(rows)))
    assert sent["values"].count("a label") == 1
    label = sent["columns"].index("label")
    first = sent["attempts"][0]["results"][0]
    assert sent["values"][first[label] - 1] == "a label"


def test_payload_keeps_zero_and_empty_apart() -> None:
    rows = [attempt(1, "s", "scored", kind="score", score=0.0, max_score=5.0, gate="none")]
    d = data(rows, {"A1": [["k", None, "mismatched", "score", 5.0, 0.0, None, None]]})
    sent = payload(build_page(d))
    codes = sent["attempts"][0]["results"][0]
    columns = sent["columns"]
    assert codes[columns.index("label")] == 0  # empty
    assert sent["values"][codes[columns.index("contribution")] - 1] == 0.0  # a real zero


def test_score_summary_never_reads_as_a_complete_zero() -> None:
    rows = [attempt(1, "s", "unrankable", kind="score", score=45.0, max_score=100.0, unavailable_weight=50.0,
                    gate="none")]
    page = build_page(data(rows))
    assert page.attempts[0].score == "45 of 100 · 50 unavailable · not rankable"
    assert "not rankable" in (page.experiments[0].score or "")


def test_the_store_read_cuts_long_texts_and_says_how_much_was_left_out(sealed) -> None:
    """SQLite cuts each long text to the limit and marks it as the terminal does (`… [+N chars]`)."""
    from niceeval_cli.store import Store
    from niceeval_cli.store.report_reads import attempt_rows, attempt_texts

    with Store.open(sealed.store, readonly=True) as store:
        rows = attempt_rows(sealed.store, store.run_scope(sealed.new))
    failed = next(r for r in rows if r["eval_id"] == "agent/chat")
    with attempt_texts(sealed.store, 12) as read:
        texts = read(failed["id"])
    explanation = texts.results[0][texts.result_columns.index("explanation")]
    whole = "expected the refund window, got " + PAYLOAD
    assert explanation == whole[:12] + f"… [+{len(whole) - 12} chars]"
    assert texts.turns[1]["message"].startswith("Refunds with… [+")
    assert texts.turns[0]["events"][0]["name"] == "lookup_policy"
    assert "message" not in rows[0] and "error" not in rows[0]  # the short rows leave long texts out


def test_an_attempt_stops_at_its_budget_and_counts_what_it_left_out() -> None:
    rows = [attempt(1, "e", "failed")]
    long = [["k", "x" * 500 + str(i), "mismatched", "gate", None, None, None, None] for i in range(10)]
    page = build_page(data(rows, {"A1": long}), limits=Limits(text=1_000, attempt=2_000, page=1_000_000))
    sent = payload(page)
    assert len(sent["attempts"][0]["results"]) == 3 and sent["attempts"][0]["more_results"] == 7


def test_the_page_embeds_details_worst_first_until_its_budget_is_spent() -> None:
    rows = [attempt(i, f"e{i}", "failed" if i < 2 else "passed") for i in range(10)]
    texts = {f"A{i}": [["k", "x" * 900 + str(i), "matched", "gate", None, None, None, None]] for i in range(10)}
    sent = payload(build_page(data(rows, texts), limits=Limits(text=1_000, attempt=2_000, page=2_500)))
    kept = [a for a in sent["attempts"] if not a.get("omitted")]
    assert [a["id"] for a in kept] == ["A0", "A1", "A2"]  # the rows' order: worst first
    assert sent["omitted"] == 7 and len(sent["attempts"]) == 10


def test_a_run_past_the_list_and_matrix_limits_counts_every_attempt_and_lists_the_worst() -> None:
    rows = [attempt(1, "bad", "failed"), *(attempt(n, f"ok{n}", "passed") for n in range(2, 6))]
    page = build_page(data(rows), listed=2, matrix_max=3)
    assert [a.eval_id for a in page.attempts] == ["bad", "ok2"] and page.unlisted == 3
    assert len(payload(page)["attempts"]) == 2  # the details of the listed attempts only
    assert [r.eval_id for r in page.matrix][:1] == ["bad"] and len(page.matrix) == 3 and page.matrix_left_out == 2
    html = render_page(page)
    assert "the first 2 of 5 attempts" in html and "the other 3 (the last passed ones)" in html
    assert "2 more eval rows" in html and f"niceeval view {RUN.id}" in html
    assert "<dt>attempts</dt><dd>5" in html  # the header counts every attempt
