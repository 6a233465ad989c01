"""Issue 25, item 5, from the outside: the HTML report draws the statistics from the data.

Two evals with known pass patterns (the stand-in app passes the first k of five attempts) run
twice; `niceeval report --baseline` is opened in headless Chromium. The experiment table says
the mean over evals with its interval exactly as the run summary does, the error bar spans that
interval, a unit cell carries s/n with its Wilson interval, and the comparison with the baseline
shows each regression's significance and the paired difference with its interval."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path
from statistics import NormalDist
from typing import Any

import pytest

from tests.support.browser import chromium_context
from tests.support.pattern_app import TWO_EVALS, write_pattern_project
from tests.support.project import Project


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process (tests/conftest.py `project`): these checks read exit codes, output and
    stored rows; what is about a process (signals, pipes) still starts the real `niceeval`."""
    return project


pytestmark = pytest.mark.slow


Z = NormalDist().inv_cdf(0.975)


def wilson(s: int, n: int) -> tuple[float, float]:
    p = s / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z / (1 + Z * Z / n) * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def pct(x: float) -> str:
    return f"{round(x * 100)}%"


@pytest.fixture(scope="module")
def reported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    proj = Project(tmp_path_factory.mktemp("issue25-report") / "proj", in_process=True)
    write_pattern_project(proj, TWO_EVALS, "attempts = 5\npass_rule = 0.6\n")
    first = proj.run("--rerun-all", env={"PASSES_e1": "5", "PASSES_e2": "3"})
    assert first.returncode == 0, first.stdout + first.stderr
    base = proj.sql("SELECT id FROM runs ORDER BY started_at DESC LIMIT 1")[0]["id"]
    second = proj.run("--rerun-all", env={"PASSES_e1": "1", "PASSES_e2": "3", "NO_COLOR": "1", "COLUMNS": "200"})
    assert second.returncode == 1, second.stdout + second.stderr
    made = proj.cli("report", "--baseline", base)
    assert made.returncode == 0, made.stderr
    with chromium_context(tmp_path_factory.mktemp("profile")) as context:
        page = context.new_page()
        page.goto(Path(made.stdout.strip()).resolve().as_uri())
        page.wait_for_function("() => document.getElementById('attempts').dataset.complete")
        yield {"page": page, "summary": second.stdout}


def test_the_experiment_table_says_the_summary_s_interval(reported: dict[str, Any]) -> None:
    line = re.search(r"pass rate \d+% \[\d+%, \d+%\] over 2 evals[^\n]*", reported["summary"])
    assert line is not None, reported["summary"]
    row = reported["page"].inner_text("#experiments tr[data-experiment='local'] td.interval")
    assert row.startswith(line.group(0).strip()), (row, line.group(0))
    assert row.startswith("pass rate 40% ["), row  # (1/5 + 3/5) / 2


def test_the_error_bar_spans_the_interval(reported: dict[str, Any]) -> None:
    page = reported["page"]
    found = page.evaluate("""() => [...document.querySelectorAll('#chart-pass-rate rect.whisker')].map(r => ({
        cls: r.getAttribute('class'), x: +r.getAttribute('x'), w: +r.getAttribute('width'),
        title: r.textContent}))""")
    bars = [r for r in found if r["cls"] == "whisker"]
    assert len(bars) == 1, found
    low, high = (int(v) / 100 for v in re.findall(r"\[(\d+)%, (\d+)%\]", bars[0]["title"])[0])
    left, right = 190 + 300 * low, 190 + 300 * (low + (bars[0]["w"] / 300))
    assert abs(bars[0]["x"] - left) <= 1.6 and abs(right - (190 + 300 * high)) <= 1.6, (bars, low, high)
    estimate = [r for r in found if "estimate" in r["cls"]]
    assert len(estimate) == 1 and abs(estimate[0]["x"] + 1.5 - (190 + 300 * 0.4)) < 0.2, estimate
    table = page.text_content("#chart-pass-rate details table") or ""  # folded: its text, not what shows
    assert "pass rate 40% [" in table, table


def test_a_unit_cell_shows_its_rate_and_wilson_interval(reported: dict[str, Any]) -> None:
    page = reported["page"]
    cells = page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('#matrix tbody.eval-group')]
        .map(g => [g.dataset.eval, g.querySelector('td').innerText]))""")
    low, high = wilson(1, 5)
    assert f"1/5 · 20% [{pct(low)}, {pct(high)}]" in cells["pattern/e1"], cells
    low, high = wilson(3, 5)
    assert f"3/5 · 60% [{pct(low)}, {pct(high)}]" in cells["pattern/e2"], cells


def test_the_baseline_comparison_shows_significance_and_the_paired_difference(reported: dict[str, Any]) -> None:
    page = reported["page"]
    regressed = page.inner_text("#compare-baseline table.pairs[data-class='regressed']")
    assert "pattern/e1" in regressed and "within noise (q = " in regressed, regressed
    paired = page.inner_text("#compare-baseline ul.paired")
    assert paired.startswith("local: pass rate 80.0% → 40.0%, Δ −40.0 points ["), paired
    assert "paired over 2 evals" in paired, paired
