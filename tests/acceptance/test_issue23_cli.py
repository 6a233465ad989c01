"""Issue 23, the command-line items (10, 14, 15, 18, 19), reproduced from the outside: the CLI
(in process where only exit codes, output, files and rows matter; the real `niceeval` for
/dev/stdout, FIFOs and signals), real files and links, stores read with sqlite3."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import stat
import subprocess
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.support.made_once import MadeOnce
from tests.support.project import Project, stop, wait_for

EVALS = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals


@define_eval()
def ok(t):
    t.check(1, equals(1)).label("fine")


@define_eval()
def wrong(t):
    t.check("14 days", equals("30 days")).label("Mentions 30 days")
"""


def _project(p: Project) -> Project:
    p.write("niceeval.toml", "[project]\n")
    p.write("evals/a.py", EVALS)
    return p


@pytest.fixture
def proj(tmp_path: Path) -> Project:
    """The CLI in process where a check reads exit codes, output, files and rows; `popen` and
    `shell` still start the real `niceeval`."""
    return _project(Project(tmp_path / "proj", in_process=True))


@pytest.fixture
def ran(proj: Project, made_once: MadeOnce) -> Project:
    """`proj` with its one run sealed (exit 1: `wrong` fails): made once per worker, copied in."""
    [run] = made_once.place(proj, {"niceeval.toml": "[project]\n", "evals/a.py": EVALS}, ("run",))
    assert run.returncode == 1, run.stderr
    return proj


@pytest.fixture
def real_proj(tmp_path: Path) -> Project:
    """Every call a real `niceeval` process: for what is about one (its stdout's file, a FIFO it
    writes, its signal watch)."""
    return _project(Project(tmp_path / "proj"))


# --- item 14: --junit / report --out through a symlink --------------------------------------


def _no_temp_files(*folders: Path) -> None:
    for folder in folders:
        assert not [p.name for p in folder.iterdir() if p.name.endswith(".tmp")], folder


def test_junit_through_a_symlink_writes_its_target_and_keeps_the_link(proj: Project, tmp_path: Path) -> None:
    elsewhere = tmp_path / "ci"
    elsewhere.mkdir()
    target = elsewhere / "junit.xml"
    target.write_text("old", encoding="utf-8")
    target.chmod(0o640)
    (proj.root / "junit.xml").symlink_to(target)
    res = proj.run("--junit", "junit.xml")
    assert res.returncode == 1, res.stderr
    link = proj.root / "junit.xml"
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert ET.parse(target).getroot().tag == "testsuites"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # replaced atomically, its mode kept
    _no_temp_files(proj.root, elsewhere)


def test_a_dangling_link_is_written_through_too(proj: Project, tmp_path: Path) -> None:
    target = tmp_path / "not-yet" / "junit.xml"
    (proj.root / "junit.xml").symlink_to(target)
    res = proj.run("--junit", "junit.xml")
    assert res.returncode == 1, res.stderr
    assert (proj.root / "junit.xml").is_symlink()
    assert ET.parse(target).getroot().tag == "testsuites"


def test_report_out_through_a_symlink_writes_its_target(ran: Project, tmp_path: Path) -> None:
    proj = ran
    target = tmp_path / "site" / "index.html"
    target.parent.mkdir()
    target.write_text("old", encoding="utf-8")
    (proj.root / "report.html").symlink_to(target)
    res = proj.cli("report", "--out", "report.html")
    assert res.returncode == 0, res.stderr
    assert (proj.root / "report.html").is_symlink()
    assert target.read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html")
    _no_temp_files(proj.root, target.parent)


def test_junit_to_dev_stdout_writes_to_the_pipe_and_leaves_dev_stdout_alone(real_proj: Project) -> None:
    proj = real_proj
    before = os.lstat("/dev/stdout")
    res = proj.run("--junit", "/dev/stdout")
    assert res.returncode == 1, res.stderr
    assert "<testsuites" in res.stdout and "Mentions 30 days" in res.stdout
    after = os.lstat("/dev/stdout")
    assert stat.S_ISLNK(after.st_mode) and after.st_ino == before.st_ino


