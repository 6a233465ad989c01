"""Fixtures of the reading-surface tests (view, progress, the HTML report).

`runs`: sealed runs built straight into a real store (tests/support/view_builders.py).
`built`: a real project with two runs and its report; a real headless Chromium to open it.

Chromium is Debian's package (`/usr/bin/chromium`, or `NICEEVAL_CHROMIUM`), driven by Playwright
for Python through `executable_path` (no browser download). Without either, the browser tests
skip saying why — except in CI (`CI=true`), where a missing browser fails them (tests/support/components.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from niceeval_cli._ids import new_id
from niceeval_cli._records import AssertionResult, AttemptRecord, EventRecord, TurnRecord
from niceeval_cli._states import AssertionState, AttemptState, EvalKind, PlanReason, Relation, Role, RunStatus
from niceeval_cli.store import SlotRecord, Store
from tests.support.browser import chromium_context
from tests.support.project import Project
from tests.support.records import make_attempt, make_result
from tests.support.view_builders import Runs

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
import dataclasses
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


@pytest.fixture(scope="package")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    project = Project(tmp_path_factory.mktemp("report") / "proj", in_process=True)
    project.write("niceeval.toml", TOML)
    project.write("evals/app.py", EVALS.format(payload=PAYLOAD))
    assert project.run().exit_code == 1  # in process, the run stores ["run"] as its argv all the same
    base = project.query("runs")[0]["id"]
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
        project.forget()


# ── the browser ──────────────────────────────────────────────────────────────────────────────


@pytest.fixture(scope="module")  # not longer: Playwright's sync API holds an event loop while open
def browser_context(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A fresh persistent Chromium context (its own user-data-dir) that logs every request."""
    with chromium_context(tmp_path_factory.mktemp("chromium-profile")) as context:
        requests: list[str] = []
        context.on("request", lambda request: requests.append(request.url))
        context.requests = requests
        yield context


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


# ── runs sealed straight into a store: transcripts, dataset cases, sandbox, traceback ────────────


@dataclass(frozen=True)
class Sealed:
    store: Path
    base: str
    new: str


def _attempt(run_id: str, eval_id: str, state: AttemptState, case_id: str | None = None, **more: Any) -> AttemptRecord:
    return make_attempt(
        run_id, "agent", eval_id, state=state, kind=EvalKind.PASS, gate=None, fingerprint="fp",
        fingerprint_parts='{"model": "m", "eval_options": {"tags": ["cases"]}}',
        started_at="2026-01-01T00:00:00.000Z", ended_at="2026-01-01T00:00:01.000Z", duration_ms=1000.0,
        input_tokens=10, output_tokens=5, case_id=case_id,
        case_value=None if case_id is None else f'{{"question": "case {case_id}"}}', **more,
    )


def _result(attempt: AttemptRecord, state: AssertionState, label: str) -> AssertionResult:
    return make_result(
        attempt, 0, state, key="answer", label=label, role=Role.GATE,
        explanation=f"expected the refund window, got {PAYLOAD}" if state is AssertionState.MISMATCHED else None,
        match_name="includes", match_config='{"text": "30 days"}', evidence='{"reply": "x"}',
        source_file="evals/agent.py", source_line=7,
    )


def _turns(attempt_id: str) -> tuple[TurnRecord, ...]:
    return (
        TurnRecord(attempt_id, "s0", 0, "What is the refund window?", "Let me look that up.", "completed",
                   '["messages", "tool_calls"]', events=(
                       EventRecord(attempt_id, 0, 0, "tool_call", name="lookup_policy", input='{"topic": "refunds"}',
                                   output='{"days": 14}', status="ok"),
                   )),
        TurnRecord(attempt_id, "s0", 1, "And for sale items?", "Refunds within 14 days. " + PAYLOAD, "completed",
                   '["messages"]'),
    )


def _seal_run(store: Store, states: dict[tuple[str, str | None], AttemptState]) -> str:
    run_id = new_id()
    store.begin_run(run_id, started_at="2026-01-01T00:00:00.000Z", argv=["run"], version="0.1.0",
                    config_file=None, experiments=["agent"])
    for (eval_id, case_id), state in states.items():
        if case_id is not None:
            eval_id = f"{eval_id}[{case_id}]"  # a case's eval id carries its case (datasets.md)
        more: dict[str, Any] = {}
        if eval_id == "agent/chat":
            more = {"sandbox": '{"kind": "docker", "image": "python:3.12"}', "cost_usd": 0.01}
        if case_id is not None:
            more = {"estimated_cost_usd": 0.002, "case_metadata": '{"source": "faq.jsonl"}'}
        if state is AttemptState.ERRORED:
            more.update(reason="exception", error="RuntimeError: tool crashed",
                        traceback='File "evals/agent.py", line 9, in chat\n    raise RuntimeError("tool crashed")')
        attempt = _attempt(run_id, eval_id, state, case_id, **more)
        if eval_id == "agent/chat":
            attempt = dataclasses.replace(attempt, turns=_turns(attempt.id))
        ok = state is AttemptState.PASSED
        results = [] if state is AttemptState.ERRORED else [
            _result(attempt, AssertionState.MATCHED if ok else AssertionState.MISMATCHED, "States the window")]
        slot = SlotRecord(run_id, "agent", eval_id, 0, attempt.id, Relation.ORIGIN, PlanReason.NEW, pass_rule="any")
        store.seal_attempt(attempt, results, slot)
    store.finish_run(run_id, status=RunStatus.FINISHED, ended_at="2026-01-01T00:01:00.000Z", exit_code=1)
    return run_id


@pytest.fixture
def sealed(tmp_path: Path) -> Sealed:
    """Two runs of an agent eval with a transcript and a dataset eval with cases (c1 regresses,
    c2 is fixed, c3 is new, c0 is gone)."""
    P, F, E = AttemptState.PASSED, AttemptState.FAILED, AttemptState.ERRORED
    path = tmp_path / ".niceeval" / "results.db"
    with Store.open(path) as store:
        base = _seal_run(store, {("agent/chat", None): P, ("qa/faq", "c0"): P, ("qa/faq", "c1"): P,
                                 ("qa/faq", "c2"): F, ("agent/tools", None): P})
        new = _seal_run(store, {("agent/chat", None): F, ("qa/faq", "c1"): F, ("qa/faq", "c2"): P,
                                ("qa/faq", "c3"): P, ("agent/tools", None): E})
    return Sealed(path, base, new)


@pytest.fixture
def runs(tmp_path: Path) -> Iterator[Runs]:
    path = tmp_path / ".niceeval" / "results.db"
    store = Store.open(path)
    try:
        yield Runs(path, store)
    finally:
        store.close()
