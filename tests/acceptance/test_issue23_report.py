"""Issue 23, the report's items: 2 (a run or group id never chooses where the report is written),
20 (Unicode bidi controls shown escaped, as the terminal shows them) and 17 (a huge run's report
is bounded). Real `niceeval` subprocesses write the stores and the reports; what a person sees is
read by a real headless Chromium."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from browser_support import chromium_context
from outside import Proj

EVALS = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import equals, includes

RLO, PDF = "\\u202e", "\\u202c"


@define_eval()
async def greets(t):
    t.check("hello", includes("hello")).label("Greets")


@define_eval(cases={"lave" + RLO + "txt.exe" + PDF: 1, "plain": 2})
async def cased(t, case):
    t.check(case, equals(1)).label("label " + RLO + "desrever" + PDF)
'''


def _html_files(root: Path) -> set[Path]:
    return {p.resolve() for p in root.rglob("*.html")}


def _retag_group(store: Path, group: str) -> None:
    """A hostile shard store: its runs' group id rewritten with the run-row triggers lifted for the
    change and put back (what a tampered store merged from a CI artifact can carry)."""
    con = sqlite3.connect(store)
    try:
        names = ("runs_finished_are_immutable", "runs_running_may_only_finish")
        saved = [row[0] for row in con.execute(
            f"SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name IN {names}")]
        assert len(saved) == 2
        with con:
            for name in names:
                con.execute(f"DROP TRIGGER {name}")
            con.execute("UPDATE runs SET group_id = ? WHERE group_id IS NOT NULL", [group])
            for sql in saved:
                con.execute(sql)
    finally:
        con.close()


# ── item 2: the report's file name never leaves .niceeval/reports ───────────────────────────────


@pytest.mark.parametrize(("args", "env", "named"), [
    (["--group", "../../.."], None, "--group"),
    (["--group", "a/b"], None, "--group"),
    (["--group", ".."], None, "--group"),
    ([], {"NICEEVAL_RUN_GROUP": "/tmp/niceeval-issue23-absolute"}, "NICEEVAL_RUN_GROUP"),
])
def test_a_path_like_group_id_is_refused_before_anything_runs(
        proj: Proj, args: list[str], env: dict[str, str] | None, named: str) -> None:
    proj.write("evals/app.py", EVALS)
    res = proj.run("--shard", "1/1", *args, env=env)
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    assert named in res.stderr and "not a path" in res.stderr and "Traceback" not in res.stderr, res.stderr
    runs = proj.sql("SELECT id FROM runs") if proj.store.exists() else []
    assert runs == []  # refused before a run was recorded


@pytest.mark.slow
@pytest.mark.parametrize("hostile", ["../../../escaped", "ABSOLUTE"])
def test_a_hostile_group_id_from_the_store_cannot_place_the_report_outside_the_reports_folder(
        tmp_path: Path, hostile: str) -> None:
    proj = Proj(tmp_path / "deep" / "er" / "proj")
    proj.write("evals/app.py", EVALS)
    res = proj.run("--shard", "1/1", "--group", "ci-1")
    assert res.returncode == 1, res.stdout + res.stderr
    group = str(tmp_path / "outside" / "evil") if hostile == "ABSOLUTE" else hostile
    (tmp_path / "outside").mkdir()
    _retag_group(proj.store, group)
    before = _html_files(tmp_path)
    reports = (proj.root / ".niceeval" / "reports").resolve()
    for args in ([], [group]):
        made = proj.cli("report", *args)
        assert made.returncode == 0, made.stderr
        written = Path(made.stdout.strip()).resolve()
        assert written.parent == reports and written.is_file(), written
        assert written.name.endswith(".html") and "/" not in written.name
    added = _html_files(tmp_path) - before
    assert added and all(p.parent == reports for p in added), added
    assert not (tmp_path / "outside" / "evil.html").exists()
    assert not [p for p in tmp_path.rglob("escaped.html")]


def test_out_still_writes_wherever_it_is_told(proj: Proj, tmp_path: Path) -> None:
    proj.write("evals/app.py", EVALS)
    assert proj.run().returncode == 1
    target = tmp_path / "elsewhere" / "mine.html"
    made = proj.cli("report", "--out", str(target))
    assert made.returncode == 0, made.stderr
    assert Path(made.stdout.strip()) == target and target.is_file()


# ── item 20: bidi controls are shown escaped, as the terminal shows them ──────────────────────


@pytest.mark.slow
def test_bidi_controls_in_case_ids_and_labels_are_shown_escaped_in_the_page(proj: Proj, tmp_path: Path) -> None:
    proj.write("evals/app.py", EVALS)
    assert proj.run().returncode == 1
    view = proj.cli("view", env={"NO_COLOR": "1"})
    assert "\\u202e" in view.stdout and "\u202e" not in view.stdout  # the terminal's way, for reference
    made = proj.cli("report")
    assert made.returncode == 0, made.stderr
    with chromium_context(tmp_path / "profile") as context:
        page = context.new_page()
        page.goto(Path(made.stdout.strip()).resolve().as_uri())
        page.wait_for_function("() => document.getElementById('attempts').dataset.complete")
        page.evaluate("document.querySelectorAll('#attempts details').forEach(d => { d.open = true; })")
        page.wait_for_function(  # every attempt's details rendered, passed ones too
            "() => [...document.querySelectorAll('#attempts > li')].every(li => li.dataset.rendered)")
        text = page.inner_text("body")
        assert "\u202e" not in text and "\u202c" not in text
        assert "lave\\u202etxt.exe\\u202c" in page.inner_text("#matrix")
        assert "lave\\u202etxt.exe\\u202c" in page.inner_text("#attempts")
        assert "label \\u202edesrever\\u202c" in page.inner_text("#attempts")
        assert "\u202e" not in page.title()