def test_junit_to_dev_stdout_redirected_to_a_file_follows_what_the_run_printed(proj: Project) -> None:
    res = proj.shell("niceeval run --junit /dev/stdout > out.txt; echo rc=$?")
    assert "rc=1" in res.stdout, res.stderr
    text = (proj.root / "out.txt").read_text(encoding="utf-8")
    assert "<testsuites" in text and "niceeval view" in text  # both: the summary was not truncated away


def test_junit_into_a_fifo_is_written_to_its_reader(real_proj: Project, tmp_path: Path) -> None:
    proj = real_proj
    fifo = tmp_path / "junit.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    res = proj.run("--junit", str(fifo))
    reader.join(timeout=60)
    assert res.returncode == 1, res.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert got and b"<testsuites" in got[0]


def test_merge_junit_through_a_symlink_keeps_the_link(ran: Project, tmp_path: Path) -> None:
    proj = ran
    target = tmp_path / "merged.xml"
    target.write_text("old", encoding="utf-8")
    (proj.root / "m.xml").symlink_to(target)
    res = proj.cli("merge", str(proj.store), "--into", str(tmp_path / "into.db"), "--junit", "m.xml")
    assert res.returncode == 0, res.stderr
    assert (proj.root / "m.xml").is_symlink()
    assert ET.parse(target).getroot().tag == "testsuites"


# --- item 18: run.finished.executed counts attempts executed -------------------------------

PAID_AGENT = '''
from niceeval_cli import Turn, Usage, define_adapter

async def send(ctx, message):
    return Turn(input=message, message="ok", usage=Usage(input_tokens=10, output_tokens=0, cost_usd=1.0))

adapter = define_adapter(name="paid", send=send)
'''

PAID_EVALS = '''
from niceeval_cli.expect import equals
from agent import adapter

def make(i):
    async def test(t):
        turn = await t.send(f"q{i}")
        t.check(turn.message, equals("ok")).label("answer")
    return test

for i in range(8):
    globals()[f"e{i}"] = adapter.define_eval(test=make(i), name=f"e{i}")
'''


def test_run_finished_executed_counts_attempts_run_not_slots_planned(tmp_path: Path) -> None:
    proj = Project(tmp_path / "paid", in_process=True)
    proj.write("niceeval.toml", '[project]\nmax_concurrency = 1\nattempts = 2\n[experiments.paid]\n')
    proj.write("agent.py", PAID_AGENT)
    proj.write("evals/e.py", PAID_EVALS)
    res = proj.run("--budget", "2.5", "--json")
    assert res.returncode == 5, res.stderr
    events = [json.loads(line) for line in res.stdout.splitlines()]
    [finished] = [e for e in events if e["event"] == "run.finished"]
    sealed = proj.sql("SELECT count(*) AS n FROM attempts")[0]["n"]
    assert sealed == 3  # $1 each: the third reaches $2.50; 13 of 16 planned slots never started
    assert finished["executed"] == sealed == sum(e["event"] == "attempt.sealed" for e in events)
    assert len(finished["unstarted"]) == 13 and finished["reused"] == 0
    again = proj.run("--json")  # the 3 sealed are reused, the 13 others run
    [finished] = [json.loads(x) for x in again.stdout.splitlines() if '"run.finished"' in x]
    assert (finished["executed"], finished["reused"]) == (13, 3)


# --- item 19: compare --fail-on that names no class ----------------------------------------


@pytest.mark.parametrize("value", ["", ",,,", " , "])
def test_compare_fail_on_naming_no_class_is_a_usage_error(ran: Project, value: str) -> None:
    proj = ran
    res = proj.cli("compare", "--fail-on", value)
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert "--fail-on" in res.stderr and "regressed" in res.stderr and "Traceback" not in res.stderr
    assert res.stdout == ""


def test_compare_fail_on_still_gates_with_a_class(ran: Project) -> None:
    proj = ran
    first = proj.sql("SELECT id FROM runs")[0]["id"]
    proj.write("evals/a.py", EVALS.replace('equals("30 days")', 'equals("14 days")').replace(
        "equals(1)).label", "equals(2)).label"))
    assert proj.run().returncode == 1
    assert proj.cli("compare", first, "--fail-on", "regressed,").returncode == 1
    assert proj.cli("compare", first, "--fail-on", "added").returncode == 0


