"""Issue 22, item 5 (what a new user hit on the command line), reproduced from the outside: the
real `niceeval` in a subprocess, its JUnit read by a real JUnit parser (junitparser) and by
xml.etree, its `--help` and `list` output as a user reads them."""

from __future__ import annotations

import json
import re
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.support.project import Project

junitparser = pytest.importorskip("junitparser", reason="the [test] extra installs junitparser")
from junitparser import xunit2  # noqa: E402

EVALS = """
import os
import time
from pathlib import Path

from niceeval_cli import Fact, define_eval, define_score_eval
from niceeval_cli.expect import equals, includes


def ticket() -> int:
    '''0, 1, 2, ... in the order attempts ask (atomic: O_EXCL), whatever runs them.'''
    folder = Path(os.environ["TICKETS"])
    n = 0
    while True:
        try:
            os.close(os.open(folder / f"t{n}", os.O_CREAT | os.O_EXCL))
            return n
        except FileExistsError:
            n += 1


@define_eval()
def slow(t):
    time.sleep(0.6)
    t.check(1, equals(1)).label("fine")


@define_eval()
def wrong(t):
    t.check("14 days", equals("30 days")).label("Mentions 30 days")


@define_eval()
def crash(t):
    raise ValueError("boom")


@define_eval(attempts=3, pass_rule="any")
def flaky(t):
    n = ticket()
    if n == 1:
        raise RuntimeError("network hiccup")
    t.check("yes" if n >= 2 else "no", equals("yes")).label("Says yes")


@define_score_eval()
def rude(t):
    t.check("you fool", includes("please")).gate().label("No insults")
    t.check("help", includes("help")).score(3).label("Offers help")


@define_score_eval()
def partial(t):
    t.check(Fact.unavailable("completion-unobserved"), equals(True)).score(5).label("Done")
    t.check("x", equals("x")).score(1).label("Tried")


@define_eval(cases={"paris": "France", "rome": "Spain"})
def capital(t, country):
    t.check(country, equals("France")).label("In France")
"""


@pytest.fixture
def proj(tmp_path: Path) -> Project:
    p = Project(tmp_path / "proj", in_process=True)
    p.write("niceeval.toml", "[project]\nmax_concurrency = 4\n")
    p.write("evals/a.py", EVALS)
    (tmp_path / "tickets").mkdir()
    return p


def _env(proj: Project) -> dict[str, str | None]:
    return {"TICKETS": str(proj.root.parent / "tickets")}


def _cases(path: Path) -> dict[str, xunit2.TestCase]:
    xml = xunit2.JUnitXml.fromfile(str(path))
    return {f"{c.classname}::{c.name}": c for suite in xml for c in suite}


def _timed_run(proj: Project, junit: str) -> tuple[float, str]:
    start = time.monotonic()
    res = proj.run("--junit", junit, env=_env(proj))
    took = time.monotonic() - start
    assert res.returncode == 1, res.stderr
    run_id = re.search(r"niceeval view (\w{26})", res.stdout)
    assert run_id, res.stdout
    return took, run_id.group(1)


@pytest.mark.slow
def test_junit_is_one_testcase_per_eval_with_its_folded_verdict(proj: Project) -> None:
    _timed_run(proj, "first.xml")
    got = _cases(proj.root / "first.xml")
    assert set(got) == {f"default::a/{n}" for n in
                        ("slow", "wrong", "crash", "flaky", "rude", "partial", "capital[paris]", "capital[rome]")}
    kinds = {key: [type(r).__name__ for r in case.result] for key, case in got.items()}
    assert kinds == {
        "default::a/slow": [], "default::a/flaky": [], "default::a/capital[paris]": [],
        "default::a/wrong": ["Failure"], "default::a/rude": ["Failure"], "default::a/capital[rome]": ["Failure"],
        "default::a/crash": ["Error"], "default::a/partial": ["Error"],
    }
    # <failure>: the failing labels; <error>: the reasons.
    assert got["default::a/wrong"].result[0].message == "Mentions 30 days"
    assert got["default::a/rude"].result[0].message == "No insults"
    assert got["default::a/rude"].result[0].type == "gate failed"
    assert got["default::a/capital[rome]"].result[0].message == "In France"
    assert "ValueError: boom" in got["default::a/crash"].result[0].message
    assert "completion-unobserved" in got["default::a/partial"].result[0].message
    # The flaky eval passed under pass_rule any: one flakyFailure per failed attempt (and the
    # errored one as flakyError), Maven Surefire's schema, which junitparser reads.
    flaky = got["default::a/flaky"]
    assert flaky.is_passed and flaky.is_flaky
    [flaky_failure] = flaky.flaky_failures()
    assert flaky_failure.message == "Says yes" and "FAILED" in (flaky_failure.stack_trace or "")
    [flaky_error] = flaky.flaky_errors()
    assert "network hiccup" in (flaky_error.message or "")
    # Counted as CI counts them: 3 failures, 2 errors, 8 tests.
    root = ET.parse(proj.root / "first.xml").getroot()
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("8", "3", "2")
    assert got["default::a/slow"].time >= 0.6


