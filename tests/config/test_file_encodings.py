"""niceeval.toml and .env as editors save them: a byte-order mark is read past, bytes that are not
UTF-8 are one error naming the file and line (exit 2), and `--config` at something that is not a
file says what it found — never a traceback, nothing run."""

from __future__ import annotations

from tests.support.project import Project

TOML = """\
[experiments.local]
adapter = "python"
[experiments.local.options]
callable = "agent:reply"
"""
AGENT = "def reply(prompt):\n    return 'hello'\n"
EVAL = """\
import os
from niceeval_cli import define_eval
from niceeval_cli.expect import equals

@define_eval()
async def sees_key(t):
    await t.send("hi")
    t.check(os.environ.get("NICEEVAL_TEST_BOM_KEY"), equals("sk-from-dotenv"))
"""


def _project(project: Project) -> Project:
    project.write("agent.py", AGENT)
    project.write("evals/keys.py", EVAL)
    return project


def test_a_byte_order_mark_starts_niceeval_toml_and_dotenv_alike(project: Project) -> None:
    _project(project)
    (project.root / "niceeval.toml").write_bytes(b"\xef\xbb\xbf" + TOML.encode())
    (project.root / ".env").write_bytes(b"\xef\xbb\xbfNICEEVAL_TEST_BOM_KEY=sk-from-dotenv\r\n")
    run = project.run()
    assert run.returncode == 0, (run.stdout, run.stderr)
    assert [a["state"] for a in project.attempts()] == ["passed"]


def test_a_dotenv_that_is_not_utf8_is_one_error_naming_it_and_its_line(project: Project) -> None:
    _project(project)
    project.write("niceeval.toml", TOML)
    (project.root / ".env").write_bytes(b"A=1\nNICEEVAL_TEST_BOM_KEY=caf\xe9\n")
    run = project.run()
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert run.stderr.strip() == (
        f"niceeval: {project.root.resolve() / '.env'}: the file of credentials is not valid UTF-8 text "
        "(line 2); save it as UTF-8."
    )
    assert not project.store.exists()


def test_config_at_a_directory_or_a_device_says_what_it_found(project: Project) -> None:
    _project(project)
    (project.root / "conf").mkdir()
    found = project.run("--config", "conf")
    device = project.run("--config", "/dev/null")
    assert (found.returncode, device.returncode) == (2, 2)
    assert found.stderr.strip() == "niceeval: --config conf: a directory; expected the path of a niceeval.toml file"
    assert device.stderr.strip() == (
        "niceeval: --config /dev/null: not a regular file; expected the path of a niceeval.toml file")
    assert not project.store.exists()


def test_a_folder_named_niceeval_toml_is_named_not_run_with_the_defaults(project: Project) -> None:
    _project(project)
    (project.root / "niceeval.toml").mkdir()
    run = project.run()
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert run.stderr.strip() == (
        f"niceeval: {project.root.resolve() / 'niceeval.toml'}: is not a file (a folder or a device); the "
        "project's configuration must be a TOML file named niceeval.toml.")
    assert not project.store.exists()
