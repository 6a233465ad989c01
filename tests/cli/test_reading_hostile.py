"""The reading commands against what a user's shell and a hostile store do to them (cli.md):
a reader that stops early (`| head`) ends every command quietly with exit 0, and `query --sql`
answers whatever a SELECT can return, as its formats promise, without an internal error."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess

import pytest

from tests.support.project import NICEEVAL, Project, base_env
from tests.support.terminal import on_a_terminal

EVALS = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals


@define_eval()
def passes(t):
    t.check(1, equals(1)).label("one is one")


@define_eval()
def fails(t):
    t.check(1, equals(2)).label("one is two")
"""


@pytest.fixture
def ran(project: Project, made_once) -> Project:
    """Two runs of two evals (one failing): enough rows for every reading command."""
    files = {"niceeval.toml": "[project]\n", "evals/two.py": EVALS}
    first, second = made_once.place(project, files, ("run",), ("run", "--rerun-all"))
    assert (first.exit_code, second.exit_code) == (1, 1)
    return project


def into_closed_pipe(proj: Project, *args: str) -> subprocess.CompletedProcess[str]:
    """`niceeval ARGS | head` where head has already gone: stdout is a pipe nobody reads, so
    the first write fails with a broken pipe, every time (no race with a reader's exit)."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([*NICEEVAL, *args], cwd=proj.root, env=base_env(None), stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write)


def run_ids(proj: Project) -> list[str]:
    return [row["id"] for row in proj.sql("SELECT id FROM runs ORDER BY started_at, id")]


@pytest.mark.parametrize("args", [
    ("query", "--format", "table"),
    ("query", "attempts", "--format", "table"),
    ("query", "--sql", "SELECT id FROM attempts", "--format", "table"),
    ("query", "--run", "all", "--format", "json"),
    ("query", "--run", "all", "--format", "ndjson"),
    ("view",),
    ("compare", "BASE", "NEW"),
    ("judge", "agreement"),
    ("report", "--out", "/dev/stdout"),
])
def test_a_reader_that_went_away_ends_every_reading_command_with_exit_0(ran: Project, args: tuple[str, ...]) -> None:
    base, new = run_ids(ran)
    args = tuple(base if a == "BASE" else new if a == "NEW" else a for a in args)
    done = into_closed_pipe(ran, *args)
    assert done.returncode == 0, (args, done.returncode, done.stderr)
    assert "Traceback" not in done.stderr and "Broken pipe" not in done.stderr, done.stderr


def strict_json(text: str) -> object:
    """json.loads that refuses what is not JSON although Python writes it (`Infinity`, `NaN`)."""
    def refuse(constant: str) -> object:
        raise ValueError(f"{constant} is not JSON")
    return json.loads(text, parse_constant=refuse)


ODD_VALUES = "SELECT x'00ff1b' AS blob, 1e999 AS up, -1e999 AS down, 0.5 AS half, 'a,\"b\"\nc' AS text"


def test_sql_writes_blobs_and_infinities_in_every_format(ran: Project) -> None:
    as_json = ran.cli("query", "--sql", ODD_VALUES, "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    expected = {"blob": "X'00FF1B'", "up": "Inf", "down": "-Inf", "half": 0.5, "text": 'a,"b"\nc'}
    assert strict_json(as_json.stdout) == [expected]
    as_ndjson = ran.cli("query", "--sql", ODD_VALUES, "--format", "ndjson")
    assert [strict_json(line) for line in as_ndjson.stdout.splitlines()] == [expected]
    as_csv = ran.cli("query", "--sql", ODD_VALUES, "--format", "csv")
    assert list(csv.reader(io.StringIO(as_csv.stdout))) == [
        list(expected), ["X'00FF1B'", "Inf", "-Inf", "0.5", 'a,"b"\nc']]


def test_sql_refuses_two_columns_of_one_name(ran: Project) -> None:
    done = ran.cli("query", "--sql", "SELECT a.id, r.id FROM attempts a JOIN runs r ON r.id = a.run_id",
                   "--format", "csv")
    assert done.returncode == 2 and done.stdout == "", done.stdout
    assert "two columns named 'id'" in done.stderr and "AS" in done.stderr, done.stderr


@pytest.mark.parametrize("flag", [("--run", "all"), ("--state", "failed"), ("--eval", "two/"), ("--experiment", "x")])
def test_sql_refuses_a_filter_it_would_not_apply(ran: Project, flag: tuple[str, str]) -> None:
    done = ran.cli("query", "--sql", "SELECT id FROM attempts", *flag)
    assert done.returncode == 2 and done.stdout == "", done.stdout
    assert f"so {flag[0]} cannot narrow it" in done.stderr, done.stderr


def test_sql_limit_bounds_the_rows_and_ends_an_endless_statement(ran: Project) -> None:
    endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c"
    apart = Project(ran.root)  # its own process, which the timeout ends if --limit does not
    done = apart.cli("query", "--sql", endless, "--limit", "3", "--format", "csv", timeout=60)
    assert (done.returncode, done.stdout) == (0, "x\n1\n2\n3\n"), done.stderr
    four = ran.cli("query", "--sql", "SELECT id FROM attempts", "--limit", "1", "--format", "ndjson")
    assert len(four.stdout.splitlines()) == 1, four.stdout


# What a system under test, a judge or a label's author wrote, as a terminal would act on it: a
# colour, a clipboard write (OSC 52), an 8-bit CSI (C1 \x9b) and a bidi override.
HOSTILE = "red\x1b[31mRED osc52\x1b]52;c;ZXZpbA==\x07 c1\x9b2J bidi\u202eevil"
RAW_FORMS = ("\x1b[31m", "\x1b]52", "\x07", "\x9b", "\u202e")
HOSTILE_EVALS = f'''
from niceeval_cli import Case, define_eval
from niceeval_cli.expect import includes


@define_eval(cases=[Case({HOSTILE!r}, 1)], tags=[{HOSTILE!r}])
def hostile(t, case):
    t.check({HOSTILE!r}, includes("nothing")).label("L " + {HOSTILE!r})
'''


@pytest.fixture
def hostile(project: Project, made_once) -> Project:
    """Two runs of one eval whose case id, tag, label and evidence hold terminal controls, with a
    label (its comment and author hold them too) on the first run's attempt."""
    files = {"niceeval.toml": "[project]\n", "evals/hostile.py": HOSTILE_EVALS}
    first, second = made_once.place(project, files, ("run",), ("run", "--rerun-all"))
    assert (first.exit_code, second.exit_code) == (1, 1)
    attempt = project.sql("SELECT id FROM attempts ORDER BY started_at LIMIT 1")[0]["id"]
    labelled = project.cli("label", f"@{attempt}", "--value", "0", "--comment", HOSTILE, "--author", HOSTILE)
    assert labelled.returncode == 0, labelled.stderr
    return project


