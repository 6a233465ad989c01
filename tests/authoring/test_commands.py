"""A workspace command that could not run has an unavailable exit code (authoring/_commands.py);
one that ran keeps its number, whatever it exited with."""

from __future__ import annotations

import pytest

from niceeval_cli.authoring._commands import could_not_run, not_started, settle
from niceeval_cli.expect import equals
from niceeval_cli.expect._facts import NumericMaterial
from niceeval_cli.sandbox._workspace import CommandResult


def _result(code: int | None, stderr: str = "", timed_out: bool = False) -> CommandResult:
    return CommandResult(code, "", stderr, 1.0, timed_out)


@pytest.mark.parametrize(("command", "result", "said"), [
    ("pytest -q", _result(127, "sh: 1: pytest: not found\n"), "sh: 1: pytest: not found"),
    (["./run.sh"], _result(126, "sh: ./run.sh: Permission denied"), "sh: ./run.sh: Permission denied"),
    (["python", "-m", "pytest", "-q"], _result(1, "/usr/bin/python3: No module named pytest\n"),
     "/usr/bin/python3: No module named pytest"),
    ("cd app && python -m pytest.main", _result(1, "/usr/bin/python3: No module named pytest"),
     "/usr/bin/python3: No module named pytest"),
])
def test_a_command_that_could_not_run_says_why_in_its_own_words(command, result, said) -> None:
    assert could_not_run(command, result) == said
    settled = settle(command, result)
    assert isinstance(settled.exit_code, NumericMaterial) and settled.exit_code.state == "unavailable"
    assert settled.exit_code.reason == f"command-unavailable: {said}"
    assert settled.returncode == result.exit_code
    assert equals(0).evaluate(settled.exit_code).state == "unavailable"


@pytest.mark.parametrize(("command", "result"), [
    (["python", "-m", "pytest"], _result(1, "E   ModuleNotFoundError: No module named 'requests'\n1 failed")),
    (["python", "-m", "pytest"], _result(1, "/usr/bin/python3: No module named requests")),  # not the -m module
    (["python", "-c", "import sys; sys.exit(1)"], _result(1, "")),
    ("make test", _result(2, "make: *** [test] Error 2")),
    ("sleep 10", _result(None, "", timed_out=True)),
])
def test_a_command_that_ran_keeps_its_exit_code(command, result) -> None:
    assert could_not_run(command, result) is None
    assert settle(command, result) is result


def test_a_program_that_cannot_be_started_is_unavailable_with_the_error() -> None:
    result = not_started(FileNotFoundError(2, "No such file or directory", "pytest"))
    assert isinstance(result.exit_code, NumericMaterial) and "No such file or directory" in str(result.exit_code.reason)
    assert result.returncode is None and "FileNotFoundError" in result.stderr