@pytest.mark.slow
def test_junit_time_is_what_this_run_spent_and_reused_attempts_add_nothing(proj: Project) -> None:
    _, first = _timed_run(proj, "first.xml")
    took, second = _timed_run(proj, "second.xml")  # reuses what the first sealed (errored runs again)
    got = _cases(proj.root / "second.xml")
    slow = got["default::a/slow"]
    assert slow.time == 0.0, "a reused attempt adds 0 s to this run's JUnit"
    assert f"reused from run {first}" in (slow.system_out or "")
    assert got["default::a/wrong"].time == 0.0
    root = ET.parse(proj.root / "second.xml").getroot()
    total = float(root.get("time") or "nan")
    assert total <= took, f"JUnit says the run took {total} s; it took {took:.2f} s"
    assert sum(float(s.get("time") or 0) for s in root.iter("testsuite")) < 0.6
    # The re-executed errored attempt (flaky #1) is this run's; its reused siblings are named.
    flaky_out = got["default::a/flaky"].system_out or ""
    assert flaky_out.count(f"reused from run {first}") == 2 and second != first


# --- --help: what the help texts say reaches the screen; each command its own exit codes ----

COMMANDS = ["run", "view", "query", "list", "init", "compare", "report", "merge", "sandbox list", "sandbox prune",
            "label", "label import", "label export", "judge agreement", "review", "regrade"]


_HELP: dict[str, str] = {}  # one subprocess per command's --help for the whole module


def _help(proj: Project, command: str) -> str:
    """`niceeval COMMAND --help` as a 400-column pipe shows it (in process: byte for byte what the
    console script prints, without a start-up per command)."""
    if command not in _HELP:
        res = proj.cli(*command.split(), "--help", env={"COLUMNS": "400", "NO_COLOR": "1", "TERM": "dumb"},
                       timeout=300)
        assert res.returncode == 0, res.stderr
        _HELP[command] = res.stdout
    return _HELP[command]


def _click_command(command: str):  # type: ignore[no-untyped-def]
    import typer.main

    from niceeval_cli.cli import app

    found = typer.main.get_command(app)
    for part in command.split():
        found = found.commands[part]  # type: ignore[attr-defined]
    return found


@pytest.mark.slow
def test_help_shows_brackets_and_angle_brackets_of_every_option(tmp_path: Path) -> None:
    proj = Project(tmp_path / "p", in_process=True)
    assert "<eval id>[<case id>]" in _help(proj, "list")
    for command in COMMANDS:
        shown = " ".join(_help(proj, command).split())
        for param in _click_command(command).params:
            text = (getattr(param, "help", None) or "").replace("`", "").replace("**", "")
            for fragment in re.findall(r"<[^<>]*>(?:\[[^\]]*\])?|\[[^\]]*\]", text):
                assert fragment in shown, f"`niceeval {command} --help` lost {fragment!r} of {param.name}"


def _listed_codes(help_text: str) -> list[int]:
    section = help_text.split("Exit codes", 1)[1]
    return [int(n) for n in re.findall(r"^\s*[•*]\s*(\d+):", section, re.M)]


