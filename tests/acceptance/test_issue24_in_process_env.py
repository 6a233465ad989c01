"""Issue 24 (suite time): a check moved from a real `niceeval` subprocess to the in-process driver
must see what the subprocess saw. The subprocess path starts the CLI without the judge keys,
FORCE_COLOR, COLUMNS and LINES of the shell that ran pytest (`tests/support/project.py`
`base_env`); the in-process path must leave them out too, or a developer's `FORCE_COLOR=1` (or CI's)
colours the output the checks read, and an exported `OPENAI_API_KEY` reaches the project."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.project import Project

SEEN = """
import json, os, pathlib

from niceeval_cli import define_eval
from niceeval_cli.expect import equals

NAMES = ("OPENAI_API_KEY", "LOCAL_JUDGE_API_KEY", "FORCE_COLOR", "COLUMNS", "LINES")
pathlib.Path("seen.json").write_text(json.dumps({name: os.environ.get(name) for name in NAMES}))


@define_eval()
def ok(t):
    t.check(1, equals(1)).label("fine")
"""

OUTER = {"OPENAI_API_KEY": "sk-from-the-shell", "LOCAL_JUDGE_API_KEY": "sk-local", "FORCE_COLOR": "1",
         "COLUMNS": "30", "LINES": "5"}


@pytest.fixture
def shell_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in OUTER.items():
        monkeypatch.setenv(name, value)


@pytest.mark.parametrize("in_process", [False, True], ids=["subprocess", "in-process"])
def test_the_cli_never_sees_the_shells_keys_colour_or_size(tmp_path: Path, shell_env: None, in_process: bool) -> None:
    proj = Project(tmp_path / "p", in_process=in_process)
    proj.write("niceeval.toml", "[project]\n")
    proj.write("evals/e.py", SEEN)
    listed = proj.cli("list")
    assert listed.returncode == 0, listed.stderr
    assert "\x1b[" not in listed.stdout + listed.stderr
    assert json.loads((proj.root / "seen.json").read_text()) == dict.fromkeys(OUTER)


def test_a_variable_the_test_gives_still_reaches_the_cli(tmp_path: Path, shell_env: None) -> None:
    proj = Project(tmp_path / "p", in_process=True)
    proj.write("niceeval.toml", "[project]\n")
    proj.write("evals/e.py", SEEN)
    assert proj.cli("list", env={"COLUMNS": "200", "OPENAI_API_KEY": "sk-given"}).returncode == 0
    seen = json.loads((proj.root / "seen.json").read_text())
    assert seen["COLUMNS"] == "200" and seen["OPENAI_API_KEY"] == "sk-given" and seen["FORCE_COLOR"] is None


@pytest.mark.parametrize("in_process", [False, True], ids=["subprocess", "in-process"])
def test_the_run_stores_its_own_command_line(tmp_path: Path, in_process: bool) -> None:
    """A run keeps its argv (`runs.argv`, shown by view and the report); in process it must be
    the CLI's arguments, not pytest's own command line."""
    proj = Project(tmp_path / "p", in_process=in_process)
    proj.write("niceeval.toml", "[project]\n")
    proj.write("evals/e.py", SEEN)
    assert proj.run("--attempts", "1").returncode == 0
    assert [json.loads(r["argv"]) for r in proj.sql("SELECT argv FROM runs")] == [["run", "--attempts", "1"]]
