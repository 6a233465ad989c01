"""A pass must never be reused after something that produced it changed (config.md, "Fingerprint"
and "The system under test's identity"). Each check is a real project driven through the CLI:
it passes, one thing changes, and `run --dry --json` and the next run must execute the slot,
naming what changed. These are the changes the identity once missed without a word."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.loopback import JudgeServer, Reply
from tests.support.project import Project

EVAL = """
from niceeval_cli import define_eval
from niceeval_cli.expect import includes

@define_eval()
async def greet(t):
    turn = await t.send("bob")
    t.check(turn.message, includes("hello"))
"""

PYTHON_TOML = """
[experiments.local]
adapter = "python"
{extra}
[experiments.local.options]
callable = "app.agent:reply"
"""


def planned(proj: Project, env: dict[str, str | None] | None = None) -> dict[str, Any]:
    """The one slot of `run --dry --json` (it executes nothing)."""
    res = proj.run("--dry", "--json", env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    [event] = [json.loads(line) for line in res.stdout.splitlines() if line.strip()]
    [slot] = event["slots"]
    return dict(slot)


def last_run_reason(proj: Project) -> str:
    [row] = proj.sql("SELECT plan_reason FROM run_slots WHERE run_id = "
                     "(SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1)")
    return str(row["plan_reason"])


def passes(proj: Project) -> None:
    res = proj.run()
    assert res.returncode == 0, res.stdout + res.stderr


def assert_reused(proj: Project) -> None:
    slot = planned(proj)
    assert slot["decision"] == "reuse", slot
    passes(proj)
    assert last_run_reason(proj) == "reused"


def assert_executes_because(proj: Project, changed: list[str]) -> None:
    slot = planned(proj)
    assert (slot["decision"], slot["plan_reason"], slot["changed"]) == ("execute", "fingerprint-changed", changed)
    passes(proj)
    assert last_run_reason(proj) == "fingerprint-changed"


@pytest.fixture
def python_project(project: Project) -> Project:
    """A python adapter whose callable lives in a package; the agent reads what the package's
    `__init__.py` sets up, without importing anything itself."""
    project.write("niceeval.toml", PYTHON_TOML.format(extra=""))
    project.write("app/__init__.py", 'import os\nos.environ["AGENT_GREETING"] = "hello"\n')
    project.write("app/agent.py", """
        import os

        def reply(message):
            return os.environ["AGENT_GREETING"] + " " + message
    """)
    project.write("evals/greet.py", EVAL)
    passes(project)
    assert_reused(project)
    return project


def test_editing_the_package_init_of_the_python_callable_reexecutes(python_project: Project) -> None:
    """Importing `app.agent` runs `app/__init__.py` first: it is the agent's code too."""
    proj = python_project
    proj.write("app/__init__.py", 'import os\nos.environ["AGENT_GREETING"] = "bye"\n')
    slot = planned(proj)
    assert (slot["plan_reason"], slot["changed"]) == ("fingerprint-changed", ["sut:app/__init__.py"]), slot
    res = proj.run()
    assert res.returncode == 1, res.stdout + res.stderr  # the broken agent is found out, not reused


def test_editing_the_package_init_of_a_custom_adapter_reexecutes(project: Project) -> None:
    project.write("niceeval.toml", '[experiments.custom]\nadapter = "bots.hello:adapter"\n')
    project.write("bots/__init__.py", 'GREETING = "hello"\n')
    project.write("bots/hello.py", """
        import sys

        from niceeval_cli import define_adapter

        async def send(ctx, message):
            return sys.modules["bots"].GREETING + " " + message

        adapter = define_adapter(name="hello", send=send)
    """)
    project.write("evals/greet.py", EVAL)
    passes(project)
    assert_reused(project)
    project.write("bots/__init__.py", 'GREETING = "bye"\n')
    slot = planned(project)
    assert (slot["plan_reason"], slot["changed"]) == ("fingerprint-changed", ["sut:bots/__init__.py"]), slot
    res = project.run()
    assert res.returncode == 1, res.stdout + res.stderr


