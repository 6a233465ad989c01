"""`niceeval report`: the written file (path, self-containment, section order) and its errors."""

from __future__ import annotations

import base64
import hashlib
import html as htmllib
import json
import re
from pathlib import Path

import pytest

from niceeval_cli.reports.html import content_security_policy, embed_json


def html_of(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_default_path_is_beside_the_store_and_printed(built) -> None:
    expected = built.project.root / ".niceeval" / "reports" / f"{built.run}.html"
    assert built.plain == expected.resolve() or built.plain == expected
    assert built.plain.is_file()


def test_the_file_loads_nothing_from_anywhere(built) -> None:
    html = html_of(built.report)
    assert not re.search(r"""\b(src|href)\s*=\s*["']?(https?:|//)""", html)
    assert "@import" not in html and "url(" not in html
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert policy is not None
    content = htmllib.unescape(policy.group(1))
    assert "default-src 'none'" in content and "'unsafe-inline'" not in content


def test_the_policy_allows_exactly_the_inline_script_by_its_hash(built) -> None:
    html = html_of(built.report)
    scripts = re.findall(r"<script>(.*?)</script>", html, flags=re.S)
    assert len(scripts) == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in htmllib.unescape(html)


def test_sections_come_in_the_documented_order(built) -> None:
    html = html_of(built.report)
    ids = ["run-header", "experiments", "matrix", "charts", "attempts-section", "compare-baseline"]
    positions = [html.index(f'id="{i}"') for i in ids]
    assert positions == sorted(positions)


def test_header_carries_the_run_its_status_argv_counts_and_exit_meaning(built) -> None:
    html = html_of(built.report)
    header = html[html.index('id="run-header"'):html.index('id="experiments"')]
    assert built.run in header and "finished" in header
    assert "exit 1 (a definite failure: 3 evals failed)" in header  # view's words, with the cause
    assert "<dt>command</dt><dd><code>niceeval run --rerun-all</code>" in header


def test_experiments_side_by_side_show_pass_rate_and_not_rankable_scores(built) -> None:
    html = html_of(built.report)
    table = html[html.index('id="experiments"'):html.index('id="matrix"')]
    assert "model-a" in table and "model-b" in table
    assert "not rankable" in table and "5 unavailable" in table


def test_charts_are_inline_svg_with_a_table_each(built) -> None:
    html = html_of(built.report)
    charts = html[html.index('id="charts"'):html.index('id="attempts-section"')]
    assert charts.count("<svg") == charts.count("as a table</summary>") >= 2


def test_every_string_from_the_system_under_test_is_escaped(built) -> None:
    html = html_of(built.report)
    body = html[:html.index('<script type="application/json"')]
    assert "<img" not in body and "onerror=\"window" not in body
    data = html[html.index('<script type="application/json"'):]
    assert data.count("</script>") == 2  # the data block's end and the page script's end


def test_embedded_json_cannot_end_its_script_element_and_round_trips() -> None:
    value = {"reply": "</script><!-- <script>x</script> & \u2028 \ud800 done"}
    text = embed_json(value)
    assert "<" not in text and ">" not in text and "\u2028" not in text
    text.encode("utf-8")  # a lone surrogate travels as an escape, so the file can be written
    assert json.loads(text)["reply"].startswith("</script><!--")


def test_non_finite_numbers_travel_as_text() -> None:
    assert json.loads(embed_json({"m": [float("nan"), float("inf"), 1.5]})) == {"m": ["nan", "inf", 1.5]}


def test_the_policy_forbids_every_kind_of_load() -> None:
    policy = content_security_policy("x", "y")
    for directive in ("default-src 'none'", "connect-src 'none'", "img-src 'none'", "form-action 'none'",
                      "base-uri 'none'"):
        assert directive in policy


def test_out_writes_where_asked_and_prints_the_path(built) -> None:
    out = built.project.root / "elsewhere" / "r.html"
    result = built.project.cli("report", built.base, "--out", str(out))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == str(out)
    assert built.base in html_of(out)


@pytest.mark.parametrize("args", [
    ("NOSUCHRUN",),
    ("01",),  # ambiguous: both runs start with it
    ("--baseline", "NOSUCHRUN"),
    ("--baseline", "{run}", "{run}"),
    ("--experiments", "alpha", "gamma"),
    ("--out", "{root}"),
])
def test_bad_ids_and_paths_exit_2_with_one_paragraph(built, args) -> None:
    filled = [a.format(run=built.run, root=built.project.root) for a in args]
    result = built.project.cli("report", *filled)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.stderr.startswith("niceeval: ") and "Traceback" not in result.stderr


def test_explicit_experiments_add_their_comparison(built) -> None:
    out = built.project.root / "vs.html"
    result = built.project.cli("report", "--experiments", "beta", "alpha", "--out", str(out))
    assert result.exit_code == 0, result.stderr
    html = html_of(out)
    assert "Experiment beta against alpha" in html and "alpha loses (1)" in html
