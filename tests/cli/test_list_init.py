"""`niceeval init` (a project that runs as-is) and `niceeval list [--json]`."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def test_init_writes_a_config_and_an_example_that_run_and_pass(project) -> None:
    result = project.cli("init")
    assert result.exit_code == 0
    assert "wrote   niceeval.toml" in result.stdout and "wrote   evals/example.py" in result.stdout
    assert (project.root / "niceeval.toml").is_file()
    # A new user's first run, in a fresh interpreter: it must pass (exit 0).
    done = subprocess.run([sys.executable, "-m", "niceeval_cli.cli", "run"], cwd=project.root,
                          env={**os.environ, "NO_COLOR": "1"}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "exit 0" in done.stdout


def test_init_never_overwrites_and_says_what_it_skipped(project) -> None:
    project.write("niceeval.toml", "[project]\nattempts = 2\n")
    result = project.cli("init")
    assert result.exit_code == 0
    assert "skipped niceeval.toml (it already exists; left unchanged)" in result.stdout
    assert "wrote   evals/example.py" in result.stdout
    assert (project.root / "niceeval.toml").read_text(encoding="utf-8") == "[project]\nattempts = 2\n"
    again = project.cli("init")
    assert "skipped evals/example.py" in again.stdout and "wrote" not in again.stdout


def test_list_json_prints_evals_and_experiments(project) -> None:
    project.write("niceeval.toml", """
        [experiments.local]
        description = "Simulated app"
        model = "m-1"
        evals = ["support/"]
        [experiments."models/b"]
        tags = ["smoke"]
    """)
    project.write("evals/support/refund.py", """
        from niceeval_cli import define_eval, define_score_eval
        from niceeval_cli.expect import equals

        @define_eval(tags=["smoke"], description="Refund window")
        def refund(t):
            t.check(1, equals(1))

        @define_score_eval()
        def 评分(t):
            t.check(1, equals(1)).score(1)
    """)
    result = project.cli("list", "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert [e["id"] for e in data["evals"]] == ["support/refund/refund", "support/refund/评分"]
    refund = data["evals"][0]
    assert refund == {"id": "support/refund/refund", "kind": "pass", "tags": ["smoke"], "adapter": None,
                      "file": "evals/support/refund.py", "description": "Refund window", "attempts": None,
                      "judge": False, "cases": None}
    assert data["evals"][1]["kind"] == "score"
    experiments = {x["id"]: x for x in data["experiments"]}
    assert experiments["local"]["model"] == "m-1" and experiments["local"]["evals"] == ["support/"]
    assert experiments["local"]["selected_evals"] == ["support/refund/refund", "support/refund/评分"]
    assert experiments["models/b"]["selected_evals"] == ["support/refund/refund"]


def test_list_prints_aligned_columns_when_piped(project) -> None:
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/问候.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval(tags=["smoke"])
        def hello(t):
            t.check(1, equals(1))
    """)
    project.write("evals/a_long_eval_name.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import equals

        @define_eval()
        def x(t):
            t.check(1, equals(1))
    """)
    result = project.cli("list")
    assert result.exit_code == 0, result.stderr
    from rich.cells import cell_len

    rows = [line for line in result.stdout.splitlines() if line.startswith("  ") and " pass " in line]
    assert len(rows) == 2
    assert len({cell_len(line[: line.index(" pass ")]) for line in rows}) == 1
    assert "1 experiment(s):" in result.stdout and "default" in result.stdout
