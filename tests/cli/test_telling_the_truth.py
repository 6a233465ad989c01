"""Issue 9, "what a user sees": the summary, the exit code and JUnit tell one story; a closed
pipe never stops a run; machine formats are safe on a terminal and give JSON as JSON."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.support.terminal import on_a_terminal

FLAKY = """
import itertools
from niceeval_cli import define_eval
from niceeval_cli.expect import equals

_attempt = itertools.count()

@define_eval(attempts=3, pass_rule="any")
def flaky(t):
    t.check("yes" if next(_attempt) == 0 else "no", equals("yes")).label("Says yes")
"""


def test_pass_rule_any_with_one_of_three_passing_is_one_passed_eval_everywhere(project) -> None:
    project.write("niceeval.toml", "[project]\nmax_concurrency = 1\n")
    project.write("evals/support.py", FLAKY)
    result = project.run("--junit", "junit.xml")
    assert result.exit_code == 0, result.stdout + result.stderr
    out = result.stdout
    assert "FAILED" not in out  # no failure block for an eval that passed under its rule
    assert "passed under pass_rule any: 1/3 passed · 33% [6%, 79%] · flaky" in out
    count_line = next(line for line in out.splitlines() if line.startswith("run "))
    assert count_line.endswith(": 1 eval: 1 passed · exit 0 (everything passed)")
    root = ET.parse(project.root / "junit.xml").getroot()
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("1", "0", "0")
    [case] = root.iter("testcase")
    assert "#" not in (case.get("name") or "#")  # the eval, not one attempt
    assert "failed #1" in (case.findtext("system-out") or "")  # the attempts are the detail


GATED = """
from niceeval_cli import define_eval, define_score_eval
from niceeval_cli.expect import equals

@define_eval()
def crashes(t):
    raise RuntimeError("boom")

@define_score_eval()
def rude(t):
    t.check("go away", equals("hello")).gate().label("Polite")
    t.check(1, equals(1)).score(2).label("Answered")

@define_score_eval()
def good(t):
    t.check(1, equals(1)).score(8).label("Answered")
"""


def test_the_count_line_names_the_definite_failure_behind_exit_1(project) -> None:
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/mixed.py", GATED)
    result = project.run()
    assert result.exit_code == 1
    count_line = next(line for line in result.stdout.splitlines() if line.startswith("run "))
    assert "1 eval: 1 errored" in count_line
    assert "2 score attempts: 1 gate failed, 1 scored" in count_line
    assert count_line.endswith("exit 1 (a definite failure: 1 gate failed)")
    view = project.cli("view").stdout
    assert "exit 1 (a definite failure: 1 gate failed)" in view.splitlines()[0]


def test_score_spread_over_evals_of_different_maxima_is_normalised_and_says_so(project) -> None:
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/mixed.py", GATED)
    out = project.run().stdout
    assert "score     10 of 10" in out  # 2 (gate failed, points kept) + 8
    assert "mean 100% · min 100% · max 100% of each eval's max (maxima differ) over 2 rankable attempts" in out


ERRORS_ONCE = """
import os
from niceeval_cli import define_eval
from niceeval_cli.expect import equals

@define_eval()
def shaky(t):
    if os.environ.get("SHAKY_FAILS") == "1":
        raise RuntimeError("down")
    t.check(1, equals(1)).label("fine")
"""


def test_the_reuse_line_says_why_nothing_was_reused(project) -> None:
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/shaky.py", ERRORS_ONCE)
    first = project.run(env={"SHAKY_FAILS": "1"})
    assert first.exit_code == 5
    assert "0 results reused (nothing sealed earlier had the same fingerprint)." in first.stdout
    again = project.run()
    assert again.exit_code == 0
    assert "nothing reused: 1 previous attempt errored, run again." in again.stdout
    assert "1 result(s) reused" in project.run().stdout
    project.write("evals/other.py", ERRORS_ONCE.replace("def shaky", "def other"))
    project.run(env={"SHAKY_FAILS": "1"})  # other errors; shaky is reused
    mixed = project.run()
    assert "1 result(s) reused from earlier runs" in mixed.stdout
    assert "Not reused: 1 previous attempt errored, run again." in mixed.stdout
    assert "nothing reused: --rerun-all." in project.run("--rerun-all").stdout


MANY = """
import time
from niceeval_cli import define_eval
from niceeval_cli.expect import equals

def _make(n):
    @define_eval(name=f"e{n:02d}")
    def one(t):
        time.sleep(0.01)
        t.check(n, equals(-1 if n == 7 else n)).label("Right number")
    return one

for _n in range(40):
    globals()[f"e{_n}"] = _make(_n)
"""


@pytest.mark.slow
def test_a_pipe_closed_early_never_stops_the_run(project) -> None:
    """`set -o pipefail; niceeval run | head -3`: every attempt sealed, the run finished, and
    niceeval exits with the run's own code (1: one eval fails)."""
    project.write("niceeval.toml", "[project]\nmax_concurrency = 1\n")
    project.write("evals/many.py", MANY)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, "-c", "from niceeval_cli.cli import main; main()", "run"],
        cwd=project.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    head = [proc.stdout.readline() for _ in range(3)]
    proc.stdout.close()  # what `head -3` does after its third line
    stderr = proc.stderr.read().decode()
    code = proc.wait(timeout=120)
    assert len(head) == 3
    assert code == 1, stderr
    assert "Traceback" not in stderr and "Exception" not in stderr
    [run] = project.query("runs")
    assert (run["status"], run["exit_code"]) == ("finished", 1)
    assert len(project.attempts()) == 40