def test_editing_the_package_init_of_openai_chats_tools_module_reexecutes(
    project: Project, judge_server: JudgeServer
) -> None:
    judge_server.default = Reply.text("hello there")
    project.write("niceeval.toml", f"""
        [experiments.chat]
        adapter = "openai-chat"
        model = "m"
        [experiments.chat.options]
        base_url = "{judge_server.base_url}"
        api_key_env = "SUT_TEST_KEY"
        tools = "agent.tools:SCHEMAS"
        tool_handlers = "agent.tools:HANDLERS"
    """)
    project.write("agent/__init__.py", 'ANSWER = "found"\n')
    project.write("agent/tools.py", """
        import sys

        SCHEMAS = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]
        HANDLERS = {"lookup": lambda arguments: sys.modules["agent"].ANSWER}
    """)
    project.write("evals/greet.py", EVAL)
    env: dict[str, str | None] = {"SUT_TEST_KEY": "sk-test-local"}
    assert project.run(env=env).returncode == 0
    assert planned(project, env)["decision"] == "reuse"
    project.write("agent/__init__.py", 'ANSWER = "not found"\n')
    slot = planned(project, env)
    assert (slot["plan_reason"], slot["changed"]) == ("fingerprint-changed", ["sut:agent/__init__.py"]), slot


def test_a_module_imported_by_a_literal_name_is_part_of_the_source(project: Project) -> None:
    """`importlib.import_module("rules")` names its module as plainly as `import rules` does."""
    project.write("niceeval.toml", "[project]\n")
    project.write("rules.py", 'WORD = "hello"\n')
    project.write("plugins/__init__.py", "")
    project.write("plugins/extra.py", 'EXTRA = ""\n')
    project.write("evals/greet.py", """
        import importlib

        from niceeval_cli import define_eval
        from niceeval_cli.expect import includes

        @define_eval()
        def greet(t):
            rules = importlib.import_module("rules")
            extra = __import__("plugins.extra", fromlist=["EXTRA"])
            t.check(rules.WORD + extra.EXTRA + " bob", includes("hello"))
    """)
    passes(project)
    assert_reused(project)
    project.write("rules.py", 'WORD = "hello"  # same value, other bytes\n')
    assert_executes_because(project, ["source:rules.py"])
    project.write("plugins/extra.py", 'EXTRA = "!"\n')
    assert_executes_because(project, ["source:plugins/extra.py"])
    assert_reused(project)


def test_an_inputs_file_linked_from_outside_the_project_counts_by_its_content(
    project: Project, tmp_path: Path
) -> None:
    """A file the `inputs` glob matches is an input whatever it links to: editing the shared
    prompt it points at re-executes, as editing a copy would."""
    shared = tmp_path / "shared" / "system.md"
    shared.parent.mkdir()
    shared.write_text("Be brief.\n")
    project.write("niceeval.toml", PYTHON_TOML.format(extra='inputs = ["prompts/*.md"]'))
    project.write("app/__init__.py", "")
    project.write("app/agent.py", 'def reply(message):\n    return "hello " + message\n')
    project.write("evals/greet.py", EVAL)
    (project.root / "prompts").mkdir()
    (project.root / "prompts" / "system.md").symlink_to(shared)
    passes(project)
    assert_reused(project)
    shared.write_text("Be very brief.\n")
    assert_executes_because(project, ["inputs:prompts/system.md"])
    assert_reused(project)


def test_an_empty_folder_of_a_sandbox_template_is_part_of_its_identity(project: Project) -> None:
    """Every workspace gets the template's empty folders: removing one changes what the agent
    finds, so the template's digest holds them (a folder with files in it is implied by their paths)."""
    project.write("niceeval.toml", """
        [experiments.agent]
        adapter = "command"
        [experiments.agent.options]
        argv = ["sh", "-c", "if test -d out; then echo hello; else echo lost; fi"]
        [experiments.agent.sandbox]
        template = "repo"
    """)
    project.write("repo/README.md", "A repository.\n")
    (project.root / "repo" / "out").mkdir()
    project.write("evals/greet.py", EVAL)
    passes(project)
    assert_reused(project)
    (project.root / "repo" / "out").rmdir()
    slot = planned(project)
    assert (slot["plan_reason"], slot["changed"]) == ("fingerprint-changed", ["sandbox"]), slot
    res = project.run()
    assert res.returncode == 1, res.stdout + res.stderr  # the agent no longer finds its folder


