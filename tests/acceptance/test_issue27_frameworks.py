"""Issue 27, item 2: the python adapter accepts a framework's own result, from the outside.

A project's callable returns a pydantic-ai, OpenAI Agents SDK or LangGraph result as it is; the
CLI (in process) stores its tool calls, and each stored call (name, arguments, status) equals the
log the tool functions wrote themselves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.project import Project

#: Under `-n`, the tests that import the real frameworks share one worker: importing pydantic-ai,
#: the Agents SDK and LangGraph costs ~4 s of CPU in each worker that does it.
pytestmark = pytest.mark.xdist_group("frameworks")


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process (tests/conftest.py `project`): these checks read exit codes, output and
    stored rows; what is about a process (signals, pipes) still starts the real `niceeval`."""
    return project


FRAMEWORKS = Path(__file__).resolve().parents[1] / "support" / "frameworks.py"

APP = """
import json, os
from _frameworks import langgraph_run, openai_agents_run, pydantic_ai_run


def _logged(run, message):
    result, log = run(message)
    with open(os.environ["TOOL_LOG"], "a") as out:
        out.write(json.dumps({"framework": run.__name__, "calls": log}) + "\\n")
    return result


def pydantic_ai(message):
    return _logged(pydantic_ai_run, message)


def openai_agents(message):
    return _logged(openai_agents_run, message)


def langgraph(message):
    return _logged(langgraph_run, message)
"""

EVAL = """
from niceeval_cli import define_eval


@define_eval()
async def refund(t):
    turn = await t.send("refund order 7")
    turn.called_tool("lookup").label("Looked the order up")
    turn.called_tool("refund").label("Tried the refund")
"""


@pytest.mark.slow
def test_each_frameworks_result_is_stored_as_the_tools_logged_it(proj: Project, tmp_path: Path) -> None:
    for module in ("pydantic_ai", "agents", "langgraph"):
        pytest.importorskip(module)
    proj.write("_frameworks.py", FRAMEWORKS.read_text(encoding="utf-8"))
    proj.write("app.py", APP)
    proj.write("evals/refund.py", EVAL)
    toml = "[project]\n"
    for name in ("pydantic_ai", "openai_agents", "langgraph"):
        toml += f'\n[experiments.{name}]\nadapter = "python"\n[experiments.{name}.options]\ncallable = "app:{name}"\n'
    proj.write("niceeval.toml", toml)
    log_file = tmp_path / "tools.ndjson"

    result = proj.run(env={"TOOL_LOG": str(log_file), "OPENAI_AGENTS_DISABLE_TRACING": "1"})

    assert result.returncode == 0, result.stdout + result.stderr
    logged = {json.loads(line)["framework"].removesuffix("_run"): json.loads(line)["calls"]
              for line in log_file.read_text().splitlines()}
    stored = proj.sql(
        "SELECT a.experiment_id, e.name, e.input, e.status FROM events e JOIN attempts a ON a.id = e.attempt_id "
        "WHERE e.kind = 'tool_call' ORDER BY a.experiment_id, e.turn_ordinal, e.seq")
    for experiment, framework in (("pydantic_ai", "pydantic_ai"), ("openai_agents", "openai_agents"),
                                  ("langgraph", "langgraph")):
        calls = [[row["name"], json.loads(row["input"]), row["status"]] for row in stored
                 if row["experiment_id"] == experiment]
        assert calls == logged[framework], experiment
