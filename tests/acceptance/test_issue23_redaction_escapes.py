"""Issue 23, item 12: redaction missed a secret escaped as `\\/` or `\\u002B` inside an error body
that is not valid JSON. Chosen (docs/judge.md, "What is stored, and redaction"): a secret is
matched character by character in any mix of its encodings (`\\/`, `\\uXXXX` in either hex case,
once or twice escaped, besides the standard ones), in any letter case, and base64-encoded (also
inside longer base64 text, both alphabets, any alignment).

The system under test is a real loopback HTTP service whose error bodies echo the header secret
in one form each; the real `niceeval run` stores the errors; nothing of the secret may reach the
store file, the output or `view`."""

from __future__ import annotations

import base64
import json

import pytest

from tests.support.loopback import Loopback
from tests.support.project import Project


@pytest.fixture
def proj(project: Project) -> Project:
    """The CLI in process (tests/conftest.py `project`): these checks read exit codes, output and
    stored rows; what is about a process (signals, pipes) still starts the real `niceeval`."""
    return project


SECRET = "tok/Live+9f8e7d6c/5b4a3+2Qx"


def _u(text: str, upper: bool = True) -> str:
    """Every character but letters and digits as a JSON \\uXXXX escape."""
    return "".join(c if c.isalnum() else (f"\\u{ord(c):04X}" if upper else f"\\u{ord(c):04x}") for c in text)


FORMS = {
    "slash": SECRET.replace("/", "\\/"),
    "plus-u002B": SECRET.replace("+", "\\u002B"),
    "mixed": SECRET.replace("+", "\\u002b").replace("/", "\\/"),
    "all-escaped": _u(SECRET),
    "double-escaped": SECRET.replace("/", "\\\\\\/").replace("+", "\\\\u002B"),
    "upper": SECRET.upper(),
    "base64": base64.b64encode(SECRET.encode()).decode(),
    "base64-inside": base64.b64encode(b"user:" + SECRET.encode() + b"@host").decode(),
    "base64-urlsafe": base64.urlsafe_b64encode(b"ab" + SECRET.encode()).decode().rstrip("="),
    "base64-slash": base64.b64encode(b"x" + SECRET.encode()).decode().replace("/", "\\/"),
}

EVALS = "from niceeval_cli import define_eval\n" + "".join(f"""

@define_eval()
async def e_{i}(t):
    await t.send({name!r})
""" for i, name in enumerate(FORMS))


def _answer(method: str, path: str, body: bytes) -> tuple[int, bytes, str]:
    if method != "POST":
        return 204, b"", "text/plain"
    form = FORMS[json.loads(body)["message"]]
    # Not valid JSON: cut off mid-way, as a proxy or a crashing service sends it.
    return 500, f'{{"error": {{"message": "invalid token {form} for this route", "trace": ["at auth'.encode(), \
        "application/json"


@pytest.fixture(scope="module")
def leaked(tmp_path_factory: pytest.TempPathFactory):
    proj = Project(tmp_path_factory.mktemp("escapes") / "proj", in_process=True)
    with Loopback(_answer) as server:
        proj.write("niceeval.toml", f"""
            [project]
            [experiments.app]
            adapter = "http"
            [experiments.app.options]
            url = "{server.url}/chat"
            headers = {{ Authorization = "Bearer {{env:APP_TOKEN}}" }}
        """)
        proj.write("evals/leaks.py", EVALS)
        env = {"APP_TOKEN": SECRET, "NO_COLOR": "1"}
        run = proj.run(env=env)
        attempts = proj.sql("SELECT id, eval_id, state, error FROM attempts")
        views = [proj.cli("view", "@" + a["id"], env=env) for a in attempts]
    return proj, run, attempts, views


def _hidden(text: str) -> list[str]:
    """The forms (and the secret's longest letter-digit run, 'Live', aside) found in `text`."""
    found = [name for name, form in FORMS.items() if form in text]
    if SECRET.lower() in text.lower():
        found.append("secret")
    if "9f8e7d6c" in text.lower() or "5b4a3" in text.lower():
        found.append("a run of the secret")
    return found


def test_every_form_is_redacted_in_the_stored_error(leaked) -> None:
    _proj, run, attempts, _views = leaked
    assert run.returncode == 5, run.stdout + run.stderr  # every attempt errored: nothing failed for certain
    assert len(attempts) == len(FORMS)
    for attempt in attempts:
        assert attempt["state"] == "errored", attempt
        assert "HTTP 500" in attempt["error"] and "invalid token" in attempt["error"], attempt
        assert "[redacted]" in attempt["error"] and "for this route" in attempt["error"], attempt
        assert _hidden(attempt["error"]) == [], attempt


def test_no_form_reaches_the_store_file_the_output_or_view(leaked) -> None:
    proj, run, _attempts, views = leaked
    for file in (proj.root / ".niceeval").iterdir():
        content = file.read_bytes().decode("utf-8", errors="replace")
        assert _hidden(content) == [], file
    assert _hidden(run.stdout + run.stderr) == []
    for view in views:
        assert view.returncode == 0, view.stderr
        assert "[redacted]" in view.stdout and _hidden(view.stdout + view.stderr) == []
