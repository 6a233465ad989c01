"""Issue 23, the report's items: 2 (a run or group id never chooses where the report is written),
20 (Unicode bidi controls shown escaped, as the terminal shows them) and 17 (a huge run's report
is bounded). Real `niceeval` subprocesses write the stores and the reports; what a person sees is
read by a real headless Chromium."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest

from tests.support.browser import chromium_context
from tests.support.project import Project


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process (tests/conftest.py `project`): these checks read exit codes, output and
    stored rows; what is about a process (signals, pipes) still starts the real `niceeval`."""
    return project


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
        proj: Project, args: list[str], env: dict[str, str] | None, named: str) -> None:
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
    proj = Project(tmp_path / "deep" / "er" / "proj", in_process=True)
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


def test_out_still_writes_wherever_it_is_told(proj: Project, tmp_path: Path) -> None:
    proj.write("evals/app.py", EVALS)
    assert proj.run().returncode == 1
    target = tmp_path / "elsewhere" / "mine.html"
    made = proj.cli("report", "--out", str(target))
    assert made.returncode == 0, made.stderr
    assert Path(made.stdout.strip()) == target and target.is_file()


# ── item 20: bidi controls are shown escaped, as the terminal shows them ──────────────────────


@pytest.mark.slow
def test_bidi_controls_in_case_ids_and_labels_are_shown_escaped_in_the_page(proj: Project, tmp_path: Path) -> None:
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


# ── item 17: a run of huge texts makes a bounded report ────────────────────────────────────────

_PEAK = (
    "import sys\nsys.argv = ['niceeval', *sys.argv[1:]]\nfrom niceeval_cli.cli import main\n"
    "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\nelse:\n    code = 0\n"
    "hwm = next(line for line in open('/proc/self/status') if line.startswith('VmHWM:')).split()[1]\n"
    "sys.stderr.write(f'\\n__PEAK_KIB__ {hwm}\\n')\nsys.exit(code)\n"
)


def _huge_run(store: Path, attempts: int) -> str:
    """A run sealed elsewhere and merged in (bulk rows): every text as long as NiceEval stores it
    (20 000 characters), all distinct — 4 replies and 8 tool calls an attempt, 10 evidences."""
    import os

    from niceeval_cli.store.schema import ASSERTION_COLUMNS, ATTEMPT_COLUMNS, EVENT_COLUMNS, TURN_COLUMNS, insert_sql
    from tests.support.records import bulk_rows

    def text(n: int) -> str:
        return os.urandom(n // 2).hex()

    run_id = "01HUGE0000000000000000RUN0"
    with bulk_rows(store) as con:
        con.execute("INSERT INTO runs (id, started_at, ended_at, status, argv, niceeval_version, exit_code, "
                    "config_file, experiments) VALUES (?, '2026-01-01T00:00:00.000Z', NULL, 'running', '[\"run\"]', "
                    "'test', NULL, NULL, '[\"big\"]')", [run_id])
        for n in range(attempts):
            attempt_id = f"01HUGE{n:020d}"
            failed = n < 5
            con.execute(insert_sql("attempts", ATTEMPT_COLUMNS), tuple(({c: None for c in ATTEMPT_COLUMNS} | {
                "id": attempt_id, "run_id": run_id, "experiment_id": "big", "eval_id": f"huge/e{n:04d}",
                "ordinal": 0, "kind": "pass", "state": "failed" if failed else "passed", "fingerprint": "f" * 64,
                "fingerprint_parts": "{}", "started_at": "2026-01-01T00:00:00.000Z",
                "ended_at": "2026-01-01T00:00:01.000Z", "duration_ms": 1000.0, "judge_tokens": 0,
                "error": text(20_000) if failed else None}).values()))
            for i in range(10):
                con.execute(insert_sql("assertion_results", ASSERTION_COLUMNS), tuple(({
                    c: None for c in ASSERTION_COLUMNS} | {
                    "id": f"{attempt_id}R{i}", "attempt_id": attempt_id, "ordinal": i, "key": f"k{i}",
                    "label": f"check {i}", "role": "gate", "state": "mismatched" if failed and i == 0 else "matched",
                    "explanation": "START-" + text(20_000) if failed and i == 0 else None, "match_name": "includes",
                    "match_config": "{}", "source_file": "evals/huge.py", "source_line": 1,
                    "evidence": '"' + text(4_000) + '"', "or_stop": 0, "match_kind": "boolean"}).values()))
            for t in range(4):
                con.execute(insert_sql("turns", TURN_COLUMNS), (attempt_id, "s0", t, "question", text(20_000),
                                                                "completed", '["messages"]', 1, 1, None, 1.0, None))
                for seq in range(2):
                    con.execute(insert_sql("events", EVENT_COLUMNS), (
                        attempt_id, t, seq, "tool_call", "lookup", None, '"' + text(6_000) + '"',
                        '"' + text(6_000) + '"', "ok", None))
            con.execute("INSERT INTO run_slots (run_id, experiment_id, eval_id, ordinal, attempt_id, relation, "
                        "plan_reason, pass_rule) VALUES (?, 'big', ?, 0, ?, 'origin', 'new', 'any')",
                        [run_id, f"huge/e{n:04d}", attempt_id])
        con.execute("UPDATE runs SET status = 'finished', ended_at = '2026-01-01T00:10:00.000Z', exit_code = 1 "
                    "WHERE id = ?", [run_id])
    return run_id


@pytest.mark.slow
def test_a_run_of_huge_texts_makes_a_bounded_report_that_points_to_the_rest(proj: Project, tmp_path: Path) -> None:
    import subprocess

    from tests.support.project import base_env

    proj.write("evals/app.py", EVALS)
    assert proj.run().returncode == 1  # a store made by NiceEval
    run_id = _huge_run(proj.store, 800)
    size = proj.store.stat().st_size
    assert size > 150 * 2**20
    out = tmp_path / "huge.html"
    done = subprocess.run([sys.executable, "-c", _PEAK, "report", run_id, "--out", str(out)], cwd=proj.root,
                          env=base_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    peak = next(int(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("__PEAK_KIB__")) * 1024
    assert peak < 200 * 2**20 and peak < size, (peak, size)  # it was ~5x the store (1.1 GB for 223 MB)
    assert out.stat().st_size < 40 * 2**20  # every text whole was ~0.95x the store

    with chromium_context(tmp_path / "profile") as context:
        page = context.new_page()
        page.goto(out.resolve().as_uri(), timeout=120_000)
        page.wait_for_function("() => document.getElementById('attempts').dataset.complete", timeout=120_000)
        notice = page.inner_text("#details-limit")
        assert "of 800 attempts" in notice and "niceeval view @" in notice, notice
        first = page.locator("#attempts > li").first
        assert first.get_attribute("data-state") == "failed"
        text = first.inner_text()
        assert "START-" in text and "… [+" in text and "chars]" in text  # a cut text says how much is left
        assert f"niceeval view @{first.get_attribute('id')[2:]}" in text
        last = page.locator("#attempts > li").last
        last.locator("summary").click()
        last.locator(".limit").wait_for()
        assert f"niceeval view @{last.get_attribute('id')[2:]}" in last.inner_text()