def on_a_tty(proj: Project, *args: str, returncode: int = 0) -> str:
    """What `niceeval ARGS` writes to a real terminal (a pty), exiting `returncode`."""
    code, shown, _ = on_a_terminal([*NICEEVAL, *args], proj.root, base_env({"TERM": "xterm"}))
    assert code == returncode, shown
    return shown


@pytest.mark.parametrize("args", [
    ("compare", "BASE", "NEW", "--format", "json"),
    ("label", "export"),
    ("list", "--json"),
])
def test_json_on_a_terminal_makes_control_characters_visible(hostile: Project, args: tuple[str, ...]) -> None:
    base, new = run_ids(hostile)
    args = tuple(base if a == "BASE" else new if a == "NEW" else a for a in args)
    out = on_a_tty(hostile, *args)
    assert "\\u202e" in out, out[:400]
    for raw in RAW_FORMS:
        assert raw not in out, (args, repr(raw))
    piped = hostile.cli(*args)  # to a pipe the stored text is unchanged
    assert any(HOSTILE in text for line in piped.stdout.splitlines() for text in strings(json.loads(line)))


def test_run_json_on_a_terminal_makes_control_characters_visible(hostile: Project) -> None:
    out = on_a_tty(hostile, "run", "--json", "--rerun-all", returncode=1)
    assert "\\u202e" in out, out[:400]
    for raw in RAW_FORMS:
        assert raw not in out, repr(raw)
    piped = hostile.cli("run", "--json", "--rerun-all")  # to a pipe the events carry the text unchanged
    assert any(HOSTILE in text for line in piped.stdout.splitlines() for text in strings(json.loads(line)))


def strings(value: object) -> list[str]:
    """Every string in a JSON value, keys included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def test_label_names_its_author_escaped_on_a_terminal(hostile: Project) -> None:
    attempt = hostile.sql("SELECT id FROM attempts ORDER BY started_at LIMIT 1")[0]["id"]
    out = on_a_tty(hostile, "label", f"@{attempt}", "--value", "1", "--author", HOSTILE)
    assert "by red\\x1b[31mRED" in out, out
    for raw in RAW_FORMS:
        assert raw not in out, repr(raw)


@pytest.mark.parametrize("target", ["attempts", "assertions", "turns"])
def test_a_limit_past_sqlite_integers_limits_nothing(ran: Project, target: str) -> None:
    every = ran.cli("query", target, "--format", "ndjson", "--run", "all")
    huge = ran.cli("query", target, "--format", "ndjson", "--run", "all", "--limit", "99999999999999999999")
    assert huge.returncode == 0, huge.stderr
    assert huge.stdout == every.stdout


def test_a_confidence_out_of_range_is_shown_a_confidence_as_example(ran: Project) -> None:
    done = ran.cli("view", "--confidence", "2")
    assert done.returncode == 2
    assert "e.g. --confidence 0.95" in done.stderr, done.stderr


MANY_CHECKS = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals


@define_eval()
def many(t):
    for n in range(1005):
        t.check(n, equals(n)).label(f"check {n}")
"""


def test_a_table_shows_its_first_thousand_rows_and_says_how_to_see_more(project: Project, made_once) -> None:
    made_once.place(project, {"niceeval.toml": "[project]\n", "evals/many.py": MANY_CHECKS}, ("run",))
    table = project.cli("query", "--format", "table")
    assert table.returncode == 0, table.stderr
    assert "1000 row(s)" in table.stdout and "check 999" in table.stdout and "check 1000" not in table.stdout
    assert "only the first 1000 rows are shown in a table; `--limit N` shows N" in table.stdout
    wider = project.cli("query", "--format", "table", "--limit", "1002")
    assert "1002 row(s)" in wider.stdout and "only the first" not in wider.stdout
    every = project.cli("query", "--format", "ndjson")
    assert len(every.stdout.splitlines()) == 1005
