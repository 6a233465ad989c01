"""Helpers of the end-to-end judge tests: a project on disk, `niceeval run` through the real
CLI (in process), and the loopback OpenAI-compatible server standing in for the judge model.

`judged` bundles the two: `judged.setup(evals=..., toml=...)` writes the project with a
`[judge]` table aimed at the server, `judged.run()` runs it with the judge key in `JK`, and
the readers return the stored rows.
"""

from __future__ import annotations

import json
import textwrap
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tests.support.loopback import JudgeServer, RecordedRequest, free_port
from tests.support.project import Project, Result

KEY_ENV = "JK"
KEY = "sk-test-e2eJudgeKey0123456789abcdef"
JUDGE_MODEL = "judge-m"

#: What every eval module below starts with.
HEADER = """\
from niceeval_cli import define_eval, define_score_eval
from niceeval_cli.expect import closed_qa, factuality, summarizes

QA = {"input": "What is the capital of France?", "output": "Paris."}
"""

Row = dict[str, Any]


@dataclass
class Judged:
    project: Project
    server: JudgeServer
    _results: list[Row] | None = None  # every stored assertion row, read once per run

    def judge_table(self, **fields: Any) -> str:
        """A `[judge]` table aimed at the loopback server (fields override / add keys)."""
        values: dict[str, Any] = {"model": JUDGE_MODEL, "base_url": self.server.base_url,
                                  "api_key_env": KEY_ENV}
        values.update(fields)
        body = "".join(f"{k} = {json.dumps(v)}\n" for k, v in values.items() if v is not None)
        return "[judge]\n" + body

    def setup(self, evals: Mapping[str, str] | str, *, toml: str | None = None,
              files: Mapping[str, str] | None = None) -> None:
        """Write niceeval.toml (default: `[project]` + `judge_table()`) and eval modules;
        a single source goes to evals/e.py. Every module gets HEADER prepended."""
        self.project.write("niceeval.toml", toml if toml is not None else "[project]\n" + self.judge_table())
        modules = {"e": evals} if isinstance(evals, str) else evals
        for name, source in modules.items():
            self.project.write(f"evals/{name}.py", HEADER + textwrap.dedent(source))
        for rel, text in (files or {}).items():
            self.project.write(rel, text)

    def run(self, *args: str, key: str | None = KEY, env: Mapping[str, str | None] | None = None) -> Result:
        """`niceeval run ARGS` with the judge key in JK (`key=None` unsets it)."""
        full: dict[str, Any] = {KEY_ENV: key, "OPENAI_API_KEY": None, "NO_COLOR": "1"}
        full.update(env or {})
        self._results = None
        return self.project.run(*args, env=full)

    def attempts(self, *args: str) -> list[Row]:
        return self.project.attempts(*args)

    def assertions(self, *args: str) -> list[Row]:
        return self.project.assertions(*args)

    def sql(self, statement: str) -> list[Row]:
        result = self.project.cli("query", "--sql", statement, "--format", "json")
        assert result.exit_code == 0, result.stderr
        rows: list[Row] = json.loads(result.stdout)
        return rows

    def one_attempt(self) -> Row:
        (attempt,) = self.attempts()
        return attempt

    def result(self, label: str, eval_id: str | None = None) -> Row:
        """The one stored assertion row with this label (in this eval)."""
        if self._results is None:
            self._results = self.assertions("--run", "all")
        rows = [r for r in self._results
                if r["label"] == label and (eval_id is None or r["eval_id"] == eval_id)]
        assert len(rows) == 1, (label, rows)
        return rows[0]

    @property
    def grading(self) -> list[RecordedRequest]:
        return self.server.grading_requests

    @property
    def probes(self) -> list[RecordedRequest]:
        """Preflight requests: everything that did not carry the `grade` tool."""
        return [r for r in self.server.requests if not (isinstance(r.json, dict) and "tools" in r.json)]


closed_port = free_port  # a loopback port nothing listens on (connecting to it is refused)


def user_message(request: RecordedRequest) -> str:
    """The user prompt text of a grading request."""
    messages = request.json["messages"]
    return str(next(m["content"] for m in messages if m["role"] == "user"))


def wait_for_requests(server: JudgeServer, n: int, timeout_s: float = 5.0) -> list[RecordedRequest]:
    """The server's log once it holds `n` requests (a request is logged when it is answered, so
    one the client gave up on appears only after its scripted delay)."""
    deadline = time.monotonic() + timeout_s
    while len(server.requests) < n and time.monotonic() < deadline:
        time.sleep(0.01)
    return server.requests


def line_of(judged: Judged, text: str, module: str = "e") -> int:
    """1-based line of the first line of evals/<module>.py containing `text`."""
    lines = (judged.project.root / "evals" / f"{module}.py").read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)
