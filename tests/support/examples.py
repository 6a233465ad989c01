"""The examples' end-to-end project: a private copy of examples/ and the root niceeval.toml, run
through the CLI in process, with the judge pointed at the loopback judge server when asked
(tests/examples/conftest.py makes one per test; a module may share one run)."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from niceeval_cli.cli import app
from tests.support.cli_runner import CliRunner
from tests.support.loopback import JudgeServer
from tests.support.project import DISPLAY_VARIABLES

REPO = Path(__file__).resolve().parents[2]
KEY_ENV = "NICEEVAL_EXAMPLES_TEST_KEY"
KEY_VALUE = "examples-test-key-5fQ2"
JUDGE_KEY_VARIABLES = ("OPENAI_API_KEY", "LOCAL_JUDGE_API_KEY", KEY_ENV)

#: The CLI in process prints as it would to a pipe of a new process: a FORCE_COLOR, COLUMNS or
#: LINES of the shell that ran pytest stays out (as `Project` keeps it out).
_PLAIN = dict.fromkeys(DISPLAY_VARIABLES)


@dataclass
class Run:
    exit_code: int
    output: str


class ExamplesProject:
    """A copy of the repository's examples and niceeval.toml in a temporary folder."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.root = root
        self.monkeypatch = monkeypatch
        self.toml = root / "niceeval.toml"
        self.store = root / ".niceeval" / "results.db"

    # -- configuration ------------------------------------------------------------------------
    def replace(self, old: str, new: str) -> None:
        text = self.toml.read_text(encoding="utf-8")
        assert text.count(old) == 1, f"{old!r} should occur once in niceeval.toml"
        self.toml.write_text(text.replace(old, new), encoding="utf-8")

    def use_judge(self, server: JudgeServer) -> None:
        """Point the project's [judge] at the loopback server, with a key in a test variable."""
        self.replace('[judge]\nmodel = "gpt-4o-mini"\napi_key_env = "OPENAI_API_KEY"\n',
                     f'[judge]\nmodel = "gpt-4o-mini"\nbase_url = "{server.base_url}"\napi_key_env = "{KEY_ENV}"\n')
        self.monkeypatch.setenv(KEY_ENV, KEY_VALUE)

    def add_experiment(self, experiment_id: str, evals: str, **options: Any) -> None:
        """Append an experiment with the given switches (options) to the copied niceeval.toml."""
        table = f'experiments."{experiment_id}"'
        lines = [f"\n[{table}]", f'evals = ["{evals}"]', f"[{table}.options]"]
        lines += [f"{key} = {json.dumps(value)}" for key, value in options.items()]
        with self.toml.open("a", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")

    # -- the CLI ------------------------------------------------------------------------------
    def run(self, *args: str, cwd: Path | None = None) -> Run:
        self.monkeypatch.chdir(cwd or self.root)
        result = CliRunner().invoke(app, ["run", "--store", str(self.store), *args], env=_PLAIN)
        return Run(result.exit_code, result.output)

    def query(self, target: str, *args: str) -> list[dict[str, Any]]:
        self.monkeypatch.chdir(self.root)
        result = CliRunner().invoke(app, ["query", target, "--format", "json", "--store", str(self.store), *args],
                                    env=_PLAIN)
        assert result.exit_code == 0, result.output
        rows: list[dict[str, Any]] = json.loads(result.output)
        return rows

    def attempt(self, experiment_id: str) -> dict[str, Any]:
        [row] = self.query("attempts", "--experiment", experiment_id)
        return row

    def assertions(self, experiment_id: str) -> dict[str, dict[str, Any]]:
        """The experiment's assertion results by key (label, with its group)."""
        return {row["key"]: row for row in self.query("assertions", "--experiment", experiment_id)}


def copy_examples(folder: Path, monkeypatch: pytest.MonkeyPatch) -> ExamplesProject:
    """A private copy of examples/ and the root niceeval.toml in `folder`, on a fresh machine."""
    root = folder / "repo"
    shutil.copytree(REPO / "examples", root / "examples",
                    ignore=shutil.ignore_patterns("__pycache__", ".niceeval", "*.db*"))
    shutil.copy(REPO / "niceeval.toml", root / "niceeval.toml")
    for name in JUDGE_KEY_VARIABLES:  # a fresh machine: no judge key anywhere
        monkeypatch.delenv(name, raising=False)
    # ... and a pytest without plugins: the coding-agent example runs `python -m pytest` in each
    # attempt's workspace (inheriting this environment), where the test extras' plugins (langsmith,
    # hypothesis, xdist, ...) loaded into every run, ~2.6 s of CPU each instead of ~0.4 s.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    return ExamplesProject(root, monkeypatch)
