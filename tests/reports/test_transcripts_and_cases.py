"""Runs sealed with transcripts, dataset cases, a sandbox record and a traceback: what the report
and `compare` make of them (the runner seals these once the agents and datasets issues land)."""

from __future__ import annotations

import json

import pytest

from tests.support.project import Project

pytestmark = pytest.mark.slow


def cli(sealed, *args: str):
    return Project(sealed.store.parent.parent, in_process=True).cli(*args, "--store", str(sealed.store))


def test_compare_pairs_dataset_cases_by_case_id(sealed) -> None:
    result = cli(sealed, "compare", sealed.base, sealed.new, "--format", "json")
    assert result.exit_code == 0, result.stderr
    got = {(r["eval_id"], r["case_id"]): r["class"] for r in json.loads(result.stdout)["pairs"]}
    assert got == {
        ("agent/chat", None): "regressed", ("qa/faq[c1]", "c1"): "regressed", ("qa/faq[c2]", "c2"): "fixed",
        ("agent/tools", None): "undecided", ("qa/faq[c3]", "c3"): "added", ("qa/faq[c0]", "c0"): "removed",
    }


def test_compare_terminal_names_the_case(sealed) -> None:
    out = cli(sealed, "compare", sealed.base, sealed.new).stdout
    assert "agent  qa/faq[c1]   passed → failed" in out


def test_the_matrix_groups_cases_under_their_eval(sealed, tmp_path) -> None:
    out = tmp_path / "r.html"
    assert cli(sealed, "report", sealed.new, "--out", str(out)).exit_code == 0
    html = out.read_text(encoding="utf-8")
    assert "qa/faq <span class=\"dim\">(3 cases)</span>" in html
    assert "2/3 cases" in html and 'data-case="c1"' in html


def test_transcript_case_value_traceback_and_sandbox_are_shown_as_text(sealed, tmp_path, open_report) -> None:
    out = tmp_path / "r.html"
    assert cli(sealed, "report", sealed.new, "--baseline", sealed.base, "--out", str(out)).exit_code == 0
    opened = open_report(out)
    page = opened.page
    chat = page.locator("#attempts > li[data-eval='agent/chat']")
    assert chat.locator("details").get_attribute("open") is not None  # failed: open on load
    text = chat.inner_text()
    for shown in ("transcript", "What is the refund window?", "Let me look that up.", "tool_call lookup_policy (ok)",
                  '"topic": "refunds"', '"days": 14', "And for sale items?", "sandbox", "python:3.12"):
        assert shown in text, shown
    assert '<img src=x onerror="window.__pwned = \'img\'">' in text
    tools = page.locator("#attempts > li[data-eval='agent/tools']").inner_text()
    assert "RuntimeError: tool crashed" in tools and 'raise RuntimeError("tool crashed")' in tools
    faq = page.locator("#attempts > li[data-eval='qa/faq[c1]']").inner_text()
    assert "qa/faq[c1]" in faq and '"question": "case c1"' in faq
    assert "case metadata" in faq and '"source": "faq.jsonl"' in faq
    assert page.evaluate("typeof window.__pwned") == "undefined" and page.evaluate("document.images.length") == 0
    assert opened.requests == [out.resolve().as_uri()]


def test_reported_and_estimated_costs_are_never_added_together(sealed, tmp_path) -> None:
    out = tmp_path / "r.html"
    assert cli(sealed, "report", sealed.new, "--out", str(out)).exit_code == 0
    html = out.read_text(encoding="utf-8")
    assert "<dt>cost</dt><dd>$0.0100 reported · $0.0060 estimated from prices</dd>" in html
