"""Shared by tests/scale and benchmarks: a project of many small evals (passing, failing,
erroring, scored) to shard, merge and compare."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

EVALS = 14


def eval_source(count: int = EVALS) -> str:
    lines = [
        "from niceeval_cli import define_eval, define_score_eval",
        "from niceeval_cli.expect import equals",
        "",
    ]
    for i in range(count):
        if i % 5 == 4:
            lines += ["@define_score_eval()", f"def s{i:02d}(t):",
                      f"    t.check({i}, equals({i})).score(2).label('s{i} right')",
                      f"    t.check({i}, equals({i if i % 2 else -1})).score(1).label('s{i} maybe')", ""]
        else:
            expected = -1 if i % 4 == 3 else i  # a few fail
            lines += ["@define_eval()", f"def e{i:02d}(t):",
                      f"    t.check({i}, equals({expected})).label('e{i} equal')", ""]
            if i == 6:
                lines += ["@define_eval()", "def boom(t):", "    raise RuntimeError('boom')", ""]
    return "\n".join(lines)


TOML = """
[project]
attempts = 2
max_concurrency = 4
"""

#: Columns that differ between two runs of the same plan whatever the machine: ids and times.
VARYING = {"id", "run_id", "attempt_id", "started_at", "ended_at", "duration_ms"}


def comparable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in row.items() if k not in VARYING} for row in rows]


def query(project, target: str, *args: str) -> list[dict[str, Any]]:
    result = project.cli("query", target, "--format", "json", *args)
    assert result.exit_code == 0, result.stderr
    rows: list[dict[str, Any]] = json.loads(result.stdout)
    return rows


def store_of(project, name: str) -> Path:
    return project.root / f"{name}.db"
