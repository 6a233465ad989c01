"""The report opened from disk in a real headless Chromium: order, details, filters, safety, no network."""

from __future__ import annotations

import http.server
import os
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

pytestmark = pytest.mark.slow

OK = {"passed", "scored"}


def states(page) -> list[str]:
    return page.eval_on_selector_all("#attempts > li", "els => els.map(e => e.dataset.state)")


def visible_evals(page) -> list[str]:
    return page.eval_on_selector_all("#attempts > li:not([hidden])", "els => els.map(e => e.dataset.eval)")


def test_attempts_read_errored_failed_unavailable_first_and_passed_last(built, open_report) -> None:
    page = open_report(built.report).page
    order = states(page)
    ranks = ["errored", "failed", "unrankable", "gate-failed", "gate-unavailable", "passed", "scored"]
    severity = [0 if s == "errored" else 1 if s == "failed" else 2 if s == "unrankable" else 4 for s in order]
    assert severity == sorted(severity), order
    assert order[0] == "errored" and order[-1] in OK
    assert set(order) <= set(ranks)


def test_matrix_lists_the_worst_evals_first(built, open_report) -> None:
    page = open_report(built.report).page
    rows = page.eval_on_selector_all("#matrix tbody.eval-group", "els => els.map(e => e.dataset.eval)")
    assert rows.index("app/crashes") < rows.index("app/refund_policy") < rows.index("app/greets")


def test_problem_attempts_open_with_their_assertions_and_passed_ones_render_on_demand(built, open_report) -> None:
    page = open_report(built.report).page
    refund = page.locator("#attempts > li[data-eval='app/refund_policy']").first
    assert refund.locator("details").get_attribute("open") is not None
    assert refund.locator(".assertion").count() == 2
    # measurement against its threshold, the explanation, the evidence
    text = refund.inner_text()
    assert "< 0.90 required" in text and "Close to the policy" in text and "evidence" in text
    greets = page.locator("#attempts > li[data-eval='app/greets']").first
    assert greets.locator("details").get_attribute("open") is None
    assert greets.locator(".detail").inner_html() == ""  # nothing rendered until opened
    greets.locator("summary").click()  # the toggle event is a task: wait for the details it renders
    greets.locator(".assertion").first.wait_for()
    assert greets.locator(".assertion").count() == 1
    assert "Greets the user" in greets.inner_text()


def test_score_attempts_show_never_a_fabricated_zero(built, open_report) -> None:
    page = open_report(built.report).page
    quality = page.locator("#attempts > li[data-eval='app/quality'][data-experiment='alpha']")
    assert "2 of 10 · 5 unavailable · not rankable" in quality.locator("summary").inner_text()
    assert "— / 5 points" in quality.inner_text()  # the unavailable entry keeps its weight, earns nothing


def test_state_filter_hides_and_shows_rows(built, open_report) -> None:
    page = open_report(built.report).page
    total = len(states(page))
    page.uncheck("input[name=state][value=passed]")
    shown = page.eval_on_selector_all("#attempts > li:not([hidden])", "els => els.map(e => e.dataset.state)")
    assert "passed" not in shown and len(shown) < total
    assert page.inner_text("#shown-count") == f"{len(shown)} of {total} attempts shown"
    page.check("input[name=state][value=passed]")
    assert len(visible_evals(page)) == total


def test_experiment_tag_and_search_filters_combine(built, open_report) -> None:
    page = open_report(built.report).page
    page.select_option("#filter-experiment", "beta")
    experiments = page.eval_on_selector_all("#attempts > li:not([hidden])", "els => els.map(e => e.dataset.experiment)")
    assert set(experiments) == {"beta"}
    page.select_option("#filter-tag", "refunds")
    assert sorted(visible_evals(page)) == ["app/crashes", "app/refund_policy"]
    page.fill("#filter-search", "REFUND")
    assert visible_evals(page) == ["app/refund_policy"]
    matrix = page.eval_on_selector_all("#matrix tbody.eval-group:not([hidden])", "els => els.map(e => e.dataset.eval)")
    assert matrix == ["app/refund_policy"]
    page.fill("#filter-search", "")
    page.select_option("#filter-tag", "")
    page.select_option("#filter-experiment", "")
    assert len(visible_evals(page)) == len(states(page))