@pytest.mark.parametrize("run_module", [["-m", "bot.agent"], ["-mbot.agent"], ["-Bm", "bot.agent"]])
def test_a_module_a_command_runs_with_python_dash_m_is_the_system_under_test(
    project: Project, run_module: list[str]
) -> None:
    """`python -m bot.agent` names its module as plainly as `python bot/agent.py` names its file —
    so do `-mbot.agent` and `-Bm bot.agent`: the module, its packages and its project imports are
    seen, so no note says they are not."""
    argv = json.dumps([sys.executable, *run_module])
    project.write("niceeval.toml", f"""
        [experiments.cli]
        adapter = "command"
        [experiments.cli.options]
        argv = {argv}
    """)
    project.write("bot/__init__.py", "")
    project.write("bot/agent.py", """
        import sys

        from bot.words import GREETING

        print(GREETING + " " + sys.stdin.read())
    """)
    project.write("bot/words.py", 'GREETING = "hello"\n')
    project.write("evals/greet.py", EVAL)
    passes(project)
    assert_reused(project)
    res = project.run()
    assert "identified by configuration only" not in res.stdout, res.stdout
    project.write("bot/words.py", 'GREETING = "bye"\n')
    slot = planned(project)
    assert (slot["plan_reason"], slot["changed"]) == ("fingerprint-changed", ["sut:bot/words.py"]), slot
    res = project.run()
    assert res.returncode == 1, res.stdout + res.stderr


def test_dry_warns_as_the_run_would_about_results_identified_by_configuration_only(project: Project) -> None:
    """`run --dry` is where a CI author reads what the next run will trust: the note a run prints
    when it reuses results NiceEval cannot tie to the agent's code is in the plan too."""
    project.write("niceeval.toml", """
        [experiments.installed]
        adapter = "command"
        [experiments.installed.options]
        argv = ["sh", "-c", "echo hello"]
    """)
    project.write("evals/greet.py", EVAL)
    passes(project)
    note = "note: reused results of experiment installed are identified by configuration only"
    run = project.run()
    assert note in run.stdout, run.stdout
    dry = project.run("--dry")
    assert dry.returncode == 0 and note in dry.stdout, dry.stdout
    project.write("evals/greet.py", EVAL + "\n# edited\n")  # nothing reused: nothing to warn about
    dry = project.run("--dry")
    assert "identified by configuration only" not in dry.stdout, dry.stdout


def test_a_module_reached_through_a_link_inside_the_project_counts_by_its_content(
    project: Project, tmp_path: Path
) -> None:
    """A shared library linked into the project (`shared -> ../libs/shared`) is imported as
    `shared.rules`: it is a project module by the path the import finds it at."""
    library = tmp_path / "libs" / "shared"
    library.mkdir(parents=True)
    (library / "__init__.py").write_text("")
    (library / "rules.py").write_text('WORD = "hello"\n')
    (project.root / "shared").symlink_to(library, target_is_directory=True)
    project.write("niceeval.toml", "[project]\n")
    project.write("evals/greet.py", """
        from niceeval_cli import define_eval
        from niceeval_cli.expect import includes

        from shared.rules import WORD

        @define_eval()
        def greet(t):
            t.check("hello bob", includes(WORD))
    """)
    passes(project)
    assert_reused(project)
    (library / "rules.py").write_text('WORD = "bye"\n')
    slot = planned(project)
    assert (slot["plan_reason"], slot["changed"]) == ("fingerprint-changed", ["source:shared/rules.py"]), slot
    res = project.run()
    assert res.returncode == 1, res.stdout + res.stderr


def test_a_shorter_trace_flush_reexecutes_what_a_late_span_passed(project: Project) -> None:
    """`trace_flush_ms` decides whether a turn's trace is complete: a tool span ending 0.4 s after
    the send is seen within the default 2 s, and not within 0.1 s — then `called_tool` cannot be
    decided. The pass seen with the longer wait is not reused for the shorter one."""
    pytest.importorskip("opentelemetry.sdk")
    project.write("app.py", """
        import threading

        from opentelemetry import trace

        tracer = trace.get_tracer("app")


        def reply(message):
            span = tracer.start_span("execute_tool lookup", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup", "gen_ai.tool.call.id": "c1"})
            threading.Timer(0.4, span.end).start()  # the tool's span ends after the reply
            return "hello " + message
    """)
    project.write("evals/greet.py", """
        from niceeval_cli import define_eval

        @define_eval()
        async def greet(t):
            turn = await t.send("bob")
            turn.called_tool("lookup").gate()
    """)
    toml = ('[experiments.local]\nadapter = "python"\ntraces = "otel"\n{extra}'
            '[experiments.local.options]\ncallable = "app:reply"\n')
    project.write("niceeval.toml", toml.format(extra=""))
    passes(project)
    project.write("niceeval.toml", toml.format(extra="trace_flush_ms = 2000\n"))  # the default, written out
    assert planned(project)["decision"] == "reuse"
    project.write("niceeval.toml", toml.format(extra="trace_flush_ms = 100\n"))
    slot = planned(project)
    assert (slot["plan_reason"], slot["changed"]) == ("fingerprint-changed", ["trace_flush_ms"]), slot
    res = project.run()
    assert res.returncode == 5, res.stdout + res.stderr
    assert [r["reason"] for r in project.sql("SELECT reason FROM assertion_results ORDER BY rowid DESC LIMIT 1")] \
        == ["trace-incomplete"]


