"""Issue 24, items 4, 5, 6 (cli) and 8 (typer, GC): the command line as a small package on typer's
public API, the run's events through one relay, one broken-pipe policy — observed from the outside
(the real console script, real pipes, a real store) and from the package's own imports."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import tomllib

from niceeval_cli._collector import ATTEMPTS_THRESHOLD
from tests.support.project import NICEEVAL, REPO, Project, base_env

PACKAGE = REPO / "niceeval_cli"


def _imported(path: Path) -> set[str]:
    """The niceeval_cli modules a file imports (relative imports resolved), lazy ones included."""
    parts = path.relative_to(REPO).with_suffix("").parts
    package = parts[:-1]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = list(package[: len(package) - node.level + 1]) if node.level else []
            target = ".".join([*base, *(node.module.split(".") if node.module else [])])
            names.add(target)
            names.update(f"{target}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return {n for n in names if n.startswith("niceeval_cli")}


# ── item 6: cli/ is a small package; the entry points keep working ──────────────────────────

def test_the_command_line_is_a_package_of_small_modules() -> None:
    assert not (PACKAGE / "cli.py").exists()
    modules = sorted((PACKAGE / "cli").glob("*.py"))
    assert len(modules) >= 4
    for module in modules:
        lines = module.read_text(encoding="utf-8").count("\n")
        assert lines <= 600, (module.name, lines)


def test_the_console_script_and_both_module_forms_start_the_same_command(tmp_path: Path) -> None:
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"niceeval": "niceeval_cli.cli:main"}
    for argv in (NICEEVAL, [sys.executable, "-m", "niceeval_cli"], [sys.executable, "-m", "niceeval_cli.cli"]):
        done = subprocess.run([*argv, "--version"], cwd=tmp_path, env=base_env(), capture_output=True, text=True)
        assert done.returncode == 0 and done.stdout.startswith("niceeval "), (argv, done.stdout, done.stderr)
        listed = subprocess.run([*argv, "--help"], cwd=tmp_path, env=base_env({"COLUMNS": "120"}),
                                capture_output=True, text=True)
        names = [line.split()[1] for line in listed.stdout.splitlines() if line.startswith("│ ") and
                 len(line.split()) > 2 and line.split()[1].isalpha() and line.split()[1].islower()]
        # The commands in the order they were listed before the split (later commands join in between).
        order = ["run", "view", "query", "merge", "list", "init", "compare", "report", "sandbox"]
        assert [n for n in names if n in order] == order, names


def test_the_command_line_reads_output_formats_through_their_public_module() -> None:
    for module in (PACKAGE / "cli").glob("*.py"):
        private = sorted(n for n in _imported(module) if n.startswith("niceeval_cli.reports._"))
        assert not private, (module.name, private)


def test_an_unknown_query_format_lists_the_registered_ones(tmp_path: Path) -> None:
    proj = Project(tmp_path, in_process=True)
    proj.write("niceeval.toml", "[project]\n")
    done = proj.cli("query", "runs", "--format", "yaml")
    assert done.returncode == 2
    assert "--format 'yaml' is not one of json, ndjson, csv, table" in done.stderr


# ── item 8: typer's public API only; the help reads as before ──────────────────────────────

def test_importing_the_command_line_leaves_typer_as_it_is() -> None:
    probe = ("import typer.core, typer.main\n"
             "before = (typer.main.TyperArgument, typer.main.TyperOption, typer.core.TyperOption)\n"
             "import niceeval_cli.cli\n"
             "after = (typer.main.TyperArgument, typer.main.TyperOption, typer.core.TyperOption)\n"
             "assert before == after, after\n"
             "assert all(c.__module__.startswith('typer') for c in after), after\n")
    done = subprocess.run([sys.executable, "-c", probe], env=base_env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_help_rows_show_metavars_and_no_type_labels(tmp_path: Path) -> None:
    proj = Project(tmp_path, in_process=True)  # what --help prints (the console script: above)
    for command in ([], ["run"], ["view"], ["query"], ["merge"], ["compare"], ["report"], ["sandbox"],
                    ["sandbox", "list"]):
        done = proj.cli(*command, "--help", env={"COLUMNS": "120", "TERM": "dumb"})
        assert done.returncode == 0, done.stderr
        for label in ("<bool>", "<str>", "<list[str]>", "<list[Path]>", "<Path>"):
            assert label not in done.stdout, (command, label)
    run_help = " ".join(proj.cli("run", "--help", env={"COLUMNS": "120"}).stdout.split())
    assert "EVAL_PREFIX Only evals whose id starts with one of these." in run_help
    assert "--junit FILE Also write JUnit XML here." in run_help
    assert "--help Show this message and exit." in run_help


def test_a_bad_option_value_is_still_typers_usage_error(tmp_path: Path) -> None:
    proj = Project(tmp_path, in_process=True)
    proj.write("niceeval.toml", "[project]\n")
    done = proj.run("--attempts", "0")
    assert done.returncode == 2
    assert "Invalid value for '--attempts'" in done.stderr


_GC_PROBE = """
import gc
from pathlib import Path
from niceeval_cli import define_eval

