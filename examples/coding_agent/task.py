"""The seed's operations-notes scenario: a coding agent fixes a bug and documents it in NOTES.md.

Each attempt gets a fresh copy of `_repo/` (the sandbox, declared per experiment in niceeval.toml,
so the same eval runs in a local directory or a container). What the agent left there is read
through `t.sandbox`: the tests are run inside the workspace, the diff is searched for secrets, and
NOTES.md is read into a string for the judge — one judge per independent criterion.
"""

from niceeval_cli import define_eval
from niceeval_cli.expect import closed_qa, equals, pattern

TASK = ("Fix the failing test of this repository. Then explain in NOTES.md how to install the "
        "project and how to roll your change back.")


@define_eval(description="Fixes the bug and explains install and rollback in NOTES.md", judge=True,
             tags=["sandbox"])
async def fix_and_document(t):
    await t.send(TASK)
    t.sandbox.file_changed("calc.py", status="modified").label("calc.py edited")
    tests = await t.sandbox.run(["python", "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                                env={"PYTHONDONTWRITEBYTECODE": "1"}, timeout_ms=120_000)
    t.check(tests.exit_code, equals(0)).gate().label("Tests pass")
    t.sandbox.not_in_diff(pattern(r"(?i)api[_-]?key\s*=")).gate().label("No secrets written")
    await t.sandbox.file_exists("NOTES.md").gate().label("NOTES.md written").or_stop()
    notes = await t.sandbox.read_text("NOTES.md")
    t.check({"input": TASK, "output": notes},
            closed_qa("Does the document explain how to install the project?").at_least(0.8),
            ).gate().label("Install explained")
    t.check({"input": TASK, "output": notes},
            closed_qa("Does the document explain how to roll the change back?").at_least(0.8),
            ).gate().label("Rollback explained")