def test_an_inputs_glob_enters_a_folder_linked_into_the_project(project: Project, tmp_path: Path) -> None:
    """`**` enters a folder linked in from elsewhere (a link back up is not followed round):
    editing a prompt in the linked folder re-executes, naming the file under the link's path."""
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "system.md").write_text("Be brief.\n")
    project.write("niceeval.toml", PYTHON_TOML.format(extra='inputs = ["prompts/**/*.md"]'))
    project.write("app/__init__.py", "")
    project.write("app/agent.py", 'def reply(message):\n    return "hello " + message\n')
    project.write("evals/greet.py", EVAL)
    project.write("prompts/own.md", "Greet.\n")
    (project.root / "prompts" / "shared").symlink_to(shared)
    (shared / "up").symlink_to(project.root / "prompts")  # a loop through the link: entered once
    passes(project)
    assert_reused(project)
    (shared / "system.md").write_text("Be very brief.\n")
    assert_executes_because(project, ["inputs:prompts/shared/system.md"])
    assert_reused(project)


@pytest.mark.parametrize(("glob", "hint"), [(".", "write '**'"), ("prompts", "write 'prompts/**'")])
def test_an_inputs_glob_naming_a_folder_is_a_configuration_error_saying_how_to_take_its_files(
    project: Project, glob: str, hint: str
) -> None:
    project.write("niceeval.toml", PYTHON_TOML.format(extra=f"inputs = [{json.dumps(glob)}]"))
    project.write("app/__init__.py", "")
    project.write("app/agent.py", 'def reply(message):\n    return "hello " + message\n')
    project.write("evals/greet.py", EVAL)
    project.write("prompts/own.md", "Greet.\n")
    for args in (("--dry", "--json"), ()):
        res = project.run(*args)
        assert res.returncode == 2, res.stdout + res.stderr
        assert f"[experiments.local] inputs: {glob!r} matches no file" in res.stderr and hint in res.stderr, res.stderr


def test_an_inputs_glob_ending_in_two_stars_is_every_file_below_on_every_python(project: Project) -> None:
    """`prompts/**` takes the files below `prompts` (pathlib gives only its folders before 3.13)."""
    project.write("niceeval.toml", PYTHON_TOML.format(extra='inputs = ["prompts/**"]'))
    project.write("app/__init__.py", "")
    project.write("app/agent.py", 'def reply(message):\n    return "hello " + message\n')
    project.write("evals/greet.py", EVAL)
    project.write("prompts/refunds/system.md", "Be brief.\n")
    passes(project)
    assert_reused(project)
    project.write("prompts/refunds/system.md", "Be very brief.\n")
    assert_executes_because(project, ["inputs:prompts/refunds/system.md"])


def test_a_compiled_extension_module_the_agent_imports_is_part_of_its_identity(project: Project) -> None:
    """A module built in place (Cython, a Rust crate through maturin) is a file Python loads before
    any `.py` of its name: rebuilding it re-executes. The import is read from the source, so the
    agent here never loads the stand-in bytes."""
    from importlib.machinery import EXTENSION_SUFFIXES

    built = f"app/fast{EXTENSION_SUFFIXES[0]}"
    project.write("niceeval.toml", PYTHON_TOML.format(extra=""))
    project.write("app/__init__.py", "")
    project.write("app/agent.py", """
        def reply(message):
            return "hello " + message

        def accelerated(message):
            from app import fast
            return fast.reply(message)
    """)
    (project.root / built).write_bytes(b"\x7fELF build 1")
    project.write("evals/greet.py", EVAL)
    passes(project)
    assert_reused(project)
    (project.root / built).write_bytes(b"\x7fELF build 2")
    assert_executes_because(project, [f"sut:{built}"])


