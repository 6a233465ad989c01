"""Issue 24, item 9 (the suite's time): every `niceeval` process pays its start-up, so a command
imports only what it needs. Measured from the outside, as the check that a plain run imports no
scipy is: the real CLI under `python -X importtime`, in a project with a sealed run.

- `merge` imports no asyncio: the store's heartbeat loads it only when a run beats.
- `--version` stays a bare start: no pydantic, no rich, no store, no configuration.
- The command modules keep real annotations: typer reads every command's annotations on each
  start, and strings were compiled again every time (~17 ms of CPU per process).
- The commands that read the store (view, query, compare, report, label, judge agreement) load
  neither the authoring package, the sandboxes nor the matches (`expect`): the configuration takes
  the judge fields and the sandbox spec from low modules and checks an eval's options only when a
  run resolves them; the store takes the judge kinds' tables from a low module too.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.project import REPO, Project, base_env

pytestmark = pytest.mark.slow

EVALS = """
from niceeval_cli import define_eval
from niceeval_cli.expect import equals


@define_eval()
def ok(t):
    t.check(1, equals(1)).label("one")
"""

_MAIN = "import sys; from niceeval_cli.cli import main; sys.argv = ['niceeval', *sys.argv[1:]]; main()"


@pytest.fixture(scope="module")
def sealed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with a sealed run (made in process: only the measured commands are processes)."""
    proj = Project(tmp_path_factory.mktemp("startup") / "proj", in_process=True)
    proj.write("niceeval.toml", "[project]\n")
    proj.write("evals/a.py", EVALS)
    done = proj.run()
    assert done.returncode == 0, done.stdout + done.stderr
    return proj.root


def imported(root: Path, *args: str) -> tuple[int, set[str]]:
    """The exit code of `niceeval ARGS` and every module it imported."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", _MAIN, *args], cwd=root, env=base_env(),
                          capture_output=True, text=True, timeout=120)
    lines = [ln for ln in done.stderr.splitlines() if ln.startswith("import time:")]
    assert lines, done.stderr  # the measure saw the imports
    return done.returncode, {ln.rsplit("|", 1)[-1].strip() for ln in lines}


def test_merge_imports_no_asyncio(sealed: Path) -> None:
    code, modules = imported(sealed, "merge", ".niceeval/results.db", "--into", "again.db")
    assert code == 0
    assert "niceeval_cli.store" in modules  # the measure sees the store being loaded
    assert "asyncio" not in modules, "merge imported asyncio"


def test_version_is_a_bare_start(sealed: Path) -> None:
    code, modules = imported(sealed, "--version")
    assert code == 0
    assert not modules & {"pydantic", "rich", "niceeval_cli.store", "niceeval_cli.config"}, \
        sorted(modules & {"pydantic", "rich", "niceeval_cli.store", "niceeval_cli.config"})


def _attempt(root: Path) -> str:
    """The id of the sealed attempt (read with sqlite3, as a user's tool would)."""
    import sqlite3

    with sqlite3.connect(root / ".niceeval" / "results.db") as db:
        return str(db.execute("SELECT id FROM attempts LIMIT 1").fetchone()[0])


def _run_id(root: Path) -> str:
    import sqlite3

    with sqlite3.connect(root / ".niceeval" / "results.db") as db:
        return str(db.execute("SELECT id FROM runs LIMIT 1").fetchone()[0])


READERS = {
    "view": lambda root: ["view"],
    "query runs": lambda root: ["query", "runs"],
    "compare": lambda root: ["compare", _run_id(root), _run_id(root)],
    "report": lambda root: ["report"],
    "label": lambda root: ["label", f"@{_attempt(root)}", "one", "--value", "1", "--author", "Ada"],
    "judge agreement": lambda root: ["judge", "agreement"],
}


@pytest.mark.parametrize("command", list(READERS))
def test_a_reader_loads_no_authoring_no_sandbox_and_no_matches(sealed: Path, command: str) -> None:
    code, modules = imported(sealed, *READERS[command](sealed))
    assert code == 0, command
    assert "niceeval_cli.config" in modules  # the measure sees the configuration being loaded
    heavy = sorted(modules & {"niceeval_cli.authoring", "niceeval_cli.sandbox", "niceeval_cli.expect",
                              "niceeval_cli.adapters", "niceeval_cli.runner"})
    assert heavy == [], f"{command} imported {heavy}"


def test_the_command_modules_keep_real_annotations() -> None:
    stringified = []
    for path in sorted((REPO / "niceeval_cli" / "cli").glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ImportFrom) and node.module == "__future__" and \
                    any(alias.name == "annotations" for alias in node.names):
                stringified.append(path.name)
    assert stringified == [], stringified