HOSTILE = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals

@define_eval()
def hostile(t):
    t.check(1, equals(1)).label("title \\x1b]0;pwned\\x07 bidi \\u202e c1 \\x9b end")
"""


def _read_pty(args: list[str], cwd: Path) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "COLUMNS": "200"}
    code, shown, errors = on_a_terminal([sys.executable, "-c", "from niceeval_cli.cli import main; main()", *args],
                                        cwd, env, stderr=False)
    assert code == 0, errors
    return shown


@pytest.mark.parametrize("fmt", ["csv", "json", "ndjson"])
def test_machine_formats_to_a_terminal_show_control_characters_escaped(project, fmt: str) -> None:
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/hostile.py", HOSTILE)
    assert project.run().exit_code == 0
    shown = _read_pty(["query", "assertions", "--format", fmt], project.root)
    assert "pwned" in shown
    for raw in ("\x1b]0;", "\x07", "\u202e", "\x9b"):
        assert raw not in shown, (fmt, raw)
    assert "\\u202e" in shown and "\\x9b" in shown


@pytest.mark.parametrize("fmt", ["csv", "json", "ndjson"])
def test_machine_formats_to_a_pipe_keep_the_stored_text_unchanged(project, fmt: str) -> None:
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/hostile.py", HOSTILE)
    assert project.run().exit_code == 0
    out = project.cli("query", "assertions", "--format", fmt).stdout
    label = "title \x1b]0;pwned\x07 bidi \u202e c1 \x9b end"
    if fmt == "csv":
        assert label in out
    else:
        rows = json.loads(out) if fmt == "json" else [json.loads(line) for line in out.splitlines()]
        assert rows[0]["label"] == label


def test_json_columns_are_json_values_in_json_formats_and_text_in_csv(project) -> None:
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/hostile.py", HOSTILE)
    events = [json.loads(line) for line in project.run("--json").stdout.splitlines()]
    sealed = next(e for e in events if e["event"] == "attempt.sealed")
    assert isinstance(sealed["attempt"]["fingerprint_parts"], dict)
    assert isinstance(sealed["assertions"][0]["match_config"], dict)
    [run] = project.query("runs")
    assert isinstance(run["argv"], list) and run["experiments"] == ["default"]
    [attempt] = project.attempts()
    assert isinstance(attempt["fingerprint_parts"], dict)
    [row] = project.assertions()
    assert isinstance(row["match_config"], dict) and row["evidence"] == 1
    csv_text = project.cli("query", "runs", "--format", "csv").stdout
    assert ',"[""default""]"' in csv_text  # CSV keeps the stored JSON text


def test_help_reads_like_a_man_page() -> None:
    from niceeval_cli.cli import app
    from tests.support.cli_runner import CliRunner

    runner = CliRunner()
    plain = {"COLUMNS": "120", "TERM": "dumb", "FORCE_COLOR": None}  # whatever the shell running pytest set
    top = runner.invoke(app, ["--help"], env=plain).stdout
    for text in ("Run evals and seal their results into the store.", "Show a run's results, failures first.",
                 "Print sealed rows (runs, attempts, assertions) for scripts."):
        assert text in " ".join(top.split()), text
    for command in ("run", "view", "query", "list", "init"):
        text = runner.invoke(app, [command, "--help"], env=plain).stdout
        shown = text.replace("<eval id>[<case id>]", "")  # list --cases names the case id form (issue 22)
        assert "<" not in shown and "[[" not in shown, (command, text)  # no <list[str]>, <bool>, <int range>
        assert "Exit codes" in text, command
    wide = {"COLUMNS": "120", "FORCE_COLOR": None}
    run_help = runner.invoke(app, ["run", "--help"], env=wide).stdout
    assert "Examples" in run_help and "130" in run_help and "--junit FILE" in " ".join(run_help.split())
    view_help = re.sub(r"[│\s]+", " ", runner.invoke(app, ["view", "--help"], env=wide).stdout)
    assert "errored, failed, unrankable, gate-failed, gate-unavailable, passed, scored" in view_help


_HELP_MODULES = """
import sys
from niceeval_cli.cli import main
try:
    main()
except SystemExit:
    pass
print(" ".join(sorted({m.split(".")[0] for m in sys.modules})), file=sys.stderr)
"""


def test_help_loads_nothing_it_does_not_need() -> None:
    """`run --help` stays fast by what it loads (its time is benchmarks/workloads.py startup's
    figure, not a timed test): no store, HTTP, templating, statistics or cluster library."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", _HELP_MODULES, "run", "--help"], env=env, check=True,
                          capture_output=True, text=True)
    loaded = set(done.stderr.split())
    assert "typer" in loaded  # the check can see what a command loads
    heavy = {"sqlite_utils", "httpx", "jinja2", "scipy", "numpy", "ray", "starlette", "uvicorn", "opentelemetry"}
    assert not loaded & heavy, sorted(loaded & heavy)


def test_view_state_outside_the_valid_values_is_a_usage_error_listing_them(project) -> None:
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/hostile.py", HOSTILE)
    project.run()
    result = project.cli("view", "--state", "broken")
    assert result.exit_code == 2
    assert "errored, failed, unrankable, gate-failed, gate-unavailable, passed, scored" in result.stderr