def test_a_module_found_on_a_folder_an_agent_put_on_sys_path_is_part_of_its_identity(tmp_path: Path) -> None:
    """The second experiment's agent puts its vendored folder on sys.path when it is imported, after
    the first experiment's identity was made: what it imports from there is still its identity.
    (Real processes: one in this interpreter would keep the folder on sys.path from the first run.)"""
    project = Project(tmp_path / "real")
    project.write("niceeval.toml", """
        [experiments.plain]
        adapter = "python"
        [experiments.plain.options]
        callable = "app.agent:reply"

        [experiments.vendored]
        adapter = "python"
        [experiments.vendored.options]
        callable = "app.other:reply"
    """)
    project.write("app/__init__.py", "")
    project.write("app/agent.py", 'import json\n\ndef reply(message):\n    return "hello " + message\n')
    project.write("app/other.py", """
        import os
        import sys

        sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tools", "vendor"))
        import vlib

        def reply(message):
            return vlib.GREETING + " " + message
    """)
    project.write("tools/vendor/vlib.py", 'GREETING = "hello"\n')
    project.write("evals/greet.py", EVAL)
    passes(project)
    project.write("tools/vendor/vlib.py", 'GREETING = "hello!"\n')
    res = project.run("--dry", "--json")
    assert res.returncode == 0, res.stdout + res.stderr
    [event] = [json.loads(line) for line in res.stdout.splitlines()]
    assert {s["experiment_id"]: (s["decision"], s["changed"]) for s in event["slots"]} == {
        "plain": ("reuse", []), "vendored": ("execute", ["sut:tools/vendor/vlib.py"])}


def test_an_input_inside_an_installed_package_is_an_input_all_the_same(project: Project) -> None:
    """Imports never follow into site-packages (the experiment's `version` covers them), but a
    file `inputs` names there was named on purpose: it counted as nothing, so upgrading the
    library left the pass reused."""
    library = ".venv/lib/python3.11/site-packages/shoplib/rules.py"
    project.write("niceeval.toml", PYTHON_TOML.format(extra=f'inputs = ["{library}"]'))
    project.write("app/__init__.py", "")
    project.write("app/agent.py", 'def reply(message):\n    return "hello " + message\n')
    project.write("evals/greet.py", EVAL)
    project.write(library, "WINDOW = 30\n")
    passes(project)
    assert_reused(project)
    project.write(library, "WINDOW = 14\n")
    assert_executes_because(project, [f"inputs:{library}"])


def test_a_star_import_of_a_package_takes_in_the_submodules_its_all_lists(project: Project) -> None:
    """`from app.handlers import *` imports each submodule `app/handlers/__init__.py` lists in
    `__all__`, although no statement names it."""
    project.write("niceeval.toml", PYTHON_TOML.format(extra=""))
    project.write("app/__init__.py", "")
    project.write("app/agent.py", """
        from app.handlers import *

        def reply(message):
            return refunds.GREETING + " " + message
    """)
    project.write("app/handlers/__init__.py", '__all__ = ["refunds"]\n')
    project.write("app/handlers/refunds.py", 'GREETING = "hello"\n')
    project.write("evals/greet.py", EVAL)
    passes(project)
    assert_reused(project)
    project.write("app/handlers/refunds.py", 'GREETING = "hello!"\n')
    assert_executes_because(project, ["sut:app/handlers/refunds.py"])


def test_two_stars_do_not_walk_into_the_installed_packages_of_a_venv_in_the_project(project: Project) -> None:
    """`inputs = ["**/*.py"]` means the project's code: the `.venv` uv keeps beside it (with its
    `lib64` link to `lib`) is not hashed file by file on every run; naming the folder takes it in."""
    library = ".venv/lib/python3.11/site-packages/shoplib/rules.py"
    project.write("niceeval.toml", PYTHON_TOML.format(extra='inputs = ["**/*.py"]'))
    project.write("app/__init__.py", "")
    project.write("app/agent.py", 'def reply(message):\n    return "hello " + message\n')
    project.write("evals/greet.py", EVAL)
    project.write(library, "WINDOW = 30\n")
    (project.root / ".venv" / "lib64").symlink_to("lib")
    passes(project)
    project.write(library, "WINDOW = 14\n")
    assert_reused(project)
    project.write("app/agent.py", 'def reply(message):\n    return "hello, " + message\n')
    assert_executes_because(project, ["sut:app/agent.py", "inputs:app/agent.py"])


