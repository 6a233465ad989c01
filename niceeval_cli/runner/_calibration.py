"""The calibration gate's figures as the store holds them at the start of a run (judge-trust.md §4).

Read once per run, for the grader (`Calibrated` turns what an uncalibrated judge measured into
`unavailable`) and for planning: a result decided while a judge cleared the gate must not be
reused once it no longer does, so the fingerprint of a gated eval holds the identities its judge
clears (`Calibration.cleared`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..config import JudgeSettings
    from ..judge import Calibration
    from ..store import Store


def calibration_of(store: Store, settings: Iterable[JudgeSettings | None]) -> Calibration | None:
    """The calibration gate's figures in the store now, when one of `settings` turns the gate on
    (a run's executing slots, a regrade's attempts, a plan's gated evals); else None."""
    if not any(s is not None and s.min_human_kappa is not None for s in settings):
        return None
    from ..judge import Calibration, identity_key
    from ..stats import Confusion, cohen_kappa

    figures = []
    for counted in store.label_agreement():
        judge = counted.judge
        confusion = Confusion(counted.tp, counted.fp, counted.fn, counted.tn)
        figures.append((identity_key(judge.model, judge.factory, judge.version, judge.criterion), confusion.n,
                        cohen_kappa(confusion)))
    return Calibration(tuple(figures))
