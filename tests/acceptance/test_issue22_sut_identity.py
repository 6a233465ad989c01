"""Issue 22 item 1: the system under test's identity is in the fingerprint (config.md, "The system
under test's identity"). From the outside: the CLI's exit codes and output, files edited between
runs, plans read from `run --dry --json`, the store read with sqlite3. Each call runs the CLI in
this process as a new process would (tests/support/project.py `invoke`); the one check about
processes (hash seeds) starts the real `niceeval` in subprocesses."""

from __future__ import annotations

import json
import shlex
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.loopback import JudgeServer, Loopback, Reply
from tests.support.project import NICEEVAL, Project

EVAL = """
from niceeval_cli import define_eval
from niceeval_cli.expect import includes

@define_eval()
async def greet(t):
    turn = await t.send("bob")
    t.check(turn.message, includes("hello"))
"""


def planned(proj: Project, *args: str, env: dict[str, str | None] | None = None) -> list[dict[str, Any]]:
    """The slots of `run --dry --json` (it executes nothing)."""
    res = proj.run("--dry", "--json", *args, env=env)
    assert res.returncode == 0, res.stderr
    [event] = [json.loads(line) for line in res.stdout.splitlines() if line.strip()]
    assert event["event"] == "run.planned"
    return list(event["slots"])


def last_run_slots(proj: Project) -> list[tuple[str, str, str]]:
    """(eval id, relation, plan reason) of the latest run's slots, from the store file."""
    rows = proj.sql("SELECT eval_id, relation, plan_reason FROM run_slots WHERE run_id = "
                    "(SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1) ORDER BY eval_id")
    return [(r["eval_id"], r["relation"], r["plan_reason"]) for r in rows]


def run_ok(proj: Project, *args: str, env: dict[str, str | None] | None = None) -> str:
    res = proj.run(*args, env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def assert_reused(proj: Project, env: dict[str, str | None] | None = None) -> None:
    [slot] = planned(proj, env=env)
    assert slot["decision"] == "reuse", slot
    run_ok(proj, env=env)
    assert last_run_slots(proj) == [("greet", "reference", "reused")]


def assert_executes_because(proj: Project, changed: list[str], env: dict[str, str | None] | None = None) -> None:
    """The plan executes the slot for a changed fingerprint naming `changed`; the run does so."""
    [slot] = planned(proj, env=env)
    assert (slot["decision"], slot["plan_reason"]) == ("execute", "fingerprint-changed"), slot
    assert slot["changed"] == changed, slot
    run_ok(proj, env=env)
    assert last_run_slots(proj) == [("greet", "origin", "fingerprint-changed")]


# --- python adapter ------------------------------------------------------------------------------

PYTHON_TOML = """
[experiments.local]
adapter = "python"
[experiments.local.options]
callable = "app.agent:reply"
"""


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process: these checks read exit codes, output and stored rows."""
    return project


@pytest.fixture
def python_project(proj: Project) -> Project:
    return _python_project(proj)


def _python_project(proj: Project) -> Project:
    proj.write("niceeval.toml", PYTHON_TOML)
    proj.write("app/__init__.py", "")
    proj.write("app/agent.py", """
        from app.words import GREETING

        def reply(message):
            return GREETING + " " + message
    """)
    proj.write("app/words.py", 'GREETING = "hello"\n')
    proj.write("app/expected.py", 'WORD = "hello"\n')
    proj.write("evals/greet.py", EVAL.replace("import includes\n", "import includes\nfrom app.expected import WORD\n")
               .replace('includes("hello")', "includes(WORD)"))
    run_ok(proj)
    return proj


def test_editing_the_agent_module_reexecutes_and_dry_names_the_file(python_project: Project) -> None:
    proj = python_project
    assert_reused(proj)  # nothing changed: the pass stands
    proj.write("app/agent.py", """
        from app.words import GREETING

        def reply(message):
            return GREETING + ", " + message
    """)
    dry = proj.run("--dry")
    assert "fingerprint-changed (sut-changed: app/agent.py)" in dry.stdout, dry.stdout
    assert_executes_because(proj, ["sut:app/agent.py"])
    assert_reused(proj)


def test_editing_a_module_the_agent_imports_a_constant_from_reexecutes(python_project: Project) -> None:
    """`from app.words import GREETING` imports app/words.py although no global refers to the module."""
    proj = python_project
    proj.write("app/words.py", 'GREETING = "goodbye"\n')
    [slot] = planned(proj)
    assert slot["changed"] == ["sut:app/words.py"], slot
    res = proj.run()
    assert res.returncode == 1, res.stdout + res.stderr  # the broken agent is found out, not reused
    assert last_run_slots(proj) == [("greet", "origin", "fingerprint-changed")]
    assert proj.sql("SELECT state FROM attempts ORDER BY started_at DESC LIMIT 1")[0]["state"] == "failed"


def test_editing_a_module_the_eval_imports_a_constant_from_reexecutes(python_project: Project) -> None:
    proj = python_project
    proj.write("app/expected.py", 'WORD = "hello"  # same value, other bytes\n')
    assert_executes_because(proj, ["source:app/expected.py"])


@pytest.mark.slow
def test_fingerprints_are_equal_across_processes_and_hash_seeds(tmp_path: Path) -> None:
    proj = _python_project(Project(tmp_path / "real"))  # real processes: each has its own hash seed
    proj.write("app/words.py", 'GREETING = "hello"\nEXTRA = {"b", "a", "c"}\n')  # a set: its order varies by seed
    seen = {seed: planned(proj, env={"PYTHONHASHSEED": seed})[0]["fingerprint"] for seed in ("1", "2", "12345")}
    assert len(set(seen.values())) == 1, seen
    run_ok(proj, env={"PYTHONHASHSEED": "7"})
    stored = proj.sql("SELECT fingerprint FROM attempts ORDER BY started_at DESC LIMIT 1")[0]["fingerprint"]
    assert stored == seen["1"]
    [slot] = planned(proj, env={"PYTHONHASHSEED": "99"})
    assert slot["decision"] == "reuse"


# --- openai-chat tools module --------------------------------------------------------------------

TOOLS = """
SCHEMAS = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]


