"""Every Python block of docs/agents.md runs as shown (as an eval module of a fresh project)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "agents.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_the_python_blocks_of_docs_agents_md_run_and_pass(project, index):
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/doc.py", BLOCKS[index])
    run = project.run()
    assert run.exit_code == 0, (run.stdout, run.stderr)
    assert {a["state"] for a in project.attempts()} == {"passed"}


def test_docs_agents_md_has_python_blocks():
    assert len(BLOCKS) >= 2
