"""A throwaway NiceEval project on disk, driven through the real CLI (typer's CliRunner).

`from projects import Project` works in any test: tests/conftest.py puts this folder on sys.path.
"""

from __future__ import annotations

import json
import os
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from niceeval_cli.cli import app


@dataclass(frozen=True)
class Result:
    exit_code: int
    stdout: str
    stderr: str


class Project:
    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def write(self, rel: str, text: str) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    def cli(self, *args: str, env: Mapping[str, str] | None = None) -> Result:
        """Invoke `niceeval ARGS` in the project folder; output captured separately."""
        runner = CliRunner()
        old = Path.cwd()
        os.chdir(self.root)
        try:
            result = runner.invoke(app, list(args), env=dict(env or {}), catch_exceptions=False)
        finally:
            os.chdir(old)
        return Result(result.exit_code, result.stdout, result.stderr)

    def run(self, *args: str, env: Mapping[str, str] | None = None) -> Result:
        return self.cli("run", *args, env=env)

    def query(self, target: str = "attempts", *args: str) -> list[dict[str, Any]]:
        result = self.cli("query", target, "--format", "json", *args)
        assert result.exit_code == 0, result.stderr
        rows: list[dict[str, Any]] = json.loads(result.stdout)
        return rows

    def attempts(self, *args: str) -> list[dict[str, Any]]:
        return self.query("attempts", *args)

    def assertions(self, *args: str) -> list[dict[str, Any]]:
        return self.query("assertions", *args)