def lookup(arguments):
    return "found"


HANDLERS = {"lookup": lookup}
"""


def test_editing_a_tools_module_of_openai_chat_reexecutes(proj: Project, judge_server: JudgeServer) -> None:
    judge_server.default = Reply.text("hello there")
    proj.write("niceeval.toml", f"""
        [experiments.chat]
        adapter = "openai-chat"
        model = "m"
        [experiments.chat.options]
        base_url = "{judge_server.base_url}"
        api_key_env = "SUT_TEST_KEY"
        tools = "agent_tools:SCHEMAS"
        tool_handlers = "agent_tools:HANDLERS"
    """)
    proj.write("agent_tools.py", TOOLS)
    proj.write("evals/greet.py", EVAL)
    env: dict[str, str | None] = {"SUT_TEST_KEY": "sk-test-local"}
    run_ok(proj, env=env)
    assert_reused(proj, env=env)
    proj.write("agent_tools.py", TOOLS.replace('"found"', '"not found"'))
    assert_executes_because(proj, ["sut:agent_tools.py"], env=env)


# --- command adapter -----------------------------------------------------------------------------


def test_editing_a_script_named_in_a_command_argv_reexecutes(proj: Project) -> None:
    proj.write("niceeval.toml", f"""
        [experiments.cli]
        adapter = "command"
        [experiments.cli.options]
        argv = [{json.dumps(sys.executable)}, "bot/agent.py", "--config=bot/config.txt"]
    """)
    proj.write("bot/agent.py", """
        import sys
        from lib import PREFIX

        print(PREFIX + sys.stdin.read())
    """)
    proj.write("bot/lib.py", 'PREFIX = "hello "\n')  # imported as the script's sibling
    proj.write("bot/config.txt", "temperature 0\n")
    proj.write("evals/greet.py", EVAL)
    run_ok(proj)
    assert_reused(proj)
    proj.write("bot/agent.py", """
        import sys
        from lib import PREFIX

        print(PREFIX + sys.stdin.read().upper())
    """)
    assert_executes_because(proj, ["sut:bot/agent.py"])
    proj.write("bot/lib.py", 'PREFIX = "hello, "\n')
    assert_executes_because(proj, ["sut:bot/lib.py"])
    proj.write("bot/config.txt", "temperature 1\n")
    assert_executes_because(proj, ["sut:bot/config.txt"])
    assert_reused(proj)


# --- inputs, version, version_command -------------------------------------------------------------

HTTP_TOML = """
[experiments.web]
adapter = "http"
{extra}
[experiments.web.options]
url = "{url}/chat"
response_path = "output"
"""


def _hello(method: str, path: str, body: bytes) -> tuple[int, bytes, str]:
    return 200, json.dumps({"output": "hello"}).encode(), "application/json"


@pytest.fixture
def service():
    with Loopback(_hello) as server:
        yield server


def http_project(proj: Project, url: str, extra: str) -> Project:
    proj.write("niceeval.toml", HTTP_TOML.format(url=url, extra=extra))
    proj.write("evals/greet.py", EVAL)
    run_ok(proj)
    return proj


def test_changing_an_inputs_file_reexecutes(proj: Project, service: Loopback) -> None:
    proj.write("prompts/system.md", "Be brief.\n")
    proj.write("app/server.py", "PORT = 1\n")
    http_project(proj, service.url, 'inputs = ["prompts/*.md", "app/**/*.py"]')
    assert_reused(proj)
    proj.write("prompts/system.md", "Be very brief.\n")
    assert_executes_because(proj, ["inputs:prompts/system.md"])
    proj.write("app/routes/refunds.py", "WINDOW = 30\n")  # a new file the glob matches
    assert_executes_because(proj, ["inputs:app/routes/refunds.py"])
    assert_reused(proj)


def test_an_inputs_glob_matching_nothing_is_a_configuration_error(proj: Project, service: Loopback) -> None:
    proj.write("niceeval.toml", HTTP_TOML.format(url=service.url, extra='inputs = ["promts/*.md"]'))
    proj.write("evals/greet.py", EVAL)
    for args in (("--dry",), ()):
        res = proj.run(*args)
        assert res.returncode == 2, res.stdout + res.stderr
        assert "[experiments.web] inputs" in res.stderr and "promts/*.md" in res.stderr, res.stderr
        assert "Traceback" not in res.stderr


def test_changing_the_version_reexecutes(proj: Project, service: Loopback) -> None:
    http_project(proj, service.url, 'version = "v1"')
    assert_reused(proj)
    proj.write("niceeval.toml", HTTP_TOML.format(url=service.url, extra='version = "v2"'))
    assert_executes_because(proj, ["version"])
    assert_reused(proj)


def test_changing_the_output_of_the_version_command_reexecutes(proj: Project, service: Loopback) -> None:
    proj.write("DEPLOYED", "abc123\n")
    http_project(proj, service.url, 'version_command = "cat DEPLOYED"')
    assert_reused(proj)
    proj.write("DEPLOYED", "def456\n")
    assert_executes_because(proj, ["version_command"])
    assert_reused(proj)


def test_a_failing_version_command_is_a_setup_error_also_for_dry(proj: Project, service: Loopback) -> None:
    proj.write("niceeval.toml", HTTP_TOML.format(url=service.url, extra='version_command = "git-nope rev-parse HEAD"'))
    proj.write("evals/greet.py", EVAL)
    for args in (("--dry",), ("--dry", "--json"), ()):
        res = proj.run(*args)
        assert res.returncode == 3, (args, res.stdout, res.stderr)
        assert "[experiments.web] version_command 'git-nope rev-parse HEAD'" in res.stderr, res.stderr
        assert "Traceback" not in res.stderr
    assert not proj.store.exists() or proj.sql("SELECT count(*) AS n FROM attempts")[0]["n"] == 0


def test_a_version_command_printing_hundreds_of_megabytes_is_hashed_without_holding_them(tmp_path: Path) -> None:
    """`version_command = "cat data/*"` may print gigabytes: its output is hashed as it streams
    (300 MB of output held twice took 600 MB). A real process, its peak memory read by its parent."""
    with Loopback(_hello) as server:
        proj = Project(tmp_path / "real")
        proj.write("niceeval.toml", HTTP_TOML.format(
            url=server.url, extra='version_command = "head -c 300000000 /dev/zero"'))
        proj.write("evals/greet.py", EVAL)
        assert _peak_mb_of_dry_run(proj) < 200


def test_an_input_of_hundreds_of_megabytes_is_hashed_without_holding_it(tmp_path: Path) -> None:
    """`inputs = ["data/*.jsonl"]` may match a dataset of gigabytes: it is hashed as it is read
    (a 300 MB file took 300 MB). A real process, its peak memory read by its parent."""
    with Loopback(_hello) as server:
        proj = Project(tmp_path / "real")
        proj.write("niceeval.toml", HTTP_TOML.format(url=server.url, extra='inputs = ["data/*.jsonl"]'))
        proj.write("evals/greet.py", EVAL)
        (proj.root / "data").mkdir()
        with (proj.root / "data" / "rows.jsonl").open("wb") as rows:
            rows.truncate(300_000_000)  # sparse: no disk written
        assert _peak_mb_of_dry_run(proj) < 200


def _peak_mb_of_dry_run(proj: Project) -> int:
    measure = ("import resource, subprocess, sys; done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); "
               "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)")
    cli = " ".join(shlex.quote(word) for word in [*NICEEVAL, "run", "--dry"])
    res = proj.shell(f"{shlex.quote(sys.executable)} -c {shlex.quote(measure)} {cli}")
    code, peak_mb = map(int, res.stdout.split())
    assert code == 0, res.stderr
    return peak_mb


def test_a_version_command_dies_with_an_interrupted_run(tmp_path: Path) -> None:
    """The command runs in a session of its own (so its whole group can be killed at the deadline):
    a terminal's Ctrl-C or a CI's SIGTERM reaches only niceeval, which takes the command down with it."""
    with Loopback(_hello) as server:
        proj = Project(tmp_path / "real")
        proj.write("niceeval.toml", HTTP_TOML.format(
            url=server.url, extra='version_command = "sleep 2; touch leaked; echo v1"'))
        proj.write("evals/greet.py", EVAL)
        process = proj.popen("run", "--dry")
        time.sleep(1.0)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 130, process.communicate()
        time.sleep(2.0)
        assert not (proj.root / "leaked").exists()


def test_a_version_command_past_its_time_is_killed_with_what_it_started(
    proj: Project, service: Loopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A command that left a process holding its output open did not finish: a setup error at the
    deadline, and what it started dies with it (it wrote a file 2 s later)."""
    monkeypatch.setattr("niceeval_cli.runner._sut.VERSION_COMMAND_TIMEOUT_S", 1)
    proj.write("niceeval.toml", HTTP_TOML.format(
        url=service.url, extra='version_command = "(sleep 2; touch leaked) & echo v1"'))
    proj.write("evals/greet.py", EVAL)
    res = proj.run("--dry")
    assert res.returncode == 3, res.stdout + res.stderr
    assert "did not finish within 1 s" in res.stderr, res.stderr
    time.sleep(2.5)
    assert not (proj.root / "leaked").exists()


