"""A real project with two runs and its report; a real headless Chromium to open it.

Chromium is Debian's package (`/usr/bin/chromium`, or `NICEEVAL_CHROMIUM`), driven by Playwright
for Python through `executable_path` (no browser download). Without either, the browser tests
skip saying why — except in CI (`CI=true`), where a missing browser fails them.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from projects import Project

CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]

# An agent reply that tries everything: markup, an event handler, and breaking out of the data block.
PAYLOAD = (
    '<script>window.__pwned = "script"</script><img src=x onerror="window.__pwned = \'img\'">'
    '</script><script>window.__pwned = "breakout"</script><!-- \u2028'
)

TOML = """
[project]
max_concurrency = 1

[experiments.alpha]
model = "model-a"
options = { good = false }

[experiments.beta]
model = "model-b"
options = { good = true }
"""

EVALS = '''
import contextlib
import os
from niceeval_cli import Fact, define_eval, define_score_eval
from niceeval_cli.expect import equals, includes, similarity

PAYLOAD = {payload!r}

@define_eval(tags=["smoke"])
def greets(t):
    t.check("hello there", includes("hello")).label("Greets the user")

@define_eval(tags=["refunds"])
def refund_policy(t):
    reply = "Refunds within 14 days. " + PAYLOAD
    t.check(reply, includes("30 days")).label("Mentions 30 days " + PAYLOAD)
    t.check(reply, similarity("Refunds within 30 days.").at_least(0.9)).gate().label("Close to the policy")

@define_eval(tags=["refunds"])
def crashes(t):
    raise ValueError("the agent said: " + PAYLOAD)

@define_eval()
def log_missing(t):
    t.check(Fact.unavailable("log-missing"), equals(1)).label("Log line present")

@define_score_eval(tags=["quality"])
def quality(t):
    t.check(1, equals(1)).score(2).label("Answered")
    t.check(t.experiment.options["good"], equals(True)).score(3).label("Good model")
    t.score(Fact.unavailable("completion-unobserved") if os.environ.get("NE_UNKNOWN") else 0.5, weight=5).label(
        "Completion")

@define_eval()
def better_model(t):
    t.check(t.experiment.options["good"], equals(True)).label("Only the good model passes")
'''


@dataclass(frozen=True)
class Built:
    project: Project
    base: str
    run: str
    report: Path  # the report of `run` with --baseline base
    plain: Path  # the report of `run` without a baseline


def _forget(root: Path) -> None:
    resolved = str(root.resolve())
    sys.path[:] = [entry for entry in sys.path if entry != resolved]
    for name, module in list(sys.modules.items()):
        if (getattr(module, "__file__", None) or "").startswith(resolved):
            del sys.modules[name]


@contextlib.contextmanager
def argv(*args: str) -> Iterator[None]:
    """The run records sys.argv; in-process (CliRunner) that would be pytest's own."""
    saved = sys.argv
    sys.argv = ["niceeval", *args]
    try:
        yield
    finally:
        sys.argv = saved


@pytest.fixture(scope="package")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    project = Project(tmp_path_factory.mktemp("report") / "proj")
    project.write("niceeval.toml", TOML)
    project.write("evals/app.py", EVALS.format(payload=PAYLOAD))
    with argv("run"):
        assert project.run().exit_code == 1
    base = project.query("runs")[0]["id"]
    with argv("run", "--rerun-all"):
        assert project.run("--rerun-all", env={"NE_UNKNOWN": "1"}).exit_code == 1
    run = project.query("runs")[0]["id"]
    out = project.root / "out" / "report.html"
    made = project.cli("report", run, "--baseline", base, "--out", str(out))
    assert made.exit_code == 0, made.stderr
    plain = project.cli("report")
    assert plain.exit_code == 0, plain.stderr
    try:
        yield Built(project, base, run, out, Path(plain.stdout.strip()))
    finally:
        _forget(project.root)


# ── the browser ──────────────────────────────────────────────────────────────────────────────


def chromium_path() -> str | None:
    for candidate in (os.environ.get("NICEEVAL_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium")):
        if candidate and Path(candidate).is_file():
            return candidate
    return None


def _missing(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: the browser tests must run; .ci/run installs chromium and playwright)")
    pytest.skip(reason)


@pytest.fixture(scope="module")  # not longer: Playwright's sync API holds an event loop while open
def browser_context(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A fresh persistent Chromium context (its own user-data-dir) that logs every request."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("Playwright for Python is not installed (pip install playwright)")
    executable = chromium_path()
    if executable is None:
        _missing("Chromium is not installed (apt-get install chromium)")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=executable,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1100, "height": 900},
        )
        requests: list[str] = []
        context.on("request", lambda request: requests.append(request.url))
        context.requests = requests  # type: ignore[attr-defined]
        try:
            yield context
        finally:
            context.close()


@dataclass
class Opened:
    page: Any
    requests: list[str]
    errors: list[str]
    dialogs: list[str]


@pytest.fixture
def open_report(browser_context: Any) -> Iterator[Any]:
    """`open_report(path)` → the page loaded from file://, with its requests, errors and dialogs."""
    pages: list[Any] = []

    def opener(path: Path) -> Opened:
        browser_context.requests.clear()
        page = browser_context.new_page()
        pages.append(page)
        errors: list[str] = []
        dialogs: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)

        def on_dialog(dialog: Any) -> None:
            dialogs.append(dialog.message)
            dialog.dismiss()

        page.on("dialog", on_dialog)
        page.goto(Path(path).resolve().as_uri())
        page.wait_for_load_state("load")
        return Opened(page, browser_context.requests, errors, dialogs)

    yield opener
    for page in pages:
        page.close()