# --- item 10: a shard with another N joins no group ----------------------------------------


def _many(proj: Project) -> None:
    lines = ["from niceeval_cli import define_eval", "from niceeval_cli.expect import equals", ""]
    for i in range(8):
        expected = i if i != 5 else -1  # e5 fails: the group has a definite failure to report
        lines += ["@define_eval()", f"def e{i}(t):", f"    t.check({i}, equals({expected})).label('same')", ""]
    proj.write("evals/a.py", "\n".join(lines))


@pytest.mark.parametrize("how", ["flag", "env", "default"])
def test_a_shard_with_another_n_is_refused_naming_the_group_and_both_n(proj: Project, how: str) -> None:
    _many(proj)
    group = {"flag": ["--group", "ci-42"], "env": [], "default": []}[how]
    env = {"NICEEVAL_RUN_GROUP": "ci-42"} if how == "env" else {"NICEEVAL_RUN_GROUP": None}
    first = proj.run("--shard", "1/2", *group, env=env)
    assert first.returncode in (0, 1), first.stderr
    runs_before = proj.sql("SELECT id, group_id FROM runs")
    res = proj.run("--shard", "2/3", *group, env=env)
    assert res.returncode == 2, (res.stdout, res.stderr)
    group_id = runs_before[0]["group_id"]
    assert group_id in res.stderr and "2/3" in res.stderr and "K/2" in res.stderr, res.stderr
    assert "Traceback" not in res.stderr
    assert proj.sql("SELECT id, group_id FROM runs") == runs_before  # nothing recorded
    # The right N still joins, and the group then reads as a one-machine run would.
    second = proj.run("--shard", "2/2", *group, env=env)
    assert second.returncode in (0, 1), second.stderr
    view = proj.cli("view", group_id)
    assert view.returncode == 0, view.stderr
    assert "not run" not in view.stdout and "exit 1" in view.stdout


def test_the_same_n_under_a_group_still_reruns_a_shard(proj: Project) -> None:
    _many(proj)
    assert proj.run("--shard", "1/2", "--group", "g").returncode in (0, 1)
    again = proj.run("--shard", "1/2", "--group", "g", "--rerun-all")
    assert again.returncode in (0, 1), again.stderr


# --- item 15: a runaway `query --sql` answers SIGINT and SIGTERM ---------------------------

RUNAWAY = {
    "rows": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c",
    "count": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
}


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("shape", sorted(RUNAWAY))
def test_a_runaway_sql_query_is_interrupted_by_a_signal(ran: Project, sig: signal.Signals, shape: str) -> None:
    proj = ran
    digest = hashlib.sha256(proj.store.read_bytes()).hexdigest()
    proc = proj.popen("query", "--sql", RUNAWAY[shape], "--format", "csv")
    try:
        wait_for(lambda: proc.poll() is not None or _has_open(proc.pid, proj.store), timeout=60)
        time.sleep(0.5)  # well inside the statement (it never ends on its own)
        assert proc.poll() is None, proc.communicate()
        sent = time.monotonic()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        stop(proc)
        raise AssertionError(f"`query --sql` ignored {sig.name}") from None
    finally:
        if proc.poll() is None:
            stop(proc)
    assert time.monotonic() - sent < 5
    assert proc.returncode == 130, err
    assert f"--sql stopped by {sig.name}" in err and "Traceback" not in err
    assert out == ""
    assert hashlib.sha256(proj.store.read_bytes()).hexdigest() == digest


def _has_open(pid: int, path: Path) -> bool:
    """Whether process `pid` has `path` open (the query's connection: its statement is running)."""
    try:
        fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(fd) == str(path):
                return True
        except OSError:
            continue
    return False


def test_a_query_that_ends_is_unchanged_by_the_signal_watch(ran: Project, real_proj: Project) -> None:
    # the run made in process; the query is the real `niceeval`, with its signal watch
    res = real_proj.cli("query", "--sql", "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                        "WHERE x < 300000) SELECT count(*) AS n FROM c", "--format", "json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == [{"n": 300000}]
