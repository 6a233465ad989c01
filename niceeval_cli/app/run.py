"""`niceeval run`: build the request, run it with the caller's listeners, read back what it sealed.

The caller (cli/run.py) chooses the listeners (reports/: live progress, plain lines or NDJSON, the
JUnit file, the summary); they hear the run through one relay and, once the run is read back,
the `RunReport` (`reported`). Nothing here prints.
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import outcomes
from .._bounds import MAX_ATTEMPTS
from .._errors import UsageError
from .._selectors import check_not_empty
from .._states import PROBLEM_STATES, AttemptState, EvalKind, UnavailableReason
from ..reports.data import RunReport, SealedRun
from .project import load_project

if TYPE_CHECKING:
    from ..runner import RunEvents, RunRequest
    from ..store import OutcomeGroup, PassedEvals, PlanSlot, Store
    from ..store.rows import AssertionRow, AttemptRow

SUMMARY_LIMIT = 20  # failing attempts shown in full after a run; `niceeval view` shows the rest


def build_request(
    *,
    config: Path | None,
    prefixes: Sequence[str],
    experiments: Sequence[str],
    tags: Sequence[str],
    attempts: int | None,
    max_concurrency: int | None,
    timeout_ms: int | None,
    rerun: bool,
    rerun_all: bool,
    dry: bool,
    store: Path | None,
    version: str,
    shard: str | None = None,
    group: str | None = None,
    executor: str | None = None,
    ray_address: str | None = None,
    retry_lost: bool = False,
    budget_usd: float | None = None,
    keep_sandbox: str | None = None,
    until_decided: bool = False,
    max_attempts: int | None = None,
) -> RunRequest:
    """Flags → a RunRequest (discovers the evals; config errors surface here)."""
    from ..config import RunOverrides
    from ..discovery import discover
    from ..runner import RerunMode, RunRequest, UntilDecided
    from ..sandbox import KEEP_CHOICES
    from .scale import executor_settings, shard_settings

    if rerun and rerun_all:
        raise UsageError("--rerun and --rerun-all exclude each other; pick one")
    check_not_empty(prefixes, "run")
    if keep_sandbox is not None and keep_sandbox not in KEEP_CHOICES:
        raise UsageError(f"--keep-sandbox: expected one of {', '.join(KEEP_CHOICES)} (keep the sandbox of failed "
                         f"and errored attempts, or of every attempt), got {keep_sandbox!r}")
    if budget_usd is not None and not (math.isfinite(budget_usd) and budget_usd >= 0):
        # `inf` / `nan` were taken: stored as the run's budget and written as `Infinity` / `NaN`,
        # which no JSON reader accepts (`run --json`, `query runs --format json`).
        raise UsageError(f"--budget: expected an amount of US dollars, a finite number ≥ 0 such as 2.50, "
                         f"got {budget_usd:g}")
    if max_attempts is not None and not 1 <= max_attempts <= MAX_ATTEMPTS:
        raise UsageError(f"--max-attempts: expected an integer from 1 to {MAX_ATTEMPTS}, got {max_attempts}")
    if max_attempts is not None and not until_decided:
        raise UsageError("--max-attempts applies only with --until-decided (more attempts while an eval's "
                         "interval contains its pass_rule); add --until-decided or leave --max-attempts out")
    shard_spec, group_id = shard_settings(shard, group, os.environ)
    if until_decided and shard_spec is not None:
        raise UsageError("--until-decided cannot be combined with --shard: the extra attempts depend on the "
                         "results of the whole plan, which a shard does not see")
    project = load_project(config)
    evals = discover(project.eval_roots, project.root)  # first: an eval module may register an executor
    executor_name, executor_options = executor_settings(project, executor, ray_address, retry_lost)
    return RunRequest(
        project=project,
        evals=evals,
        eval_prefixes=tuple(prefixes),
        experiments=tuple(experiments),
        tags=tuple(tags),
        overrides=RunOverrides(attempts=attempts, max_concurrency=max_concurrency, timeout_ms=timeout_ms),
        mode=RerunMode.ALL if rerun_all else RerunMode.RERUN if rerun else RerunMode.DEFAULT,
        dry=dry,
        store_path=store,
        argv=tuple(sys.argv[1:]),
        version=version,
        shard=shard_spec,
        group_id=group_id,
        executor=executor_name,
        executor_options=executor_options,
        budget_usd=budget_usd,
        keep_sandbox=keep_sandbox,
        hand_over_evals=True,  # this command runs the request once
        until_decided=UntilDecided(max_attempts or project.max_attempts, project.stats.confidence)
        if until_decided else None,
    )


SUMMARY_CACHE_KIB = 256


def execute(
    request: RunRequest, listeners: Sequence[object] = (), *, summary: bool = True, junit: bool = False,
    limit: int = SUMMARY_LIMIT,
) -> RunReport:
    """Run with the caller's listeners (through one relay: a listener whose reader went away is
    dropped, the run goes on), then read back what the summary (`summary`) and the JUnit report
    (`junit`) need, and hand that `RunReport` to the listeners (`reported`: the summary, JUnit)."""
    from ..runner import EventRelay

    relay = EventRelay(*listeners)
    report = _run_and_read(request, relay, summary=summary, junit=junit, limit=limit)
    relay.reported(report)
    return report


def _run_and_read(request: RunRequest, relay: RunEvents, *, summary: bool, junit: bool, limit: int) -> RunReport:
    from ..runner import run
    from ..store import Store

    outcome = run(request, relay)
    plan = outcome.plan
    if outcome.run_id is None or not (summary or junit):
        return RunReport(outcome, None, None)
    # The summary reads a few rows (what the runner read is handed over): a reader's full page
    # cache would fill with the run's slots while `resolve_run` counts them, at the run's peak.
    with Store.open(request.store_path or request.project.store, readonly=True, cache_kib=SUMMARY_CACHE_KIB) as store:
        read = outcome.read  # the rows the runner decided the run from: not read again
        sealed = read_sealed(store, outcome.run_id, summary_limit=limit if summary else None, junit=junit,
                             groups=read.groups if read else None, passed_evals=read.passed_evals if read else (),
                             costs=read.costs if read else None)
        if request.keep_sandbox is not None:
            sealed = dataclasses.replace(sealed, kept_sandboxes=kept_sandboxes(store.attempts_for_run(outcome.run_id)))
    sealed_count = sum(g.total for g in sealed.groups) + sum(p.attempts for p in sealed.passed_evals)
    not_run = max(0, plan.slots - sealed_count) if plan is not None else None
    return RunReport(outcome, sealed, not_run, request.project.stats.confidence)


def kept_sandboxes(attempts: Sequence[AttemptRow]) -> list[tuple[str, str]]:
    """(experiment · eval#ordinal, where) of the attempts this run executed whose sandbox it kept."""
    import json

    kept = []
    for attempt in attempts:
        if attempt.sandbox is None or str(attempt.relation) != "origin":  # a reused one was kept by its own run
            continue
        try:
            where = json.loads(attempt.sandbox).get("kept")
        except (ValueError, AttributeError):
            continue
        if where:
            kept.append((f"{attempt.experiment_id} · {attempt.eval_id}#{attempt.ordinal}", str(where)))
    return kept


def read_sealed(store: Store, run_id: str, *, summary_limit: int | None = SUMMARY_LIMIT,
                junit: bool = False, groups: Sequence[OutcomeGroup] | None = None,
                passed_evals: Sequence[PassedEvals] = (), costs: list[dict[str, Any]] | None = None) -> SealedRun:
    """A run's sealed rows for the summary (`summary_limit` attempts expanded; None: none) and for
    JUnit or another full report (`junit`: every attempt, results of those not ok). `groups`: the
    run's outcome groups when the caller has just read them (the runner, deciding the run), less
    the evals it counted in `passed_evals`, and the `costs` it read with them; JUnit names every
    eval, so it reads them all again."""

    run_row = store.resolve_run(run_id)
    if groups is None or (junit and passed_evals):
        groups, passed_evals = store.outcome_rows(run_row.id), ()
    shown: list[tuple[AttemptRow, list[AssertionRow]]] = []
    more, key_problem, unobserved = 0, False, False
    if summary_limit is not None:
        shown, more, key_problem = _shown(store, run_row.id, groups, summary_limit)
        from ..authoring._turns import TOOL_CALLS_UNOBSERVED  # here: `view` imports this module, not authoring

        unobserved = any(r.reason == TOOL_CALLS_UNOBSERVED for _, results in shown for r in results)
    attempts: list[AttemptRow] = []
    results: dict[str, list[AssertionRow]] = {}
    not_run: tuple[PlanSlot, ...] = ()
    if junit:
        attempts = store.attempts_for_run(run_row.id)
        results = {a.id: store.assertions_for_attempt(a.id) for a in attempts if not _clean(a)}
        if run_row.not_run:  # JUnit counts every planned slot: one that never ran is a testcase too
            not_run = tuple(store.not_run(run_row.id))
    if summary_limit is None:
        costs = []
    elif costs is None:
        costs = store.costs(run_row.id)
    return SealedRun(run_row, groups, shown, more, attempts, results, key_problem, unobserved, costs,
                     passed_evals=tuple(passed_evals), not_run=not_run)


def _clean(attempt: AttemptRow) -> bool:
    return outcomes.is_clean(attempt.state, attempt.gate)


def passed_despite_attempts(groups: Sequence[OutcomeGroup]) -> set[tuple[str, str]]:
    """(experiment, eval) of the pass-style evals that passed under the pass rule their slots
    recorded although some attempt did not pass (`any`, a rate): the summary lists the eval, not
    those attempts. Only evals with such an attempt are folded — a run of 20 000 evals that all
    passed holds nothing here."""
    return _passed_despite(groups, _not_passed(groups))


def _not_passed(groups: Sequence[OutcomeGroup]) -> list[OutcomeGroup]:
    """The groups whose attempts did not pass: none in a run that passed, so what follows is free."""
    return [g for g in groups if g.state is not AttemptState.PASSED]


def _passed_despite(groups: Sequence[OutcomeGroup], not_passed: Sequence[OutcomeGroup]) -> set[tuple[str, str]]:
    """`passed_despite_attempts`, given the groups that did not pass (`_not_passed`)."""
    mixed = {(g.experiment_id, g.eval_id) for g in not_passed if g.kind is EvalKind.PASS}
    if not mixed:
        return set()
    by_eval: dict[tuple[str, str], list[OutcomeGroup]] = {}
    for group in groups:
        key = (group.experiment_id, group.eval_id)
        if key in mixed and group.kind is EvalKind.PASS:
            by_eval.setdefault(key, []).append(group)
    return {
        key for key, found in by_eval.items()
        if outcomes.fold_pass_eval([g.state for g in found for _ in range(g.total)],
                                   outcomes.stored_pass_rule(found[-1].pass_rule)).result is AttemptState.PASSED
    }


def _shown(
    store: Store, run_id: str, groups: Sequence[OutcomeGroup], limit: int
) -> tuple[list[tuple[AttemptRow, list[AssertionRow]]], int, bool]:
    """The attempts the summary expands: not ok, except attempts of a pass-style eval that passed
    under its pass_rule (the summary lists that eval, with its attempts as detail). The groups
    say whether there is any such attempt: when there is none (a run that passed), the store is
    not asked for them."""
    not_passed = _not_passed(groups)
    passed = _passed_despite(groups, not_passed)
    if all(outcomes.is_clean(g.state, g.gate) or (g.experiment_id, g.eval_id) in passed for g in not_passed):
        return [], 0, False
    shown: list[tuple[AttemptRow, list[AssertionRow]]] = []
    key_problem = False
    more = 0
    for attempt in store.attempts_for_run(run_id, states=list(PROBLEM_STATES)):
        if (attempt.experiment_id, attempt.eval_id) in passed:
            continue
        if len(shown) >= limit:
            more += 1
            continue
        results = store.assertions_for_attempt(attempt.id)
        key_problem = key_problem or any(r.reason == UnavailableReason.JUDGE_KEY_UNRESOLVED for r in results)
        shown.append((attempt, results))
    return shown, more, key_problem


__all__ = ["RunReport", "SealedRun", "build_request", "execute", "read_sealed"]