def test_every_command_lists_only_its_own_exit_codes(tmp_path: Path) -> None:
    from niceeval_cli._errors import COMMAND_EXIT_CODES

    proj = Project(tmp_path / "p", in_process=True)
    assert sorted(COMMAND_EXIT_CODES) == sorted(COMMANDS)
    for command in COMMANDS:
        assert _listed_codes(_help(proj, command)) == sorted(COMMAND_EXIT_CODES[command]), command
    assert _listed_codes(_help(proj, "list")) == [0, 2, 4, 130]  # no store: no 6, no SQL
    assert "SQL" not in _help(proj, "list").split("Exit codes", 1)[1]
    # 5: `--fail-on significant-regression` when a regression could not be told from noise (reports.md)
    assert _listed_codes(_help(proj, "compare")) == [0, 1, 2, 4, 5, 6, 130]
    assert _listed_codes(_help(proj, "run")) == [0, 1, 2, 3, 4, 5, 6, 130]
    docs = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
    for command, codes in COMMAND_EXIT_CODES.items():
        row = f"| `niceeval {command}` | {', '.join(str(int(c)) for c in sorted(codes))} |"
        assert row in docs, f"docs/cli.md lacks the exit-code row {row}"


def test_init_into_a_folder_it_cannot_write_is_a_usage_error(tmp_path: Path) -> None:
    proj = Project(tmp_path / "p", in_process=True)
    (proj.root / "evals").write_text("a file where the folder goes", encoding="utf-8")
    res = proj.cli("init")
    assert res.returncode == 2, res.stderr
    assert "evals/example.py" in res.stderr and "Traceback" not in res.stderr


# --- adapter option typos: "did you mean" --------------------------------------------------


@pytest.mark.parametrize(("adapter", "options", "typo", "meant"), [
    ("python", 'callabel = "agent:reply"', "callabel", "callable"),
    ("http", 'url = "http://127.0.0.1:9/x"\ntimout_ms = 1000', "timout_ms", "timeout_ms"),
    ("command", 'argv = ["true"]\nTimeout_ms = 1000', "Timeout_ms", "timeout_ms"),
])
def test_an_adapter_option_typo_says_which_key_was_meant(
    tmp_path: Path, adapter: str, options: str, typo: str, meant: str
) -> None:
    proj = Project(tmp_path / "p", in_process=True)
    proj.write("niceeval.toml", f'[experiments.sut]\nadapter = "{adapter}"\n[experiments.sut.options]\n{options}\n')
    proj.write("agent.py", "def reply(message):\n    return 'hi'\n")
    proj.write("evals/a.py", "from niceeval_cli import define_eval\n\n@define_eval()\ndef ok(t):\n    pass\n")
    res = proj.run()
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert f"unknown key {typo!r} (did you mean {meant!r}?)" in res.stderr, res.stderr
    assert "[experiments.sut.options]" in res.stderr and "Traceback" not in res.stderr


# --- experiments in the order of niceeval.toml -----------------------------------------------

ORDERED = """
[experiments.zeta]
description = "listed first"
[experiments.alpha]
[experiments.mid]
"""

ORDER_EVALS = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals


@define_eval()
def ok(t):
    t.check(1, equals(1)).label("fine")


@define_eval()
def bad(t):
    t.check(1, equals(2)).label("one is two")
"""


def _positions(text: str, names: list[str]) -> list[int]:
    return [text.index(n) for n in names]


@pytest.mark.slow
def test_every_output_lists_experiments_in_the_file_order(tmp_path: Path) -> None:
    proj = Project(tmp_path / "p", in_process=True)
    proj.write("niceeval.toml", ORDERED)
    proj.write("evals/a.py", ORDER_EVALS)
    order = ["zeta", "alpha", "mid"]
    listed = proj.cli("list", "--json")
    assert [e["id"] for e in json.loads(listed.stdout)["experiments"]] == order
    text = proj.cli("list").stdout.split("experiment(s):", 1)[1]
    assert _positions(text, order) == sorted(_positions(text, order))
    res = proj.run("--junit", "j.xml")
    assert res.returncode == 1, res.stderr
    sections = re.findall(r"^Experiment (\w+)", res.stdout, re.M)
    assert sections == order, res.stdout
    assert re.findall(r"^Experiment (\w+)", proj.cli("view").stdout, re.M) == order
    assert [s.get("name") for s in ET.parse(proj.root / "j.xml").getroot().iter("testsuite")] == order
    assert json.loads(proj.sql("SELECT experiments FROM runs")[0]["experiments"]) == order
    wrong = proj.cli("compare", "--experiments", "zeta", "nope")
    assert wrong.returncode == 2 and "zeta, alpha, mid" in wrong.stderr, wrong.stderr
