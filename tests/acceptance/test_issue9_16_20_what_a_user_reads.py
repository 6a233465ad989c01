"""Issue 9, items 16-20: eval options are validated like the config file, the reuse line says the
real reason, exceptions are located at the deepest project frame with the traceback stored,
"nothing selected" says which filter matched nothing, and every --help reads like a man page."""

from __future__ import annotations

import re

import pytest

from tests.support.project import Project


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process (tests/conftest.py `project`): these checks read exit codes, output and
    stored rows; what is about a process (signals, pipes) still starts the real `niceeval`."""
    return project


HEADER = "from niceeval_cli import define_eval\nfrom niceeval_cli.expect import includes\n\n\n"


@pytest.mark.parametrize(("options", "named"), [('tags="smoke"', "tags"), ('attempts="3"', "attempts")])
def test_a_wrongly_typed_eval_option_is_an_authoring_error_naming_the_option(proj: Project, options: str,
                                                                            named: str) -> None:
    proj.write("evals/tagged.py", HEADER + f"@define_eval({options})\nasync def tagged(t):\n    pass\n")
    res = proj.cli("list", "--json")
    assert res.returncode == 2, (res.returncode, res.stdout)
    assert named in res.stderr and "tagged" in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert "s, m, o, k, e" not in res.stdout + res.stderr


REUSE = HEADER + '''
@define_eval()
async def boom(t):
    raise RuntimeError("always")


@define_eval()
async def fine(t):
    t.check("yes", includes("y")).label("has y")
'''


def _reuse_line(stdout: str) -> str:
    return next(line for line in stdout.splitlines() if "reused" in line and not line.startswith("niceeval:"))


@pytest.mark.slow
def test_the_reuse_line_says_the_actual_reason_nothing_was_reused(proj: Project) -> None:
    proj.write("evals/e.py", REUSE)
    first = proj.run(env={"NO_COLOR": "1"})
    assert "nothing sealed earlier had the same fingerprint" in _reuse_line(first.stdout)
    again = proj.run(env={"NO_COLOR": "1"})
    line = _reuse_line(again.stdout)
    assert "errored" in line and "nothing sealed earlier had the same fingerprint" not in line, line
    rerun_all = proj.run("--rerun-all", env={"NO_COLOR": "1"})
    line = _reuse_line(rerun_all.stdout)
    assert "--rerun-all" in line and "fingerprint" not in line, line


def test_an_exception_is_located_at_the_deepest_project_frame_and_its_traceback_is_stored(proj: Project) -> None:
    proj.write("helpers/parsing.py", "import json\n\n\ndef parse(text):\n    return json.loads(text)\n")
    proj.write("evals/broken.py", HEADER + '''
import json

from helpers.parsing import parse


@define_eval()
async def direct(t):
    json.loads("{")


@define_eval()
async def via_helper(t):
    parse("{")
''')
    res = proj.run(env={"NO_COLOR": "1"})
    assert res.returncode == 5, res.stdout
    assert "at evals/broken.py:13)" in res.stdout and "at helpers/parsing.py:5)" in res.stdout, res.stdout
    assert "decoder.py" not in res.stdout
    rows = {r["eval_id"]: r for r in proj.sql("SELECT id, eval_id, error, traceback FROM attempts")}
    tb = rows["broken/via_helper"]["traceback"]
    assert 'evals/broken.py", line 18' in tb and 'helpers/parsing.py", line 5' in tb, tb
    view = proj.cli("view", "@" + rows["broken/via_helper"]["id"], env={"NO_COLOR": "1"})
    assert "traceback" in view.stdout and 'helpers/parsing.py", line 5' in view.stdout, view.stdout


@pytest.mark.slow
def test_nothing_selected_names_the_filter_that_matched_nothing(proj: Project) -> None:
    proj.write("evals/e.py", REUSE)
    prefix = proj.run("boom")
    assert prefix.returncode == 2 and '"boom"' in prefix.stderr and "e/boom" in prefix.stderr, prefix.stderr
    assert "niceeval init" in prefix.stderr  # no niceeval.toml here
    tag = proj.run("--tag", "nightly")
    assert tag.returncode == 2 and "nightly" in tag.stderr, tag.stderr
    proj.write("niceeval.toml", '[experiments.x]\nevals = ["nomatch/"]\n')
    entry = proj.run()
    assert entry.returncode == 2 and "nomatch/" in entry.stderr and "x" in entry.stderr, entry.stderr
    assert "niceeval init" not in entry.stderr


COMMANDS = [[], ["run"], ["view"], ["query"], ["list"], ["init"]]
STATES = ["passed", "failed", "errored", "scored", "unrankable", "gate-failed", "gate-unavailable"]


@pytest.fixture(scope="module")
def helps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    proj = Project(tmp_path_factory.mktemp("help"), in_process=True)
    out = {}
    for command in COMMANDS:
        # In process, as piped (rich's default 80 columns): the width is set, not read from the
        # descriptors of whatever started pytest (a terminal's width would wrap the help otherwise).
        res = proj.cli(*command, "--help", env={"COLUMNS": "80"})
        assert res.returncode == 0, res.stderr
        out[" ".join(command) or "niceeval"] = res.stdout
    return out


def test_help_has_no_type_placeholders_or_doubled_brackets(helps: dict[str, str]) -> None:
    for name, text in helps.items():
        flat = " ".join(text.replace("│", " ").split())  # `list --cases` names the case id form (issue 22)
        text = text if "<eval id>[<case id>]" not in flat else flat.replace("<eval id>[<case id>]", "")
        assert not re.search(r"<[a-z_ \[\]]+>", text), (name, re.findall(r"<[^>]*>", text))
        assert "[[" not in text and "int range" not in text.lower() and "list[str]" not in text, name
        assert "…" not in text, (name, [line for line in text.splitlines() if "…" in line])  # nothing cut


def test_the_top_level_help_describes_every_command_in_a_whole_sentence(helps: dict[str, str]) -> None:
    rows = [line for line in helps["niceeval"].splitlines()
            if re.match(r"^│ (run|view|query|list|init) ", line)]
    assert len(rows) == 5, helps["niceeval"]
    for row in rows:
        assert row.rstrip("│ ").endswith(".") and "…" not in row and "..." not in row, row


def test_run_help_lists_exit_codes_and_examples_and_view_help_lists_the_states(helps: dict[str, str]) -> None:
    run = helps["run"]
    assert "Exit codes" in run and "Examples" in run
    for code in ("0", "1", "2", "3", "4", "5", "6", "130"):
        assert re.search(rf"\b{code}\b:", run), code
    view = " ".join(helps["view"].split())
    for state in STATES:
        assert state in view, state