def test_linked_folders_that_fan_in_are_walked_once_each(tmp_path: Path) -> None:
    """Folders linking to one another (pnpm's node_modules) are each walked once: following every
    path through them grew with the factorial of their number (8 folders: a minute and a half)."""
    project = Project(tmp_path / "real")
    project.write("niceeval.toml", PYTHON_TOML.format(extra='inputs = ["prompts/**/*.md"]'))
    project.write("app/__init__.py", "")
    project.write("app/agent.py", 'def reply(message):\n    return "hello " + message\n')
    project.write("evals/greet.py", EVAL)
    folders = [project.root / "prompts" / f"p{i}" for i in range(8)]
    for folder in folders:
        project.write(f"prompts/{folder.name}/system.md", f"Prompt {folder.name}.\n")
    for folder in folders:
        for other in folders:
            if other != folder:
                (folder / f"to_{other.name}").symlink_to(other)
    res = project.cli("run", "--dry", "--json", timeout=30)
    assert res.returncode == 0, res.stdout + res.stderr
    passes(project)
    parts = json.loads(project.sql("SELECT fingerprint_parts FROM attempts")[0]["fingerprint_parts"])
    assert sorted(parts["inputs"]) == [f"prompts/p{i}/system.md" for i in range(8)]


def test_a_relative_import_module_with_its_package_written_out_is_part_of_the_identity(project: Project) -> None:
    """`importlib.import_module(".refunds", "app.handlers")` names `app/handlers/refunds.py` as
    plainly as an import statement would, wherever the calling module lives."""
    project.write("niceeval.toml", PYTHON_TOML.format(extra="").replace("app.agent:reply", "loader:reply"))
    project.write("loader.py", """
        import importlib

        def reply(message):
            refunds = importlib.import_module(".refunds", "app.handlers")
            return refunds.GREETING + " " + message
    """)
    project.write("app/__init__.py", "")
    project.write("app/handlers/__init__.py", "")
    project.write("app/handlers/refunds.py", 'GREETING = "hello"\n')
    project.write("evals/greet.py", EVAL)
    passes(project)
    assert_reused(project)
    project.write("app/handlers/refunds.py", 'GREETING = "hello!"\n')
    assert_executes_because(project, ["sut:app/handlers/refunds.py"])


@pytest.mark.parametrize("load", [
    'importlib.util.spec_from_file_location("impl", Path(__file__).parent / "../app/impl.py")',
    'importlib.util.spec_from_file_location("impl", os.path.join(os.path.dirname(__file__), "..", "app", "impl.py"))',
    'importlib.util.spec_from_file_location("impl", location=APP / "impl.py")',
    'importlib.machinery.SourceFileLoader("impl", "app/impl.py")',
])
def test_a_module_loaded_from_its_file_path_is_part_of_the_source(project: Project, load: str) -> None:
    """A module an eval loads by its file's path (`spec_from_file_location`, a `SourceFileLoader`,
    `runpy.run_path`), a path the source writes out, is as much its code as an import is: editing
    it left the pass reused."""
    project.write("niceeval.toml", "[project]\n")
    project.write("app/impl.py", 'WORD = "hello"\n')
    project.write("evals/greet.py", f"""
        import importlib.machinery
        import importlib.util
        import os
        import runpy
        from pathlib import Path

        from niceeval_cli import define_eval
        from niceeval_cli.expect import includes

        APP = Path(__file__).resolve().parent.parent / "app"
        LOADER = {load}
        WORDS = runpy.run_path(os.path.join(os.path.dirname(__file__), "words.py"))

        @define_eval()
        def greet(t):
            t.check(WORDS["GREETING"] + " bob", includes("hello"))
    """)
    project.write("evals/words.py", 'GREETING = "hello"\n')
    passes(project)
    assert_reused(project)
    project.write("app/impl.py", 'WORD = "hello"  # same value, other bytes\n')
    assert_executes_because(project, ["source:app/impl.py"])
    project.write("evals/words.py", 'GREETING = "hello"  # other bytes\n')
    assert_executes_because(project, ["source:evals/words.py"])
    assert_reused(project)


def test_an_eval_module_with_an_expression_too_deep_to_walk_still_runs(project: Project) -> None:
    """A module-level string of 1 400 `+` terms compiles (Python folds it) but is too deep for a
    recursive walk: reading it for paths must not stop the run."""
    project.write("niceeval.toml", "[project]\n")
    terms = " + ".join(['"a"'] * 1400)
    project.write("evals/greet.py", EVAL.replace("@define_eval()", f"LONG = {terms}\n\n@define_eval()")
                  .replace('t.send("bob")', 't.send("hello bob")'))
    project.write("niceeval.toml", "[project]\n" + PYTHON_TOML.format(extra=""))
    project.write("app/__init__.py", "")
    project.write("app/agent.py", "def reply(message):\n    return message\n")
    passes(project)