def test_an_injected_reply_is_shown_as_text_and_runs_nothing(built, open_report) -> None:
    opened = open_report(built.report)
    page = opened.page
    page.locator("#attempts details:not([open]) summary").evaluate_all("els => els.forEach(e => e.click())")
    page.wait_for_function("() => [...document.querySelectorAll('#attempts > li')].every(li => li.dataset.rendered)")
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert opened.dialogs == []
    assert page.evaluate("document.images.length") == 0
    assert page.evaluate("document.scripts.length") == 2  # the data block and the page's own script
    text = page.inner_text("#attempts")
    assert '<img src=x onerror="window.__pwned = \'img\'">' in text
    assert '</script><script>window.__pwned = "breakout"</script>' in text
    assert opened.errors == []


class _Recorder(http.server.BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        _Recorder.hits.append(self.path)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def loopback() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Recorder.hits = []
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_the_page_requests_nothing_but_itself(built, open_report) -> None:
    opened = open_report(built.report)
    page = opened.page
    page.locator("#attempts details:not([open]) summary").evaluate_all("els => els.forEach(e => e.click())")
    page.wait_for_function("() => [...document.querySelectorAll('#attempts > li')].every(li => li.dataset.rendered)")
    assert opened.requests == [built.report.resolve().as_uri()]
    assert page.evaluate("performance.getEntriesByType('resource').length") == 0


_LOAD_EVERYTHING = """url => {
            const img = document.createElement('img'); img.src = url + '/img'; document.body.appendChild(img);
            const link = document.createElement('link'); link.rel = 'stylesheet'; link.href = url + '/css';
            document.head.appendChild(link);
            return fetch(url + '/fetch').then(() => 'fetched', () => 'blocked');
        }"""


def test_the_content_security_policy_blocks_anything_added_later(built, browser_context, open_report,
                                                                  loopback) -> None:
    page = open_report(built.report).page
    page.evaluate(_LOAD_EVERYTHING, loopback)
    page.wait_for_timeout(200)
    assert _Recorder.hits == []
    # the same script on a page without the policy does reach the server (the check can fail)
    control = browser_context.new_page()
    try:
        control.goto(loopback + "/control")
        control.evaluate(_LOAD_EVERYTHING, loopback)
        control.wait_for_timeout(200)
    finally:
        control.close()
    assert {"/img", "/fetch"} <= set(_Recorder.hits)


def test_the_page_works_offline_from_file(built, browser_context, open_report) -> None:
    browser_context.set_offline(True)
    try:
        page = open_report(built.report).page
        greets = page.locator("#attempts > li[data-eval='app/greets']").first
        greets.locator("summary").click()
        greets.locator(".assertion").first.wait_for()
        assert "Greets the user" in greets.inner_text()
        page.uncheck("input[name=state][value=errored]")
        assert "errored" not in page.eval_on_selector_all("#attempts > li:not([hidden])",
                                                          "els => els.map(e => e.dataset.state)")
    finally:
        browser_context.set_offline(False)


def test_the_baseline_comparison_lists_regressions_first(built, open_report) -> None:
    page = open_report(built.report).page
    section = page.locator("#compare-baseline")
    assert section.count() == 1
    headings = section.locator("h3").all_inner_texts()
    assert headings[0].startswith("Undecided now")  # quality became unrankable; nothing else moved
    assert "app/quality" in section.inner_text()


def test_a_run_of_two_experiments_compares_them_b_wins_first(built, open_report) -> None:
    page = open_report(built.plain).page
    section = page.locator("#compare-experiments")
    assert section.locator("h3").first.inner_text() == "beta wins (1)"
    assert "app/better_model" in section.locator("table.pairs").first.inner_text()


def test_screenshot_for_the_docs(built, open_report, tmp_path: Path) -> None:
    """A small picture of the report; NICEEVAL_SCREENSHOT=PATH also keeps it (docs/images/report.png)."""
    page = open_report(built.plain).page
    page.set_viewport_size({"width": 1000, "height": 760})
    shot = tmp_path / "report.png"
    page.screenshot(path=str(shot), full_page=False)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    keep = os.environ.get("NICEEVAL_SCREENSHOT")
    if keep:
        shutil.copyfile(shot, keep)


def _late_rows_report(built, tmp_path: Path, server_rows: int) -> Path:
    from niceeval_cli.app.report import read_report
    from niceeval_cli.reports.html import render_page
    from niceeval_cli.reports.html._model import build_page
    from niceeval_cli.store import Store

    with Store.open(built.project.root / ".niceeval" / "results.db", readonly=True) as store:
        data = read_report(store, built.run)
    out = tmp_path / f"rows-{server_rows}.html"
    out.write_text(render_page(build_page(data, server_rows=server_rows)), encoding="utf-8")
    return out


def test_rows_past_the_first_ones_are_moved_in_after_load_in_the_same_order(built, open_report, tmp_path) -> None:
    """Large runs show the first rows at once; the rest wait in inert templates and join the list."""
    whole = open_report(_late_rows_report(built, tmp_path, 10_000)).page
    expected = whole.eval_on_selector_all("#attempts > li", "els => els.map(e => e.outerHTML)")
    page = open_report(_late_rows_report(built, tmp_path, 2)).page
    page.wait_for_function("() => document.getElementById('attempts').dataset.complete")
    page.wait_for_function("() => [...document.querySelectorAll('#attempts details[open]')]"
                           ".every(d => d.parentNode.dataset.rendered)")
    built_rows = page.eval_on_selector_all("#attempts > li", "els => els.map(e => e.outerHTML)")
    assert len(built_rows) == len(expected)
    strip = re.compile(r' data-rendered="1"|<div class="detail">.*?</div></details>', re.S)
    assert [strip.sub("", r) for r in built_rows] == [strip.sub("", r) for r in expected]
    page.uncheck("input[name=state][value=passed]")
    kept = page.eval_on_selector_all("#attempts > li:not([hidden])", "els => els.map(e => e.dataset.state)")
    assert "passed" not in kept


def test_the_tag_filter_matches_whole_tags_as_run_tag_does(tmp_path: Path, open_report) -> None:
    """A tag with a space in it is one tag: filtering on `smoke` shows what `run --tag smoke` runs."""
    from tests.support.project import Project

    proj = Project(tmp_path / "proj")  # a subprocess: Playwright holds this thread's event loop
    proj.write("evals/t.py", '''
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval(tags=["smoke test"])
        def spaced(t):
            t.check(1, equals(1)).label("one")

        @define_eval(tags=["smoke", "nightly"])
        def plain(t):
            t.check(1, equals(1)).label("one")
    ''')
    assert proj.run().returncode == 0
    out = tmp_path / "report.html"
    assert proj.cli("report", "--out", str(out)).returncode == 0
    page = open_report(out).page
    matrix = "#matrix tbody.eval-group:not([hidden])"
    for tag, shown in (("smoke", ["t/plain"]), ("smoke test", ["t/spaced"]), ("nightly", ["t/plain"])):
        page.select_option("#filter-tag", tag)
        assert visible_evals(page) == shown, tag
        assert page.eval_on_selector_all(matrix, "els => els.map(e => e.dataset.eval)") == shown, tag
    page.select_option("#filter-tag", "")
    assert sorted(visible_evals(page)) == ["t/plain", "t/spaced"]
