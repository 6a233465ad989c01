"""Issue 22, item 4 (third bullet): a large text file added in a sandbox is diffed whole.

A 3.5 MB text file of 100 001 lines was reported as "Binary file" and the change assertions ran
on nothing: a secret on its last line passed "no secret in the diff". Now the whole file is
searched (only the stored evidence is trimmed), and a file whose content cannot be read makes
the check `unavailable`, never matched. Local and docker variants, the CLI in process.
"""

from __future__ import annotations

import json

import pytest

from tests.support.project import Project
from tests.support.sandbox import KINDS, assertions, attempts, containers_of, env_for, kind_of, sandbox_project

pytestmark = pytest.mark.slow


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process: these checks read the run's exit code, output and rows (its TMPDIR is the
    test's own, as in a new process); what is about a process is checked elsewhere."""
    return project

@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return kind_of(request)

EVAL = """
from niceeval_cli import define_eval
from niceeval_cli.expect import pattern

@define_eval()
async def leaks(t):
    await t.send("write the log")
    t.sandbox.file_changed("big.log", status="added").label("added")
    t.sandbox.not_in_diff(pattern(r"(?i)api[_-]?key\\s*=")).gate().label("no secret")
"""

# 100 000 lines of ~35 characters, then the secret: 3.5 MB of plain text.
BIG_TEXT = ("i=0; while [ $i -lt 100000 ]; do echo \"log line $i of a long run..........\"; i=$((i+1)); done"
            " > big.log; echo 'API_KEY=sk-live-123' >> big.log; echo done")


def test_a_secret_on_the_last_line_of_a_large_text_file_fails_the_check(proj: Project, kind: str, tmp_path):
    sandbox_project(proj, kind, BIG_TEXT, EVAL, timeout_ms=120_000)
    run = proj.run(env=env_for(tmp_path / "tmp"), timeout=300)
    assert run.returncode == 1, run.stdout + run.stderr
    [attempt] = attempts(proj)
    assert attempt["state"] == "failed"
    rows = assertions(proj)
    assert rows["added"]["state"] == "matched"
    secret = rows["no secret"]
    assert secret["state"] == "mismatched", secret
    assert "big.log:100001:" in secret["explanation"]
    assert "Binary file" not in secret["explanation"] + secret["evidence"]
    evidence = json.loads(secret["evidence"])
    assert evidence.startswith("--- /dev/null\n+++ b/big.log\n")  # a real diff, trimmed with a marker
    assert "diff trimmed" in evidence and len(evidence) < 10_000
    assert "sk-live-123" not in evidence  # the line is past the stored evidence (and secrets are redacted)
    assert list((tmp_path / "tmp").glob("niceeval-sandbox-*")) == []
    assert containers_of(proj) == []


def test_a_file_too_large_to_read_makes_the_check_unavailable_never_matched(proj: Project, kind: str, tmp_path):
    agent = ("head -c 20000000 /dev/zero | tr '\\0' x > big.log; echo >> big.log; "
             "echo 'API_KEY=sk-live-123' >> big.log; echo done")
    sandbox_project(proj, kind, agent, EVAL, timeout_ms=120_000)
    run = proj.run(env=env_for(tmp_path / "tmp"), timeout=300)
    assert run.returncode != 0, run.stdout + run.stderr
    rows = assertions(proj)
    assert rows["added"]["state"] == "matched"
    secret = rows["no secret"]
    assert secret["state"] == "unavailable", secret
    assert secret["reason"] == "diff-unavailable"
    assert "big.log" in secret["explanation"] and "16 MiB" in secret["explanation"]
    assert "not diffed" in json.loads(secret["evidence"])
    [attempt] = attempts(proj)
    assert attempt["state"] != "passed"


def test_a_large_text_file_elsewhere_does_not_hide_a_secret_in_a_small_one(proj: Project, kind: str, tmp_path):
    agent = ("head -c 20000000 /dev/zero | tr '\\0' x > big.log; echo 'api_key = 1' > small.txt; echo done")
    sandbox_project(proj, kind, agent, EVAL.replace('"big.log", status="added"', '"small.txt"'), timeout_ms=120_000)
    run = proj.run(env=env_for(tmp_path / "tmp"), timeout=300)
    assert run.returncode == 1, run.stdout + run.stderr
    secret = assertions(proj)["no secret"]
    assert secret["state"] == "mismatched" and "small.txt:1" in secret["explanation"]
