"""Issue 9, items 24 and 25: the README's "A first eval" runs exactly as written (files from its
code blocks, commands from its bash block, exit codes as its comments say), and the docs agree
with what the fingerprint covers (editing a project module an eval imports re-runs it)."""

from __future__ import annotations

import json
import re

import pytest

from tests.support.project import REPO, Project


def _first_eval_blocks() -> tuple[dict[str, str], list[str]]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## A first eval", 1)[1].split("\n## ", 1)[0]
    files: dict[str, str] = {}
    commands: list[str] = []
    for lang, body in re.findall(r"```(\w+)\n(.*?)```", section, re.S):
        first = body.splitlines()[0]
        if lang in ("python", "toml") and first.startswith("# "):
            files[first[2:].strip()] = body
        elif lang == "bash":
            commands += [line for line in body.splitlines() if line.strip()]
    return files, commands


@pytest.mark.slow
def test_the_readme_first_eval_runs_as_written(proj: Project) -> None:
    files, commands = _first_eval_blocks()
    assert set(files) == {"bot.py", "niceeval.toml", "evals/refunds.py"}, files
    for name, body in files.items():
        (proj.root / name).parent.mkdir(parents=True, exist_ok=True)
        (proj.root / name).write_text(body, encoding="utf-8")
    assert len(commands) == 3, commands
    for line in commands:
        command, _, comment = line.partition("#")
        expected = int(m.group(1)) if (m := re.search(r"exit (\d+)", comment)) else 0
        res = proj.shell(f"set -o pipefail\n{command}", env={"NO_COLOR": "1"})
        assert res.returncode == expected, (line, res.returncode, res.stdout[-1500:], res.stderr[-1500:])
        assert "Traceback" not in res.stderr
        if "query" in command:
            rows = [json.loads(x) for x in res.stdout.splitlines()]
            assert rows and {r["reason"] for r in rows} == {"judge-model-unresolved"}, rows  # README: no model set
    attempts = proj.sql("SELECT state, reason FROM attempts")
    assert attempts and all(a["reason"] != "no-adapter" for a in attempts), attempts
    labels = {r["label"]: r["state"] for r in proj.sql("SELECT label, state FROM assertion_results")}
    assert labels == {"Mentions 30 days": "matched", "Clear answer": "unavailable"}, labels


def test_the_docs_agree_that_the_fingerprint_covers_the_project_modules_an_eval_uses() -> None:
    pages = {p.name: p.read_text(encoding="utf-8") for p in (REPO / "docs").glob("*.md")}
    for name, text in pages.items():
        flat = " ".join(text.split()).lower()
        assert "eval module only" not in flat and "only the eval module" not in flat, name
    for name in ("adapters.md", "configuration.md", "getting-started.md"):
        assert "project modules it uses" in " ".join(pages[name].split()), name


def test_editing_a_project_module_the_eval_imports_changes_the_fingerprint(project: Project) -> None:
    proj = project  # the CLI in process: each call re-imports the project's modules, as a new process would
    proj.write("support_bot.py", 'def answer():\n    return "30 days"\n')
    proj.write("evals/refunds.py", '''
        from niceeval_cli import define_eval
        from niceeval_cli.expect import includes

        import support_bot


        @define_eval()
        async def refunds(t):
            t.check(support_bot.answer(), includes("30")).label("window")
    ''')
    assert proj.run().returncode == 0
    proj.write("support_bot.py", 'def answer():\n    return "30 days!"\n')
    dry = proj.cli("run", "--dry", env={"NO_COLOR": "1"})
    assert "fingerprint-changed (source-changed: support_bot.py)" in dry.stdout, dry.stdout
    again = proj.run(env={"NO_COLOR": "1"})
    assert again.returncode == 0 and "1 to execute, 0 reused" in again.stdout, again.stdout
