"""`niceeval regrade`: build the request, plan it, regrade with the caller's listeners, read back.

The regrade itself is the runner's (runner/_regrade.py); this module resolves the flags against
the project (its store, `[judge] max_concurrency`, `[prices]`) and reads the new run back for
the summary exactly as `run` does (`app.run.read_sealed`). Nothing here prints.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .._bounds import MAX_JUDGE_SAMPLES
from .._errors import UsageError
from ..reports.data import RunReport
from .project import load_project

if TYPE_CHECKING:
    from ..runner import RegradePlan, RegradeRequest


def build_request(
    *,
    run: str | None,
    experiments: Sequence[str],
    model: str | None,
    base_url: str | None,
    samples: int | None,
    skip_missing: bool,
    store: Path | None,
    config: Path | None,
    version: str,
) -> RegradeRequest:
    """Flags → a RegradeRequest. The project is read when it names the store (no `--store`) or
    `--config` is given: its `[judge] max_concurrency` bounds the judge client, its `[prices]`
    price the judge's tokens."""
    from ..runner import RegradeRequest

    if model is not None and not model.strip():
        raise UsageError("--judge-model: expected a model name, got an empty string")
    if base_url is not None and not base_url.startswith(("http://", "https://")):
        raise UsageError(f"--judge-base-url {base_url!r}: expected an http:// or https:// URL of an "
                         "OpenAI-compatible endpoint, e.g. https://api.openai.com/v1")
    if samples is not None and not 1 <= samples <= MAX_JUDGE_SAMPLES:
        raise UsageError(f"--judge-samples: expected an integer from 1 to {MAX_JUDGE_SAMPLES}, got {samples}")
    project = load_project(config) if store is None or config is not None else None
    return RegradeRequest(
        store_path=store if store is not None else project.store,  # type: ignore[union-attr]
        run=run, experiments=tuple(experiments), model=model, base_url=base_url, samples=samples,
        skip_missing=skip_missing, argv=tuple(sys.argv[1:]), version=version,
        config_file=str(project.file) if project is not None and project.file else None,
        max_concurrency=project.judge.max_concurrency if project is not None else None,
        input_prices={m: p.input_per_mtok for m, p in project.prices.items()} if project is not None else {},
        confidence=project.stats.confidence if project is not None else 0.95,
    )


def plan(request: RegradeRequest) -> RegradePlan:
    """What the regrade would do (the `--dry` answer, and where the regrade starts)."""
    from ..runner import plan_regrade
    from ..store import Store

    if not request.store_path.exists():
        raise UsageError(f"No results store at {request.store_path}; run `niceeval run` first.")
    with Store.open(request.store_path, readonly=True) as store:
        return plan_regrade(request, store)


def execute(request: RegradeRequest, planned: RegradePlan, listeners: Sequence[object] = (),
            *, summary: bool = True) -> RunReport:
    """Regrade with the caller's listeners (one relay, as `run`), then read the new run back for
    the summary and hand that `RunReport` to the listeners (`reported`)."""
    from ..runner import EventRelay, regrade
    from ..store import Store
    from .run import SUMMARY_CACHE_KIB, read_sealed

    relay = EventRelay(*listeners)
    outcome = regrade(request, planned, relay)
    report = RunReport(outcome, None, None, request.confidence)
    if outcome.run_id is not None and summary:
        with Store.open(request.store_path, readonly=True, cache_kib=SUMMARY_CACHE_KIB) as store:
            read = outcome.read
            sealed = read_sealed(store, outcome.run_id, groups=read.groups if read else None,
                                 passed_evals=read.passed_evals if read else (), costs=read.costs if read else None)
        counted = sum(g.total for g in sealed.groups) + sum(p.attempts for p in sealed.passed_evals)
        report = RunReport(outcome, sealed, max(0, (outcome.planned or 0) - counted), request.confidence)
    relay.reported(report)
    return report


__all__ = ["build_request", "execute", "plan"]