# --- the once-per-run note for systems identified by configuration only ---------------------------


def test_reusing_a_network_adapters_results_says_so_once(proj: Project, service: Loopback) -> None:
    proj.write("niceeval.toml", HTTP_TOML.format(url=service.url, extra="")
               + HTTP_TOML.format(url=service.url, extra="").replace("experiments.web", "experiments.staging"))
    proj.write("evals/greet.py", EVAL)
    proj.write("evals/again.py", EVAL.replace("def greet", "def again"))
    first = run_ok(proj)
    assert "identified by configuration only" not in first  # nothing was reused
    second = run_ok(proj)
    notes = [line for line in second.splitlines() if "identified by configuration only" in line]
    assert len(notes) == 1, second
    assert "staging, web" in notes[0] or "web, staging" in notes[0], notes
    assert "version_command" in notes[0] and "inputs" in notes[0]


def test_json_output_names_the_experiments_reused_on_their_configuration_only(proj: Project, service: Loopback) -> None:
    """`--json` prints no summary: its events carry the note as data, for a script deciding what
    a reused result may stand for."""
    http_project(proj, service.url, "")
    for args in (("--json",), ("--dry", "--json")):
        res = proj.run(*args)
        assert res.returncode == 0, res.stdout + res.stderr
        events = {e["event"]: e for e in map(json.loads, res.stdout.splitlines())}
        assert events["run.planned"]["config_only_reused"] == ["web"], events
        if "--dry" not in args:
            assert events["run.finished"]["config_only_reused"] == ["web"], events
    proj.write("niceeval.toml", HTTP_TOML.format(url=service.url, extra='version = "v1"'))
    run_ok(proj)
    res = proj.run("--json")
    assert [json.loads(line).get("config_only_reused") for line in res.stdout.splitlines()] == [[], []], res.stdout


def test_no_note_once_the_experiment_declares_its_version(proj: Project, service: Loopback) -> None:
    http_project(proj, service.url, 'version_command = "echo v1"')
    assert "identified by configuration only" not in run_ok(proj)


def test_no_note_for_a_python_adapter_whose_code_is_seen(python_project: Project) -> None:
    assert "identified by configuration only" not in run_ok(python_project)