Path("defined.txt").write_text(f"{gc.isenabled()} {gc.get_threshold()[0]}")


def probe(t):
    Path("attempt.txt").write_text(f"{gc.isenabled()} {gc.get_threshold()[0]} {gc.get_freeze_count() > 0}")


probe_eval = define_eval(test=probe, name="probe")
"""


def test_one_collector_policy_applied_at_the_run_s_release_point(tmp_path: Path) -> None:
    touching = sorted(
        str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
        if any(f"gc.{call}(" in path.read_text(encoding="utf-8")
               for call in ("freeze", "set_threshold", "disable", "enable"))
    )
    assert touching == ["_collector.py"], touching
    proj = Project(tmp_path)
    proj.write("niceeval.toml", "[project]\n")
    proj.write("evals/probe.py", _GC_PROBE)
    done = proj.run()
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "defined.txt").read_text() == "True 20000"  # building: a high threshold
    # after the release point: the attempts' threshold (an attempt leaves no cycles to collect)
    assert (tmp_path / "attempt.txt").read_text() == f"True {ATTEMPTS_THRESHOLD} True"


# ── item 5: one relay, one broken-pipe policy ───────────────────────────────────────────────

_MANY = '''
from niceeval_cli import define_eval
from niceeval_cli.expect import equals


@define_eval(attempts=40)
def good(t):
    t.check(1, equals(1)).label("one")


@define_eval(attempts=10)
def bad(t):
    t.check(1, equals(2)).label("two")
'''


def test_a_reader_gone_from_the_events_stops_only_them_the_junit_file_and_the_store_get_everything(
    tmp_path: Path,
) -> None:
    proj = Project(tmp_path)
    proj.write("niceeval.toml", "[project]\nmax_concurrency = 2\n")
    proj.write("evals/many.py", _MANY)
    done = proj.shell("set -o pipefail; niceeval run --json --junit report.xml | head -1; echo \"rc=${PIPESTATUS[0]}\"")
    assert "rc=1" in done.stdout, done.stdout + done.stderr  # the run's own code: `bad` failed
    assert done.stdout.splitlines()[0].startswith('{"event": "run.planned"')
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    [run] = proj.sql("SELECT status, exit_code FROM runs")
    assert (run["status"], run["exit_code"]) == ("finished", 1)
    assert proj.sql("SELECT count(*) AS n FROM attempts")[0]["n"] == 50
    junit = (tmp_path / "report.xml").read_text()
    assert junit.count("<testcase") == 2 and "<failure" in junit


def test_a_reader_gone_from_the_summary_keeps_the_exit_code_and_a_reader_gone_from_query_is_exit_0(
    tmp_path: Path,
) -> None:
    proj = Project(tmp_path)
    proj.write("niceeval.toml", "[project]\n")
    proj.write("evals/many.py", _MANY)
    done = proj.shell("set -o pipefail; niceeval run | head -1; echo \"rc=${PIPESTATUS[0]}\"")
    assert "rc=1" in done.stdout and "Traceback" not in done.stderr, done.stdout + done.stderr
    done = proj.shell("niceeval query attempts --format ndjson | head -1; echo \"rc=${PIPESTATUS[0]}\"")
    assert "rc=0" in done.stdout and "Traceback" not in done.stderr, done.stdout + done.stderr


def test_one_module_holds_the_broken_pipe_policy() -> None:
    holders = sorted(
        str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
        if "os.dup2(" in path.read_text(encoding="utf-8")
    )
    assert holders == ["_stdout.py"], holders
    forwarding = [path.name for path in PACKAGE.rglob("*.py")
                  if "class _Recording" in (text := path.read_text(encoding="utf-8"))
                  or "class _ReleasingEvents" in text]
    assert not forwarding, forwarding


# ── item 4: the run's result flows one way ──────────────────────────────────────────────────

def test_no_report_module_climbs_back_into_the_app() -> None:
    climbing = {
        str(path.relative_to(PACKAGE)): sorted(
            n for n in _imported(path) if n.split(".")[:2] == ["niceeval_cli", "app"])
        for path in (PACKAGE / "reports").rglob("*.py")
    }
    assert {module: names for module, names in climbing.items() if names} == {}
